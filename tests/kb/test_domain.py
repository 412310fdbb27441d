"""The chat and the insights are the library's: they load, whole, without the web app or the ingest."""

from __future__ import annotations

import subprocess
import sys

WEB = {"fastapi", "starlette", "jinja2", "uvicorn", "server", "ingest"}


def test_the_chat_and_the_insights_load_without_the_web_app() -> None:
    code = (
        "import sys, kb.chat, kb.insights\n"
        "from kb.insights import Recorder, GapFinder, draft_entry, gather\n"  # the names loaded on first use too
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(out.split())
    assert {"kb", "numpy"} <= loaded  # the code ran: grouping's numpy is there
    assert not loaded & WEB, f"kb.chat or kb.insights imported {sorted(loaded & WEB)}"
