"""Quoted errors: an issue or question quoting a specific error an entry quotes is that entry's, with certainty;
a generic error (`CUDA out of memory`) or one two entries quote decides nothing. On the shipped FAQs, with the real
embedder."""

from __future__ import annotations

import pytest

from kb.entries import Entry
from kb.issue_question import question_of
from kb.knowledge import KnowledgeBase
from kb.quoted_errors import QuotedErrors, errors_of
from kb.settings import Settings
from kb.verbatim import CERTAIN


@pytest.fixture(scope="module")
def kb(settings: Settings) -> KnowledgeBase:
    return KnowledgeBase.open(settings)


def entry(kb: KnowledgeBase, question: str) -> Entry:
    return next(e for e in kb.entries if any(question in v.question for v in e.versions()))


def test_an_entry_quotes_its_specific_errors_and_not_generic_ones(kb: KnowledgeBase) -> None:
    assert "assert self.lr_decay_steps > 0" in errors_of(entry(kb, "lr_decay_steps"))
    assert "AssertionError: batch_size 32 < chunks 64" in errors_of(entry(kb, "batch_size 32 < chunks 64"))
    assert errors_of(entry(kb, "torch.OutOfMemoryError: CUDA out of memory")) == set()


# The trace a user of an RL framework on Megatron-Core pasted, as quoted in
# https://github.com/NVIDIA/Megatron-LM/pull/7099 ("a config where the sample count was smaller than one global batch").
MEGATRON_TRACE = """Boot died with

```
File ".../megatron/core/optimizer_param_scheduler.py", line 159, in __init__
    assert self.lr_decay_steps > 0
AssertionError
```

which took real debugging time to trace back to the offending config knobs.
"""


def test_an_issue_pasting_an_entrys_error_is_that_entrys_with_certainty(kb: KnowledgeBase) -> None:
    question = question_of("Training dies at start-up with an AssertionError", MEGATRON_TRACE)
    result = kb.search_blocking(question, reads="issue")
    assert result.hits[0].entry.id == entry(kb, "lr_decay_steps").id
    assert result.confidence == CERTAIN and result.state == "answered"


def test_a_generic_error_decides_nothing(kb: KnowledgeBase) -> None:
    result = kb.search_blocking("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert result.confidence < CERTAIN


def test_errors_of_two_entries_decide_nothing(kb: KnowledgeBase) -> None:
    quoted = QuotedErrors(kb.entries)
    one, other = entry(kb, "lr_decay_steps"), entry(kb, "batch_size 32 < chunks 64")
    position = {e.id: i for i, e in enumerate(kb.entries)}
    assert quoted.owner("AssertionError: batch_size 32 < chunks 64") == position[other.id]
    assert quoted.owner("assert self.lr_decay_steps > 0 then AssertionError: batch_size 32 < chunks 64") is None
    assert quoted.owner("ASSERT  self.lr_decay_steps>0") == position[one.id], "case, spaces and marks aside"


def test_an_issue_titled_in_an_entrys_own_words_is_that_entrys(kb: KnowledgeBase) -> None:
    body = "I trained for 2 days with `--save /ckpt` and the job was preempted. Thanks!"
    result = kb.search_blocking(question_of("如何续训？", body), reads="issue")
    assert result.hits[0].entry.question == "如何续训？" and result.confidence == CERTAIN
    asked = kb.search_blocking(question_of("如何续训？", body))  # a question is certain only when whole
    assert asked.hits[0].entry.question == "如何续训？" and asked.confidence < CERTAIN
