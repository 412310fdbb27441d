"""Reading threads: gh's JSON for issues and Discussions, the REST API's issue, and files that are not threads."""

from __future__ import annotations

import pytest

from kb.harvest import MAX_TEXT, HarvestError, from_rest, read_threads

from .threads_data import ANSWER, comment, issue


def test_an_issue_of_gh_issue_list_is_read_with_its_comments_and_signals() -> None:
    raw = issue(
        [comment("zhuzilin", "MEMBER", ANSWER)],
        closedByPullRequestsReferences=[{"url": "https://github.com/THUDM/slime/pull/9", "number": 9}],
    )
    [thread] = read_threads([raw])
    assert (thread.repo, thread.number, thread.kind, thread.state, thread.state_reason) == (
        "THUDM/slime",
        7,
        "issue",
        "closed",
        "completed",
    )
    assert thread.comments[0].author == "zhuzilin" and thread.comments[0].association == "MEMBER"
    assert thread.linked_prs == ("https://github.com/THUDM/slime/pull/9",) and thread.labels == ("question",)
    assert thread.closed_at is not None and thread.comments[0].created_at is not None
    assert thread.comments[0].created_at < thread.closed_at


def test_a_discussion_with_an_accepted_answer_from_gh_api_graphql() -> None:
    data = {
        "data": {
            "repository": {
                "discussions": {
                    "nodes": [
                        {
                            "number": 12,
                            "title": "How to set the rollout batch size?",
                            "body": "…",
                            "url": "https://github.com/THUDM/slime/discussions/12",
                            "closed": False,
                            "isAnswered": True,
                            "author": {"login": "asker"},
                            "answer": {
                                "author": {"login": "helper"},
                                "body": ANSWER,
                                "createdAt": "2026-02-01T00:00:00Z",
                            },
                            "comments": {"nodes": []},
                            "labels": {"nodes": [{"name": "Q&A"}]},
                        }
                    ]
                }
            }
        }
    }
    [thread] = read_threads(data)
    assert thread.kind == "discussion" and thread.answered and thread.accepted is not None
    assert thread.accepted.body == ANSWER and thread.labels == ("Q&A",)


def test_a_file_that_is_not_threads_names_the_thread_and_field() -> None:
    with pytest.raises(HarvestError, match=r"threads\.json\[1\]\.number"):
        read_threads([issue([]), {"number": "seven", "title": "x"}], "threads.json")
    with pytest.raises(HarvestError, match="expected a JSON list"):
        read_threads("not a list", "threads.json")
    with pytest.raises(HarvestError, match=r"\[0\]\.title"):
        read_threads([{"number": 1}], "threads.json")


def test_texts_are_cut_as_they_are_read() -> None:
    [thread] = read_threads([issue([comment("m", "MEMBER", "a" * 300_000)], body="b" * 300_000, title="t" * 300_000)])
    assert len(thread.body) == len(thread.title) == len(thread.comments[0].body) == MAX_TEXT


def test_an_issue_of_the_rest_api_reads_as_gh_json_does() -> None:
    issue_json = {
        "number": 3,
        "title": "How do I resume?",
        "body": "body",
        "html_url": "https://github.com/o/r/issues/3",
        "state": "closed",
        "state_reason": "completed",
        "user": {"login": "asker", "type": "User"},
        "labels": [{"name": "faq"}],
        "closed_at": "2026-01-05T00:00:00Z",
    }
    comments = [
        {
            "user": {"login": "maint", "type": "User"},
            "author_association": "OWNER",
            "body": ANSWER,
            "created_at": "2026-01-04T00:00:00Z",
            "html_url": "u",
        },
        {
            "user": {"login": "github-actions[bot]", "type": "Bot"},
            "author_association": "NONE",
            "body": "stale",
            "created_at": "2026-01-04T00:00:00Z",
        },
    ]
    thread = from_rest("o/r", issue_json, comments)
    assert (thread.repo, thread.state_reason, thread.labels) == ("o/r", "completed", ("faq",))
    assert [(c.author, c.association, c.bot) for c in thread.comments] == [
        ("maint", "OWNER", False),
        ("github-actions[bot]", "NONE", True),
    ]
