"""Pasted stack traces the tests ask with."""

from __future__ import annotations

_CALLS = [  # (module, function, code) of the frames an out-of-memory error passes through in training
    ("chatlearn/runtime/engine.py", "learn", "self.trainer.train(episode)"),
    ("chatlearn/models/fsdp_module.py", "train_step", "loss = self.model(**batch).loss"),
    ("torch/nn/modules/module.py", "_call_impl", "return forward_call(*args, **kwargs)"),
    ("torch/distributed/fsdp/fully_sharded_data_parallel.py", "forward", "output = self._fsdp_wrapped_module(*args)"),
]


def _frame(n: int) -> str:
    module, function, code = _CALLS[n % len(_CALLS)]
    return (
        f'[rank{n % 8}]:   File "/usr/local/lib/python3.10/site-packages/{module}", line {100 + n}, in {function}\n'
        f"[rank{n % 8}]:     {code}\n"
    )


# A pasted out-of-memory trace of 5.4 KB: the exception raised is its last line, past the first 2,000 characters.
OOM_TRACE = (
    "[rank0]: Traceback (most recent call last):\n"
    + "".join(_frame(n) for n in range(36))
    + "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.23 GiB is free.\n"
)

# What torchrun prints after a worker's error: the other workers stopped, and its summary: 2.7 KB that end the paste.
TORCHRUN_SHUTDOWN = (
    "".join(
        f"W1128 05:00:00.{123000 + pid} 1234 torch/distributed/elastic/multiprocessing/api.py:897] "
        f"Sending process {5678 + pid} closing signal SIGTERM\n"
        for pid in range(15)
    )
    + "E1128 05:00:01.456000 1234 torch/distributed/elastic/multiprocessing/api.py:869] "
    "failed (exitcode: 1) local_rank: 0 (pid: 5677) of binary: /usr/bin/python\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "============================================================\n"
    "train.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "  <NO_OTHER_FAILURES>\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2026-11-28_05:00:01\n"
    "  host      : node-1\n"
    "  rank      : 0 (local_rank: 0)\n"
    "  exitcode  : 1 (pid: 5677)\n"
    "  error_file: <N/A>\n"
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
    "============================================================\n"
)
OOM_THEN_SHUTDOWN = OOM_TRACE + TORCHRUN_SHUTDOWN
