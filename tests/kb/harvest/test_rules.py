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


def test_a_short_fix_counts_when_a_label_says_the_thread_was_solved() -> None:
    fix = [comment("owner", "OWNER", "刷新一下网页")]  # six characters: "reload the page"
    assert chosen(issue(fix)) is None
    assert chosen(issue(fix, labels=[{"name": "solved"}])) == "刷新一下网页"


def test_a_link_to_the_documentation_alone_answers_but_an_image_alone_does_not() -> None:
    docs = "https://llamafactory.readthedocs.io/zh-cn/latest/advanced/arguments.html"
    assert chosen(issue([comment("owner", "OWNER", docs)])) == docs
    image = "![image](https://user-images.githubusercontent.com/1/2.png)"
    assert chosen(issue([comment("owner", "OWNER", image)])) is None


def test_another_users_answer_counts_once_the_asker_confirms_it_and_a_maintainers_comes_first() -> None:
    user = "python src/train_bash.py -h 可以看具体参数"
    thanks = comment("asker", "NONE", "好的，按照您的方法可以查看到了，非常感谢！", day=3)
    assert chosen(issue([comment("helper", "NONE", user, day=2), thanks])) == user
    assert chosen(issue([comment("helper", "NONE", user, day=2)])) is None  # nobody confirmed it
    asking = comment("helper", "NONE", "Same here. How can we update the model from the hub?", day=2)
    ours = comment("m", "MEMBER", ANSWER, day=1)
    assert chosen(issue([ours, asking, comment("asker", "NONE", "yes, that was it. Thank you!", day=3)])) == ANSWER


def test_a_user_with_the_same_problem_may_confirm_the_answer() -> None:
    tried = "@asker can you try adding `--max-gpu-memory 20Gib` to cap each GPU's memory?"
    raw = issue(
        [
            comment("other", "NONE", "I am waiting for the answer too, one card runs out of memory.", day=1),
            comment("m", "MEMBER", tried, day=2),
            comment("other", "NONE", "nice! Your suggestion works. Thank you", day=3),
        ]
    )
    assert chosen(raw) == tried
    assert chosen(issue(raw["comments"][:2])) is None  # unconfirmed, it asks back


def test_a_duplicate_label_a_promise_or_an_invitation_to_send_a_fix_is_no_answer() -> None:
    assert chosen(issue([comment("m", "MEMBER", ANSWER)], labels=[{"name": "duplicate"}])) is None
    promise = (
        "Thank you for your great support! This part will be explained in the second part of the technical report."
    )
    assert chosen(issue([comment("m", "MEMBER", promise), comment("asker", "NONE", "I see. Thanks!", day=3)])) is None
    invite = "Thank you! Maybe you could submit a PR to fix this bug in the launch script."
    assert chosen(issue([comment("m", "MEMBER", invite)])) is None
    assert chosen(issue([comment("m", "MEMBER", f"{ANSWER} Let me know if it works.")])) is None


def test_a_chinese_note_closing_for_no_reply_does_not_displace_the_answer() -> None:
    note = "由于问题未复现且用户未回复，本issue视为已解决。如果问题还存在请重开该issue，感谢！"
    assert chosen(issue([comment("m", "MEMBER", ANSWER, day=2), comment("m", "MEMBER", note, day=4)])) == ANSWER
