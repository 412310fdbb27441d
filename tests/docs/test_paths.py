"""Every repository path the README and the docs name (in backticks: `server/channels/registry.py`) exists."""

from __future__ import annotations

import re

from tests.docs.test_links import documents
from tests.support.paths import ROOT

TOP = ("kb", "server", "ingest", "kbcli", "templates", "tests", "bench", "tools", "docs")
PATH = re.compile(r"`((?:" + "|".join(TOP) + r")/[A-Za-z0-9_./-]*)`")


# Paths the docs name that are not this repository's: the made-up channel of docs/adding-a-channel.md's
# example, where a wheel installs the templates, and a file in an upstream FAQ repository.
ELSEWHERE = ("server/channels/discord/", "server/templates/", "docs/qa.md")


def named_paths() -> list[tuple[str, int, str]]:
    """(document, line, path) for every path named in the README and docs/ (the changelog's history aside)."""
    found = []
    for doc in documents(ROOT):
        if doc.name == "CHANGELOG.md":
            continue
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            found += [(doc.relative_to(ROOT).as_posix(), number, path) for path in PATH.findall(line)]
    return found


def test_every_path_the_docs_name_exists() -> None:
    missing = [
        f"{doc}:{line}: {path}"
        for doc, line, path in named_paths()
        if not path.startswith(ELSEWHERE) and not (ROOT / path.rstrip(".")).exists()
    ]
    assert not missing, "\n".join(missing)


def test_the_checker_reads_paths() -> None:
    assert any(path == "server/channels/registry.py" for _, _, path in named_paths())
