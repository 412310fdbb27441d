"""Extractive answers and follow-up questions."""

import pytest

from kb.answer import compose_answer, followup_query
from kb.hits import SearchResult


@pytest.mark.parametrize(
    ("previous", "message", "query"),
    [
        ("ChatLearn 里 Megatron 模型怎么转成 HF？", "那 ROLL 呢？", "里 Megatron 模型怎么转成 HF？ 那 ROLL 呢？"),
        ("vLLM OOM in slime", "what about for sglang?", "OOM in slime what about for sglang?"),
        ("slime OOM", "how do I debug ROLL", "how do I debug ROLL"),  # a question of its own
        ("slime OOM", "checkpoint?", "slime OOM checkpoint?"),  # one word leans on the last question
    ],
)
def test_follow_up_reads_the_previous_question(previous, message, query):
    history = [{"role": "user", "content": previous}, {"role": "assistant", "content": "…"}]
    assert followup_query(message, history) == query


def test_without_history_the_message_stands_alone():
    assert followup_query("那 ROLL 呢？", []) == "那 ROLL 呢？"


def test_no_hits_says_so_in_the_askers_language():
    answer = compose_answer(SearchResult(query="x", hits=()), "zh")
    assert (answer.text, answer.answered, answer.sources) == ("FAQ 中没有把握的答案，也没有相近的条目。", False, ())


def test_a_conversation_about_an_entry_reads_every_message_with_its_question():
    assert followup_query("how do I do that on 2 nodes?", [], subject="How do I resume training?") == (
        "How do I resume training? how do I do that on 2 nodes?"
    )
    history = [{"role": "user", "content": "vLLM OOM"}, {"role": "assistant", "content": "…"}]
    assert followup_query("what about for sglang?", history, subject="slime OOM with vLLM") == (
        "slime OOM with OOM what about for sglang?"
    )
