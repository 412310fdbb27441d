"""GitHub issues as the harvest's tracker (trackers/github/issues.py), against a stand-in for GitHub's REST API
(tests/support/github_issues.py: a real HTTP server on a loopback port): the closed issues, pull requests left out,
each with its comments; one issue fetched by number, and one that is not there named with GitHub's answer."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from kb.harvest.threads import HarvestError
from tests.support.github_issues import IssuesStandIn
from trackers.github.issues import Issues

ANSWER = "Pass `--load` with the directory `--save` wrote; the rollout id resumes from the checkpoint."


@pytest.fixture
def api(serve: Callable[..., Any]) -> IssuesStandIn:
    api = IssuesStandIn(serve)  # two a page
    api.add(1, "How do I resume training from a checkpoint?", ANSWER, "2026-01-02T00:00:00Z")
    api.add(2, "Add a critic", ANSWER, "2026-01-03T00:00:00Z", pull=True)
    api.add(3, "How do I set the global batch size?", ANSWER, "2026-01-04T00:00:00Z")
    return api


def test_the_closed_issues_are_read_with_their_comments_and_pull_requests_left_out(api: IssuesStandIn) -> None:
    found = list(Issues(api.url, "ghp_test").resolved("THUDM/slime"))
    assert [(t.number, t.kind, t.comments[0].author, t.comments[0].body) for t in found] == [
        (1, "issue", "zhuzilin", ANSWER),
        (3, "issue", "zhuzilin", ANSWER),
    ]
    assert set(api.tokens) == {"Bearer ghp_test"}


def test_one_issue_is_fetched_by_number_and_a_missing_one_is_named(api: IssuesStandIn) -> None:
    tracker = Issues(api.url)
    thread = tracker.thread("THUDM/slime", 3)
    assert thread.title == "How do I set the global batch size?" and thread.comments[0].association == "MEMBER"
    with pytest.raises(HarvestError, match=r"GET .*/repos/THUDM/slime/issues/9: HTTP 404: "):
        tracker.thread("THUDM/slime", 9)
    with pytest.raises(HarvestError, match="--repo 'THUDM': expected OWNER/NAME"):
        tracker.thread("THUDM", 1)
