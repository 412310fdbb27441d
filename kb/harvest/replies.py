"""What a reply says of the answer before it: it asks back rather than answers, it says the answer did not help, or
it is another user's bare "me too" (the thread's people aside: `kb.harvest.rules` decides whose words count)."""

from __future__ import annotations

import re

from . import notes
from .threads import Comment

__all__ = ["asks_back", "says_still_failing", "only_me_too"]

# A maintainer asking back (for a repro, a log, a new ticket) has not answered yet.
_ASKS = re.compile(
    r"\b(?:can|could|would) you(?: please)? (?:share|provide|post|open|paste|send|give|try|check|tell)\b"
    r"|\bplease (?:share|provide|post|paste|send|open a new)\b|能否提供|请提供|麻烦提供|可以提供一下|提供一?下(?!载)"
    r"|\blet (?:me|us) know (?:if|whether) (?:it|this|that) (?:works?|worked|helps?|helped|fix(?:es|ed)?|solves?|solved)\b"
    r"|\b(?:submit|open|send|make|create) (?:a |an )?(?:pr|mr|pull request|merge request)\b|欢迎.{0,6}(?:pr|PR)|提(?:个|一个)?\s?(?:pr|PR)"
    r"|\bprs? (?:are|is) welcome\b|\bif you could (?:share|provide|post|paste|send|give)\b|请(?:按照?.{0,20}?)?补充|麻烦(?:再)?补充",
    re.IGNORECASE,
)
_THANKS_WORDS = ("thank you", "thanks you", "thanks", "thank", "thx", "谢谢", "感谢")  # a comment's closing thanks
_CLOSING = " \t\r\n!！.。~"  # what may stand between and after them
# Someone, after the answer, saying it did not help.
_STILL_FAILING = re.compile(
    r"\bstill\b.{0,40}\b(?:not|doesn'?t|don'?t|fails?|error|wrong|same|broken|hangs?|crash)"
    r"|\bsame (?:problem|issue|error|thing)\b|\b(?:does|did)(?:n'?t| not) (?:work|help|fix|solve)\b|\bnot work(?:ing)?\b"
    r"|还是不行|还是有|仍然|依然|没用|不行",
    re.IGNORECASE,
)
# Another user's bare "me too", all their comment says.
_ME_TOO = re.compile(
    r"(?:i have |i got |i had |i'?m having |i met |having )?(?:the )?same (?:problem|issue|error|thing|here)"
    r"(?:,? too| here| as well)?[ .!,，。！~]{0,5}|me too[ .!~]{0,5}|\+1|我也(?:是|一样|遇到了?(?:同样的|这个|相同的)?(?:问题)?)[ 。！!~]{0,5}|同问|一样的问题",
    re.IGNORECASE,
)


def asks_back(comment: Comment) -> bool:
    """Whether a comment asks the asker something (ends in a question, or asks for a repro or a log) rather than answers."""
    words = _without_closing_thanks(notes.own_words(comment.body)).rstrip(" .。!！~")
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


def says_still_failing(words: str) -> bool:
    """Whether a reply's own words say it still fails ("still the same error", "didn't solve this", "还是不行")."""
    return _STILL_FAILING.search(words) is not None


def only_me_too(words: str) -> bool:
    """Whether a reply's own words are a bare "me too" and nothing more ("Same problem here!", "我也遇到了这个问题")."""
    return _ME_TOO.fullmatch(words) is not None
