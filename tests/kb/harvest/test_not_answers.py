"""Replies the harvest takes for no answer: thanks from an asker still trying, a thread the maintainers opened, an
asker who solved it before anyone answered, a note closing many threads at once, a duplicate said in words, a
question sent to another tracker, a maintainer asking for more or only asking, a reply that says the answer missed,
and thanks to someone who never spoke in the thread."""

from __future__ import annotations

from kb.harvest import Rules, choose, notes, read_thread
from kb.harvest.rules import asks_back, decide
from kb.harvest.threads import Comment

from .threads_data import ANSWER, comment, issue


def _why(raw: dict) -> str:
    decided = decide(read_thread(raw), Rules())
    assert isinstance(decided, str), decided
    return decided


def test_thanks_from_an_asker_still_trying_confirms_nothing() -> None:
    for said in (
        "多谢，我看下，p tuning试过，很难收敛",
        "正在尝试用源码编译，感谢回复！",
        "Thanks, I'll try it tomorrow.",
    ):
        assert not notes.confirms(said), said
    assert notes.confirms("Thanks, that worked!") and notes.confirms("谢谢，解决了！")
    assert notes.confirms("Thanks, I built the latest code. Issue is resolved. Will try the new version.")
    trying = issue([comment("m", "MEMBER", ANSWER, day=2), comment("asker", "NONE", "Thanks, I'll try it.", day=3)])
    choice = choose(read_thread(trying))
    assert choice is not None and choice.signals["answer"] == "last_before_close"


def test_a_thread_the_maintainers_opened_is_left() -> None:
    raw = issue(
        [comment("colleague", "MEMBER", ANSWER, day=2), comment("rasbt", "MEMBER", "Ooops, thanks!", day=3)],
        author="rasbt",
    )
    assert _why(raw) == "opened by the maintainers"
    assert choose(read_thread(issue([comment("colleague", "MEMBER", ANSWER)], author="rasbt"))) is not None


def test_an_asker_who_solved_it_before_anyone_answered_leaves_the_thread() -> None:
    solved = comment("asker", "NONE", "问题已解决", day=2)
    how = comment("other", "NONE", "麻烦请问是如何解决的呢", day=3)
    raw = issue([solved, how, comment("m", "MEMBER", ANSWER, day=4)])
    assert _why(raw) == "the asker solved it before anyone answered"
    moved_on = comment("asker", "NONE", "I solved the import error, but now I get a CUDA error on launch.", day=2)
    assert choose(read_thread(issue([moved_on, comment("m", "MEMBER", ANSWER, day=3)]))) is not None
    more = comment("asker", "NONE", "More detail: it fails on the second node only. Thanks in advance!", day=2)
    assert choose(read_thread(issue([more, comment("m", "MEMBER", ANSWER, day=3)]))) is not None


def test_a_note_closing_many_threads_at_once_is_no_answer() -> None:
    bulk = (
        "Since the current release we now have official support for Windows via `pip install bitsandbytes>=0.43.0`. "
        "We're closing all old Windows issues and are asking everyone to try installing the new release."
    )
    assert _why(issue([comment("m", "MEMBER", bulk)])) == "the maintainers' last word closes many threads at once"


def test_a_duplicate_said_in_words_and_a_question_sent_to_another_tracker_are_left() -> None:
    duplicate = issue([comment("m", "MEMBER", "duplication of https://github.com/lm-sys/FastChat/issues/1")])
    assert _why(duplicate) == "a duplicate (the thread says so)"
    for said in (
        "可以先试试GPU的能不能正常跑。可以到https://github.com/PaddlePaddle/PaddleNLP/issues 这里提issues，让paddlenlp的解决",
        "This comes from the tokenizer, not from this project: please open an issue in the transformers repo.",
    ):
        assert _why(issue([comment("m", "MEMBER", said)])) == "the maintainers' last word: nothing will be done", said


def test_a_maintainer_asking_for_code_to_run_has_not_answered() -> None:
    asked = "我在note中运行会报不一样的错误，请问可否在终端环境运行看下，也可以提供下能在终端环境运行的python代码，notebook不太方便排查"
    assert asks_back(Comment("m", "MEMBER", asked))
    assert not asks_back(
        Comment("m", "MEMBER", "我们提供下载链接，模型权重在 ModelScope 上，按 README 的步骤加载即可。")
    )


def test_a_reply_that_says_the_answer_missed_confirms_nothing() -> None:
    for said in ("应该不是 因为第一次重命名成功了", "不是这个问题。加了也一样。", "No, that's not it, same error."):
        assert notes.denies(notes.own_words(said)) and not notes.confirms(said) and notes.new_problem(said), said
    assert notes.confirms("No problem, thanks! It works now.") and not notes.denies("No problem, thanks!")
    missed = issue(
        [comment("m", "MEMBER", ANSWER, day=2), comment("asker", "NONE", "不是这个问题。加了也一样。", day=3)]
    )
    assert _why(missed) == "the answer did not help (a later comment says it still fails)"
    other = comment("other", "NONE", "pip install --upgrade didn't solve this problem, how did you solve it?", day=3)
    assert _why(issue([comment("m", "MEMBER", ANSWER, day=2), other])) == (
        "the answer did not help (a later comment says it still fails)"
    )


def test_a_lone_question_answers_nothing_even_when_the_asker_replies_with_thanks() -> None:
    assert notes.only_asks("怎么合并的？") and notes.only_asks("How do you launch the merge?")
    assert not notes.only_asks("试试把 save_steps 调大一些呢？")  # a suggestion put as a question
    assert not notes.only_asks("Why does it fail? Because `--load` is missing: pass the directory `--save` wrote.")
    own_fix = comment("asker", "NONE", "改成只训练 qkv 模块就解决了，谢谢", day=3)
    assert _why(issue([comment("owner", "OWNER", "怎么合并的？", day=2), own_fix])) == "no maintainer answer"
    tried = issue(
        [
            comment("m", "MEMBER", "试试把 save_steps 调大一些呢？", day=2),
            comment("asker", "NONE", "谢谢，可以了", day=3),
        ]
    )
    choice = choose(read_thread(tried))
    assert choice is not None and choice.signals["answer"] == "thanked"


def test_thanks_to_someone_who_never_spoke_in_the_thread_confirms_nothing() -> None:
    guess = comment("other", "NONE", "Same here, the tutorial's pinned versions are all out of date by now.", day=2)
    thanks = comment("asker", "NONE", "@someone-else 谢谢你的方案，已经解决了", day=3)
    assert _why(issue([guess, thanks])) == "no maintainer answer"
    named = comment("asker", "NONE", "@other 谢谢你的方案，已经解决了", day=3)
    helpful = comment(
        "other", "NONE", "Pin transformers to 4.45.0 and accelerate to 0.33.0; the tutorial predates both."
    )
    choice = choose(read_thread(issue([helpful, named])))
    assert choice is not None and choice.signals["answer"] == "thanked"


def test_a_maintainer_asking_for_details_or_sending_the_asker_elsewhere_has_not_answered() -> None:
    for asked in (
        "请按照issue模版补充运行环境信息，以便我们更快确定问题",
        "Hi, it would be better if you could share the detailed environment and package versions.",
    ):
        assert asks_back(Comment("m", "MEMBER", asked)), asked
    redirect = "这部分量化代码的兼容性有问题，请移步上游仓库反馈"
    assert _why(issue([comment("m", "MEMBER", redirect)])) == "the maintainers' last word: nothing will be done"


def test_a_timeline_asked_for_and_promised_is_a_request_not_an_answer() -> None:
    promised = (
        "Thanks! I'm hoping to get model weights and inference code up in the next week, and the rest after that."
    )
    raw = issue([comment("owner", "OWNER", promised)], title="Estimated timeline for code and weights?")
    assert _why(raw) == "a request the maintainers say is coming"
