"""The TOML data files (tags, glossary, sources manifest, interface strings), each broken in
the four common ways: every fault is one SourceError naming the file, the line, the table
and the field."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Callable, Iterator

import pytest

from ingest.manifest import load_manifest
from kb import wording as i18n
from kb.errors import SourceError
from kb.glossary import Glossary
from kb.settings import SHIPPED_SOURCES
from kb.tags import TAGS_PATH, load_tags
from kb.text import GLOSSARY_PATH

Loader = Callable[[Path], object]


def _load_strings(path: Path) -> object:
    i18n.STRINGS_FILE = path
    i18n.strings.cache_clear()
    return i18n.strings()


@pytest.fixture(autouse=True)
def _shipped_strings_afterwards() -> Iterator[None]:
    shipped = i18n.STRINGS_FILE
    yield
    i18n.STRINGS_FILE = shipped
    i18n.strings.cache_clear()


# name -> (the shipped file, how to load a copy of it)
FILES: dict[str, tuple[Path, Loader]] = {
    "tags": (TAGS_PATH, load_tags),
    "glossary": (GLOSSARY_PATH, Glossary.from_file),
    "sources": (SHIPPED_SOURCES / "sources.toml", lambda path: load_manifest(path.parent)),
    "strings": (i18n.STRINGS_FILE, _load_strings),
}

# (file, fault, text replaced, replacement, the message after "{file}:{line}: " (for a syntax
# error: the line it quotes), the text on the line named)
CASES = [
    (
        "tags",
        "wrong-type",
        'zh = "安装与依赖"',
        "zh = 3",
        "tag 'installation': field 'zh' must be a string, got 3",
        "zh = 3",
    ),
    (
        "tags",
        "missing",
        'en = "Installation"\n',
        "",
        "tag 'installation': missing required field 'en'",
        '[[tag]]\nid = "installation"',
    ),
    (
        "tags",
        "unknown",
        'id = "installation"\n',
        'id = "installation"\ncolour = "red"\n',
        "tag 'installation': unknown field 'colour'",
        'colour = "red"',
    ),
    ("tags", "syntax", 'zh = "安装与依赖"', "zh = 安装与依赖", "zh = 安装与依赖", "zh = 安装与依赖"),
    (
        "glossary",
        "wrong-type",
        'zh = ["显存"]',
        'zh = "显存"',
        "[[term]] #1: field 'zh' must be a list, got '显存'",
        'zh = "显存"',
    ),
    (
        "glossary",
        "missing",
        'en = ["gpu memory", "vram", "memory"]\n',
        "",
        "[[term]] #1: missing required field 'en'",
        '[[term]]\nzh = ["显存"]',
    ),
    (
        "glossary",
        "unknown",
        'zh = ["显存"]\n',
        'zh = ["显存"]\nfr = ["mémoire"]\n',
        "[[term]] #1: unknown field 'fr'",
        'fr = ["mémoire"]',
    ),
    ("glossary", "syntax", 'zh = ["显存"]', "zh = [显存]", "zh = [显存]", "zh = [显存]"),
    (
        "sources",
        "wrong-type",
        'version = "2025-07-31"',
        "version = 20250731",
        "source 'roll': field 'version' must be a string, got 20250731",
        "version = 20250731",
    ),
    (
        "sources",
        "missing",
        'framework = "ROLL"\nlang = "zh"\n',
        'framework = "ROLL"\n',
        "source 'roll': missing required field 'lang'",
        '[[source]]\nname = "roll"',
    ),
    (
        "sources",
        "unknown",
        'name = "roll"\n',
        'name = "roll"\nlicence = "MIT"\n',
        "source 'roll': unknown field 'licence'",
        'licence = "MIT"',
    ),
    (
        "sources",
        "syntax",
        'en = "ROLL Q&A" }',
        "en = ROLL Q&A }",
        'title = { zh = "ROLL 问答", en = ROLL Q&A }',
        'title = { zh = "ROLL 问答"',
    ),
    (
        "sources",
        "title-language",
        'en = "ROLL Q&A" }',
        'fr = "ROLL Q&A" }',
        "source 'roll': field 'title': unknown language 'fr' (expected 'zh' or 'en')",
        'title = { zh = "ROLL 问答"',
    ),
    (
        "strings",
        "wrong-type",
        'en = "{frameworks} FAQ"',
        "en = 3",
        "[home_title]: field 'en' must be a string or a list of strings, got 3",
        "home_title = ",
    ),
    (
        "strings",
        "missing",
        ', en = "{frameworks} FAQ"',
        "",
        "[home_title]: missing required field 'en'",
        "home_title = ",
    ),
    (
        "strings",
        "unknown",
        'en = "{frameworks} FAQ"',
        'en = "{frameworks} FAQ", fr = "FAQ"',
        "[home_title]: unknown field 'fr'",
        "home_title = ",
    ),
    (
        "strings",
        "syntax",
        'en = "{frameworks} FAQ" }',
        'en = "{frameworks} FAQ"',
        'home_title = { zh = "{frameworks} 常见问题", en = "{frameworks} FAQ"',
        "home_title = ",
    ),
]


def _line(text: str, marker: str) -> int:
    """The 1-based line on which `marker` starts."""
    assert text.count(marker) >= 1, marker
    return text[: text.index(marker)].count("\n") + 1


@pytest.mark.parametrize(
    ("name", "fault", "old", "new", "message", "marker"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
def test_a_broken_data_file_names_the_file_line_and_field(
    tmp_path: Path, name: str, fault: str, old: str, new: str, message: str, marker: str
) -> None:
    shipped, load = FILES[name]
    if name == "sources":  # the manifest is read with the documents it lists
        shutil.copytree(shipped.parent, tmp_path, dirs_exist_ok=True)
    path = tmp_path / shipped.name
    text = shipped.read_text(encoding="utf-8")
    assert old in text, f"{shipped} changed: pick another line to break"
    broken = text.replace(old, new, 1)
    path.write_text(broken, encoding="utf-8")
    line = _line(broken, marker)

    with pytest.raises(SourceError) as caught:
        load(path)
    assert caught.value.path == path
    assert caught.value.line == line
    if fault == "syntax":  # tomllib's own words, then the line
        expected = rf"TOML syntax error: [^\n]+ \(at line {line}, column \d+\) in `{re.escape(message)}`"
        assert re.fullmatch(re.escape(f"{path}:{line}: ") + expected, str(caught.value))
    else:
        assert str(caught.value) == f"{path}:{line}: {message}"
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("name", FILES)
def test_the_shipped_data_files_load(name: str) -> None:
    shipped, load = FILES[name]
    assert load(shipped)


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "tags.toml"
    path.write_bytes(b'fallback = "\xff"\n')
    with pytest.raises(SourceError, match=r"tags\.toml: not UTF-8: invalid start byte"):
        load_tags(path)


def test_a_key_of_thousands_of_dotted_parts_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "tags.toml"
    path.write_text('fallback = "other"\n' + ".".join(["a"] * 16_384) + ' = "x"\n', encoding="utf-8")
    message = r"tags\.toml:2: a key of 16,384 dotted parts, a data file's keys have at most 64"
    with pytest.raises(SourceError, match=message):
        load_tags(path)


def test_a_fault_in_a_list_names_the_item(tmp_path: Path) -> None:
    path = tmp_path / "glossary.toml"
    path.write_text(
        '[[term]]\nzh = ["显存"]\nen = ["vram"]\n\n[[term]]\nzh = ["内存"]\nen = ["ram", 3]\n', encoding="utf-8"
    )
    with pytest.raises(SourceError) as caught:
        Glossary.from_file(path)
    assert str(caught.value) == f"{path}:7: [[term]] #2: field 'en' item 2 must be a string, got 3"


def test_a_fault_in_a_translation_names_its_table(tmp_path: Path) -> None:
    shutil.copytree(SHIPPED_SOURCES, tmp_path, dirs_exist_ok=True)
    text = (tmp_path / "sources.toml").read_text(encoding="utf-8")
    broken = text.replace(
        'lang = "en"\nurl = "https://github.com/alibaba/ROLL', 'lang = "en"\nurls = "https://github.com/alibaba/ROLL', 1
    )
    assert broken != text
    (tmp_path / "sources.toml").write_text(broken, encoding="utf-8")
    with pytest.raises(SourceError) as caught:
        load_manifest(tmp_path)
    line = _line(broken, 'urls = "')
    assert (
        str(caught.value)
        == f"{tmp_path / 'sources.toml'}:{line}: source 'roll', [source.translation]: unknown field 'urls'"
    )
