"""Entries in two languages: pairing at ingest, bad translation files, and every channel
giving each entry in the reader's language without changing what is found."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ingest import build_index
from ingest.manifest import load_manifest
from ingest.sources import parse_sources
from kb.entries import entry_id
from kb.errors import SourceError
from kb.evaluate import load_queries
from kb.hits import hit_fields
from kb.index import read_index
from kb.knowledge import KnowledgeBase
from kb.settings import SHIPPED_SOURCES, Settings
from tests.support.paths import ROOT

DEV = ROOT / "tests" / "data" / "dev.jsonl"
ASYNC_IO = "Unable to pre-compile async_io"  # an entry of the notes the maintainers translated
TRANSLATED = "Translated from the Chinese original by this knowledge base's maintainers."


@pytest.fixture(scope="module")
def entries():
    return parse_sources(SHIPPED_SOURCES)


def test_every_shipped_source_is_paired_by_position(entries):
    assert len(entries) == 75
    paired = [e for e in entries if e.translations]
    assert len(paired) == 75 and all(e.languages == ("en", "zh") for e in paired)
    # The authors' own English pages say nothing of who wrote them; the training-environment
    # notes have none upstream, and their English version is the maintainers' translation.
    by = {(e.source, e.translations[0].translated_by) for e in entries}
    assert by == {
        ("chatlearn-v1", ""),
        ("roll", ""),
        ("slime", ""),
        ("chatlearn", ""),
        ("training-env", "maintainers"),
        ("roll-npu", ""),
    }
    assert not any(e.translated_by for e in entries)
    # Ids come from the Chinese question, as before there were translations (and before a code span of several
    # words was quoted in it: its id is made without the quotation marks).
    assert all(e.lang == "zh" and e.id == entry_id(e.source, re.sub("[“”]", "", e.question)) for e in entries)
    roll = [e for e in paired if e.source == "roll"]
    assert (roll[0].question, roll[0].translations[0].question) == (
        "Megatron 模型如何转成 HF",
        "How to convert Megatron models to HF format?",
    )
    assert (roll[-1].translations[0].question, roll[-1].translations[0].section) == (
        "Error: “TypeError: BackendCompilerFailed.__init__() missing 1 required positional argument”",
        "Common Errors and Solutions",
    )
    slime = [e.translations[0].question for e in paired if e.source == "slime"]
    assert (
        slime[0] == "Why do I see garbled text during training?"
        and slime[-1] == "Gradient becomes NaN or Inf during training."
    )
    assert not any("中文版" in e.translations[0].answer for e in paired)


def test_each_version_keeps_its_own_deep_link(entries):
    by_question = {e.question: e for e in entries}
    roll = by_question["如何debug代码"]
    assert roll.url.endswith("/docs/qa.md?plain=1#L64")
    assert roll.translations[0].url == (
        "https://github.com/alibaba/ROLL/blob/c0c0d2b1670ef49ea04ddb862a5f7809d2d65d30"
        "/docs_roll/docs/English/QuickStart/qa_issues.md#how-to-debug-code"
    )
    timeout = by_question["Rollout推理过程中出现ray.exceptions.RayChannelTimeoutError"]
    assert timeout.url.startswith(
        "https://github.com/alibaba/ChatLearn/blob/248875a4a5617b3ec83511a51e25d5565b0ae071/docs/zh/"
    )
    assert timeout.translations[0].url == (
        "https://github.com/alibaba/ChatLearn/blob/248875a4a5617b3ec83511a51e25d5565b0ae071/docs/en/faq.md"
        "#rayexceptionsraychanneltimeouterror-during-rollout-inference"
    )
    english = by_question["如何续训？"].localized("en")
    assert (english.lang, english.question, english.source_url) == (
        "en",
        "How do I resume training?",
        "https://github.com/THUDM/slime/blob/a3d5cbf30a50c867d8eb0f61121db89faea9d426/docs/en/qa.md",
    )
    assert english.localized("zh") == by_question["如何续训？"]


# Bad translation files: one clear error naming the files, exit 2, the old index still serving.


@pytest.fixture
def workspace(tmp_path, settings):
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    sources = tmp_path / "sources"
    shutil.copytree(SHIPPED_SOURCES, sources)
    workspace = Settings(data_dir=tmp_path / "data", sources_dir=sources)
    build_index(workspace)
    return workspace


def _drop_last_item(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.rindex("13. **")], encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda p: p.unlink(), "slime.en.md' does not exist"),
        (lambda p: p.write_bytes(b""), "slime.en.md: file is empty"),
        (lambda p: p.write_bytes(b"# slime FAQ\n\n1.  **Why?**\n\n    \xff\xfe\n"), "slime.en.md:5: not UTF-8"),
        (_drop_last_item, "slime.en.md: 12 entries, but "),
    ],
    ids=["missing", "empty", "not-utf8", "count"],
)
def test_a_bad_translation_is_one_error_and_the_old_index_keeps_serving(workspace, damage, message):
    before = read_index(workspace.index_dir).meta
    damage(workspace.sources_dir / "slime.en.md")
    with pytest.raises(SourceError) as caught:
        build_index(workspace)
    assert message in str(caught.value)
    if "entries, but" in message:
        assert f"{workspace.sources_dir / 'slime.md'} has 13" in str(caught.value)
    assert read_index(workspace.index_dir).meta == before
    kb = KnowledgeBase.open(workspace)
    assert (
        kb.search_blocking("how do I resume training").in_language("en").hits[0].entry.question
        == "How do I resume training?"
    )

    environment = {
        "KB_DATA_DIR": str(workspace.data_dir),
        "KB_SOURCES_DIR": str(workspace.sources_dir),
        "PATH": "/usr/bin:/bin",
    }
    run = subprocess.run(
        [sys.executable, "-m", "kbcli.cli", "ingest"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1 and message in run.stderr


@pytest.mark.slow
def test_a_translation_listed_out_of_order_is_a_warning_in_the_summary(workspace):
    path = workspace.sources_dir / "roll.en.md"
    text = path.read_text(encoding="utf-8")
    first, second = "### What is colocate mode?", "### What is separate mode?"
    a, b, end = text.index(first), text.index(second), text.index("## Training Parameters Related")
    path.write_text(text[:a] + text[b:end] + text[a:b] + text[end:], encoding="utf-8")
    report = build_index(workspace)
    assert report.entries == 75
    assert len(report.warnings) == 2 and all("roll-" in w and "same order" in w for w in report.warnings)
    assert not build_index(Settings(data_dir=workspace.data_dir, sources_dir=SHIPPED_SOURCES)).warnings


# The reader's language on every channel.


@pytest.mark.slow
def test_hl_never_changes_what_is_found(client: TestClient):
    for query in load_queries(DEV):
        plain = client.get("/api/search", params={"q": query.q}).json()
        for hl in ("zh", "en"):
            shown = client.get("/api/search", params={"q": query.q, "hl": hl}).json()
            assert [(h["id"], h["score"]) for h in shown["hits"]] == [(h["id"], h["score"]) for h in plain["hits"]]
            assert shown["answered"] == plain["answered"] and shown["hl"] == hl
            for hit in shown["hits"]:
                assert hit["lang"] == (hl if hl in hit["languages"] else hit["languages"][0])


@pytest.mark.parametrize(
    ("question", "lang", "text", "link"),
    [
        (
            "how do I resume training in slime?",
            "en",
            "Simply set the `--load` directory to your `--save` directory.",
            "/docs/en/qa.md?plain=1#L34",
        ),
        ("slime 怎么续训？", "zh", "直接将 `--load` 设置为 `--save` 的目录即可", "/docs/zh/qa.md?plain=1#L34"),
    ],
)
def test_the_answer_and_its_link_come_in_the_question_language(client: TestClient, question, lang, text, link):
    hit = client.get("/api/search", params={"q": question}).json()["hits"][0]
    assert (hit["lang"], hit["note"]) == (lang, "")
    assert text.lower() in hit["answer"].lower() and hit["url"].endswith(link)
    chat = client.post("/api/chat", json={"message": question}).json()
    assert chat["answered"] and text.lower() in chat["answer"].lower() and link in chat["answer"]
    assert chat["sources"][0]["lang"] == lang


def test_hl_in_the_chat_body_overrides_the_question_language(client: TestClient):
    chat = client.post("/api/chat", json={"message": "how do I resume training in slime?", "hl": "zh"}).json()
    assert chat["sources"][0]["question"] == "如何续训？" and "来源" in chat["answer"]


def test_a_translated_entry_says_who_translated_it_and_links_the_original(client: TestClient):
    hit = client.get("/api/search", params={"q": "deepspeed: Unable to pre-compile async_io"}).json()["hits"][0]
    assert hit["question"] == ASYNC_IO and hit["languages"] == ["en", "zh"] and hit["lang"] == "en"
    assert "Solution 1: [build the extensions manually]" in hit["answer"] and "报错" not in hit["answer"]
    assert (hit["note"], hit["translated_by"]) == (TRANSLATED, "maintainers")
    # No English page exists upstream: both links go to the Chinese original's line.
    original = "/week3-error-collection.md?plain=1#L16"
    assert hit["original_url"].endswith(original) and hit["url"].endswith(original)
    chat = client.post("/api/chat", json={"message": "deepspeed: Unable to pre-compile async_io"}).json()
    assert chat["answer"].startswith(f"*{TRANSLATED}*") and chat["sources"][0]["translated_by"] == "maintainers"
    zh = client.get("/api/search", params={"q": "deepspeed 预编译 async_io 失败"}).json()["hits"][0]
    assert zh["question"] == ASYNC_IO and zh["lang"] == "zh"
    assert (zh["note"], zh["translated_by"], zh["original_url"]) == ("", None, None)
    entry = client.get(f"/api/entries/{hit['id']}", params={"hl": "en"}).json()
    assert (entry["note"], entry["translated_by"]) == (TRANSLATED, "maintainers")
    assert entry["original_url"].endswith(original)
    page = client.get(f"/entries/{hit['id']}?hl=en").text
    assert TRANSLATED.replace("'", "&#39;") in page and original in page
    zh_page = client.get(f"/entries/{hit['id']}?hl=zh").text
    shown = re.sub(r"<script\b.*?</script>", "", zh_page, flags=re.S)  # the page's strings for its scripts aside
    assert "maintainers" not in shown and "维护者" not in shown
    # The authors' own English version says nothing extra.
    authors = client.get("/api/search", params={"q": "how do I resume training in slime?"}).json()["hits"][0]
    assert (authors["note"], authors["translated_by"], authors["original_url"]) == ("", None, None)


def test_entry_api_and_page_give_the_chosen_version(client: TestClient):
    first = client.get("/api/search", params={"q": "slime 如何续训？"}).json()["hits"][0]
    english = client.get(f"/api/entries/{first['id']}", params={"hl": "en"}).json()
    assert english["question"] == "How do I resume training?" and english["lang"] == "en"
    assert all(h["lang"] == "en" for h in english["related"])

    page = client.get(f"/entries/{first['id']}", headers={"Accept-Language": "zh-CN"})
    assert '<h1 class="entry-q">如何续训？</h1>' in page.text and f'href="/entries/{first["id"]}?hl=en"' in page.text
    try:
        switched = client.get(f"/entries/{first['id']}?hl=en", headers={"Accept-Language": "zh-CN"})
        assert '<h1 class="entry-q">How do I resume training?</h1>' in switched.text
        assert client.cookies.get("kb_hl") == "en"  # remembered, like the interface language
        remembered = client.get(f"/entries/{first['id']}", headers={"Accept-Language": "zh-CN"})
        assert '<h1 class="entry-q">How do I resume training?</h1>' in remembered.text
    finally:
        client.cookies.delete("kb_hl")
    assert client.get(f"/entries/{first['id']}?hl=fr").status_code == 422


def test_slack_answers_an_english_question_in_english(settings):
    from server import create_app
    from tests.support.slack import SECRET, post_command

    with TestClient(create_app(settings.with_(slack_signing_secret=SECRET))) as slack:
        text = json.dumps(post_command(slack, "how do I resume training in slime?").json(), ensure_ascii=False)
    assert "How do I resume training?" in text and "如何续训" not in text and "/docs/en/qa.md" in text


# Your own FAQs in two languages.

FAQ_ZH = "# 团队 FAQ\n\n## 如何申请 GPU 配额？\n\n在 #infra 频道说明项目名称。\n\n## 共享的 checkpoint 在哪里？\n\n在 `/mnt/shared/ckpt`，只读。\n"
FAQ_EN = "# Team FAQ\n\n## How do I get GPU quota?\n\nAsk in #infra with your project name.\n\n## Where are the shared checkpoints?\n\nUnder `/mnt/shared/ckpt`, read-only.\n"


@pytest.mark.slow
def test_own_faq_with_an_english_file_beside_it_needs_no_manifest(tmp_path):
    folder = tmp_path / "faq"
    folder.mkdir()
    (folder / "team.md").write_text(FAQ_ZH, encoding="utf-8")
    (folder / "team.en.md").write_text(FAQ_EN, encoding="utf-8")
    [source] = load_manifest(folder)
    assert (source.name, source.lang, source.translation.file, source.translation.lang) == (
        "team",
        "zh",
        "team.en.md",
        "en",
    )
    workspace = Settings(data_dir=tmp_path / "data", sources_dir=folder)
    assert build_index(workspace).entries == 2
    kb = KnowledgeBase.open(workspace)
    hit = kb.search_blocking("where are the shared checkpoints").in_language("en").hits[0]
    assert (hit.entry.question, hit.entry.languages) == ("Where are the shared checkpoints?", ("en", "zh"))
    assert kb.search_blocking("共享 checkpoint 在哪").hits[0].entry.question == "共享的 checkpoint 在哪里？"


@pytest.mark.slow
def test_an_entry_with_no_version_in_the_readers_language_says_so(tmp_path):
    folder = tmp_path / "faq"
    folder.mkdir()
    (folder / "team.md").write_text(FAQ_ZH, encoding="utf-8")
    workspace = Settings(data_dir=tmp_path / "data", sources_dir=folder)
    build_index(workspace)
    hit = KnowledgeBase.open(workspace).search_blocking("where are the shared checkpoints").hits[0]
    fields = hit_fields(hit, "en")
    assert (fields["lang"], fields["languages"]) == ("zh", ["zh"])
    assert (fields["note"], fields["translated_by"]) == (
        "This entry has no English version; it is shown in Chinese.",
        None,
    )
    assert hit_fields(hit, "zh")["note"] == ""


def test_own_faq_pairs_files_named_in_the_manifest(tmp_path):
    folder = tmp_path / "faq"
    folder.mkdir()
    (folder / "faq.md").write_text(FAQ_ZH, encoding="utf-8")
    (folder / "faq-english.md").write_text(FAQ_EN, encoding="utf-8")
    (folder / "sources.toml").write_text(
        '[[source]]\nname = "team"\nfile = "faq.md"\ntitle = "Team FAQ"\nframework = "Team"\nlang = "zh"\n\n'
        '[source.translation]\nfile = "faq-english.md"\nlang = "en"\nurl = "https://example.org/faq-english.md"\n',
        encoding="utf-8",
    )
    [entry, _] = parse_sources(folder)
    assert entry.translations[0].url == "https://example.org/faq-english.md#how-do-i-get-gpu-quota"
    (folder / "sources.toml").write_text(
        (folder / "sources.toml").read_text(encoding="utf-8").replace('lang = "en"', 'lang = "zh"'), encoding="utf-8"
    )
    with pytest.raises(
        SourceError, match=r"source 'team', \[source.translation\]: lang 'zh' is the source's own language"
    ):
        load_manifest(folder)
