"""Each entry's own questions, as a search embeds a question: kept in the build, read back, and met by a paraphrase."""

import json

import numpy as np
import pytest

from kb.index import read_index, write_index
from kb.knowledge import KnowledgeBase
from kb.own_questions import OwnQuestions, question_owners
from tests.kb.test_index import make_entries, unit_vectors


def test_a_build_keeps_a_vector_for_each_entrys_question(tmp_path):
    entries = make_entries(3)
    questions = unit_vectors(len(question_owners(entries)))
    write_index(tmp_path / "index", entries, unit_vectors(3), unit_vectors(4), "demo-model", "abc", questions=questions)
    index = read_index(tmp_path / "index")
    assert np.allclose(index.questions.vectors, questions)
    assert index.questions.owners.tolist() == [0, 1, 2]


def test_a_build_without_them_reads_with_none(tmp_path):
    write_index(tmp_path / "index", make_entries(3), unit_vectors(3), unit_vectors(4), "demo-model", "abc")
    index = read_index(tmp_path / "index")
    assert len(index.questions) == 0
    assert index.questions.nearest(unit_vectors(1)[0], np.arange(3)).tolist() == [-1.0, -1.0, -1.0]


def test_an_older_build_reads_with_none(tmp_path):
    write_index(tmp_path / "index", make_entries(3), unit_vectors(3), unit_vectors(4), "demo-model", "abc")
    meta_path = tmp_path / "index" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["format_version"] = 6
    del meta["checksums"]["questions.npy"]
    meta_path.write_text(json.dumps(meta))
    assert len(read_index(tmp_path / "index").questions) == 0


def test_the_wrong_number_of_questions_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="2 question vectors; the entries have 3 versions"):
        write_index(
            tmp_path / "index", make_entries(3), unit_vectors(3), unit_vectors(4), "m", "abc", questions=unit_vectors(2)
        )


def test_each_entry_is_met_by_the_nearest_of_its_questions():
    # entry 0 has two versions (rows 0 and 1), entry 1 one (row 2)
    vectors = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    own = OwnQuestions(vectors, np.array([0, 0, 1]), entries=2)
    query = np.array([0.0, 1.0], dtype=np.float32)
    assert own.nearest(query, np.array([1, 0])).round(3).tolist() == [1.0, 0.8]


@pytest.fixture(scope="module")
def kb(settings):
    return KnowledgeBase.open(settings)


@pytest.mark.parametrize(
    "paraphrase",
    [
        "训练中断了，怎么从上次保存的地方接着跑？",
        "Training was interrupted, how do I continue from where it was last saved?",
    ],
)
def test_a_paraphrase_in_either_language_is_near_the_entrys_own_question(kb, paraphrase):
    """The shipped build: 如何续训？ (asked in no other words before) is the paraphrase's nearest own question."""
    s = kb.searcher
    resume = next(i for i, e in enumerate(s.entries) if e.question.strip() == "如何续训？")
    q = s.compared(s.embedder.embed_query(paraphrase))
    every = s.own_matching.nearest(q, np.arange(len(s.entries)))
    assert int(np.argmax(every)) == resume
