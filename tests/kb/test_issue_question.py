"""The question a GitHub issue asks: its title and what its body asks, without the template, the environment list
and the trace's noise; cut to the search's limit; in linear time on any body GitHub accepts (65,536 characters)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ingest.markdown_faq import parse_source
from kb import issue_question
from kb.entries import Source
from kb.insights import Gap, draft_entry
from kb.insights.records import QuestionCount
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


def test_an_issue_forms_question_is_its_title_its_words_and_its_traces_error_not_its_command() -> None:
    assert question_of(TITLE, ISSUE_FORM) == (
        f"{TITLE}\n\n{ASKED}\n\n"
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
    "single backticks never closed": "`a\n" * 21_845,
    "middle-dot fences": "···\n" * 16_384,
    "images never closed": "![a](" * 13_107,
    "img tags never closed": "<img " * 13_107,
    "notebook frames": "File ~/a/torch/b.py:1, in f(x)\n----> 1 f()\n" * 1_400,
    "indented code": "    x = f(\n" * 5_957,
    "flags": "--a \\\n" * 10_922,
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
    gap = Gap(question, 1, (QuestionCount(question, "en", 1, 0.0, 0.0, ("github",)),), ("en",), ("github",), 0.0, 0.0)
    draft = draft_entry(gap)
    assert draft.startswith(f"## {TITLE}?\n\n<!-- Asked once")
    assert f"     - {TITLE} When I resume training" in draft and draft.count("-->") == 1


def test_a_draft_entry_pasted_is_read_as_one_entry_named_by_the_title(tmp_path: Path) -> None:
    question = question_of(TITLE, ISSUE_FORM + "\nA wording with --> in it")
    gap = Gap(question, 1, (QuestionCount(question, "en", 1, 0.0, 0.0, ("github",)),), ("en",), ("github",), 0.0, 0.0)
    document = tmp_path / "faq.md"
    document.write_text(f"# FAQ\n\n{draft_entry(gap)}", encoding="utf-8")
    source = Source("t", "faq.md", "FAQ", "slime", "en", "v1", "https://example.com/faq.md")
    assert [e.question for e in parse_source(document, source)] == [f"{TITLE}?"]


# Real issues, cut short, each of a shape the bot used to read as the asker's words.


def test_a_launch_script_and_a_screenshot_are_left_out() -> None:
    # https://github.com/THUDM/slime/issues/795
    body = (
        "Hi slime maintainers. I am running slime v0.1.0 for a stable version and encountering the same error "
        "multiple times.\n\n"
        '<img width="469" height="307" alt="Image" src="https://github.com/user-attachments/assets/46072227" />\n\n'
        "Launch script:\n\n```\n#!/bin/bash\n\nset -e\n\n# will prevent ray from buffering stdout/stderr\n"
        "export PYTHONBUFFERED=16\n\nCKPT_ARGS=(\n   --hf-checkpoint $SHARED_STORAGE_DATA/hf_models/Qwen3-235B\n"
        "   --ref-load $SHARED_STORAGE_DATA/megatron_models/Qwen3-235B\n   --save-interval 20\n)\n```"
    )
    question = question_of("[Bug] `Unexpected result nan` on 64x H100, Qwen3 235B", body)
    assert question.split("\n\n")[1:] == [
        "Hi slime maintainers. I am running slime v0.1.0 for a stable version and encountering the same error "
        "multiple times.",
        "Launch script:",
    ]


def test_a_quantization_config_call_is_left_out_or_read_as_its_names(monkeypatch: pytest.MonkeyPatch) -> None:
    # https://github.com/huggingface/accelerate/issues/1588
    title = "AttributeError: 'BitsAndBytesConfig' object has no attribute 'load_in_4bit'"
    body = (
        "### Reproduction\n\nWhile Fine-tuning GPT-NeoX-20B with QLoRa using accelerate and bitsandbytes I ran into "
        "this issue:\n```\nimport torch\nfrom transformers import AutoTokenizer, AutoModelForCausalLM, "
        'BitsAndBytesConfig\n\nmodel_name = "EleutherAI/gpt-neox-20b"\n\nquant_config = BitsAndBytesConfig(\n'
        "    load_in_4bit=True,\n    bnb_4bit_use_double_quant=True,\n"
        '    bnb_4bit_quant_type="nf4",\n    bnb_4bit_compute_dtype=torch.bfloat16\n)\n```'
    )
    asked = "While Fine-tuning GPT-NeoX-20B with QLoRa using accelerate and bitsandbytes I ran into this issue:"
    assert question_of(title, body) == f"{title}\n\n{asked}"
    monkeypatch.setattr(issue_question, "CODE_WORDS", 6)
    assert question_of(title, body) == (
        f"{title}\n\n{asked}\n\n"
        "AutoTokenizer AutoModelForCausalLM BitsAndBytesConfig model_name quant_config load_in_4bit"
    )


def test_an_image_and_a_link_leave_their_words_and_not_their_addresses() -> None:
    # https://github.com/NVIDIA/Megatron-LM/issues/1232
    body = (
        "![Image](https://github.com/user-attachments/assets/58dfb988-6634-46b6-9d98-2b4ec50d7a22)\n\n"
        "Based on this doc - https://github.com/NVIDIA/Megatron-LM/blob/main/docs/source/api-guide/"
        "dist_checkpointing.rst\nThere are some conflicting statements.\n"
        "2. i tried 8 card config, src - tp2pp2dp2, dst - tp2pp1dp4 didn't work"
    )
    assert question_of("[QUESTION] How to load checkpoint saved in one parallel configuration", body).split("\n\n", 1)[
        1
    ] == (
        "Based on this doc -\nThere are some conflicting statements.\n"
        "2. i tried 8 card config, src - tp2pp2dp2, dst - tp2pp1dp4 didn't work"
    )
    # https://github.com/hiyouga/LlamaFactory/issues/2495: a link's text stays
    assert question_of("t", "see [the docs](https://example.com/a_b) first") == "t\n\nsee the docs first"


def test_an_ipython_traceback_is_reduced_to_its_error_as_pythons_is() -> None:
    # https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1246
    body = (
        "Now I run into this error:\n```\n\n"
        "---------------------------------------------------------------------------\n"
        "ValueError                                Traceback (most recent call last)\n"
        "Cell In[7], line 2\n      1 # 2. Load Llama3 model\n"
        "----> 2 model, tokenizer = FastLanguageModel.from_pretrained(\n"
        '      3     model_name = "unsloth/llama-3-8b-bnb-4bit",\n'
        "File ~/miniconda/envs/llama3/lib/python3.9/site-packages/transformers/modeling_utils.py:3049, in "
        "PreTrainedModel.from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs)\n"
        "   3047 if load_in_4bit:\n"
        "-> 3049     raise ValueError(\n"
        "ValueError: You have a version of `bitsandbytes` that is not compatible with 4bit inference and training\n"
        "```"
    )
    question = question_of("not compatible with 4bit inference and training", body)
    assert question.split("\n\n")[1:] == [
        "Now I run into this error:",
        "ValueError: You have a version of `bitsandbytes` that is not compatible with\nPreTrainedModel.from_pretrained",
    ]
    # https://github.com/huggingface/peft/issues/1239: a notebook in VS Code, its frames and lines links
    vscode = (
        "AttributeError                            Traceback (most recent call last)\n"
        "[/](https://vscode-remote.vscode-resource.vscode-cdn.net/h/Untitled.ipynb) 单元格 48 line 1\n"
        "----> [1](vscode-notebook-cell://ssh-remote/Untitled.ipynb?line=0) model.load_adapter('/models/7b')\n\n"
        "File [~/anaconda3/envs//lib/python3.10/site-packages/peft/peft_model.py:686](https://vscode-remote/"
        "peft_model.py:686), in PeftModel.load_adapter(self, model_id, adapter_name, is_trainable, **kwargs)\n"
        "    [684](https://vscode-remote/peft_model.py:684)     else:\n"
        "AttributeError: 'LlamaForCausalLM' object has no attribute 'load_adapter'"
    )
    assert question_of("error while loading lora", vscode) == (
        "error while loading lora\n\nAttributeError: 'LlamaForCausalLM' object has no attribute 'load_adapter'"
        "\nPeftModel.load_adapter"
    )


def test_an_unfenced_trace_after_the_askers_words_keeps_both() -> None:
    # https://github.com/hiyouga/LlamaFactory/issues/5243
    body = (
        "### Reproduction\n\n报错代码如下：\nTraceback (most recent call last):\n"
        '  File "/home/gpuall/LLaMA-Factory/src/llamafactory/launcher.py", line 15, in <module>\n'
        "    from llamafactory.train.tuner import run_exp\nModuleNotFoundError: No module named 'llamafactory'"
    )
    assert question_of("使用SFT微调时“训练出错”", body) == (
        "使用SFT微调时“训练出错”\n\n报错代码如下：\nModuleNotFoundError: No module named 'llamafactory'"
    )


def test_code_in_single_backticks_over_several_lines_is_read_as_code() -> None:
    # https://github.com/HandsOnLLM/Hands-On-Large-Language-Models/issues/51
    body = (
        "Running this part of the code in chapter 12, I get the following error.\n\n"
        "`from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig\n\n"
        'model_name = "TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T"\n'
        "bnb_config = BitsAndBytesConfig(\n    load_in_4bit=True,  # Use 4-bit precision model loading\n)`"
    )
    assert question_of("Chapter 12: bitsandbytes error", body) == (
        "Chapter 12: bitsandbytes error\n\nRunning this part of the code in chapter 12, I get the following error."
    )


def test_a_pinned_package_keeps_its_name_and_a_list_of_them_is_a_dump() -> None:
    # https://github.com/hiyouga/LlamaFactory/issues/5252
    body = "### Reproduction\n\ntorch == 2.4.0\ndeepspeed == 0.15.0\nllamafactory-cli train llama3_lora_sft_ds3.yaml"
    assert question_of("llama3_lora_sft_ds3.yaml 报错", body) == (
        "llama3_lora_sft_ds3.yaml 报错\n\ntorch\ndeepspeed\nllamafactory-cli train llama3_lora_sft_ds3.yaml"
    )
    # https://github.com/hiyouga/LlamaFactory/issues/2546 (its thread): the line that names the framework
    assert question_of("DPO使用deepspeed zero3全参微调报错", "deepspeed==0.11.1").endswith("\n\ndeepspeed")
    listed = "\n".join(f"{name}==1.0" for name in ("torch", "vllm", "ray", "numpy", "peft"))
    assert question_of("t", f"It fails.\n\n{listed}") == "t\n\nIt fails."


def test_an_environment_section_runs_to_the_next_heading_of_its_level() -> None:
    # https://github.com/hiyouga/LlamaFactory/issues/5113: an nvcc banner and a pip list under `### System Info`
    body = (
        "### System Info\n\n```\n> nvcc --version\nnvcc: NVIDIA (R) Cuda compiler driver\n"
        "Copyright (c) 2005-2024 NVIDIA Corporation\nCuda compilation tools, release 12.6, V12.6.20\n```\n\n"
        "```\n> pip list\nPackage                   Version\n------------------------- ---------------\n"
        "accelerate                0.32.0\n```\n\n### Reproduction\n\nllamafactory-cli webui"
    )
    assert question_of("No CUDA Environment found", body) == "No CUDA Environment found\n\nllamafactory-cli webui"
    # the same section with its outputs under bold sub-headings, and the PATH set in it
    bold = body.replace("```\n> nvcc --version\n", "**nvcc --version Output:**\n\n").replace(
        "V12.6.20\n```", "V12.6.20\n\nexport PATH=/usr/local/cuda-12.6/bin:$PATH"
    )
    assert question_of("No CUDA Environment found", bold) == "No CUDA Environment found\n\nllamafactory-cli webui"
    # a bold heading of its own (DeepSpeed's template: https://github.com/deepspeedai/DeepSpeed/issues/4846) ends
    # at the next bold one
    deepspeed = "**System info:**\n - OS: Ubuntu 20.04\n\n**Launcher context**\nI launch with `deepspeed` on 2 nodes"
    assert question_of("t", deepspeed) == "t\n\nI launch with `deepspeed` on 2 nodes"
    # an nvcc banner or a PATH set outside any such section is the environment too
    assert question_of(
        "t", "nvcc: NVIDIA (R) Cuda compiler driver\nexport PATH=/usr/local/cuda/bin:$PATH\nIt fails."
    ) == ("t\n\nIt fails.")


def test_odd_fences_are_fences() -> None:
    for fence in ("···python", "  ```python", "~~~"):
        close = fence.strip()[:3]
        body = f"It fails:\n\n{fence}\nimport torch\nmodel = AutoModel.from_pretrained(path)\n{close}"
        assert question_of("t", body) == "t\n\nIt fails:", fence


def test_a_command_or_code_pasted_without_a_fence_is_left_out_and_a_nested_list_kept() -> None:
    # https://github.com/hiyouga/LlamaFactory/issues/3100
    body = (
        "### Reproduction\n\ndeepspeed --master_port=9901 --num_gpus=8  src/train_bash.py \\\n    --stage pt \\\n"
        "    --lr_scheduler_type cosine \\\n    --deepspeed ds_config.json \\\n    --bf16\n\n"
        "### Expected behavior\n\nlearning_rate 参数 并没有按照cosine衰减，是否有bug？"
    )
    assert question_of("--lr_scheduler_type cosine 不起作用？", body) == (
        "--lr_scheduler_type cosine 不起作用？\n\nlearning_rate 参数 并没有按照cosine衰减，是否有bug？"
    )
    # https://github.com/verl-project/verl/issues/1474
    body = (
        "我在debug的时候，发现trainer需要进行init_model, 如下\n        if self.use_critic:\n"
        "            self.critic_wg = all_wg['critic']\n            self.critic_wg.init_model()\n\n"
        "但是我无法走进去代码里面看到具体是怎么做的。。。 我用了breakpoint()也进不去，谢谢！！"
    )
    assert question_of("如何对actorworker里面的代码进行调试", body) == (
        "如何对actorworker里面的代码进行调试\n\n我在debug的时候，发现trainer需要进行init_model, 如下\n\n"
        "但是我无法走进去代码里面看到具体是怎么做的。。。 我用了breakpoint()也进不去，谢谢！！"
    )
    nested = "Steps:\n1. Install:\n    - torch 2.1,\n    - deepspeed from source,\n2. Run the script."
    assert question_of("t", nested) == f"t\n\n{nested}"
