"""Replies the harvest takes for no answer: thanks from an asker still trying, a thread the maintainers opened, an
asker who solved it before anyone answered, a note closing many threads at once, a duplicate said in words, a
question sent to another tracker, and a maintainer asking for more."""

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
