"""The confidence's signals, each tried: held-out AUROC and coverage at precision 0.8 and 0.9 on folds
by question and on folds by repository (the tune sets), then on real_test with the model fitted on
all the tune sets; and the curve of the shipped calibration on every query set, drawn as an SVG.

    python bench/confidence.py               # the table, the filtered searches, the curve (docs/confidence-curve.svg)
    python bench/confidence.py --curve-only  # the curve of the shipped calibration alone

A signal is kept where it raises AUROC on the folds by repository (what a tracker the knowledge
base has never seen meets); real_test is only reported. Needs an index (`kb ingest`) in $KB_DATA_DIR.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kb import cross_validation, fitting, folds  # noqa: E402
from kb.confidence import OperatingCurve, summary  # noqa: E402
from kb.evaluate import DEPTH, evaluate, is_expected, load_queries  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.scoring import ANSWER_FEATURES, RANK_FEATURES, SIGNALS, Weights  # noqa: E402
from kb.settings import Settings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
TUNE = ("dev", "holdout", "real_tune")
SETS = ("dev", "holdout", "real_test")
CURVE = ROOT / "docs" / "confidence-curve.svg"


def test_questions(kb: KnowledgeBase) -> list[Any]:
    """real_test's questions with their evidence against every entry, searched as served."""
    s = kb.searcher
    ids = np.arange(len(s.entries))
    found = []
    for query in load_queries(DATA / "real_test.jsonl"):
        plan = s.plan(query.q, k=DEPTH)
        features = s.features(s.query_terms(plan), s.embedder.embed_query(plan.embed_text), ids)
        correct = np.array([is_expected(e, query.expect) for e in s.entries]) if query.answerable else ids < 0
        found.append(fitting.Labelled(query, features, correct, plan.query_lang == "zh", plan.text, plan.query_lang))
    return found


def figures(plain: list[Any], grouped: list[Any], test: list[Any], base: Weights) -> dict[str, Any]:
    by_question = cross_validation.cross_validate(plain, base, 5, RANK_FEATURES)["confidence"]
    by_repository = cross_validation.cross_validate(grouped, base, 5, RANK_FEATURES, folds.grouped_fold)["confidence"]
    w = fitting.fit(plain, base)
    right = fitting.right_first(test, w)
    confidence = w.answer_probability(fitting.answer_rows(test, w))
    return {"question": by_question, "repository": by_repository, "test": summary(confidence, right)}


def cells(f: dict[str, Any]) -> str:
    return f"{f['auroc']:.3f} | {f['coverage_at_0.8']:.1%} | {f['coverage_at_0.9']:.1%}"


def signal_table(kb: KnowledgeBase) -> None:
    tune = [q for name in TUNE for q in load_queries(DATA / f"{name}.jsonl")]
    plain = cross_validation.collect(kb.searcher, tune, 5)
    grouped = cross_validation.collect(kb.searcher, tune, 5, folds.grouped_fold)
    test = test_questions(kb)
    shipped = kb.searcher.weights

    def weights(signals: Sequence[str]) -> Weights:
        return replace(shipped, signals=tuple(signals), answer_coef=(0.0,) * len(signals), answer_bias=0.0)

    print("| signals | by question: AUROC, at 0.8, at 0.9 | by repository | real_test (reported only) |")
    print("|---|---|---|---|")

    def show(name: str, signals: Sequence[str]) -> float:
        f = figures(plain, grouped, test, weights(signals))
        print(f"| {name} | {cells(f['question'])} | {cells(f['repository'])} | {cells(f['test'])} |", flush=True)
        return float(f["repository"]["auroc"])

    kept = show(f"shipped: {', '.join(ANSWER_FEATURES)}", ANSWER_FEATURES)
    for name in ANSWER_FEATURES:
        show(f"without {name}", [s for s in ANSWER_FEATURES if s != name])
    for name in SIGNALS:
        if name not in ANSWER_FEATURES:
            show(f"with {name}", [*ANSWER_FEATURES, name])
    show("every signal", SIGNALS)
    print(f"\nshipped signals' AUROC on folds by repository: {kept:.3f}")


def curve(kb: KnowledgeBase) -> None:
    """The shipped calibration's precision against coverage on each query set, as an SVG."""
    lines = []
    for name in SETS:
        report = evaluate(kb.search_blocking, load_queries(DATA / f"{name}.jsonl"))
        confidence = [o.result.confidence for o in report.outcomes]
        right = [o.rank == 1 for o in report.outcomes]
        points = OperatingCurve.of(confidence, right).points
        lines.append((name, [(c, p) for _, p, c in points]))
        s = summary(confidence, right)
        print(f"{name}: {s}")
    held = kb.searcher.weights.curve
    lines.append(("tune sets, held out by repository", [(c, p) for _, p, c in held.points]))
    CURVE.write_text(svg(lines), encoding="utf-8")
    print(f"curve -> {CURVE.relative_to(ROOT)}")


def svg(lines: list[tuple[str, list[tuple[float, float]]]]) -> str:
    """Precision (y) against coverage (x), one polyline a query set, with a legend."""
    w, h, pad = 560, 360, 48
    colours = ("#1f77b4", "#ff7f0e", "#2ca02c", "#7f7f7f")

    def xy(coverage: float, precision: float) -> str:
        return f"{pad + coverage * (w - 2 * pad):.1f},{h - pad - precision * (h - 2 * pad):.1f}"

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>',
        f'<text x="{w / 2}" y="{h - 12}" text-anchor="middle">share of questions answered (coverage)</text>',
        f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">precision</text>',
    ]
    for tick in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        x, y = xy(tick, 0).split(",")[0], xy(0, tick).split(",")[1]
        parts.append(f'<text x="{x}" y="{h - pad + 16}" text-anchor="middle">{tick:.1f}</text>')
        parts.append(f'<text x="{pad - 6}" y="{float(y) + 4}" text-anchor="end">{tick:.1f}</text>')
        parts.append(f'<line x1="{pad}" y1="{y}" x2="{w - pad}" y2="{y}" stroke="#eee"/>')
    for precision in (0.8, 0.9):
        y = xy(0, precision).split(",")[1]
        parts.append(f'<line x1="{pad}" y1="{y}" x2="{w - pad}" y2="{y}" stroke="#bbb" stroke-dasharray="4 3"/>')
    for i, (name, points) in enumerate(lines):
        colour = colours[i % len(colours)]
        shown = [p for p in points if p[0] * 1 > 0]
        path = " ".join(xy(c, p) for c, p in shown)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>')
        top = h - pad - 8 - 16 * len(lines)  # the legend in the lower left, where no curve goes
        parts.append(f'<rect x="{pad + 12}" y="{top + 4 + 16 * i}" width="12" height="3" fill="{colour}"/>')
        parts.append(f'<text x="{pad + 30}" y="{top + 10 + 16 * i}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def filtered(kb: KnowledgeBase) -> None:
    """real_test's answerable questions searched within one source (as MCP's and the API's `source`
    filter does): their own entry's source, where an answer may be right, and each other source,
    where every answer is wrong. How many are answered at the default operating point."""
    sources = sorted({e.source for e in kb.entries})
    own = {"answered": 0, "right": 0, "questions": 0}
    other = {"answered": 0, "questions": 0}
    for query in load_queries(DATA / "real_test.jsonl"):
        if not query.answerable:
            continue
        homes = {e.source for e in kb.entries if is_expected(e, query.expect)}
        for source in sources:
            result = kb.search_blocking(query.q, DEPTH, source=source, precision=kb.settings.answer_precision)
            if source in homes:
                own["questions"] += 1
                own["answered"] += result.answered
                own["right"] += result.answered and is_expected(result.hits[0].entry, query.expect)
            else:
                other["questions"] += 1
                other["answered"] += result.answered
    print(
        f"within the right entry's source: {own['answered']} of {own['questions']} answered, {own['right']} right; "
        f"within another source (every answer wrong): {other['answered']} of {other['questions']} answered"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--curve-only", action="store_true", help="draw the shipped calibration's curve alone")
    args = parser.parse_args(argv)
    kb = KnowledgeBase.open(Settings.from_env())
    if not args.curve_only:
        signal_table(kb)
    filtered(kb)
    curve(kb)


if __name__ == "__main__":
    main()
