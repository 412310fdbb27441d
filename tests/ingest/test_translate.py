"""`kb translate`: a machine draft of a team's FAQ in its other language, checked entry by entry.

No LLM can run here, so these tests start a small OpenAI-compatible chat-completions server
on a 127.0.0.1 port (real uvicorn, real HTTP). It stands in for a hosted LLM: it "translates"
by replacing the Chinese sentences of the test FAQ with fixed English ones, leaving code and
URLs alone. The model name picks its behaviour: `translator` does only that, `code-changer`
also alters the code block of the entry holding one, `slow` takes longer than KB_LLM_TIMEOUT
over the entry about GPU memory, `doubler` answers the last entry with two entries.
"""

from __future__ import annotations

import asyncio
import json
import os
import tomllib
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from fastapi import FastAPI, Request

from ingest.manifest import load_manifest
from ingest.sources import parse_sources
from ingest.translate import problem, toml_string
from kbcli.cli import main

pytestmark = pytest.mark.slow  # the stand-in LLM's drafts are ingested and embedded

FAQ = """\
# 训练常见问题

## 如何从检查点恢复训练？

把 `--load` 设为保存检查点的目录，然后重新启动：

```bash
python train.py --load /ckpt/run1 --save /ckpt/run1
```

## 显存不够怎么办？

减小 `micro_batch_size`，或者打开 `--recompute-activations`。

## 在哪里报告问题？

请在 https://github.com/example/trainer/issues 提交问题，并附上完整日志。
"""

ENGLISH = {
    "训练常见问题": "Training FAQ",
    "如何从检查点恢复训练？": "How do I resume training from a checkpoint?",
    "把 `--load` 设为保存检查点的目录，然后重新启动：": "Set `--load` to the directory the checkpoints are saved in, then start again:",
    "显存不够怎么办？": "What if GPU memory runs out?",
    "减小 `micro_batch_size`，或者打开 `--recompute-activations`。": "Lower `micro_batch_size`, or turn on `--recompute-activations`.",
    "在哪里报告问题？": "Where do I report a problem?",
    "请在 https://github.com/example/trainer/issues 提交问题，并附上完整日志。": "Open an issue at https://github.com/example/trainer/issues with the whole log.",
}

# Lines of the questions in FAQ.
RESUME, MEMORY, REPORT = 3, 11, 15


def fake_translator_app(requests: list[dict[str, Any]]) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def completions(request: Request) -> Any:
        body = await request.json()
        requests.append(body)
        model, text = body["model"], body["messages"][-1]["content"]
        reply = text
        for chinese, english in ENGLISH.items():
            reply = reply.replace(chinese, english)
        if model == "code-changer":
            reply = reply.replace("--save /ckpt/run1", "--save /ckpt/run2")
        if model == "slow" and "显存" in text:
            await asyncio.sleep(3)
        if model == "doubler" and "报告问题" in text:
            reply += "\n\n## Anything else?\n\nAsk in the team channel.\n"
        return {
            "id": "cmpl-1",
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
        }

    return app


@pytest.fixture(scope="module")
def llm(serve: Callable[[Any], Any]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    requests: list[dict[str, Any]] = []
    yield f"{serve(fake_translator_app(requests)).url}/v1", requests


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data directory for the module: its embedding cache makes every ingest after the first quick."""
    return tmp_path_factory.mktemp("translate-data")


@pytest.fixture
def faq(tmp_path: Path) -> Path:
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "faq.md").write_text(FAQ, encoding="utf-8")
    return folder


@pytest.fixture
def kb(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], data_dir: Path, llm: tuple[str, list]):
    """`kb(*args, model=...)`: run the command in this process; (exit code, stdout, stderr)."""

    def run(*args: str, model: str | None = "translator", timeout: str = "5") -> tuple[int, str, str]:
        for name in [n for n in os.environ if n.startswith("KB_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("KB_DATA_DIR", str(data_dir))
        if model:
            monkeypatch.setenv("KB_LLM_BASE_URL", llm[0])
            monkeypatch.setenv("KB_LLM_MODEL", model)
            monkeypatch.setenv("KB_LLM_TIMEOUT", timeout)
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.mark.slow
def test_a_round_trip_drafts_english_and_search_finds_it(kb, faq: Path, llm) -> None:
    sent = len(llm[1])
    code, out, err = kb("translate", "faq", "--to", "en", "--sources", str(faq))
    assert code == 0, err
    assert len(llm[1]) - sent == 4  # the title, then each of the three entries
    assert "You translate a FAQ" in llm[1][-1]["messages"][0]["content"]
    draft = (faq / "faq.en.md").read_text(encoding="utf-8")
    assert draft.startswith("# Training FAQ\n\n## How do I resume training from a checkpoint?\n")
    assert "```bash\npython train.py --load /ckpt/run1 --save /ckpt/run1\n```" in draft
    assert "https://github.com/example/trainer/issues" in draft and "`micro_batch_size`" in draft
    assert f"wrote {faq / 'faq.en.md'}: 3 of 3 entries translated" in out
    (source,) = load_manifest(faq)
    version = source.translation
    assert (source.name, source.file, source.lang, source.title) == ("faq", "faq.md", "zh", "训练常见问题")
    assert (version.file, version.lang, version.title) == ("faq.en.md", "en", "Training FAQ")
    assert (version.translated_by, version.reviewed, version.skipped) == ("machine", False, ())
    assert len(version.translated_on) == 10

    code, out, err = kb("ingest", "--sources", str(faq), model=None)
    assert code == 0, err
    # kb ingest speaks English: the English title, which the translation gave the source
    assert ["faq", "3", "entries", "en+zh", "Training", "FAQ"] in [line.split() for line in out.splitlines()]
    code, out, err = kb("search", "what if GPU memory runs out", "--json", model=None)
    assert code == 0, err
    best = json.loads(out)["hits"][0]
    assert (best["question"], best["lang"], best["file"]) == ("What if GPU memory runs out?", "en", "faq.en.md")
    assert best["languages"] == ["en", "zh"]
    # Every channel says it is a machine's draft until a maintainer marks it reviewed.
    assert (best["translated_by"], best["note"]) == (
        "machine",
        "Machine translation of the Chinese original, not yet reviewed.",
    )


@pytest.mark.slow
def test_an_entry_whose_code_changed_is_left_out_and_skipped(kb, faq: Path) -> None:
    code, out, err = kb("translate", str(faq / "faq.md"), "--to", "en", model="code-changer")
    assert code == 0, err
    assert f'faq.md:{RESUME}: "如何从检查点恢复训练？": a code block changed' in out.splitlines()
    assert "2 of 3 entries translated; 1 left out, listed in skipped" in out
    draft = (faq / "faq.en.md").read_text(encoding="utf-8")
    assert "run2" not in draft and "resume" not in draft and "python" not in draft
    assert "## What if GPU memory runs out?" in draft and "## Where do I report a problem?" in draft
    entries = {e.question: e for e in parse_sources(faq)}
    (version,) = [s.translation for s in load_manifest(faq)]
    assert version.skipped == (entries["如何从检查点恢复训练？"].id,)
    assert entries["如何从检查点恢复训练？"].translations == ()
    assert entries["显存不够怎么办？"].translations[0].question == "What if GPU memory runs out?"
    assert entries["在哪里报告问题？"].translations[0].question == "Where do I report a problem?"
    code, out, err = kb("ingest", "--sources", str(faq), model=None)
    assert code == 0, err
    assert ["faq", "3", "entries", "en+zh", "Training", "FAQ"] in [line.split() for line in out.splitlines()]


@pytest.mark.slow
def test_an_entry_past_the_timeout_is_left_out(kb, faq: Path) -> None:
    code, out, err = kb("translate", "faq", "--to", "en", "--sources", str(faq), model="slow", timeout="1")
    assert code == 0, err
    assert f'faq.md:{MEMORY}: "显存不够怎么办？": no answer within 1 s (KB_LLM_TIMEOUT)' in out.splitlines()
    entries = {e.question: e for e in parse_sources(faq)}
    (version,) = [s.translation for s in load_manifest(faq)]
    assert version.skipped == (entries["显存不够怎么办？"].id,)
    assert "GPU memory" not in (faq / "faq.en.md").read_text(encoding="utf-8")


def test_a_reply_with_two_entries_is_left_out(kb, faq: Path) -> None:
    code, out, err = kb("translate", "faq", "--to", "en", "--sources", str(faq), model="doubler")
    assert code == 0, err
    assert f'faq.md:{REPORT}: "在哪里报告问题？": the reply holds 2 entries, not one' in out.splitlines()
    draft = (faq / "faq.en.md").read_text(encoding="utf-8")
    assert "Anything else" not in draft and "report a problem" not in draft
    assert draft.rstrip().endswith("Lower `micro_batch_size`, or turn on `--recompute-activations`.")
    entries = {e.question: e for e in parse_sources(faq)}
    assert [s.translation.skipped for s in load_manifest(faq)] == [(entries["在哪里报告问题？"].id,)]


def test_without_an_llm_one_line_names_the_setting(kb, faq: Path) -> None:
    code, out, err = kb("translate", "faq", "--to", "en", "--sources", str(faq), model=None)
    assert code == 2
    assert err.splitlines() == [
        "kb: error: kb translate needs an LLM: set KB_LLM_BASE_URL and KB_LLM_MODEL "
        "(an OpenAI-compatible endpoint and its model name)"
    ]
    assert sorted(p.name for p in faq.iterdir()) == ["faq.md"]


def test_ingest_names_unreviewed_machine_translations_until_reviewed(kb, faq: Path) -> None:
    assert kb("translate", "faq", "--to", "en", "--sources", str(faq))[0] == 0
    code, out, err = kb("ingest", "--sources", str(faq), model=None)
    assert code == 0, err
    note = "faq  faq.en.md  machine translation, not reviewed: set reviewed = true in sources.toml once checked"
    assert note in out.splitlines()
    manifest = faq / "sources.toml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("reviewed = false", "reviewed = true"), encoding="utf-8"
    )
    code, out, err = kb("ingest", "--sources", str(faq), model=None)
    assert code == 0, err
    assert "not reviewed" not in out


def test_a_manifest_keeps_its_other_sources_and_comments(kb, faq: Path) -> None:
    (faq / "ops.md").write_text("# Ops\n\n## How do I restart a node?\n\nRun `ops restart NODE`.\n", encoding="utf-8")
    (faq / "ops.zh.md").write_text("# 运维\n\n## 如何重启节点？\n\n运行 `ops restart NODE`。\n", encoding="utf-8")
    manifest = faq / "sources.toml"
    manifest.write_text(
        '# our FAQs\n\n[[source]]\nname = "faq"\nfile = "faq.md"\ntitle = "Team FAQ"\nframework = "Team"\nlang = "zh"\n\n'
        '# the ops team\'s\n[[source]]\nname = "ops"\nfile = "ops.md"\ntitle = "Ops"\nframework = "Ops"\nlang = "en"\n\n'
        '[source.translation]\nfile = "ops.zh.md"\nlang = "zh"\n',
        encoding="utf-8",
    )
    assert kb("translate", "faq", "--to", "en", "--sources", str(faq))[0] == 0
    text = manifest.read_text(encoding="utf-8")
    assert text.startswith("# our FAQs\n") and "# the ops team's\n[[source]]" in text
    faq_source, ops = load_manifest(faq)
    assert faq_source.translation.translated_by == "machine" and ops.translation.translated_by == ""
    assert kb("translate", "faq", "--to", "en", "--sources", str(faq))[0] == 0  # a second draft replaces the first
    assert manifest.read_text(encoding="utf-8").count("[source.translation]") == 2
    code, _, err = kb("translate", "ops", "--to", "zh", "--sources", str(faq))
    assert code == 2 and err.strip() == (
        f"kb: error: {faq / 'ops.zh.md'}: is the authors' translation of ops.md; "
        "kb translate --force replaces it with a machine draft"
    )


def test_without_a_manifest_one_is_written_for_every_source(kb, faq: Path) -> None:
    (faq / "ops.md").write_text("# Ops\n\n## How do I restart a node?\n\nRun `ops restart NODE`.\n", encoding="utf-8")
    (faq / "ops.zh.md").write_text("# 运维\n\n## 如何重启节点？\n\n运行 `ops restart NODE`。\n", encoding="utf-8")
    before = {s.name: s for s in load_manifest(faq)}
    code, out, err = kb("translate", "faq", "--to", "en", "--sources", str(faq))
    assert code == 0, err
    assert "written, describing every source of the folder" in out
    after = {s.name: s for s in load_manifest(faq)}
    assert after["ops"] == before["ops"]
    assert after["faq"].translation.translated_by == "machine"
    code, _, err = kb("translate", "ops", "--to", "zh", "--sources", str(faq))
    assert code == 2 and "is the authors' translation of ops.md" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nope", "--to", "en"), "no source named 'nope'; the sources here are faq"),
        (("faq", "--to", "zh"), "faq.md is already in Simplified Chinese (lang = 'zh'); translate it --to en"),
    ],
)
def test_a_wrong_source_or_language_is_one_line(kb, faq: Path, args: tuple[str, ...], message: str) -> None:
    code, _, err = kb("translate", *args, "--sources", str(faq))
    assert code == 2 and len(err.splitlines()) == 1 and message in err
    assert sorted(p.name for p in faq.iterdir()) == ["faq.md"]


@pytest.mark.parametrize(
    "value", ["plain", 'quo"te', "back\\slash", "tab\there", "line\nbreak", "\x00\x1f\x7f", "中文 ✓"]
)
def test_toml_strings_read_back_as_written(value: str) -> None:
    assert tomllib.loads(f"key = {toml_string(value)}")["key"] == value


@pytest.mark.parametrize(
    ("reply", "found"),
    [
        ("## Resume?\n\nUse `--load`:\n\n```bash\nrun --load x\n```\n\nSee https://a.example/x.", None),
        (
            "## Resume?\n\nUse `--load`:\n\n```bash\nrun --load y\n```\n\nSee https://a.example/x.",
            "a code block changed",
        ),
        (
            "## Resume?\n\nUse `-load`:\n\n```bash\nrun --load x\n```\n\nSee https://a.example/x.",
            "inline code `--load` changed",
        ),
        (
            "## Resume?\n\nUse `--load`:\n\n```bash\nrun --load x\n```\n\nSee https://a.example/y.",
            "the link https://a.example/x changed",
        ),
        (
            "### Resume?\n\nUse `--load`:\n\n```bash\nrun --load x\n```\n\nSee https://a.example/x.",
            "the Markdown structure changed (headings, list items or code blocks)",
        ),
        (
            "## 续训？\n\n用 `--load`：\n\n```bash\nrun --load x\n```\n\n见 https://a.example/x。",
            "the reply is not in English",
        ),
    ],
)
def test_the_checks_on_a_reply(reply: str, found: str | None) -> None:
    original = "## 续训？\n\n用 `--load`：\n\n```bash\nrun --load x\n```\n\n见 https://a.example/x。"
    assert problem(original, reply, "zh", "en") == found
