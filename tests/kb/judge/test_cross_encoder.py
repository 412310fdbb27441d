"""The cross-encoder judge (KB_RERANK_MODEL): the real sentence-transformers loading path, on a
tiny cross-encoder built and saved here (tests/support/judges.py; HF_HUB_OFFLINE=1, nothing downloaded).
It loads, scores, reorders the first stage's candidates as the calibration weighs it, and any
failure leaves the first stage's order and answer; `kb calibrate` reports with and without it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient

from kb.errors import CalibrationError, SettingsError
from kb.evaluate import load_queries
from kb.judge.cross_encoder import CrossEncoderJudge
from kb.knowledge import KnowledgeBase
from kb.scoring import CALIBRATION_PATH
from kb.settings import Settings
from kbcli.cli import main
from server import create_app
from tests.support.judges import build_tiny_cross_encoder, judged_calibration
from tests.support.paths import DATA

pytestmark = pytest.mark.slow  # sentence-transformers and PyTorch load a cross-encoder

QUESTION = "how do I resume training from a checkpoint"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder"))


@pytest.fixture(scope="module")
def judged(settings: Settings, tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings with the tiny judge, weighed far above the first stage's evidence."""
    path = judged_calibration(tmp_path_factory.mktemp("cal") / "calibration.json", "cross-encoder", str(tiny), rank=1e6)
    return settings.with_(rerank_model=str(tiny), calibration=str(path))


def candidates(kb: KnowledgeBase, question: str) -> list:
    first = kb.search_blocking(question, k=10, judged=False)
    return [h.entry.localized(first.lang) for h in first.hits]


@pytest.mark.slow
def test_a_tiny_cross_encoder_loads_offline_and_scores(settings: Settings, tiny: Path) -> None:
    judge = CrossEncoderJudge(str(tiny))
    entries = KnowledgeBase.open(settings).entries[:5]
    scores = judge.scores(QUESTION, entries)
    assert scores.shape == (5,) and np.all((scores > 0) & (scores < 1))
    assert len(set(np.round(scores, 6))) > 1  # the pairs score apart
    assert np.array_equal(judge.scores(QUESTION, entries), scores)


@pytest.mark.slow
def test_a_model_that_does_not_load_names_the_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SettingsError, match="KB_RERANK_MODEL"):
        CrossEncoderJudge(str(tmp_path / "no-such-model"))


def test_the_judge_reorders_the_first_candidates(judged: Settings) -> None:
    kb = KnowledgeBase.open(judged)
    assert kb.judging is not None
    first = kb.search_blocking(QUESTION, k=10, judged=False)
    result = kb.search_blocking(QUESTION, k=10)
    scores = kb.judging.judge.scores(first.searched, candidates(kb, QUESTION))
    by_judge = [first.hits[int(i)].entry.id for i in np.argsort(-scores, kind="stable")]
    assert [h.entry.id for h in result.hits] == by_judge != [h.entry.id for h in first.hits]
    assert [h.rank for h in result.hits] == list(range(1, 11))
    assert kb.judging.stats()["judged"] == 1
    # The same question again comes from the cache: another k reuses the verdict.
    assert kb.search_blocking(QUESTION, k=10) == result
    assert kb.search_blocking(QUESTION, k=3).hits == result.hits[:3]
    assert kb.judging.stats() | {"failed": None} == {
        "kind": "cross-encoder",
        "model": judged.rerank_model,
        "judged": 1,
        "skipped": 0,
        "cached": 1,
        "failed": None,
    }


def test_a_failing_judge_leaves_the_first_stage(judged: Settings, caplog: pytest.LogCaptureFixture) -> None:
    kb = KnowledgeBase.open(judged)
    assert kb.judging is not None

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("CUDA out of memory")

    kb.judging.judge._model.predict = broken  # type: ignore[attr-defined]  # a model that fails as it runs
    with caplog.at_level(logging.WARNING, logger="kb.judge"):
        for question in (QUESTION, "显存不够怎么办"):
            assert kb.search_blocking(question) == kb.search_blocking(question, judged=False)
    assert kb.judging.stats()["failed"] == {"invalid": 0, "out_of_range": 0, "timeout": 0, "error": 2}
    assert [r.getMessage() for r in caplog.records if "CUDA out of memory" in r.getMessage()] != []
    assert len([r for r in caplog.records if r.name == "kb.judge"]) == 1  # once for this kind


def test_a_judge_past_its_timeout_leaves_the_first_stage(judged: Settings) -> None:
    kb = KnowledgeBase.open(judged.with_(rerank_timeout=1e-6))
    assert kb.search_blocking(QUESTION) == kb.search_blocking(QUESTION, judged=False)
    assert kb.judging is not None and kb.judging.stats()["failed"]["timeout"] == 1


def test_a_wide_lead_skips_the_judge(judged: Settings, tiny: Path, tmp_path: Path) -> None:
    path = judged_calibration(tmp_path / "calibration.json", "cross-encoder", str(tiny), skip_gap=0.0)
    kb = KnowledgeBase.open(judged.with_(calibration=str(path)))
    assert kb.search_blocking(QUESTION) == kb.search_blocking(QUESTION, judged=False)
    assert kb.judging is not None and kb.judging.stats()["skipped"] == 1 and kb.judging.stats()["judged"] == 0


def test_a_calibration_and_the_judge_configured_must_agree(settings: Settings, judged: Settings) -> None:
    with pytest.raises(CalibrationError, match="set KB_RERANK_MODEL="):
        KnowledgeBase.open(judged.with_(rerank_model=""))
    with pytest.raises(CalibrationError, match="weighs no judge, but KB_RERANK_MODEL is set"):
        KnowledgeBase.open(judged.with_(calibration=""))
    # A calibration without a judge, and no judge: as before.
    assert KnowledgeBase.open(settings).judging is None


def test_kb_serve_refuses_a_calibration_whose_judge_is_not_configured(
    judged: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KB_DATA_DIR", str(judged.data_dir))
    monkeypatch.setenv("KB_CALIBRATION", judged.calibration)
    assert main(["serve", "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kb: error: calibration ") and "KB_RERANK_MODEL" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "text, says",
    [
        ('{"weights": {', "not JSON (line 1, column 14"),
        ("[]", "no weights object"),
        ('{"judge": null}', "no weights object"),
        ("\xff\xfe", "not UTF-8"),
        ("drop a rank coefficient", "rank_coef holds 5 values, not 6 numbers"),
    ],
)
def test_kb_serve_names_what_is_wrong_with_a_broken_calibration_file(
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
    says: str,
) -> None:
    path = tmp_path / "calibration.json"
    if text.startswith("drop"):
        raw = json.loads(CALIBRATION_PATH.read_text(encoding="utf-8"))
        raw["weights"]["rank_coef"] = raw["weights"]["rank_coef"][:-1]
        text = json.dumps(raw)
    path.write_bytes(text.encode("latin-1"))
    monkeypatch.setenv("KB_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("KB_CALIBRATION", str(path))
    assert main(["serve", "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kb: error: calibration {path}: ") and says in err and len(err.splitlines()) == 1


def test_the_server_judges_all_but_the_results_shown_while_typing_and_reports_it(judged: Settings) -> None:
    with TestClient(create_app(judged)) as client:
        live = client.get("/api/search", params={"q": QUESTION, "k": 10, "live": "box1", "judge": "false"}).json()
        final = client.get("/api/search", params={"q": QUESTION, "k": 10}).json()
        kb = KnowledgeBase.open(judged)
        first = kb.search_blocking(QUESTION, k=10, judged=False)
        assert [h["id"] for h in live["hits"]] == [h.entry.id for h in first.hits]
        assert [h["id"] for h in final["hits"]] == [h.entry.id for h in kb.search_blocking(QUESTION, k=10).hits]
        judge = client.get("/healthz").json()["judge"]
    assert judge == {
        "kind": "cross-encoder",
        "model": judged.rerank_model,
        "judged": 1,
        "skipped": 0,
        "cached": 0,
        "failed": {"invalid": 0, "out_of_range": 0, "timeout": 0, "error": 0},
    }


@pytest.mark.slow
def test_kb_calibrate_reports_with_and_without_the_judge(
    settings: Settings, tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KB_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("KB_RERANK_MODEL", str(tiny))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    output = tmp_path / "calibration.json"
    data = DATA / "dev.jsonl"
    assert main(["calibrate", str(data), "--folds", "3", "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "without the judge" in out and "with the judge" in out
    assert out.splitlines()[3].split()[:2] == [
        "en",
        str(sum(q.answerable and q.lang == "en" for q in load_queries(data))),
    ]
    assert len(out.splitlines()[3].split()) == 2 + 2 * 4  # each language's figures without and with, side by side
    assert (
        f"judge cross-encoder {tiny}: read the first 10 candidates" in out
        and "skipped when the first stage leads by" in out
    )
    kb = KnowledgeBase.open(settings.with_(rerank_model=str(tiny), calibration=str(output)))
    assert kb.calibration is not None and kb.calibration.judged is not None
    assert kb.calibration.judged.rank_features[-1] == "judge"
    assert kb.search_blocking(QUESTION).hits
