"""The question a GitHub issue asks: its title and what its body asks, without the template, the environment list
and the trace's noise; cut to the search's limit; in linear time on any body GitHub accepts (65,536 characters)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ingest.markdown_faq import parse_source
from kb.entries import Source
from kb.insights import Gap, draft_entry
from kb.insights.records import AskedQuestion
from kb.issue_question import BODY_CHARS, QUESTION_CHARS, question_of
from kb.search import searched_text

TITLE = "Loss resets after resuming from a checkpoint"
ASKED = "When I resume training with slime, the loss jumps back to its first value.\nHow do I resume properly?"
TRACE = """Traceback (most recent call last):
  File "/usr/lib/python3.10/site-packages/slime/train.py", line 10, in main
    load_checkpoint(args)
  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 1000, in load
    raise RuntimeError("bad")
RuntimeError: Error(s) in loading state_dict for GPTModel: Missing key(s) in state_dict: "decoder.layers.0"
"""
COLLECT_ENV = """Collecting environment information...
PyTorch version: 2.1.0+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
OS: Ubuntu 22.04.3 LTS (x86_64)
Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: True
GPU models and configuration: GPU 0: NVIDIA H100 80GB HBM3
Versions of relevant libraries:
[pip3] numpy==1.26.4
[pip3] torch==2.1.0
"""
ISSUE_FORM = f"""<!-- Thank you for reporting! Please search the existing issues first. -->
### Checklist

- [x] I have searched the existing issues
- [ ] I have read the documentation

### Describe the bug

{ASKED}

### Reproduction

```
python train.py --load ckpt/
```

```
{TRACE}```

### Environment

- torch: 2.1.0
- CUDA: 12.1
- Python version: 3.10

### Additional context

_No response_
"""


def test_an_issue_forms_question_is_its_title_its_words_and_its_traces_error() -> None:
    assert question_of(TITLE, ISSUE_FORM) == (
        f"{TITLE}\n\n{ASKED}\n\npython train.py --load ckpt/\n\n"
        'RuntimeError: Error(s) in loading state_dict for GPTModel: Missing key(s) in state_dict: "decoder.layers.0"'
        "\nload\nmain"
    )


def test_environment_lists_and_dumps_are_dropped_wherever_they_are() -> None:
    body = (
        f"{ASKED}\n\n**Environment**\n\n```\n{COLLECT_ENV}```\n\n"
        "Python version: 3.10.12\nIs CUDA available: True\ntransformers==4.40.0\nvllm      0.4.2\n\n"
        "```\nPackage    Version\n---------- -------\nvllm       0.4.2\ntorch      2.1.0\n```\n"
    )
    assert question_of(TITLE, body) == f"{TITLE}\n\n{ASKED}"


def test_an_error_line_and_a_question_with_a_colon_are_kept() -> None:
    body = "CUDA error: an illegal memory access was encountered\nWhich version of vllm works: 0.4 or 0.5?"
    assert question_of(TITLE, body) == f"{TITLE}\n\n{body}"


def test_a_plain_body_is_kept_as_written_after_its_title() -> None:
    assert (
        question_of("  How do I resume?  ", "I use slime.\n\n\n\nIt fails.")
        == "How do I resume?\n\nI use slime.\n\nIt fails."
    )
    assert question_of("How do I resume?", "") == "How do I resume?"


def test_html_comments_are_dropped_and_an_unclosed_one_hides_the_rest_as_on_github() -> None:
    assert question_of(TITLE, "a <!-- x --> b <!-- y\n-->c") == f"{TITLE}\n\na  b c"
    assert question_of(TITLE, "seen <!-- never closed\nhidden") == f"{TITLE}\n\nseen"


def test_the_question_fits_the_searchs_limit_and_a_long_body_is_read_to_its_bound() -> None:
    long = question_of(TITLE, "how do I resume " * 5_000)
    assert QUESTION_CHARS - 20 < len(long) <= QUESTION_CHARS and long.startswith(f"{TITLE}\n\nhow do I resume")
    assert searched_text(long)  # the search takes it whole
    assert "beyond" not in question_of(TITLE, "<!--" + " " * BODY_CHARS + "-->beyond")


def test_a_long_trace_is_condensed_to_its_error_lines() -> None:
    frames = '  File "/usr/lib/python3.10/site-packages/torch/nn/module.py", line 1, in _call_impl\n    x()\n' * 300
    body = (
        f"{ASKED}\n\n```\nTraceback (most recent call last):\n{frames}torch.OutOfMemoryError: CUDA out of memory.\n```"
    )
    assert len(body) > 20_000
    assert (
        question_of(TITLE, body)
        == f"{TITLE}\n\n{ASKED}\n\ntorch.OutOfMemoryError: CUDA out of memory.\nx()\n_call_impl"
    )


HOSTILE = {
    "line breaks": "\n" * 65_536,
    "unclosed comments": "<!--" * 16_384,
    "comments and line breaks": "<!--\n" * 13_107,
    "spaces then a line break": (" " * 100 + "\n") * 648,
    "list items never checked": "- [" * 21_845,
    "fences": "```\n" * 16_384,
    "hashes": "#" * 65_536,
    "bold markers": "**" * 32_768,
    "key and colon": "torch: " * 9_362,
    "one frame repeated": ('  File "/a/torch/b.py", line 1, in f\n' * 1_700),
}


@pytest.mark.parametrize("shape", list(HOSTILE))
def test_any_body_github_accepts_is_read_in_linear_time(shape: str) -> None:
    body = HOSTILE[shape]
    assert 60_000 <= len(body) <= 65_536
    started = time.perf_counter()
    question_of(TITLE, body)
    assert time.perf_counter() - started < 1.0  # generous: each takes milliseconds (bench/bench_hostile_text.py)


def test_a_draft_from_an_issues_question_is_headed_by_its_title() -> None:
    question = question_of(TITLE, ISSUE_FORM)
    gap = Gap(question, 1, (AskedQuestion(question, "en", 1, 0.0, 0.0, ("github",)),), ("en",), ("github",), 0.0, 0.0)
    draft = draft_entry(gap)
    assert draft.startswith(f"## {TITLE}?\n\n<!-- Asked once")
    assert f"     - {TITLE} When I resume training" in draft and draft.count("-->") == 1


def test_a_draft_entry_pasted_is_read_as_one_entry_named_by_the_title(tmp_path: Path) -> None:
    question = question_of(TITLE, ISSUE_FORM + "\nA wording with --> in it")
    gap = Gap(question, 1, (AskedQuestion(question, "en", 1, 0.0, 0.0, ("github",)),), ("en",), ("github",), 0.0, 0.0)
    document = tmp_path / "faq.md"
    document.write_text(f"# FAQ\n\n{draft_entry(gap)}", encoding="utf-8")
    source = Source("t", "faq.md", "FAQ", "slime", "en", "v1", "https://example.com/faq.md")
    assert [e.question for e in parse_source(document, source)] == [f"{TITLE}?"]
