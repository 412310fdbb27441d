"""Rewording detection (`ingest/changes.py`) measured: precision and recall of "reworded" against "removed + new".

    python bench/sync_rewording.py [--show]

Two sets of changes, each with the truth known:
- upstream: the shipped FAQ files' real versions upstream (tests/data/upstream/, made by
  bench/sync_fixture.py), each version compared with the one before; the reworded pairs a reader
  finds in each step are listed in tests/data/upstream/rewordings.json (the old and new question);
- made: each shipped source with rewordings made from its own entries, by rules (a question's
  wording changed: a word swapped for a synonym, a phrase added or dropped, the answer unchanged or
  a sentence added), beside entries removed and new entries from another source put in their place.
A pair the detector calls reworded is right when the truth pairs the same two questions.
`--show` prints each step's report.
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import replace
from difflib import SequenceMatcher
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest.changes import compare  # noqa: E402
from ingest.manifest import load_manifest  # noqa: E402
from ingest.markdown_faq import guess_entries_style, parse_source  # noqa: E402
from ingest.sources import read_sources  # noqa: E402
from kb.entries import Entry, Source, entry_id  # noqa: E402
from kb.errors import SourceError  # noqa: E402
from kb.settings import SHIPPED_SOURCES  # noqa: E402

DATA = ROOT / "tests" / "data" / "upstream"
SEED = 51


def _versions() -> dict[tuple[str, str], list[dict[str, str]]]:
    lineages: dict[tuple[str, str], list[dict[str, str]]] = {}
    for version in json.loads((DATA / "versions.json").read_text(encoding="utf-8")):
        lineages.setdefault((version["source"], version["lang"]), []).append(version)
    return lineages


def _parse(version: dict[str, str]) -> tuple[list[Entry], str]:
    """The version's entries, by the manifest's style, else the style its text has now (named)."""
    source = Source(
        version["source"], version["file"], version["source"], "", version["lang"], "", "", entries=version["entries"]
    )
    path = DATA / version["file"]
    try:
        return parse_source(path, source), version["entries"]
    except SourceError:
        style = guess_entries_style(path.read_text(encoding="utf-8"))
        return parse_source(path, replace(source, entries=style)), style


def upstream(show: bool) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]], list[str]]:
    """(found, true) reworded pairs as (step, old question, new question), and a line per step."""
    truth_file = json.loads((DATA / "rewordings.json").read_text(encoding="utf-8"))
    found, true, lines = set(), set(), []
    for (name, lang), versions in _versions().items():
        for before, after in zip(versions, versions[1:]):
            step = f"{name}.{lang} {before['commit'][:7]}->{after['commit'][:7]}"
            (old, old_style), (new, new_style) = _parse(before), _parse(after)
            changes = compare(name, old, new)
            style = f", entries style {old_style} -> {new_style}" if old_style != new_style else ""
            path = f", moved to {after['path']}" if after["path"] != before["path"] else ""
            lines.append(
                f"{step} ({after['date']}): {len(old)} -> {len(new)} entries: {len(changes.new)} new, "
                f"{len(changes.changed)} changed, {len(changes.reworded)} reworded, {len(changes.removed)} removed{style}{path}"
            )
            if show:
                for r in changes.reworded:
                    lines.append(f"    reworded {r.old.question!r} -> {r.new.question!r} ({r.evidence})")
                for e in changes.removed:
                    lines.append(f"    removed  {e.question!r}")
                for e in changes.new:
                    lines.append(f"    new      {e.question!r}")
            found |= {(step, r.old.question, r.new.question) for r in changes.reworded}
            true |= {(step, a, b) for a, b in truth_file.get(step, [])}
    return found, true, lines


# Rewordings made by rule, each a (pattern, replacement) tried in turn until one changes the question.
_ZH = [("如何", "怎样"), ("怎么", "如何"), ("什么是", "请问什么是"), ("是否", "能否"), ("？", "呢？"), ("报错", "出错")]
_EN = [
    ("How do I", "How can I"),
    ("How to", "How do I"),
    ("What is", "What's"),
    ("Why does", "Why would"),
    ("?", " at all?"),
]
_SAID = re.compile(r"[:：]\s*")


def _reworded(question: str, lang: str, rng: random.Random) -> str:
    """A light rewording (a word or phrase swapped), or a heavy one (the question cut to what follows its
    colon, or to its second half, with a new opening)."""
    if rng.random() < 0.5:
        rules = list(_ZH if lang == "zh" else _EN)
        rng.shuffle(rules)
        for pattern, replacement in rules:
            if pattern in question:
                return question.replace(pattern, replacement, 1)
    parts = _SAID.split(question, maxsplit=1)
    rest = parts[1] if len(parts) == 2 and len(parts[1]) > 8 else question[len(question) // 2 :]
    return ("遇到这个问题怎么办：" if lang == "zh" else "What to do about: ") + rest.strip()


EDITS = ("kept", "added to", "cut by a third", "half rewritten", "three quarters rewritten")


def _edited(answer: str, lang: str, edit: str) -> str:
    """The answer as is, with a sentence added, cut to its first two thirds, or its last half (or three
    quarters) rewritten."""
    added = " 另见文档。" if lang == "zh" else " See also the docs."
    if edit == "kept":
        return answer
    if edit == "added to":
        return answer + added
    if edit == "cut by a third":
        return answer[: max(1, len(answer) * 2 // 3)]
    kept = len(answer) // 2 if edit == "half rewritten" else len(answer) // 4
    return answer[:kept] + (
        " 此处内容已按新版本重写，详见新版文档说明。"
        if lang == "zh"
        else " This part was rewritten for the new release; the new docs explain it."
    )


def _nearest(entry: Entry, others: list[Entry]) -> Entry:
    """The other source's entry whose answer is most like this one's: the hardest stranger to tell apart."""
    return max(others, key=lambda o: SequenceMatcher(None, entry.answer, o.answer, autojunk=False).quick_ratio())


def made(rng: random.Random) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]], int]:
    """(found, true) reworded pairs over the shipped sources: a third of each source's entries reworded
    (lightly or heavily; the answer kept, added to, cut by a third, half or three quarters rewritten: `EDITS`), a sixth removed with an entry of another
    source new in its place (half of them the one whose answer is most alike), the rest kept; and how many sources."""
    entries = read_sources(SHIPPED_SOURCES).entries
    names = [s.name for s in load_manifest(SHIPPED_SOURCES)]
    found, true = set(), set()
    for name in names:
        old = [e for e in entries if e.source == name]
        others = [e for e in entries if e.source != name]
        new: list[Entry] = []
        for e in old:
            roll = rng.random()
            if roll < 1 / 3:
                question = _reworded(e.question, e.lang, rng)
                edit = rng.choice(EDITS)
                new.append(
                    replace(e, id=entry_id(name, question), question=question, answer=_edited(e.answer, e.lang, edit))
                )
                true.add((name, e.question, question, edit))
            elif roll < 1 / 2:
                stranger = _nearest(e, others) if rng.random() < 0.5 else rng.choice(others)
                new.append(replace(stranger, id=entry_id(name, stranger.question), source=name))
            else:
                new.append(e)
        changes = compare(name, old, new)
        found |= {(name, r.old.question, r.new.question) for r in changes.reworded}
    return found, true, len(names)


def _made_figures(found: set, true: set) -> list[str]:
    """Precision and recall over all made rewordings, then recall by what was done to the answer."""
    pairs = {t[:-1] for t in true}
    lines = [_figures(found, pairs)]
    for edit in EDITS:
        some = {t[:-1] for t in true if t[-1] == edit}
        lines.append(f"answer {edit}: {len(some & found)} of {len(some)} found")
    return lines


def _figures(found: set, true: set) -> str:
    right = len(found & true)
    precision = right / len(found) if found else 1.0
    recall = right / len(true) if true else 1.0
    return f"{len(true)} reworded, {len(found)} found, {right} right: precision {precision:.3f}, recall {recall:.3f}"


def main(argv: list[str]) -> None:
    show = "--show" in argv
    found, true, lines = upstream(show)
    print("upstream history (tests/data/upstream):")
    for line in lines:
        print(f"  {line}")
    print(f"  {_figures(found, true)}")
    for step, a, b in sorted(true - found):
        print(f"  missed: {step}: {a!r} -> {b!r}")
    for step, a, b in sorted(found - true):
        print(f"  wrong:  {step}: {a!r} -> {b!r}")
    rng = random.Random(SEED)
    totals: tuple[set, set] = (set(), set())
    for run in range(20):
        f, t, _ = made(rng)
        totals[0].update((run, *x) for x in f)
        totals[1].update((run, *x) for x in t)
    print("made from the shipped entries (20 runs, seed 51):")
    for line in _made_figures(*totals):
        print(f"  {line}")


if __name__ == "__main__":
    main(sys.argv[1:])
