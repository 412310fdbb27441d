"""GitHub Discussions as the harvest's tracker (trackers/github/discussions.py), against a stand-in for GitHub's
GraphQL API (tests/support/github_issues.py: a real HTTP server on a loopback port): the answered Discussions updated
since the last harvest, paged by cursor, each with its accepted answer; one Discussion fetched by number."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from kb.harvest import Rules, choose
from kb.harvest.threads import HarvestError
from tests.support.github_issues import IssuesStandIn, discussion
from trackers.github.discussions import Discussions

ANSWER = "Pass `--load` with the directory `--save` wrote; the rollout id resumes from the checkpoint."


@pytest.fixture
def api(serve: Callable[..., Any]) -> IssuesStandIn:
    api = IssuesStandIn(serve)  # two Discussions a page: five take three pages
    for n, day in ((1, "01"), (2, "02"), (3, "03"), (4, "04"), (5, "05")):
        api.discussions.append(discussion(n, f"How do I set option {n}?", ANSWER, f"2026-02-{day}T00:00:00Z"))
    return api


def test_the_answered_discussions_since_the_last_harvest_are_read_page_by_page(api: IssuesStandIn) -> None:
    found = list(Discussions(api.url, "ghp_test").resolved("THUDM/slime", since="2026-02-02T00:00:00Z"))
    assert [t.number for t in found] == [5, 4, 3, 2]  # newest first, until one older than the last harvest
    assert all(t.kind == "discussion" and t.repo == "THUDM/slime" and t.answered for t in found)
    assert found[0].accepted is not None and found[0].accepted.body == ANSWER
    assert [path for path, _ in api.calls] == ["/graphql"] * 3 and set(api.tokens) == {"Bearer ghp_test"}
    chosen = choose(found[0], Rules())
    assert chosen is not None and chosen.answer.author == "zhuzilin"  # the harvest's rules read it as a thread


def test_one_discussion_is_fetched_by_its_number_and_a_missing_one_is_named(api: IssuesStandIn) -> None:
    tracker = Discussions(api.url)
    assert tracker.thread("THUDM/slime", 3).title == "How do I set option 3?"
    with pytest.raises(HarvestError, match="THUDM/slime discussion 9: not a JSON object"):
        tracker.thread("THUDM/slime", 9)


def test_a_limit_stops_the_listing(api: IssuesStandIn) -> None:
    found = list(Discussions(api.url).resolved("THUDM/slime", limit=3))
    assert [t.number for t in found] == [5, 4, 3] and len(api.calls) == 2
