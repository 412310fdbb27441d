"""Text as the knowledge base reads it: tokens for the lexical side, a question's language, its key, and the check of what is asked.

Tokens: jieba words for Chinese, identifiers kept whole and in parts.

`--max-tokens-per-gpu`, `max_tokens_per_gpu` and `self.node2pg[node_rank]` each give one
whole token (dashes folded to underscores) plus their parts (`max`, `tokens`, `node2pg`,
`node_rank`, `node`, `rank`), so an exact identifier matches strongly and a partial one
still matches.
"""

from __future__ import annotations

import logging
import re
import threading
import tomllib
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import QueryError
from .stacktrace import fits, too_long

__all__ = [
    "normalize",
    "tokenize",
    "is_cjk",
    "has_cjk",
    "detect_lang",
    "clean_query",
    "checked_query",
    "question_key",
    "load_tokenizer",
]

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# An identifier-like run: letters, digits and the joiners found in flags, paths and code.
_RUN = re.compile(rf"[{_CJK}]+|[A-Za-z0-9_][A-Za-z0-9_.\-/\[\]:]*")
_PART = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[a-z]+|\d+")

STOPWORDS = frozenset(
    """
    a an the is are was were be been being to of in on at for and or with without by from as
    it its this that these those there here i me my we our you your he she they them their
    do does did doing done how what why when where which who whom can could should would will
    shall may might must not no yes if then than so too very just also only about into over
    any some all each more most other such own same both few get got have has had having
    please help want need know tell use using used way ways thing things one ones
    的 了 是 在 和 与 或 吗 呢 吧 啊 呀 么 之 其 这 那 这个 那个 这些 那些 一个 一些 一下
    怎么 怎么办 怎样 如何 什么 为什么 为何 哪些 哪个 是否 能否 可以 可能 能 会 要 想 需要
    我 你 他 她 它 我们 你们 他们 请 请问 有 没有 没 也 都 就 还 又 被 把 对 等 及 以及
    时 时候 中 里 上 下 后 前 进行 出现 使用 用 问题 方法 办法
    """.split()
)

_jieba_lock = threading.Lock()
GLOSSARY_PATH = Path(__file__).parent / "data" / "glossary.toml"


def load_tokenizer() -> None:
    """Load jieba's dictionary now (about half a second) rather than at the first Chinese
    question: a server does this before it takes requests."""
    _jieba()


@lru_cache(maxsize=1)
def _jieba() -> Any:
    """jieba, taught the field's Chinese terms from the glossary so it keeps them whole."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    with _jieba_lock:
        jieba.initialize()
        if GLOSSARY_PATH.exists():
            with open(GLOSSARY_PATH, "rb") as f:
                for term in tomllib.load(f).get("term", []):
                    for word in term.get("zh", []):
                        if " " not in word.strip():
                            jieba.add_word(unicodedata.normalize("NFKC", word.strip()).lower())
    return jieba


# C0 controls but tab and newline, DEL, C1 controls, lone surrogates (from "\ud800" in JSON), and the
# bidirectional controls (marks, embeddings, overrides, isolates), which would turn the text around it
# on the insights page (a question starting with U+202E shows reversed).
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean_query(text: str) -> str:
    """`text` as typed by a person: control characters, bidirectional controls and lone surrogates removed, line
    breaks as `\\n`.

    A query or chat message can carry bytes no one typed (a NUL, a terminal escape, half
    of a UTF-16 pair); they cannot be searched for, the embedder cannot encode a lone
    surrogate, and none of them belongs in the insights database or the logs.
    """
    return _UNPRINTABLE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def checked_query(text: str, max_chars: int, field: str, what: str, traces: bool = True) -> str:
    """`text` as it is searched, chatted about or linked (`clean_query`, trimmed); a QueryError naming `field`
    when it is empty or longer than `max_chars`, the message calling it the `what` (query, message, question).

    With `traces`, a pasted stack trace longer than `max_chars` is taken when its reduction fits
    (`kb.stacktrace.fits`); without, `max_chars` is the limit of the text itself."""
    text = clean_query(text).strip()
    if not text:
        raise QueryError(field, f"the {what} is empty")
    if traces and not fits(text, max_chars):
        raise QueryError(field, too_long(what, len(text), max_chars))
    if not traces and len(text) > max_chars:
        raise QueryError(field, f"the {what} is {len(text)} characters; the limit is {max_chars}")
    return text


def question_key(text: str) -> str:
    """A question text as questions are told apart (insights' groups, links, held-out questions): case and
    surrounding spaces aside."""
    return text.strip().lower()


def normalize(text: str) -> str:
    """Full-width to half-width (NFKC) and lower case: what matching compares."""
    return unicodedata.normalize("NFKC", text).lower()


_CJK_CHAR = re.compile(rf"[{_CJK}]")


def is_cjk(char: str) -> bool:
    return bool(_CJK_CHAR.match(char))


def has_cjk(text: str) -> bool:
    return bool(_CJK_CHAR.search(text))


def detect_lang(text: str) -> str:
    """`zh` when the text has Chinese words in it, else `en`.

    Chinese questions are full of English identifiers and error text, so a couple of
    Chinese characters decide it; English text rarely carries any.
    """
    return "zh" if len(re.findall(rf"[{_CJK}]", text)) >= 2 else "en"


# A search tokenizes its question, and the glossary forms it meets, on the event loop: the
# tokens of a run (a word, an identifier, a stretch of Chinese) are kept for the runs seen
# most recently, as questions share most of their words.
RUNS_KEPT = 8192
# Characters of one run of Chinese jieba reads at once: its model of unknown words (a Viterbi pass that copies its
# path at each character) takes time quadratic in a run (75 s for one of 65,536), and a clause between two marks of
# punctuation is far shorter, so only a run no text has is cut.
JIEBA_RUN = 200


@lru_cache(maxsize=RUNS_KEPT)
def _chinese_tokens(run: str) -> tuple[str, ...]:
    return tuple(w for w in _jieba().cut_for_search(run) if w.strip())


@lru_cache(maxsize=RUNS_KEPT)
def _identifier_tokens(run: str) -> tuple[str, ...]:
    """`self.node2pg[node_rank]` -> the whole, its segments (`node_rank`), its words (`node`)."""
    run = run.rstrip(".:-/").lstrip("-/.:")
    if run.count("[") != run.count("]"):
        run = run.strip("[]")
    if not run:
        return ()
    whole = re.sub(r"-+", "_", run.lower())
    segments = [s for s in re.split(r"[^A-Za-z0-9_]+", run) if s.strip("_")]
    words = [w.lower() for seg in segments for w in _PART.findall(seg)]
    out = [whole] + [s.lower() for s in segments] + words
    return tuple(dict.fromkeys(out))


def tokenize(text: str, keep_stopwords: bool = False) -> list[str]:
    """The lexical tokens of `text`, in order (repeats kept for term frequency)."""
    text = unicodedata.normalize("NFKC", text)
    tokens: list[str] = []
    for match in _RUN.finditer(text):
        run = match.group()
        if is_cjk(run[0]):
            for at in range(0, len(run), JIEBA_RUN):
                tokens.extend(_chinese_tokens(run[at : at + JIEBA_RUN]))
        else:
            tokens.extend(_identifier_tokens(run))
    if keep_stopwords:
        return tokens
    return [t for t in tokens if t not in STOPWORDS and not (len(t) == 1 and t.isascii())]
