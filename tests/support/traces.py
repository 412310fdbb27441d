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
