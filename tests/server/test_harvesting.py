"""The server harvests the tracker on its own (server/harvesting.py, KB_HARVEST_INTERVAL and KB_HARVEST_REPOS):
`kb harvest --repo` for each repository every interval, against a stand-in for GitHub's API on a loopback port
(tests/support/github_issues.py), the drafts kept for /insights; a malformed repository list stops start-up."""

from __future__ import annotations

import time
from typing import Any, Callable

import pytest

from kb.errors import SettingsError
from kb.insights import InsightsStore, store_path
from kb.settings import Settings
from server import create_app
from server.settings import ServerSettings
from tests.support.github_issues import IssuesStandIn

ANSWER = "Pass `--load` with the directory `--save` wrote; the rollout id resumes from the checkpoint."


def test_the_server_harvests_its_repositories_every_interval(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[..., Any]
) -> None:
    api = IssuesStandIn(serve)
    api.add(1, "How do I resume training from a checkpoint?", ANSWER, "2026-01-02T00:00:00Z")
    data_dir = tmp_path_factory.mktemp("harvesting")
    (data_dir / "index").symlink_to(settings.index_dir)
    own = settings.with_(  # type: ignore[call-arg]
        data_dir=data_dir,
        harvest_interval=0.5,
        harvest_repos="THUDM/slime",
        github_api_url=api.url,
        github_token="ghp_test",
    )
    serve(create_app(own))
    deadline = time.monotonic() + 120
    found: list[int] = []
    while time.monotonic() < deadline and not found:
        time.sleep(0.5)
        if store_path(data_dir).exists():
            store = InsightsStore(store_path(data_dir))
            found = [k.draft.number for k in store.drafts.all()]
            store.close()
    assert found == [1]
    assert any(path.endswith("/repos/THUDM/slime/issues") for path, _ in api.calls)
    assert "Bearer ghp_test" in api.tokens


def test_a_malformed_repository_list_stops_start_up() -> None:
    with pytest.raises(SettingsError, match="KB_HARVEST_REPOS"):
        ServerSettings(harvest_repos="THUDM/slime, not a repo")
