"""The labelled fixtures of real tracker threads: large enough, never a thread the test splits measure, and labels a
reader can check against the threads themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.harvest import Choice, draft_of, read_threads

DATA = Path(__file__).resolve().parents[2] / "data"
FIXTURES = {"threads.json": 150, "tune_more.json": 50}  # file: at least this many threads


def _raw(name: str) -> list[dict]:
    loaded: list[dict] = json.loads((DATA / "harvest" / name).read_text(encoding="utf-8"))
    return loaded


def _test_urls() -> set[str]:
    urls = set()
    for name in ("real_test.jsonl", "issues_test.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                urls.add(json.loads(line).get("url"))
    return urls


@pytest.mark.parametrize("name", FIXTURES)
def test_each_fixture_has_its_real_threads_none_from_the_test_splits(name: str) -> None:
    raw = _raw(name)
    urls = [item["url"] for item in raw]
    assert len(raw) >= FIXTURES[name] and len(set(urls)) == len(urls)
    assert not set(urls) & _test_urls()
    assert all(url.startswith("https://github.com/") for url in urls)
    assert len(read_threads(raw, name)) == len(raw)


def test_the_fixtures_share_no_thread() -> None:
    assert not {t["url"] for t in _raw("threads.json")} & {t["url"] for t in _raw("tune_more.json")}


@pytest.mark.parametrize("name", FIXTURES)
def test_each_positive_quotes_its_answer_by_its_author_and_the_draft_keeps_it(name: str) -> None:
    """Each thread labelled resolved names who answered (`answer_by`) and quotes the answer's words (`quote`), as a
    reader copies them from the thread's page: that text is in the thread, in a comment by that person, who is not the
    asker nor a bot, and the draft made from that comment answers with that text."""
    raw = _raw(name)
    positives = [item for item in raw if item["fixture"]["harvest"]]
    assert len(positives) >= 8
    for item, thread in zip(raw, read_threads(raw, name)):
        label = item["fixture"]
        if not label["harvest"]:
            assert label["answer"] is None and "quote" not in label
            continue
        quote, by = label["quote"], label["answer_by"]
        assert len(quote) >= 12 and by != thread.author, item["url"]
        saying = [c for c in thread.comments if quote in c.body]
        assert saying and all(c.author == by and not c.bot for c in saying), item["url"]
        labelled = thread.comments[label["answer"]]
        assert labelled in saying, item["url"]
        draft = draft_of(Choice(thread, labelled))
        assert draft is not None and quote in draft.answer and draft.answer_author == by, item["url"]
    categories = {item["fixture"]["category"] for item in raw}
    assert {"resolved", "stale", "non_maintainer", "no_answer"} <= categories
