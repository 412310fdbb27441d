"""Drafts: the question without its template's tags, the linked pull request named, threads asking the same grouped."""

from __future__ import annotations

import numpy as np

from kb.harvest import Rules, choose, draft_of, group, harvest, read_threads

from .threads_data import ANSWER, comment, issue


def test_a_draft_has_the_question_the_cleaned_answer_and_its_pull_request() -> None:
    raw = issue(
        [comment("m", "MEMBER", "> quoted question\n@asker " + ANSWER)],
        closedByPullRequestsReferences=[{"url": "https://github.com/THUDM/slime/pull/9", "number": 9}],
    )
    [thread] = read_threads([raw])
    choice = choose(thread, Rules())
    assert choice is not None
    draft = draft_of(choice)
    assert draft is not None
    assert draft.question.startswith("How do I resume training") and "[Question]" not in draft.question
    assert "quoted question" not in draft.answer and "`@asker`" in draft.answer
    assert draft.answer.endswith("Fixed by https://github.com/THUDM/slime/pull/9.")
    assert draft.to_json()["number"] == 7 and draft.to_json()["url"] == raw["url"]


def test_threads_asking_the_same_become_one_draft_ranked_by_how_many_asked() -> None:
    raws = [
        issue([comment("m", "MEMBER", ANSWER)], number=1, title="How do I resume training?", closed_day=3),
        issue([comment("m", "MEMBER", ANSWER)], number=2, title="how do I  resume training?", closed_day=4),
        issue([comment("m", "MEMBER", ANSWER)], number=3, title="Why is the reward always zero?", closed_day=5),
    ]
    done = harvest(read_threads(raws))
    assert [(d.number, d.asked) for d in done.drafts] == [(2, 2), (3, 1)]  # the newest thread leads its group
    assert [a.number for a in done.drafts[0].alternates] == [1]


def test_vectors_group_reworded_questions() -> None:
    raws = [
        issue([comment("m", "MEMBER", ANSWER)], number=n, title=t, closed_day=d)
        for n, t, d in ((1, "resume training", 3), (2, "continue from a checkpoint", 4), (3, "reward is zero", 5))
    ]
    made = [draft_of(choose(t, Rules())) for t in read_threads(raws)]  # type: ignore[arg-type]
    vectors = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]], dtype=np.float32)
    grouped = group([d for d in made if d is not None], vectors)
    assert [(d.number, d.asked) for d in grouped] == [(2, 2), (3, 1)]
