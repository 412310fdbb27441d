"""Evidence that the first entry answers the question, not only that it is about it: candidate
signals tried beside the confidence's own, with held-out figures per population.

    python bench/answer_signals.py

Candidates (each computed from the question's text, the first entry's text and vectors the
search already has; none embeds the question twice):

- asked: the question is typed as a question (it ends with a question mark, or opens with an
  interrogative word, or holds a Chinese interrogative): the shape of a typed question rather
  than a tracker title. Tried alone, as an interaction with the shipped signals, and as the
  gate of two models (one per shape).
- kind_match / kind_clash: the question's kind (error, is-it-supported, how-to, what-is,
  config value; `kind_of` below) is the first entry's kind, or another known kind.
- answer_words: the share of the question's weighed words found in the first entry's answer
  (every language it has), its question left out.
- answer_sentence: the best cosine of the question's vector with a sentence of the first
  entry's answer (sentences embedded as passages).
- unmatched: the share of the question's identifiers the first entry's text lacks.

Each arm is fitted on real_tune and dev together on five folds by repository (a written
question is its own); the threshold of each precision is read on the held-out curve of the
real questions, as every operating point is. Then fitted on all of real_tune and dev and
measured on holdout and real_test (never fitted on). The ranking is the shipped one.
Needs an index (`kb ingest`) in $KB_DATA_DIR.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kind_signals import identifiers, matrix, served  # noqa: E402

from kb import cross_validation, fitting, folds  # noqa: E402
from kb.confidence import OperatingCurve, auroc, coverage_at  # noqa: E402
from kb.evaluate import DEPTH, load_queries  # noqa: E402
from kb.knowledge import KnowledgeBase  # noqa: E402
from kb.scoring import ANSWER_FEATURES  # noqa: E402
from kb.settings import Settings  # noqa: E402
from kb.text import tokenize  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
FOLDS = 5
SENTENCE = re.compile(r"(?<=[。！？!?.;；])\s*|\n+")


# How a question is put (`asked`) and what it asks (`kind_of`): bounded rules in both languages,
# tried on the first MAX_CHARS characters (patterns with no nested repetition).
# Only the opening of a text is read: a question's form and kind are in its first words.
MAX_CHARS = 300

_EN_OPENERS = (
    "how",
    "what",
    "why",
    "when",
    "where",
    "which",
    "who",
    "is",
    "are",
    "can",
    "could",
    "does",
    "do",
    "did",
    "should",
    "will",
    "would",
    "may",
    "has",
    "have",
)
_OPENER = re.compile(r"[a-z']+")
_ZH_ASKING = re.compile(r"如何|怎么|怎样|怎麼|为什么|為什麼|为何|什么|什麼|哪些|哪个|是否|能否|可否|有没有|吗|嗎|呢")

# The kinds, in the order they are tried: the first that matches names the question's kind.
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "error",
        re.compile(
            r"error|exception|traceback|fail|crash|hang|stuck|killed|segfault|\boom\b|out of memory|\bnan\b"
            r"|not working|doesn't work|does not work|报错|错误|失败|异常|卡住|卡死|崩溃|爆显存|显存不足|挂掉|不收敛|出错"
        ),
    ),
    (
        "supported",
        re.compile(
            r"\bsupport|compatib|is it possible|\bcan (?:i|we|it|you)\b|\bable to\b|支持|兼容|能否|可否|能不能|可不可以|是否可以"
        ),
    ),
    ("how-to", re.compile(r"\bhow\b|如何|怎么|怎样|怎麼|方法|步骤")),
    ("what-is", re.compile(r"\bwhat\b|\bwhy\b|difference|meaning|是什么|什么是|区别|含义|为什么|为何|作用")),
    ("config", re.compile(r"config|setting|parameter|argument|\bflag|option|参数|配置|设置|选项")),
)


def _opening(text: str) -> str:
    return unicodedata.normalize("NFKC", text[:MAX_CHARS]).strip().casefold()


def asked(text: str) -> bool:
    """Whether `text` is typed as a question: it ends with a question mark, opens with an English
    interrogative word, or holds a Chinese interrogative."""
    opening = _opening(text)
    if not opening:
        return False
    if opening.endswith("?") or (len(text) <= MAX_CHARS and text.rstrip().endswith(("?", "？"))):
        return True
    first = _OPENER.match(opening)
    if first is not None and first.group() in _EN_OPENERS:
        return True
    return _ZH_ASKING.search(opening) is not None


def kind_of(text: str) -> str:
    """What `text` asks: "error", "supported", "how-to", "what-is", "config", or "" when no rule says."""
    opening = _opening(text)
    return next((kind for kind, pattern in KINDS if pattern.search(opening)), "")


class EntryText:
    """Per entry: its answer's tokens, its whole text, its kind, its answer sentences' vectors."""

    def __init__(self, s: Any):
        self.answer_tokens = []
        self.text = []
        self.kinds = []
        self.sentences = []
        for entry in s.entries:
            versions = entry.versions()
            self.answer_tokens.append({t for v in versions for t in tokenize(v.answer)})
            self.text.append(" ".join(v.question + " " + v.answer for v in versions).lower())
            self.kinds.append(kind_of(entry.question))
            parts = [p.strip() for v in versions for p in SENTENCE.split(v.answer[:6000]) if len(p.strip()) >= 12]
            parts = parts[:60] or [entry.question]
            self.sentences.append(s.embedder.embed_passages(parts))


def signals_of(q: Any, s: Any, texts: EntryText, vector: np.ndarray) -> dict[str, Any]:
    w = s.weights
    score = q.features.score(w)
    order = np.argsort(-score, kind="stable")
    best = int(order[0])
    x = q.features.signals(score, order, q.zh, w)
    text = q.query.q
    x["asked"] = float(asked(text))
    qkind, ekind = kind_of(text), texts.kinds[best]
    x["kind_match"] = float(qkind != "" and qkind == ekind)
    x["kind_clash"] = float(qkind != "" and ekind != "" and qkind != ekind)
    groups = [{t for t, _ in g} for g in s.query_terms(s.plan(text, k=DEPTH)).groups]
    x["answer_words"] = sum(bool(g & texts.answer_tokens[best]) for g in groups) / len(groups) if groups else 0.0
    x["answer_sentence"] = float((texts.sentences[best] @ vector).max())
    found = identifiers(text)
    x["identifiers"] = float(np.log1p(len(found)))
    x["unmatched"] = sum(t not in texts.text[best] for t in found) / len(found) if found else 0.0
    for name in ANSWER_FEATURES:
        x[f"asked*{name}"] = x["asked"] * x[name]
    return {
        "x": x,
        "right": bool(q.correct[best]),
        "written": not q.query.url,
        "answerable": q.query.answerable,
        "fold": folds.grouped_fold(q.query, FOLDS),
    }


def rows_of(s: Any, questions: Sequence[Any], texts: EntryText) -> list[dict[str, Any]]:
    vectors = s.embedder.embed_queries([s.plan(q.query.q, k=DEPTH).embed_text for q in questions])
    return [signals_of(q, s, texts, v) for q, v in zip(questions, vectors)]


Model = Callable[[Sequence[dict[str, Any]]], np.ndarray]


def logistic(names: Sequence[str], real_only: bool) -> Callable[[Sequence[dict[str, Any]]], Model]:
    """One logistic model over `names` (signed as the confidence's are)."""

    def fit(rows: Sequence[dict[str, Any]]) -> Model:
        chosen = [r for r in rows if not real_only or not r["written"]]
        y = np.array([r["right"] for r in chosen], dtype=float)
        coef, bias = fitting.signed_logistic(matrix(chosen, names), y, [n.split("*")[-1] for n in names])
        return lambda rs: 0.5 * (1 + np.tanh(0.5 * (matrix(rs, names) @ coef + bias)))

    return fit


def segmented(names: Sequence[str]) -> Callable[[Sequence[dict[str, Any]]], Model]:
    """Two logistic models over `names`, one for questions typed as questions, one for the rest."""

    def fit(rows: Sequence[dict[str, Any]]) -> Model:
        models = {}
        for segment in (0.0, 1.0):
            chosen = [r for r in rows if r["x"]["asked"] == segment]
            y = np.array([r["right"] for r in chosen], dtype=float)
            models[segment] = fitting.signed_logistic(matrix(chosen, names), y, names)

        def predict(rs: Sequence[dict[str, Any]]) -> np.ndarray:
            out = np.zeros(len(rs))
            for segment, (coef, bias) in models.items():
                members = [i for i, r in enumerate(rs) if r["x"]["asked"] == segment]
                if members:
                    z = matrix([rs[i] for i in members], names) @ coef + bias
                    out[members] = 0.5 * (1 + np.tanh(0.5 * z))
            return out

        return predict

    return fit


def held_out(tune: Sequence[dict[str, Any]], fit: Callable[[Sequence[dict[str, Any]]], Model]) -> np.ndarray:
    held = np.zeros(len(tune))
    for fold in range(FOLDS):
        train = [r for r in tune if r["fold"] != fold]
        members = [i for i, r in enumerate(tune) if r["fold"] == fold]
        held[members] = fit(train)([tune[i] for i in members])
    return held


def pct(x: float) -> str:
    return "–" if x != x else f"{x:.1%}"


def arm_figures(tune: list[dict], holdout: list[dict], test: list[dict], fit: Any) -> list[str]:
    held = held_out(tune, fit)
    real = np.array([not r["written"] for r in tune])
    y = np.array([r["right"] for r in tune])
    curve = OperatingCurve.of(held[real], y[real])
    t8, t9, floor = (min(curve.threshold(p), 1.0) for p in (0.8, 0.9, 0.5))
    floor = min(floor, t8)
    written = np.array([r["written"] and r["answerable"] for r in tune])
    model = fit(tune)
    ch, ct = model(holdout), model(test)
    yh = np.array([r["right"] for r in holdout])
    yt = np.array([r["right"] for r in test])
    ah = np.array([r["answerable"] for r in holdout])
    mixed_c, mixed_y = np.concatenate([ch, ct]), np.concatenate([yh, yt])
    at9 = mixed_c >= t9
    at8 = ct >= t8
    return [
        pct((held[written] < t8).mean()),
        f"{auroc(held[real], y[real]):.3f}",
        pct(coverage_at(held[real], y[real], 0.9)),
        pct((ch[ah] < t8).mean()),
        pct(((ch[ah] >= t8) | ((ch[ah] >= floor) & yh[ah])).mean()),
        f"{auroc(ct, yt):.3f}",
        f"{pct(yt[at8].mean() if at8.any() else float('nan'))} ({int(at8.sum())})",
        pct(coverage_at(ct, yt, 0.9)),
        f"{pct(at9.mean())} at {pct(mixed_y[at9].mean() if at9.any() else float('nan'))}",
    ]


def main() -> None:
    kb = KnowledgeBase.open(Settings.from_env())
    kb.warm()
    s = kb.searcher
    texts = EntryText(s)
    tune_queries = [q for name in ("dev", "real_tune") for q in load_queries(DATA / f"{name}.jsonl")]
    tune = rows_of(s, cross_validation.collect(s, tune_queries, FOLDS, folds.grouped_fold), texts)
    holdout = rows_of(s, served(s, "holdout"), texts)
    test = rows_of(s, served(s, "real_test"), texts)
    base = list(ANSWER_FEATURES)
    inter = [f"asked*{n}" for n in ANSWER_FEATURES]
    arms: list[tuple[str, Any]] = [
        ("shipped signals, real only (as shipped)", logistic(base, True)),
        ("shipped signals, real + written", logistic(base, False)),
        ("+ asked", logistic([*base, "asked"], False)),
        ("+ asked x shipped", logistic([*base, "asked", *inter], False)),
        ("two segments by asked", segmented(base)),
        ("+ kind_match", logistic([*base, "kind_match"], False)),
        ("+ kind_clash", logistic([*base, "kind_clash"], False)),
        ("+ answer_words", logistic([*base, "answer_words"], False)),
        ("+ answer_sentence", logistic([*base, "answer_sentence"], False)),
        ("+ unmatched", logistic([*base, "unmatched"], False)),
        ("+ answer_sentence, real only", logistic([*base, "answer_sentence"], True)),
        ("+ kind_match + kind_clash, real only", logistic([*base, "kind_match", "kind_clash"], True)),
        ("+ asked x shipped + answer_sentence", logistic([*base, "asked", *inter, "answer_sentence"], False)),
        (
            "+ asked x shipped + kind + answer_sentence",
            logistic([*base, "asked", *inter, "kind_match", "kind_clash", "answer_sentence"], False),
        ),
    ]
    print(
        "| signals, fitted on | folds: written declined at 0.8 | folds: real AUROC | folds: real coverage at 0.9 "
        "| holdout declined at 0.8 | holdout answered or 'may answer' right | real_test AUROC "
        "| real_test precision at 0.8 (answered) | real_test coverage at 0.9 | mixed stream at 0.9: answered at precision |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, fit in arms:
        print(f"| {name} | " + " | ".join(arm_figures(tune, holdout, test, fit)) + " |", flush=True)
    for pop, rows in (
        ("written (dev)", [r for r in tune if r["written"]]),
        ("real_tune", [r for r in tune if not r["written"]]),
    ):
        print(f"\n{pop}: share with each signal, right first / wrong first")
        for n in ("asked", "kind_match", "kind_clash"):
            right = [r["x"][n] for r in rows if r["right"]]
            wrong = [r["x"][n] for r in rows if not r["right"]]
            print(f"  {n}: {np.mean(right):.2f} / {np.mean(wrong):.2f}")
        for n in ("answer_words", "answer_sentence", "unmatched"):
            right = [r["x"][n] for r in rows if r["right"]]
            wrong = [r["x"][n] for r in rows if not r["right"]]
            print(f"  {n} mean: {np.mean(right):.3f} / {np.mean(wrong):.3f}")


if __name__ == "__main__":
    main()
