""" "See also" on real questions: how often a wrong tracker thread is shown, how often a right one, and which rules.

The threads searched (`kb.see_also`, ranked as the entries are), two corpora, each reported:
- `drafts`: the drafts `kb harvest` makes of tests/data/harvest/threads.json (150 real threads), as a server holds
  them;
- `threads`: every thread of that fixture with a comment, as if resolved by its labelled answer or else its last
  comment (real threads from the trackers the questions come from, to find wrong ones in), and the FAQ's entries
  as threads besides (each its question and its answer: the thread that answers an in-scope question).

The questions: tests/data/real_tune.jsonl's and the whole issues of tests/data/issues_tune.jsonl (the tune side), and
real_test.jsonl's and issues_test.jsonl's (the test side: only reported), each searched as the server searches it (a
whole issue as the GitHub bot reads it, its link the question's own thread: `own_url`). A thread shown to one
labelled out of the FAQ's scope (`expect` empty) is wrong unless tests/data/harvest/time_split.json labels it as
answering that question; the target: at most one such question in 25 shown a wrong thread. An in-scope question
shown its own entry among the threads (`threads` corpus) stands for a question shown the thread that answers it.

The rules' thresholds are chosen here on the tune side alone, on the `threads` corpus, for each kind of input on its
own (questions as typed: `MIN_SCORE`, `MIN_BODY`; whole issues: `ISSUE_MIN_SCORE`, `ISSUE_MIN_BODY`): of the pairs in
`GRID` whose out-of-scope tune questions of that kind are shown a wrong thread at most once in 50 (half the target,
room for the test side), the one whose in-scope tune questions are shown their entry most often. A thread must hold
a tenth of the question's words outside its title at least (the grid starts there): a title alone is not evidence. The test side's
figures at the chosen pair are only reported. The time split (a right thread for a question asked after it) is
bench/bench_harvest.py's, run with these rules.

    .venv/bin/python bench/bench_see_also.py [--quick]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import Row, main, ready_settings  # noqa: E402

from kb.evaluate import EvalQuery, load_queries  # noqa: E402
from kb.harvest import Draft, Rules, Thread, harvest, question_of_thread, read_threads  # noqa: E402
from kb.harvest.clean import clean_answer  # noqa: E402
from kb.hits import SearchResult  # noqa: E402
from kb.see_also import (  # noqa: E402
    ISSUE_MIN_BODY,
    ISSUE_MIN_SCORE,
    MAX_SHOWN,
    MIN_BODY,
    MIN_SCORE,
    Found,
    Resolved,
    SeeAlso,
    threads_of,
)
from kb.thread_search import ThreadText  # noqa: E402

DATA = ROOT / "tests" / "data"
FIXTURE = DATA / "harvest" / "threads.json"
LABELS = DATA / "harvest" / "time_split.json"
TUNE = (DATA / "real_tune.jsonl", DATA / "issues_tune.jsonl")
TEST = (DATA / "real_test.jsonl", DATA / "issues_test.jsonl")
GRID_SCORE = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0, 14.0)
GRID_BODY = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)
GRID = [(s, b) for s in GRID_SCORE for b in GRID_BODY]
TARGET = 25  # at most one question in TARGET shown a wrong thread
CHOSEN = 50  # the rate the thresholds are chosen at, on the tune side
ENTRY = "https://github.com/faq/entries/issues/{}"  # an entry as a thread (`corpora`)


def labelled_draft(thread: Thread, at: int) -> Draft | None:
    """`thread` as a draft whose answer is its comment `at` (None when the thread or the answer says nothing)."""
    answer = clean_answer(thread.comments[at].body)
    question = question_of_thread(thread)
    if not (answer and question):
        return None
    return Draft(thread.repo, thread.number, thread.url, thread.kind, question, answer, {})


def corpora(kb: object) -> dict[str, list[list[tuple[Resolved, ThreadText]]]]:
    """The corpora, as `SeeAlso.load` takes them: `drafts`, `kb harvest`'s of the fixture; `threads`, every thread of it
    with a comment, with the FAQ's entries as threads besides (each its question and answer; its link `ENTRY`)."""
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    threads = read_threads(raw, str(FIXTURE))
    drafts = harvest(threads, Rules(), kb).drafts  # type: ignore[arg-type]
    every = []
    for item, thread in zip(raw, threads):
        if not thread.comments:
            continue
        at = item["fixture"].get("answer")
        made = labelled_draft(thread, at if isinstance(at, int) else -1)
        if made is not None:
            every.append(made)
    entries = [
        [(Resolved(e.question[:300], ENTRY.format(e.id), "faq/entries", i), ThreadText(e.question, "", e.answer))]
        for i, e in enumerate(kb.entries)  # type: ignore[attr-defined]
    ]
    return {"drafts": threads_of(drafts), "threads": threads_of(every) + entries}


def searched(kb: object, paths: tuple[Path, ...], step: int = 1) -> list[tuple[EvalQuery, SearchResult]]:
    """Every `step`th question of `paths`, searched as the server searches it (a whole issue as the GitHub bot reads
    it)."""
    out = []
    for query in [q for path in paths for q in load_queries(path)][::step]:
        out.append((query, kb.search_blocking(query.q, reads="issue" if query.issue else "question")))  # type: ignore[attr-defined]
    return out


def shown(found: list[Found], min_score: float, min_body: float) -> list[Found]:
    """The threads `SeeAlso.near` shows, at these thresholds."""
    out: list[Found] = []
    seen: set[int] = set()
    for f in found:
        if f.score < min_score or len(out) == MAX_SHOWN:
            break
        if f.group not in seen and f.body >= min_body:
            seen.add(f.group)
            out.append(f)
    return out


Ranked = list[tuple[EvalQuery, str, list[Found]]]  # per question: it, the state it was searched in, the threads ranked


def counts(lists: Ranked, rule: tuple[float, float]) -> dict[str, int]:
    """Out-of-scope questions, those not answered, those shown a thread, those shown a wrong one; questions with an
    entry as their answer (the `threads` corpus holds the entries as threads), and those shown it."""
    right: dict[str, list[str]] = json.loads(LABELS.read_text(encoding="utf-8"))["answers"]
    c = {"out": 0, "eligible": 0, "shown": 0, "wrong": 0, "in": 0, "found": 0}
    for query, state, found in lists:
        threads = shown(found, *rule)
        if query.expect:
            c["in"] += 1
            c["found"] += any(f.thread.url in {ENTRY.format(e) for e in query.expect} for f in threads)
            continue
        c["out"] += 1
        if state == "answered":
            continue  # never shown
        c["eligible"] += 1
        c["shown"] += bool(threads)
        c["wrong"] += any(f.thread.url not in right.get(query.id, []) for f in threads)
    return c


def choose(tune: Ranked) -> tuple[float, float]:
    """The thresholds that find the most entries-as-threads for in-scope tune questions while at most one
    out-of-scope tune question in CHOSEN is shown a wrong thread."""
    best, most = (max(GRID_SCORE), max(GRID_BODY)), -1
    for rule in GRID:
        c = counts(tune, rule)
        if c["wrong"] * CHOSEN <= c["out"] and c["found"] > most:
            best, most = rule, c["found"]
    return best


def run(quick: bool = False) -> list[Row]:
    from kb.knowledge import KnowledgeBase

    rows: list[Row] = []
    cache = Path(tempfile.gettempdir()) / "kb-bench-see-also" / "embeddings.sqlite"
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase.open(ready_settings(Path(tmp)))
        sides = {"tune": searched(kb, TUNE, 20 if quick else 1), "test": searched(kb, TEST, 20 if quick else 1)}
        lists: dict[tuple[str, str], Ranked] = {}
        for name, threads in corpora(kb).items():
            index = SeeAlso()
            started = time.perf_counter()
            held = index.load(threads, kb.searcher.embedder, cache)
            print(f"{name}: {held} threads held in {time.perf_counter() - started:.1f} s", file=sys.stderr)
            for side, asked in sides.items():
                lists[(name, side)] = [(q, r.state, index.ranked(r, kb.searcher, q.url)) for q, r in asked]
        shipped = {False: (MIN_SCORE, MIN_BODY), True: (ISSUE_MIN_SCORE, ISSUE_MIN_BODY)}
        for whole, kind in ((False, "questions"), (True, "whole issues")):
            tune = [x for x in lists[("threads", "tune")] if x[0].issue == whole]
            chosen = choose(tune)
            for rule in GRID:
                c = counts(tune, rule)
                print(
                    f"  tune {kind} {rule}: wrong {c['wrong']} of {c['out']}, entries found {c['found']} of {c['in']}"
                )
            rows.append(Row(f"thresholds chosen on the tune side, {kind} (score, body)", f"{chosen}", "", None))
            rows.append(Row(f"thresholds in kb/see_also.py, {kind}", f"{shipped[whole]}", "the chosen", chosen == shipped[whole]))  # fmt: skip
        for (name, side), every in lists.items():
            for whole, kind in ((False, "questions"), (True, "whole issues")):
                found = [x for x in every if x[0].issue == whole]
                rows += _rows(f"{name}, {side}, {kind}", found, shipped[whole], name == "threads")
    return rows


def _rows(name: str, found: Ranked, rule: tuple[float, float], entries: bool) -> list[Row]:
    """The rows of one corpus, side and kind of input (`name`) at `rule`; the threads shown to out-of-scope questions
    printed. `entries`: the corpus holds the entries as threads."""
    c = counts(found, rule)
    rows = [
        Row(
            f"{name}: {c['out']} out-of-scope questions ({c['eligible']} not answered): shown a thread", str(c["shown"])
        ),
        Row(f"{name}: shown a wrong thread", f"{c['wrong']} of {c['out']}", "<= 1/25", c["wrong"] * TARGET <= c["out"]),
    ]
    if entries:
        rows.append(Row(f"{name}: in-scope questions shown their entry as a thread", f"{c['found']} of {c['in']}"))
    for query, state, threads in found:
        for f in shown(threads, *rule):
            if not query.expect:
                print(f"  {name} {query.id} ({state}): {f.thread.url} score {f.score:.2f} body {f.body:.2f}")
    return rows


if __name__ == "__main__":
    main(run, __doc__)
