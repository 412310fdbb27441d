"""What the home and chat pages say about the FAQ: a title, a tagline and example
questions, from the sources of the index served (never a fixed list of frameworks)."""

from __future__ import annotations

from dataclasses import dataclass

from kb.knowledge import KnowledgeBase

from .strings import Translator

__all__ = ["Intro", "intro"]

MAX_EXAMPLES = 4


@dataclass(frozen=True)
class Intro:
    title: str
    tagline: str
    examples: list[str]


def _names(names: list[str], lang: str) -> str:
    """"A, B and C" / "A、B 和 C"."""
    if len(names) < 2:
        return "".join(names)
    if lang == "zh":
        return "、".join(names[:-1]) + " 和 " + names[-1]
    return ", ".join(names[:-1]) + " and " + names[-1]


def intro(kb: KnowledgeBase, lang: str) -> Intro:
    """One source: its own title; several: their frameworks. The examples are one question
    from each source (the shortest it has in `lang`, for a chip that reads at a glance)."""
    t = Translator(lang)
    frameworks = _names(list(dict.fromkeys(s.framework for s in kb.sources)), lang)
    title = kb.sources[0].title if len(kb.sources) == 1 else t("home_title", frameworks=frameworks)
    questions: dict[str, str] = {}
    for entry in kb.entries:
        shown = entry.localized(lang)
        if shown.lang != lang and entry.source in questions:
            continue
        best = questions.get(entry.source)
        if best is None or len(shown.question) < len(best):
            questions[entry.source] = shown.question
    return Intro(title, t("tagline", frameworks=frameworks), list(questions.values())[:MAX_EXAMPLES])
