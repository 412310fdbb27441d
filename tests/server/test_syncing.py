"""KB_SYNC_INTERVAL on two real uvicorn replicas of one data directory: one syncs a local upstream repository
(a real Git repository made here), both serve the new build with no failed request, and /metrics and /insights
show the last sync, in both languages."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from ingest.sync import sync
from kb.entries import entry_id
from kb.settings import Settings
from server import create_app
from server.settings import ServerSettings
from tests.support.git_repos import TEAM_FAQ, Upstream, manifest, team_faq, team_workspace
from tests.support.servers import LoopbackServer

pytestmark = pytest.mark.slow

TOKEN = "sync-admin-token-12345678"
HANG = list(TEAM_FAQ)[1]
REWORDED = "The trainer hangs at step 0, why?"


@pytest.fixture
def replicas(tmp_path: Path, settings: Settings) -> Iterator[tuple[Upstream, Settings, list[LoopbackServer]]]:
    upstream, sources = team_workspace(tmp_path, settings.cache_dir)
    ours = ServerSettings(
        data_dir=tmp_path / "data",
        sources_dir=sources,
        rate_limit="off",
        admin_token=TOKEN,
        sync_interval=0.5,
        reload_interval=0.2,
    )
    sync(ours)
    servers = [LoopbackServer(create_app(ours)).__enter__() for _ in range(2)]
    yield upstream, ours, servers
    for server in servers:
        server.__exit__(None, None, None)


def test_replicas_serve_the_synced_build_with_no_failed_request(replicas) -> None:
    upstream, settings, servers = replicas
    new_id = entry_id("team", REWORDED)
    failures: list[str] = []
    done = threading.Event()

    def ask() -> None:
        with httpx.Client(timeout=30) as client:
            while not done.is_set():
                for server in servers:
                    response = client.get(f"{server.url}/api/search", params={"q": "training hangs"})
                    if response.status_code != 200:
                        failures.append(f"{response.status_code} {response.text[:200]}")

    asking = threading.Thread(target=ask)
    asking.start()
    try:
        upstream.commit("Reword the hang", {"docs/faq.md": team_faq().replace(HANG, REWORDED)})
        deadline = time.monotonic() + 120
        serving = [False, False]
        while not all(serving) and time.monotonic() < deadline:
            serving = [httpx.get(f"{s.url}/api/entries/{new_id}").status_code == 200 for s in servers]
    finally:
        done.set()
        asking.join()
    assert serving == [True, True]
    assert failures == []
    old = httpx.get(f"{servers[1].url}/entries/{entry_id('team', HANG)}", follow_redirects=False)
    assert (old.status_code, old.headers["location"].endswith(f"/entries/{new_id}")) == (308, True)

    metrics = httpx.get(f"{servers[0].url}/metrics").text
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(metrics)
        for s in family.samples
    }
    assert abs(samples[("kb_sync_last_timestamp_seconds", ())] - time.time()) < 120
    outcomes = {o: samples[("kb_sync_last_outcome", (("outcome", o),))] for o in ("built", "unchanged", "failed")}
    assert sum(outcomes.values()) == 1.0 and outcomes["failed"] == 0.0

    bearer = {"Authorization": f"Bearer {TOKEN}"}
    english = httpx.get(f"{servers[0].url}/insights", headers=bearer | {"Accept-Language": "en"}).text
    chinese = httpx.get(f"{servers[0].url}/insights", headers=bearer | {"Accept-Language": "zh-CN"}).text
    assert "Sync from upstream" in english and "从上游同步" in chinese
    assert "Last sync:" in english and "上次同步：" in chinese


def test_the_insights_page_shows_the_last_sync_s_changes_and_a_failure(replicas, tmp_path: Path) -> None:
    upstream, settings, servers = replicas
    for server in servers:
        server.__exit__(None, None, None)  # no interval syncs: this test syncs by itself
    upstream.commit("Reword the hang", {"docs/faq.md": team_faq().replace(HANG, REWORDED)})
    sync(settings)
    with LoopbackServer(create_app(settings.with_(sync_interval=0))) as server:
        bearer = {"Authorization": f"Bearer {TOKEN}", "Accept-Language": "en"}
        page = httpx.get(f"{server.url}/insights", headers=bearer).text
        assert 'data-sync-outcome="built"' in page and "a new index built" in page
        assert f"reworded  {entry_id('team', HANG)} -&gt; {entry_id('team', REWORDED)}" in page
        assert upstream.git("rev-parse", "HEAD")[:12] in page
        (settings.sources_dir / "sources.toml").write_text(manifest((tmp_path / "gone").as_uri()), encoding="utf-8")
        with pytest.raises(Exception, match="nothing changed"):
            sync(settings)
        page = httpx.get(f"{server.url}/insights", headers=bearer | {"Accept-Language": "zh-CN"}).text
        assert 'data-sync-outcome="failed"' in page and "失败，旧索引继续服务" in page
        assert "gone" in page
        # what the sync that built the index served reported stays shown, with when it ran
        assert f"reworded  {entry_id('team', HANG)} -&gt; {entry_id('team', REWORDED)}" in page
        assert "data-sync-built" in page and "那次构建了当前索引的同步所报告的内容" in page
        assert upstream.git("rev-parse", "HEAD")[:12] in page
