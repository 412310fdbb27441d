""" "See also" on a time split: real questions the FAQ does not cover, and the earlier resolved threads of their own
tracker that answer them.

tests/data/harvest/earlier_answers.json labels, for each out-of-scope question of tests/data/real_tune.jsonl and
real_test.jsonl asked on a tracker that has resolved threads in the labelled fixtures (tests/data/harvest/*.json),
which of that tracker's earlier resolved threads (a lower issue number) answer it, by reading, before any search
was run on them (EARLIER_ANSWERS.md).

The threads searched, two corpora, each reported:
- `harvested`: the drafts `kb harvest` makes of every labelled fixture's threads, as a server holds them;
- `labelled`: every thread labelled resolved drafted with its labelled answer: what "see also" finds once each
  resolved thread is a draft, whatever the rules make of it.
A question is searched as typed (its own link known: never its own thread), and, where the whole issue is in
issues_tune.jsonl or issues_test.jsonl, as the GitHub bot reads it. Threads of the question's own tracker asked after
it (a higher number) are left out of what it could be shown: they did not exist yet. Counted: the questions with an
earlier thread that answers them, those the FAQ does not answer (the states "see also" is shown in), those shown
such a thread; and of all the out-of-scope questions, those shown a thread that does not answer them. Targets
(issue #66): at least a fifth of the questions with an earlier thread get it; a wrong thread at most once in 25.
The thresholds are kb/see_also.py's (a question's, a whole issue's), chosen on the tune side by
bench/bench_see_also.py; the test side is only reported.

    .venv/bin/python bench/bench_time_split.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_harvest import FIXTURES, _repo_number  # noqa: E402
from bench_see_also import labelled_draft, shown  # noqa: E402
from common import Row, main, ready_settings  # noqa: E402

from kb.evaluate import EvalQuery, load_queries  # noqa: E402
from kb.harvest import Draft, Rules, harvest, read_threads  # noqa: E402
from kb.see_also import SHOWN_STATES, Found, SeeAlso, threads_of  # noqa: E402

DATA = ROOT / "tests" / "data"
LABELS = DATA / "harvest" / "earlier_answers.json"
SIDES = {
    "tune": (DATA / "real_tune.jsonl", DATA / "issues_tune.jsonl"),
    "test": (DATA / "real_test.jsonl", DATA / "issues_test.jsonl"),
}
SHARE = 0.2  # at least this share of the questions with an earlier thread shown it
TARGET = 25  # at most one out-of-scope question in TARGET shown a wrong thread


def corpora(kb: object) -> dict[str, list]:
    """`harvested` and `labelled`, as `SeeAlso.load` takes them."""
    drafts: list[Draft] = []
    labelled: list[Draft] = []
    for path in FIXTURES:
        raw = json.loads(path.read_text(encoding="utf-8"))
        threads = read_threads(raw, str(path))
        drafts += harvest(threads, Rules(), kb).drafts  # type: ignore[arg-type]
        for item, thread in zip(raw, threads):
            made = labelled_draft(thread, item["fixture"]["answer"]) if item["fixture"]["harvest"] else None
            if made is not None:
                labelled.append(made)
    return {"harvested": threads_of(drafts), "labelled": threads_of(labelled)}


def asked(side: str, answers: dict[str, list[str]]) -> list[tuple[EvalQuery, str]]:
    """The side's labelled questions, each as typed and, where its whole issue is known, as the bot reads it (with
    the id of the question it is)."""
    typed, whole = (load_queries(path) for path in SIDES[side])
    out = [(q, q.id) for q in typed if q.id in answers]
    rows = [json.loads(line) for line in SIDES[side][1].read_text("utf-8").splitlines() if line.strip()]
    of = {row["id"]: row.get("of", "") for row in rows}
    return out + [(q, of[q.id]) for q in whole if of.get(q.id) in answers]


def visible(found: list[Found], url: str) -> list[Found]:
    """`found` without the threads of the question's own tracker asked after it."""
    repo, number = _repo_number(url)
    return [f for f in found if not (f.thread.repo.lower() == repo and f.thread.number > number)]


def counts(kb: object, index: SeeAlso, questions: list[tuple[EvalQuery, str]], answers: dict[str, list[str]]) -> dict[str, int]:  # fmt: skip
    c = {"out": 0, "wrong": 0, "earlier": 0, "not_answered": 0, "got": 0}
    for query, qid in questions:
        result = kb.search_blocking(query.q, reads="issue" if query.issue else "question")  # type: ignore[attr-defined]
        right = set(answers[qid])
        threads = []
        if result.state in SHOWN_STATES:
            ranked = index.ranked(result, kb.searcher, query.url)  # type: ignore[attr-defined]
            threads = shown(visible(ranked, query.url), *index.thresholds(result))
        c["out"] += 1
        c["wrong"] += any(f.thread.url not in right for f in threads)
        if right:
            c["earlier"] += 1
            c["not_answered"] += result.state in SHOWN_STATES
            c["got"] += any(f.thread.url in right for f in threads)
        for f in threads:
            print(f"  {qid} {'whole' if query.issue else 'typed'}: {'=' if f.thread.url in right else 'x'} {f.thread.url} {f.score:.1f}")  # fmt: skip
    return c


def run(quick: bool = False) -> list[Row]:
    from kb.knowledge import KnowledgeBase

    answers: dict[str, list[str]] = json.loads(LABELS.read_text(encoding="utf-8"))["answers"]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase.open(ready_settings(Path(tmp)))
        for name, threads in corpora(kb).items():
            index = SeeAlso()
            held = index.load(threads, kb.searcher.embedder)
            for side in SIDES:
                for whole in (False, True):
                    questions = [(q, i) for q, i in asked(side, answers) if q.issue == whole]
                    c = counts(kb, index, questions, answers)
                    how = f"{name} ({held} threads), {side}, {'whole issues' if whole else 'questions as typed'}"
                    share = c["got"] / c["earlier"] if c["earlier"] else 0.0
                    rows.append(Row(f"{how}: with an earlier thread that answers, not answered by the FAQ", f"{c['not_answered']} of {c['earlier']}", "", None))  # fmt: skip
                    rows.append(Row(f"{how}: shown that thread", f"{c['got']} of {c['earlier']} ({share:.2f})", f">= {SHARE}", share >= SHARE if c["earlier"] else None))  # fmt: skip
                    rows.append(Row(f"{how}: shown a wrong thread", f"{c['wrong']} of {c['out']}", f"<= 1/{TARGET}", c["wrong"] * TARGET <= c["out"]))  # fmt: skip
    return rows


if __name__ == "__main__":
    main(run, __doc__)
