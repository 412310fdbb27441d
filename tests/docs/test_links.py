"""Every link between the README, the changelog and the pages of docs/ leads somewhere.

A Markdown link or image to a relative path must name a file or folder that exists, and
its `#anchor`, if it has one, a heading of that file by GitHub's rule (the heading's text
lower-cased, punctuation but `-` and `_` dropped, spaces made `-`, Chinese kept; a repeated
heading gets `-1`, `-2`, ...). Links in code blocks and code spans are not links; links to
other sites (`https:`, `mailto:`) are not fetched.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ingest.anchors import github_anchor
from tests.support.paths import ROOT

EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # https:, mailto:, ...
HTML_ANCHOR = re.compile(r"""<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)

_markdown = MarkdownIt("commonmark").enable("table")


def documents(root: Path) -> list[Path]:
    """The README, the changelog and every page under docs/."""
    found = [root / name for name in ("README.md", "CHANGELOG.md") if (root / name).is_file()]
    return found + sorted((root / "docs").rglob("*.md"))


def _text(children: list[Token]) -> str:
    """A heading's text as GitHub renders it: its words and code, without the markup."""
    parts = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.children:
            parts.append(_text(child.children))
    return "".join(parts)


def anchors(path: Path) -> set[str]:
    """The `#anchors` GitHub gives a Markdown file: one per heading, and any `<a id=...>`."""
    tokens = _markdown.parse(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for before, token in zip(tokens, tokens[1:]):
        if before.type == "heading_open" and token.type == "inline":
            found.add(github_anchor(_text(token.children or []), seen))
    for token in tokens:
        found.update(HTML_ANCHOR.findall(token.content))
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every link and image in a Markdown file, outside code."""
    found = []
    for token in _markdown.parse(path.read_text(encoding="utf-8")):
        if token.type != "inline" or token.map is None:
            continue
        line = token.map[0] + 1
        for child in token.children or []:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type in ("link_open", "image"):
                target = child.attrs.get("href" if child.type == "link_open" else "src")
                found.append((line, str(target)))
    return found


def broken_links(root: Path, files: list[Path]) -> list[str]:
    """`file:line: link 'target': why` for every link of `files` that leads nowhere."""
    known: dict[Path, set[str]] = {}
    broken = []
    for path in files:
        for line, target in links(path):
            if EXTERNAL.match(target):
                continue
            parts = urlsplit(target)
            goal = (path.parent / unquote(parts.path)).resolve() if parts.path else path.resolve()
            where = f"{path.relative_to(root)}:{line}: link '{unquote(target)}'"
            if not goal.exists():
                broken.append(
                    f"{where}: no such file {goal.relative_to(root.resolve()) if goal.is_relative_to(root.resolve()) else goal}"
                )
            elif parts.fragment and goal.suffix == ".md":
                if goal not in known:
                    known[goal] = anchors(goal)
                anchor = unquote(parts.fragment)
                if anchor not in known[goal]:
                    broken.append(f"{where}: no heading of {goal.name} has the anchor #{anchor}")
    return broken


def test_every_link_between_the_readme_and_the_docs_resolves() -> None:
    files = documents(ROOT)
    assert ROOT / "README.md" in files and len(files) > 2
    broken = broken_links(ROOT, files)
    assert not broken, "links that lead nowhere:\n" + "\n".join(broken)


def test_the_checker_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(
        "# Front door\n\n"
        "See [settings](docs/settings.md#every-kb_-setting), [the second](docs/settings.md#limits-1),\n"
        "[续训](docs/settings.md#续训-checkpoint), [nothing](docs/missing.md), [a folder](docs/)\n"
        "and [a lost anchor](docs/settings.md#no-such-heading), [up here](#front-door), [there](#gone).\n\n"
        "`[in code](docs/gone.md)` is code.\n\n"
        "```\n[in a block](docs/gone.md)\n```\n\n"
        "| a | b |\n|---|---|\n| [in a table](docs/also-missing.md) | ![a picture](docs/shot.png) |\n\n"
        "[outside](https://example.com/nothing.md#x)\n",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "settings.md").write_text(
        "# Every `KB_` setting\n\n## Limits\n\n## Limits\n\n## 续训 (checkpoint)\n", encoding="utf-8"
    )
    assert broken_links(tmp_path, documents(tmp_path)) == [
        "README.md:4: link 'docs/missing.md': no such file docs/missing.md",
        "README.md:5: link 'docs/settings.md#no-such-heading': no heading of settings.md has the anchor #no-such-heading",
        "README.md:5: link '#gone': no heading of README.md has the anchor #gone",
        "README.md:15: link 'docs/also-missing.md': no such file docs/also-missing.md",
        "README.md:15: link 'docs/shot.png': no such file docs/shot.png",
    ]
