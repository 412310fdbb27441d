"""Interface language: the string table is complete, the header and the toggle pick the language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from server.rendering.strings import COOKIE, LANGS, Translator, choose_lang, negotiate, strings
from tests.support.paths import ROOT

TEMPLATES = ROOT / "templates"


def test_every_string_has_both_languages_and_no_empty_text() -> None:
    for key, values in strings().items():
        assert set(values) == set(LANGS), key
        for lang in LANGS:
            assert values[lang], (key, lang)


def test_placeholders_match_between_languages() -> None:
    for key, values in strings().items():
        if isinstance(values["zh"], str):
            assert set(re.findall(r"{(\w+)}", values["zh"])) == set(re.findall(r"{(\w+)}", values["en"])), key


def test_every_key_the_templates_use_exists() -> None:
    used = set()
    for path in TEMPLATES.glob("*.html"):
        # Literal keys only: t("key") or t("key", n=...); t("prefix_" ~ name) is built at run time.
        used |= set(re.findall(r"""\bt\(\s*["'](\w+)["']\s*[,)]""", path.read_text(encoding="utf-8")))
        used |= set(re.findall(r"""\bt\.list\(\s*["'](\w+)["']""", path.read_text(encoding="utf-8")))
    assert used, "no t() calls found"
    assert used - set(strings()) == set()


@pytest.mark.parametrize(
    ("header", "lang"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh"),
        ("en-US,en;q=0.9,zh-CN;q=0.8", "en"),
        ("fr-FR,fr;q=0.9,zh-TW;q=0.5", "zh"),
        ("en;q=0.3, zh;q=0.7", "zh"),
        ("zh;q=0, en", "en"),
        ("de", "en"),
        ("", "en"),
        (None, "en"),
        ("zh;q=abc", "en"),
    ],
)
def test_negotiate(header: str | None, lang: str) -> None:
    assert negotiate(header) == lang


def test_cookie_wins_over_header_but_only_when_known() -> None:
    assert choose_lang("en", "zh-CN") == "en"
    assert choose_lang("zh", "en-US") == "zh"
    assert choose_lang("fr", "zh-CN") == "zh"
    assert choose_lang(None, None) == "en"


def test_translator_formats_and_switches() -> None:
    assert Translator("en")("results_count", n=3) == "3 results"
    assert Translator("en")("entries_count", n=1) == "1 entry" and Translator("en")("entries_count", n=2) == "2 entries"
    assert Translator("zh")("entries_count", n=1) == "1 条"
    assert Translator("en")("insights_more_wordings", n=1) == "and 1 more wording"
    assert Translator("zh")("results_count", n=3) == "3 条结果"
    assert Translator("zh").other == "en" and Translator("en").other == "zh"


def test_page_follows_accept_language(client: TestClient) -> None:
    zh = client.get("/", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    en = client.get("/", headers={"Accept-Language": "en-US,en;q=0.9"})
    assert 'lang="zh-CN"' in zh.text and Translator("zh")("search_placeholder") in zh.text
    assert 'lang="en"' in en.text and Translator("en")("search_placeholder") in en.text
    assert "Accept-Language" in zh.headers["vary"]


def test_toggle_sets_a_cookie_that_overrides_the_header(client: TestClient) -> None:
    response = client.get("/lang/zh?next=/search%3Fq%3Doom", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/search?q=oom"
    assert f"{COOKIE}=zh" in response.headers["set-cookie"]
    client.cookies.clear()
    page = client.get("/chat", headers={"Accept-Language": "en-US", "Cookie": f"{COOKIE}=zh"})
    assert Translator("zh")("chat_title") in page.text
    client.cookies.clear()


@pytest.mark.parametrize(
    "target", ["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"]
)
def test_toggle_only_returns_to_this_site(client: TestClient, target: str) -> None:
    response = client.get("/lang/en", params={"next": target}, follow_redirects=False)
    assert response.headers["location"] == "/"
    client.cookies.clear()


def test_toggle_rejects_an_unknown_language(client: TestClient) -> None:
    response = client.get("/lang/fr", headers={"Accept": "application/json"})
    assert response.status_code == 422
    assert response.json()["error"].startswith("lang:")


def test_every_channels_words_are_beside_it_and_the_library_holds_none() -> None:
    """One mechanism: the library's table, the chat bots' and each channel's `strings.toml` in its package, read by
    one loader; the server's table is all of them, and the library's names no channel."""
    from kb import wording
    from kb.wording import STRINGS_FILE, words
    from server.channels import registry
    from server.rendering.strings import tables

    found = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("*/**/strings.toml"))
    assert found == sorted([str(STRINGS_FILE.relative_to(ROOT)), *(str(p.relative_to(ROOT)) for p in tables())])
    assert {"server/channels/slack/strings.toml", "server/channels/github/strings.toml"} <= set(found)
    library = wording.strings()
    named = [n for n in registry.names() if n not in ("web", "widget", "api")]
    assert [key for key in library if key.startswith(("bot_", *named)) or "slack" in key] == []
    assert set(strings()) > set(library)
    assert Translator("zh")("answer_source") == words("answer_source", "zh") == "来源"
    assert Translator("zh")("github_in_faq") == "FAQ 原文" and Translator("en")("slack_share") == "Share in channel"


def test_a_key_two_tables_hold_is_refused_naming_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from server.rendering import strings as module

    twice = tmp_path / "strings.toml"
    twice.write_text('answer_source = { zh = "出处", en = "From" }\n', encoding="utf-8")
    monkeypatch.setattr(module, "tables", lambda: [twice])
    module.strings.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"key 'answer_source' is already in .*kb/data/strings.toml"):
            module.strings()
    finally:
        module.strings.cache_clear()


@pytest.mark.slow
def test_a_chinese_page_words_an_english_results_translation_note_in_chinese(client: TestClient) -> None:
    """An English question on a Chinese page: the entries come in English (the question's language), and the note
    that the English is the maintainers' translation is in the page's language (docs/your-faqs.md)."""
    page = client.get(
        "/search", params={"q": "Unable to pre-compile async_io"}, headers={"Accept-Language": "zh-CN"}
    ).text
    notes = re.findall(r'<p class="only-in" lang="([^"]+)">([^<]*)', page)
    assert ("zh-CN", "本条由本知识库的维护者译自中文原文。 ") in notes, notes
    assert "Translated from the Chinese original" not in page
    english = client.get(
        "/search", params={"q": "Unable to pre-compile async_io"}, headers={"Accept-Language": "en"}
    ).text
    assert ("en", "Translated from the Chinese original by this knowledge base&#39;s maintainers. ") in re.findall(
        r'<p class="only-in" lang="([^"]+)">([^<]*)', english
    )
