"""The job summary `kb github answer` writes in a workflow run (server/channels/github/job_summary.py): suggest mode's draft where a
maintainer sees it, with the entry, its confidence and the issue to post it on; a posted comment linked; no comment,
and why. GitHub itself cannot run here: `GITHUB_STEP_SUMMARY` names a temporary file, as a runner's does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from server.channels.github.bot import Outcome
from server.channels.github.comment import MARKER
from server.channels.github.events import read_event
from server.channels.github.job_summary import summary
from tests.support.cli import kb
from tests.support.github import issue_event

RESUME = "How do I resume training in slime after it stopped?"
SURE = "github=0.25"  # the suite's point for this channel, so that the shipped FAQs' plain questions are answered
ISSUE = "https://github.com/owner/repo/issues/7"


def answer(settings: Any, tmp_path: Path, title: str, **env: str) -> tuple[str, str]:
    """What `kb github answer` printed for an issue opened with `title`, and the job summary it left."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps(issue_event(title, number=7)), encoding="utf-8")
    step_summary = tmp_path / "step_summary.md"
    step_summary.write_text("An earlier step's summary.\n", encoding="utf-8")
    command = ("github", "answer", "--event", str(event), "--event-name", "issues")
    done = kb(*command, data_dir=settings.data_dir, GITHUB_STEP_SUMMARY=str(step_summary), **env)
    assert done.returncode == 0, done.stderr
    text = step_summary.read_text(encoding="utf-8")
    assert text.startswith("An earlier step's summary.\n")  # added to, not replaced
    return done.stdout, text.removeprefix("An earlier step's summary.\n")


@pytest.mark.slow
def test_suggest_mode_leaves_the_draft_its_entry_and_confidence_and_the_issue_to_post_it_on(
    settings: Any, tmp_path: Path
) -> None:
    printed, written = answer(settings, tmp_path, RESUME, KB_CHANNEL_PRECISION=SURE)
    comment = printed.rstrip("\n")
    assert comment.startswith(MARKER)
    assert written.startswith("### FAQ bot: [owner/repo#7](https://github.com/owner/repo/issues/7)\n")
    entry = re.search(
        r"Suggested answer, not posted \(suggest mode\), with entry `([\w-]+)` \(confidence (0\.\d\d)\)\.", written
    )
    assert entry and entry[1].startswith("slime-")
    assert f"[open the issue's comment box]({ISSUE}#new_comment_field)" in written
    assert "set `mode: comment` in the workflow" in written
    # The draft in a block GitHub gives a copy button, as a maintainer posts it under their own name: the answer
    # and its links whole, without the bot's hidden markers or its footer asking to react 👎 to the bot's comment.
    block = written.split("```markdown\n", 1)[1].rsplit("\n```\n", 1)[0]
    assert "<!--" not in block and "👎" not in block and "automated answer" not in block.lower()
    assert "--load" in block and block.splitlines()[0] == comment.splitlines()[2]
    assert all(line in comment for line in block.splitlines())


@pytest.mark.slow
def test_no_comment_says_why_on_the_runs_page(settings: Any, tmp_path: Path) -> None:
    printed, written = answer(settings, tmp_path, "The weather in Paris this weekend, any plans to go out?")
    assert printed.startswith("no comment: not sure enough")
    assert (
        written
        == f"### FAQ bot: [owner/repo#7]({ISSUE})\n\nNo comment: {printed.removeprefix('no comment: ').strip()}.\n\n"
    )


def test_a_posted_comment_is_linked_and_a_draft_with_backticks_stays_whole_in_its_block() -> None:
    event = read_event("issues", json.dumps(issue_event(RESUME, number=7)).encode())
    posted = Outcome("the answer", True, "posted", f"{ISSUE}#issuecomment-1", "slime-1", 0.97)
    assert summary(event, posted, "comment") == (
        f"### FAQ bot: [owner/repo#7]({ISSUE})\n\n"
        f"Posted [the comment]({ISSUE}#issuecomment-1), with entry `slime-1` (confidence 0.97).\n"
    )
    draft = "Run:\n\n```bash\npython train.py --load ckpt\n```\n"
    text = summary(event, Outcome(draft, False, "suggest mode", entry="slime-1", confidence=0.9), "suggest")
    assert f"\n````markdown\n{draft.strip()}\n````\n" in text  # a longer fence than the draft's own
