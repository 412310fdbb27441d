"""What the pages say about the site and its FAQ: the site's name (the header, each page's
title and the home page's heading), the tagline and example questions, and the footer's promise, from the index served and the
settings (never a fixed list of frameworks, never this project's own name for a user's FAQ).

The site's name is `KB_SITE_NAME`, else the name the sources' manifest gives in its
`[site]` table, else the one source's title, else the frameworks' FAQ ("ROLL and slime
FAQ"), else "FAQ". The tagline is `KB_SITE_TAGLINE`, else the manifest's, else one
naming the frameworks, else one that names none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from kb.entries import Source
from kb.knowledge import KnowledgeBase

from ..settings import ServerSettings
from .strings import Translator

__all__ = ["Intro", "Site", "intro", "site", "name_site"]

MAX_EXAMPLES = 4


@dataclass(frozen=True)
class Site:
    """The site as a page in one language names it."""

    name: str  # the header's brand, the pages' <title> and the home page's heading
    tagline: str
    footer: str  # what every answer is, and whether it links to a pinned copy of the original


@dataclass(frozen=True)
class Intro:
    title: str
    tagline: str
    examples: list[str]


def _names(names: list[str], lang: str) -> str:
    """ "A, B and C" / "A、B 和 C"."""
    if len(names) < 2:
        return "".join(names)
    if lang == "zh":
        return "、".join(names[:-1]) + " 和 " + names[-1]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _footer(sources: Sequence[Source], t: Translator) -> str:
    """The promise of a link to a pinned copy only where the sources have one."""
    linked = [bool(s.url) for s in sources]
    if all(linked):
        return t("footer_note")
    return t("footer_note_some_linked") if any(linked) else t("footer_note_unlinked")


def site(kb: KnowledgeBase | None, settings: ServerSettings, lang: str) -> Site:
    """The site as the index `kb` and the settings name it, in `lang` (see `name_site`).
    Without an index (an error page before one loads): the settings, else plain words."""
    if kb is None:
        t = Translator(lang)
        name = settings.site_name or t("site_name_default")
        return Site(name, settings.site_tagline, t("footer_note_unlinked"))
    return name_site(kb.sources, kb.meta.site, settings, lang)


def name_site(
    sources: Sequence[Source], given: Mapping[str, Mapping[str, str]], settings: ServerSettings, lang: str
) -> Site:
    """The site's name, heading, tagline and footer in `lang`, for an index of `sources` whose
    manifests gave `given` ({"name": {lang: text}, "tagline": {...}}); see the module's docstring."""
    t = Translator(lang)
    frameworks = _names(list(dict.fromkeys(s.framework for s in sources if s.framework)), lang)
    own = given.get("name", {}).get(lang, "")
    one = sources[0].title_in(lang) if len(sources) == 1 else ""
    named = t("home_title", frameworks=frameworks) if frameworks else ""
    name = settings.site_name or own or one or named or t("site_name_default")
    plain = "tagline_plain_several" if len(sources) > 1 else "tagline_plain_one"
    tagline = (
        settings.site_tagline
        or given.get("tagline", {}).get(lang, "")
        or (t("tagline", frameworks=frameworks) if frameworks else t(plain))
    )
    return Site(name, tagline, _footer(sources, t))


def intro(kb: KnowledgeBase, lang: str, settings: ServerSettings | None = None) -> Intro:
    """The home page's heading and tagline (see `site`), and the examples: one question from
    each source (the shortest it has in `lang`, for a chip that reads at a glance)."""
    named = site(kb, settings or ServerSettings.of(kb.settings), lang)
    questions: dict[str, str] = {}
    for entry in kb.entries:
        shown = entry.localized(lang)
        if shown.lang != lang and entry.source in questions:
            continue
        best = questions.get(entry.source)
        if best is None or len(shown.question) < len(best):
            questions[entry.source] = shown.question
    return Intro(named.name, named.tagline, list(questions.values())[:MAX_EXAMPLES])
