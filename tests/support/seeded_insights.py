"""Two weeks of questions from every channel and votes, as the /insights page's tests find them."""

from __future__ import annotations

from pathlib import Path

from kb.insights import InsightsStore, Question, Vote, store_path

TOKEN = "correct-horse-battery-staple"


BEARER = {"Authorization": f"Bearer {TOKEN}"}


DAY = 86400.0


RESUME = "slime-b0ab398d"  # 如何续训？


GAPS = [  # unanswered questions: (text, lang, channel, times)
    ("如何续训", "zh", "web", 5),
    ("how do I resume training", "en", "widget", 3),
    ("怎么断点续训？", "zh", "slack", 2),
    ("如何开启 FP8 训练", "zh", "web", 4),
    ("how to enable fp8 training", "en", "api", 2),
    ("OOM", "en", "slack", 3),
    ("CUDA out of memory", "en", "web", 1),
]


def seed(data_dir: Path, entry_ids: list[str], now: float) -> None:
    """Two weeks of questions from every channel in both languages, some unanswered, and votes."""
    store = InsightsStore(store_path(data_dir))
    questions = []
    for day in range(14):
        at = now - day * DAY - 3600
        for n, (channel, lang) in enumerate(
            [("web", "zh"), ("web", "en"), ("widget", "en"), ("slack", "zh"), ("api", "en")]
        ):
            for i in range((day * 3 + n * 5) % 7 + 1):
                entry = entry_ids[(day + n + i) % len(entry_ids)]
                questions.append(
                    Question(f"question {day}-{n}-{i}", lang, channel, True, entry, 0.2, 14.0, asked_at=at - i)
                )
    for text, lang, channel, times in GAPS:
        questions += [
            Question(text, lang, channel, False, entry_ids[0], 0.01, 15.0, asked_at=now - k * DAY - 60)
            for k in range(times)
        ]
    questions += [  # answers that may be wrong: one won by a hair, one asked again at once in other words
        Question("ray hangs at start", "en", "web", True, entry_ids[2], 0.3, 12.0, asked_at=now - 7200, margin=0.004),
        Question(
            "how do I convert a Megatron checkpoint",
            "en",
            "widget",
            True,
            entry_ids[3],
            0.3,
            12.0,
            asked_at=now - 5000,
            margin=0.2,
        ),
        Question(
            "how can I turn Megatron weights into HF format",
            "en",
            "widget",
            True,
            entry_ids[3],
            0.3,
            12.0,
            asked_at=now - 4970,
            margin=0.2,
            previous="how do I convert a Megatron checkpoint",
        ),
    ]
    store.questions.add(questions)
    store.votes.add(
        [
            Vote(
                RESUME,
                False,
                "如何续训",
                "voter-1",
                "web",
                "outdated",
                "--ckpt-step 在 v0.2 改名了",
                voted_at=now - 600,
            ),
            Vote(
                RESUME,
                False,
                "how do I resume from a checkpoint",
                "voter-2",
                "widget",
                "incomplete",
                voted_at=now - 500,
            ),
            Vote(RESUME, True, "续训", "voter-3", "web", voted_at=now - 400),
            Vote(entry_ids[1], True, "q", "voter-1", "api", voted_at=now - 300),
        ]
    )
    store.close()
