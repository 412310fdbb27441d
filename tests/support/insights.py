"""Checks shared by the insights store's tests on SQLite and on PostgreSQL."""

from __future__ import annotations

from kb.insights import InsightsStore, Question, Totals, Vote


def assert_upgraded_store_counts_old_rows_and_takes_new_fields(store: InsightsStore) -> None:
    """A store upgraded from the first release's two questions and one vote (V1_SCHEMA, or the
    same rows in PostgreSQL): it counts them, takes the new columns, and the same voter's new
    vote replaces the old one."""
    assert store.totals(0) == Totals(questions=2, answered=1, helpful=0, unhelpful=1)
    store.questions.add([question("ray hangs", kind="chat", chat_workspace="T1", chat_conversation="C1")])
    store.votes.add([Vote("slime-1", False, "OOM", "voter-a", "web", "outdated", "changed in v0.2")])
    assert store.count("questions") == 3 and store.count("votes") == 1
    assert store.votes.unhelpful(0)[0].reasons == (("outdated", 1),)


DAY = 86400.0


T0 = 1_750_000_000.0  # 2025-06-15 15:06:40 UTC


def question(
    text: str,
    lang: str = "en",
    channel: str = "web",
    answered: bool = False,
    entry: str | None = None,
    at: float = T0,
    **more: object,
) -> Question:
    return Question(
        text=text,
        lang=lang,
        channel=channel,
        answered=answered,
        top_entry=entry,
        top_score=0.5 if entry else None,
        latency_ms=12.5,
        asked_at=at,
        **more,
    )  # type: ignore[arg-type]
