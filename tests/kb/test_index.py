"""The index directory: written atomically, read back whole, and refused when it is not right."""

import hashlib
import json

import numpy as np
import pytest

from kb.entries import Entry, entry_id
from kb.errors import IndexMissing, IndexMoved, IndexUnreadable
from kb.index import FORMAT_VERSION, read_index, write_index
from kb.lexical import LexicalIndex, QueryTerms


def make_entries(n: int) -> list[Entry]:
    return [
        Entry(
            id=entry_id("demo", f"question {i}"),
            question=f"question {i}",
            answer=f"answer {i}",
            source="demo",
            source_title="Demo FAQ",
            source_version="1",
            source_url="https://example.com/faq.md",
            framework="Demo",
            section="",
            url="https://example.com/faq.md",
            lang="en",
            tags=("demo", "usage"),
            line=i + 1,
        )
        for i in range(n)
    ]


def unit_vectors(n: int, dim: int = 8) -> np.ndarray:
    v = np.random.default_rng(n).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def index_dir(tmp_path):
    path = tmp_path / "index"
    write_index(path, make_entries(3), unit_vectors(3), unit_vectors(4), "demo-model", "abc")
    return path


def test_round_trip(index_dir):
    index = read_index(index_dir, model="demo-model")
    assert index.entries == make_entries(3)
    assert np.allclose(index.vector_matrix(), unit_vectors(3))
    assert index.background.shape == (4, 8)
    assert (index.meta.format_version, index.meta.model, index.meta.dim, index.meta.entry_count) == (
        FORMAT_VERSION,
        "demo-model",
        8,
        3,
    )


def test_rewrite_swaps_the_link_and_keeps_the_old_build_readable(index_dir):
    old = read_index(index_dir)
    old_path = old.path
    write_index(index_dir, make_entries(5), unit_vectors(5), unit_vectors(4), "demo-model", "def")
    assert read_index(index_dir).meta.entry_count == 5
    assert index_dir.is_symlink()
    assert read_index(old_path).meta.entry_count == 3  # a server still holding it can finish


def test_a_build_made_from_one_that_was_replaced_meanwhile_is_not_swapped_in(index_dir):
    made_from = read_index(index_dir).path
    write_index(index_dir, make_entries(4), unit_vectors(4), unit_vectors(4), "demo-model", "def")  # another writer
    with pytest.raises(IndexMoved) as moved:
        write_index(
            index_dir, make_entries(5), unit_vectors(5), unit_vectors(4), "demo-model", "x", replacing=made_from
        )
    assert str(moved.value).endswith(f"not {made_from}; build from it again")
    assert read_index(index_dir).meta.entry_count == 4  # the other writer's build stays
    current = read_index(index_dir).path
    write_index(index_dir, make_entries(5), unit_vectors(5), unit_vectors(4), "demo-model", "x", replacing=current)
    assert read_index(index_dir).meta.entry_count == 5


def test_missing_index_says_to_ingest(tmp_path):
    with pytest.raises(IndexMissing, match="run `kb ingest`"):
        read_index(tmp_path / "nowhere")


def test_foreign_directory_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(IndexUnreadable, match="meta.json is missing"):
        read_index(tmp_path)


def test_other_model_is_refused(index_dir):
    with pytest.raises(IndexUnreadable, match="built with model 'demo-model' but KB_EMBED_MODEL is 'other'"):
        read_index(index_dir, model="other")


def test_newer_format_is_refused(index_dir):
    meta_path = index_dir / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["format_version"] = FORMAT_VERSION + 1
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(IndexUnreadable, match=f"format version {FORMAT_VERSION + 1} is newer"):
        read_index(index_dir)


@pytest.mark.parametrize("name", ["vectors.faiss", "entries.jsonl", "lexical.npz"])
def test_corrupt_file_is_caught_by_its_checksum(index_dir, name):
    path = index_dir / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(IndexUnreadable, match=f"{name} does not match its checksum"):
        read_index(index_dir)


def test_truncated_file_is_caught(index_dir):
    path = index_dir / "vectors.faiss"
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(IndexUnreadable, match="vectors.faiss does not match its checksum"):
        read_index(index_dir)


def finished_builds(index_dir):
    return sorted(p.name for p in (index_dir.parent / "builds").iterdir() if not p.name.startswith("."))


def test_only_the_newest_three_builds_are_kept(index_dir):
    for n in range(4, 9):
        write_index(index_dir, make_entries(n), unit_vectors(n), unit_vectors(4), "demo-model", str(n))
    kept = finished_builds(index_dir)
    assert len(kept) == 3 and kept[-1] == index_dir.resolve().name
    assert [read_index(index_dir.parent / "builds" / name).meta.entry_count for name in kept] == [6, 7, 8]


def test_a_build_a_server_holds_is_kept_however_old(index_dir):
    from kb import builds

    served = index_dir.resolve()
    held = builds.hold(served)
    try:
        for n in range(4, 9):
            write_index(index_dir, make_entries(n), unit_vectors(n), unit_vectors(4), "demo-model", str(n))
        assert served.name in finished_builds(index_dir) and len(finished_builds(index_dir)) == 4
        assert read_index(served).meta.entry_count == 3
    finally:
        builds.release(held)
    write_index(index_dir, make_entries(9), unit_vectors(9), unit_vectors(4), "demo-model", "9")
    assert served.name not in finished_builds(index_dir) and len(finished_builds(index_dir)) == 3


KILLED_WHILE_WRITING = """
import os, signal, sys
from pathlib import Path
from kb import builds
import kb.index_write

def killed(tmp, *args):  # the process dies with half a build written
    (tmp / "entries.jsonl").write_text('{"id": "half', encoding="utf-8")
    os.kill(os.getpid(), signal.SIGKILL)

kb.index_write._write_build = killed
kb.index_write.write_index(Path(sys.argv[1]), [], __import__("numpy").zeros((0, 8), "float32"), [], "demo-model", "x")
"""


def test_a_build_left_half_written_by_a_killed_ingest_is_removed_by_the_next(index_dir):
    import subprocess
    import sys

    killed = subprocess.run(
        [sys.executable, "-c", KILLED_WHILE_WRITING, str(index_dir)], capture_output=True, text=True
    )
    assert killed.returncode == -9, killed.stderr
    builds_dir = index_dir.parent / "builds"
    left = [p.name for p in builds_dir.iterdir() if p.name.endswith(".partial")]
    assert len(left) == 1 and (builds_dir / left[0] / "entries.jsonl").exists()
    assert read_index(index_dir).meta.entry_count == 3  # the link still names the last finished build

    write_index(index_dir, make_entries(4), unit_vectors(4), unit_vectors(4), "demo-model", "4")
    assert [p.name for p in builds_dir.iterdir() if p.name.endswith(".partial")] == []
    assert read_index(index_dir).meta.entry_count == 4


@pytest.mark.slow
def test_a_build_being_written_by_another_ingest_is_left_alone(index_dir):
    import threading
    import time

    from kb import builds

    builds_dir = index_dir.parent / "builds"
    writing, written = threading.Event(), threading.Event()
    partial = builds_dir / ".20990101T000000000000.partial"
    seen: list[bool] = []

    def other_ingest() -> None:
        with builds.writing(builds_dir):
            partial.mkdir()
            writing.set()
            time.sleep(0.5)  # still writing while the second ingest starts
            seen.append(partial.is_dir())
            partial.rename(builds_dir / "20990101T000000000000")
        written.set()

    thread = threading.Thread(target=other_ingest)
    thread.start()
    writing.wait(5)
    write_index(index_dir, make_entries(4), unit_vectors(4), unit_vectors(4), "demo-model", "4")  # waits its turn
    thread.join(5)
    assert written.is_set() and seen == [True]
    assert "20990101T000000000000" in finished_builds(index_dir)
    assert read_index(index_dir).meta.entry_count == 4


def test_the_lexical_index_is_written_at_ingest_and_loaded_as_built(index_dir, monkeypatch):
    built = LexicalIndex.of_entries(make_entries(3))
    monkeypatch.setattr(
        LexicalIndex, "of_entries", lambda entries: pytest.fail("a current index was tokenized at load")
    )
    loaded = read_index(index_dir).lexical
    assert (index_dir / "lexical.npz").exists()
    assert loaded.size == built.size == 3
    for field in ("question", "both"):
        want, got = getattr(built, field), getattr(loaded, field)
        assert got.vocabulary == want.vocabulary
        assert all(np.array_equal(got.matches(t), want.matches(t)) for t in want.vocabulary)
    terms = QueryTerms(((("question", 1.0),), (("2", 1.0),)))
    assert np.allclose(loaded.coverage(terms), built.coverage(terms))


def test_an_index_from_before_the_lexical_file_is_tokenized_at_load(index_dir):
    (index_dir / "lexical.npz").unlink()
    meta = json.loads((index_dir / "meta.json").read_text())
    meta["format_version"] = 3
    del meta["checksums"]["lexical.npz"]
    (index_dir / "meta.json").write_text(json.dumps(meta))
    index = read_index(index_dir)
    assert index.lexical.both.vocabulary == LexicalIndex.of_entries(make_entries(3)).both.vocabulary


def test_a_lexical_file_for_other_entries_is_refused(index_dir):
    LexicalIndex.of_entries(make_entries(5)).save(index_dir / "lexical.npz")
    meta = json.loads((index_dir / "meta.json").read_text())
    meta["checksums"]["lexical.npz"] = hashlib.sha256((index_dir / "lexical.npz").read_bytes()).hexdigest()
    (index_dir / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(IndexUnreadable, match="lexical.npz indexes 5 entries; entries.jsonl holds 3"):
        read_index(index_dir)
