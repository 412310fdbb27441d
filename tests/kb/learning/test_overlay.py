"""Learned questions: alternates found by their entry, not-covered questions abstained on,
files checked and kept beside the FAQ, and nothing shipped that is near the test split."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ingest import build_index
from kb.evaluate import load_queries
from kb.index import read_index
from kb.knowledge import KnowledgeBase
from kb.learning import LearnedQuestion, load_learned, write_learned
from kb.learning.overlay import Learned
from kb.search import searched_text
from kb.settings import SHIPPED_SOURCES, Settings
from tests.support.paths import DATA

FAQ = (
    "# Team FAQ\n\n"
    "## How do I get GPU quota?\n\nAsk in #infra with your project name.\n\n"
    "## Where are the shared checkpoints?\n\nUnder `/mnt/shared/ckpt`, read-only.\n\n"
    "## How do I restart a failed job?\n\nRun `jobctl restart <id>`; it resumes from the last checkpoint.\n"
)


def team_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "faq"
    folder.mkdir()
    (folder / "team.md").write_text(FAQ, encoding="utf-8")
    return folder


def ids_of(folder: Path, tmp_path: Path) -> dict[str, str]:
    from ingest.sources import parse_sources

    return {e.question: e.id for e in parse_sources(folder)}


@pytest.mark.slow
def test_an_alternate_finds_its_entry_and_a_not_covered_question_is_abstained_on(tmp_path: Path) -> None:
    folder = team_folder(tmp_path)
    ids = ids_of(folder, tmp_path)
    settings = Settings(data_dir=tmp_path / "data", sources_dir=folder)
    build_index(settings)
    asked = "who approves accelerator allocations for my team"
    before = KnowledgeBase.open(settings).search_blocking(asked)

    write_learned(
        folder / "team.alternates.toml",
        [
            LearnedQuestion(asked, "en", "asked", "", "2026-11-20", entry=ids["How do I get GPU quota?"]),
        ],
    )
    write_learned(folder / "not-covered.toml", [LearnedQuestion("what is the weather in Paris tomorrow", "en")])
    report = build_index(settings)
    assert (report.alternates, report.not_covered) == (1, 1)
    kb = KnowledgeBase.open(settings)
    after = kb.search_blocking(asked)
    assert after.hits[0].entry.question == "How do I get GPU quota?"
    assert after.hits[0].score > before.hits[0].score or before.hits[0].entry.question != "How do I get GPU quota?"
    # The alternate is its entry's, and only its entry's.
    assert [q.question for q in kb.alternates(ids["How do I get GPU quota?"])] == [asked]
    assert kb.alternates(ids["Where are the shared checkpoints?"]) == []
    assert (
        kb.search_blocking("where are the shared checkpoints").hits[0].entry.question
        == "Where are the shared checkpoints?"
    )
    # The same question the FAQ is known not to cover, or a rewording of it, is not answered.
    assert not kb.search_blocking("what is the weather in Paris tomorrow").answered
    assert not kb.search_blocking("What is the weather in Paris tomorrow?").answered


@pytest.mark.slow
def test_an_alternate_of_a_missing_entry_is_a_warning_naming_file_and_line(tmp_path: Path) -> None:
    folder = team_folder(tmp_path)
    (folder / "team.alternates.toml").write_text(
        '[[alternate]]\nentry = "team-00000000"\nquestion = "an orphan"\nlang = "en"\n', encoding="utf-8"
    )
    report = build_index(Settings(data_dir=tmp_path / "data", sources_dir=folder))
    assert report.entries == 3 and report.alternates == 0
    assert any(w.startswith(f"{folder / 'team.alternates.toml'}:2: no entry 'team-00000000'") for w in report.warnings)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[alternate]]\nentry = "x"\nquestion = "q"\nlang = "fr"\n',
            "team.alternates.toml:4: [[alternate]] #1: unknown lang 'fr'",
        ),
        ('[[alternate]]\nentry = "x"\nquestion = "q"\nlang = "en"\norigin = "forum"\n', "unknown origin 'forum'"),
        ('[[alternate]]\nquestion = "q"\nlang = "en"\n', "missing required field 'entry'"),
        ("[[alternate]\n", "team.alternates.toml:1"),
    ],
)
def test_a_broken_alternates_file_fails_the_ingest_naming_what_is_wrong_and_keeps_the_index(
    tmp_path: Path, text: str, message: str
) -> None:
    folder = team_folder(tmp_path)
    settings = Settings(data_dir=tmp_path / "data", sources_dir=folder)
    build_index(settings)
    before = read_index(settings.index_dir).meta
    (folder / "team.alternates.toml").write_text(text, encoding="utf-8")
    with pytest.raises(Exception) as caught:
        build_index(settings)
    assert message in str(caught.value)
    assert read_index(settings.index_dir).meta == before  # the previous index still serves


def test_written_files_read_back_as_written(tmp_path: Path) -> None:
    questions = [
        LearnedQuestion(
            'how "quoted" \\ and\ttabbed?', "en", "tracker", "https://example.org/i/1", "2026-01-02", entry="a-1"
        ),
        LearnedQuestion("如何续训？", "zh", "asked", "", "", entry="a-2"),
    ]
    write_learned(tmp_path / "a.alternates.toml", questions)
    write_learned(tmp_path / "not-covered.toml", [LearnedQuestion("天气怎么样", "zh")])
    found, warnings = load_learned(tmp_path, {"a-1", "a-2"})
    assert found == questions + [LearnedQuestion("天气怎么样", "zh")] and warnings == []
    with pytest.raises(ValueError):
        write_learned(tmp_path / "not-covered.toml", questions)


def test_the_overlay_gives_each_entry_its_best_alternate_and_the_nearest_not_covered() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(5, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    questions = [
        LearnedQuestion("a", "en", entry="x"),
        LearnedQuestion("b", "en", entry="y"),
        LearnedQuestion("c", "en"),
        LearnedQuestion("d", "en", entry="x"),
        LearnedQuestion("e", "en", entry="gone"),
    ]
    learned = Learned.of(questions, vectors, {"x": 3, "y": 1}, 8)
    assert len(learned) == 4  # the alternate of an entry the build lacks is left out
    match = learned.match(vectors[3])
    expected_x = max(float(vectors[0] @ vectors[3]), 1.0)
    assert match.best_of(np.array([0, 1, 3])).tolist() == pytest.approx(
        [-1.0, float(vectors[1] @ vectors[3]), expected_x]
    )
    assert (
        match.not_covered == pytest.approx(float(vectors[2] @ vectors[3]))
        and learned.questions[match.not_covered_index].question == "c"
    )
    without = learned.without({"d"})  # a question measured as if it had not been learned
    assert without.match(vectors[3]).best_of(np.array([3]))[0] == pytest.approx(float(vectors[0] @ vectors[3]))


@pytest.mark.slow
def test_nothing_shipped_is_near_a_test_split_question(settings: Settings) -> None:
    """The shipped alternates and not-covered questions come from the tune split; the test
    split measures the learning, so none may be within cosine 0.95 of one of its questions."""
    shipped, warnings = load_learned(SHIPPED_SOURCES)
    assert len(shipped) > 100 and warnings == []
    kb = KnowledgeBase.open(settings)
    test = [q.q for q in load_queries(DATA / "real_test.jsonl")]
    tune = {q.q for q in load_queries(DATA / "real_tune.jsonl")}
    assert {q.question for q in shipped} <= tune and not {q.question for q in shipped} & set(test)
    embed = kb.searcher.embedder.embed_queries
    near = embed([searched_text(q.question) for q in shipped]) @ embed([searched_text(q) for q in test]).T
    worst = np.unravel_index(int(np.argmax(near)), near.shape)
    assert near.max() < 0.95, (
        f"{shipped[worst[0]].question!r} is {near.max():.3f} from the test question {test[worst[1]]!r}"
    )
    assert all(q.url.startswith("https://github.com/") and q.origin == "tracker" for q in shipped)
