"""`kb calibrate`: fit the search weights and the answer threshold by k-fold cross-validation, and write them.

    kb calibrate FILE... [--issues FILE] [--folds N] [--output PATH]
    kb calibrate FILE... --issues FILE --issues-only [--output PATH]

With `--issues`, the confidence of whole issues (the GitHub bot's input) is fitted too, on the issues of FILE
(lines with `title` and `body`), folds by repository (`kb.issue_confidence`). With `--issues-only`, only that: the
question calibration in use is kept as it is, and the ranges of its signals are measured on FILE... (the questions it
was fitted on).

The fit is `kb.calibrate.calibrate`'s, with the judge when one is configured; this module checks the
labelled questions first, then prints the held-out figures side by side, the confidence's
reliability and its operating points.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from kb.errors import KBError
from kb.settings import Settings

if TYPE_CHECKING:
    from kb.evaluate import EvalQuery

__all__ = ["add_parser", "cmd_calibrate", "print_confidence"]


def _folds(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number of at least 2 (each question is held out once)")
    return int(text)


def add_parser(sub: Any) -> None:
    """Add `calibrate` to the `kb` command's subparsers."""
    p = sub.add_parser("calibrate", help="fit the search weights and answer threshold by k-fold cross-validation")
    p.add_argument("files", nargs="+", help="labelled JSONL query sets to fit on (never the one you report)")
    p.add_argument("--folds", type=_folds, default=5, help="cross-validation folds, at least 2 (default 5)")
    p.add_argument(
        "--issues",
        metavar="FILE",
        help="whole issues (lines with `title` and `body`) to fit the confidence of whole issues on, which a tracker's "
        "bot answers by",
    )
    p.add_argument(
        "--issues-only",
        action="store_true",
        help="fit only the whole issues' confidence: keep the question calibration in use (its signals' ranges "
        "measured on FILE...)",
    )
    p.add_argument(
        "--output",
        help="where to write the calibration (default: KB_DATA_DIR/calibration.json, which the search then loads "
        "unless KB_CALIBRATION names another)",
    )
    p.set_defaults(run=cmd_calibrate)


def cmd_calibrate(settings: Settings, args: argparse.Namespace) -> int:
    """Fit and cross-validate the weights; with a judge configured, with and without it, side by side."""
    from kb.calibrate import calibrate, write_calibration
    from kb.judge import open_judge
    from kb.knowledge import KnowledgeBase

    labelled = _labelled(args.files)
    queries = [q for _, q in labelled]
    if args.issues_only and not args.issues:
        raise KBError("--issues-only: name the whole issues to fit on with --issues FILE")
    issues = _labelled([args.issues]) if args.issues else []
    kb = KnowledgeBase.open(settings, refit=True)
    from kb.evaluate import check_expected

    check_expected(labelled + issues, kb.entries)
    output = Path(args.output) if args.output else settings.own_calibration
    if args.issues_only:
        return _issues_only(settings, kb, queries, [q for _, q in issues], args, output)
    judging = open_judge(settings)
    judge = judging.judge if judging is not None else None
    try:
        weights, report = calibrate(kb.searcher, queries, folds=args.folds, judge=judge, top=settings.rerank_top)
    finally:
        if judging is not None:
            judging.close()
    if issues:
        report["issues"] = _fit_issues(kb, [q for _, q in issues], weights, args)
    output.parent.mkdir(parents=True, exist_ok=True)
    write_calibration(weights, report, [Path(p).name for p in args.files], output)
    _print_figures(report, len(queries), args.folds, judged=judge is not None)
    print_confidence(report)
    if report.get("query_adapter"):
        fitted = report["query_adapter"]
        print(
            f"searched through the query adapter fitted {fitted['fitted_at']} on {fitted['questions']} questions, "
            "each fold's refitted without its questions"
        )
    written = {name: value for name, value in weights.to_dict().items() if name != "curve"}
    print(f"weights: {written} -> {output}")
    return 0


def _print_figures(report: dict[str, Any], count: int, folds: int, judged: bool) -> None:
    """The held-out figures by language, without and with the judge side by side, and what the judge did."""
    columns = [report["cross_validated"]] + ([report["judge"]["cross_validated"]] if judged else [])
    print(f"{count} questions, {folds}-fold cross-validation (held-out folds only):")
    cell = f"{'R@1':>8}{'R@3':>8}{'MRR@10':>8}{'abstained':>11}"
    if judged:
        print(f"{'':18}{'without the judge':^35}{'with the judge':^35}")
    print(f"{'':10}{'queries':>8}" + cell * len(columns))
    for name in [*columns[0]["by_lang"], "all"]:
        rows = [figures["overall"] if name == "all" else figures["by_lang"][name] for figures in columns]
        print(
            f"{name:10}{rows[0]['queries']:>8}"
            + "".join(
                f"{s['recall_at_1']:>8.3f}{s['recall_at_3']:>8.3f}{s['mrr_at_10']:>8.3f}{s['false_abstention']:>10.1%} "
                for s in rows
            )
        )
    outside = [f"{f['out_of_scope']['abstained']}/{f['out_of_scope']['queries']} abstained" for f in columns]
    if not judged:
        print(f"out of scope: {outside[0]}")
    else:
        print(f"{'out of scope':18}" + "".join(f"{o:^35}" for o in outside))
    if judged:
        j = report["judge"]
        print(
            f"judge {j['kind']} {j['model']}: read the first {j['top']} candidates; changed the held-out outcome of "
            f"{j['changed']} questions; skipped when the first stage leads by {j['skip_gap']:.3f} or more: "
            f"{j['skipped']} of {j['questions']} questions; failed on {j['failed']}"
        )


def _fit_issues(kb: Any, issues: list[EvalQuery], weights: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The whole issues' confidence fitted on `issues` under `weights`' ranking: its block of the calibration file."""
    from kb.calibrate import issue_block
    from kb.issue_confidence import fit_issue_confidence

    fitted, report = fit_issue_confidence(kb.searcher, issues, weights, folds=args.folds)
    block = issue_block(fitted, report, Path(args.issues).name)
    c = report["confidence"]
    print(
        f"whole issues: {report['issues']} ({report['covered']} covered, {report['repositories']} repositories), "
        f"{report['right_first']} right first; held out by repository: AUROC {c['auroc']}; signals "
        f"{', '.join(fitted.signals)}"
    )
    for point in block["operating_points"]:
        print(
            f"    {point['precision']:.2f} -> {point['threshold']:.4f}  "
            f"(held out: precision {point['held_out_precision']:.3f}, answers {point['coverage']:.1%})"
        )
    return block


def _issues_only(
    settings: Settings,
    kb: Any,
    queries: list[EvalQuery],
    issues: list[EvalQuery],
    args: argparse.Namespace,
    output: Path,
) -> int:
    """Keep the question calibration in use (with its signals' ranges, measured on `queries`); fit the whole issues'."""
    import json

    from kb.calibrate import question_ranges

    weights = question_ranges(kb.searcher, queries, kb.searcher.weights, folds=args.folds)
    data = json.loads(settings.calibration_path.read_text(encoding="utf-8"))
    data["weights"]["ranges"] = [list(r) for r in weights.ranges]
    data["issues"] = _fit_issues(kb, issues, weights, args)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"question calibration kept ({settings.calibration_path}), its signals' ranges {weights.ranges}; -> {output}")
    return 0


def print_confidence(report: dict[str, Any]) -> None:
    """The confidence's held-out figures (by question and by repository), its reliability and the operating points."""
    print("confidence that the first hit answers (held-out folds):")
    for name, part in (("by question", report), ("by repository", report["grouped"])):
        c = part["confidence"]
        print(
            f"  folds {name:14} {c['questions']} {c['of']}, {c['right_first']} right first: AUROC {c['auroc']}, "
            f"answered at precision 0.8: {c['coverage_at_0.8']:.1%}, at 0.9: {c['coverage_at_0.9']:.1%}, "
            f"calibration error {c['calibration_error']}"
        )
    print("  reliability (folds by repository): confidence bin, questions, mean confidence, share right")
    for row in report["grouped"]["confidence"]["reliability"]:
        if row["questions"]:
            print(f"    {row['bin']}  {row['questions']:>5}  {row['confidence']:.3f}  {row['right']:.3f}")
    print("  operating points (KB_ANSWER_PRECISION, KB_CHANNEL_PRECISION): precision -> threshold, held-out coverage")
    for point in report["operating_points"]:
        print(
            f"    {point['precision']:.2f} -> {point['threshold']:.4f}  "
            f"(held out: precision {point['held_out_precision']:.3f}, answers {point['coverage']:.1%})"
        )


def _labelled(files: Sequence[str]) -> list[tuple[str, EvalQuery]]:
    """Each question of `files` with its file, checked before anything loads: enough of them to fit
    (`kb.calibrate.check_questions`), or one line naming the files and what to add."""
    from kb.calibrate import check_questions
    from kb.errors import TooFewQuestions
    from kb.evaluate import load_queries

    labelled = [(path, q) for path in files for q in load_queries(Path(path))]
    try:
        check_questions([q for _, q in labelled])
    except TooFewQuestions as exc:
        raise KBError(f"{', '.join(files)}: {exc}") from None
    return labelled
