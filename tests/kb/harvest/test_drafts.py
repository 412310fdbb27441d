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


def test_the_question_is_read_as_the_bot_reads_an_issue_so_commands_and_configs_stay_out() -> None:
    """The draft's question is `question_of`'s, the tracker bot's reader: a launch command continued with `\\` and a
    fenced config are left out of it."""
    from kb.issue_question import question_of

    body = (
        "按照 README 启动训练时报错，请问是什么原因？\n\n"
        "cd /workspace/Pai-Megatron-Patch/examples/llama3\n"
        "sh run_pretrain_megatron_llama.sh  \\\ndsw  \\\n../../  \\\n8B  \\\n1  \\\n8  \\\n1e-5  \\\n"
        "/workspace/output_megatron_llama3\n\n"
        "```yaml\nactor_train:\n  model_args:\n    dtype: bf16\n  training_args:\n    learning_rate: 1.0e-6\n```\n"
    )
    raw = issue([comment("m", "MEMBER", ANSWER)], title="llama3 报错", body=body)
    choice = choose(read_threads([raw])[0], Rules())
    assert choice is not None
    draft = draft_of(choice)
    assert draft is not None
    assert draft.question == "llama3 报错\n\n" + question_of("llama3 报错", body).split("\n", 1)[1].strip()
    assert "请问是什么原因" in draft.question
    for dump in ("run_pretrain_megatron_llama.sh", "1e-5", "learning_rate", "output_megatron_llama3"):
        assert dump not in draft.question


def test_only_an_entry_of_the_threads_own_framework_takes_it_as_an_alternate() -> None:
    from kb.entries import Entry
    from kb.harvest import same_framework

    def entry(framework: str, page: str) -> Entry:
        return Entry("e1", "q", "a", "s", "t", "v", page, framework, "", page, "en")

    roll = entry("ROLL", "https://github.com/alibaba/ROLL/blob/v0.1.0/docs/faq.md")
    assert same_framework(roll, "alibaba/ROLL")
    assert not same_framework(roll, "OpenRLHF/OpenRLHF")
    deepspeed = entry("DeepSpeed", "https://github.com/LLM-Frame-Group/Target-Daliy/blob/main/faq.md")
    assert same_framework(deepspeed, "deepspeedai/DeepSpeed")  # by the framework's name
    assert same_framework(deepspeed, "LLM-Frame-Group/Target-Daliy")  # by where its page is
    assert not same_framework(deepspeed, "THUDM/slime")
    assert same_framework(entry("", "https://example.com/team-faq"), "THUDM/slime")  # a team's own FAQ
