"""The job summary `kb github answer` leaves on a workflow run's page: what the bot did with the event, in Markdown.

In a GitHub Actions run, `GITHUB_STEP_SUMMARY` names a file whose Markdown the run's page shows. A workflow
has no /insights, so this is where suggest mode's answer is seen: the draft comment in a code block (GitHub
gives it a copy button), the entry and its confidence, and a link to the issue's comment box, so a
maintainer posts it with a copy and a paste. GitHub has no address that opens a comment already written,
so the block is what is copied; `mode: comment` has the bot post answers this sure itself. The block holds
what a maintainer posts under their own name: the comment without the bot's hidden markers (they would make
the bot take the maintainer's comment for its own) and without its automated footer (its "react 👎 to this
comment"). A comment posted is linked; no comment says why.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .bot import Outcome
from .events import Closed, Command, Opened, Other

__all__ = ["ENV", "summary", "write_summary", "for_pasting"]

ENV = "GITHUB_STEP_SUMMARY"
_TICKS = re.compile(r"`+")


def _bots_own(line: str) -> bool:
    """A line of the bot's own: a hidden marker (its comment, the entry it answered with) or its automated footer."""
    line = line.strip()
    return (line.startswith("<!--") and line.endswith("-->")) or (line.startswith("<sub>") and line.endswith("</sub>"))


def for_pasting(comment: str) -> str:
    """The bot's comment as a maintainer posts it under their own name: no hidden markers, no bot's footer."""
    return "\n".join(line for line in comment.splitlines() if not _bots_own(line)).strip()


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in `text`, so the block holds it whole."""
    longest = max((len(run) for run in _TICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def _where(asked: Opened) -> str:
    return f"[{asked.repo}#{asked.number}]({asked.url})"


def summary(event: Opened | Command | Closed | Other, outcome: Outcome | None, mode: str) -> str:
    """The Markdown for what the bot did with `event` (`outcome` None: an event it only acknowledges)."""
    if isinstance(event, Other) or outcome is None:
        what = event.what if isinstance(event, Other) else "nothing"
        return f"### FAQ bot\n\nNothing to answer: {what}.\n"
    asked = event if isinstance(event, Opened) else event.asked
    head = f"### FAQ bot: {_where(asked)}"
    if not outcome.comment:
        return f"{head}\n\nNo comment: {outcome.reason}.\n"
    facts = f", with entry `{outcome.entry}` (confidence {outcome.confidence:.2f})" if outcome.entry else ""
    if outcome.posted:
        posted = f"[the comment]({outcome.url})" if outcome.url else "the comment"
        return f"{head}\n\nPosted {posted}{facts}.\n"
    if mode == "suggest" and isinstance(event, Opened):
        action = (
            f"Suggested answer, not posted ({mode} mode){facts}.\n\n"
            f"**To post it:** copy the comment below (the copy button at its top right), then "
            f"[open the issue's comment box]({asked.url}#new_comment_field) and paste it. "
            "To have the bot post answers this sure itself, set `mode: comment` in the workflow."
        )
        shown = for_pasting(outcome.comment)
    else:
        action = f"Not posted ({outcome.reason}){facts}."
        shown = outcome.comment
    fence = _fence(shown)
    return f"{head}\n\n{action}\n\n{fence}markdown\n{shown}\n{fence}\n"


def write_summary(path: str, text: str) -> None:
    """Add `text` to the job summary at `path` (a step's summary is what its commands appended); a file that
    cannot be written is a warning naming it, the answer having been given already."""
    try:
        with Path(path).open("a", encoding="utf-8") as out:
            out.write(text + "\n")
    except OSError as exc:
        print(f"kb: warning: {ENV}={path}: {exc.strerror}; no job summary written", file=sys.stderr)
