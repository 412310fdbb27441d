"""The second, unseen fixture of tracker threads (tests/data/harvest/unseen.json): what a reader can check in the file.

Nothing here runs the harvest or reads its rules: the checks are on the threads and their labels alone, so they
hold whatever the rules become. See tests/data/harvest/UNSEEN.md for how the labels were set.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .fixture_labels import CATEGORIES, CJK, ISSUE_URL, POSITIVE_AUTHORS, _repo_and_number

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
UNSEEN = DATA / "harvest" / "unseen.json"
FIRST = DATA / "harvest" / "threads.json"
QUERY_SETS = ("real_tune.jsonl", "real_test.jsonl", "issues_tune.jsonl", "issues_test.jsonl")


# The first fixture's categories and the ones this fixture adds.
def _threads() -> list[dict]:
    return json.loads(UNSEEN.read_text(encoding="utf-8"))


def _query_set_urls() -> set[tuple[str, int]]:
    keys = set()
    for name in QUERY_SETS:
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            url = json.loads(line).get("url", "") if line.strip() else ""
            if ISSUE_URL.fullmatch(url.strip().rstrip("/")):
                keys.add(_repo_and_number(url))
    return keys


def test_at_least_110_threads_each_a_real_issue_url_once() -> None:
    threads = _threads()
    keys = [_repo_and_number(item["url"]) for item in threads]
    assert len(threads) >= 110
    assert len(set(keys)) == len(keys), "a thread is in the fixture twice"
    assert all(number == item["number"] for (_, number), item in zip(keys, threads))


def test_no_repository_of_the_first_fixture_and_no_thread_of_the_query_sets() -> None:
    first = [_repo_and_number(item["url"]) for item in json.loads(FIRST.read_text(encoding="utf-8"))]
    first_repos = {repo for repo, _ in first}
    keys = {_repo_and_number(item["url"]) for item in _threads()}
    assert not {repo for repo, _ in keys} & first_repos
    assert not keys & set(first)
    assert not keys & _query_set_urls()


def test_each_thread_has_the_shape_gh_writes_and_a_label() -> None:
    for item in _threads():
        label = item["fixture"]
        assert item["state"] in ("OPEN", "CLOSED"), item["url"]
        assert (item["stateReason"] is None) == (item["state"] == "OPEN"), item["url"]
        assert item["stateReason"] in (None, "COMPLETED", "NOT_PLANNED", "DUPLICATE"), item["url"]
        assert item["title"].strip() and item["author"]["login"], item["url"]
        for comment in item["comments"]:
            assert comment["author"]["login"] and comment["body"].strip(), item["url"]
            assert comment["authorAssociation"] in ("OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "NONE")
        assert label["category"] in CATEGORIES, (item["url"], label["category"])
        assert label["excerpt"] is True and "authorAssociation" in label["hand_labelled"], item["url"]
        assert label["why"].strip() and label["lang"] in ("en", "zh"), item["url"]
        if label["lang"] == "zh":
            assert CJK.search(item["title"] + item["body"]), f"labelled Chinese, no Chinese text: {item['url']}"


def test_each_positive_names_a_comment_by_a_person_of_the_kind_it_says() -> None:
    threads = _threads()
    positives = [item for item in threads if item["fixture"]["harvest"]]
    assert len(positives) >= 30
    for item in threads:
        label = item["fixture"]
        if not label["harvest"]:
            assert label["answer"] is None, item["url"]
            continue
        answer = item["comments"][label["answer"]]
        assert not answer["author"]["is_bot"] and answer["body"].strip(), item["url"]
        assert answer["author"]["login"] != item["author"]["login"], f"the asker's own answer: {item['url']}"
        assert answer["authorAssociation"] in POSITIVE_AUTHORS[label["answer_author_is"]], item["url"]


@pytest.mark.parametrize(
    ("category", "least"),
    [
        ("contributor_answer", 6), ("closing_note", 8), ("stale", 5), ("self_resolved", 6),
        ("feature_request", 8), ("duplicate", 4), ("pr_link", 4), ("short_fix", 5), ("new_problem", 3),
    ],
)  # fmt: skip
def test_the_hard_cases_are_there_in_numbers(category: str, least: int) -> None:
    assert sum(item["fixture"]["category"] == category for item in _threads()) >= least


def test_a_short_fix_is_short_and_a_contributor_answer_is_a_contributors() -> None:
    for item in _threads():
        label = item["fixture"]
        if label["category"] == "short_fix":
            assert len(item["comments"][label["answer"]]["body"]) < 40, item["url"]
        if label["category"] == "contributor_answer":
            assert item["comments"][label["answer"]]["authorAssociation"] == "CONTRIBUTOR", item["url"]


def test_chinese_threads_in_good_number() -> None:
    assert sum(item["fixture"]["lang"] == "zh" for item in _threads()) >= 15


def test_no_rule_reads_the_unseen_fixture() -> None:
    """It is measured once and reported: nothing in the library may read it (to tune on it)."""
    readers = [path for path in (ROOT / "kb").rglob("*.py") if "unseen.json" in path.read_text(encoding="utf-8")]
    assert not readers
