"""What a sync does for the curation of the entries upstream changed: a reworded entry's old id replaced by
its new one in the learned files and the manifest, a maintainers' translation of a changed entry marked
stale, and the curation a removed entry leaves behind listed (the insights database's votes and links
follow a reworded entry through `InsightsStore.move_entries`; old permalinks through the build's id map)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from kb.insights.store import InsightsStore

from .changes import Changes
from .manifest import MANIFEST_NAME
from .upstream import Upstream, edit_manifest

__all__ = ["carry_ids", "mark_stale", "left_behind"]


def carry_ids(staged: Path, moved: dict[str, str]) -> None:
    """Replace each reworded entry's old id by its new one in the learned data and the manifest (alternates,
    not-covered marks, intended near-duplicates, a translation's skipped entries): ids are quoted strings."""
    if not moved:
        return
    for path in staged.glob("*.toml"):
        text = original = path.read_text(encoding="utf-8")
        for old, new in moved.items():
            text = text.replace(f'"{old}"', f'"{new}"').replace(f"'{old}'", f"'{new}'")
        if text != original:
            path.write_text(text, encoding="utf-8")


def mark_stale(staged: Path, upstreams: Sequence[Upstream], changes: Sequence[Changes]) -> tuple[str, ...]:
    """Mark the maintainers' (or a machine's) translation of each changed or reworded entry stale in the
    staged manifest, and say so: the text it translates is no longer the one it was written from."""
    manifest = staged / MANIFEST_NAME
    text = manifest.read_text(encoding="utf-8")
    lines = []
    for u, found in zip(upstreams, changes):
        if not u.translated_by:
            continue
        touched = [new for _, new in found.changed] + [r.new for r in found.reworded]
        if not touched:
            continue
        stale = [found.moved.get(i, i) for i in u.stale] + [e.id for e in touched if e.id not in u.stale]
        text = edit_manifest(text, u.name, {"stale": list(dict.fromkeys(stale))}, translation=True)
        for e in touched:
            lines.append(
                f"{e.id}  {u.translation_file}: the {u.translated_by}' translation of {e.question!r} predates "
                "the change upstream; review it, then take the id out of `stale`"
            )
    manifest.write_text(text, encoding="utf-8")
    return tuple(lines)


def left_behind(staged: Path, changes: Sequence[Changes], store: InsightsStore | None) -> tuple[str, ...]:
    """A line for each removed entry that leaves curation behind: alternates or not-covered marks in the
    learned files, links and votes in the insights database."""
    removed = [e for c in changes for e in c.removed]
    held = store.curation(e.id for e in removed) if store is not None else {}
    texts = {path.name: path.read_text(encoding="utf-8") for path in staged.glob("*.toml")}
    lines = []
    for e in removed:
        parts = [f"its mention in {name}" for name, text in texts.items() if f'"{e.id}"' in text or f"'{e.id}'" in text]
        links, votes = held.get(e.id, (0, 0))
        if links:
            parts.append(f"{links} link{'s' if links != 1 else ''}")
        if votes:
            parts.append(f"{votes} vote{'s' if votes != 1 else ''}")
        if parts:
            lines.append(f"{e.id}  {e.question!r}: removed upstream, leaving without an entry: {', '.join(parts)}")
    return tuple(lines)
