"""The labelled fixtures of tracker threads measured as held-out sets (tests/data/harvest/heldout.json, then
fresh.json, blind.json, sealed.json, untouched.json and unread.json): what a reader can check in each file.

Nothing here runs the harvest or reads its rules: the checks are on the threads and their labels alone, so they
hold whatever the rules become. See tests/data/harvest/HELDOUT.md, FRESH.md, BLIND.md,
SEALED.md, UNTOUCHED.md and UNREAD.md for how the labels were set.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from .fixture_labels import CATEGORIES, CJK, ISSUE_URL, POSITIVE_AUTHORS, _repo_and_number

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
# Each file and the note that says how it was labelled and what was measured on it.
LABELLED = {
    "heldout.json": "HELDOUT.md",
    "fresh.json": "FRESH.md",
    "blind.json": "BLIND.md",
    "sealed.json": "SEALED.md",
    "untouched.json": "UNTOUCHED.md",
    "unread.json": "UNREAD.md",
}
OTHER_FIXTURES = ("threads.json", "tune_more.json", "unseen.json", "time_split.json")
QUERY_SETS = ("real_tune.jsonl", "real_test.jsonl", "issues_tune.jsonl", "issues_test.jsonl", "whole_issues.jsonl")

POSITIVE_CATEGORIES = {"resolved", "closing_note", "contributor_answer", "short_fix", "user_answer_confirmed"}
each_file = pytest.mark.parametrize("name", list(LABELLED))


def _urls_in(text: str) -> set[tuple[str, int]]:
    return {_repo_and_number(found.group(0)) for found in ISSUE_URL.finditer(text)}


def _threads(name: str) -> list[dict]:
    return json.loads((DATA / "harvest" / name).read_text(encoding="utf-8"))


@each_file
def test_at_least_80_threads_each_a_real_issue_url_once(name: str) -> None:
    threads = _threads(name)
    keys = [_repo_and_number(item["url"]) for item in threads]
    assert len(threads) >= 80
    assert len(set(keys)) == len(keys), "a thread is in the fixture twice"
    assert all(number == item["number"] for (_, number), item in zip(keys, threads))


@pytest.mark.parametrize(
    ("name", "other"),
    [(name, other) for name in LABELLED for other in OTHER_FIXTURES + tuple(LABELLED) if other != name],
)
def test_no_thread_of_another_fixture(name: str, other: str) -> None:
    """Every issue URL anywhere in the other fixtures (time_split.json names them in its drafts and answers)."""
    found = _urls_in((DATA / "harvest" / other).read_text(encoding="utf-8"))
    assert found, f"no issue URL read from {other}"
    clash = {_repo_and_number(item["url"]) for item in _threads(name)} & found
    assert not clash, sorted(clash)


@each_file
@pytest.mark.parametrize("query_set", QUERY_SETS)
def test_no_thread_of_the_query_sets(name: str, query_set: str) -> None:
    found = _urls_in((DATA / query_set).read_text(encoding="utf-8"))
    assert found, f"no issue URL read from {query_set}"
    clash = {_repo_and_number(item["url"]) for item in _threads(name)} & found
    assert not clash, sorted(clash)


def test_renamed_repositories_are_folded_together() -> None:
    """The disjointness checks above would miss a thread stored under a repository's old name."""
    assert _repo_and_number("https://github.com/THUDM/ChatGLM3/issues/7") == ("zai-org/chatglm3", 7)
    assert _repo_and_number("https://github.com/volcengine/verl/issues/7") == ("verl-project/verl", 7)
    assert _repo_and_number("https://github.com/hiyouga/LLaMA-Factory/issues/7") == ("hiyouga/llamafactory", 7)
    assert _repo_and_number("https://github.com/microsoft/DeepSpeed/issues/7") == ("deepspeedai/deepspeed", 7)


@each_file
def test_each_thread_has_the_shape_gh_writes_and_a_label(name: str) -> None:
    for item in _threads(name):
        label = item["fixture"]
        assert item["state"] in ("OPEN", "CLOSED"), item["url"]
        assert (item["stateReason"] is None) == (item["state"] == "OPEN"), item["url"]
        assert (item["closedAt"] is None) == (item["state"] == "OPEN"), item["url"]
        assert item["stateReason"] in (None, "COMPLETED", "NOT_PLANNED", "DUPLICATE"), item["url"]
        assert item["title"].strip() and item["body"].strip() and item["author"]["login"], item["url"]
        for comment in item["comments"]:
            assert comment["author"]["login"] and comment["body"].strip(), item["url"]
            assert comment["authorAssociation"] in ("OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "NONE")
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT12:00:00Z", comment["createdAt"]), item["url"]
        assert label["category"] in CATEGORIES, (item["url"], label["category"])
        assert label["excerpt"] is True and "authorAssociation" in label["hand_labelled"], item["url"]
        if item["state"] == "CLOSED":
            assert {"stateReason", "closedAt"} <= set(label["hand_labelled"]), item["url"]
        assert label["why"].strip() and label["lang"] in ("en", "zh"), item["url"]
        if label["lang"] == "zh":
            assert CJK.search(item["title"] + item["body"]), f"labelled Chinese, no Chinese text: {item['url']}"


@each_file
def test_each_positive_is_closed_and_names_a_comment_by_a_person_of_the_kind_it_says(name: str) -> None:
    threads = _threads(name)
    positives = [item for item in threads if item["fixture"]["harvest"]]
    assert 0.3 <= len(positives) / len(threads) <= 0.5
    for item in threads:
        label = item["fixture"]
        if not label["harvest"]:
            assert label["answer"] is None, item["url"]
            assert label["category"] not in POSITIVE_CATEGORIES - {"closing_note"}, item["url"]
            continue
        assert item["state"] == "CLOSED" and label["category"] in POSITIVE_CATEGORIES, item["url"]
        answer = item["comments"][label["answer"]]
        assert not answer["author"]["is_bot"] and answer["body"].strip(), item["url"]
        assert answer["author"]["login"] != item["author"]["login"], f"the asker's own answer: {item['url']}"
        assert answer["authorAssociation"] in POSITIVE_AUTHORS[label["answer_author_is"]], item["url"]


@each_file
def test_an_open_thread_is_never_a_positive(name: str) -> None:
    """Labelled `open`, or a feature request still open (fresh.json labels those by what was asked)."""
    for item in _threads(name):
        if item["state"] == "OPEN":
            assert item["fixture"]["category"] in ("open", "feature_request"), item["url"]
            assert not item["fixture"]["harvest"], item["url"]


@each_file
@pytest.mark.parametrize(
    ("category", "least"),
    [
        ("contributor_answer", 1), ("closing_note", 5), ("stale", 4), ("self_resolved", 4),
        ("feature_request", 4), ("duplicate", 3), ("pr_link", 4), ("short_fix", 4), ("new_problem", 2),
        ("user_answer_confirmed", 2), ("release_request", 2), ("open", 4),
    ],
)  # fmt: skip
def test_the_hard_cases_are_there_in_numbers(name: str, category: str, least: int) -> None:
    least = FEWER.get((name, category), least)
    assert sum(item["fixture"]["category"] == category for item in _threads(name)) >= least


# A hard case a file holds fewer of, as its note says: blind.json's searchers found no closed thread of an asker
# answering a fix with a new failure (BLIND.md), sealed.json's one other user's answer the asker confirmed,
# untouched.json's no duplicate and two pull requests named alone (UNTOUCHED.md).
FEWER = {
    ("blind.json", "new_problem"): 0,
    ("sealed.json", "user_answer_confirmed"): 1,
    ("untouched.json", "duplicate"): 0,
    ("untouched.json", "pr_link"): 2,
}
# Threads where a CONTRIBUTOR speaks, fewer in a file whose note says why (UNTOUCHED.md: one repository's history
# checked).
FEWER_CONTRIBUTORS = {"untouched.json": 1}


@each_file
def test_contributors_speak_in_several_threads(name: str) -> None:
    """A CONTRIBUTOR (a commit in the repository, nothing more) answers or comments in several threads."""
    threads = _threads(name)
    speaking = [item for item in threads if any(c["authorAssociation"] == "CONTRIBUTOR" for c in item["comments"])]
    assert len(speaking) >= FEWER_CONTRIBUTORS.get(name, 5)


@each_file
def test_a_short_fix_is_short_and_a_contributor_answer_is_a_contributors(name: str) -> None:
    for item in _threads(name):
        label = item["fixture"]
        if label["category"] == "short_fix":
            assert len(item["comments"][label["answer"]]["body"]) < 40, item["url"]
        if label["category"] == "contributor_answer":
            assert item["comments"][label["answer"]]["authorAssociation"] == "CONTRIBUTOR", item["url"]


@each_file
def test_a_closing_note_positive_has_a_later_comment_after_its_answer(name: str) -> None:
    """A positive `closing_note` is one where the real answer comes before the note that closes the thread."""
    for item in _threads(name):
        label = item["fixture"]
        if label["harvest"] and label["category"] == "closing_note":
            assert label["answer"] < len(item["comments"]) - 1, item["url"]


@each_file
def test_chinese_and_english_threads_both_in_good_number_from_many_repositories(name: str) -> None:
    threads = _threads(name)
    chinese = sum(item["fixture"]["lang"] == "zh" for item in threads)
    assert 0.35 <= chinese / len(threads) <= 0.55
    repos = Counter(_repo_and_number(item["url"])[0] for item in threads)
    assert len(repos) >= 20 and max(repos.values()) <= len(threads) // 5


@each_file
def test_the_figures_in_the_note_are_the_files(name: str) -> None:
    """The note states the counts a reader would recompute from the file."""
    threads = _threads(name)
    positives = sum(item["fixture"]["harvest"] for item in threads)
    chinese = sum(item["fixture"]["lang"] == "zh" for item in threads)
    repos = len({_repo_and_number(item["url"])[0] for item in threads})
    note = (DATA / "harvest" / LABELLED[name]).read_text(encoding="utf-8")
    assert f"`{name}` holds {len(threads)} real public GitHub issue threads" in note
    summary = (
        f"{repos} repositories; {positives} positives, {len(threads) - positives} negatives; "
        f"{chinese} Chinese threads, {len(threads) - chinese} English."
    )
    assert summary in note


def test_no_module_of_the_library_reads_a_labelled_fixture() -> None:
    """They are measured and reported: nothing in the library may read one (to tune on it)."""
    for name in LABELLED:
        readers = [path for path in (ROOT / "kb").rglob("*.py") if name in path.read_text(encoding="utf-8")]
        assert not readers, name
