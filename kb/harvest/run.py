"""One harvest: threads read, the rules applied, drafts made, grouped and checked against the FAQ; and when
the last harvest of each repository was, so the next asks only for what closed since.

The time is kept in `$KB_DATA_DIR/harvest.json` (`{"owner/name": "2026-05-01T12:00:00Z"}`), written
atomically once a harvest's drafts are stored.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from .condense import condense
from .drafts import Draft, draft_of, group, match_entries, vectors_of
from .rules import Rules, decide
from .threads import HarvestError, Thread

if TYPE_CHECKING:
    from ..knowledge import KnowledgeBase
    from ..llm import LLM

__all__ = ["Harvest", "harvest", "last_harvest", "remember_harvest", "STATE_FILE"]

STATE_FILE = "harvest.json"


@dataclass
class Harvest:
    """What a harvest read and made."""

    drafts: list[Draft] = field(default_factory=list)
    read: int = 0
    chosen: int = 0
    refused: dict[str, int] = field(default_factory=dict)  # why threads were left, by reason
    questions: dict[str, Any] = field(default_factory=dict)  # each draft's headline and its vector, when embedded


def harvest(
    threads: Iterable[Thread],
    rules: Rules = Rules(),
    kb: KnowledgeBase | None = None,
    llm: LLM | None = None,
    progress: Callable[[int], None] | None = None,
) -> Harvest:
    """Drafts from `threads` by `rules`: one a question, its alternates the threads asking the same; with
    `kb`, grouped by its embedder and each checked against its entries (else by the same words alone); with
    `llm`, a long thread's draft condensed by it (`condense`). `progress` is told how many threads were read, after
    each one."""
    done = Harvest()
    made: list[Draft] = []
    for thread in threads:
        done.read += 1
        if progress is not None:
            progress(done.read)
        choice = decide(thread, rules)
        if isinstance(choice, str):
            done.refused[choice] = done.refused.get(choice, 0) + 1
            continue
        draft = draft_of(choice)
        if draft is None:
            done.refused["nothing left of the answer"] = done.refused.get("nothing left of the answer", 0) + 1
            continue
        done.chosen += 1
        made.append(condense(draft, thread, llm, rules.associations) if llm is not None else draft)
    vectors = vectors_of(made, kb) if kb is not None and made else None
    if vectors is not None:
        done.questions = {d.headline: vectors[i] for i, d in enumerate(made)}
    done.drafts = group(made, vectors)
    if kb is not None:
        done.drafts = match_entries(done.drafts, kb)
    return done


def last_harvest(data_dir: Path, repo: str) -> str:
    """When `repo` was last harvested (ISO 8601, UTC), or "" for never."""
    path = data_dir / STATE_FILE
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ""
    except (OSError, ValueError) as exc:
        raise HarvestError(f"{path}: cannot be read ({exc}); delete it to harvest everything again") from None
    value = kept.get(repo, "") if isinstance(kept, dict) else ""
    return value if isinstance(value, str) else ""


def remember_harvest(data_dir: Path, repo: str, at: float | None = None) -> str:
    """Keep `at` (now) as `repo`'s last harvest; the ISO time kept."""
    path = data_dir / STATE_FILE
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        kept = {}
    stamp = datetime.fromtimestamp(time.time() if at is None else at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    kept = (kept if isinstance(kept, dict) else {}) | {repo: stamp}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return stamp
