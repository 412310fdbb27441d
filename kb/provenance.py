"""Who wrote the text a reader is given, said in one line in the reader's language.

An entry is given in the reader's language where it has that version. Two cases say so:
the entry has no version in that language (it is shown in the one it has), or the version
given is a translation rather than the authors' own (by this knowledge base's maintainers,
or a machine's draft not yet reviewed). The authors' own versions say nothing.
"""

from __future__ import annotations

from .entries import Entry
from .wording import strings, words

__all__ = ["only_in", "translation_note", "version_note", "original_url", "original_label"]

_TRANSLATORS = ("maintainers", "machine", "reviewed")  # who a translation note names (kb/data/strings.toml: note_*)


def _language(lang: str, reader: str) -> str:
    """A language's name in the reader's language; the code itself for one the table does not name."""
    return words(f"note_language_{lang}", reader) if f"note_language_{lang}" in strings() else lang


def only_in(shown: str, reader: str, said_in: str | None = None) -> str:
    """One line in `said_in` (default: the reader's language): the entry has no version in
    the reader's language and is shown in `shown`."""
    said_in = said_in or reader
    return words("note_only_in", said_in, missing=_language(reader, said_in), language=_language(shown, said_in))


def translation_note(entry: Entry, reader: str) -> str:
    """One line in `reader` (a language) when `entry` (as given) is a translation, naming
    who made it and the original's language; "" for the authors' own text."""
    original = entry.original
    if original is None:
        return ""
    kind = "reviewed" if entry.translated_by == "machine" and entry.reviewed else entry.translated_by
    return words(
        f"note_{kind if kind in _TRANSLATORS else 'maintainers'}", reader, language=_language(original.lang, reader)
    )


def version_note(entry: Entry, reader: str | None, said_in: str | None = None) -> str:
    """What a reader of `reader` must be told about the text of `entry` as given: that it
    is in another language, or that it is a translation; "" when neither. Said in `said_in`
    (a page's language, which may not be the entries'), else in the reader's."""
    if not reader:
        return ""
    if entry.lang != reader:
        return only_in(entry.lang, reader, said_in)
    return translation_note(entry, said_in or reader)


def original_url(entry: Entry) -> str:
    """Where the original of a translated entry is (its deep link, else its page); "" otherwise."""
    original = entry.original
    return (original.url or original.source_url) if original else ""


def original_label(reader: str) -> str:
    """The word for the original, in the reader's language: a link's text beside a translation note."""
    return words("note_original", reader)
