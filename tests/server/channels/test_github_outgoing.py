"""The bot's public comment built from an upstream FAQ's words that mention people and carry raw HTML: no mention
GitHub would notify is left outside code, no tag or HTML comment passes, and code keeps its `@` and `<` as written,
whatever its backticks: runs of one to four and more, unmatched runs, tildes, indented blocks, escaped backticks,
tables, Chinese text around. What GitHub renders is read here with a CommonMark parser with GitHub's tables
(markdown-it): a mention is live when a run of text holds one, HTML when the parse has an HTML token."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from kb.asking import Found
from kb.entries import Entry
from kb.hits import Hit, SearchResult
from server.channels.github.comment import MARKER, answer_comment, not_covered_comment
from server.channels.github.outgoing import JOINER, MAX_PUBLIC, public

GITHUB = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
# GitHub's mention filter: an `@` at the start of a text node or after a character that is not an ASCII word
# character, then a letter or digit. What it finds is a user or a team notified.
MENTION = re.compile(r"(?:^|[^A-Za-z0-9_])@[A-Za-z0-9]")
HOSTILE = (
    "Ask @team or @ada-l, cc @org/infra.\n"
    "<!-- a hidden note --> <img src=x onerror=alert(1)> <details><summary>more</summary>\n"
    "Write to a@b.com. `@torch.compile` inline.\n"
    "```python\n@torch.no_grad()\ndef step(x: list[int]) -> bool: return x < [1]\n```\n"
    "~~~\n<kept> @kept\n~~~\n"
    "Last: @maintainer"
)


def live(markdown: str) -> list[str]:
    """What in `markdown` GitHub would render live: raw HTML, and runs of text holding a mention."""
    found = []
    for token in GITHUB.parse(markdown):
        if token.type == "html_block":
            found.append(token.content)
        run: list[str] = []
        for child in [*(token.children or []), None]:
            if child is not None and child.type == "text":
                run.append(child.content)
                continue
            if run and MENTION.search("".join(run)):
                found.append("".join(run))
            run = []
            if child is not None and child.type == "html_inline":
                found.append(child.content)
    return found


def code(markdown: str) -> list[str]:
    """The code of `markdown` as GitHub renders it: its blocks' and its code spans' text, in order."""
    out = []
    for token in GITHUB.parse(markdown):
        if token.type in ("fence", "code_block"):
            out.append(token.content)
        out += [child.content for child in token.children or [] if child.type == "code_inline"]
    return out


def reads(markdown: str) -> str:
    """`markdown` as a reader sees its characters: without the joiner, `&lt;` as `<`."""
    return markdown.replace(JOINER, "").replace("&lt;", "<")


def as_read(markdown: str) -> str:
    """`markdown` with the entities GitHub reads as `@` written `@`."""
    for entity in ("&#64;", "&#x40;", "&commat;"):
        markdown = markdown.replace(entity, "@")
    return markdown


# (text, what must stay as written in code): shapes of code spans and fences as CommonMark reads them
KEPT = [
    ("`@kept` and @live", ["@kept"]),
    ("`` `@kept` `` and @live", ["`@kept`"]),
    ("``` a `` @kept ``` and @live <b>", ["a `` @kept"]),
    ("```` ``` @kept ```` then @live", ["``` @kept"]),
    ("``a`@kept``, @live `<b>`", ["a`@kept", "<b>"]),
    ("```\n@kept <kept>\n```\n@live <b>", ["@kept <kept>\n"]),
    ("   ```py\n@kept\n   ```\n@live", ["@kept\n"]),
    ("````\n```\n@kept\n````\n@live", ["```\n@kept\n"]),
    ("~~~\n@kept <x>\n~~~~\n@live <x>", ["@kept <x>\n"]),
    ("~~~\n```\n@kept\n~~~\n@live", ["```\n@kept\n"]),
    ("@live\n```\n@kept to the end <x>", ["@kept to the end <x>"]),
    ("para\n\n    @kept <x>\n\n@live", ["@kept <x>\n"]),
    ("> ```\n> @kept\n> ```\n> @live", ["@kept\n"]),
    ("- item\n\n  ```\n  @kept\n  ```\n- @live", ["@kept\n"]),
    ("`@a\nkept` @live", ["@a kept"]),
    ("# 标题 `@kept` @live", ["@kept"]),
    ("| 选项 | 说明 |\n|---|---|\n| `<module>` | 问 @live |", ["<module>"]),
    ("请问 `@torch.compile` 怎么用？@live <img src=x>", ["@torch.compile"]),
    ("Set `https://<host>/slack/command` and `git@github.com:<org>`, @live", ["https://<host>/slack/command"]),
]

# text whose every mention and tag is live as GitHub reads it, however its backticks look
LIVE = [
    "``@octocat`",  # an unmatched run is literal backticks
    "`` ` ``@octocat`",  # a span of two backticks, then a single unmatched one
    "`x\ny` @octocat `",  # a span over two lines, then an unmatched one
    "text\n    ```\n@octocat",  # indented four spaces after a paragraph: no fence, literal backticks
    "```a`b\n@octocat\n```",  # a backtick fence's info string holds no backtick: no fence
    "\\`@octocat`",  # an escaped backtick opens no span
    "\\``@octocat`<b>`",
    "中文@octocat，<img src=x>",  # a Chinese character is no word character for GitHub's mentions
    "&#64;octocat &#x40;hubot &commat;team",  # entities GitHub reads as `@`
    "<details><summary>@octocat</summary>",
    '<a href="`">`@octocat`',  # a tag binds before the code span it seems to hold
    "**@octocat** _@hubot_",
    "[@octocat](https://github.com/) ![@hubot](x.png)",
]


@pytest.mark.parametrize(("text", "kept"), KEPT)
def test_code_is_kept_as_written_and_the_rest_is_neutralised(text: str, kept: list[str]) -> None:
    said = public(text)
    assert live(text) and live(said) == []
    assert reads(said) == text
    for piece in kept:
        assert piece in code(said)
    assert code(said) == code(text)


@pytest.mark.parametrize("text", LIVE)
def test_what_github_would_render_live_is_neutralised(text: str) -> None:
    said = public(text)
    assert live(text) and live(said) == [], said
    assert as_read(reads(said)) == as_read(text)


def test_a_fence_runs_to_a_closing_fence_at_least_as_long() -> None:
    said = public("````\n@a\n```\n@b")  # the fence of four is not closed by three: all of it is code
    assert said == "````\n@a\n```\n@b" and live(said) == []


def test_the_comment_reads_as_written() -> None:
    said = public(HOSTILE)
    assert live(HOSTILE) and live(said) == []
    assert reads(said) == HOSTILE
    assert "@torch.no_grad()\ndef step(x: list[int]) -> bool: return x < [1]" in said
    assert "<kept> @kept" in said and "`@torch.compile`" in said and "a@b.com" in said


@pytest.mark.parametrize(
    ("text", "live_on_github"),
    [
        # shapes where GitHub's parser (cmark-gfm) reads as text what a strict CommonMark reading makes code
        ("``` x `y` `<b>` `@octocat`", ["<b>", "@octocat"]),  # after an unmatched run, a later span is missed
        ("see http://example.com/x`<b>`", ["<b>"]),  # a bare URL's link takes the backtick in, up to the tag
        ("www.example.com`<b>`", ["<b>"]),
        ("www.` `ftp://` @octocat`", ["@octocat"]),  # the first link shifts the spans after it
        (">www.`\n@octocat`", ["@octocat"]),  # a quote's text starts with the link
        ("http://a`x https://b` <b>`", ["<b>"]),
        ("`" * 81 + "@octocat <b>" + "`" * 81, ["<b>", "@octocat"]),  # no span of more than 80 backticks closes
        ("[r]: /u\n    @octocat <b>", ["<b>", "@octocat"]),  # a definition's continuation, not an indented block
        ("[^1]: a footnote\n\n    @octocat <b>", ["<b>", "@octocat"]),
        ("- |*\n-|-\n    @octocat", ["@octocat"]),  # a list item, not a table
        ("`\n    @octocat`|[\n-|-", ["@octocat"]),  # the line above a table's second line is its head
        ("| `a | @octocat` |\n|---|---|\n| `<b>` | x |", ["@octocat"]),  # cells split at the pipes first
    ],
)
def test_shapes_github_reads_as_text_are_neutralised(text: str, live_on_github: list[str]) -> None:
    said = public(text)
    for piece in live_on_github:
        assert piece not in said, said
    assert reads(said) == text


def test_outside_text_is_cut_to_the_comment_limit_first() -> None:
    said = public("@octocat " * (MAX_PUBLIC // 4))
    assert len(said.replace(JOINER, "")) == MAX_PUBLIC and live(said) == []


PIECES = [
    *("`", "``", "```", "````", "~~~", "~~~~", "\\`", "\\"),
    *("@octocat", " @hubot", "&#64;x", "a@b.com", "<b>", "<img src=x>", "<!--", "-->", "<details>", '<a href="`">'),
    *(
        "\n",
        "\n\n",
        "    ",
        "  ",
        " ",
        "> ",
        "- ",
        "1. ",
        "# ",
        "| ",
        " |",
        "|---|",
        "\n|-|-|\n",
        "[",
        "](u)",
        "*",
        "_",
    ),
    *("中文", "，", "http://x.com/", "[r]: /u", "[^1]: ", "a"),
]
MARKDOWN = st.lists(st.sampled_from(PIECES), max_size=40).map("".join) | st.text(
    alphabet="`~@<>&#;\\|-*_[]() \n\tab中", max_size=80
)


@settings(max_examples=300, deadline=None)
@given(MARKDOWN)
def test_no_mention_or_tag_survives_outside_code(text: str) -> None:
    said = public(text)
    assert live(said) == []
    assert as_read(reads(said)) == as_read(text)


def entry(question: str, answer: str) -> Entry:
    return Entry(
        "team-1", question, answer, "team", "Team FAQ", "1", "https://example.com/faq", "", "", "", "en", file="faq.md"
    )


def found(*entries: Entry) -> Found:
    hits = tuple(Hit(e, 0.9, rank) for rank, e in enumerate(entries, 1))
    result = SearchResult("q", hits, confidence=0.95, point=0.9)
    return Found(result, "en", hits, len(hits), "")


def theirs(comment: str) -> str:
    """The comment without the bot's own marks and footer tags: the FAQ's words and the bot's."""
    ours, rest = comment.split("\n", 1)
    assert ours == MARKER
    return rest.replace("<!-- kb-faq-entry: team-1 -->", "").replace("<sub>", "").replace("</sub>", "")


def test_the_comment_from_a_hostile_entry_notifies_nobody_and_hides_nothing() -> None:
    hostile = entry("Who owns @team's <b>runner</b>?", HOSTILE)
    for comment in (
        answer_comment(found(hostile), "https://faq.example.com/"),
        not_covered_comment(found(hostile), ""),
    ):
        assert live(theirs(comment)) == []
    assert "&lt;img src=x onerror=alert(1)>" in answer_comment(found(hostile), "")


def may_answer(hl: str, *entries: Entry) -> Found:
    """A search whose first entry may answer (above the floor, under the point)."""
    hits = tuple(Hit(e, 0.9, rank) for rank, e in enumerate(entries, 1))
    return Found(SearchResult("q", hits, confidence=0.31, point=0.9, floor=0.18), hl, hits, len(hits), "")


def other_entry(question: str) -> Entry:
    return Entry(
        "team-2", question, "Another answer.", "team", "Team FAQ", "1", "https://example.com/faq", "", "", "", "en"
    )


@pytest.mark.parametrize(
    ("hl", "said"),
    [("en", "may answer it (confidence 0.31), but it is not certain"), ("zh", "可能回答了这个问题（置信度 0.31）")],
)
def test_a_faq_reply_that_may_answer_gives_the_first_answer_said_not_certain_then_the_others(hl, said) -> None:
    resume = entry("How do I resume training?", "Set `--load` to the directory of `--save`.")
    comment = not_covered_comment(may_answer(hl, resume, other_entry("What is colocate mode?")), "")
    assert said in comment
    assert "Set `--load` to the directory of `--save`." in comment
    assert comment.index("--save") < comment.index("What is colocate mode?")  # the answer first, the others after
    assert "<!-- kb-faq-entry: team-1 -->" in comment  # a 👎 on it is counted against the entry offered
    assert "does not cover" not in comment and "没有涉及" not in comment


def test_a_may_answer_reply_from_a_hostile_entry_notifies_nobody_and_hides_nothing() -> None:
    hostile = entry("Who owns @team's <b>runner</b>?", HOSTILE)
    assert live(theirs(not_covered_comment(may_answer("en", hostile), ""))) == []


@settings(max_examples=150, deadline=None)
@given(MARKDOWN, MARKDOWN)
def test_no_comment_built_from_outside_text_notifies_or_hides(question: str, answer: str) -> None:
    hostile = entry(question or "q", answer or "a")
    for comment in (
        answer_comment(found(hostile), "https://faq.example.com/"),
        not_covered_comment(found(hostile), ""),
    ):
        assert live(theirs(comment)) == []


HOSTILE_SHAPES = {
    "spans": "`@a` ",
    "runs of one to four": "`@``<```@````<",
    "unclosed fences": "```a\n@b <c>\n",
    "tildes": "~~~\n@x\n",
    "table cells": "| `@a` | <b> |\n|-|-|\n",
    "definitions": "[r]: /u\n    @k\n",
    "links": "[a](`b) `c` @d\n",
    "nested labels": "[`@a`",
    "urls": "http://x`@a` ",
    "hosts": "_www.",
    "www": " www.`@",
    "lines": "`\n@a\n",
}


@pytest.mark.slow
def test_the_cost_stays_linear_up_to_the_comment_limit() -> None:
    """Each hostile shape at 65,536 characters takes at most about four times what it takes at 16,384."""
    slow = {}
    for name, unit in HOSTILE_SHAPES.items():
        took = [_least(unit * (size // len(unit)), 1) for size in (MAX_PUBLIC // 4, MAX_PUBLIC)]
        if took[1] > 8 * took[0] + 0.5:  # a noisy machine only ever adds time: the least of three runs decides
            took[1] = min(took[1], _least(unit * (MAX_PUBLIC // len(unit)), 2))
        if took[1] > 8 * took[0] + 0.5:
            slow[name] = [round(t, 3) for t in took]
    assert slow == {}


def _least(text: str, runs: int) -> float:
    """The least of `runs` timings of `public(text)`, in seconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        public(text)
        times.append(time.perf_counter() - start)
    return min(times)
