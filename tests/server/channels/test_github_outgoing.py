"""The bot's public comment built from an upstream FAQ's words that mention people and carry raw HTML: no mention
GitHub would notify is left outside code, no tag or HTML comment passes, and code keeps its `@` and `<` as written."""

from __future__ import annotations

import re

from kb.asking import Found
from kb.entries import Entry
from kb.hits import Hit, SearchResult
from server.channels.github.comment import MARKER, answer_comment, not_covered_comment
from server.channels.github.outgoing import JOINER, public

# GitHub's mention filter (html-pipeline's MentionFilter): an `@` after the start or a non-word character, then a
# letter or digit. What it finds is a user or a team notified.
MENTION = re.compile(r"(?:^|\W)@([a-z0-9][a-z0-9-]*)(?:/[a-z0-9][a-z0-9_-]*)?", re.I)
HOSTILE = (
    "Ask @team or @ada-l, cc @org/infra.\n"
    "<!-- a hidden note --> <img src=x onerror=alert(1)> <details><summary>more</summary>\n"
    "Write to a@b.com. `@torch.compile` inline.\n"
    "```python\n@torch.no_grad()\ndef step(x: list[int]) -> bool: return x < [1]\n```\n"
    "~~~\n<kept> @kept\n~~~\n"
    "Last: @maintainer"
)


def entry(question: str, answer: str) -> Entry:
    return Entry(
        "team-1", question, answer, "team", "Team FAQ", "1", "https://example.com/faq", "", "", "", "en", file="faq.md"
    )


def found(*entries: Entry) -> Found:
    hits = tuple(Hit(e, 0.9, rank) for rank, e in enumerate(entries, 1))
    result = SearchResult("q", True, hits, confidence=0.95)
    return Found(result, "en", hits, len(hits), "")


def outside_code(text: str) -> str:
    """`text` without its fenced blocks and inline code spans."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def test_public_neutralises_mentions_and_html_outside_code_only() -> None:
    said = public(HOSTILE)
    prose = outside_code(said)
    assert MENTION.findall(prose) == [] and "<" not in prose
    assert said.replace(JOINER, "").replace("&lt;", "<") == HOSTILE  # reads the same as written
    assert "@torch.no_grad()\ndef step(x: list[int]) -> bool: return x < [1]" in said
    assert "<kept> @kept" in said and "`@torch.compile`" in said and "a@b.com" in said


def test_the_comment_from_a_hostile_entry_notifies_nobody_and_hides_nothing() -> None:
    hostile = entry("Who owns @team's <b>runner</b>?", HOSTILE)
    for comment in (
        answer_comment(found(hostile), "https://faq.example.com/"),
        not_covered_comment(found(hostile), ""),
    ):
        ours, theirs = comment.split("\n", 1)
        assert ours == MARKER
        prose = outside_code(
            theirs.replace("<!-- kb-faq-entry: team-1 -->", "").replace("<sub>", "").replace("</sub>", "")
        )
        assert MENTION.findall(prose) == [], prose
        assert "<" not in prose
    assert "&lt;img src=x onerror=alert(1)>" in answer_comment(found(hostile), "")
