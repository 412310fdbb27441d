"""`kb ask QUESTION`: the id of the entry that answers; the test-only channel's own command, added to the `kb` parser by its plugin."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser", "cmd_ask"]


def add_parser(sub: Any) -> None:
    """Add `ask` to the `kb` command's subparsers."""
    p = sub.add_parser("ask", help="the plain-text channel: print the id of the FAQ entry that answers a question")
    p.add_argument("question")
    p.set_defaults(run=cmd_ask)


def cmd_ask(settings: Any, args: argparse.Namespace) -> int:
    from kb.knowledge import KnowledgeBase

    hits = KnowledgeBase.open(settings).search_blocking(args.question, k=1)
    print(hits.hits[0].entry.id if hits.answered else "none")
    return 0
