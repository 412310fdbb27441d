"""Pasted traces come down to the exception, the failing line and the framework's frames."""

from kb.stacktrace import looks_like_trace, reduce_trace

TRACE = """\
(RayWorkerWrapper pid=12345) [rank3]: Traceback (most recent call last):
[rank3]:   File "/usr/local/lib/python3.10/site-packages/megatron/training/checkpointing.py", line 1190, in load_checkpoint
[rank3]:     state_dict = torch.load(path)
[rank3]:   File "/home/me/run.py", line 12, in helper
[rank3]:     go()
[rank3]: RuntimeError: Error(s) in loading state_dict for VocabParallelEmbedding:
[rank3]: \tsize mismatch for weight: copying a param with shape torch.Size([50304, 4096]) from checkpoint 0x7f3a
"""


def test_trace_is_reduced_to_its_signal():
    assert reduce_trace(TRACE) == "\n".join(
        [
            "RuntimeError: Error(s) in loading state_dict for VocabParallelEmbedding:",
            "size mismatch for weight: copying a param with shape torch.Size from checkpoint",
            "load_checkpoint",
        ]
    )


def test_plain_questions_pass_unchanged():
    question = "how do I resume training from step 200?"
    assert not looks_like_trace(question)
    assert reduce_trace(question) == question


def test_log_lines_with_rank_prefixes_count_as_a_trace():
    log = "[rank0]: NCCL error: unhandled system error\n[rank1]: NCCL error: unhandled system error"
    assert looks_like_trace(log)
    assert reduce_trace(log) == "NCCL error: unhandled system error"
