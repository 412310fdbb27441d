"""The bilingual glossary: Chinese and English words of the field that mean the same thing.

It bridges the two languages on both sides of search: the lexical side matches a query
word's equivalents, and the dense side embeds text "glossed" with the equivalents of its
terms, so an English question lands nearer a Chinese answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import model_validator

from .lexical import QueryTerms
from .text import GLOSSARY_PATH, has_cjk, normalize, tokenize
from .tomlfile import DataModel, load_toml

__all__ = ["Term", "Glossary", "GLOSSARY_PATH", "load_glossary"]

EXPANSION_WEIGHT = 0.6  # a translated word is weaker evidence than the word itself


@dataclass(frozen=True)
class Term:
    zh: tuple[str, ...]
    en: tuple[str, ...]

    @property
    def forms(self) -> tuple[str, ...]:
        return self.zh + self.en


def _words(value: list[str]) -> tuple[str, ...]:
    return tuple(normalize(w).strip() for w in value if w.strip())


class _TermTable(DataModel):
    """A `[[term]]` table: words in each language that mean the same thing."""

    zh: list[str]
    en: list[str]

    @model_validator(mode="after")
    def _both(self) -> "_TermTable":
        if not _words(self.zh) or not _words(self.en):
            raise ValueError("needs both zh and en words")
        return self


class _GlossaryFile(DataModel):
    term: list[_TermTable] = []


def _subphrases(phrase: str) -> list[str]:
    words = phrase.split()
    return [" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)]


@lru_cache(maxsize=8192)
def _alternative_tokens(form: str) -> tuple[str, ...]:
    """A Chinese term stands as one word (jieba knows the glossary's terms); English by its words."""
    if has_cjk(form) and " " not in form:
        return (form,)
    return tuple(tokenize(form))


@lru_cache(maxsize=8192)
def _form_tokens(form: str) -> tuple[str, ...]:
    """A glossary form's tokens (forms are few and met again and again: worked out once)."""
    return tuple(tokenize(form))


def _trie(forms: Iterable[str]) -> str:
    """One pattern matching any of `forms`, shaped as their trie: where one form is a prefix of another, the longer
    is tried first, so it matches what an alternation of the forms sorted longest first would."""
    root: dict[str, dict[str, Any]] = {}
    for form in forms:
        node = root
        for character in form:
            node = node.setdefault(character, {})
        node[""] = {}  # a form ends here
    return _branch(root)


def _branch(node: dict[str, dict[str, Any]]) -> str:
    following = [re.escape(c) + _branch(child) for c, child in sorted(node.items()) if c]
    if not following:
        return ""
    body = following[0] if len(following) == 1 else "(?:" + "|".join(following) + ")"
    return f"(?:{body})?" if "" in node else body


class Glossary:
    """The terms, with a matcher built once: Chinese forms by substring, English by one regex."""

    def __init__(self, terms: tuple[Term, ...]):
        self.terms = terms
        self._chinese: dict[str, list[int]] = {}
        english: dict[str, list[int]] = {}
        for number, term in enumerate(terms):
            for form in term.forms:
                (self._chinese if has_cjk(form) else english).setdefault(form, []).append(number)
        self._english = english
        # The forms as a trie, so each position tries one branch per character instead of every form in turn.
        self._english_re = re.compile(rf"(?<![a-z0-9_])(?:{_trie(english)})(?![a-z0-9_])") if english else None

    @classmethod
    def from_file(cls, path: Path) -> "Glossary":
        doc = load_toml(path, _GlossaryFile, "the glossary")
        return cls(tuple(Term(_words(t.zh), _words(t.en)) for t in doc.model.term))

    def _found(self, text: str) -> list[tuple[Term, list[str]]]:
        """Each term with a form in the text, and the forms present."""
        text = normalize(text)
        present: dict[int, list[str]] = {}
        for form, numbers in self._chinese.items() if has_cjk(text) else ():
            if form in text:
                for n in numbers:
                    present.setdefault(n, []).append(form)
        if self._english_re is not None:
            # Overlapping forms ("gpu memory", "memory"): try each match's words as well.
            for match in self._english_re.finditer(text):
                for form in _subphrases(match.group()):
                    for n in self._english.get(form, ()):
                        present.setdefault(n, []).append(form)
        return [(self.terms[n], list(dict.fromkeys(forms))) for n, forms in sorted(present.items())]

    def query_terms(self, query: str) -> QueryTerms:
        """The query's tokens, each a group with its glossary equivalents as weaker alternatives."""
        tokens = list(dict.fromkeys(tokenize(query)))
        extra: dict[str, dict[str, float]] = {t: {} for t in tokens}
        for term, present in self._found(query):
            alternatives = [t for f in term.forms if f not in present for t in _alternative_tokens(f)]
            for form in present:
                for token in _form_tokens(form):
                    if token in extra:
                        for alt in alternatives:
                            if alt != token:
                                extra[token].setdefault(alt, EXPANSION_WEIGHT)
        return QueryTerms(tuple(((t, 1.0),) + tuple(extra[t].items()) for t in tokens))

    def gloss(self, text: str) -> str:
        """The text followed by the other language's word for each glossary term in it."""
        added = []
        for term, present in self._found(text):
            if not any(f in present for f in term.en):
                added.append(term.en[0])
            if not any(f in present for f in term.zh):
                added.append(term.zh[0])
        return f"{text}\n({', '.join(dict.fromkeys(added))})" if added else text


@lru_cache(maxsize=4)
def load_glossary(path: Path = GLOSSARY_PATH) -> Glossary:
    if not path.exists():
        return Glossary(())
    return Glossary.from_file(path)
