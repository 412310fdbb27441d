"""The GitHub bot offline: real tracker questions replayed as new issues, and what it would post.

Every question of `tests/data/real_test.jsonl` (never fitted on: real issues' titles and lines
of their bodies, in both languages, 163 with an answer in the FAQ and 198 without) is made an
issue (the question as its title, an empty body) and given to the bot's own decision
(`server/channels/github/bot.py`, dry run) in `comment` mode at the channel's operating point
(precision 0.9 unless `--precision`), and in `suggest` mode. A comment is right when its entry
is one the question expects; a comment on an out-of-scope question is wrong. Reported: how many
it would comment on (and the share of all), how many of those are right (precision), and
the questions it skips as too short.

    KB_DATA_DIR=... .venv/bin/python bench/bench_github.py [--precision 0.9] [--quick]
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Row, main, ready_settings  # noqa: E402

from kb.events import Events  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from server.channels import registry  # noqa: E402
from server.channels.github.bot import respond  # noqa: E402
from server.channels.github.events import Opened  # noqa: E402
from server.settings import ServerSettings  # noqa: E402

TEST = ROOT / "tests" / "data" / "real_test.jsonl"


def issue(n: int, question: str) -> Opened:
    return Opened("owner/repo", n, "issue", question, "", "", "asker", "NONE", False, False, False, (), False)


def run(quick: bool = False, precision: float = 0.0) -> list[Row]:
    queries = [json.loads(line) for line in TEST.read_text(encoding="utf-8").splitlines() if line.strip()]
    queries = queries[:60] if quick else queries
    with tempfile.TemporaryDirectory() as tmp:
        base = ready_settings(Path(tmp))
        rows = []
        for mode in ("comment", "suggest"):
            env = {"KB_GITHUB_MODE": mode, **({"KB_CHANNEL_PRECISION": f"github={precision}"} if precision else {})}
            settings = ServerSettings.from_env(env).with_(data_dir=base.data_dir, sources_dir=base.sources_dir)
            kb = KnowledgeBase.open(settings, points=registry.points())
            point = kb.precision_for("github")
            given, right, short = 0, 0, 0
            for n, query in enumerate(queries):
                outcome = asyncio.run(respond(kb, Events(), settings, issue(n, query["q"]), None))
                short += "too little" in outcome.reason
                if outcome.comment:
                    given += 1
                    right += outcome.entry in (query.get("expect") or [])
            share = given / len(queries)
            shown = f"{right / given:.3f}" if given else "–"
            verb = "would comment on" if mode == "comment" else "would suggest for"
            rows.append(Row(f"{mode} mode at precision {point}: {verb}", f"{given} of {len(queries)} ({share:.1%})"))
            target_ok = (right / given >= point) if given else None
            rows.append(
                Row(
                    f"{mode} mode: right among those", f"{right} of {given}, precision {shown}", f"≥ {point}", target_ok
                )
            )
            rows.append(Row(f"{mode} mode: skipped as too short to judge", str(short)))
    return rows


if __name__ == "__main__":
    main(run, __doc__, precision=(float, 0.0, "the channel's precision (default: its own, 0.9)"))
