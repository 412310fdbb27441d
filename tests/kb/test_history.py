"""`kb.chat.recent_turns`: the one rule every conversational channel reads a conversation's earlier turns by."""

from __future__ import annotations

import asyncio
from typing import Any

from kb import asking
from kb.chat import HISTORY_CHARS, HISTORY_TURNS, Chat, recent_turns
from kb.events import Chatted, Events
from kb.knowledge import KnowledgeBase


def turns(n: int, chars: int = 10) -> list[dict[str, Any]]:
    return [{"role": ("user", "assistant")[i % 2], "content": f"{i:04d}" + "x" * (chars - 4)} for i in range(n)]


def test_the_newest_turns_are_kept_in_order_within_the_count() -> None:
    kept = recent_turns(turns(HISTORY_TURNS + 7))
    assert len(kept) == HISTORY_TURNS
    assert kept[0]["content"].startswith("0007") and kept[-1]["content"].startswith(f"{HISTORY_TURNS + 6:04d}")


def test_the_newest_turns_are_kept_within_the_characters() -> None:
    long = turns(6, chars=HISTORY_CHARS // 4)  # four of them fill the budget exactly
    kept = recent_turns(long)
    assert [t["content"][:4] for t in kept] == ["0002", "0003", "0004", "0005"]
    assert recent_turns(turns(3)) == turns(3)  # a short conversation is read whole


def test_a_chat_turn_reads_and_records_only_the_recent_turns(settings: Any) -> None:
    kb = KnowledgeBase.open(settings)
    heard: list[Chatted] = []
    events = Events([lambda e: heard.append(e) if isinstance(e, Chatted) else None])
    history = turns(HISTORY_TURNS + 20)
    asyncio.run(asking.chat(Chat(kb), events, "how do I resume training?", history, channel="web", href=lambda h: ""))
    assert list(heard[0].history) == history[-HISTORY_TURNS:]
