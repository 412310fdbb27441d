"""The cases that slipped past the first rules, each as a small thread shaped like the real ones (their words taken from
public threads of the trackers the FAQs come from): closing notes, duplicates and requests by their text, a pull
request named alone, the asker's confirmation or new problem, short fixes, answers in Chinese."""

from __future__ import annotations

import pytest

from kb.harvest import Rules, choose, read_thread
from kb.harvest.rules import refusal

from .threads_data import ANSWER, comment, issue

ZH_ANSWER = "把 --rollout-num-gpus-per-engine 设成和 tp 一样的值就可以了，镜像里的 sglang 已经带了这个补丁。"


def chosen(raw: dict, rules: Rules = Rules()) -> str | None:
    choice = choose(read_thread(raw), rules)
    return None if choice is None else choice.answer.body


def test_a_closing_note_of_any_length_is_never_the_answer_in_either_language() -> None:
    notes = (
        "Closing this issue as stale as there has been no discussion in the past 3 months.\n\n"
        "If you are still experiencing the issue you describe, feel free to re-open this issue.",
        "Seems the issue is fixed. Closing",
        "Glad that you find it! I will close the issue.",
        "I'm not sure why you opened this issue, so closing for now. Feel free to ask questions if you have issues.",
        "如果还有问题请重新打开",
        "问题已经解决了，先关闭这个 issue，如果还有问题欢迎重新打开。",
    )
    for note in notes:
        assert chosen(issue([comment("m", "MEMBER", note, day=3)])) is None, note
        assert chosen(issue([comment("m1", "MEMBER", ANSWER, day=2), comment("m2", "MEMBER", note, day=3)])) == ANSWER
        zh = issue([comment("m1", "MEMBER", ZH_ANSWER, day=2), comment("m2", "MEMBER", note, day=3)])
        assert chosen(zh) == ZH_ANSWER, note


def test_a_long_answer_that_ends_by_closing_is_still_the_answer() -> None:
    answer = ANSWER + " The optimizer state is saved too unless you pass --no-save-optim. Closing, feel free to reopen."
    assert chosen(issue([comment("m", "MEMBER", answer)])) == answer
    words = "Remove the stale cache in ~/.cache/flashinfer and the inactive workers' files. Closing."
    assert chosen(issue([comment("m", "MEMBER", words)])) == words  # "stale", "inactive": words of the answer


def test_a_last_word_that_nothing_will_be_done_leaves_the_thread() -> None:
    raw = issue(
        [
            comment("simon-mo", "MEMBER", "Thank you for reporting at nccl repo. It doesn't seem like anything can be "
                    "done from our side.", day=2),
            comment("youkaichao", "MEMBER", "Closing since we can do nothing about it.", day=3),
        ]
    )  # fmt: skip
    assert chosen(raw) is None


def test_a_duplicate_said_in_the_thread_is_left_though_github_says_completed() -> None:
    for said, by in (
        ("Closing this in favor of #6537.", "MEMBER"),
        ("Closing because of #397", "MEMBER"),
        ("Closing as duplicate of #5344", "MEMBER"),
        ("Duplicate of https://github.com/THUDM/slime/issues/12", "NONE"),  # the asker's own
        ("与 #12 重复，关闭", "MEMBER"),
    ):
        raw = issue([comment("m1", "MEMBER", ANSWER, day=2), comment("m" if by == "MEMBER" else "asker", by, said)])
        assert chosen(raw) is None, said
        assert refusal(read_thread(raw), Rules()) == "a duplicate (the thread says so)"
    denied = comment("asker", "NONE", "This is not a duplicate of #12: that one is about ROCm.", day=1)
    assert chosen(issue([denied, comment("m1", "MEMBER", ANSWER, day=2)])) == ANSWER
    by_a_passer_by = comment("someone", "NONE", "Note this is probably duplicate of #5344", day=3)
    assert chosen(issue([comment("m1", "MEMBER", ANSWER, day=2), by_a_passer_by])) == ANSWER


def test_a_release_or_feature_request_takes_only_a_long_answer_never_a_release_note_or_a_link() -> None:
    release = issue(
        [comment("zhuzilin", "MEMBER", "close as we just released 0.2.0, sorry for the late release ❤️")],
        title="Request for new release",
        body="Is it possible to make a stable release soon that includes the fault tolerance and determinism features?",
    )
    assert chosen(release) is None
    feature = issue(
        [
            comment(
                "m", "MEMBER", "I believe this has been implemented in https://github.com/sgl-project/sglang/pull/5485"
            )
        ],
        title="[Feature] When will the GLM4-32B series be supported？",
        labels=[{"name": "new-model"}],
    )
    assert chosen(feature) is None
    workaround = (
        "vLLM's weight loader always takes a full tensor instead of sharded tensors, to make weight loading easier "
        "for different TP sizes. If you only have part of the tensors, create a full tensor with empty weights, copy "
        "your slices into it, and pass the full weight to load_weights."
    )
    asked = issue([comment("m", "MEMBER", workaround)], title="[Feature]: pass a split tensor to load_weights")
    assert chosen(asked) == workaround
    assert chosen(issue([comment("m", "MEMBER", ANSWER)], title="[Feature]: pass a split tensor")) is None


def test_a_pull_request_named_alone_is_not_an_answer() -> None:
    for said in (
        "This is now supported: https://github.com/sgl-project/sglang/pull/503",
        "This feature is supported now. see #503",
        "Fixed in https://github.com/NVIDIA/Megatron-LM/commit/c6e3b0c5bb4c14f57fb6d997dd11223e2ecbc839\n"
        "Thanks for reporting.",
        "已修复：https://github.com/alibaba/ROLL/pull/88",
    ):
        assert chosen(issue([comment("m", "MEMBER", said)])) is None, said
    with_words = (
        "您好，收到，脚本内外网同步有问题，已修复：https://github.com/alibaba/Pai-Megatron-Patch/pull/211\n"
        "然后刚又按照ReadMe重新测试下能跑通，辛苦再试试"
    )
    assert chosen(issue([comment("jerryli1981", "MEMBER", with_words)])) == with_words


def test_the_askers_confirmation_is_told_from_a_new_problem() -> None:
    for reply in (
        "Ok, but it's not installed by default in the image; after `pip install flash-attn` then it works",
        "Just asked out of curiosity. Thank you for your response!\n\n"
        "Also, if you have some time: with offloading I still get OOM above batch size 7.",
        "厉害，谢谢",
    ):
        raw = issue([comment("m", "MEMBER", ANSWER, day=2), comment("asker", "NONE", reply, day=3)])
        choice = choose(read_thread(raw))
        assert choice is not None and choice.signals["answer"] == "thanked", reply
    for reply in (
        "thanks, but now I get `RuntimeError: CUDA error: an illegal memory access was encountered`",
        "谢谢，不过现在又报错了：NCCL timeout",
    ):
        raw = issue([comment("m", "MEMBER", ANSWER, day=2), comment("asker", "NONE", reply, day=3)])
        assert chosen(raw) is None, reply


def test_a_short_fix_counts_once_the_asker_confirmed_it() -> None:
    for fix, thanks in (
        ("`ray stop --force` 再重新启动", "谢谢，可以了"),
        ("Run `ray stop --force` first.", "That did it, thanks!"),
        ("加上 --colocate 即可", "好了，感谢"),
    ):
        alone = issue([comment("m", "MEMBER", fix, day=2)])
        assert chosen(alone) is None, fix  # without the asker's word, too short to be sure
        confirmed = issue([comment("m", "MEMBER", fix, day=2), comment("asker", "NONE", thanks, day=3)])
        assert chosen(confirmed) == fix, fix


def test_a_chinese_answer_needs_fewer_characters_than_an_english_one() -> None:
    zh = "需要先把权重转换成 torch_dist 格式再加载"  # 16 Han characters: as much as 40 Latin ones
    assert chosen(issue([comment("m", "MEMBER", zh)])) == zh
    assert chosen(issue([comment("m", "MEMBER", "Convert it to torch_dist first.")])) is None  # 27 characters


def test_a_question_back_counts_when_the_asker_confirms_it_but_a_status_question_never_does() -> None:
    suggestion = "To compute prompt_logprobs, vLLM still needs one forward pass. Can you set the max tokens to 1?"
    raw = issue(
        [
            comment("simon-mo", "MEMBER", suggestion, day=2),
            comment("asker", "NONE", "that is what i do now, thanks!", day=3),
        ]
    )
    assert chosen(raw) == suggestion
    status = comment(
        "tjruwase", "MEMBER", "@asker, is this still a problem or now resolved by the DeepSpeed PR?", day=2
    )
    assert (
        chosen(issue([status, comment("asker", "NONE", "It has been solved by the DeepSpeed PR. Thanks!", day=3)]))
        is None
    )
    answer_to_another = comment(
        "hmellor", "MEMBER", "vLLM uses several GPUs only with `--tensor-parallel-size` above 1."
    )
    resolved = [comment("hmellor", "MEMBER", "@asker have you resolved your issue?", day=3)]
    raw = issue([answer_to_another, *resolved, comment("asker", "NONE", "Yeah I resolved. Thank you sir", day=4)])
    assert chosen(raw) is None


def test_a_contributor_counts_only_when_a_maintainer_says_so() -> None:
    raw = issue([comment("stas00", "CONTRIBUTOR", ANSWER)])
    assert chosen(raw) is None
    assert chosen(raw, Rules(associations=("OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR"))) == ANSWER


def test_the_associations_are_a_setting_whose_mistakes_are_named() -> None:
    from kb.errors import SettingsError
    from kb.settings import Settings

    assert Settings().harvest_association_list == ("OWNER", "MEMBER", "COLLABORATOR")
    wide = Settings(harvest_associations="owner, member,CONTRIBUTOR")
    assert wide.harvest_association_list == ("OWNER", "MEMBER", "CONTRIBUTOR")
    with pytest.raises(SettingsError, match="KB_HARVEST_ASSOCIATIONS.*BOSS"):
        Settings(harvest_associations="OWNER,BOSS")


def test_the_harvest_says_why_each_thread_made_no_draft() -> None:
    from kb.harvest import harvest, read_threads

    raws = [
        issue([comment("m", "MEMBER", "Closing this in favor of #6537.")], number=1),
        issue([comment("m", "MEMBER", "Seems the issue is fixed. Closing")], number=2),
        issue(
            [comment("m1", "MEMBER", ANSWER), comment("m2", "MEMBER", "Closing since we can do nothing about it.")],
            number=3,
        ),
        issue(
            [comment("m", "MEMBER", ANSWER), comment("asker", "NONE", "thanks, but now I get an NCCL error", day=3)],
            number=4,
        ),
        issue([comment("m", "MEMBER", ANSWER)], number=5, title="Request for new release"),
    ]
    done = harvest(read_threads(raws))
    assert done.drafts == [] and done.refused == {
        "a duplicate (the thread says so)": 1,
        "no maintainer answer": 1,
        "the maintainers' last word: nothing will be done": 1,
        "the answer did not help (a later comment says it still fails)": 1,
        "a request with no answer of how to do it": 1,
    }
