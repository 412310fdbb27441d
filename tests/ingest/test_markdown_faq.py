"""The FAQ parser on the six shipped documents and on bad input."""

import re
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import pytest

from ingest.manifest import load_manifest
from ingest.markdown_faq import parse_source
from ingest.sources import parse_sources
from kb.entries import Entry, Source, entry_id
from kb.errors import SourceError
from kb.settings import SHIPPED_SOURCES

SOURCES = {source.name: source for source in load_manifest(SHIPPED_SOURCES)}
V1_URL = "https://github.com/alibaba/ChatLearn/blob/v1.0.3/docs/zh/faq.md"
V1_DIR = "https://github.com/alibaba/ChatLearn/blob/v1.0.3/docs/zh/"
SLIME_URL = "https://github.com/THUDM/slime/blob/a3d5cbf30a50c867d8eb0f61121db89faea9d426/docs/zh/qa.md"
ENV_URL = (
    "https://github.com/LLM-Frame-Group/Target-Daliy/blob/"
    "9cb966b1dd94baa08436bf70d02b808a14f7f596/week3-error-collection.md"
)


def parse(name: str) -> list[Entry]:
    source = SOURCES[name]
    return parse_source(SHIPPED_SOURCES / source.file, source)


def by_question(name: str) -> dict[str, Entry]:
    return {entry.question: entry for entry in parse(name)}


@pytest.mark.parametrize(
    ("name", "count"),
    [("chatlearn-v1", 12), ("roll", 11), ("slime", 13), ("chatlearn", 6), ("training-env", 17), ("roll-npu", 16)],
)
def test_entry_counts(name, count):
    assert len(parse(name)) == count


def test_all_sources_give_75_entries_with_unique_ids():
    entries = parse_sources(SHIPPED_SOURCES)
    assert len(entries) == 75
    assert len({entry.id for entry in entries}) == 75


def test_chatlearn_v1_questions():
    assert [entry.question for entry in parse("chatlearn-v1")] == [
        "ECC Error",
        "如何构建多个reward模型的自定义训练flow",
        "RuntimeError: Error(s) in loading state_dict for VocabParallelEmbedding",
        "yaml 配置",
        "如何开启 “Efficient memory sharing” 功能来减少显存开销",
        "Megatron 模型转换并行策略",
        "转换 Checkpoint 失败",
        "Alignment 训练开启流水线并行时存在非 contiguous 的张量",
        "申请 custom_port",
        "任务失败但是DLC状态显示成功",
        "续跑调整 lr 报错",
        "如何指定训练时模型保存的频率",
    ]


def test_one_line_chatlearn_document_gives_clean_questions_and_sections():
    assert [(entry.section, entry.question, entry.line) for entry in parse("chatlearn")] == [
        ("常见问题", "Megatron和HF模型相互转换", 1),
        ("常见问题", "如何加快FSDP的训练速度", 1),
        ("常见报错", "Rollout推理过程中出现ray.exceptions.RayChannelTimeoutError", 1),
        ("常见报错", "为什么FSDP模型初始化时,在transfomers读权重文件的时候ray有oom报错?", 1),
        ("常见报错", "为什么在FSDP训练时会出现,torch.OutOfMemoryError: CUDA out of memory?", 1),
        ("常见报错", "为什么 Megatron-Core 的 MoE 模型在强化学习(RL)训练中会出现性能下降或结果异常?", 1),
    ]


def test_roll_npu_questions_are_the_level_three_headings_under_their_groups():
    """`## group` headings with nothing but `### question` headings under them, then a closing `## 声明`
    (a disclaimer, no question): each `###` heading is an entry, sectioned by its group, and the disclaimer is none."""
    entries = parse("roll-npu")
    assert [(entry.section, entry.question, entry.line) for entry in entries][:2] == [
        ("Docker 与环境", "容器内 NPU 不可见", 9),
        ("Docker 与环境", "vLLM-Ascend 导入错误", 20),
    ]
    assert [entry.section for entry in entries].count("Docker 与环境") == 6
    assert entries[-1].question == "NPU 上 vLLM 推理速度慢" and entries[-1].section == "资源与性能"
    assert entries[-1].answer.endswith("错误的 triton 后端会导致算子编译回退。")
    assert not any("声明" in (entry.section, entry.question) or "参考样例" in entry.answer for entry in entries)
    english = parse_source(SHIPPED_SOURCES / "roll-npu.en.md", SOURCES["roll-npu"].translation)
    assert [entry.question for entry in english][-1] == "Slow vLLM Inference on NPU"
    assert len(english) == 16 and "Disclaimer" not in {entry.section for entry in english}


def test_a_closing_section_after_the_last_question_does_not_make_the_groups_questions(tmp_path):
    text = (
        "# FAQ\n\n## Setup\n\n### Q1\n\na1\n\n### Q2\n\na2\n\n## Running\n\n### Q3\n\na3\n\n## Disclaimer\n\nAs is.\n"
    )
    entries = parse_source(write(tmp_path, text), doc_source())
    assert [(e.section, e.question, e.answer) for e in entries] == [
        ("Setup", "Q1", "a1"),
        ("Setup", "Q2", "a2"),
        ("Running", "Q3", "a3"),
    ]
    # A `##` heading with text of its own before the last question is a question: the `###` ones are its parts.
    text = text.replace("## Running\n", "## Running\n\nRun it.\n")
    entries = parse_source(write(tmp_path, text), doc_source())
    assert [e.question for e in entries] == ["Setup", "Running", "Disclaimer"]


def test_roll_questions_keep_identifiers_whole():
    questions = [entry.question for entry in parse("roll")]
    assert questions[0] == "Megatron 模型如何转成 HF"
    assert questions[-1] == (
        "如果出现这种错误：TypeError: BackendCompilerFailed.__init__() missing 1 required positional argument"
    )
    assert len(questions) == 11


def test_training_env_questions_and_sections():
    got = [(entry.section, entry.question) for entry in parse("training-env")]
    fastchat = "FastChat (falsh attention)"
    assert got == [
        ("训练环境搭建——问题汇总", "Exec docker"),
        ("Deepspeed", "Unable to pre-compile async_io"),
        ("Deepspeed", "Note (Deepspeed)"),
        (fastchat, "Pip err ModuleNotFoundError: No module named 'torch'"),
        (fastchat, "Functools Err"),
        (fastchat, "保存时发生OOM"),
        (fastchat, "Deepspeed & flash-attn"),
        (fastchat, "Note (FastChat)"),
        ("Qlora", "bitsandbytes/libbitsandbytes_cpu.so: undefined symbol: cget_col_row_stats"),
        ("Qlora", "Transformers 版本"),
        ("Qlora", "保存出错 (Qlora)"),
        ("Qlora", "Note (Qlora)"),
        ("lora", "保存出错 (lora)"),
        ("lora", "Note (lora)"),
        ("其他问题", "程序莫名其妙被killed"),
        ("其他问题", "CUDA掩盖报错"),
        ("其他问题", "其他加速方案"),
    ]


@pytest.mark.parametrize("name", ["roll", "slime", "training-env", "slime.en"])
def test_list_items_link_to_their_line_in_the_pinned_source_view(name):
    """A list item has no anchor of its own: its deep link is its line, `?plain=1#L34`, and that
    line of the file is the one that holds the question."""
    source = SOURCES[name] if "." not in name else SOURCES[name.split(".")[0]].translation
    path = SHIPPED_SOURCES / source.file
    lines = path.read_text(encoding="utf-8").splitlines()
    entries = parse_source(path, source)
    assert len(entries) >= 11
    for entry in entries:
        assert entry.url == f"{source.url}?plain=1#L{entry.line}"
        bold = re.sub(r"\s*\((Deepspeed|FastChat|Qlora|lora)\)$", "", entry.question).split()[0]
        assert bold in lines[entry.line - 1] and "**" in lines[entry.line - 1], (entry.question, entry.line)


@pytest.mark.parametrize(
    ("name", "question", "url"),
    [
        ("chatlearn-v1", "转换 Checkpoint 失败", V1_URL + "#" + quote("转换-checkpoint-失败")),
        (
            "chatlearn-v1",
            "如何开启 “Efficient memory sharing” 功能来减少显存开销",  # the code span quoted; its anchor as GitHub makes it
            V1_URL + "#" + quote("如何开启-efficient-memory-sharing-功能来减少显存开销"),
        ),
        (
            "chatlearn-v1",
            "RuntimeError: Error(s) in loading state_dict for VocabParallelEmbedding",
            V1_URL + "#runtimeerror-errors-in-loading-state_dict-for-vocabparallelembedding",
        ),
        ("chatlearn-v1", "申请 custom_port", V1_URL + "#" + quote("申请-custom_port")),
        (
            "chatlearn",
            "Rollout推理过程中出现ray.exceptions.RayChannelTimeoutError",
            "https://github.com/alibaba/ChatLearn/blob/248875a4a5617b3ec83511a51e25d5565b0ae071/docs/zh/faq.md#"
            + quote("rollout推理过程中出现rayexceptionsraychanneltimeouterror"),
        ),
        ("slime", "如何续训？", SLIME_URL + "?plain=1#L34"),
        (
            "roll-npu",
            "容器内 NPU 不可见",
            "https://github.com/alibaba/ROLL/blob/8eb27cc2dc34c4d1310b169d9b86d339004d811a/docs_roll/i18n/zh-Hans/"
            "docusaurus-plugin-content-docs/current/User%20Guides/Hardware%20Support/ascend_npu_faq.md#"
            + quote("容器内-npu-不可见"),
        ),
    ],
)
def test_deep_links(name, question, url):
    assert by_question(name)[question].url == url


def test_whole_entry_with_rewritten_relative_link():
    entry = by_question("chatlearn-v1")["ECC Error"]
    assert entry == Entry(
        id=entry_id("chatlearn-v1", "ECC Error"),
        question="ECC Error",
        answer=f"ECC Error 为机器故障，建议结合 [续跑和容错]({V1_DIR}tutorial/continue_train.md) 来自动拉黑故障机器并重启作业。",
        source="chatlearn-v1",
        source_title="ChatLearn 常见问题（v1.0.3，Megatron 时期）",  # the title in the document's language
        source_version="v1.0.3 (2024-11-18)",
        source_url=V1_URL,
        framework="ChatLearn",
        section="",
        url=V1_URL + "#ecc-error",
        lang="zh",
        tags=(),
        line=3,
        file="chatlearn-v1.md",
    )


def test_relative_links_resolve_against_the_pinned_page():
    entries = by_question("chatlearn-v1")
    assert entries["yaml 配置"].answer == f"参考 [配置文件]({V1_DIR}config_yaml.md)。"
    assert entries["如何开启 “Efficient memory sharing” 功能来减少显存开销"].answer == (
        f"参考文档 [Efficient memory sharing]({V1_DIR}tutorial/ems.md)。"
    )


def test_slime_dot_slash_link_and_url_in_full_width_brackets():
    entries = by_question("slime")
    assert entries["grad norm 好高，训练训崩了怎么办？"].answer.endswith(
        "可以参考 [debug 指南](https://github.com/THUDM/slime/blob/"
        "a3d5cbf30a50c867d8eb0f61121db89faea9d426/docs/zh/debug.md) 进行更深入的分析。"
    )
    assert entries["sglang 出现 an illegal memory access was encountered"].answer == (
        "根据 sglang 的文档（<https://docs.sglang.ai/references/troubleshooting.html>），"
        "有可能是 OOM 了，可以考虑缩小 `--sglang-mem-fraction-static`。"
    )


def test_slime_bodies_are_dedented_and_navigation_dropped():
    entries = parse("slime")
    assert entries[1].answer == (
        "请先检查你需要跑的任务是训推一体的，还是训推分离的。\n\n"
        "如果是训推一体，即训练和推理共用 GPU，请检查\n\n"
        "- 是否设置了 `--colocate` 参数开启训推一体；\n"
        "- 当前任务的总卡数是否大于等于 `actor_num_nodes * actor_num_gpus_per_node`\n\n"
        "如果是训推分离，请检查：\n\n"
        "- 当前任务的总卡数是否大于等于 `actor_num_nodes * actor_num_gpus_per_node + rollout_num_gpus`"
    )
    assert not any("English" in entry.answer or "../en/qa.md" in entry.answer for entry in entries)


def test_roll_bodies_run_to_the_next_item_and_keep_pseudo_subheadings():
    entries = by_question("roll")
    answer = entries["如何设置gradient_accumulation_steps/per_device_train_batch_size"].answer
    assert answer.startswith("***对于DeepSpeed Backend***\n\nglobal_batch_size = ")
    assert "***对于Megatron Backend***" in answer
    assert answer.endswith("注意: 不需要除以expert_model_parallel_size")
    assert entries["如何获取训练的timeline"].answer == (
        "可以尝试在yaml中开启profile\n\n"
        '```yaml\nsystem_envs:\n  RAY_PROFILING: "1"\n'
        "profiler_output_dir: /data/oss_bucket_0/yali/llm/profile/${exp_name}\n```\n\n"
        "然后利用<https://ui.perfetto.dev/> 工具进行分析"
    )


def test_inline_triple_backticks_are_not_a_fence():
    entry = by_question("training-env")["程序莫名其妙被killed"]
    assert entry.answer == (
        "1. 模型分片太大，内存不足\n"
        "2. ```decapoda-research/llama-7b-hf```的分片(405M)，16G应该就能加载\n"
        "3. hf默认的10G分片，可能需要40G才能加载，80G稳定加载"
    )
    assert entry.line == 172


def test_nested_lists_and_indented_fences_are_dedented_by_the_item_indent():
    entries = by_question("training-env")
    assert entries["Note (Qlora)"].answer.split("\n")[:3] == [
        "1. 速度太慢，尤其是多卡。",
        "   1. A40*1: max_token=768; lora_r=32; all linear; 0.6% para trainable",
        "      1. VMEM 48500MiB",
    ]
    assert entries["Exec docker"].answer == (
        "Within the Docker container, we can only perform the following steps.\n\n"
        "```shell\nsudo docker exec -it <Your Docker> bash\n\n```"
    )
    assert entries["Deepspeed & flash-attn"].answer == (
        "<https://github.com/lm-sys/FastChat/pull/177>\n<https://github.com/HazyResearch/flash-attention/issues/108>"
    )


def test_code_comments_are_not_headings_and_fences_keep_their_language():
    entry = by_question("chatlearn-v1")["Megatron 模型转换并行策略"]
    assert entry.answer.startswith("```bash\ncd $CHATLEARN\nmodel_type=GPT # for reward model")
    assert entry.answer.endswith("```\n\n注意这个脚本只在官方Megatron-LM脚本上验证过。")
    moe = parse("chatlearn")[-1]
    assert "```bash\n#cfg.models.policy_trainer.megatron_model_cfg.moe_router_load_balancing_type" in moe.answer


def test_one_line_document_fences_and_lists_are_rebuilt():
    entries = parse("chatlearn")
    assert entries[1].answer == (
        "1. 设置models.policy_trainer.packing=True,并设置models.policy_trainer.max_token_in_packing="
        "可以打满显存的总token数。\n"
        "2. 如果是qwen3-moe模型,可以设置models.policy_trainer.groupgemm=True,打开groupgemm patch,"
        "提升moe层训练速度。"
    )
    assert entries[2].answer.startswith("```bash\nray.exceptions.RayChannelTimeoutError: System error:")
    assert all(not entry.answer.startswith("#") for entry in entries)


def test_answers_do_not_repeat_their_question():
    for entry in parse_sources(SHIPPED_SOURCES):
        assert entry.answer.strip()
        question = re.escape(entry.question.split(" (")[0])
        assert not re.search(rf"^(#+ |\d+\. \*\*|\*\*){question}", entry.answer, re.M)


@pytest.mark.slow
def test_ids_are_stable_across_parses():
    first = [entry.id for entry in parse_sources(SHIPPED_SOURCES)]
    assert first == [entry.id for entry in parse_sources(SHIPPED_SOURCES)]
    assert first[0] == entry_id("chatlearn-v1", "ECC Error")


def test_windows_line_endings_parse_the_same(tmp_path):
    source = SOURCES["training-env"]
    text = (SHIPPED_SOURCES / source.file).read_text(encoding="utf-8")
    (tmp_path / source.file).write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    assert parse_source(tmp_path / source.file, source) == parse("training-env")


def doc_source(entries: str = "headings", url: str = "") -> Source:
    return Source("doc", "doc.md", "Doc", "Doc", "en", "", url, entries=entries)


def write(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "doc.md"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def test_code_comment_in_a_user_document(tmp_path):
    path = write(
        tmp_path, "# Title\n\n## First?\n\n```bash\n# not a heading\nrun\n```\n\n## Second\n\nSee [x](a/b.md).\n"
    )
    entries = parse_source(path, doc_source(url="https://example.org/docs/faq.md"))
    assert [(e.question, e.answer, e.url, e.line) for e in entries] == [
        ("First?", "```bash\n# not a heading\nrun\n```", "https://example.org/docs/faq.md#first", 3),
        ("Second", "See [x](https://example.org/docs/a/b.md).", "https://example.org/docs/faq.md#second", 10),
    ]


def test_without_a_url_links_stay_relative_and_there_is_no_deep_link(tmp_path):
    path = write(tmp_path, "## Q1\n\nSee [x](a/b.md) and #anchor [y](#q1).\n\n## Q2\n\nok\n")
    entries = parse_source(path, doc_source())
    assert [(e.answer, e.url) for e in entries] == [("See [x](a/b.md) and #anchor [y](#q1).", ""), ("ok", "")]


@pytest.mark.parametrize("content", ["", "  \n\n\t\n"])
def test_empty_file_is_an_error(tmp_path, content):
    path = write(tmp_path, content)
    with pytest.raises(SourceError, match="file is empty") as error:
        parse_source(path, doc_source())
    assert error.value.path == path


@pytest.mark.parametrize("entries", ["headings", "list"])
def test_file_without_entries_is_an_error(tmp_path, entries):
    path = write(tmp_path, "# Title\n\nJust some prose, no questions.\n\n- a plain item\n")
    with pytest.raises(SourceError, match="no entries found") as error:
        parse_source(path, doc_source(entries))
    assert str(error.value).startswith(str(path))


def test_non_utf8_bytes_name_the_line(tmp_path):
    path = write(tmp_path, "## Q1\n\nfine\n\n## Q2\n\nbad \xff byte\n".encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    with pytest.raises(SourceError, match="not UTF-8") as error:
        parse_source(path, doc_source())
    assert error.value.line == 7
    assert str(error.value).startswith(f"{path}:7: ")


def test_repeated_question_is_an_error_naming_both_lines(tmp_path):
    path = write(tmp_path, "## Same\n\na\n\n## Other\n\nb\n\n## Same\n\nc\n")
    with pytest.raises(SourceError, match="repeats the one on line 1") as error:
        parse_source(path, doc_source())
    assert error.value.line == 9


def test_same_question_in_two_sections_is_titled_by_section(tmp_path):
    path = write(tmp_path, "# A\n\n1. **Saving fails**\n\n   x\n\n# B (extra)\n\n1. **Saving fails**\n\n   y\n")
    entries = parse_source(path, doc_source("list"))
    assert [(e.question, e.answer) for e in entries] == [("Saving fails (A)", "x"), ("Saving fails (B)", "y")]


def test_same_id_from_two_sources_names_both_places(tmp_path, monkeypatch):
    (tmp_path / "doc.md").write_text("## Q\n\nA\n", encoding="utf-8")
    source = doc_source()
    monkeypatch.setattr("ingest.sources.load_manifest", lambda *_: [source, replace(source)])
    with pytest.raises(SourceError, match=r"same id doc-\w+ as .*doc\.md:1") as error:
        parse_sources(tmp_path)
    assert error.value.line == 1


def test_text_in_angle_brackets_stays_in_a_question_and_markup_does_not(tmp_path):
    (tmp_path / "faq.md").write_text(
        "# FAQ\n\n## Why does the output contain <unk> tokens?\n\nBecause.\n\n"
        "## How to pass a List<String> to the <b>config</b>?<br>\n\nLike so.\n",
        encoding="utf-8",
    )
    questions = [e.question for e in parse_sources(tmp_path)]
    assert questions == ["Why does the output contain <unk> tokens?", "How to pass a List<String> to the config?"]


@pytest.mark.parametrize("entries", ["list", "headings"])
def test_a_code_span_of_several_words_is_quoted_in_the_question_and_its_id_is_as_before(
    tmp_path: Path, entries: str
) -> None:
    """ "Sglang shows an `an illegal memory access was encountered` error." reads with the message quoted, not as
    "shows an an illegal ..."; a one-word span stays bare; the id is made of the text without the marks, as before."""
    asked = "Sglang shows an `an illegal memory access was encountered` error with `max_tokens_per_gpu` set."
    text = f"1. **{asked}**\n\n   Lower it.\n" if entries == "list" else f"# Doc\n\n## {asked}\n\nLower it.\n"
    page = "https://github.com/o/r/blob/main/doc.md"
    [entry] = parse_source(write(tmp_path, text), doc_source(entries=entries, url=page))
    assert entry.question == (
        "Sglang shows an “an illegal memory access was encountered” error with max_tokens_per_gpu set."
    )
    unquoted = "Sglang shows an an illegal memory access was encountered error with max_tokens_per_gpu set."
    assert entry.id == entry_id("doc", unquoted)
    if entries == "headings":  # its anchor as GitHub makes it, from the heading's text
        assert (
            entry.url
            == page + "#sglang-shows-an-an-illegal-memory-access-was-encountered-error-with-max_tokens_per_gpu-set"
        )
