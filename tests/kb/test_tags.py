"""The topic tag table and the tagging of entries."""

import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from ingest.sources import parse_sources
from ingest.tags import framework_tag, tag_entry, topic_tags
from kb import tags as tags_module
from kb.entries import Entry, Source
from kb.errors import SourceError
from kb.settings import SHIPPED_SOURCES
from kb.tags import MAX_RUN, TAGS, Tag, bounded, label, load_tags, tag_table


def test_exported_members():
    import ingest

    assert ingest.__all__ == [
        "BuildReport",
        "build_index",
        "index_is_stale",
        "load_manifest",
        "parse_source",
        "parse_sources",
        "parse_table",
        "read_sources",
        "tag_entry",
    ]
    assert all(callable(getattr(ingest, name)) for name in ingest.__all__)


def test_table_is_complete():
    assert TAGS is tag_table().tags
    assert tags_module.TAGS is TAGS
    assert list(TAGS)[:3] == ["installation", "compatibility", "configuration"]
    expected = {
        "oom", "checkpoint", "conversion", "parallelism", "ray", "sglang", "vllm", "megatron", "fsdp",
        "deepspeed", "installation", "configuration", "debugging", "performance", "moe", "lora",
        "docker", "data", "rollout", "reward", "timeout", "hardware", "npu", "usage",
    }  # fmt: skip
    assert expected <= set(TAGS)
    for tag in TAGS.values():
        assert isinstance(tag, Tag) and tag.zh and tag.en
        assert tag.patterns or tag.id == tag_table().fallback


def test_labels():
    assert label("oom", "zh") == "显存/内存不足"
    assert label("oom", "en") == "Out of memory"
    assert label("roll", "zh") == "ROLL"
    assert label("chatlearn", "en") == "ChatLearn"
    assert label("slime", "en") == "slime"
    assert label("my-tool", "en") == "my-tool"


@pytest.mark.parametrize(
    ("text", "tag", "matches"),
    [
        ("ray有oom报错", "oom", True),
        ("a room with a view", "oom", False),
        ("torch.OutOfMemoryError: CUDA out of memory", "oom", True),
        ("Rollout推理过程中出现ray.exceptions.RayChannelTimeoutError", "timeout", True),
        ("an array of values", "ray", False),
        ("在RayUtils的env中设置 RAY_DEBUG", "ray", True),
        ("设置 `--sglang-mem-fraction-static`", "sglang", True),
        ("rollout_batch_size解决", "batch-size", True),
        ("lr_decay_steps", "learning-rate", True),
        ("a slower world", "learning-rate", False),
        ("QLoRA 微调", "lora", True),
        ("Megatron 模型如何转成 HF", "conversion", True),
    ],
)
def test_patterns(text, tag, matches):
    assert TAGS[tag].matches(text) is matches


def entry(question: str, answer: str = "", section: str = "") -> Entry:
    return Entry("x-1", question, answer, "x", "X", "", "", "X", section, "", "zh")


def test_tag_entry_puts_the_framework_first_then_topics_in_table_order():
    source = Source("roll", "roll.md", "ROLL Q&A", "ROLL", "zh", "", "")
    original = entry("为什么在FSDP训练时会出现 OOM?", "降低 `max_token_in_packing`。")
    tagged = tag_entry(original, source)
    assert tagged == replace(original, tags=("roll", "oom", "batch-size", "fsdp"))


def test_an_entry_no_rule_matches_gets_the_fallback():
    source = Source("doc", "doc.md", "Doc", "My Tool", "en", "", "")
    assert framework_tag(source) == "my-tool"
    assert tag_entry(entry("Hello?", "Hi."), source).tags == ("my-tool", "usage")


def test_framework_and_topic_tag_appear_once():
    source = Source("env", "env.md", "Env", "DeepSpeed", "zh", "", "")
    assert tag_entry(entry("deepspeed 安装"), source).tags == ("deepspeed", "installation")


@pytest.mark.slow
def test_every_shipped_entry_has_a_topic_tag_and_none_falls_back():
    entries = parse_sources(SHIPPED_SOURCES)
    frameworks = {"chatlearn": 18, "roll": 27, "slime": 13, "deepspeed": 17}
    assert Counter(e.tags[0] for e in entries) == frameworks
    for e in entries:
        assert topic_tags(e) != ("usage",), e.question
        assert len(e.tags) == len(set(e.tags))
    counts = Counter(tag for e in entries for tag in e.tags[1:])
    assert counts["oom"] >= 8 and counts["lora"] >= 5 and counts["sglang"] >= 4
    assert by_question(entries, "Exec docker").tags == ("deepspeed", "docker")
    assert {e.source for e in entries if "npu" in e.tags} == {"roll-npu"}  # no other FAQ is about Ascend NPUs


def by_question(entries: list[Entry], question: str) -> Entry:
    return next(e for e in entries if e.question == question)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tags.toml"
    path.write_text('fallback = "usage"\n' + text, encoding="utf-8")
    return path


USAGE = '[[tag]]\nid = "usage"\nzh = "使用"\nen = "Usage"\n'


def test_bad_pattern_names_the_tag(tmp_path):
    path = write(tmp_path, USAGE + '[[tag]]\nid = "oom"\nzh = "a"\nen = "b"\npatterns = ["(oom"]\n')
    with pytest.raises(SourceError, match=r"tag 'oom': bad pattern '\(oom'"):
        load_tags(path)


def test_duplicate_tag_and_missing_fallback(tmp_path):
    with pytest.raises(SourceError, match="tag 'usage' is defined twice"):
        load_tags(write(tmp_path, USAGE + USAGE))
    with pytest.raises(SourceError, match="fallback 'usage' is not one of the tags"):
        load_tags(write(tmp_path, ""))
    with pytest.raises(SourceError, match="tag 'usage': missing required field 'en'"):
        load_tags(write(tmp_path, USAGE.replace('en = "Usage"\n', "")))


LONG_WORDS = ["a" * 200_000, "-" * 200_000, "a." * 100_000, "save_" * 40_000, "--" + "a-" * 100_000]


@pytest.mark.parametrize("word", LONG_WORDS, ids=lambda word: word[:6])
def test_a_word_of_200000_characters_is_tagged_in_linear_time(word):
    started = time.perf_counter()
    tags = topic_tags(entry("为什么 OOM?", f"{word} then set num_gpus=8"))
    assert time.perf_counter() - started < 2  # every tag; a single quadratic pattern took minutes
    assert {"oom", "resources"} <= set(tags)  # a keyword after the long word still counts


def test_bounded_cuts_long_runs_of_ascii_only():
    chinese = "模型训练" * 100  # Chinese text has no spaces; it is kept whole
    assert bounded(chinese + " " + "x" * 150 + " \t" * 80 + "y") == chinese + " " + "x" * MAX_RUN + " \t" * 50 + "y"
