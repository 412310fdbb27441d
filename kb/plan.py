"""A planned search: the query checked, the text to embed for it and what it is (a question or a whole issue), the
half of a search before the model runs; and the query's words, the lexical half (`kb.search.Searcher`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .lexical import QueryTerms, Weighed
from .noise import strip_noise
from .stacktrace import reduce_trace
from .text import clean_query

__all__ = ["Plan", "Words", "Evidence", "READS", "searched_text"]

# What a search reads, each with a confidence fitted on its own kind of input: a question (an issue's title, a chat
# message, a pasted error) or a whole issue (its title and body, `kb.issue_question.question_of`).
READS = ("question", "issue")


@dataclass(frozen=True)
class Plan:
    """A checked query and the text to embed for it: the half of a search before the model runs."""

    query: str
    k: int
    tags: tuple[str, ...]
    source: str | None
    lang: str | None  # only entries in this language
    query_lang: str  # the language the query is written in
    text: str  # the query, a pasted stack trace reduced to what identifies it, tracker noise taken out
    embed_text: str  # what the model embeds: `text`, once (glossary equivalents are on the entry side)
    reads: str = "question"  # what it is, for the confidence (`READS`): a question, or a whole issue


@dataclass(frozen=True)
class Evidence:
    """What the words of a query say of some entries: which of its terms (`Weighed.terms`) each
    holds anywhere, and the share of the query each covers, anywhere and in its question."""

    ids: np.ndarray  # the entries
    holds: np.ndarray  # a row per entry, a column per term
    coverage: np.ndarray
    question: np.ndarray


@dataclass(frozen=True)
class Words:
    """A query's words and the entries that cover them best: the lexical half of a search."""

    terms: QueryTerms
    # Ids of the entries covering most of the query; None in a corpus scored whole, where every
    # allowed entry is a candidate anyway.
    top: np.ndarray | None
    weighed: Weighed | None = None  # the terms as the lexical index weighs them (worked out once a search)


def searched_text(query: str) -> str:
    """What a search matches and embeds of a question: a pasted stack trace down to what
    identifies it, an issue title without its tracker noise."""
    return reduce_trace(strip_noise(clean_query(query).strip()))
