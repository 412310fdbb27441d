"""Which threads the rules choose, and which comment they take as the answer."""

from __future__ import annotations

from kb.harvest import Rules, choose, read_thread
from kb.harvest.rules import refusal

from .threads_data import ANSWER, comment, issue


def chosen(raw: dict, rules: Rules = Rules()) -> str | None:
    choice = choose(read_thread(raw), rules)
    return None if choice is None else choice.answer.body


def test_a_thread_closed_as_completed_with_a_maintainer_answer_is_chosen() -> None:
    assert chosen(issue([comment("zhuzilin", "MEMBER", ANSWER)])) == ANSWER


def test_open_not_planned_and_duplicate_threads_are_left_with_the_reason() -> None:
    for raw, why in (
        (issue([comment("m", "MEMBER", ANSWER)], state="OPEN", reason=None), "open"),
        (issue([comment("m", "MEMBER", ANSWER)], reason="NOT_PLANNED"), "closed as not_planned"),
        (issue([comment("m", "MEMBER", ANSWER)], reason="DUPLICATE"), "closed as duplicate"),
    ):
        assert chosen(raw) is None
        assert refusal(read_thread(raw), Rules()) == why


def test_answers_by_others_by_bots_and_by_the_asker_do_not_count() -> None:
    assert chosen(issue([comment("helper", "NONE", ANSWER)])) is None
    assert chosen(issue([comment("helper", "CONTRIBUTOR", ANSWER)])) is None
    assert chosen(issue([comment("github-actions[bot]", "MEMBER", ANSWER, bot=True)])) is None
    assert chosen(issue([comment("asker", "MEMBER", ANSWER)])) is None
    assert chosen(issue([comment("helper", "CONTRIBUTOR", ANSWER)]), Rules(associations=("CONTRIBUTOR",))) == ANSWER


def test_the_comment_the_asker_thanked_is_the_answer_over_a_later_one() -> None:
    raw = issue(
        [
            comment("m1", "MEMBER", ANSWER, day=2),
            comment("asker", "NONE", "谢谢，解决了！", day=3),
            comment(
                "m2", "MEMBER", "Also note that the optimizer state is saved unless you pass --no-save-optim.", day=4
            ),
        ]
    )
    choice = choose(read_thread(raw))
    assert choice is not None and choice.answer.body == ANSWER and choice.signals["answer"] == "thanked"


def test_a_closing_word_a_question_back_or_a_later_comment_is_not_the_answer() -> None:
    closing = comment("m2", "MEMBER", "Closing, feel free to reopen if needed.", day=4)
    assert chosen(issue([comment("m1", "MEMBER", ANSWER, day=2), closing])) == ANSWER
    asks = comment("m2", "MEMBER", "Could you please share the full log and your launch script?", day=4)
    assert chosen(issue([comment("m1", "MEMBER", ANSWER, day=2), asks])) is None
    after_close = comment("m2", "MEMBER", "A much later comment that says more than enough to be an answer.", day=8)
    assert chosen(issue([comment("m1", "MEMBER", ANSWER, day=2), after_close], closed_day=5)) == ANSWER


def test_an_answer_someone_says_did_not_help_is_not_taken() -> None:
    raw = issue(
        [
            comment("m1", "MEMBER", ANSWER, day=2),
            comment("asker", "NONE", "I tried it, still got the same error.", day=3),
        ]
    )
    assert chosen(raw) is None


def test_a_label_and_a_window_can_be_required() -> None:
    raw = issue([comment("m", "MEMBER", ANSWER)])
    assert chosen(raw, Rules(label="FAQ")) is None and chosen(raw, Rules(label="question")) == ANSWER
    closed = read_thread(raw).closed_at or 0
    assert chosen(raw, Rules(closed_after=closed + 1)) is None and chosen(raw, Rules(closed_after=closed - 1)) == ANSWER


def test_a_discussion_needs_its_accepted_answer_not_by_a_bot() -> None:
    base = issue([], url="https://github.com/THUDM/slime/discussions/4", state="OPEN", reason=None)
    assert chosen(base | {"isAnswered": False}) is None
    accepted = {"author": {"login": "anyone"}, "authorAssociation": "NONE", "body": ANSWER}
    assert chosen(base | {"answer": accepted}) == ANSWER
    bot = {"author": {"login": "helper[bot]"}, "body": ANSWER}
    assert chosen(base | {"answer": bot}) is None
