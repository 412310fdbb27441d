"""An entry page's description (`plain_text`): the answer's first words without Markdown's marks, read in time linear
in the answer whatever it holds (60,000 line breaks had taken 18 s per view)."""

from __future__ import annotations

import time

import pytest

from server.rendering.markdown import plain_text


def test_a_summary_is_the_first_words_without_marks() -> None:
    answer = (
        "## Resume\n\n- Use `--load` **now**, see [the docs](https://x.example/y) and ![a chart](a.png)\n\n"
        "```bash\npython train.py\n```\n* item two\n+ item three"
    )
    assert plain_text(answer) == "Resume Use --load now, see the docs and a chart python train.py item two item three"
    assert plain_text("word " * 100, 20) == "word word word word…"
    assert plain_text("\n" * 15_000 + "Use `--load`.") == "Use --load."


HOSTILE = {
    "line breaks": "\n" * 60_000,
    "spaces and line breaks": " \n" * 30_000,
    "list marks": "- \n" * 20_000,
    "open brackets": "[" * 60_000,
    "links never closed": "[a](" * 15_000,
    "hashes": "#" * 60_000,
    "backticks": "`" * 60_000,
    "one long line": "x" * 60_000,
}


@pytest.mark.parametrize("shape", list(HOSTILE))
def test_a_summary_of_any_answer_takes_linear_time(shape: str) -> None:
    started = time.perf_counter()
    plain_text(HOSTILE[shape] + "end")
    assert time.perf_counter() - started < 0.5  # generous: each takes under a millisecond
