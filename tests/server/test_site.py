"""The site under its owner's name: titles per language in the manifest, the `[site]` table,
a readable title for a folder without a manifest, and how the name and tagline are chosen."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.manifest import load_manifest, load_site, readable_name
from ingest.sources import parse_sources
from kb.entries import Source
from kb.errors import SourceError
from kb.settings import SHIPPED_SOURCES
from server.rendering.intro import Site, name_site
from server.settings import ServerSettings

SOURCE = """
[[source]]
name = "team"
file = "faq.md"
title = {title}
framework = "Team"
lang = "zh"
"""
TRANSLATION = """
[source.translation]
file = "faq.en.md"
lang = "en"
"""


def folder(tmp_path: Path, manifest: str) -> Path:
    (tmp_path / "faq.md").write_text("## 如何申请 GPU？\n\n在 #infra 频道里问。\n", encoding="utf-8")
    (tmp_path / "faq.en.md").write_text("## How do I get a GPU?\n\nAsk in #infra.\n", encoding="utf-8")
    (tmp_path / "sources.toml").write_text(manifest, encoding="utf-8")
    return tmp_path


def fault(tmp_path: Path, manifest: str) -> SourceError:
    with pytest.raises(SourceError) as caught:
        load_manifest(folder(tmp_path, manifest))
    return caught.value


# Titles in the manifest


def test_a_title_per_language_names_the_source_on_each_languages_pages(tmp_path: Path) -> None:
    manifest = SOURCE.format(title='{ zh = "团队常见问题", en = "Team FAQ" }') + TRANSLATION
    (source,) = load_manifest(folder(tmp_path, manifest))
    assert (source.title, source.titles) == ("团队常见问题", {"zh": "团队常见问题", "en": "Team FAQ"})
    assert (source.translation.title, source.translation.titles) == ("Team FAQ", source.titles)
    (entry,) = parse_sources(tmp_path)
    assert entry.source_titles == {"zh": "团队常见问题", "en": "Team FAQ"}
    assert [entry.source_title_in(lang) for lang in ("zh", "en")] == ["团队常见问题", "Team FAQ"]
    assert [entry.localized("en").source_title_in(lang) for lang in ("zh", "en")] == ["团队常见问题", "Team FAQ"]


def test_one_title_is_the_title_in_every_language_as_before(tmp_path: Path) -> None:
    (source,) = load_manifest(folder(tmp_path, SOURCE.format(title='"Team FAQ"') + TRANSLATION))
    assert source.titles == {"zh": "Team FAQ", "en": "Team FAQ"}


def test_a_translations_own_title_names_that_language(tmp_path: Path) -> None:
    manifest = SOURCE.format(title='"团队常见问题"') + TRANSLATION + 'title = "Team FAQ"\n'
    (source,) = load_manifest(folder(tmp_path, manifest))
    assert source.titles == {"zh": "团队常见问题", "en": "Team FAQ"}
    assert source.translation.title == "Team FAQ"


def test_a_title_in_one_language_is_the_title_in_the_other_too(tmp_path: Path) -> None:
    (source,) = load_manifest(folder(tmp_path, SOURCE.format(title='{ en = "Team FAQ" }')))
    assert (source.title, source.title_in("zh"), source.title_in("en")) == ("Team FAQ", "Team FAQ", "Team FAQ")


@pytest.mark.parametrize(
    ("title", "message"),
    [
        ('{ zh = "团队", fr = "Équipe" }', "field 'title': unknown language 'fr' (expected 'zh' or 'en')"),
        ('{ zh = "" }', "field 'title': the zh text must be a non-empty string, got ''"),
        ("{ zh = 3 }", "field 'title': the zh text must be a non-empty string, got 3"),
        ("{}", "field 'title' must be a string or a table of one per language"),
        ('""', "field 'title' is empty"),
        ('["Team FAQ"]', "field 'title' must be a string or a table of one per language"),
    ],
)
def test_a_bad_title_names_the_file_line_source_and_field(tmp_path: Path, title: str, message: str) -> None:
    found = fault(tmp_path, SOURCE.format(title=title))
    assert found.path == tmp_path / "sources.toml"
    assert found.line == 5  # the title's line
    assert found.message.startswith(f"source 'team': {message}")


def test_the_shipped_sources_have_a_chinese_and_an_english_title() -> None:
    for source in load_manifest(SHIPPED_SOURCES):
        zh, en = source.title_in("zh"), source.title_in("en")
        assert zh != en, source.name
        assert any("\u4e00" <= c <= "\u9fff" for c in zh), zh
        assert not any("\u4e00" <= c <= "\u9fff" for c in en), en


# The [site] table


def test_the_site_table_names_the_site_in_each_language(tmp_path: Path) -> None:
    site = '[site]\nname = { zh = "团队知识库", en = "Team knowledge base" }\ntagline = "Ask us first."\n'
    assert load_site(folder(tmp_path, site + SOURCE.format(title='"Team FAQ"'))) == {
        "name": {"zh": "团队知识库", "en": "Team knowledge base"},
        "tagline": {"zh": "Ask us first.", "en": "Ask us first."},
    }


def test_without_a_site_table_or_a_manifest_the_site_has_no_name_of_its_own(tmp_path: Path) -> None:
    assert load_site(folder(tmp_path, SOURCE.format(title='"Team FAQ"'))) == {}
    (tmp_path / "sources.toml").unlink()
    assert load_site(tmp_path) == {}
    assert load_site(SHIPPED_SOURCES) == {"name": {"zh": "RLHF 框架 FAQ", "en": "RLHF Framework FAQ"}}


def test_with_the_shipped_faqs_beside_ones_own_the_last_folder_that_names_the_site_names_it(tmp_path: Path) -> None:
    from ingest.pipeline import site_of

    own = folder(tmp_path, '[site]\nname = "Team knowledge base"\n' + SOURCE.format(title='"Team FAQ"'))
    assert site_of([SHIPPED_SOURCES, own]) == {"name": {"zh": "Team knowledge base", "en": "Team knowledge base"}}
    (own / "sources.toml").write_text(SOURCE.format(title='"Team FAQ"'), encoding="utf-8")
    assert site_of([SHIPPED_SOURCES, own]) == {"name": {"zh": "RLHF 框架 FAQ", "en": "RLHF Framework FAQ"}}


@pytest.mark.parametrize(
    ("site", "line", "message"),
    [
        (
            '[site]\nname = { de = "Wissen" }\n',
            3,
            "[site]: field 'name': unknown language 'de' (expected 'zh' or 'en')",
        ),
        ('[site]\ntagline = "x"\n', 2, "[site]: missing required field 'name'"),
        ('[site]\nname = "x"\nslogan = "y"\n', 4, "[site]: unknown field 'slogan'"),
        ("[site]\nname = 3\n", 3, "[site]: field 'name' must be a string or a table of one per language"),
    ],
)
def test_a_bad_site_table_names_the_file_line_and_field(tmp_path: Path, site: str, line: int, message: str) -> None:
    found = fault(tmp_path, "\n" + site + SOURCE.format(title='"Team FAQ"'))
    assert (found.path, found.line) == (tmp_path / "sources.toml", line)
    assert found.message.startswith(message)


# A folder without a manifest


def test_a_folder_without_a_manifest_is_titled_by_its_heading_or_file_name_and_names_no_framework(
    tmp_path: Path,
) -> None:
    (tmp_path / "team-faq.md").write_text("## How do I get a GPU?\n\nAsk in #infra.\n", encoding="utf-8")
    (tmp_path / "onboarding.md").write_text("# 新人指南\n\n## 怎么申请账号？\n\n发工号。\n", encoding="utf-8")
    (tmp_path / "onboarding.en.md").write_text(
        "# Onboarding guide\n\n## How do I get an account?\n\nSend your id.\n", encoding="utf-8"
    )
    onboarding, team = load_manifest(tmp_path)
    assert (team.title, team.framework, team.titles) == ("Team FAQ", "", {"en": "Team FAQ"})
    assert (onboarding.title, onboarding.framework) == ("新人指南", "")
    assert onboarding.titles == {"zh": "新人指南", "en": "Onboarding guide"}
    entries = parse_sources(tmp_path)
    assert {e.source_label("en") for e in entries} == {"Onboarding guide", "Team FAQ"}
    assert {e.source_label("zh") for e in entries} == {"新人指南", "Team FAQ"}


@pytest.mark.parametrize(
    ("stem", "title"),
    [
        ("team-faq", "Team FAQ"),
        ("gpu_notes", "GPU notes"),
        ("qa", "Q&A"),
        ("onboarding", "Onboarding"),
        ("新人指南", "新人指南"),
    ],
)
def test_a_file_name_reads_as_a_title(stem: str, title: str) -> None:
    assert readable_name(stem) == title


# The name and tagline


def src(name: str, title: str, framework: str = "", url: str = "", zh: str = "") -> Source:
    titles = {"en": title} | ({"zh": zh} if zh else {})
    return Source(name, f"{name}.md", title, framework, "en", "", url, titles=titles)


SHIPPED_SITE = {"name": {"zh": "RLHF 框架 FAQ", "en": "RLHF Framework FAQ"}}
NONE = ServerSettings()
LINKED = "Every answer is quoted from a framework's own FAQ and links to a pinned copy of the original."
UNLINKED = "Every answer is quoted from the FAQ it comes from, with its file and line."
SOME = "Every answer is quoted from the FAQ it comes from, with a link to a pinned copy of the original where there is one."


@pytest.mark.parametrize(
    ("sources", "given", "settings", "lang", "expected"),
    [
        # One source of one's own: its title everywhere, no framework, no promise of links.
        (
            [src("team-faq", "Team FAQ")],
            {},
            NONE,
            "en",
            Site("Team FAQ", "What this FAQ already answers, in one search.", UNLINKED),
        ),
        (
            [src("team", "Team FAQ", zh="团队常见问题")],
            {},
            NONE,
            "zh",
            Site(
                "团队常见问题",
                "这份 FAQ 已经回答过的问题，一处搜索。",
                "答案均摘自收录的 FAQ，并注明所在文件和行号。",
            ),
        ),
        # Several sources that name no framework and no site: plain words, never a made-up name.
        (
            [src("infra", "Infra FAQ"), src("onboarding", "Onboarding")],
            {},
            NONE,
            "en",
            Site("FAQ", "What these FAQs already answer, in one search.", UNLINKED),
        ),
        # Several, with the name the owner sets in the manifest.
        (
            [src("infra", "Infra FAQ"), src("onboarding", "Onboarding")],
            {"name": {"en": "Team handbook"}},
            NONE,
            "en",
            Site("Team handbook", "What these FAQs already answer, in one search.", UNLINKED),
        ),
        # The shipped corpus: its name in both languages as the header and the heading, the frameworks in the tagline.
        (
            [src("roll", "ROLL Q&A", "ROLL", "https://x.org/a"), src("slime", "slime Q&A", "slime", "https://x.org/b")],
            SHIPPED_SITE,
            NONE,
            "zh",
            Site(
                "RLHF 框架 FAQ",
                "ROLL 和 slime 的 FAQ 已经回答过的问题，一处搜索。",
                "答案均摘自各框架官方 FAQ，并链接到原文固定版本。",
            ),
        ),
        (
            [src("roll", "ROLL Q&A", "ROLL", "https://x.org/a"), src("slime", "slime Q&A", "slime", "https://x.org/b")],
            SHIPPED_SITE,
            NONE,
            "en",
            Site(
                "RLHF Framework FAQ",
                "What the ROLL and slime FAQs already answer, in one search.",
                LINKED,
            ),
        ),
        # Some sources linked, some not: the footer says so.
        (
            [src("roll", "ROLL Q&A", "ROLL", "https://x.org/a"), src("team", "Team FAQ")],
            {},
            NONE,
            "en",
            Site("ROLL FAQ", "What the ROLL FAQs already answer, in one search.", SOME),
        ),
        # The settings win over everything the index says, in both languages.
        (
            [src("roll", "ROLL Q&A", "ROLL", "https://x.org/a")],
            {"name": {"zh": "知识库"}, "tagline": {"zh": "问吧"}},
            ServerSettings(site_name="Acme FAQ", site_tagline="Ask Acme."),
            "zh",
            Site("Acme FAQ", "Ask Acme.", "答案均摘自各框架官方 FAQ，并链接到原文固定版本。"),
        ),
        (
            [src("roll", "ROLL Q&A", "ROLL", "https://x.org/a")],
            {"tagline": {"en": "Ask ROLL."}},
            NONE,
            "en",
            Site("ROLL Q&A", "Ask ROLL.", LINKED),
        ),
    ],
)
def test_the_name_and_tagline_come_from_the_settings_then_the_index(sources, given, settings, lang, expected) -> None:
    assert name_site(sources, given, settings, lang) == expected


def test_the_site_settings_are_read_from_the_environment() -> None:
    settings = ServerSettings.from_env({"KB_SITE_NAME": "Acme FAQ", "KB_SITE_TAGLINE": "Ask Acme."})
    assert (settings.site_name, settings.site_tagline) == ("Acme FAQ", "Ask Acme.")
