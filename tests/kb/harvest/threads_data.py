"""Threads in gh's JSON shape, made up for the harvest's tests: a question, its comments, its close."""

from __future__ import annotations

from typing import Any

DAY = "2026-01-0{}T12:00:00Z"


def comment(login: str, association: str, body: str, day: int = 2, bot: bool = False) -> dict[str, Any]:
    return {
        "author": {"login": login, "is_bot": bot},
        "authorAssociation": association,
        "body": body,
        "createdAt": DAY.format(day),
    }


def issue(
    comments: list[dict[str, Any]],
    number: int = 7,
    title: str = "[Question] How do I resume training from a checkpoint?",
    body: str = "### Your Question\n\nHow do I resume?\n\n### Environment\n\n- slime version:\n- Python version:",
    state: str = "CLOSED",
    reason: str | None = "COMPLETED",
    closed_day: int = 5,
    author: str = "asker",
    **more: Any,
) -> dict[str, Any]:
    return {
        "number": number,
        "title": title,
        "body": body,
        "state": state,
        "stateReason": reason,
        "author": {"login": author, "is_bot": False},
        "comments": comments,
        "labels": [{"name": "question"}],
        "url": f"https://github.com/THUDM/slime/issues/{number}",
        "closedAt": DAY.format(closed_day) if state == "CLOSED" else None,
        "closedByPullRequestsReferences": [],
        **more,
    }


ANSWER = "Pass `--load` with the directory `--save` wrote; the rollout id resumes from the checkpoint."
