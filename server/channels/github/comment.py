"""What the bot reads and writes on GitHub: an issue's title and body read as a question (`kb.issue_question`: its
template, environment list and trace noise dropped), and the comment: the FAQ's answer (cut, linking the whole),
its deep link, and a line saying it is automated and how to say it did not help; or, for a `/faq` command the FAQ
cannot answer, that it does not cover it (or, above the calibration's floor, that its first entry may answer it) and
the nearest entries. One comment an issue, found again by `MARKER` (and its author). The FAQ's words go out with
their mentions and raw HTML neutralised (outgoing.py)."""

from __future__ import annotations

import re

from kb.asking import Found
from kb.hits import Hit
from kb.issue_question import question_of

from ...bots.replies import NEAREST_SHOWN, shorten
from ...permalinks import permalink
from ...rendering.strings import Translator
from .outgoing import public

__all__ = ["MARKER", "entry_of", "question_of", "answer_comment", "not_covered_comment", "ANSWER_CHARS"]

MARKER = "<!-- kb-faq-bot -->"  # the bot's comment on an issue, found again to be updated rather than repeated
ANSWER_CHARS = 1500  # of the FAQ's answer in a comment; the rest is a link away


def entry_of(comment: str) -> str:
    """The id of the entry a comment of the bot's answered with ("" when it names none)."""
    found = re.search(r"<!-- kb-faq-entry: ([\w.-]+) -->", comment)
    return found.group(1) if found else ""


def answer_comment(found: Found, root: str) -> str:
    """The comment giving the first entry's answer, in the reader's language (`found.hl`)."""
    t = Translator(found.hl)
    best = found.hits[0].entry
    lines = [
        MARKER,
        f"<!-- kb-faq-entry: {best.id} -->",
        f"{t('github_answer_intro')} **{_inline(best.question)}**",
        "",
        *_answer_of(found, root),
        "",
        f"<sub>{t('github_footer', confidence=f'{found.result.confidence:.2f}')}</sub>",
    ]
    return "\n".join(lines)


def not_covered_comment(found: Found, root: str) -> str:
    """The answer to a `/faq` command the FAQ cannot answer. Above the calibration's floor ("may answer"): the
    first entry's answer, said not to be certain, then the other nearest entries; else that the FAQ does not
    cover it, then the nearest entries."""
    t = Translator(found.hl)
    if found.hits and found.result.state.uncertain:
        best = found.hits[0].entry
        others = [_link(h, root) for h in found.hits[1:NEAREST_SHOWN]]
        lines = [
            MARKER,
            f"<!-- kb-faq-entry: {best.id} -->",
            t("github_likely", confidence=f"{found.result.confidence:.2f}"),
            "",
            f"**{_inline(best.question)}**",
            "",
            *_answer_of(found, root),
        ]
        return "\n".join(lines + (["", t("github_others"), "", *others] if others else []))
    nearest = [_link(h, root) for h in found.hits[:NEAREST_SHOWN]]
    opening = t("github_not_covered") if nearest else t("github_not_covered_none")
    return "\n".join([MARKER, opening, "", *nearest])


def _answer_of(found: Found, root: str) -> list[str]:
    """The first entry's answer (cut, linking the whole), then its links and source, for a comment."""
    t = Translator(found.hl)
    best = found.hits[0].entry
    answer, cut = shorten(best.answer, ANSWER_CHARS)
    links = [f"[{t('github_in_faq')}]({best.url or best.source_url})"] if (best.url or best.source_url) else []
    if root:
        links.append(f"[{t('github_read_more')}]({permalink(root, best.id)})")
    elif cut and not links:
        links.append(best.place)
    return [public(answer), "", " · ".join(links + [_inline(best.source_label(found.hl))])]


def _inline(text: str) -> str:
    """Outside text set inside a line of the comment: on one line, so that it reads there as it does alone."""
    return public(" ".join(text.split()))


def _link(hit: Hit, root: str) -> str:
    e = hit.entry
    href = permalink(root, e.id) if root else e.url or e.source_url
    question = _inline(e.question)
    return f"- [{question}]({href})" if href else f"- {question}"
