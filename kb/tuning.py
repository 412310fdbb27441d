"""Fitting a query adapter (`kb.adapter`) to what the knowledge base knows: what `kb tune` runs.

The examples, each a question the model embeds as a search does, and the entry that answers it:

- every entry's own question, in each language it has;
- the learned questions the index holds: the sources' alternates and not-covered questions,
  and the links maintainers made (a not-covered question is the "no entry" class);
- the labelled questions of any query files given (`kb eval`'s JSON Lines format).

A question that is in more than one of these counts once (by `question_key`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, replace
from datetime import datetime, timezone
from typing import Callable, Sequence

import numpy as np

from .adapter import Examples, FitSettings, QueryAdapter, fit_matrix
from .evaluate import EvalQuery, is_expected
from .learning.overlay import NOT_COVERED
from .search import Searcher, searched_text
from .text import question_key

__all__ = ["examples_of", "fit", "tune", "refit_without", "links_since", "learned_kinds", "OWN_KINDS"]

# The kinds of example the index itself holds; any other kind came from a query file.
OWN_KINDS = ("entry", "alternate", "not-covered", "link")

Progress = Callable[[int, int], None]


def examples_of(searcher: Searcher, files: Sequence[tuple[str, Sequence[EvalQuery]]] = ()) -> Examples:
    """What `searcher` knows, as examples: its entries' questions, its learned questions (links
    among them, if it was taught some), and the labelled questions of `files` ((name, queries))."""
    texts, entries, kinds, keys = [], [], [], []
    for entry in searcher.entries:
        for version in entry.versions():
            texts.append(searched_text(version.question) or version.question)
            entries.append(entry.id)
            kinds.append("entry")
            keys.append(question_key(version.question))
    for name, queries in files:
        for query in queries:
            answer = next((e.id for e in searcher.entries if is_expected(e, query.expect)), None)
            if query.answerable and answer is None:
                continue  # it names no entry of this index: nothing to learn
            texts.append(searcher.plan(query.q).embed_text)
            entries.append(answer or "")
            kinds.append(name)
            keys.append(question_key(query.q))
    vectors = searcher.embedder.embed_queries(texts) if texts else np.zeros((0, searcher.dense.dim), np.float32)
    made = Examples(vectors, tuple(entries), tuple(kinds), tuple(keys))
    learned = searcher.learned
    taught = Examples(
        learned.vectors,
        tuple("" if o == NOT_COVERED else searcher.entries[int(o)].id for o in learned.owners),
        tuple(_kind(q.origin, o == NOT_COVERED) for q, o in zip(learned.questions, learned.owners)),
        tuple(learned.keys),
    )
    return _once(taught + made)


def tune(
    searcher: Searcher,
    files: Sequence[tuple[str, Sequence[EvalQuery]]] = (),
    previous: QueryAdapter | None = None,
    progress: Progress | None = None,
) -> QueryAdapter:
    """An adapter fitted on what `searcher` knows now and the labelled questions of `files`.
    The questions of the files `previous` was fitted on are kept (a file given again replaces
    its questions): a refit learns from the links made since, and forgets no query set."""
    examples = examples_of(searcher, files)
    if previous is not None and previous.examples is not None:
        given = {name for name, _ in files}
        kept = previous.examples
        kept = kept.take(np.array([k not in OWN_KINDS and k not in given for k in kept.kinds], dtype=bool))
        examples = _once(examples + kept)
    return fit(searcher, examples, previous.settings if previous is not None else FitSettings(), progress)


def learned_kinds(searcher: Searcher) -> dict[str, int]:
    """How many learned questions of each kind `searcher` holds, as `kb ingest` counts them: a
    question learned twice (the alternate of two entries) twice. The adapter learns each once."""
    learned = searcher.learned
    return dict(Counter(_kind(q.origin, o == NOT_COVERED) for q, o in zip(learned.questions, learned.owners)))


def _kind(origin: str, not_covered: bool) -> str:
    if origin == "asked":
        return "link"
    return "not-covered" if not_covered else "alternate"


def _once(examples: Examples) -> Examples:
    """Each question once: the first of those that share a question key (and an entry's own questions always)."""
    seen: set[str] = set()
    keep = np.zeros(len(examples), dtype=bool)
    for i, (key, kind) in enumerate(zip(examples.keys, examples.kinds)):
        if kind == "entry" or key not in seen:
            keep[i] = True
            seen.add(key)
    return examples.take(keep)


def fit(
    searcher: Searcher,
    examples: Examples,
    settings: FitSettings = FitSettings(),
    progress: Progress | None = None,
) -> QueryAdapter:
    """An adapter for `searcher`'s model and entries, fitted on `examples`."""
    positions = {e.id: i for i, e in enumerate(searcher.entries)}
    vectors, labels = examples.labels(positions)
    passages = searcher.dense.vectors(np.arange(searcher.dense.size))
    matrix = fit_matrix(vectors, labels, passages, searcher.rows, settings, progress)
    counts = examples.counts()
    about = {
        "fitted_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "questions": int(len(labels)),
        "links": counts.get("link", 0),
        "kinds": counts,
        "entries": len(searcher.entries),
        "sources": sorted({e.source for e in searcher.entries}),
        "settings": asdict(settings),
    }
    return QueryAdapter(matrix, searcher.embedder.model, about, examples)


def refit_without(searcher: Searcher, adapter: QueryAdapter, keys: set[str]) -> QueryAdapter:
    """`adapter` fitted again, the same way, without the examples whose question key is in `keys`:
    for measuring questions it must not have seen (`kb calibrate`'s folds)."""
    examples = adapter.examples
    if examples is None:
        raise ValueError("this adapter keeps no examples to fit again")
    held = examples.without(keys)
    if len(held) == len(examples):
        return adapter
    refitted = fit(searcher.with_adapter(None), held, adapter.settings)
    return replace(refitted, about={**refitted.about, "fitted_at": adapter.about.get("fitted_at", "")})


def links_since(adapter: QueryAdapter | None, made_at: Sequence[float]) -> int:
    """How many of the links made at `made_at` (Unix seconds) came after `adapter` was fitted
    (all of them when there is no adapter)."""
    if adapter is None:
        return len(made_at)
    try:
        fitted = datetime.fromisoformat(str(adapter.about.get("fitted_at", ""))).timestamp()
    except ValueError:
        return len(made_at)
    return sum(1 for t in made_at if t > fitted)
