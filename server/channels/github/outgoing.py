"""Text going out in the bot's public comment (an upstream FAQ's or a written answer's words), made harmless.

Outside code (fenced blocks and inline code spans, which GitHub leaves as they are), a mention (`@user`,
`@org/team`) gets a zero-width joiner after its `@`: it reads the same, but GitHub's mentions need a letter or digit
right after the `@`, so nobody is notified and no team is pinged. Every `<` becomes `&lt;`, so that no raw HTML
(a tag, an `<!-- -->` comment hiding text, a `<details>` swallowing the footer) passes: it is shown as written.
The work is one pass per line and a pattern with no repetition, linear in the text's length."""

from __future__ import annotations

import re

__all__ = ["public", "JOINER"]

JOINER = "\u200d"  # zero-width joiner: invisible, and not a character a GitHub login can start with
_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9])")  # where GitHub would read a mention
_FENCES = ("```", "~~~")


def public(text: str) -> str:
    """`text` with its mentions and raw HTML neutralised outside code, its code left as written."""
    out: list[str] = []
    fence = ""
    for line in text.split("\n"):
        opening = line.lstrip()[:3]
        if fence:
            fence = "" if opening == fence else fence
            out.append(line)
        elif opening in _FENCES:
            fence = opening
            out.append(line)
        else:
            out.append(_outside_fences(line))
    return "\n".join(out)


def _outside_fences(line: str) -> str:
    """A line with its inline code spans kept and the rest neutralised (all of it when its backticks do not pair)."""
    parts = line.split("`")
    if len(parts) % 2 == 0:
        return _prose(line)
    return "`".join(part if index % 2 else _prose(part) for index, part in enumerate(parts))


def _prose(text: str) -> str:
    return _MENTION.sub("@" + JOINER, text.replace("<", "&lt;"))
