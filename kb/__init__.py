"""kb: a bilingual (Chinese/English) FAQ knowledge base for LLM-training frameworks.

    import kb

    base = kb.KnowledgeBase.open(kb.Settings.from_env())   # the index `kb ingest` built
    result = base.search_blocking("how do I resume training")   # or `await base.search(...)`
    if result.answered:
        print(result.hits[0].entry.answer)

The names below load on first use, so that `import kb` (and `kb --help`) stays quick.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    AnswerRefused,
    BuildRefused,
    CalibrationError,
    EntryNotFound,
    IndexMissing,
    IndexUnreadable,
    InsightsUnavailable,
    KBError,
    LLMFailed,
    QueryError,
    SettingsError,
    SourceError,
    SourceErrors,
)

if TYPE_CHECKING:
    from .answer import Answer, compose_answer
    from .chat import Chat, ChatReply
    from .entries import Entry, Source
    from .hits import Hit, SearchResult
    from .knowledge import KnowledgeBase
    from .settings import Settings

_LATER = {
    "KnowledgeBase": "knowledge",
    "Settings": "settings",
    "Entry": "entries",
    "Source": "entries",
    "Hit": "hits",
    "SearchResult": "hits",
    "Answer": "answer",
    "compose_answer": "answer",
    "Chat": "chat",
    "ChatReply": "chat",
}

__all__ = [
    "KnowledgeBase",
    "Settings",
    "Entry",
    "Source",
    "Hit",
    "SearchResult",
    "Answer",
    "compose_answer",
    "Chat",
    "ChatReply",
    "KBError",
    "SettingsError",
    "SourceError",
    "SourceErrors",
    "IndexUnreadable",
    "IndexMissing",
    "BuildRefused",
    "EntryNotFound",
    "QueryError",
    "AnswerRefused",
    "LLMFailed",
    "InsightsUnavailable",
    "CalibrationError",
]


def __getattr__(name: str) -> Any:
    if name in _LATER:
        return getattr(importlib.import_module(f".{_LATER[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
