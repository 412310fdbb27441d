"""Pasted traces come down to the exception, the failing line and the framework's frames."""

from kb.stacktrace import MAX_PASTE_CHARS, fits, looks_like_trace, reduce_trace, too_long
from tests.support.traces import OOM_TRACE

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


def test_a_long_trace_fits_once_reduced_and_keeps_its_last_line():
    assert 5_000 < len(OOM_TRACE) < 6_500 and "OutOfMemoryError" not in OOM_TRACE[:2000]
    reduced = reduce_trace(OOM_TRACE)
    assert reduced.splitlines()[0] == "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate GiB. GPU has a"
    assert reduced.splitlines()[-2:] == ["train_step", "learn"] and len(reduced) < 300
    assert fits(OOM_TRACE, 2000)
    assert not fits("x" * 2001, 2000)  # only a trace may be longer than the limit
    assert not fits(OOM_TRACE * 10, 2000)  # past MAX_PASTE_CHARS
    assert (
        too_long("query", 54_630, 2000)
        == "the query is 54630 characters; the limit is 2000 (a pasted stack trace: 50000)"
    )


def test_a_trace_that_lost_its_line_breaks_in_a_one_line_box_is_still_reduced():
    flat = " ".join(OOM_TRACE.splitlines())
    assert reduce_trace(flat) == reduce_trace(OOM_TRACE)
    assert fits(flat, 2000)


def test_a_trace_of_50000_characters_is_reduced_in_well_under_a_second():
    import time

    long = (OOM_TRACE * 10)[: MAX_PASTE_CHARS - len(OOM_TRACE)] + OOM_TRACE
    started = time.perf_counter()
    assert fits(long, 2000)
    assert time.perf_counter() - started < 1


def test_a_notebook_traceback_pasted_is_reduced_to_its_error_and_framework_frames() -> None:
    # https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1246, as a notebook prints it
    trace = (
        "---------------------------------------------------------------------------\n"
        "ValueError                                Traceback (most recent call last)\n"
        "Cell In[7], line 2\n      1 # 2. Load Llama3 model\n"
        "----> 2 model, tokenizer = FastLanguageModel.from_pretrained(\n"
        "File ~/miniconda/envs/llama3/lib/python3.9/site-packages/transformers/modeling_utils.py:3049, in "
        "PreTrainedModel.from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs)\n"
        "   3047 if load_in_4bit:\n"
        "-> 3049     raise ValueError(\n"
        "ValueError: You have a version of `bitsandbytes` that is not compatible with 4bit inference"
    )
    assert looks_like_trace(trace)
    assert reduce_trace(trace) == (
        "ValueError: You have a version of `bitsandbytes` that is not compatible with\nPreTrainedModel.from_pretrained"
    )
    # the failing line of a framework's frame is kept as Python's is
    frame = "File ~/env/lib/python3.10/site-packages/torch/nn/modules/module.py:1501, in Module._call_impl(self)\n"
    assert reduce_trace(f"{frame}-> 1501 return forward_call(*args)\nRuntimeError: CUDA error: an illegal memory") == (
        "RuntimeError: CUDA error: an illegal memory\nreturn forward_call(*args)\nModule._call_impl"
    )
