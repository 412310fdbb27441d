"""A document that lost its newlines gets back the breaks its Markdown needs, in time linear in its length."""

from __future__ import annotations

import time

from ingest.linebreaks import has_lost_newlines, restore_newlines
from kb.settings import Settings

SYNC_LIMIT = Settings().sync_max_file_bytes  # the largest upstream file a sync reads


def test_an_inline_fence_becomes_a_code_block() -> None:
    text = "# Q one? Install it: ```bash pip install kb ``` # Q two? Run `kb serve`."
    assert has_lost_newlines(text)
    restored = restore_newlines(text)
    assert "```bash\npip install kb\n```" in restored
    assert "# Q one?" in restored and "# Q two?" in restored


def test_a_fence_closes_at_the_first_run_followed_by_a_space() -> None:
    restored = restore_newlines("# A? ```py a = '```x' ``` # B? b")
    assert "```py\na = '```x'\n```" in restored


def test_fences_opened_and_never_closed_are_read_once() -> None:
    for unit in ("```a ", "```a"):  # each run is followed by a letter: no fence closes
        text = (unit * (SYNC_LIMIT // len(unit)))[:SYNC_LIMIT]
        started = time.perf_counter()
        restored = restore_newlines(text)
        assert time.perf_counter() - started < 30  # seconds, generous: 1 s on a loaded machine; 19 hours before
        assert restored.strip() == text.strip()
