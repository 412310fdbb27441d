"""The labelled fixture of real tracker threads: large enough, never a question the test split measures, labels that hold."""

from __future__ import annotations

import json
from pathlib import Path

from kb.harvest import read_threads

DATA = Path(__file__).resolve().parents[2] / "data"
FIXTURE = DATA / "harvest" / "threads.json"


def test_the_fixture_has_150_real_threads_none_from_real_test() -> None:
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    real_test = {
        json.loads(line).get("url")
        for line in (DATA / "real_test.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    urls = [item["url"] for item in raw]
    assert len(raw) >= 150 and len(set(urls)) == len(urls)
    assert not set(urls) & real_test
    assert all(url.startswith("https://github.com/") for url in urls)
    assert len(read_threads(raw, str(FIXTURE))) == len(raw)


def test_each_label_names_a_maintainer_comment_of_a_closed_thread() -> None:
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    positives = [item for item in raw if item["fixture"]["harvest"]]
    assert len(positives) >= 20
    for item in raw:
        label = item["fixture"]
        assert "authorAssociation" in label["hand_labelled"]
        if label["harvest"]:
            answer = item["comments"][label["answer"]]
            assert item["state"] == "CLOSED" and answer["authorAssociation"] in ("OWNER", "MEMBER", "COLLABORATOR")
        else:
            assert label["answer"] is None
    categories = {item["fixture"]["category"] for item in raw}
    assert {"resolved", "open", "stale", "non_maintainer", "duplicate", "not_planned"} <= categories
