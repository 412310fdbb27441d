"""Make tests/data/upstream/: the shipped FAQ files' versions upstream, from the pinned commit to the head of
each repository's default branch, following renames; only the FAQ files, a few versions each.

    python bench/sync_fixture.py MIRRORS_DIR

MIRRORS_DIR holds a Git clone (bare or not) of each upstream repository, named `owner+name` (with its Git
directory at `owner+name/repo` or `owner+name` itself). For each shipped source and its translation, the
commits of the default branch after the pin (first parent) are walked; each time the file's text changes
a version is kept (its commit, path, date), and at most `KEEP` are written, the first and the last always
among them. `bench/sync_rewording.py` measures rewording detection on them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest.manifest import load_manifest  # noqa: E402
from kb.settings import SHIPPED_SOURCES  # noqa: E402

OUT = ROOT / "tests" / "data" / "upstream"
KEEP = 5
# Where a file's lineage goes on in another file that git does not see as its rename: ROLL's Chinese
# FAQ, docs/qa.md at the pin, is kept up to date in the docs site's Chinese page from c0c0d2b (docs/qa.md
# stays beside it until v0.2.0 deletes it); the manifest's live_url is that page.
CONTINUES = {
    ("roll", "zh"): ("c0c0d2b1670ef49ea04ddb862a5f7809d2d65d30", "docs_roll/docs/简体中文/快速开始/qa_issues.md")
}
_BLOB = re.compile(r"https://github\.com/([^/]+)/([^/]+)/blob/([0-9a-f]+)/(.+)$")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=True).stdout


def blob(repo: Path, commit: str, path: str) -> str | None:
    done = subprocess.run(["git", "--git-dir", str(repo), "cat-file", "blob", f"{commit}:{path}"], capture_output=True)
    return done.stdout.decode("utf-8") if done.returncode == 0 else None


def renamed(repo: Path, old: str, new: str, path: str) -> str | None:
    out = git(repo, "diff", "--find-renames", "--name-status", "-z", old, new)
    fields = out.split("\0")
    i = 0
    while i < len(fields) - 1:
        if fields[i].startswith("R"):
            if fields[i + 1] == path:
                return fields[i + 2]
            i += 3
        else:
            i += 2
    return None


def lineage(repo: Path, pin: str, path: str, continues: tuple[str, str] | None = None) -> list[dict[str, str]]:
    """The file's versions on the default branch's first-parent line after `pin`, renames followed
    (and `continues`, a commit and the path the lineage goes on in from there)."""
    commits = git(repo, "log", "--first-parent", "--reverse", "--format=%H", f"{pin}..HEAD").split()
    text = blob(repo, pin, path)
    versions = [{"commit": pin, "path": path, "date": git(repo, "show", "-s", "--format=%cs", pin).strip()}]
    texts = [text]
    last = pin
    for commit in commits:
        if continues is not None and commit == continues[0]:
            path = continues[1]
        now = blob(repo, commit, path)
        if now is None:
            moved = renamed(repo, last, commit, path)
            if moved is None:
                break  # deleted and not moved: the lineage ends
            path, now = moved, blob(repo, commit, moved)
        if now is not None and now != text:
            text = now
            versions.append(
                {"commit": commit, "path": path, "date": git(repo, "show", "-s", "--format=%cs", commit).strip()}
            )
            texts.append(text)
        last = commit
    keep = (
        sorted({round(i * (len(versions) - 1) / (KEEP - 1)) for i in range(KEEP)})
        if len(versions) > KEEP
        else range(len(versions))
    )
    return [versions[i] | {"text": texts[i] or ""} for i in keep]


def main(mirrors: Path) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    index = []
    for source in load_manifest(SHIPPED_SOURCES):
        versions = [(source.lang, source.url, source.entries)]
        if source.translation is not None and source.translation.url:
            versions.append((source.translation.lang, source.translation.url, source.translation.entries))
        for lang, url, style in versions:
            found = _BLOB.match(url)
            if found is None:
                continue
            owner, name, pin, path = found.groups()
            folder = mirrors / f"{owner}+{name}"
            repo = folder / "repo" if (folder / "repo").exists() else folder
            for n, version in enumerate(lineage(repo, pin, path, CONTINUES.get((source.name, lang)))):
                file = f"{source.name}.{lang}.{n}.md"
                (OUT / file).write_text(version.pop("text"), encoding="utf-8")
                index.append(
                    {"source": source.name, "lang": lang, "entries": style, "repo": f"{owner}/{name}", "file": file}
                    | version
                )
    (OUT / "versions.json").write_text(json.dumps(index, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(index)} versions of {len({(v['source'], v['lang']) for v in index})} files -> {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
