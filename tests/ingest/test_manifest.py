"""The sources manifest: the shipped one, a default one, and every way one can be wrong."""

from pathlib import Path

import pytest

from ingest.manifest import document_lang, load_manifest
from ingest.sources import parse_sources
from kb.entries import Source
from kb.errors import SourceError
from kb.settings import SHIPPED_SOURCES

GOOD = """
[[source]]
name = "demo"
file = "demo.md"
title = "Demo FAQ"
framework = "Demo"
lang = "en"
version = "1.0"
url = "https://example.org/demo/faq.md"
entries = "list"
"""


def test_shipped_manifest():
    sources = load_manifest(SHIPPED_SOURCES)
    assert [s.name for s in sources] == ["chatlearn-v1", "roll", "slime", "chatlearn", "training-env", "roll-npu"]
    assert sources[2] == Source(
        name="slime",
        file="slime.md",
        title="slime 问答",
        framework="slime",
        lang="zh",
        version="2025-06-30",
        url="https://github.com/THUDM/slime/blob/a3d5cbf30a50c867d8eb0f61121db89faea9d426/docs/zh/qa.md",
        live_url="https://github.com/THUDM/slime/blob/main/docs/zh/get_started/qa.md",
        entries="list",
        license="Apache-2.0",
        translation=Source(
            name="slime",
            file="slime.en.md",
            title="slime Q&A",
            framework="slime",
            lang="en",
            version="2025-06-30",
            url="https://github.com/THUDM/slime/blob/a3d5cbf30a50c867d8eb0f61121db89faea9d426/docs/en/qa.md",
            entries="list",
            license="Apache-2.0",
            titles={"zh": "slime 问答", "en": "slime Q&A"},
        ),
        titles={"zh": "slime 问答", "en": "slime Q&A"},
    )
    assert [s.translation.file if s.translation else None for s in sources] == [
        "chatlearn-v1.en.md",
        "roll.en.md",
        "slime.en.md",
        "chatlearn.en.md",
        "training-env.en.md",
        "roll-npu.en.md",
    ]
    # The authors wrote five English pages; the training-environment notes have none upstream,
    # and the English version is the maintainers' translation, with its date.
    assert [s.translation.translated_by for s in sources] == ["", "", "", "", "maintainers", ""]
    assert sources[4].translation.translated_on == "2026-11-24" and sources[4].translation.url == ""
    assert "/main/" not in sources[3].url and "248875a4a5617b3ec83511a51e25d5565b0ae071" in sources[3].url
    # A path with spaces is percent-encoded in the pinned link, as a browser sends it.
    npu = sources[5]
    assert (npu.name, npu.framework, npu.version, npu.entries) == ("roll-npu", "ROLL", "2026-08-17", "headings")
    assert npu.url == (
        "https://github.com/alibaba/ROLL/blob/8eb27cc2dc34c4d1310b169d9b86d339004d811a/docs_roll/i18n/zh-Hans/"
        "docusaurus-plugin-content-docs/current/User%20Guides/Hardware%20Support/ascend_npu_faq.md"
    )
    assert npu.live_url == "https://alibaba.github.io/ROLL/zh-Hans/docs/User%20Guides/Hardware%20Support/ascend_npu_faq"


def make(tmp_path: Path, manifest: str, files: tuple[str, ...] = ("demo.md",)) -> Path:
    for name in files:
        (tmp_path / name).write_text("1. **Q?**\n\n   A.\n", encoding="utf-8")
    (tmp_path / "sources.toml").write_text(manifest, encoding="utf-8")
    return tmp_path


def test_good_manifest_with_optional_fields_left_out(tmp_path):
    manifest = GOOD.replace('version = "1.0"\n', "").replace('entries = "list"\n', "")
    assert load_manifest(make(tmp_path, manifest)) == [
        Source(
            "demo",
            "demo.md",
            "Demo FAQ",
            "Demo",
            "en",
            "",
            "https://example.org/demo/faq.md",
            titles={"zh": "Demo FAQ", "en": "Demo FAQ"},
        )  # one title: the same in every language
    ]


def error(tmp_path: Path, manifest: str, files: tuple[str, ...] = ("demo.md",)) -> SourceError:
    with pytest.raises(SourceError) as caught:
        load_manifest(make(tmp_path, manifest, files))
    assert caught.value.path == tmp_path / "sources.toml"
    return caught.value


def test_missing_directory(tmp_path):
    with pytest.raises(SourceError, match="sources directory does not exist") as caught:
        load_manifest(tmp_path / "nowhere")
    assert caught.value.path == tmp_path / "nowhere"


def test_directory_without_manifest_or_markdown(tmp_path):
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(SourceError, match=r"no sources\.toml and no \*\.md files"):
        load_manifest(tmp_path)


def test_toml_syntax_error_names_the_line(tmp_path):
    found = error(tmp_path, GOOD.replace('title = "Demo FAQ"', "title = Demo FAQ"))
    assert found.line == 5
    assert "TOML syntax error" in str(found)


def test_missing_required_field(tmp_path):
    found = error(tmp_path, GOOD.replace('lang = "en"\n', "", 1))
    assert found.message == "source 'demo': missing required field 'lang'"


def test_a_source_need_not_name_a_framework(tmp_path):
    (source,) = load_manifest(make(tmp_path, GOOD.replace('framework = "Demo"\n', "")))
    assert source.framework == ""


def test_unknown_entries_style(tmp_path):
    found = error(tmp_path, GOOD.replace('entries = "list"', 'entries = "table"'))
    assert found.message == "source 'demo': unknown entries style 'table' (expected 'headings' or 'list')"


def test_unknown_field_and_bad_lang(tmp_path):
    assert "unknown field 'entry'" in error(tmp_path, GOOD.replace("entries =", "entry =")).message
    assert "unknown lang 'fr'" in error(tmp_path, GOOD.replace('lang = "en"', 'lang = "fr"')).message


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x", "ftp://example.org/faq.md"])
def test_a_source_url_must_be_http(tmp_path, url):
    found = error(tmp_path, GOOD.replace('"https://example.org/demo/faq.md"', f'"{url}"'))
    assert found.message == f"source 'demo': field 'url' must be an http(s) URL, got {url!r}"


def test_field_of_the_wrong_type(tmp_path):
    found = error(tmp_path, GOOD.replace('version = "1.0"', "version = 1.0"))
    assert found.message == "source 'demo': field 'version' must be a string, got 1.0"


def test_listed_file_that_does_not_exist(tmp_path):
    found = error(tmp_path, GOOD, files=())
    assert found.message == "source 'demo': file 'demo.md' does not exist"


def test_duplicate_names(tmp_path):
    found = error(tmp_path, GOOD + GOOD)
    assert found.message == "duplicate source name 'demo'"


def test_no_source_tables(tmp_path):
    assert error(tmp_path, "# nothing here\n").message == "no [[source]] tables"


def test_default_manifest_for_plain_markdown(tmp_path):
    (tmp_path / "faq.md").write_text(
        "# 我们的常见问题\n\n## 如何安装？\n\n运行 `pip install x`。\n\n## 为什么显存不足？\n\n调小 batch size。\n",
        encoding="utf-8",
    )
    (tmp_path / "notes.md").write_text(
        "Some notes\n\n1. **How do I resume training?**\n\n   Pass `--load`.\n\n"
        "2. **Why is it slow?**\n\n   See [the guide](guide.md).\n",
        encoding="utf-8",
    )
    assert load_manifest(tmp_path) == [
        Source(
            "faq", "faq.md", "我们的常见问题", "", "zh", "", "", entries="headings", titles={"zh": "我们的常见问题"}
        ),
        Source("notes", "notes.md", "Notes", "", "en", "", "", entries="list", titles={"en": "Notes"}),
    ]
    entries = parse_sources(tmp_path)
    assert [(e.source, e.question, e.url) for e in entries] == [
        ("faq", "如何安装？", ""),
        ("faq", "为什么显存不足？", ""),
        ("notes", "How do I resume training?", ""),
        ("notes", "Why is it slow?", ""),
    ]
    assert entries[-1].answer == "See [the guide](guide.md)."


def test_default_manifest_reads_a_one_line_document_as_headings(tmp_path):
    source = SHIPPED_SOURCES / "chatlearn.md"
    (tmp_path / "chatlearn.md").write_bytes(source.read_bytes())
    (found,) = load_manifest(tmp_path)
    assert (found.title, found.lang, found.entries) == ("常见问题", "zh", "headings")


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("如何加快 FSDP 的训练速度", "zh"),
        ("How to speed up FSDP training", "en"),
        ("", "en"),
        ("checkpoint saving 显存", "zh"),  # 2 CJK of 19 letters: over 10%
        ("A long English sentence about checkpoints and the 显存 limit", "en"),
    ],
)
def test_document_lang(text, lang):
    assert document_lang(text) == lang


def test_a_scope_reaches_every_entry_of_its_source_and_a_blank_word_is_named(tmp_path):
    folder = make(tmp_path, GOOD + 'scope = ["NPU", "昇腾"]\n')
    (folder / "demo.md").write_text("1. **Q one**\n\n   A one.\n\n2. **Q two**\n\n   A two.\n", encoding="utf-8")
    (source,) = load_manifest(folder)
    assert source.scope == ("NPU", "昇腾")
    assert [entry.scope for entry in parse_sources(folder)] == [("NPU", "昇腾")] * 2
    found = error(tmp_path, GOOD + 'scope = ["NPU", " "]\n')
    assert found.message.startswith("source 'demo': scope: ' ' is not a word")
    assert found.line == 11
