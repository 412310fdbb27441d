"""`kb harvest`: draft FAQ entries from the tracker's closed issues and answered Discussions.

    kb harvest --from FILE [--dry-run] [--json]          # gh's JSON: issues, or Discussions
    kb harvest --repo OWNER/NAME [--discussions] [--dry-run] [--json]   # the tracker's API, what changed since

FILE is what `gh issue list --state closed --json number,title,body,state,stateReason,author,comments,
labels,url,closedAt,closedByPullRequestsReferences` writes (or the same for Discussions, with `answer`).
`--repo` reads the tracker (`trackers.tracker_for`, with the harvest's own settings: `KB_HARVEST_API_URL` and
`KB_HARVEST_TOKEN`) for the closed issues, or with `--discussions` the answered Discussions, updated since the last
harvest of that repository (kept in the data directory). The rules (`kb/harvest/rules.py`) choose the
threads; the drafts are grouped by the index's embedder when there is an index, and each is checked
against its entries; with `KB_LLM_*` set, a long thread is condensed by the LLM into a question and an answer,
marked as its draft. Without `--dry-run` they are kept in the insights database, for `/insights`.
`--dry-run --json` prints one JSON object a draft and nothing else. A file of at most `MAX_FILE` bytes is read, and
of it (as of the API) at most `--limit` threads; `--repo` gives up past `--deadline` seconds, keeping nothing. A
thread whose text is not UTF-8 is refused with one line on standard error and the harvest goes on; while the
threads are read, a progress line every few seconds goes there too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from kb.harvest import Harvest, Thread
    from kb.knowledge import KnowledgeBase
    from kb.llm import LLM
    from server.settings import ServerSettings

__all__ = ["add_parser", "cmd_harvest"]

DEADLINE = 900.0  # seconds `--repo` may take, by default (the API's pages, its rate limits waited out)
MAX_FILE = 256 * 1024 * 1024  # bytes of a thread file read (gh's JSON of 10,000 long threads is under 100 MiB)


def _day(text: str) -> float:
    try:
        return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a date as YYYY-MM-DD") from None


def _associations(text: str) -> tuple[str, ...]:
    found = tuple(a.strip().upper() for a in text.split(",") if a.strip())
    known = ("OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR")
    wrong = [a for a in found if a not in known]
    if not found or wrong:
        raise argparse.ArgumentTypeError(f"{text!r}: a comma-separated list of {', '.join(known)}")
    return found


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number of threads, 1 or more")
    return value


def _refused(message: str) -> None:
    """A thread refused on its own: one line, and the harvest goes on."""
    print(f"kb harvest: {message}", file=sys.stderr, flush=True)


def add_parser(sub: Any) -> None:
    """Add `harvest` to the `kb` command's subparsers."""
    p = sub.add_parser("harvest", help="draft FAQ entries from closed issues and answered Discussions")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--from", dest="file", type=Path, metavar="FILE", help="gh's JSON of issues or Discussions")
    where.add_argument(
        "--repo", metavar="OWNER/NAME", help="the tracker's API (KB_HARVEST_API_URL, KB_HARVEST_TOKEN): closed issues"
    )
    p.add_argument("--discussions", action="store_true", help="with --repo, answered Discussions instead of issues")
    p.add_argument("--label", default="", help="only threads with this label (e.g. faq)")
    p.add_argument("--closed-after", type=_day, metavar="YYYY-MM-DD", help="only threads closed on or after this day")
    p.add_argument(
        "--associations",
        type=_associations,
        default=None,
        metavar="LIST",
        help="whose answers count: author associations, comma-separated (default KB_HARVEST_ASSOCIATIONS)",
    )
    p.add_argument(
        "--confirmed",
        action="store_true",
        help="only answers someone confirmed: the asker's thanks, an accepted answer (default KB_HARVEST_EVIDENCE)",
    )
    p.add_argument(
        "--limit", type=_positive, default=10_000, help="at most this many threads read (of the file, or of the API)"
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=DEADLINE,
        metavar="SECONDS",
        help="with --repo, give up (keeping nothing) when the API has not given every issue within this many seconds",
    )
    p.add_argument("--dry-run", action="store_true", help="print the drafts; keep nothing")
    p.add_argument("--json", action="store_true", help="one JSON object a draft, and nothing else")
    p.set_defaults(run=cmd_harvest)


def _threads(settings: ServerSettings, args: argparse.Namespace) -> Iterable[Thread]:
    from kb.harvest import HarvestError, read_threads
    from kb.harvest.run import last_harvest
    from trackers import tracker_for

    if args.file is not None:
        if args.discussions:
            raise HarvestError("--discussions: only with --repo (a file of Discussions is read by --from as it is)")
        try:
            if args.file.stat().st_size > MAX_FILE:
                raise HarvestError(f"--from {args.file}: over {MAX_FILE // 2**20} MiB; split it")
            # Bytes that are not UTF-8 are kept as lone surrogates, so that the thread holding them alone is refused.
            data = json.loads(args.file.read_bytes().decode("utf-8", "surrogateescape"))
        except OSError as exc:
            raise HarvestError(f"--from {args.file}: {exc.strerror or exc}") from None
        except (ValueError, RecursionError) as exc:
            raise HarvestError(f"--from {args.file}: not JSON ({exc})") from None
        threads = read_threads(data, str(args.file), _refused)
        if len(threads) > args.limit:
            _refused(f"--from {args.file}: {len(threads):,} threads; the first {args.limit:,} read (--limit)")
        return threads[: args.limit]
    tracker = tracker_for(settings, _kind(args), args.deadline)
    return tracker.resolved(args.repo, last_harvest(settings.data_dir, _key(args)), args.limit, _refused)


def _kind(args: argparse.Namespace) -> str:
    return "discussions" if args.discussions else "issues"


def _key(args: argparse.Namespace) -> str:
    """What the last harvest of `--repo` is kept under: the repository, and for its Discussions ` discussions`."""
    return f"{args.repo} discussions" if args.discussions else args.repo


def _knowledge(settings: ServerSettings) -> KnowledgeBase | None:
    """The knowledge base, to group the drafts and check them against its entries; None without an index."""
    from kb.errors import IndexUnreadable
    from kb.knowledge import KnowledgeBase

    try:
        return KnowledgeBase.open(settings)
    except IndexUnreadable:
        return None


def _llm(settings: ServerSettings) -> LLM | None:
    """The LLM that condenses long threads (KB_LLM_BASE_URL and KB_LLM_MODEL); None without one: extractive drafts."""
    from kb.llm import LLM

    return LLM(settings) if LLM.configured(settings) else None


def _print(done: Harvest, args: argparse.Namespace, kept: int | None) -> None:
    if args.json:
        for draft in done.drafts:
            print(json.dumps(draft.to_json(), ensure_ascii=False))
        return
    for draft in done.drafts:
        where = f" (an alternate question of {draft.entry_id})" if draft.entry_id else ""
        print(f"{draft.repo}#{draft.number}  asked {draft.asked}x{where}  {draft.headline}")
        print(f"  {draft.url}  answer by {draft.answer_author} ({draft.signals.get('answer')})")
    refused = ", ".join(f"{n} {why}" for why, n in sorted(done.refused.items(), key=lambda kv: -kv[1]))
    print(
        f"read {done.read} threads, chose {done.chosen}, made {len(done.drafts)} drafts"
        + (f"; left {refused}" if refused else "")
    )
    if kept is not None:
        print(f"kept {kept} drafts in the insights database; accept them on /insights")


def cmd_harvest(settings: ServerSettings, args: argparse.Namespace) -> int:
    from kb.harvest import Rules, harvest
    from kb.harvest.run import remember_harvest

    from .progress import progress_lines

    associations = args.associations or settings.harvest_association_list
    confirmed = args.confirmed or settings.harvest_confirmed_only
    rules = Rules(associations=associations, label=args.label, closed_after=args.closed_after, confirmed_only=confirmed)
    started = time.time()
    threads = _threads(settings, args)
    llm, kb = _llm(settings), _knowledge(settings)
    total = len(threads) if isinstance(threads, list) else args.limit
    try:
        with progress_lines("kb harvest", sys.stderr) as progress:
            done = harvest(threads, rules, kb, llm, progress=lambda n: progress("threads", n, max(total, n)))
    finally:
        if llm is not None:
            llm.close()
    kept = None
    if not args.dry_run:
        kept = _keep(settings, done)
        if kb is not None:  # the questions' vectors, for the server's "see also" to read rather than embed again
            from kb.see_also import MAX_TITLE, keep_questions

            questions = {q: v for q, v in done.questions.items() if len(q) <= MAX_TITLE}
            keep_questions(settings.cache_dir / "embeddings.sqlite", kb.searcher.embedder.model, questions)
        if args.repo:
            remember_harvest(settings.data_dir, _key(args), started)
    _print(done, args, kept)
    return 0


def _keep(settings: ServerSettings, done: Harvest) -> int:
    from kb.insights.book import InsightsBook

    with InsightsBook.open(settings) as book:
        if settings.harvest_expire_days:
            book.store.drafts.expire(time.time() - settings.harvest_expire_days * 86400)
        return book.store.drafts.keep(done.drafts)
