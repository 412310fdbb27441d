"""`kb calibrate` on the question sets a team may start with: 10 questions (none out of scope), 30 and the
64 of dev.jsonl, each without a judge and with the LLM judge (the stand-in OpenAI-compatible server of
tests/support/judges.py on a real loopback port, as `overlap`: it names the candidate whose question shares the
most words). Each writes a calibration the search loads; `kb serve` starts with the judged one of
dev.jsonl and answers a search. A judge that gives no usable verdict is one line and exit status 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

from kb.evaluate import load_queries
from kb.scoring import Calibration
from kb.settings import Settings
from kbcli.cli import main
from tests.support.cli import kb
from tests.support.judges import judge_llm_app
from tests.support.paths import DATA, ROOT
from tests.support.ports import free_port, wait_for_port

DEV = DATA / "dev.jsonl"
KB = Path(sys.executable).with_name("kb")


def question_set(size: int, folder: Path) -> Path:
    """10: the first 10 questions of dev.jsonl (all answerable); 30: its first 27 and 3 out of scope; 64: all of it."""
    lines = DEV.read_text(encoding="utf-8").splitlines()
    outside = [line for line in lines if '"expect": []' in line]
    chosen = {10: lines[:10], 30: lines[:27] + outside[:3], 64: lines}[size]
    path = folder / f"questions-{size}.jsonl"
    path.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def stand_in(serve: Callable[..., Any]) -> str:
    """The stand-in OpenAI-compatible judge: a real uvicorn on 127.0.0.1."""
    return f"{serve(judge_llm_app([])).url}/v1"


@pytest.fixture
def environment(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Callable[[str | None, str], None]:
    """`environment(base_url, model)`: the `kb` command's settings, with the LLM judge when `base_url` is given."""
    for name in [k for k in os.environ if k.startswith("KB_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("KB_DATA_DIR", str(settings.data_dir))

    def judge(base_url: str | None, model: str = "overlap") -> None:
        if base_url:
            for name, value in {
                "KB_RERANK": "llm",
                "KB_LLM_BASE_URL": base_url,
                "KB_LLM_MODEL": model,
                "KB_RERANK_TIMEOUT": "1",
            }.items():
                monkeypatch.setenv(name, value)

    return judge


def calibrate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["calibrate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
@pytest.mark.parametrize("judged", [False, True], ids=["without-a-judge", "with-the-llm-judge"])
@pytest.mark.parametrize("size", [10, 30, 64])
def test_kb_calibrate_writes_a_calibration_for_a_small_set(
    size: int,
    judged: bool,
    stand_in: str,
    environment: Callable[..., None],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    environment(stand_in if judged else None)
    questions = question_set(size, tmp_path)
    output = tmp_path / "calibration.json"
    code, out, err = calibrate(capsys, str(questions), "--output", str(output))
    assert code == 0 and "Traceback" not in err, err
    queries = load_queries(questions)
    outside = sum(not q.answerable for q in queries)
    assert out.startswith(f"{size} questions, 5-fold cross-validation (held-out folds only):")
    assert out.splitlines()[-1].endswith(f"-> {output}")
    # The confidence needs right and wrong first hits, not out-of-scope questions: its figures always show.
    assert "confidence that the first hit answers (held-out folds):" in out and "operating points" in out
    assert ("with the judge" in out) == judged
    written = json.loads(output.read_text(encoding="utf-8"))
    assert written["questions"] == [questions.name]
    assert written["cross_validated"]["overall"]["queries"] == size - outside
    assert written["cross_validated"]["out_of_scope"]["queries"] == outside
    calibration = Calibration.load(output)
    assert (calibration.judge, calibration.judge_model) == (("llm", "overlap") if judged else ("", ""))
    assert (calibration.judged is not None) == judged


@pytest.fixture(scope="module")
def dev_judged(
    settings: Settings, stand_in: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, dict[str, str]]]:
    """`kb calibrate tests/data/dev.jsonl` with the stand-in judge, run as a deployer runs it (the issue's
    settings), and the environment it ran in."""
    output = tmp_path_factory.mktemp("dev-judged") / "calibration.json"
    judged = dict(KB_RERANK="llm", KB_LLM_BASE_URL=stand_in, KB_LLM_MODEL="overlap", KB_RERANK_TIMEOUT="1")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    environment.update(KB_DATA_DIR=str(settings.data_dir), **judged)
    run = kb("calibrate", str(DEV), "--output", str(output), data_dir=settings.data_dir, **judged)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    yield output, environment


@pytest.mark.slow
def test_kb_serve_starts_with_the_judged_calibration_of_dev_alone_and_answers(
    dev_judged: tuple[Path, dict[str, str]],
) -> None:
    output, environment = dev_judged
    port = free_port()
    process = subprocess.Popen(
        [str(KB), "serve", "--port", str(port)],
        cwd=ROOT,
        env={**environment, "KB_CALIBRATION": str(output)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for_port(port, process), "the server did not start"
        response = httpx.get(
            f"http://127.0.0.1:{port}/api/search", params={"q": "how do I resume training"}, timeout=60
        )
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=60).json()
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert response.status_code == 200 and response.json()["hits"], stderr
    assert health["judge"]["kind"] == "llm" and health["judge"]["model"] == "overlap"
    assert "Traceback" not in stderr


@pytest.mark.slow
@pytest.mark.parametrize("model", ["garbage", "out-of-range"])
def test_a_judge_with_no_usable_verdict_is_one_line_and_writes_nothing(
    model: str, stand_in: str, environment: Callable[..., None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    environment(stand_in, model)
    output = tmp_path / "calibration.json"
    code, out, err = calibrate(capsys, str(question_set(10, tmp_path)), "--output", str(output))
    kind = {"garbage": "invalid", "out-of-range": "out_of_range"}[model]
    assert code == 2 and len(err.splitlines()) == 1 and not output.exists()
    assert err.startswith(
        f"kb: error: judge: llm '{model}' gave no usable verdict on any of the 10 questions ({kind}: 10;"
    )
    assert "check KB_LLM_BASE_URL, KB_LLM_MODEL and KB_RERANK_TIMEOUT" in err


def test_the_search_loads_the_calibration_kb_calibrate_wrote_beside_the_index(tmp_path: Path) -> None:
    """Without KB_CALIBRATION: the shipped one until `kb calibrate` has written one in the data directory
    (where it writes by default), then that one; KB_CALIBRATION wins over both."""
    from kb.scoring import CALIBRATION_PATH

    settings = Settings(data_dir=tmp_path)
    assert settings.own_calibration == tmp_path / "calibration.json"
    assert settings.calibration_path == CALIBRATION_PATH
    settings.own_calibration.write_text(CALIBRATION_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    assert settings.calibration_path == tmp_path / "calibration.json"
    named = tmp_path / "elsewhere.json"
    assert Settings.from_env({"KB_DATA_DIR": str(tmp_path), "KB_CALIBRATION": str(named)}).calibration_path == named


def issue_set(size: int, folder: Path) -> Path:
    """The first `size` whole issues of issues_tune.jsonl (lines with `title` and `body`)."""
    lines = (DATA / "issues_tune.jsonl").read_text(encoding="utf-8").splitlines()[:size]
    path = folder / f"issues-{size}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_kb_calibrate_issues_only_keeps_the_question_calibration_and_adds_whole_issues(
    settings: Settings, environment: Callable[..., None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    environment(None)
    issues, output = issue_set(60, tmp_path), tmp_path / "calibration.json"
    code, out, err = calibrate(capsys, str(DEV), "--issues", str(issues), "--issues-only", "--output", str(output))
    assert code == 0 and "Traceback" not in err, err
    assert out.startswith("whole issues: 60 (") and out.splitlines()[-1].endswith(f"-> {output}")
    shipped, written = Calibration.load(settings.calibration_path), Calibration.load(output)
    assert written.weights.answer_coef == shipped.weights.answer_coef, "the question calibration is kept"
    assert len(written.weights.ranges) == len(written.weights.signals)
    assert written.issues is not None and written.issues.rank_coef == shipped.weights.rank_coef
    assert len(written.issues.ranges) == len(written.issues.signals) and written.issues.curve.questions == 60
    assert written.issues.floor <= written.issues.answer_threshold
    raw = json.loads(output.read_text(encoding="utf-8"))
    assert raw["issues"]["questions"] == [issues.name] and raw["issues"]["operating_points"]


def test_kb_calibrate_issues_only_needs_the_issues(
    environment: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    environment(None)
    code, out, err = calibrate(capsys, str(DEV), "--issues-only")
    assert code == 2 and "--issues-only: name the whole issues to fit on with --issues FILE" in err
