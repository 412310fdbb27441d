"""Every shipped entry's tags, as a reader of the entry would give them.

Each row was checked against the entry's question and answer, in both languages: a tag is
there because the entry is about it, not because a word of it appears in a quoted traceback,
a flag's name or a script's file name. A change to kb/data/tags.toml that moves any of these
shows here, entry by entry.
"""

from __future__ import annotations

import pytest

from ingest.sources import parse_sources
from kb.settings import SHIPPED_SOURCES
from kb.tags import TAGS

REVIEWED = {
    "chatlearn-v1-77a5152c": ("chatlearn", "checkpoint", "hardware", "jobs"),  # ECC Error
    "chatlearn-v1-5af1fcbb": (
        "chatlearn",
        "rollout",
        "reward",
    ),  # How to build a custom training flow for multiple reward mode
    "chatlearn-v1-718b8d0a": (
        "chatlearn",
        "configuration",
        "checkpoint",
        "parallelism",
    ),  # RuntimeError: Error(s) in loading state_dict for VocabParall
    "chatlearn-v1-c9520ec8": ("chatlearn", "configuration"),  # YAML Configuration
    "chatlearn-v1-7636c157": ("chatlearn", "oom"),  # How to enable 'Efficient memory sharing' to reduce memory us
    "chatlearn-v1-462e8aec": (
        "chatlearn",
        "configuration",
        "checkpoint",
        "conversion",
        "parallelism",
        "reward",
        "megatron",
    ),  # Megatron Model Conversion and Parallel Strategy
    "chatlearn-v1-5ce102b7": (
        "chatlearn",
        "compatibility",
        "checkpoint",
        "conversion",
        "performance",
        "megatron",
    ),  # Failure when converting checkpoint
    "chatlearn-v1-500db2f2": (
        "chatlearn",
        "parallelism",
        "rollout",
        "ray",
        "megatron",
    ),  # Alignment training with pipeline parallelism may encounter n
    "chatlearn-v1-a6b22cac": ("chatlearn", "configuration", "network", "jobs"),  # Applying for custom_port
    "chatlearn-v1-010d9e69": ("chatlearn", "configuration", "jobs"),  # Task failure but DLC status shows success
    "chatlearn-v1-01087ca6": (
        "chatlearn",
        "configuration",
        "checkpoint",
        "learning-rate",
        "megatron",
    ),  # Adjusting lr error in continued training
    "chatlearn-v1-2f08e017": (
        "chatlearn",
        "configuration",
        "checkpoint",
    ),  # How to specify the frequency of model saving during training
    "roll-5af528c9": ("roll", "conversion", "megatron", "huggingface"),  # How to convert Megatron models to HF format?
    "roll-2fbe805a": ("roll", "configuration", "resources", "rollout"),  # What is colocate mode?
    "roll-319f34ed": ("roll", "configuration", "resources", "rollout"),  # What is separate mode?
    "roll-8a9b8240": (
        "roll",
        "configuration",
        "parallelism",
        "resources",
        "batch-size",
        "data",
        "rollout",
        "megatron",
        "vllm",
        "sglang",
    ),  # What do rollout_batch_size and num_return_sequences_in_group
    "roll-ddc4f935": (
        "roll",
        "parallelism",
        "resources",
        "batch-size",
        "moe",
        "megatron",
        "deepspeed",
    ),  # How to set gradient_accumulation_steps and per_device_train_
    "roll-c8c94313": ("roll", "configuration", "profiling", "debugging", "ray"),  # How to get the training timeline?
    "roll-b02092f6": ("roll", "debugging", "ray"),  # How to debug code?
    "roll-7ea2bdda": ("roll", "configuration", "resources"),  # Error: self.node2pg[node_rank] KeyError: 1
    "roll-74e03259": (
        "roll",
        "configuration",
        "parallelism",
        "batch-size",
        "learning-rate",
        "data",
        "rollout",
    ),  # Error: assert self.lr_decay_steps > 0
    "roll-07a33c12": (
        "roll",
        "parallelism",
        "batch-size",
        "data",
        "rollout",
    ),  # Error: AssertionError: batch_size 32 < chunks 64
    "roll-e4e46963": (
        "roll",
        "configuration",
        "compile",
    ),  # Error: TypeError: BackendCompilerFailed.__init__() missing 1
    "slime-d8c372bd": (
        "slime",
        "configuration",
        "checkpoint",
        "data",
        "megatron",
    ),  # Why do I see garbled text during training?
    "slime-983e9032": (
        "slime",
        "configuration",
        "timeout",
        "resources",
        "jobs",
        "rollout",
        "ray",
    ),  # Why is my task stuck on the Ray submission page?
    "slime-98bc3dfa": (
        "slime",
        "configuration",
        "oom",
        "performance",
        "parallelism",
        "batch-size",
        "data",
        "rollout",
    ),  # Why did I encounter an Out-of-Memory (OOM) error during trai
    "slime-7f213b6f": (
        "slime",
        "configuration",
        "resources",
        "huggingface",
    ),  # During multi-node training, what should I do if the transfor
    "slime-b0ab398d": ("slime", "checkpoint"),  # How do I resume training?
    "slime-66198bd4": ("slime", "configuration", "batch-size", "data", "rollout"),  # How is the batch size calculated?
    "slime-9498fae5": ("slime", "performance", "data"),  # Does slime perform data packing / variable-length (varlen) p
    "slime-c1e44c3a": (
        "slime",
        "timeout",
        "parallelism",
        "resources",
        "network",
        "sglang",
    ),  # What should I do if the sglang component shows a Max retries
    "slime-43f40047": (
        "slime",
        "stability",
        "debugging",
        "data",
    ),  # My gradient norm is very high and the training crashes. What
    "slime-d5382212": (
        "slime",
        "configuration",
        "timeout",
        "performance",
        "data",
        "rollout",
        "sglang",
        "huggingface",
    ),  # My sglang generation takes an extremely long time, GPU power
    "slime-ef4b9674": (
        "slime",
        "configuration",
        "oom",
        "sglang",
    ),  # Sglang shows an “an illegal memory access was encountered” err
    "slime-0be934c6": (
        "slime",
        "configuration",
        "compile",
        "ray",
    ),  # A JSONDecodeError occurs related to torch compile/inductor.
    "slime-92ed7b3e": ("slime", "configuration", "stability"),  # Gradient becomes NaN or Inf during training.
    "chatlearn-8b7488c3": (
        "chatlearn",
        "conversion",
        "megatron",
        "huggingface",
    ),  # Converting Models Between Megatron and Hugging Face Formats
    "chatlearn-eff2f5be": (
        "chatlearn",
        "configuration",
        "oom",
        "performance",
        "batch-size",
        "moe",
        "fsdp",
    ),  # How to Accelerate FSDP Training Speed
    "chatlearn-937ea492": (
        "chatlearn",
        "configuration",
        "timeout",
        "parallelism",
        "rollout",
        "ray",
        "vllm",
    ),  # ray.exceptions.RayChannelTimeoutError During Rollout Inferen
    "chatlearn-37dc280b": (
        "chatlearn",
        "configuration",
        "checkpoint",
        "oom",
        "ray",
        "fsdp",
        "huggingface",
    ),  # Why does Ray report an OOM error when loading weights with t
    "chatlearn-a0b0593f": (
        "chatlearn",
        "configuration",
        "oom",
        "performance",
        "parallelism",
        "resources",
        "batch-size",
        "rollout",
        "fsdp",
    ),  # Why does torch.OutOfMemoryError: CUDA out of memory occur du
    "chatlearn-10896810": (
        "chatlearn",
        "compatibility",
        "configuration",
        "oom",
        "stability",
        "performance",
        "moe",
        "compile",
        "megatron",
    ),  # Why Does RL Training of the Megatron-Core MoE Model Suffer f
    "training-env-cd8551d4": ("deepspeed", "docker"),  # Exec docker
    "training-env-09239f0e": ("deepspeed", "installation", "compile"),  # Unable to pre-compile async_io
    "training-env-a3fde4a6": (
        "deepspeed",
        "compatibility",
        "configuration",
        "performance",
        "parallelism",
        "learning-rate",
        "attention",
        "fsdp",
    ),  # Note (Deepspeed)
    "training-env-dbbfbefd": (
        "deepspeed",
        "installation",
        "compatibility",
        "configuration",
        "attention",
    ),  # Pip err ModuleNotFoundError: No module named 'torch'
    "training-env-f8fdc4f1": ("deepspeed", "installation", "attention"),  # Functools Err
    "training-env-ffa2d42d": (
        "deepspeed",
        "compatibility",
        "checkpoint",
        "oom",
        "attention",
        "fsdp",
    ),  # OOM while saving
    "training-env-33d6816c": ("deepspeed", "attention"),  # Deepspeed & flash-attn
    "training-env-76bdcff9": ("deepspeed", "compatibility", "hardware", "attention"),  # Note (FastChat)
    "training-env-77e94575": (
        "deepspeed",
        "installation",
        "lora",
    ),  # bitsandbytes/libbitsandbytes_cpu.so: undefined symbol: cget_
    "training-env-d7f5329c": (
        "deepspeed",
        "installation",
        "compatibility",
        "configuration",
        "lora",
        "huggingface",
    ),  # Transformers version
    "training-env-72fcab3a": (
        "deepspeed",
        "installation",
        "compatibility",
        "checkpoint",
        "lora",
    ),  # Error when saving (Qlora)
    "training-env-258460ab": (
        "deepspeed",
        "configuration",
        "oom",
        "performance",
        "resources",
        "hardware",
        "batch-size",
        "data",
        "rollout",
        "lora",
    ),  # Note (Qlora)
    "training-env-2480d48b": (
        "deepspeed",
        "installation",
        "compatibility",
        "checkpoint",
        "lora",
    ),  # Error when saving (lora)
    "training-env-0ecfbbcc": (
        "deepspeed",
        "compatibility",
        "checkpoint",
        "conversion",
        "oom",
        "data",
        "lora",
        "huggingface",
    ),  # Note (lora)
    "training-env-672d13b7": (
        "deepspeed",
        "checkpoint",
        "oom",
        "huggingface",
    ),  # The program gets killed for no apparent reason
    "training-env-f73eba13": ("deepspeed", "debugging", "compile"),  # CUDA masks the error
    "training-env-4f887c9c": (
        "deepspeed",
        "installation",
        "compatibility",
        "performance",
        "attention",
        "compile",
    ),  # Other ways to speed things up
    "roll-npu-adc3abea": ("roll", "installation", "npu", "docker"),  # NPU Not Visible Inside Container
    "roll-npu-29366e1c": ("roll", "npu", "docker", "vllm"),  # vLLM-Ascend Import Error
    "roll-npu-0c33a456": ("roll", "installation", "compatibility", "npu", "docker"),  # torch_npu Not Working
    "roll-npu-71d2cdc7": ("roll", "installation", "compatibility", "npu", "docker", "vllm"),  # SOC Version Mismatch
    "roll-npu-478a867a": ("roll", "configuration", "npu", "docker", "vllm"),  # Disable FRACTAL_NZ Mode
    "roll-npu-44db2195": (
        "roll",
        "configuration",
        "debugging",
        "npu",
        "network",
        "docker",
    ),  # HCCL Parameter Plane Port Binding Failure
    "roll-npu-e159ed76": (
        "roll",
        "installation",
        "compatibility",
        "configuration",
        "npu",
        "docker",
    ),  # triton Import Error
    "roll-npu-767c072a": ("roll", "configuration", "npu", "megatron"),  # Megatron Strategy Not Supported
    "roll-npu-aa6b21e0": (
        "roll",
        "configuration",
        "timeout",
        "debugging",
        "resources",
        "npu",
    ),  # HCCL Communication Timeout or Failure
    "roll-npu-8986cb62": ("roll", "resources", "npu", "network", "ray"),  # Ray Cluster Nodes Not Joining
    "roll-npu-270f5ccf": ("roll", "resources", "ray"),  # Worker Nodes Exit Immediately
    "roll-npu-35deedaa": (
        "roll",
        "configuration",
        "timeout",
        "resources",
        "npu",
        "ray",
    ),  # Cross-Node NPU Communication Timeout
    "roll-npu-0fb28cb3": ("roll", "checkpoint", "resources", "docker", "data", "ray"),  # Shared Storage Not Accessible
    "roll-npu-bd5fd615": ("roll", "configuration", "performance", "npu", "docker", "ray"),  # ulimit Too Low
    "roll-npu-61db5a0e": (
        "roll",
        "configuration",
        "oom",
        "performance",
        "npu",
        "batch-size",
        "rollout",
        "lora",
    ),  # Out of NPU Memory
    "roll-npu-979ddb35": (
        "roll",
        "installation",
        "compatibility",
        "configuration",
        "performance",
        "npu",
        "docker",
        "rollout",
        "compile",
        "vllm",
    ),  # Slow vLLM Inference on NPU
}


def test_the_table_covers_every_shipped_entry() -> None:
    assert len(REVIEWED) == 75
    assert {e.id for e in parse_sources(SHIPPED_SOURCES)} == set(REVIEWED)


@pytest.mark.parametrize("entry", parse_sources(SHIPPED_SOURCES), ids=lambda e: e.id)
def test_each_entry_has_the_reviewed_tags(entry) -> None:
    assert entry.tags == REVIEWED[entry.id]


def test_the_conversion_entry_is_not_about_hardware() -> None:
    """Its example runs `run_32xH20.sh`: a script's name, not a question about H20 cards."""
    conversion = "chatlearn-8b7488c3"  # Converting Models Between Megatron and Hugging Face Formats
    assert REVIEWED[conversion] == ("chatlearn", "conversion", "megatron", "huggingface")


@pytest.mark.parametrize(
    ("text", "tag", "matches"),
    [
        ("bash scripts/deepseek_v3/run_32xH20.sh", "hardware", False),
        ("trained on 8xH100", "hardware", True),
        ("ECC Error 为机器故障", "hardware", True),
        ("gpu 功率都打满了", "hardware", False),
        ("RuntimeError: CUDA error: device-side assert triggered", "hardware", False),
        ("the model of `--hf-checkpoint`", "checkpoint", False),
        ("load the checkpoint", "checkpoint", True),
        ('logger.debug(f"rank: {rank}")', "debugging", False),
        ("it only affects the debug-level logging output", "debugging", False),
        ("仅影响调试级别的日志输出", "debugging", False),
        ("use pdb to debug", "debugging", True),
        ("使用 pdb 进行单步调试", "debugging", True),
        ("Traceback (most recent call last):", "debugging", False),
        ("improve GPU utilization", "resources", False),
        ("How to build a custom training flow", "installation", False),
        ("make sure your data and model are compatible", "compatibility", False),
        ("检查交换机/路由器是否允许 HCCL 流量", "moe", False),
        ("Check if switch/router allows HCCL traffic", "moe", False),
        ("降低路由器负载均衡损失", "moe", True),
        ("If router bias is enabled", "moe", True),
        ("均会调用HCCL的通信算子接口", "compile", False),
        ("错误的 triton 后端会导致算子编译回退", "compile", True),
        ("Only the head node executes the training pipeline", "parallelism", False),
        ("仅主节点执行训练流水线", "parallelism", False),
        ("the model's pipeline stages", "parallelism", True),
        ("Alignment 训练开启流水线时", "parallelism", True),
        ("验证 CANN 环境是否正确加载", "checkpoint", False),
        ("如未加载 CANN 环境，手动执行", "checkpoint", False),
        ("megatron 没有被正确加载", "checkpoint", True),
        ("Ray worker 进程意外崩溃", "stability", False),
        ("训练崩溃", "stability", True),
        ("`import vllm_ascend` 失败", "npu", True),
        ("torch.npu.is_available()", "npu", True),
        ("unpin the input tensors", "npu", False),
    ],
)
def test_the_rules_that_misfired(text: str, tag: str, matches: bool) -> None:
    assert TAGS[tag].matches(text) is matches
