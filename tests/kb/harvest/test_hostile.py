"""Hostile threads (65,536-character bodies and comments, nested quotes, mentions, HTML) neither stall the harvest
nor reach its drafts: no tag, no live mention, no quoted text, every text within its limit."""

from __future__ import annotations

import re
import time

from kb.harvest import harvest, read_threads
from kb.harvest.clean import MAX_ANSWER
from kb.harvest.drafts import MAX_QUESTION

from .threads_data import comment, issue

BODY = 65_536


def hostile_threads() -> list[dict]:
    answer_tail = "Use `--load`. " + "@everyone <img src=x onerror=alert(1)> <script>alert(2)</script> " * 10
    shapes = {
        "nested quotes": "> " * (BODY // 2),
        "mentions": "@a " * (BODY // 3),
        "tags": "<b " * (BODY // 3),
        "comments": "<!--" * (BODY // 4),
        "fences": "```" * (BODY // 3),
        "one line": "x" * BODY,
        "lines": "\n" * BODY,
    }
    threads = []
    for number, (name, text) in enumerate(shapes.items(), 1):
        body = (text + "<script>alert(0)</script> @maintainer how do I resume?")[:BODY]
        replies = [
            comment("m", "MEMBER", (answer_tail + "\n" + text)[:BODY]),
            comment("asker", "NONE", "> " * 2000 + "thanks, it works", day=3),
        ]
        threads.append(
            issue(replies, number=number, title=f"<img src=x onerror=alert(1)> @team {name} " + "t" * 300, body=body)
        )
    return threads


def test_hostile_threads_neither_stall_nor_leak_into_drafts() -> None:
    raw = hostile_threads()
    started = time.perf_counter()
    done = harvest(read_threads(raw))
    assert time.perf_counter() - started < 20  # seven 64 KiB threads; a quadratic pattern would take minutes
    assert len(done.drafts) == len(raw)
    for draft in done.drafts:
        for text in (draft.question, draft.answer):
            assert not re.search(r"<\s*(?:script|img|b)\b", text, re.IGNORECASE)
            assert not re.search(r"(?<![`\w])@(?:everyone|team|maintainer|a)\b(?!`)", text)
        assert len(draft.question) <= MAX_QUESTION and len(draft.answer) <= MAX_ANSWER + 200
        assert "> >" not in draft.answer
