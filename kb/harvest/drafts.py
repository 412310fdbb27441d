"""Draft FAQ entries from chosen threads: the question, the cleaned answer, its pull request named; grouped and checked.

Threads that ask the same thing (their questions' vectors within `SAME_QUESTION` cosine) become one draft,
the most recently closed thread's answer first and the others' questions its alternates; a draft whose
question the knowledge base already answers is offered as an alternate question for that entry (`entry_id`),
not as a new entry. Drafts are ranked by how many asked, then by how recently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..issue_question import question_of
from .clean import clean_answer, clean_question
from .rules import Choice
from .threads import Thread

if TYPE_CHECKING:
    from ..entries import Entry
    from ..knowledge import KnowledgeBase

__all__ = [
    "Draft",
    "ThreadQuestion",
    "draft_of",
    "group",
    "match_entries",
    "question_of_thread",
    "same_framework",
    "vectors_of",
    "SAME_QUESTION",
]

SAME_QUESTION = 0.93  # cosine of two threads' headlines taken to ask the same thing (the e5 model's scale)
MAX_QUESTION = 500  # characters of a draft's question (kb.written's limit)
_PREFIX = re.compile(
    r"^\s*(?:\[[^\]\n]{1,40}\]\s*[:：]?\s*|【[^】\n]{1,40}】\s*[:：]?\s*|(?:question|bug|help|feature|q)\s*[:：]\s*)+",
    re.I,
)
_REPO = re.compile(r"https://github\.com/([\w.-]{1,100}/[\w.-]{1,100})")
_PR = re.compile(r"https://github\.com/[\w.-]{1,100}/[\w.-]{1,100}/pull/\d{1,9}")


@dataclass(frozen=True)
class ThreadQuestion:
    """A thread a draft answers: its question and where it was asked."""

    question: str
    url: str
    number: int
    closed_at: float | None = None


@dataclass(frozen=True)
class Draft:
    """A question and its maintainer's answer, harvested from the tracker, waiting for a maintainer."""

    repo: str
    number: int
    url: str
    kind: str  # issue or discussion
    question: str
    answer: str
    signals: dict[str, Any]
    closed_at: float | None = None
    alternates: tuple[ThreadQuestion, ...] = ()  # the other threads asking the same
    entry_id: str = ""  # an entry that already answers it: offered as an alternate question for it
    answer_author: str = ""
    answer_url: str = ""

    @property
    def headline(self) -> str:
        """The question's first paragraph (the issue's title): what drafts are grouped and checked by."""
        return self.question.split("\n\n", 1)[0]

    @property
    def asked(self) -> int:
        """How many threads asked it."""
        return 1 + len(self.alternates)

    def to_json(self) -> dict[str, Any]:
        """The draft as `kb harvest --dry-run --json` prints it."""
        return {
            "number": self.number,
            "url": self.url,
            "repo": self.repo,
            "kind": self.kind,
            "question": self.question,
            "answer": self.answer,
            "signals": self.signals,
            "asked": self.asked,
            "alternates": [{"question": a.question, "url": a.url, "number": a.number} for a in self.alternates],
            "entry_id": self.entry_id or None,
            "answer_by": self.answer_author,
        }


def question_of_thread(thread: Thread) -> str:
    """The question a thread asks: its title and the body's question (`kb.issue_question`: template, environment
    lists and trace noise dropped), without a leading tag such as `[Question]`; at most `MAX_QUESTION` characters."""
    title = _PREFIX.sub("", thread.title[:1000]) or thread.title
    question = clean_question(question_of(title, thread.body)) or clean_question(title)
    if len(question) > MAX_QUESTION:
        question = question[: MAX_QUESTION - 1].rsplit(" ", 1)[0].rstrip() + "…"
    return question


def _named_prs(choice: Choice) -> list[str]:
    found = list(choice.thread.linked_prs) + _PR.findall(choice.answer.body[:20_000])
    return list(dict.fromkeys(found))[:3]


def draft_of(choice: Choice) -> Draft | None:
    """The draft of a chosen thread; None when nothing is left of its answer once cleaned."""
    thread = choice.thread
    answer = clean_answer(choice.answer.body)
    question = question_of_thread(thread)
    if not answer or not question:
        return None
    prs = _named_prs(choice)
    unnamed = [pr for pr in prs if pr not in answer]
    if unnamed:
        answer += "\n\n" + ("Fixed by " if thread.linked_prs else "See ") + ", ".join(unnamed) + "."
    signals = dict(choice.signals) | ({"linked_prs": prs} if prs else {})
    return Draft(
        repo=thread.repo,
        number=thread.number,
        url=thread.url,
        kind=thread.kind,
        question=question,
        answer=answer,
        signals=signals,
        closed_at=thread.closed_at,
        answer_author=choice.answer.author,
        answer_url=choice.answer.url,
    )


def _rank(drafts: Iterable[Draft]) -> list[Draft]:
    return sorted(drafts, key=lambda d: (-d.asked, -(d.closed_at or 0), d.repo, d.number))


def group(drafts: Sequence[Draft], vectors: Any = None, same: float = SAME_QUESTION) -> list[Draft]:
    """Drafts asking the same thing made one (the most recently closed first, the others its alternates),
    ranked by how many asked and how recently. `vectors`: the questions' unit vectors, in order (None:
    the same question, case and spacing aside, is the only match)."""
    order = sorted(range(len(drafts)), key=lambda i: -(drafts[i].closed_at or 0))
    leaders: list[int] = []
    members: dict[int, list[int]] = {}
    keys: dict[str, int] = {}
    for i in order:
        key = " ".join(drafts[i].headline.lower().split())
        lead = keys.get(key)
        if lead is None and vectors is not None and leaders:
            scores = vectors[leaders] @ vectors[i]
            best = int(scores.argmax())
            lead = leaders[best] if float(scores[best]) >= same else None
        if lead is None:
            leaders.append(i)
            members[i] = []
            keys[key] = i
        else:
            members[lead].append(i)
    grouped = []
    for lead in leaders:
        asked = tuple(
            ThreadQuestion(drafts[j].question, drafts[j].url, drafts[j].number, drafts[j].closed_at)
            for j in members[lead]
        )
        grouped.append(replace(drafts[lead], alternates=asked))
    return _rank(grouped)


def same_framework(entry: Entry, repo: str) -> bool:
    """Whether a thread of `repo` (owner/name) may be an alternate question of `entry`: the entry names no framework
    (a team's own FAQ), or its framework is the repository's (its name, "ROLL" for alibaba/ROLL, or the repository
    its source's page is in)."""
    if not entry.framework:
        return True
    name = repo.rsplit("/", 1)[-1].lower()
    pages = {m.group(1).lower() for m in (_REPO.match(entry.source_url[:300]), _REPO.match(entry.url[:300])) if m}
    return entry.framework.lower() == name or repo.lower() in pages


def match_entries(drafts: Sequence[Draft], kb: KnowledgeBase) -> list[Draft]:
    """Each draft whose question the knowledge base answers (as a search would, at its operating point) with an
    entry of the thread's framework (`same_framework`) given that entry's id: it is offered as an alternate question
    for it. An answer from another framework's FAQ leaves the draft a new entry."""
    matched = []
    for draft in drafts:
        result = kb.search_blocking(draft.headline, k=1)
        hit = result.hits[0].entry if result.answered and result.hits else None
        matched.append(replace(draft, entry_id=hit.id) if hit and same_framework(hit, draft.repo) else draft)
    return matched


def vectors_of(drafts: Sequence[Draft], kb: KnowledgeBase) -> Any:
    """The drafts' headlines embedded as the search embeds a question (unit vectors); each distinct text once."""
    texts = list(dict.fromkeys(d.headline for d in drafts))
    embedder = kb.searcher.embedder
    embedded = embedder.embed_queries(texts, batch_size=64)  # no search waits its turn in a harvest
    for text, vector in zip(texts, embedded):  # so the check against the entries (a search each) embeds none again
        embedder.cache.put(text, vector.copy())
    row = {text: i for i, text in enumerate(texts)}
    return embedded[[row[d.headline] for d in drafts]]
