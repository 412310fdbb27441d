"""A harvested draft accepted: the written answer it becomes, with its thread as the entry's link.

The answer is written in the question's language, for the FAQ of the thread's repository when the
knowledge base has one of that name (`THUDM/slime` to the FAQ `slime`), else for none. Its row keeps
the thread's URL (`url`, the entry's link, as a Q&A file's `url` column: only an http(s) URL on the tracker's
own host, never a `javascript:` one from a file of threads) and every thread it answers (`harvested`), so
`/insights` counts the entries that came from the tracker and `kb export` carries them.
Its id is the thread's (`tracker_id`): two clicks at once save one answer, and an answer saved by a server killed
before it decided the draft is found again.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Mapping

from ..hyperlinks import tracker_link
from ..text import detect_lang
from ..written import ID_PREFIX, WrittenAnswer, written_answer
from .drafts import Draft

__all__ = ["answer_of", "entry_question", "from_tracker", "faq_of", "tracker_id"]


def faq_of(repo: str, faqs: Mapping[str, tuple[str, dict[str, str]]]) -> str:
    """The FAQ a thread of `repo` belongs to: the one named as the repository is (case aside), else none."""
    name = repo.rsplit("/", 1)[-1].lower()
    return next((faq for faq in faqs if faq.lower() == name), "")


MIN_HEADLINE = 8  # characters of a title that can head an entry on its own


def entry_question(draft: Draft) -> str:
    """The question the entry is headed by: the thread's title (the draft's headline), unless it is too short to
    say anything, then the whole question. The body's wording is linked to the entry as an alternate."""
    return draft.headline if len(draft.headline) >= MIN_HEADLINE else " ".join(draft.question.split())


def tracker_id(repo: str, number: int) -> str:
    """The id of the written answer the draft of `repo`#`number` becomes in one click: the same for every click."""
    digest = hashlib.sha1(f"tracker:{repo.lower()}#{number}".encode()).hexdigest()
    return f"{ID_PREFIX}{digest[:8]}"


def answer_of(draft: Draft, faqs: Mapping[str, tuple[str, dict[str, str]]]) -> WrittenAnswer:
    """The written answer `draft` becomes, its id `tracker_id` (AnswerRefused names the field when its text cannot
    be one)."""
    question = entry_question(draft)
    lang = detect_lang(draft.question)
    faq = faq_of(draft.repo, faqs)
    answer = written_answer({lang: question}, {lang: draft.answer}, "", faq, faqs, tracker_id(draft.repo, draft.number))
    threads = [draft.url, *(a.url for a in draft.alternates)]
    return replace(answer, extra={"url": tracker_link(draft.url), "harvested": threads})


def from_tracker(answer: WrittenAnswer) -> bool:
    """Whether a written answer was accepted from a harvested thread."""
    return bool(answer.extra.get("harvested"))
