"""Signals of the question's kind, tried beside the confidence's own: held-out figures per population.

    python bench/kind_signals.py

Two signals computed from the question's text alone (no word lists), each tried with the shipped
signals (`gap`, `nearest_alternate`, `words`):

- identifiers: how many of the question's tokens are identifiers (a flag, a dotted or
  snake_case name, an error class, a number, a path): log(1 + count). A short plain question
  has none; a tracker title or an error report has several.
- unmatched: the share of those identifiers that the best entry's text (question and answer,
  every language) does not contain; 0 when the question has none. A question whose specifics
  the entry does not mention is about its topic rather than answered by it.

The confidence (a logistic model, `kb.calibrate`) is fitted on real_tune and the written dev set
together, by folds by repository (a written question is its own repository); the threshold of
precision 0.8 is read, as every operating point is, on the held-out curve of the real questions.
The ranking is the shipped one throughout (fitted on dev, holdout and real_tune). Reported: the
held-out folds per population, then the model fitted on all of real_tune + dev, on holdout and
real_test (never fitted on). Needs an index (`kb ingest`) in $KB_DATA_DIR.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kb import cross_validation, fitting, folds  # noqa: E402
from kb.confidence import OperatingCurve, auroc, coverage_at  # noqa: E402
from kb.evaluate import DEPTH, is_expected, load_queries  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.scoring import ANSWER_FEATURES  # noqa: E402
from kb.settings import Settings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
FOLDS = 5
# A token that is an identifier by its shape: inner punctuation (flag, dotted or snake_case
# name, path, key=value), a digit, or a capital after a lower-case letter (CamelCase).
TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/:=]*[A-Za-z0-9_]|-{1,2}[A-Za-z][A-Za-z0-9_\-]*")
SHAPED = re.compile(r"[_./:=]|\d|[a-z][A-Z]|^-")


def identifiers(text: str) -> list[str]:
    return [t.lower().lstrip("-") for t in TOKEN.findall(text[:2000]) if SHAPED.search(t)]


def row(q: Any, s: Any) -> dict[str, Any]:
    w = s.weights
    score = q.features.score(w)
    order = np.argsort(-score, kind="stable")
    signals = q.features.signals(score, order, q.zh, w)
    entry = s.entries[order[0]]
    text = " ".join([v.question + " " + v.answer for v in entry.versions()]).lower()
    found = identifiers(q.query.q)
    signals["identifiers"] = float(np.log1p(len(found)))
    signals["unmatched"] = sum(t not in text for t in found) / len(found) if found else 0.0
    return {
        "x": signals,
        "right": bool(q.correct[order[0]]),
        "written": not q.query.url,
        "answerable": q.query.answerable,
        "fold": folds.grouped_fold(q.query, FOLDS),
    }


def served(s: Any, name: str) -> list[Any]:
    ids = np.arange(len(s.entries))
    found = []
    for query in load_queries(DATA / f"{name}.jsonl"):
        plan = s.plan(query.q, k=DEPTH)
        features = s.features(s.query_terms(plan), s.embedder.embed_query(plan.embed_text), ids)
        correct = np.array([is_expected(e, query.expect) for e in s.entries]) if query.answerable else ids < 0
        found.append(fitting.Labelled(query, features, correct, plan.query_lang == "zh", plan.text, plan.query_lang))
    return found


def matrix(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> np.ndarray:
    return np.array([[r["x"][n] for n in names] for r in rows], dtype=np.float64).reshape(len(rows), len(names))


def fit(rows: Sequence[dict[str, Any]], names: Sequence[str], real_only: bool) -> tuple[np.ndarray, float]:
    chosen = [r for r in rows if not real_only or not r["written"]]
    y = np.array([r["right"] for r in chosen], dtype=float)
    return fitting.signed_logistic(matrix(chosen, names), y, names)


def predict(rows: Sequence[dict[str, Any]], names: Sequence[str], model: tuple[np.ndarray, float]) -> np.ndarray:
    coef, bias = model
    return 0.5 * (1 + np.tanh(0.5 * (matrix(rows, names) @ coef + bias)))


def figures(rows: Sequence[dict[str, Any]], c: np.ndarray, threshold: float) -> str:
    real = np.array([not r["written"] for r in rows])
    y = np.array([r["right"] for r in rows])
    answerable_written = np.array([r["written"] and r["answerable"] for r in rows])
    declined = (c[answerable_written] < threshold).mean() if answerable_written.any() else float("nan")
    answered = real & (c >= threshold)
    precision = y[answered].mean() if answered.any() else float("nan")
    return (
        f"{declined:.1%} | {auroc(c[real], y[real]):.3f} | {precision:.1%} ({int(answered.sum())}) "
        f"| {coverage_at(c[real], y[real], 0.9):.1%}"
    )


def main() -> None:
    kb = KnowledgeBase.open(Settings.from_env())
    kb.warm()
    s = kb.searcher
    tune_queries = [q for name in ("dev", "real_tune") for q in load_queries(DATA / f"{name}.jsonl")]
    tune = [row(q, s) for q in cross_validation.collect(s, tune_queries, FOLDS, folds.grouped_fold)]
    holdout = [row(q, s) for q in served(s, "holdout")]
    test = [row(q, s) for q in served(s, "real_test")]
    arms: list[tuple[str, Sequence[str], bool]] = [
        ("shipped signals, fitted on real questions (as shipped)", ANSWER_FEATURES, True),
        ("shipped signals, fitted on real + written", ANSWER_FEATURES, False),
        ("+ identifiers, real + written", (*ANSWER_FEATURES, "identifiers"), False),
        ("+ unmatched, real + written", (*ANSWER_FEATURES, "unmatched"), False),
        ("+ identifiers + unmatched, real + written", (*ANSWER_FEATURES, "identifiers", "unmatched"), False),
        ("+ identifiers + unmatched, real only", (*ANSWER_FEATURES, "identifiers", "unmatched"), True),
    ]
    print(
        "| signals, fitted on | held-out folds (real_tune + dev): written declined | real AUROC | real precision "
        "(answered) | real coverage at 0.9 | holdout declined | real_test AUROC | real_test precision (answered) "
        "| real_test coverage at 0.9 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, names, real_only in arms:
        held = np.zeros(len(tune))
        for fold in range(FOLDS):
            train = [r for r in tune if r["fold"] != fold]
            members = [i for i, r in enumerate(tune) if r["fold"] == fold]
            held[members] = predict([tune[i] for i in members], names, fit(train, names, real_only))
        real = np.array([not r["written"] for r in tune])
        curve = OperatingCurve.of(held[real], np.array([r["right"] for r in tune])[real])
        threshold = min(curve.threshold(0.8), 1.0)
        model = fit(tune, names, real_only)
        # The shipped threshold's way: the held-out curve of the real questions at precision 0.8.
        out = figures(tune, held, threshold)
        hold = figures(holdout, predict(holdout, names, model), threshold).split(" | ")[0]
        rt = figures(test, predict(test, names, model), threshold).split(" | ", 1)[1]
        print(f"| {name} | {out} | {hold} | {rt} |", flush=True)
        coef, bias = model
        print(f"<!-- threshold {threshold:.3f}; weights {dict(zip(names, np.round(coef, 3)))} bias {bias:.3f} -->")


if __name__ == "__main__":
    main()
