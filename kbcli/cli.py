"""The `kb` command: ingest the FAQs, translate them, search them, evaluate retrieval, serve the web app and MCP."""

from __future__ import annotations

import argparse
import copy
import json
import os
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from kb.answer import elsewhere_note
from kb.errors import IndexUnreadable, KBError, QueryError
from kb.hits import SearchResult, hit_fields
from kb.settings import SHIPPED_SOURCES, Settings
from server import admin_token
from server.settings import ServerSettings

from .arenas import fewer_arenas
from .export import add_parser as add_export_parser
from .github import add_parser as add_github_parser
from .harvest import add_parser as add_harvest_parser
from .insights import add_parser as add_insights_parser
from .learning import add_parser as add_learning_parser
from .mcp_config import FORMS as MCP_CONFIG_FORMS
from .package import refuse_package
from .sync import add_parser as add_sync_parser
from .terminal import counted, print_result, progress_bar
from .tuning import add_parser as add_tuning_parser

if TYPE_CHECKING:
    from ingest.pipeline import BuildReport
    from kb.entries import Entry
    from kb.evaluate import EvalQuery, EvalReport
    from kb.knowledge import KnowledgeBase

__all__ = ["main"]


def cmd_ingest(settings: Settings, args: argparse.Namespace) -> int:
    from ingest.pipeline import build_index

    dirs = [Path(d) for d in args.sources] if args.sources else [settings.sources_dir]
    shipped = SHIPPED_SOURCES.resolve() in {d.resolve() for d in dirs}
    if args.with_shipped and not shipped:
        dirs.insert(0, SHIPPED_SOURCES)
    with progress_bar(lines="kb ingest") as progress:
        report = build_index(settings, dirs, progress=progress)
    print(
        f"indexed {counted(report.entries, 'entry', 'entries')} in {counted(report.passages, 'passage')} "
        f"({report.embedded} embedded, "
        f"{report.passages - report.embedded} from cache) in {report.seconds:.1f} s -> {settings.index_dir}"
    )
    count = counted(len(report.sources), "source")
    print(f"the index holds {count}, from {', '.join(str(d) for d in dirs)}:")
    names = max(len(s.name) for s in report.sources)
    for s in report.sources:
        noun = "entry  " if s.entries == 1 else "entries"
        print(f"  {s.name:<{names}}  {s.entries:>4} {noun}  {'+'.join(s.languages):<5}  {s.title}")
    if report.replaced is not None:
        print("it replaces an index of " + ", ".join(f"{s.name} ({s.entries})" for s in report.replaced))
        dropped = [s.name for s in report.replaced if s.name not in {n.name for n in report.sources}]
        if dropped:
            print(f"no longer in the index: {', '.join(dropped)}")
            if not (shipped or args.with_shipped):
                print("(to keep the shipped FAQs beside yours: kb ingest --with-shipped --sources DIR)")
    if report.alternates or report.not_covered:
        print(
            f"learned: {report.alternates} alternate questions, {report.not_covered} questions the FAQ does not cover"
        )
    if report.adapter:
        print(f"query adapter: {report.adapter}")
    _print_duplicates(report)
    for warning in report.warnings:
        print(f"warning: {warning}")
    for line in _unreviewed(dirs):
        print(line)
    return 0


def _print_duplicates(report: BuildReport) -> None:
    """The near-duplicate entries the build found: each pair not marked intended with both
    entries' places, then how many are marked."""
    found = [d for d in report.duplicates if not d.intended]
    if found:
        print(
            f"near-duplicate entries: {len(found)} pair{'s' if len(found) != 1 else ''} so alike that a question "
            "for one may get the other (merge them, or mark a pair in sources.toml as [[intended_duplicates]]):"
        )
    for d in found:
        print(f"  {d.score:.2f}  " + "\n        ".join(_entry_line(report.paired[i]) for i in (d.first, d.second)))
    marked = len(report.duplicates) - len(found)
    if marked:
        print(f"{marked} near-duplicate pair{'s' if marked != 1 else ''} marked as intended in sources.toml")


def _entry_line(entry: Entry) -> str:
    place = entry.file_place
    link = f"  {entry.url}" if entry.url else ""
    return f"{entry.id}  {place}  {entry.question}{link}"


def _unreviewed(dirs: Sequence[Path]) -> list[str]:
    """A line for each machine translation in the manifests of `dirs` that no one has reviewed yet."""
    from ingest.manifest import load_manifest

    lines = []
    for directory in dirs:
        for source in load_manifest(directory, errors=[]):
            version = source.translation
            if version is not None and version.translated_by == "machine" and not version.reviewed:
                lines.append(
                    f"{source.name}  {version.file}  machine translation, not reviewed: "
                    "set reviewed = true in sources.toml once checked"
                )
    return lines


def cmd_translate(settings: Settings, args: argparse.Namespace) -> int:
    """Draft the other language's version of a source with the LLM; entries that fail a check are left out."""
    from ingest.translate import translate

    folder = Path(args.sources) if args.sources else None
    named = Path(args.source)
    refuse_package(
        named.parent if named.is_file() else folder or settings.sources_dir,
        "kb translate writes the draft and sources.toml into",
        "copy the folder and give --sources DIR (or KB_SOURCES_DIR)",
    )
    with progress_bar() as progress:
        report = translate(settings, args.source, args.to, folder, force=args.force, progress=progress)
    if report.frame.startswith("kept"):
        print(f"{report.draft.name}: the title and headings before the first question were {report.frame}")
    for failure in report.failures:
        print(failure)
    left_out = f"; {len(report.failures)} left out, listed in skipped" if report.failures else ""
    of = counted(report.entries, "entry", "entries")
    print(f"wrote {report.draft}: {report.translated} of {of} translated{left_out}")
    described = "written, describing every source of the folder" if report.new_manifest else "updated"
    print(
        f'{report.manifest} {described}: [source.translation] of {report.source} says translated_by = "machine", '
        "reviewed = false (set reviewed = true once a maintainer has checked the draft)"
    )
    return 0


def _open(settings: Settings):
    """The knowledge base as the server serves it: the index, and the links taught with `kb link`."""
    from kb.insights.book import with_links
    from kb.knowledge import KnowledgeBase

    return with_links(KnowledgeBase.open(settings), settings)


def cmd_search(settings: Settings, args: argparse.Namespace) -> int:
    """The best answer rendered for the terminal, then the other entries worth showing;
    `--brief`: their titles and links alone; `-`: the question is read from standard input."""
    query = sys.stdin.read() if args.query == "-" else args.query
    kb = _open(settings)
    kb.warm()  # the model's weights and the word lists load now, so the time printed is the search's own
    started = time.perf_counter()
    try:
        result = kb.search_blocking(query, k=args.k, tags=args.tag or (), source=args.source)
    except QueryError as exc:
        raise in_own_words(exc, SEARCH_OPTIONS) from None
    elapsed = time.perf_counter() - started
    hl = args.hl or result.lang
    shown = result.in_language(hl)
    if args.json:
        body = {
            **_result_json(shown, hl),
            "shown": len(shown.worth_showing()),
            "note": elsewhere_note(result, hl) or None,
        }
        print(json.dumps(body, ensure_ascii=False, indent=2))
        return 0
    print_result(result, hl, brief=args.brief)
    sys.stdout.flush()  # the answer first: under `2>&1` the time is a line of its own after it
    print(f"({elapsed * 1000:.0f} ms)", file=sys.stderr)
    return 0


# The search's fields as `kb search` names them; the question itself is its argument, unnamed.
SEARCH_OPTIONS = {"tag": "--tag", "source": "--source"}


def in_own_words(exc: QueryError, options: dict[str, str]) -> KBError:
    """A query error as the command words it: the option at fault by its flag (`--tag`), an
    error in the question with no field name (the API's `q` means nothing on a command line)."""
    if exc.field in options:
        return KBError(f"{options[exc.field]}: {exc.message}")
    return KBError(exc.message)


def _result_json(result: SearchResult, hl: str) -> dict:
    """The search as `/api/search` gives it, without what only a server has (the rendered
    answer, the entries' pages)."""
    return {
        "query": result.query,
        "answered": result.answered,
        "confidence": result.confidence,
        "state": result.state,
        "hl": hl,
        "hits": [hit_fields(h, hl) for h in result.hits],
    }


def cmd_calibrate(settings: Settings, args: argparse.Namespace) -> int:
    """Fit and cross-validate the weights; with a judge configured, with and without it, side by side."""
    from kb.calibrate import calibrate, write_calibration
    from kb.judge import open_judge
    from kb.knowledge import KnowledgeBase

    labelled = _labelled(args.files)
    queries = [q for _, q in labelled]
    kb = KnowledgeBase.open(settings, refit=True)
    from kb.evaluate import check_expected

    check_expected(labelled, kb.entries)
    output = Path(args.output) if args.output else settings.own_calibration
    judging = open_judge(settings)
    judge = judging.judge if judging is not None else None
    try:
        weights, report = calibrate(kb.searcher, queries, folds=args.folds, judge=judge, top=settings.rerank_top)
    finally:
        if judging is not None:
            judging.close()
    output.parent.mkdir(parents=True, exist_ok=True)
    write_calibration(weights, report, [Path(p).name for p in args.files], output)
    columns = [report["cross_validated"]] + ([report["judge"]["cross_validated"]] if judge is not None else [])
    print(f"{len(queries)} questions, {args.folds}-fold cross-validation (held-out folds only):")
    cell = f"{'R@1':>8}{'R@3':>8}{'MRR@10':>8}{'abstained':>11}"
    if judge is not None:
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
    if judge is None:
        print(f"out of scope: {outside[0]}")
    else:
        print(f"{'out of scope':18}" + "".join(f"{o:^35}" for o in outside))
    if judging is not None:
        j = report["judge"]
        print(
            f"judge {j['kind']} {j['model']}: read the first {j['top']} candidates; changed the held-out outcome of "
            f"{j['changed']} questions; skipped when the first stage leads by {j['skip_gap']:.3f} or more: "
            f"{j['skipped']} of {j['questions']} questions; failed on {j['failed']}"
        )
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


def cmd_eval(settings: Settings, args: argparse.Namespace) -> int:
    from kb.evaluate import evaluate, load_queries, unmatched
    from kb.knowledge import KnowledgeBase

    queries = load_queries(Path(args.file))
    kb = KnowledgeBase.open(settings)  # the index and calibration alone: no links of this machine's database
    for query in unmatched(queries, kb.entries):
        print(
            f"kb: warning: {args.file}:{query.line}: 'expect' {list(query.expect)!r} names no entry of the index; "
            "counted as a miss",
            file=sys.stderr,
        )
    with progress_bar() as progress:
        done = 0

        def search(query: str, k: int):
            nonlocal done
            result = kb.search_blocking(query, k)
            done += 1
            progress("eval", done, len(queries))
            return result

        report = evaluate(search, queries)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return 0
    print(f"{'':10}{'queries':>8}{'R@1':>8}{'R@3':>8}{'MRR@10':>8}{'abstained':>11}")
    rows = [(lang, s) for lang, s in report.by_lang.items()] + [("all", report.overall)]
    for name, s in rows:
        print(
            f"{name:10}{s.queries:>8}{s.recall_at_1:>8.3f}{s.recall_at_3:>8.3f}"
            f"{s.mrr_at_10:>8.3f}{s.false_abstention:>10.1%}"
        )
    print(f"out of scope: {report.abstained}/{report.out_of_scope} abstained")
    print_operating(report, kb, settings)
    if args.explain:
        _explain(report)
    return 0


def operating_points(settings: Settings) -> dict[str, float]:
    """The point of each channel that declares one or is given one in KB_CHANNEL_PRECISION (GitHub's suggest
    mode, which drafts from a lower one, apart)."""
    from server.channels import registry
    from server.channels.github.bot import SUGGEST_PRECISION
    from server.settings import ServerSettings

    server = ServerSettings.of(settings)
    named = [c.name for c in registry.CHANNELS if c.precision is not None or c.name in settings.channel_precisions]
    points = {name: server.precision_for(name) for name in named}
    if "github" in points:
        points["github suggest mode"] = min(points["github"], SUGGEST_PRECISION)
    return points


def print_operating(report: EvalReport, kb: KnowledgeBase, settings: Settings) -> None:
    """The confidence's figures on a query set, and what each channel's operating point answers there."""
    c = report.confidence()
    print(
        f"confidence: AUROC {c['auroc']}, answered at precision 0.8: {c['coverage_at_0.8']:.1%}, "
        f"at 0.9: {c['coverage_at_0.9']:.1%} of {c['questions']} ({c['right_first']} right first); "
        f"calibration error {c['calibration_error']}"
    )
    points = {"default (KB_ANSWER_PRECISION)": settings.answer_precision} | operating_points(settings)
    for name, precision in points.items():
        a = report.answering(kb.searcher.weights.threshold(precision))
        got = "-" if a["precision"] is None else f"{a['precision']:.3f}"
        print(
            f"  {name} at precision {precision}: answers {a['answered']} ({a['coverage']:.1%}), "
            f"{a['right']} right first (precision {got})"
        )


def _explain(report) -> None:
    for o in report.outcomes:
        wrong = (o.query.answerable and (o.rank != 1 or not o.answered)) or (not o.query.answerable and o.answered)
        if not wrong:
            continue
        print(f"\n{o.query.id} [{o.query.lang}] {o.query.q}")
        print(f"  expected rank: {o.rank or '-'}; answered: {o.answered}")
        for hit in o.result.hits[:3]:
            s = hit.signals
            detail = (
                f"cos {s.cosine:.3f} bg {s.background:.3f} cov {s.coverage:.2f} question {s.question:.2f}" if s else ""
            )
            print(f"  {hit.rank}. {hit.score:+.3f} {detail}  {hit.entry.question[:60]}")


def cmd_serve(settings: ServerSettings, args: argparse.Namespace) -> int:
    """Check the index, then run the web app; a missing or broken index stops here with one line, exit 2.

    The index is not built here: `kb ingest` does that. An index built from sources that
    have changed since is served, with a warning.
    """
    import uvicorn

    from kb.staleness import index_is_stale

    _check_index(settings)
    from kb.scoring import Calibration

    Calibration.load(settings.calibration_path).check(settings.judge, settings.rerank_model or settings.llm_model)
    try:
        stale = index_is_stale(settings)
    except OSError as exc:  # the sources are gone or unreadable: the index is all there is
        print(f"kb: warning: cannot compare the index with the sources ({exc}); serving it", file=sys.stderr)
        stale = False
    if stale:
        print(
            f"kb: warning: {settings.index_dir} was built from other sources than {settings.sources_dir}; "
            "serving it anyway; run `kb ingest` to rebuild it",
            file=sys.stderr,
        )
    # The app reads its settings from the environment, so workers started by uvicorn agree.
    os.environ["KB_DATA_DIR"] = str(settings.data_dir)
    os.environ["KB_SOURCES_DIR"] = str(settings.sources_dir)
    # Without KB_ADMIN_TOKEN, the token kept in the data directory (made now the first time): /insights can be
    # signed in to, and the start-up log says where the token is. One that cannot be kept turns /insights off,
    # not the search: a read-only data directory is served as before.
    try:
        os.environ[admin_token.ENV] = admin_token.serving_token(settings.data_dir, os.environ)
    except KBError as exc:
        print(f"kb: warning: {exc}; serving with /insights off", file=sys.stderr)
        os.environ[admin_token.ENV] = ""
    fewer_arenas()  # before the request threads start; the workers inherit the setting
    if args.workers > 1:
        # Each worker's model would start one OpenMP thread per core, and N sets of them
        # spinning on the same cores slow every worker down: share the cores out instead.
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // args.workers)))
    with stopped_by_signal():
        uvicorn.run(
            "server.app:create_app",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            log_config=log_config(),
            **uvicorn_options(settings),
        )
    return 0


@contextmanager
def stopped_by_signal() -> Iterator[None]:
    """Ctrl-C or SIGTERM while the block runs is a clean stop, exit status 0.

    uvicorn shuts down gracefully on either, then raises the signal again for the handler
    that was there before; left at Python's defaults, that made `kb serve` die of SIGTERM
    or exit 130, and `make serve` end with `make: *** [serve] Terminated`.
    """
    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda sig, frame: None) for sig in handled}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def cmd_admin_token(settings: ServerSettings, args: argparse.Namespace) -> int:
    """Print the admin token `kb serve` signs /insights in with: KB_ADMIN_TOKEN, else the one kept in the data
    directory (made now when there is none, as `kb serve` would)."""
    token = admin_token.serving_token(settings.data_dir, os.environ)
    if not token:
        print(f"kb: error: {admin_token.ENV} is set and empty: /insights is off; unset it for a token", file=sys.stderr)
        return 2
    print(token)
    return 0


def cmd_mcp(settings: ServerSettings, args: argparse.Namespace) -> int:
    """The MCP server over standard input and output, on the local index, for a coding agent that launches it.

    Questions are recorded for the insights (channel `mcp`) as the server records them;
    standard output carries the protocol alone, so everything else goes to standard error.
    With `--print-config FORM`, print the configuration that launches this `kb mcp` from an agent instead.
    """
    if args.print_config:
        from kbcli.mcp_config import config_text

        print(config_text(args.print_config, settings.data_dir))
        return 0

    import anyio

    from kb.events import Events
    from kb.insights import Recorder
    from kb.knowledge import KnowledgeBase
    from server.channels.mcp.stdio import serve_stdio
    from server.channels.mcp.tools import create_mcp

    _check_index(settings)
    recorder = Recorder.open(settings)
    try:
        kb = KnowledgeBase.open(settings)
        links = recorder.store.links() if recorder.store is not None else []
        if links:
            kb = kb.taught(links)  # the links of the recorder's database, as the server teaches them
        if recorder.store is not None:  # its harvested drafts, for "see also", as the server reads them
            from kb.see_also import MAX_THREADS, threads_of

            drafts = recorder.store.drafts("new", MAX_THREADS)
            cache = settings.cache_dir / "embeddings.sqlite"
            kb.see_also.load(threads_of(kept.draft for kept in drafts), kb.searcher.embedder, cache)
        mcp = create_mcp(lambda: kb, Events([recorder.hear]))
        anyio.run(serve_stdio, mcp)
    finally:
        recorder.close()
    return 0


def log_config() -> dict[str, Any]:
    """uvicorn's logging, and the server's own lines (`kb.*`: the index build swapped in, with
    its entries and seconds; refused origins; Slack) beside uvicorn's, from INFO up."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["kb"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    return config


def uvicorn_options(settings: ServerSettings) -> dict[str, Any]:
    """How uvicorn treats `X-Forwarded-For` and `X-Forwarded-Proto`: believed only from `KB_TRUSTED_PROXIES`.

    The client address they give is the one the rate limits count, so from anyone else
    they are ignored (uvicorn's own default would believe them from this machine).
    """
    from server.protocol import HeadDeadline

    proxies = list(settings.proxies)
    # HeadDeadline: a connection that has not sent a whole request head within 10 s is closed (server/protocol.py).
    return {"proxy_headers": bool(proxies), "forwarded_allow_ips": proxies or None, "http": HeadDeadline}


def _check_index(settings: Settings) -> None:
    """Read the index as the server will (manifest, checksums, model); raise IndexUnreadable naming what is wrong.

    The embedder it loads stays loaded for the server in this process.
    """
    from kb.embedding import open_embedder
    from kb.index import read_index, read_meta

    _as_index_error(settings, lambda: read_meta(settings.index_dir))  # missing or foreign: said before the model loads
    model = open_embedder(settings.embed_model).model
    _as_index_error(settings, lambda: read_index(settings.index_dir, model=model))


def _as_index_error(settings: Settings, read: Callable[[], object]) -> None:
    """Run `read`; a file it did not expect becomes an IndexUnreadable naming the index and the fault."""
    try:
        read()
    except KBError:
        raise
    except (OSError, RuntimeError, TypeError, ValueError, AttributeError) as exc:
        # A directory where a file belongs, a manifest field of the wrong type, bytes FAISS cannot read.
        raise IndexUnreadable(settings.index_dir, f"cannot be read ({type(exc).__name__}: {exc})") from None


def _folds(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number of at least 2 (each question is held out once)")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kb", description="A bilingual FAQ knowledge base for LLM training.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="parse the FAQ sources, embed them, write the index")
    p.add_argument(
        "--sources",
        metavar="DIR",
        action="append",
        help="a directory of FAQ Markdown or Q&A files (.csv, .tsv, .xlsx, .jsonl); repeat for several "
        "(default: KB_SOURCES_DIR)",
    )
    p.add_argument("--with-shipped", action="store_true", help="index the FAQs shipped with kb as well as --sources")
    p.set_defaults(run=cmd_ingest)

    p = sub.add_parser("translate", help="draft a source's version in the other language with the LLM (KB_LLM_*)")
    p.add_argument("source", help="a source's name in the folder, or the path of its Markdown file")
    p.add_argument("--to", required=True, choices=("en", "zh"), help="the language of the draft")
    p.add_argument("--sources", metavar="DIR", help="the folder of FAQ Markdown (default: KB_SOURCES_DIR)")
    p.add_argument("--force", action="store_true", help="replace a translation written by people")
    p.set_defaults(run=cmd_translate)

    p = sub.add_parser("search", help="search the index: the best answer, then the other entries worth showing")
    p.add_argument("query", help="the question, an error message or a flag; `-` reads it from standard input")
    p.add_argument("-k", type=int, default=5, help="at most this many entries (default 5)")
    p.add_argument("--brief", action="store_true", help="titles and links alone, without the answer")
    p.add_argument("--tag", action="append", help="only entries with this tag (repeatable)")
    p.add_argument("--source", help="only entries from this source")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.add_argument("--hl", choices=("zh", "en"), help="show entries in this language (default: the question's)")
    p.set_defaults(run=cmd_search)

    p = sub.add_parser("calibrate", help="fit the search weights and answer threshold by k-fold cross-validation")
    p.add_argument("files", nargs="+", help="labelled JSONL query sets to fit on (never the one you report)")
    p.add_argument("--folds", type=_folds, default=5, help="cross-validation folds, at least 2 (default 5)")
    p.add_argument(
        "--output",
        help="where to write the calibration (default: KB_DATA_DIR/calibration.json, which the search then loads "
        "unless KB_CALIBRATION names another)",
    )
    p.set_defaults(run=cmd_calibrate)

    p = sub.add_parser("eval", help="measure retrieval on a JSONL query set")
    p.add_argument("file", help="the labelled JSONL query set to measure on (one `kb calibrate` did not fit on)")
    p.add_argument("--json", action="store_true", help="print figures as JSON")
    p.add_argument("--explain", action="store_true", help="show each miss with its signals")
    p.set_defaults(run=cmd_eval)

    p = sub.add_parser("serve", help="run the web app on the index `kb ingest` built")
    p.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=int, default=8000, help="the port to listen on (default 8000)")
    p.add_argument(
        "--workers", type=int, default=1, help="worker processes, each with its own index and searcher (default 1)"
    )
    p.set_defaults(run=cmd_serve)

    p = sub.add_parser(
        "admin-token", help="print the admin token /insights signs in with (KB_ADMIN_TOKEN, else the data directory's)"
    )
    p.set_defaults(run=cmd_admin_token)

    p = sub.add_parser("mcp", help="the MCP server for coding agents, over standard input and output")
    p.add_argument(
        "--print-config",
        choices=MCP_CONFIG_FORMS,
        metavar="{" + ",".join(MCP_CONFIG_FORMS) + "}",
        help="print the configuration that launches this `kb mcp`, with its absolute path, for Claude Code "
        "(.mcp.json, or the `claude mcp add` line), Cursor (.cursor/mcp.json) or Codex (~/.codex/config.toml)",
    )
    p.set_defaults(run=cmd_mcp)

    add_export_parser(sub)
    add_sync_parser(sub)
    add_github_parser(sub)
    add_harvest_parser(sub)
    add_insights_parser(sub)
    add_learning_parser(sub)
    add_tuning_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = ServerSettings.from_env()  # the library's and the server's: a bad one stops every command
        return args.run(settings, args)
    except KBError as exc:
        for line in str(exc).splitlines():  # several bad source files: a line each
            print(f"kb: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
