"""A folder of FAQs with near-duplicate entries, for the tests of `kb.duplicates`, `kb ingest` and /insights.

- `team` (zh-faq.md): Megatron-to-HF conversion; GPU quota, asked twice in other words with
  the same answer (a pair within one source); where the shared checkpoints are.
- `team-en` (en-faq.md): the English translation of the first two, as a source of its own:
  the same entries in the other language, which are no pair.
- `ops` (ops.md): Megatron-to-HF conversion again in other words, with the same answer (a
  pair across sources); restarting a node.
"""

from __future__ import annotations

from pathlib import Path

from kb.entries import entry_id

CONVERT = "Megatron 模型如何转成 HF"
CONVERT_AGAIN = "怎样把 Megatron 的 checkpoint 转换成 HF 格式"
QUOTA = "如何申请 GPU 配额"
QUOTA_AGAIN = "GPU 配额怎么申请"
COMMAND = (
    "```bash\npython mcore_adapter/tools/convert.py --checkpoint_path path_to_megatron_model "
    "--output_path path_to_output_hf_model\n```"
)
URL = "https://git.example.com/team/docs/blob/4f2a9c1/zh-faq.md"

ACROSS = (entry_id("team", CONVERT), entry_id("ops", CONVERT_AGAIN))  # the pair across sources
WITHIN = (entry_id("team", QUOTA), entry_id("team", QUOTA_AGAIN))  # the pair within `team`

MANIFEST = f"""[[source]]
name = "team"
file = "zh-faq.md"
title = {{ zh = "团队常见问题", en = "Team FAQ" }}
lang = "zh"
url = "{URL}"

[[source]]
name = "team-en"
file = "en-faq.md"
title = "Team FAQ (English)"
lang = "en"

[[source]]
name = "ops"
file = "ops.md"
title = {{ zh = "运维问答", en = "Ops Q&A" }}
lang = "zh"
"""


def intended(first: str, second: str, why: str = "both kept on purpose") -> str:
    """An `[[intended_duplicates]]` table marking `first` and `second`."""
    return f'\n[[intended_duplicates]]\nentries = ["{first}", "{second}"]\nwhy = "{why}"\n'


def write_team_faqs(folder: Path, marks: str = "") -> Path:
    """The folder, its manifest ending with `marks` (`intended(...)` tables)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "zh-faq.md": (
            f"# 团队常见问题\n\n## {CONVERT}\n\n使用如下命令进行格式转换：\n\n{COMMAND}\n\n"
            f"## {QUOTA}\n\n在 #infra 频道里说明项目名称和需要的卡数。\n\n"
            f"## {QUOTA_AGAIN}\n\n在 #infra 频道里说明项目名称和需要的卡数，管理员当天处理。\n\n"
            "## 共享的 checkpoint 放在哪里\n\n在 `/mnt/shared/ckpt` 下，只读。\n"
        ),
        "en-faq.md": (
            f"# Team FAQ\n\n## How do I convert a Megatron model to HF?\n\nUse this command:\n\n{COMMAND}\n\n"
            "## How do I get GPU quota?\n\nAsk in #infra with your project name and the number of GPUs you need.\n"
        ),
        "ops.md": (
            f"# 运维问答\n\n## {CONVERT_AGAIN}\n\n用下面的命令转换格式：\n\n{COMMAND}\n\n"
            "## 如何重启一个节点\n\n运行 `ops restart NODE`。\n"
        ),
        "sources.toml": MANIFEST + marks,
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder
