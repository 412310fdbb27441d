"""`kb github answer`, the GitHub channel's command (its plugin's `add_parser`): what the GitHub bot says to one event, from the event's JSON as a workflow run has it.

    kb github answer --event FILE [--event-name NAME] [--dry-run]

FILE is a webhook payload (in a GitHub Actions run, `$GITHUB_EVENT_PATH`; its name is
`$GITHUB_EVENT_NAME`). The bot reads it as the webhook does, searches this knowledge base, and
prints the comment it would post, or why it posts none; without `--dry-run` and with
`KB_GITHUB_TOKEN` (the workflow's `GITHUB_TOKEN`) it posts it. In a workflow run it also writes
the run's job summary (`GITHUB_STEP_SUMMARY`): suggest mode's draft, ready to copy, beside a link
to the issue (job_summary.py). The mode is the repository's
(`KB_GITHUB_MODE`, `KB_GITHUB_REPOS`); `/faq` comments are answered in every mode.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from ...settings import ServerSettings
from .. import registry

__all__ = ["add_parser", "cmd_github"]


def add_parser(sub: Any) -> None:
    """Add `github` to the `kb` command's subparsers."""
    p = sub.add_parser("github", help="the GitHub bot: answer one issue, Discussion or /faq comment from its event")
    actions = p.add_subparsers(dest="action", required=True)
    answer = actions.add_parser("answer", help="print (and with a token, post) the bot's answer to an event")
    answer.add_argument("--event", type=Path, required=True, help="the event's JSON ($GITHUB_EVENT_PATH in Actions)")
    answer.add_argument(
        "--event-name",
        default=os.environ.get("GITHUB_EVENT_NAME", ""),
        help="issues, discussion or issue_comment (default: $GITHUB_EVENT_NAME)",
    )
    answer.add_argument("--dry-run", action="store_true", help="print the comment; post nothing")
    answer.set_defaults(run=cmd_github)


def cmd_github(settings: ServerSettings, args: argparse.Namespace) -> int:
    from kb.errors import KBError
    from kb.knowledge import KnowledgeBase

    from .events import Other, read_event

    if not args.event_name:
        print("kb: error: --event-name: give the event's name (issues, discussion, issue_comment)", file=sys.stderr)
        return 2
    try:
        body = args.event.read_bytes()
    except OSError as exc:
        print(f"kb: error: --event {args.event}: {exc.strerror}", file=sys.stderr)
        return 2
    event = read_event(args.event_name, body)
    if isinstance(event, Other):
        print(f"nothing to answer: {event.what}")
        _summarize(settings, event, None)
        return 0
    kb = KnowledgeBase.open(settings, points=registry.points())
    root = settings.base_url.rstrip("/") + "/" if settings.base_url else ""
    try:
        outcome = asyncio.run(_answer(kb, settings, event, root, post=not args.dry_run))
    except KBError as exc:
        print(f"kb: error: {exc}", file=sys.stderr)
        return 1
    print(outcome.comment if outcome.comment else f"no comment: {outcome.reason}")
    _summarize(settings, event, outcome)
    if outcome.comment:
        print(f"\n({outcome.reason}{': ' + outcome.url if outcome.url else ''})", file=sys.stderr)
    return 0


async def _answer(kb: Any, settings: ServerSettings, event: Any, root: str, post: bool) -> Any:
    """The bot's outcome for `event`, posted with KB_GITHUB_TOKEN unless `post` is False or there is no token. In a
    workflow run the token is the run's, whose comments are written by `github-actions[bot]`."""
    from kb.events import Events

    from .bot import respond
    from .client import GitHubAPI

    api = None
    if post and settings.github_token:
        login = "github-actions[bot]" if os.environ.get("GITHUB_ACTIONS") == "true" else ""
        api = GitHubAPI(settings.github_api_url, settings.github_token, login=login)
    try:
        return await respond(kb, Events(), settings, event, api, root)
    finally:
        if api is not None:
            await api.aclose()


def _summarize(settings: ServerSettings, event: Any, outcome: Any) -> None:
    """In a workflow run (GITHUB_STEP_SUMMARY set), what the bot did, on the run's page (job_summary.py)."""
    from .bot import mode_for
    from .events import Opened, Other
    from .job_summary import ENV, summary, write_summary

    if os.environ.get(ENV):
        asked = event if isinstance(event, (Opened, Other)) else event.asked
        mode = mode_for(settings, asked.repo) if not isinstance(asked, Other) else settings.github_mode
        write_summary(os.environ[ENV], summary(event, outcome, mode))
