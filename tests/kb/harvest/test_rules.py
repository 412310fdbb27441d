"""Which threads the rules choose, and which comment they take as the answer."""

from __future__ import annotations

import json

from kb.harvest import Rules, choose, read_thread, read_threads
from kb.harvest.rules import ANSWER_KINDS, refusal
from tests.support.paths import DATA

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


def _why(raw: dict) -> str:
    from kb.harvest.rules import decide

    decided = decide(read_thread(raw))
    return decided if isinstance(decided, str) else ""


def test_a_last_word_sending_the_question_elsewhere_or_beyond_the_project_is_no_answer() -> None:
    for said in (
        "Thanks for the report. This is not related to the development of this repo, so I will leave it here.",
        "Modelling questions like this one are better to ask in the discussions, where others share settings.",
        "这不是本项目的bug，不属于我们的问题范围，可以去讨论区交流一下具体的训练经验。",
        "推理部署的加速这块超出了我们的能力范围，建议换用专门的推理框架来部署模型。",
    ):
        raw = issue([comment("m", "MEMBER", said)])
        assert chosen(raw) is None and _why(raw) == "the maintainers' last word: nothing will be done", said


def test_a_thread_merged_into_another_is_a_duplicate() -> None:
    for said in (
        "We are merging this issue into #41 for better tracking. Please follow that one.",
        "Let's continue the discussion in <https://github.com/o/r/issues/9>, which has the logs.",
        "这个问题已合并到 #41 统一跟踪。",
    ):
        raw = issue([comment("m1", "MEMBER", ANSWER, day=2), comment("m2", "MEMBER", said, day=3)])
        assert refusal(read_thread(raw), Rules()) == "a duplicate (the thread says so)", said


def test_work_under_way_is_no_answer_even_when_thanked() -> None:
    for said in ("Investigating, sorry for the trouble!", "We are looking into it.", "正在排查这个问题。"):
        raw = issue([comment("m", "MEMBER", said, day=2), comment("asker", "NONE", "Thanks a lot!", day=3)])
        assert chosen(raw) is None, said


def test_a_request_the_maintainers_say_is_coming_is_left() -> None:
    body = "Are there any plans to support LoRA for the critic model? It would save a lot of memory."
    long = "Yes, that's right. " + ANSWER + " I'm implementing the critic part today, it needs a new loader."
    raw = issue([comment("m", "MEMBER", long)], title="LoRA for the critic", body=body)
    assert _why(raw) == "a request the maintainers say is coming"
    asked = issue([comment("m", "MEMBER", ANSWER)], title="How to resume?", body="How do I resume training?")
    assert chosen(asked) == ANSWER  # a question, not a request: the rule is not reached


def test_a_request_answered_by_what_to_use_today_is_kept() -> None:
    use = "Please use https://example.org/docs/convert.html to convert the checkpoint."
    raw = issue([comment("m", "MEMBER", use)], title="[Feature Request] Save checkpoints in HF format")
    assert chosen(raw) == use
    see = "See https://example.org/docs/roadmap.html for the plan."
    assert chosen(issue([comment("m", "MEMBER", see)], title="[Feature Request] Save checkpoints in HF format")) is None


def test_thanks_followed_by_a_new_failure_in_a_later_paragraph_confirms_nothing() -> None:
    later = "Thank you for the speedy fix!\n\nAnyway, a follow-up: now the update fails with a permission error."
    raw = issue([comment("m", "MEMBER", ANSWER, day=2), comment("asker", "NONE", later, day=3)])
    assert chosen(raw) is None
    fine = "Thank you for the speedy fix!\n\nFor others: I also had to clear the cache once."
    assert chosen(issue([comment("m", "MEMBER", ANSWER, day=2), comment("asker", "NONE", fine, day=3)])) == ANSWER


def test_an_askers_question_after_the_answer_left_unanswered_leaves_the_thread() -> None:
    for again in ("那这个参数大概应该设成多少合适，和 batch size 有关系", "OK. How do I set it for the critic then?"):
        raw = issue([comment("m", "MEMBER", ANSWER, day=2), comment("asker", "NONE", again, day=3)])
        assert _why(raw) == "the asker's question after the answer went unanswered", again
        closed = raw | {"comments": [*raw["comments"], comment("m", "MEMBER", "Closing, feel free to reopen.", day=4)]}
        assert chosen(closed) is None
        more = "Set `--critic-load` to the same directory; the critic resumes from its own checkpoint there."
        answered = raw | {"comments": [*raw["comments"], comment("m", "MEMBER", more, day=4)]}
        assert chosen(answered) == more
    remark = comment("asker", "NONE", "I see, which is what the docs say as well", day=3)
    assert chosen(issue([comment("m", "MEMBER", ANSWER, day=2), remark])) == ANSWER  # a remark asks nothing


def test_an_asker_who_solved_it_elsewhere_confirms_no_answer() -> None:
    tryit = comment("m", "MEMBER", "Could you try the latest main branch and restart the workers?", day=2)
    for said in (
        "I solved it myself by downgrading torch, thanks.",
        "Solved it following #142, thanks",
        "自己解决了，谢谢",
    ):
        assert chosen(issue([tryit, comment("asker", "NONE", said, day=3)])) is None, said
    fixed = comment("m", "MEMBER", "Fixed in #142: upgrade to 0.3.1 and pass --no-cache the first time.", day=2)
    assert chosen(issue([fixed, comment("asker", "NONE", "Thanks, #142 fixed it", day=3)])) == fixed["body"]


def test_another_users_answer_a_maintainer_says_is_right_is_the_answer() -> None:
    helper = comment("helper", "NONE", "Set num_generations to 7 in the yaml: the batch must divide by it.", day=2)
    endorse = comment("m", "MEMBER", "Thanks @helper, that is correct. Closing", day=3)
    raw = issue([helper, endorse])
    choice = choose(read_thread(raw))
    assert choice is not None and choice.answer.body == helper["body"] and choice.signals["answer"] == "endorsed"
    assert chosen(issue([helper, comment("m", "MEMBER", "Closing, feel free to reopen.", day=3)])) is None
    asker = comment("asker", "NONE", helper["body"], day=2)
    assert chosen(issue([asker, endorse])) is None  # the asker's own finding is no answer


def test_the_thanks_names_whose_answer_it_was() -> None:
    hint = comment("m", "MEMBER", "Could you upgrade transformers to 4.30 and try again?", day=2)
    fix = comment("helper2", "NONE", "Load without device='cuda' and call model.cuda() after loading it.", day=3)
    raw = issue([hint, fix, comment("asker", "NONE", "按照 helper2 的方法解决了，谢谢", day=4)])
    assert chosen(raw) == fix["body"]
    plain = issue([hint, fix, comment("asker", "NONE", "解决了，谢谢", day=4)])
    assert chosen(plain) == hint["body"]  # a maintainer's before another user's


def test_of_one_maintainers_comments_in_a_row_the_thanked_answer_is_the_fuller() -> None:
    first = comment("m", "MEMBER", ANSWER + " A larger batch needs more GPUs too.", day=2)
    addendum = comment("m", "MEMBER", "It's set [here](https://example.org/f.py#L9), fyi.", day=2)
    raw = issue([first, addendum, comment("asker", "NONE", "My bad, appreciate it!", day=3)])
    assert chosen(raw) == first["body"]


def test_a_one_word_answer_is_kept_when_thanked_and_labelled_solved() -> None:
    raw = issue([comment("m", "MEMBER", "yaml", day=2), comment("asker", "NONE", "感谢！", day=3)])
    assert chosen(raw) is None
    assert chosen(raw | {"labels": [{"name": "solved"}]}) == "yaml"


def test_another_users_bare_me_too_does_not_undo_the_answer() -> None:
    for said, kept in (
        ("Same problem here", True),
        ("我也遇到了同样的问题", True),
        ("I tried it, still the same error.", False),
    ):
        raw = issue([comment("m", "MEMBER", ANSWER, day=2), comment("other", "NONE", said, day=3)])
        assert (chosen(raw) == ANSWER) is kept, said


def test_a_later_reply_to_another_user_does_not_replace_the_answer_to_the_asker() -> None:
    other = comment("other", "NONE", "Does this also work on V100 cards?", day=3)
    aside = comment("m", "MEMBER", "@other On V100 you also need to turn off flash attention in the config.", day=4)
    assert chosen(issue([comment("m", "MEMBER", ANSWER, day=2), other, aside])) == ANSWER
    follow = comment("asker", "NONE", "It resumes, but from which rollout id exactly?", day=3)
    more = comment("m", "MEMBER", "From the rollout id saved with the checkpoint, printed when it loads.", day=4)
    assert chosen(issue([comment("m", "MEMBER", ANSWER, day=2), follow, more])) == more["body"]


def test_a_later_answer_quoting_another_user_leaves_the_answer_quoting_the_asker_replaces_it() -> None:
    other = comment("other", "NONE", "Why is the video pixel limit so much smaller than the image one?", day=3)
    quoting = "> Why is the video pixel limit so much smaller than the image one?\n\nVideos are cut into frames first."
    aside = comment("m", "MEMBER", quoting + " Each frame is then resized on its own.", day=4)
    assert chosen(issue([comment("m", "MEMBER", ANSWER, day=2), other, aside])) == ANSWER
    asked = "How do I resume from the checkpoint of a run that crashed?"
    own = comment("m", "MEMBER", f"> {asked}\n\nPass `--load` with the crashed run's `--save` directory, as is.", day=4)
    raw = issue([comment("m", "MEMBER", ANSWER, day=2), own], body=asked)
    assert chosen(raw) == own["body"]


def test_news_of_a_fix_is_no_answer_unless_the_asker_confirms_it() -> None:
    for said in (
        "Apologies - just pushed new changes to fix it! Hopefully it works now!",
        "Upon testing with the current release, the error no longer persists. Closing this issue.",
        "已在 ee7dfe7957d12fedaba0fd7bcba3aa3efbfb1c5d 修复",
        "支持了 llm和lvlm都支持了",
    ):
        assert chosen(issue([comment("m", "MEMBER", said)])) is None, said
        confirmed = issue(
            [comment("m", "MEMBER", said, day=2), comment("asker", "NONE", "Thanks, it works now!", day=3)]
        )
        assert chosen(confirmed) == said, said
    how = "This is fixed in 0.4.2: upgrade with `pip install -U slime`, then pass `--load` again to resume."
    assert chosen(issue([comment("m", "MEMBER", how)])) == how  # the news with what to do


def test_a_maintainer_declining_or_pointing_to_where_it_is_discussed_leaves_the_thread() -> None:
    declined = "抱歉，我们这边暂时没有对外公开推理相关部分代码的计划，如果有遇到具体问题可以再看下。"
    assert chosen(issue([comment("m", "MEMBER", declined)])) is None
    elsewhere = (
        "Thank you for your interest in our work! This issue is discussed here: https://github.com/o/r/issues/88."
    )
    raw = issue([comment("m", "OWNER", elsewhere)])
    assert refusal(read_thread(raw), Rules()) == "a duplicate (the thread says so)"


def test_requests_in_either_language_need_an_answer_of_how_to_do_it_today() -> None:
    for body in (
        "从代码看还没有支持多轮对话sft，这个大概什么时候能进行支持？",
        "有长文本RLHF的需求，期望能够支持，谢谢！",
        "When will multi-turn SFT be supported in the trainer?",
    ):
        raw = issue(
            [comment("m", "MEMBER", "这个可以在 llama_sft.py 里进一步自定义开发，参考现有的数据处理即可。")], body=body
        )
        assert _why(raw) == "a request with no answer of how to do it", body


def test_a_chinese_promise_of_a_fix_is_no_answer() -> None:
    said = "感谢提醒，现在的代码落后于README一个版本，我们会进行修复"
    assert chosen(issue([comment("m", "MEMBER", said)])) is None


def test_an_asker_who_answers_himself_after_the_maintainers_leaves_the_thread() -> None:
    ours = "除了Zero3和gradient checkpoint，目前确实没有比较好的减少显存或内存的方法，7b模型最好要更多的显存。"
    own = comment("asker", "NONE", "我自己来回答一下，在加载模型的时候指定bf16可以减少一半的内存占用", day=3)
    raw = issue([comment("m", "MEMBER", ours, day=2), own])
    assert _why(raw) == "the asker answered it himself"
    assert chosen(issue([comment("m", "MEMBER", ours, day=2)])) == ours


def test_every_answer_chosen_is_of_a_kind_the_page_names() -> None:
    """`/insights` names each kind of `ANSWER_KINDS` (tests/server/routes/test_harvested.py); the rules make no other."""
    kinds = set()
    names = ("threads.json", "tune_more.json", "unseen.json", "heldout.json", "fresh.json", "blind.json", "sealed.json")
    for name in (*names, "untouched.json"):
        raw = json.loads((DATA / "harvest" / name).read_text(encoding="utf-8"))
        for thread in read_threads(raw, name):
            choice = choose(thread)
            if choice is not None:
                kinds.add(choice.signals["answer"])
    assert kinds <= set(ANSWER_KINDS) and {"thanked", "endorsed", "last_before_close"} <= kinds


def test_only_confirmed_answers_when_the_rules_ask_for_them() -> None:
    strict = Rules(confirmed_only=True)
    last_word = issue([comment("m", "MEMBER", ANSWER)])
    assert chosen(last_word) == ANSWER and chosen(last_word, strict) is None
    thanked = issue([comment("m", "MEMBER", ANSWER, day=2), comment("asker", "NONE", "Thanks, that worked!", day=3)])
    assert chosen(thanked, strict) == ANSWER


def test_a_request_to_release_weights_code_or_a_model_needs_an_answer_of_how_to_get_it_today() -> None:
    link = comment("m", "OWNER", "https://huggingface.co/o/model-rl20")
    for title in (
        "Releasing final model weights",
        "Plans to release the model checkpoints?",
        "Model weight release",
        "13b啥时候发布呢？",
    ):
        assert _why(issue([link], title=title)) == "a request with no answer of how to do it", title
    planned = "Yes, that's in our plan. We are working with the legal team to make the models publicly available."
    assert _why(issue([comment("m", "MEMBER", planned)], title="Plans to release the model checkpoints?")) == (
        "a request the maintainers say is coming"
    )
    wished = issue([comment("m", "MEMBER", ANSWER)], body="我挺喜欢这个设计，希望提供知识库的api。")
    assert _why(wished) == "a request with no answer of how to do it"


def test_a_note_to_self_an_untried_idea_or_an_invitation_to_contribute_is_no_answer() -> None:
    for said in (
        "Note to self, seems like v0.2 additionally does not use sliding window attention in its config.",
        "We haven't tried GRPO yet, and haven't compared the two.",
        "That's because the config only has v0.1 and the loader rejects other names. PRs are welcome.",
        "clip目前还真的不支持，这个我加到需求列表里",
    ):
        assert chosen(issue([comment("m", "MEMBER", said)])) is None, said
