"""Stand-ins for the second-stage judges, which cannot run here: a tiny cross-encoder built and
saved on the spot (a small random BERT, its WordPiece vocabulary written from the shipped FAQs'
characters; nothing downloaded), and an OpenAI-compatible server whose model name picks its
verdict. Its judges: `second` names candidate 2, `none` answers "none", `garbage` sends prose,
`out-of-range` names candidate 99, `slow` names candidate 2 after 3 s, `overlap` names the
candidate whose question shares the most words with the question (a weak judge, for
`kb calibrate` and bench/bench_judge.py), `plain` refuses structured output (HTTP 400) and
otherwise judges as `second`.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from tests.support.paths import ROOT

SOURCES = ROOT / "kb" / "sources"
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_tiny_cross_encoder(path: Path, seed: int = 0) -> Path:
    """Write a sentence-transformers-loadable cross-encoder to `path`: 2 layers of width 32,
    one output, weights drawn wide enough that different pairs score apart."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    chars = sorted({c.lower() for f in SOURCES.glob("*.md") for c in f.read_text(encoding="utf-8") if not c.isspace()})
    vocab = SPECIAL + chars + ["##" + c for c in chars if c.isalnum()]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(path / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
        num_labels=1,
        initializer_range=0.5,
    )
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9_]{3,}|[\u4e00-\u9fff]", text.lower()))


def _overlap(prompt: str) -> int | None:
    question = prompt.rsplit("Question:", 1)[-1]
    heads = re.findall(r"^\[(\d+)\] (.*)$", prompt, re.MULTILINE)
    shared = [(len(_words(question) & _words(head)), int(n)) for n, head in heads]
    best = max(shared, default=(0, 0))
    return best[1] if best[0] else None


def judge_llm_app(requests: list[dict[str, Any]]) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> Any:
        body = await request.json()
        requests.append(body)
        model = body["model"]
        if model == "plain" and "response_format" in body:
            return JSONResponse({"error": {"message": "response_format is not supported"}}, status_code=400)
        if model == "slow":
            await asyncio.sleep(3)
        prompt = body["messages"][-1]["content"]
        verdict: Any = {
            "none": {"answer": "none"},
            "garbage": "I think it is the second one.",
            "out-of-range": {"answer": 99},
        }.get(model, {"answer": 2})
        if model == "overlap":
            chosen = _overlap(prompt)
            verdict = {"answer": chosen if chosen else "none"}
        content = verdict if isinstance(verdict, str) else json.dumps(verdict)
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}

    return app


def judged_calibration(
    path: Path, kind: str, model: str, rank: float = 1000.0, decides: bool = False, skip_gap: float | None = None
) -> Path:
    """The shipped calibration with judged weights added by hand, written to `path`: the
    first stage's weights and the judge's score weighed `rank` times in the ranking. With
    `decides`, the judge's score of the best entry alone decides whether to answer (at 0.5)."""
    from kb.scoring import CALIBRATION_PATH

    data = json.loads(CALIBRATION_PATH.read_text(encoding="utf-8"))
    first = data["weights"]
    answer_coef = [0.0] * len(first["answer_coef"]) + [20.0] if decides else first["answer_coef"] + [0.0]
    weights = {
        **first,
        "rank_coef": first["rank_coef"] + [rank],
        "answer_coef": answer_coef,
        "answer_bias": -10.0 if decides else first["answer_bias"],
        "answer_threshold": 0.5 if decides else first["answer_threshold"],
        "rank_features": first["rank_features"] + ["judge"],
    }
    data["judge"] = {"kind": kind, "model": model, "top": 10, "skip_gap": skip_gap, "weights": weights}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
