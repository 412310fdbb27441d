"""Adding a channel is its package and one registry line: the Discord-shaped example of docs/adding-a-channel.md,
read from the page, written into a copy of `server/`, and served from that copy (Discord itself stands in as
signed requests made here with a key of the test's own); then `python tools/gendocs.py` writes the docs' sections the
channel put out of date, and `--check` finds the copy's docs clean."""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from server.settings import ServerSettings
from tests.support.paths import ROOT

PAGE = ROOT / "docs" / "adding-a-channel.md"
LINE = '    "server.channels.discord",\n'

# Run in the copy: Discord's signed interactions sent to the copy's app, each answer reported as JSON.
DRIVE = r"""
import json, os, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from fastapi.testclient import TestClient
import server
from server.app import create_app
from server.settings import ServerSettings

key = Ed25519PrivateKey.generate()
public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()

def post(client, interaction, signer=key):
    body = json.dumps(interaction).encode()
    signature = signer.sign(b"1700000000" + body).hex()
    headers = {"x-signature-ed25519": signature, "x-signature-timestamp": "1700000000"}
    answer = client.post("/discord/interactions", content=body, headers=headers)
    return [answer.status_code, answer.json()]

report = {"server": server.__file__}
report["fields"] = [f for f in ServerSettings.__dataclass_fields__ if f.startswith("discord")]
try:
    ServerSettings.from_env({"KB_DISCORD_PUBLIC_KEY": "not-a-key"})
except Exception as exc:
    report["bad key"] = str(exc)
with TestClient(create_app(ServerSettings.from_env(discord_public_key=public))) as client:
    report["ping"] = post(client, {"type": 1})
    command = {"type": 2, "data": {"name": "faq", "options": [{"name": "question", "value": sys.argv[1]}]}}
    report["command"] = post(client, command)
    report["forged"] = post(client, command, Ed25519PrivateKey.generate())
    report["searched"] = client.get("/api/search", params={"q": sys.argv[1]}).json()["hits"][0]["answer"]
    report["metrics"] = client.get("/metrics").text.count('channel="discord"')
with TestClient(create_app(ServerSettings.from_env())) as client:
    off = client.post("/discord/interactions", content=b"{}")
    report["off"] = [off.status_code, off.json()]
print(json.dumps(report))
"""


def files_of_the_page() -> dict[str, str]:
    """Each `server/channels/discord/<file>.py` block of the page, by file name."""
    text = PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"`server/channels/discord/(\w+\.py)`:\n\n```python\n(.*?)```", text, re.S)
    return dict(blocks)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.py") if "__pycache__" not in p.parts}


def test_the_pages_example_is_four_files_and_its_registry_line() -> None:
    assert sorted(files_of_the_page()) == ["__init__.py", "errors.py", "routes.py", "settings.py"]
    assert f'```diff\n     "server.channels.github",\n+{LINE} )\n```' in PAGE.read_text(encoding="utf-8")


def test_adding_the_example_changes_only_its_package_and_one_registry_line(
    tmp_path: Path, settings: ServerSettings
) -> None:
    copy = tmp_path / "server"
    shutil.copytree(ROOT / "server", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "channels" / "discord").mkdir()
    for name, code in files_of_the_page().items():
        (copy / "channels" / "discord" / name).write_text(code, encoding="utf-8")
    registry = copy / "channels" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    last = '    "server.channels.github",\n'
    registry.write_text(text.replace(last, last + LINE), encoding="utf-8")

    before, after = _tree(ROOT / "server"), _tree(copy)
    changed = sorted(name for name in after if before.get(name) != after[name])
    assert changed == [
        "channels/discord/__init__.py",
        "channels/discord/errors.py",
        "channels/discord/routes.py",
        "channels/discord/settings.py",
        "channels/registry.py",
    ]
    assert set(before) <= set(after)
    lines = difflib.ndiff(text.splitlines(), registry.read_text(encoding="utf-8").splitlines())
    assert [line for line in lines if line[:1] in "+-"] == ["+ " + LINE.rstrip("\n")]

    checkout(tmp_path)
    question = "how do I resume training in slime?"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("KB_")},
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}",
        "KB_DATA_DIR": str(settings.data_dir),
        "KB_RATE_LIMIT": "off",
        "KB_ANSWER_PRECISION": str(settings.answer_precision),
        "KB_ADMIN_TOKEN": "",
    }
    run = subprocess.run(
        [sys.executable, "-c", DRIVE, question], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report: dict[str, Any] = json.loads(run.stdout.splitlines()[-1])
    assert report["server"] == str(copy / "__init__.py")
    assert report["fields"] == ["discord_public_key"]
    assert report["bad key"] == "setting KB_DISCORD_PUBLIC_KEY='not-a-key': expected 64 hex digits"
    assert report["ping"] == [200, {"type": 1}]
    assert report["command"] == [200, {"type": 4, "data": {"content": report["searched"][:2000]}}]
    assert report["forged"] == [
        401,
        {
            "type": 4,
            "data": {
                "content": "not a valid Discord interaction: its X-Signature-Ed25519 does not verify",
                "flags": 64,
            },
        },
    ]
    assert report["metrics"] > 0  # its question counted under its name
    off = "the Discord channel is off: set KB_DISCORD_PUBLIC_KEY to the application's public key"
    assert report["off"] == [404, {"type": 4, "data": {"content": off, "flags": 64}}]
    assert regenerated(tmp_path) == STALE


def checkout(root: Path) -> None:
    """The rest of a checkout around the copy of `server/`: the docs and their generator copied (it writes them),
    the other packages, the tests and the templates as they are."""
    for name in ("docs", "tools"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("kb", "kbcli", "ingest", "trackers", "tests", "templates"):
        (root / name).symlink_to(ROOT / name)


# What a new channel puts out of date, each written by `python tools/gendocs.py` from the channel's package and
# registry line: its modules, its settings, the paths the rate limit leaves out, the "By channel" line of the
# metrics, its row in the channel list and the count of modules without a test file of their own.
STALE = [
    "docs/architecture.md: section `modules`",
    "docs/settings.md: section `settings-channels`",
    "docs/settings.md: section `rate-exempt`",
    "docs/deployment.md: section `metrics`",
    "docs/channels.md: section `channels`",
    "docs/development.md: section `test-files`",
]


def regenerated(root: Path) -> list[str]:
    """The sections `gendocs --check` found out of date in the checkout at `root` with the new channel; then
    `gendocs` is run there, and its check is clean and the pages name the channel."""

    def gendocs(*options: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "tools/gendocs.py", *options]
        return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=300)

    before = gendocs("--check")
    assert before.returncode == 1, before.stderr
    stale = [line.removeprefix("out of date: ") for line in before.stderr.splitlines() if line.startswith("out of")]
    wrote = gendocs()
    assert wrote.returncode == 0, wrote.stderr
    after = gendocs("--check")
    assert (after.returncode, after.stderr) == (0, ""), after.stderr
    docs = root / "docs"
    assert "| `KB_DISCORD_PUBLIC_KEY` |" in (docs / "settings.md").read_text(encoding="utf-8")
    assert "| `discord` | [Discord](adding-a-channel.md#a-small-example)" in (docs / "channels.md").read_text("utf-8")
    assert "| `server/channels/discord/routes.py` |" in (docs / "architecture.md").read_text(encoding="utf-8")
    return stale
