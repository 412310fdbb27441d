"""What the bot reads and writes on GitHub: an issue's title and body read as a question (its template's headings and
boilerplate dropped), and the comment: the FAQ's answer (cut, linking the whole), its deep link, and a line saying
it is automated and how to say it did not help; or, for a `/faq` command the FAQ cannot answer, that it does not
cover it (or, above the calibration's floor, that its first entry may answer it) and the nearest entries. One comment an issue, found again by `MARKER`."""

from __future__ import annotations

import re
from typing import Callable

from kb.asking import Found
from kb.hits import Hit

from ...permalinks import permalink
from ...replies import NEAREST_SHOWN, shorten

__all__ = ["MARKER", "entry_of", "question_of", "answer_comment", "not_covered_comment", "ANSWER_CHARS"]

MARKER = "<!-- kb-faq-bot -->"  # the bot's comment on an issue, found again to be updated rather than repeated
ANSWER_CHARS = 1500  # of the FAQ's answer in a comment; the rest is a link away
QUESTION_CHARS = 6000  # of an issue read as a question (a pasted trace is reduced by the search itself)

WORDS = {  # the comment's words, in each language
    "github_answer_intro": {
        "zh": "FAQ 里有这个问题的答案：",
        "en": "The FAQ answers this:",
    },
    "github_read_more": {
        "zh": "完整答案",
        "en": "The whole answer",
    },
    "github_in_faq": {
        "zh": "FAQ 原文",
        "en": "In the FAQ",
    },
    "github_not_covered": {
        "zh": "FAQ 没有涉及这个问题。最接近的条目：",
        "en": "The FAQ does not cover this. The nearest entries:",
    },
    "github_likely": {
        "zh": "FAQ 的这个条目可能回答了这个问题（置信度 {confidence}），但没有把握：",
        "en": "This FAQ entry may answer it (confidence {confidence}), but it is not certain:",
    },
    "github_not_covered_none": {
        "zh": "FAQ 没有涉及这个问题。",
        "en": "The FAQ does not cover this.",
    },
    "github_footer": {
        "zh": "这是根据 FAQ 自动给出的回答（置信度 {confidence}）。如果它没有帮助，请给这条评论点 👎，或回复 `/faq` 加上你的问题再问一次。",
        "en": "An automated answer from the FAQ (confidence {confidence}). If it does not help, react 👎 to this comment, or reply `/faq` and your question to ask again.",
    },
}


def _words(lang: str) -> Callable[..., str]:
    """`t(key, **values)` in `lang` (English for any other)."""
    code = "zh" if lang == "zh" else "en"
    return lambda key, **values: WORDS[key][code].format(**values)


_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.M)  # an issue template's "### Describe the bug"
_CHECKBOX = re.compile(r"^\s*[-*]\s+\[[ xX]\]\s.*$", re.M)  # "- [x] I have searched the existing issues"
_NO_RESPONSE = re.compile(r"^\s*_No response_\s*$", re.M)  # an issue form's empty field


def entry_of(comment: str) -> str:
    """The id of the entry a comment of the bot's answered with ("" when it names none)."""
    found = re.search(r"<!-- kb-faq-entry: ([\w.-]+) -->", comment)
    return found.group(1) if found else ""


def question_of(title: str, body: str) -> str:
    """The title and the body as one question, without the template's headings, checklists and empty fields."""
    text = _NO_RESPONSE.sub("", _CHECKBOX.sub("", _HEADING.sub("", _COMMENT.sub("", body))))
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return f"{title.strip()}\n\n{text}".strip()[:QUESTION_CHARS]


def answer_comment(found: Found, root: str) -> str:
    """The comment giving the first entry's answer, in the reader's language (`found.hl`)."""
    t = _words(found.hl)
    best = found.hits[0].entry
    answer, cut = shorten(best.answer, ANSWER_CHARS)
    links = [f"[{t('github_in_faq')}]({best.url or best.source_url})"] if (best.url or best.source_url) else []
    if root:
        links.append(f"[{t('github_read_more')}]({permalink(root, best.id)})")
    elif cut and not links:
        links.append(best.place)
    lines = [
        MARKER,
        f"<!-- kb-faq-entry: {best.id} -->",
        f"{t('github_answer_intro')} **{best.question}**",
        "",
        answer,
        "",
        " · ".join(links + [best.source_label(found.hl)]),
        "",
        f"<sub>{t('github_footer', confidence=f'{found.result.confidence:.2f}')}</sub>",
    ]
    return "\n".join(lines)


def not_covered_comment(found: Found, root: str) -> str:
    """The answer to a `/faq` command the FAQ cannot answer: that its first entry may answer it, when its
    confidence is above the calibration's floor; else that the FAQ does not cover it. Then the nearest entries."""
    t = _words(found.hl)
    nearest = [_link(h, root) for h in found.hits[:NEAREST_SHOWN]]
    if nearest and found.result.state == "likely":
        opening = t("github_likely", confidence=f"{found.result.confidence:.2f}")
    else:
        opening = t("github_not_covered") if nearest else t("github_not_covered_none")
    return "\n".join([MARKER, opening, "", *nearest])


def _link(hit: Hit, root: str) -> str:
    e = hit.entry
    href = permalink(root, e.id) if root else e.url or e.source_url
    return f"- [{e.question}]({href})" if href else f"- {e.question}"
