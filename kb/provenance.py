"""Who wrote the text a reader is given, said in one line in the reader's language.

An entry is given in the reader's language where it has that version. Two cases say so:
the entry has no version in that language (it is shown in the one it has), or the version
given is a translation rather than the authors' own (by this knowledge base's maintainers,
or a machine's draft not yet reviewed). The authors' own versions say nothing.
"""

from __future__ import annotations

from .entries import Entry

__all__ = ["only_in", "translation_note", "version_note", "original_url", "original_label"]

_WORDS = {
    "en": {
        "only_in": "This entry has no English version; it is shown in {language}.",
        "maintainers": "Translated from the {language} original by this knowledge base's maintainers.",
        "machine": "Machine translation of the {language} original, not yet reviewed.",
        "reviewed": "Machine translation of the {language} original, reviewed by this knowledge base's maintainers.",
        "zh": "Chinese",
        "en": "English",
        "original": "original",
    },
    "zh": {
        "only_in": "这个条目没有中文版本，下面是{language}原文。",
        "maintainers": "本条由本知识库的维护者译自{language}原文。",
        "machine": "本条为{language}原文的机器翻译，尚未审校。",
        "reviewed": "本条为{language}原文的机器翻译，已由本知识库的维护者审校。",
        "zh": "中文",
        "en": "英文",
        "original": "原文",
    },
}


def _words(reader: str) -> dict[str, str]:
    return _WORDS.get(reader, _WORDS["en"])


def only_in(shown: str, reader: str) -> str:
    """One line in the reader's language: the entry has no version in it and is shown in `shown`."""
    words = _words(reader)
    return words["only_in"].format(language=words.get(shown, shown))


def translation_note(entry: Entry, reader: str) -> str:
    """One line in the reader's language when `entry` (as given) is a translation, naming
    who made it and the original's language; "" for the authors' own text."""
    original = entry.original
    if original is None:
        return ""
    words = _words(reader)
    kind = "reviewed" if entry.translated_by == "machine" and entry.reviewed else entry.translated_by
    return words.get(kind, words["maintainers"]).format(language=words.get(original.lang, original.lang))


def version_note(entry: Entry, reader: str | None) -> str:
    """What a reader of `reader` must be told about the text of `entry` as given: that it
    is in another language, or that it is a translation; "" when neither."""
    if not reader:
        return ""
    if entry.lang != reader:
        return only_in(entry.lang, reader)
    return translation_note(entry, reader)


def original_url(entry: Entry) -> str:
    """Where the original of a translated entry is (its deep link, else its page); "" otherwise."""
    original = entry.original
    return (original.url or original.source_url) if original else ""


def original_label(reader: str) -> str:
    """The word for the original, in the reader's language: a link's text beside a translation note."""
    return _words(reader)["original"]
