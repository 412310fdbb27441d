"""Issue-tracker noise, taken out of a question before it is searched.

People paste issue titles: `[BUG] ...`, `[Usage]: ...`, `【求助】...`, greetings
("大家好，请教一个问题", "Hi all,"), release numbers (`v0.4.2`) and hardware counts
("on 64x H100"). None of it says what the question is about, and all of it pulls the
question toward whichever entry happens to share the words.
"""

from __future__ import annotations

import re

__all__ = ["strip_noise"]

_TAG = re.compile(
    r"^\s*(?:[\[【(（]\s*(?:bug|bugs|usage|question|questions|help wanted|help|feature|feature request|"
    r"discussion|doc|docs|misc|installation|install|performance|rfc|enhancement|new model|urgent|"
    r"求助|问题|咨询|提问|疑问|bug反馈|已解决|solved)\s*[\]】)）]\s*(?:[:：]\s*)?)+",
    re.IGNORECASE,
)
_LEADING_LABEL = re.compile(r"^\s*(?:bug|question|help|issue|q)\s*[:：]\s*", re.IGNORECASE)
_GREETING = re.compile(
    r"^\s*(?:(?:hi|hello|hey|dear)(?:\s+(?:all|everyone|there|team|guys|developers|authors))?|"
    r"大家好|各位(?:大佬|老师|好)?|你好|您好|老师好|请教(?:一下|一个问题|个问题)?|请问(?:一下)?)[\s,，!！。:：]*",
    re.IGNORECASE,
)
# Thanks at the end, read from the last few characters once the punctuation after them is
# taken off: a pattern searched through the whole text backtracks over every run of spaces.
_THANKS = re.compile(r"(?:thanks?(?: you)?(?: in advance)?|thx|谢谢(?:大家|各位)?|多谢|感谢)\Z", re.IGNORECASE)
_THANKS_LONGEST = len("thank you in advance")
_AFTER_THANKS = "!！.。~～"
_BEFORE_THANKS = ",，.。!！"
_VERSION = re.compile(
    r"(?<![\w.])v?\d+\.\d+(?:\.\d+)+(?:[-+.]?\w+)?(?![\w.])|(?<![\w.])v\d+(?:\.\d+)?(?![\w.])", re.IGNORECASE
)
_HARDWARE = re.compile(
    r"\b(?:on|with|using|in)?\s*\d+\s*(?:[x×*]\s*)?(?:nodes?\s+of\s+)?(?:H100|H800|H20|A100|A800|A10|V100|L40S?|4090|3090|GPUs?|cards?|nodes?)\b"
    r"|(?<!\d)\d+\s*(?:卡|张卡|台机器|机)",
    re.IGNORECASE,
)


def strip_noise(text: str) -> str:
    """The question without tracker tags, greetings, thanks, release numbers and hardware
    counts; the text unchanged if nothing else would be left."""
    cleaned = _TAG.sub("", text, count=1)
    cleaned = _LEADING_LABEL.sub("", cleaned, count=1)
    for _ in range(3):  # "大家好，请教一个问题：..."
        cleaned = _GREETING.sub("", cleaned, count=1)
    cleaned = _without_thanks(cleaned)
    cleaned = _VERSION.sub(" ", cleaned)
    cleaned = _HARDWARE.sub(" ", cleaned)
    cleaned = _SPACES.sub(" ", cleaned).strip(" ,，:：-")
    return cleaned if _WORD.search(cleaned) else text


_SPACES = re.compile(r"[ \t]{2,}")
_WORD = re.compile(r"\w")


def _rstrip(text: str, chars: str) -> str:
    """`text` without the white space and `chars` at its end."""
    end = len(text)
    while end and (text[end - 1].isspace() or text[end - 1] in chars):
        end -= 1
    return text[:end]


def _without_thanks(text: str) -> str:
    """`text` without the thanks at its end ("..., thanks in advance!", "谢谢大家~"), or unchanged."""
    body = _rstrip(text, _AFTER_THANKS)
    thanks = _THANKS.search(body[-_THANKS_LONGEST:])
    if thanks is None:
        return text
    return _rstrip(body[: len(body) - len(thanks.group())], _BEFORE_THANKS)
