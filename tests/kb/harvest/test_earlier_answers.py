"""The time split of "see also" (tests/data/harvest/earlier_answers.json): what a reader can check of its labels."""

from __future__ import annotations

import json

from tests.support.paths import DATA

from .fixture_labels import _repo_and_number

FIXTURES = ("threads.json", "tune_more.json", "unseen.json", "heldout.json", "fresh.json", "blind.json", "sealed.json")


def _questions() -> dict[str, dict]:
    lines = [
        line
        for name in ("real_tune.jsonl", "real_test.jsonl")
        for line in (DATA / name).read_text("utf-8").splitlines()
    ]
    rows = [json.loads(line) for line in lines if line.strip()]
    return {row["id"]: row for row in rows}


def test_each_label_is_an_out_of_scope_question_and_an_earlier_resolved_thread_of_its_tracker() -> None:
    answers = json.loads((DATA / "harvest" / "earlier_answers.json").read_text(encoding="utf-8"))["answers"]
    questions = _questions()
    resolved = {
        item["url"]
        for name in FIXTURES
        for item in json.loads((DATA / "harvest" / name).read_text(encoding="utf-8"))
        if item["fixture"]["harvest"]
    }
    assert len(answers) == 219 and sum(bool(urls) for urls in answers.values()) == 4
    for qid, urls in answers.items():
        question = questions[qid]
        assert not question["expect"], qid
        repo, number = _repo_and_number(question["url"])
        for url in urls:
            assert url in resolved, url
            earlier_repo, earlier = _repo_and_number(url)
            assert earlier_repo == repo and earlier < number, (qid, url)
