"""The shipped FAQs moved to their upstream repositories' newer commits: the FAQ files' real versions
(tests/data/upstream, from the upstream histories by bench/sync_fixture.py) replayed as commits of local
repositories, the shipped sources synced at their pins, then at the head of each repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ingest.sync import report_lines, sync
from ingest.upstream import edit_manifest
from kb.errors import SourceError, SyncFailed
from kb.settings import SHIPPED_SOURCES, Settings
from tests.support.git_repos import Upstream
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow

DATA = ROOT / "tests" / "data" / "upstream"
ROLL_ZH_NOW = "docs_roll/i18n/zh-Hans/docusaurus-plugin-content-docs/current/Getting Started/FAQ/qa_issues.md"


def replay(tmp_path: Path) -> tuple[dict[str, Upstream], dict[tuple[str, str], str]]:
    """A local repository for each upstream one, with a commit for each upstream commit that changed a FAQ
    file (in the order upstream made them, each file at the path it had), and the local commit of each
    source's and language's first version (its pin)."""
    versions = json.loads((DATA / "versions.json").read_text(encoding="utf-8"))
    steps: dict[tuple[str, str], list[dict[str, str]]] = {}
    for n, v in enumerate(versions):
        steps.setdefault((v["repo"], v["commit"]), []).append(v | {"n": str(n)})
    order = sorted(steps, key=lambda key: (steps[key][0]["date"], int(steps[key][0]["n"])))
    repos: dict[str, Upstream] = {}
    paths: dict[tuple[str, str], str] = {}
    pins: dict[tuple[str, str], str] = {}
    for repo, _ in order:
        upstream = repos.get(repo) or repos.setdefault(repo, Upstream(tmp_path / "upstream" / repo))
        changed = steps[(repo, _)]
        for v in changed:
            was = paths.get((v["source"], v["lang"]))
            if was is not None and was != v["path"]:
                (upstream.folder / was).unlink()
            paths[(v["source"], v["lang"])] = v["path"]
        commit = upstream.commit(
            f"upstream {_[:7]}", {v["path"]: (DATA / v["file"]).read_text(encoding="utf-8") for v in changed}
        )
        for v in changed:
            pins.setdefault((v["source"], v["lang"]), commit)
    return repos, pins


def test_the_shipped_faqs_synced_to_upstream_now_report_what_changed_since_the_pins(tmp_path, settings):
    repos, pins = replay(tmp_path)
    versions = json.loads((DATA / "versions.json").read_text(encoding="utf-8"))
    first = {(v["source"], v["lang"]): v for v in reversed(versions)}
    sources = tmp_path / "sources"
    shutil.copytree(SHIPPED_SOURCES, sources)
    text = (sources / "sources.toml").read_text(encoding="utf-8")
    for name, zh, en in (("roll", "zh", "en"), ("slime", "zh", "en"), ("training-env", "zh", "")):
        v = first[(name, zh)]
        text = edit_manifest(text, name, {"repo": repos[v["repo"]].url, "path": v["path"], "ref": pins[(name, zh)]})
        if en:
            fields = {"path": first[(name, en)]["path"], "ref": pins[(name, en)]}
            text = edit_manifest(text, name, fields, translation=True)
    for name in ("chatlearn-v1", "chatlearn", "roll-npu"):  # nothing upstream since their pins: not followed here
        text = edit_manifest(text, name, {"repo": ""})
    (sources / "sources.toml").write_text(text, encoding="utf-8")
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    ours = Settings(data_dir=tmp_path / "data", sources_dir=sources)

    pinned = sync(ours)
    assert pinned is not None and not any(pinned.changes)  # at the pins: the shipped text

    def move_to_head(text: str, **roll: str) -> str:
        for name in ("roll", "slime", "training-env"):
            text = edit_manifest(text, name, {"ref": "main", **(roll if name == "roll" else {})})
            if name != "training-env":
                text = edit_manifest(text, name, {"ref": "main"}, translation=True)
        return text

    toml = sources / "sources.toml"
    build = ours.index_dir.resolve()
    toml.write_text(move_to_head(toml.read_text(encoding="utf-8")), encoding="utf-8")
    # ROLL's Chinese FAQ left docs/qa.md for the docs site's page (no rename git can see) with its questions
    # as headings; the notes dropped their first entry, which the maintainers' translation still has. Each
    # stops the sync, which says why and changes nothing, until the manifest and the translation follow.
    with pytest.raises(SyncFailed, match=r"source 'roll': file://.* has no file 'docs/qa.md' at [0-9a-f]{7}"):
        sync(ours)
    toml.write_text(
        move_to_head(toml.read_text(encoding="utf-8"), path=ROLL_ZH_NOW, entries="headings"), encoding="utf-8"
    )
    translation = sources / "training-env.en.md"
    with pytest.raises(SourceError, match=rf"^{translation}: 17 entries, but {sources / 'training-env.md'} has 16"):
        sync(ours)
    assert ours.index_dir.resolve() == build
    translated = translation.read_text(encoding="utf-8")
    translation.write_text(translated[: translated.index("1. **Exec")] + translated[translated.index("# Deepspeed") :])
    report = sync(ours)
    assert report is not None and report.outcome == "built"
    by_source = {c.source: c for c in report.changes}
    roll, slime, notes = by_source["roll"], by_source["slime"], by_source["training-env"]
    assert (len(roll.reworded), len(roll.new), len(roll.removed)) == (11, 0, 0)
    assert all(r.neighbours for r in roll.reworded)
    assert [r.new.question for r in roll.reworded][-2:] == [
        "错误：“AssertionError: batch_size 32 < chunks 64”",  # a code span of several words, quoted
        "错误：“TypeError: BackendCompilerFailed.__init__() missing 1 required positional argument”",
    ]
    assert [new.question for _, new in slime.changed] and not slime.reworded and not slime.removed
    assert [e.question for e in notes.removed] == ["Exec docker"]
    assert report.renamed["slime"] == ("docs/zh/qa.md", "docs/zh/get_started/qa.md")
    lines = report_lines(report)
    assert any(line.startswith("roll: main at ") for line in lines)
