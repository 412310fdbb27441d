"""The glossary's English matcher: a trie-shaped pattern that finds exactly what one alternation of every form,
longest first, found, on the shipped glossary and the project's sample texts (its time on hostile text is
tests/quality/test_hostile_patterns.py's and bench/bench_hostile_patterns.py's)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from kb.glossary import Glossary, Term, load_glossary
from kb.text import normalize

DATA = Path(__file__).resolve().parents[1] / "data"


def _alternation(forms: list[str]) -> re.Pattern[str]:
    """The matcher as it was: every form in one alternation, longest first (the reference the trie must equal)."""
    alternation = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    starts = "(?=[" + "".join(re.escape(c) for c in sorted({f[0] for f in forms if f})) + "])"
    return re.compile(rf"(?<![a-z0-9_]){starts}(?:{alternation})(?![a-z0-9_])")


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in pattern.finditer(text)]


def _sample_texts(forms: list[str]) -> list[str]:
    texts = [json.loads(line)["q"] for name in ("dev", "holdout", "real_test") for line in _lines(name)]
    texts += [p.read_text(encoding="utf-8") for p in sorted((DATA / "upstream").glob("*.md"))]
    texts += [" ".join(forms), "".join(forms), "-".join(forms), "_".join(forms), "\n".join(reversed(forms))]
    # Forms cut short, run on, and glued to word characters on either side.
    texts += [" ".join(f"{f[:-1]} {f}s x{f} {f}_ ({f}) {f}-x" for f in forms)]
    rng = random.Random(55)
    alphabet = sorted({c for f in forms for c in f} | {".", "(", "\n"})
    texts += ["".join(rng.choice(alphabet) for _ in range(2_000)) for _ in range(20)]
    texts += [" ".join(rng.choice(forms) + rng.choice(["", " ", "-", "_", "s", ".", " of "]) for _ in range(500))]
    return [normalize(t) for t in texts]


def _lines(name: str) -> list[str]:
    return (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()


def test_the_trie_finds_what_the_alternation_found_on_the_shipped_glossary_and_sample_texts() -> None:
    glossary = load_glossary()
    forms = list(glossary._english)
    assert glossary._english_re is not None and len(forms) > 500
    before = _alternation(forms)
    differ = {}
    for number, text in enumerate(_sample_texts(forms)):
        if _spans(before, text) != _spans(glossary._english_re, text):
            differ[number] = text[:80]
    assert differ == {}
    assert sum(len(_spans(glossary._english_re, t)) for t in _sample_texts(forms)) > 5_000


@pytest.mark.parametrize(
    "forms",
    [
        ["gpu memory", "gpu", "memory"],
        ["a", "ab", "abc", "abd", "b"],
        ["fine-tune", "fine-tuning", "fine"],
        ["x_y", "x"],
    ],
)
def test_nested_forms_match_longest_first_as_before(forms: list[str]) -> None:
    glossary = Glossary(tuple(Term(("词",), (f,)) for f in forms))
    assert glossary._english_re is not None
    for text in ["gpu memory", "gpu memoryx", "abc abd abx ab a", "fine-tuning fine-tuner fine", "x_y x_z x"]:
        assert _spans(glossary._english_re, text) == _spans(_alternation(forms), text)


def test_a_query_is_glossed_with_the_terms_of_the_longest_forms() -> None:
    glossary = Glossary((Term(("显存",), ("gpu memory",)), Term(("显卡",), ("gpu",))))
    assert glossary.gloss("out of gpu memory") == "out of gpu memory\n(显存, 显卡)"
    assert glossary.gloss("gpus") == "gpus"
