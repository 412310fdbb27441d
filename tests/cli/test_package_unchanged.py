"""No `kb` command writes into the installed package: a session of commands, run as a user runs them (their
defaults, the data directory of their own), leaves every file of kb/, ingest/, server/ and kbcli/ as it was
(what Python itself caches in `__pycache__` aside). A command whose default would write there refuses, naming
the option to give instead."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from kb.scoring import CALIBRATION_PATH
from kb.settings import Settings
from kbcli.cli import main
from kbcli.package import package_folders
from tests.support.paths import DATA


def fingerprint() -> dict[str, str]:
    """Every file of the package folders, by path, with the SHA-256 of its bytes."""
    files = {}
    for folder in package_folders():
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                files[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


@pytest.mark.slow
def test_the_package_is_unchanged_by_every_kb_command(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [k for k in os.environ if k.startswith("KB_")]:
        monkeypatch.delenv(name)
    data = tmp_path / "data"
    shutil.copytree(settings.cache_dir, data / "cache")  # the session's vectors: the ingest embeds nothing new
    monkeypatch.setenv("KB_DATA_DIR", str(data))
    lines = (DATA / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(lines[:27] + [line for line in lines if '"expect": []' in line][:3]) + "\n")
    before = fingerprint()
    assert str(CALIBRATION_PATH) in before

    def run(*argv: str) -> tuple[int, str]:
        code = main(list(argv))
        return code, capsys.readouterr().err

    for argv in (
        ["ingest"],
        ["search", "how do I resume training"],
        ["search", "续训", "--json"],
        ["eval", str(questions)],
        ["calibrate", str(questions)],  # its default output: KB_DATA_DIR/calibration.json
        ["link", "how to continue from a checkpoint", "slime-b0ab398d"],
        ["links", "list"],
        ["links", "import"],
        ["tune", str(questions)],
        ["export", str(tmp_path / "faq.csv")],
        ["insights", "--since", "7d"],
    ):
        code, err = run(*argv)
        assert code == 0, (argv, err)
    assert (data / "calibration.json").is_file()
    assert Settings.from_env().calibration_path == data / "calibration.json"
    # Their defaults would write into the shipped FAQ folder: refused, one line naming what to give instead.
    code, err = run("links", "export")
    assert code == 2 and err.startswith("kb: error: ") and "inside the installed package" in err, err
    assert "--sources DIR" in err and len(err.splitlines()) == 1
    code, err = run("translate", "slime", "--to", "en", "--force")
    assert code == 2 and "inside the installed package" in err and len(err.splitlines()) == 1, err
    assert fingerprint() == before
