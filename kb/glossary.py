"""The bilingual glossary: Chinese and English words of the field that mean the same thing."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .errors import SourceError
from .lexical import QueryTerms
from .text import has_cjk, normalize, tokenize

__all__ = ["Glossary", "GLOSSARY_PATH", "load_glossary"]

GLOSSARY_PATH = Path(__file__).parent / "data" / "glossary.toml"
EXPANSION_WEIGHT = 0.6  # a translated word is weaker evidence than the word itself


@dataclass(frozen=True)
class Glossary:
    groups: tuple[tuple[str, ...], ...]  # each: equivalent surface forms, normalised

    @classmethod
    def from_file(cls, path: Path) -> "Glossary":
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SourceError(path, f"cannot read the glossary: {exc}") from None
        groups = []
        for number, term in enumerate(data.get("term", []), 1):
            forms = [normalize(w).strip() for w in term.get("zh", []) + term.get("en", [])]
            forms = [f for f in forms if f]
            if len(forms) < 2:
                raise SourceError(path, f"[[term]] number {number} needs at least two words")
            groups.append(tuple(forms))
        return cls(tuple(groups))

    def _occurs(self, form: str, text: str) -> bool:
        if has_cjk(form):
            return form in text
        return re.search(rf"(?<![a-z0-9_]){re.escape(form)}(?![a-z0-9_])", text) is not None

    def query_terms(self, query: str) -> QueryTerms:
        """The query's tokens, each a group with its glossary equivalents as weaker alternatives."""
        text = normalize(query)
        tokens = list(dict.fromkeys(tokenize(query)))
        extra: dict[str, dict[str, float]] = {t: {} for t in tokens}
        for forms in self.groups:
            present = [f for f in forms if self._occurs(f, text)]
            if not present:
                continue
            alternatives = [t for f in forms if f not in present for t in tokenize(f)]
            for form in present:
                for token in tokenize(form):
                    if token in extra:
                        for alt in alternatives:
                            if alt != token:
                                extra[token].setdefault(alt, EXPANSION_WEIGHT)
        groups = tuple(((t, 1.0),) + tuple(extra[t].items()) for t in tokens)
        return QueryTerms(groups)


@lru_cache(maxsize=4)
def load_glossary(path: Path = GLOSSARY_PATH) -> Glossary:
    if not path.exists():
        return Glossary(())
    return Glossary.from_file(path)
