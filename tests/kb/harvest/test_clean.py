"""The answer cleaned: quotes dropped, mentions and HTML neutralised, code kept, in linear time on hostile text."""

from __future__ import annotations

import time

from kb.harvest.clean import MAX_ANSWER, clean_answer


def test_quotes_mentions_and_html_are_neutralised() -> None:
    text = (
        "On Mon, Jan 5, someone wrote:\n> > nested quote\n> the asker's words\n\n"
        '@asker set `--load` <img src="https://x/y.png"> and <script>alert(1)</script> see <!-- hint -->done.\n'
        "mail me@example.com"
    )
    cleaned = clean_answer(text)
    assert "quote" not in cleaned and "asker's words" not in cleaned and "wrote:" not in cleaned
    assert "`@asker`" in cleaned and "<img" not in cleaned and "<script" not in cleaned and "hint" not in cleaned
    assert "me@example.com" in cleaned  # an address is not a mention


def test_code_blocks_are_kept_as_written() -> None:
    text = "Run:\n```python\n@torch.no_grad()\ndef f(x: list[int]) -> None: ...\n```\n<b>bold</b>"
    cleaned = clean_answer(text)
    assert "@torch.no_grad()" in cleaned and "list[int]" in cleaned and "<b>" not in cleaned


def test_hostile_comments_take_linear_time_and_are_cut() -> None:
    shapes = {
        "quotes": "> " * 30_000 + "x",
        "mentions": "@a" * 30_000,
        "tags": "<a " * 20_000,
        "comment": "<!--" * 15_000,
        "fences": "```" * 20_000,
    }
    for name, text in shapes.items():
        started = time.perf_counter()
        cleaned = clean_answer(text[:65_536])
        assert time.perf_counter() - started < 2.0, name  # a quadratic blow-up takes minutes
        assert len(cleaned) <= MAX_ANSWER and "<a " not in cleaned.replace("&lt;a ", "")
