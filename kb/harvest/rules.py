"""Which threads become drafts, and which comment is the answer: rules a maintainer reads and sets.

A thread is chosen when:

- it is an issue closed as completed (never `not_planned` or `duplicate`, nor open), or a Discussion
  with an accepted answer;
- its answer is written by one of the repository's own people (author association OWNER, MEMBER or
  COLLABORATOR, `Rules.associations`), or is a Discussion's accepted answer; never by a bot, never by
  the asker;
- it has `Rules.label` when one is set (a "FAQ" label), and closed after `Rules.closed_after` when set.

The answer is the accepted answer; else the maintainer's comment the asker thanked (the last one before
the asker's "thanks, that worked"); else the last maintainer comment before the close that says more
than "closing" or "fixed". `Choice.signals` says which rule picked it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .threads import Comment, Thread

__all__ = ["Rules", "Choice", "choose", "refusal", "MEMBERS", "thanks"]

MEMBERS = ("OWNER", "MEMBER", "COLLABORATOR")  # author associations of the repository's own people
MIN_ANSWER = 40  # characters a comment says, quotes and links aside, to be an answer rather than "closing"
_THANKS = re.compile(
    r"\b(?:thanks?|thx|ty|works? (?:now|for me|well)|it works|solved|resolved|fixed it|that did it|got it|gotcha"
    r"|that'?s what i (?:want|need)(?:ed)?)\b|谢谢|感谢|多谢|解决了|可以了|好了|成功了|明白了|懂了",
    re.IGNORECASE,
)
_LINKS = re.compile(r"https?://\S{1,500}")
_MENTIONS = re.compile(r"@[\w-]{1,39}")
# A maintainer asking back (for a repro, a log, a new ticket) has not answered yet.
_ASKS = re.compile(
    r"\b(?:can|could|would) you(?: please)? (?:share|provide|post|open|paste|send|give|try|check|tell)\b"
    r"|\bplease (?:share|provide|post|paste|send|open a new)\b|能否提供|请提供|麻烦提供|可以提供一下",
    re.IGNORECASE,
)
_THANKS_WORDS = ("thank you", "thanks you", "thanks", "thank", "thx", "谢谢", "感谢")  # a comment's closing thanks
_CLOSING = " \t\r\n!！.。~"  # what may stand between and after them
# Someone, after the answer, saying it did not help.
_STILL_FAILING = re.compile(
    r"\bstill\b.{0,40}\b(?:not|doesn'?t|don'?t|fails?|error|wrong|same|broken|hangs?|crash)"
    r"|\bsame (?:problem|issue|error|thing)\b|\b(?:does|did)n'?t (?:work|help|fix)\b|\bnot work(?:ing)?\b"
    r"|还是不行|还是有|仍然|依然|没用|不行",
    re.IGNORECASE,
)
_BOILERPLATE = re.compile(
    r"feel free to re-?open|\b(?:closing|close) (?:this )?(?:as|due to|because of) (?:stale|inactiv|no (?:response|activity))"
    r"|自动关闭",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Rules:
    """What a thread needs to become a draft."""

    associations: tuple[str, ...] = MEMBERS
    label: str = ""  # a label the thread must have ("" for any)
    closed_after: float | None = None  # Unix seconds: only threads closed since
    min_answer: int = MIN_ANSWER


@dataclass(frozen=True)
class Choice:
    """A thread chosen, with the comment that answers it and why."""

    thread: Thread
    answer: Comment
    signals: dict[str, object] = field(default_factory=dict)


def thanks(text: str) -> bool:
    """Whether a comment (its first 2,000 characters) thanks someone or says it now works."""
    return _THANKS.search(text[:2000]) is not None


def _own_words(comment: Comment) -> str:
    """The comment without the lines it quotes, its links and its mentions, on one line (its first 5,000 characters)."""
    lines = (ln for ln in comment.body[:5000].split("\n") if not ln.lstrip().startswith(">"))
    return " ".join(_MENTIONS.sub("", _LINKS.sub("", "\n".join(lines))).split())


def asks_back(comment: Comment) -> bool:
    """Whether a comment asks the asker something (ends in a question, or asks for a repro or a log) rather than answers."""
    words = _without_closing_thanks(_own_words(comment)).rstrip(" .。!！~")
    if not words:
        return False
    return words.endswith(("?", "？", "吗", "呢")) or _ASKS.search(words) is not None


def _without_closing_thanks(text: str) -> str:
    """`text` without the thanks it ends with ("... Thanks! 谢谢"), read back from its end in linear time."""
    end = len(text)
    while True:
        while end and text[end - 1] in _CLOSING:
            end -= 1
        word = next((w for w in _THANKS_WORDS if text[max(0, end - len(w)) : end].lower() == w), None)
        if word is None:
            return text[:end]
        end -= len(word)


def _says_enough(comment: Comment, min_answer: int) -> bool:
    words = _own_words(comment)
    if _BOILERPLATE.search(words) and len(words) < 150:
        return False  # "closing, feel free to reopen"
    return len(words) >= min_answer or bool(_LINKS.search(comment.body) and len(words) >= 10)


def _still_failing(comments: list[Comment], after: int, thread: Thread, rules: Rules) -> bool:
    """Whether someone other than the repository's people says, after comment `after`, that it still fails."""
    return any(
        not _maintainer(c, thread, rules) and _STILL_FAILING.search(_own_words(c)[:2000]) is not None
        for c in comments[after + 1 :]
    )


def refusal(thread: Thread, rules: Rules) -> str:
    """Why `thread` is not harvested ("" when the thread itself qualifies; its answer is looked for next)."""
    if rules.label and rules.label.lower() not in {label.lower() for label in thread.labels}:
        return f"no label {rules.label!r}"
    if rules.closed_after is not None and (thread.closed_at or 0) < rules.closed_after:
        return "closed before the window" if thread.closed_at else "not closed"
    if thread.kind == "discussion":
        return "" if thread.accepted is not None else "no accepted answer"
    if thread.state != "closed":
        return "open"
    if thread.state_reason != "completed":
        return f"closed as {thread.state_reason or 'unknown reason'}"
    return ""


def _maintainer(comment: Comment, thread: Thread, rules: Rules) -> bool:
    return comment.association in rules.associations and not comment.bot and comment.author != thread.author


def choose(thread: Thread, rules: Rules = Rules()) -> Choice | None:
    """The thread's answer and the signals that chose it, or None when the thread is not one to harvest."""
    if refusal(thread, rules):
        return None
    signals: dict[str, object] = {"kind": thread.kind}
    if thread.state_reason:
        signals["state_reason"] = thread.state_reason
    if thread.linked_prs:
        signals["linked_prs"] = list(thread.linked_prs)
    if rules.label:
        signals["label"] = rules.label
    if thread.accepted is not None:
        if thread.accepted.bot or not thread.accepted.body.strip():
            return None
        return Choice(thread, thread.accepted, signals | {"answer": "accepted", "by": thread.accepted.association})
    comments = [c for c in thread.comments if thread.closed_at is None or (c.created_at or 0) <= thread.closed_at + 60]
    answers = [
        i
        for i, c in enumerate(comments)
        if _maintainer(c, thread, rules) and _says_enough(c, rules.min_answer) and not asks_back(c)
    ]
    if not answers:
        return None
    for i in range(len(comments) - 1, 0, -1):  # the asker's last thanks, and the maintainer answer before it
        if comments[i].author == thread.author and thanks(comments[i].body):
            before = [a for a in answers if a < i]
            if before:
                chosen = comments[before[-1]]
                return Choice(thread, chosen, signals | {"answer": "thanked", "by": chosen.association})
            break
    last = max(i for i, c in enumerate(comments) if _maintainer(c, thread, rules))
    if asks_back(comments[last]) or _still_failing(comments, answers[-1], thread, rules):
        return None  # the last word of the repository's people is a question, or the answer did not help
    chosen = comments[answers[-1]]
    return Choice(thread, chosen, signals | {"answer": "last_before_close", "by": chosen.association})
