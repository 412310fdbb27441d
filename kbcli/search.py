"""`kb search`: the best answer to a question, rendered for the terminal, then the other entries worth showing.

    kb search QUESTION [-k N] [--brief] [--tag TAG ...] [--source NAME] [--json] [--hl zh|en]

The search is the server's (`kb.knowledge.KnowledgeBase` with the links taught with `kb link`);
`--json` prints it as `/api/search` gives it, without what only a server has.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from kb.answer import elsewhere_note
from kb.errors import KBError, QueryError
from kb.hits import SearchResult, hit_fields
from kb.settings import Settings

from .terminal import print_result

__all__ = ["SEARCH_OPTIONS", "add_parser", "cmd_search", "in_own_words"]


def add_parser(sub: Any) -> None:
    """Add `search` to the `kb` command's subparsers."""
    p = sub.add_parser("search", help="search the index: the best answer, then the other entries worth showing")
    p.add_argument("query", help="the question, an error message or a flag; `-` reads it from standard input")
    p.add_argument("-k", type=int, default=5, help="at most this many entries (default 5)")
    p.add_argument("--brief", action="store_true", help="titles and links alone, without the answer")
    p.add_argument("--tag", action="append", help="only entries with this tag (repeatable)")
    p.add_argument("--source", help="only entries from this source")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.add_argument("--hl", choices=("zh", "en"), help="show entries in this language (default: the question's)")
    p.set_defaults(run=cmd_search)


def _open(settings: Settings):
    """The knowledge base as the server serves it: the index, and the links taught with `kb link`."""
    from kb.insights.book import with_links
    from kb.knowledge import KnowledgeBase

    return with_links(KnowledgeBase.open(settings), settings)


def cmd_search(settings: Settings, args: argparse.Namespace) -> int:
    """The best answer rendered for the terminal, then the other entries worth showing;
    `--brief`: their titles and links alone; `-`: the question is read from standard input."""
    query = sys.stdin.read() if args.query == "-" else args.query
    kb = _open(settings)
    kb.warm()  # the model's weights and the word lists load now, so the time printed is the search's own
    started = time.perf_counter()
    try:
        result = kb.search_blocking(query, k=args.k, tags=args.tag or (), source=args.source)
    except QueryError as exc:
        raise in_own_words(exc, SEARCH_OPTIONS) from None
    elapsed = time.perf_counter() - started
    hl = args.hl or result.lang
    shown = result.in_language(hl)
    if args.json:
        body = {
            **_result_json(shown, hl),
            "shown": len(shown.worth_showing()),
            "note": elsewhere_note(result, hl) or None,
        }
        print(json.dumps(body, ensure_ascii=False, indent=2))
        return 0
    print_result(result, hl, brief=args.brief)
    sys.stdout.flush()  # the answer first: under `2>&1` the time is a line of its own after it
    print(f"({elapsed * 1000:.0f} ms)", file=sys.stderr)
    return 0


# The search's fields as `kb search` names them; the question itself is its argument, unnamed.
SEARCH_OPTIONS = {"tag": "--tag", "source": "--source"}


def in_own_words(exc: QueryError, options: dict[str, str]) -> KBError:
    """A query error as the command words it: the option at fault by its flag (`--tag`), an
    error in the question with no field name (the API's `q` means nothing on a command line)."""
    if exc.field in options:
        return KBError(f"{options[exc.field]}: {exc.message}")
    return KBError(exc.message)


def _result_json(result: SearchResult, hl: str) -> dict:
    """The search as `/api/search` gives it, without what only a server has (the rendered
    answer, the entries' pages)."""
    return {
        "query": result.query,
        "answered": result.answered,
        "confidence": result.confidence,
        "state": result.state,
        "hl": hl,
        "hits": [hit_fields(h, hl) for h in result.hits],
    }
