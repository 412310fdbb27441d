"""GitHub heading anchors, checked against the examples in the sources notes."""

import pytest

from ingest.anchors import github_anchor


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("转换 Checkpoint 失败", "转换-checkpoint-失败"),
        (
            "如何开启 Efficient memory sharing 功能来减少显存开销",
            "如何开启-efficient-memory-sharing-功能来减少显存开销",
        ),
        (
            "RuntimeError: Error(s) in loading state_dict for VocabParallelEmbedding",
            "runtimeerror-errors-in-loading-state_dict-for-vocabparallelembedding",
        ),
        ("申请 custom_port", "申请-custom_port"),
        (
            "Rollout推理过程中出现ray.exceptions.RayChannelTimeoutError",
            "rollout推理过程中出现rayexceptionsraychanneltimeouterror",
        ),
        ("FastChat (falsh attention)", "fastchat-falsh-attention"),
        ("其他问题", "其他问题"),
        ("训练环境搭建——问题汇总", "训练环境搭建问题汇总"),
        ("a > b", "a--b"),
        (
            "为什么FSDP模型初始化时,在transfomers读权重文件的时候ray有oom报错?",
            "为什么fsdp模型初始化时在transfomers读权重文件的时候ray有oom报错",
        ),
        ("全角（括号）、逗号，句号。", "全角括号逗号句号"),
        ("  padded  ", "padded"),
    ],
)
def test_anchor_follows_github_rules(heading, anchor):
    assert github_anchor(heading) == anchor


def test_repeated_headings_get_numbered_suffixes():
    seen: dict[str, int] = {}
    anchors = [github_anchor(text, seen) for text in ["Note", "Other", "Note", "note", "Note"]]
    assert anchors == ["note", "other", "note-1", "note-2", "note-3"]


def test_suffix_skips_an_anchor_already_taken():
    seen: dict[str, int] = {}
    anchors = [github_anchor(text, seen) for text in ["x-1", "x", "x"]]
    assert anchors == ["x-1", "x", "x-2"]


def test_without_seen_there_is_no_suffix():
    assert [github_anchor("Note"), github_anchor("Note")] == ["note", "note"]
