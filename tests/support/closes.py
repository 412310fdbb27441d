"""Closed issues as GitHub's webhook delivers them, each with a maintainer's answer at the GitHub stand-in
(tests/support/github.py), and which of them the insights database holds as harvested."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from .github import GitHubStandIn, issue_event

REPO = "THUDM/slime"
TOPICS = (
    "pin the Megatron commit",
    "resume a run on fewer GPUs",
    "write rollout samples to disk",
    "set the global batch size",
    "log to wandb offline",
    "train on Ascend NPUs",
    "convert a checkpoint to Hugging Face",
    "change the reward function",
)


def closed_issue(number: int) -> dict[str, Any]:
    """The `issues` `closed` delivery of `REPO`#`number`, closed as completed, asking a question of its own."""
    title = f"How do I {TOPICS[number % len(TOPICS)]} in slime (case {number})?"
    payload = issue_event(title, "It fails on our cluster.", action="closed", number=number, state="closed", repo=REPO)
    payload["issue"] |= {"state_reason": "completed", "closed_at": "2026-05-02T00:00:00Z"}
    return payload


def answer_closes(github: GitHubStandIn, numbers: range) -> None:
    """Each of the issues answered at the stand-in by a maintainer, the asker thanking them."""
    for number in numbers:
        github.comments[f"{REPO}#{number}"] = [
            _comment(number * 2, f"Set the option for case {number} in your launch script; see docs/usage.md.", "zhuzilin", "MEMBER"),
            _comment(number * 2 + 1, "Thanks, that worked!", "asker", "NONE"),
        ]  # fmt: skip


def _comment(comment_id: int, body: str, login: str, association: str) -> dict[str, Any]:
    return {
        "id": 50_000 + comment_id,
        "body": body,
        "user": {"login": login, "type": "User"},
        "author_association": association,
        "created_at": "2026-05-01T10:00:00Z",
        "html_url": f"https://github.com/{REPO}/issues/1#issuecomment-{50_000 + comment_id}",
    }


def harvested(database: Path) -> set[int]:
    """The issue numbers the insights database holds as harvested: a draft's own, or one of its other threads'."""
    import json

    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT number, alternates FROM harvested_drafts").fetchall()
    found = {int(number) for number, _ in rows}
    for _, alternates in rows:
        found |= {int(a["number"]) for a in json.loads(alternates)}
    return found


def queued(database: Path) -> int:
    """How many closes wait in the queue."""
    with sqlite3.connect(database) as db:
        return int(db.execute("SELECT count(*) FROM close_queue").fetchone()[0])
