"""`kb export` and Q&A files end to end, run as commands: a 200-row workbook and a CSV made here (Chinese and
English, alternates, the other language in the same row) ingested, searched in both languages, served,
exported to .xlsx, .csv and .jsonl, ingested again: the same ids, texts, learned questions and search
results; the shipped FAQs give the same search results for the development set after the round trip."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any, Callable

import httpx
import openpyxl
import pytest

from kb.evaluate import load_queries
from kb.index import read_index
from kb.knowledge import KnowledgeBase
from kb.settings import Settings
from server.settings import ServerSettings
from tests.support.cli import kb
from tests.support.paths import ROOT

COMPONENTS = ["Megatron", "vLLM", "DeepSpeed", "sglang", "Ray", "FSDP", "NCCL", "flash-attn", "LoRA", "QLoRA",
              "Triton", "CUDA", "PyTorch", "Transformers", "Accelerate", "ROLL", "slime", "ChatLearn", "TensorBoard", "wandb"]  # fmt: skip
SYMPTOMS = [("显存不足", "runs out of GPU memory"), ("启动时卡住", "hangs at startup"),
            ("报版本不兼容", "reports a version mismatch"), ("训练速度很慢", "trains very slowly"),
            ("保存检查点失败", "fails to save a checkpoint"), ("加载权重报错", "fails to load its weights"),
            ("多机通信超时", "times out across nodes"), ("日志里出现 NaN", "logs NaN losses"),
            ("无法导入模块", "cannot import its module"), ("配置参数不生效", "ignores a config option")]  # fmt: skip
TASKS = [("重启", "restart"), ("扩容", "scale up"), ("备份", "back up"), ("升级", "upgrade"), ("下线", "retire"),
         ("监控", "monitor"), ("迁移", "migrate"), ("清理", "clean up")]  # fmt: skip
THINGS = [("推理服务", "inference service"), ("训练集群", "training cluster"), ("对象存储", "object store"),
          ("数据库", "database"), ("镜像仓库", "image registry")]  # fmt: skip
WORKBOOK_URL = "https://github.com/acme/faq/blob/4f2a9c1/team.xlsx"
CSV_URL = "https://github.com/acme/faq/blob/4f2a9c1/ops.csv"


def team_rows() -> list[list[str]]:
    """200 rows: the Chinese question and answer, the English in the same row, alternates in both languages."""
    rows = [["问题", "答案", "英文问题", "英文答案", "相似问题", "分类", "英文分类", "标签"]]
    for c in COMPONENTS:
        for k, (zh, en) in enumerate(SYMPTOMS):
            flag = f"--{c.lower()}-fix-{k}"
            rows.append([
                f"{c} {zh}怎么办？", f"检查 {c} 的设置，然后运行：\n\n```bash\nkb-fix {flag}\n```",
                f"What to do when {c} {en}?", f"Check the {c} settings, then run:\n\n```bash\nkb-fix {flag}\n```",
                f"{c}{zh}\n{c} {en}", c, c, "gpu" if k == 0 else "",
            ])  # fmt: skip
    return rows


def ops_rows() -> list[list[str]]:
    """40 English rows with their Chinese in `question_zh`/`answer_zh`, `|` between alternates, links of
    their own on some; then two questions the FAQ does not cover."""
    rows = [["question", "answer", "question_zh", "answer_zh", "alternates", "url", "not_covered"]]
    for verb_zh, verb in TASKS:
        for thing_zh, thing in THINGS:
            slug = f"{verb}-{thing}".replace(" ", "-")
            rows.append([
                f"How do I {verb} the {thing}?", f"Open the runbook `ops/{slug}.md` and follow it.",
                f"如何{verb_zh}{thing_zh}？", f"打开运行手册 `ops/{slug}.md`，照着做。",
                f"{verb} {thing} | {verb_zh}{thing_zh}的步骤", f"https://wiki.acme/ops/{slug}" if verb == "restart" else "", "",
            ])  # fmt: skip
    rows += [
        ["Can I train on Ascend NPUs?", "", "", "", "", "", "yes"],
        ["公司食堂几点开门？", "", "", "", "", "", "是"],
    ]
    return rows


MANIFEST = f"""[[source]]
name = "team"
file = "team.xlsx"
sheet = "FAQ"
title = {{ zh = "团队问答", en = "Team Q&A" }}
framework = "Team"
lang = "zh"
url = "{WORKBOOK_URL}"

[[source]]
name = "ops"
file = "ops.csv"
title = "Ops runbook FAQ"
lang = "en"
url = "{CSV_URL}"
"""


@pytest.fixture(scope="module")
def made(
    tmp_path_factory: pytest.TempPathFactory, settings: Settings, request: pytest.FixtureRequest
) -> tuple[Path, Path]:
    """The folder of the workbook and the CSV, and a data directory with their index, built by `kb ingest`
    (their vectors kept in pytest's cache directory with the shipped FAQs', as `conftest.build_keeping_vectors`
    keeps those)."""
    folder = tmp_path_factory.mktemp("qa-files")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "FAQ"
    for row in team_rows():
        sheet.append(row)
    book.create_sheet("说明").append(["这张表由团队维护。"])  # a notes sheet: not read, `sheet` names FAQ
    book.save(folder / "team.xlsx")
    with open(folder / "ops.csv", "w", encoding="utf-8-sig", newline="") as f:
        csv.writer(f).writerows(ops_rows())
    (folder / "sources.toml").write_text(MANIFEST, encoding="utf-8")
    data = tmp_path_factory.mktemp("qa-data")
    shutil.copytree(settings.cache_dir, data / "cache", dirs_exist_ok=True)
    run = kb("ingest", "--sources", str(folder), data_dir=data)
    assert run.returncode == 0, run.stderr
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        shutil.copytree(data / "cache", cache.mkdir("kb-embedding-cache"), dirs_exist_ok=True)
    assert [
        line.split()[:5]
        for line in run.stdout.splitlines()
        if line.startswith("  ") and line.split()[2:3] == ["entries"]
    ] == [
        ["team", "200", "entries", "en+zh", "Team"],
        ["ops", "40", "entries", "en+zh", "Ops"],
    ]
    assert "learned: 480 alternate questions, 2 questions the FAQ does not cover" in run.stdout
    return folder, data


def first(base: KnowledgeBase, query: str) -> str:
    return base.search_blocking(query).hits[0].entry.id


QUERIES = ["Megatron 显存不足怎么办？", "What to do when vLLM hangs at startup?", "DeepSpeed 训练速度很慢",
           "NCCL times out across nodes", "How do I back up the database?", "如何迁移对象存储？",
           "restart inference service", "wandb 配置参数不生效", "Can I train on Ascend NPUs?"]  # fmt: skip


@pytest.mark.slow
def test_the_rows_are_searched_in_both_languages_and_link_to_their_row(made):
    _, data = made
    base = KnowledgeBase.open(Settings(data_dir=data))
    by_question = {e.question: e for e in base.entries}
    resume = by_question["Megatron 显存不足怎么办？"]
    assert first(base, "Megatron 显存不足怎么办？") == resume.id
    assert first(base, "What to do when Megatron runs out of GPU memory?") == resume.id  # its English, same row
    assert first(base, "Megatron显存不足") == resume.id  # an alternate
    assert (resume.url, resume.translations[0].url, resume.section, resume.tags[:2]) == (
        WORKBOOK_URL, WORKBOOK_URL, "Megatron", ("team", "gpu"),
    )  # fmt: skip
    backup = by_question["How do I back up the database?"]
    assert first(base, "如何备份数据库？") == backup.id and backup.url == f"{CSV_URL}#L{backup.line}"
    restart = by_question["How do I restart the database?"]
    assert restart.url == restart.translations[0].url == "https://wiki.acme/ops/restart-database"  # its own link
    assert not base.search_blocking("Can I train on Ascend NPUs?").answered  # taught as not covered


@pytest.mark.slow
def test_the_rows_are_answered_by_a_real_server(made, serve: Callable[..., Any]):
    from server import create_app

    _, data = made
    url = serve(create_app(ServerSettings(data_dir=data, rate_limit="off"))).url
    body = httpx.get(f"{url}/api/search", params={"q": "如何升级镜像仓库？", "hl": "en"}).json()
    hit = body["hits"][0]
    assert (hit["question"], hit["lang"], hit["languages"], hit["url"]) == (
        "How do I upgrade the image registry?", "en", ["en", "zh"], f"{CSV_URL}#L{hit['url'].rsplit('L', 1)[1]}",
    )  # fmt: skip
    page = httpx.get(f"{url}/entries/{hit['id']}", headers={"Accept-Language": "zh"})
    assert page.status_code == 200 and "如何升级镜像仓库？" in page.text


def learned(index_dir: Path) -> set[tuple[str, str | None]]:
    return {(q.question, q.entry) for q in read_index(index_dir).learned.questions}


def same_entries(before: Path, after: Path) -> None:
    """The two indexes hold the same entries: ids, texts in each language, sections, links, tags, sources."""

    def fields(index_dir: Path) -> dict[str, tuple[object, ...]]:
        return {
            e.id: (
                e.source,
                e.lang,
                e.question,
                e.answer,
                e.section,
                e.url,
                e.tags,
                e.source_title,
                e.source_titles,
                e.framework,
                e.source_version,
                e.source_url,
                tuple(
                    (t.lang, t.question, t.answer, t.section, t.url, t.source_url, t.translated_by, t.reviewed)
                    for t in e.translations
                ),
            )  # fmt: skip
            for e in read_index(index_dir).entries
        }

    assert fields(after) == fields(before)
    assert learned(after) == learned(before)


def results(data: Path, queries: list[str]) -> list[tuple[bool, list[tuple[str, float]]]]:
    base = KnowledgeBase.open(Settings(data_dir=data))
    found = [base.search_blocking(q) for q in queries]
    return [(r.answered, [(h.entry.id, round(h.score, 5)) for h in r.hits]) for r in found]


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".xlsx", ".csv", ".jsonl"])
def test_export_and_ingest_again_give_the_same_entries_and_search_results(made, tmp_path, suffix):
    _, data = made
    out = tmp_path / "export"
    out.mkdir()
    run = kb("export", str(out / f"faq{suffix}"), data_dir=data)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == (
        f"wrote 240 entries of 2 sources, 480 alternate questions and 2 questions the FAQ does not cover to {out / f'faq{suffix}'}"
    )
    again = tmp_path / "data"
    shutil.copytree(data, again, symlinks=True)
    run = kb("ingest", "--sources", str(out), data_dir=again)
    assert run.returncode == 0, run.stderr
    assert "indexed 240 entries in 480 passages (0 embedded, 480 from cache)" in run.stdout
    same_entries(data / "index", again / "index")
    assert results(again, QUERIES) == results(data, QUERIES)


@pytest.mark.slow
def test_the_shipped_faqs_round_trip_with_the_same_dev_set_results(settings, tmp_path):
    out = tmp_path / "export"
    out.mkdir()
    run = kb("export", str(out / "faq.csv"), data_dir=settings.data_dir)
    assert run.returncode == 0, run.stderr
    again = tmp_path / "data"
    shutil.copytree(settings.data_dir, again, symlinks=True, ignore=shutil.ignore_patterns("insights*"))
    run = kb("ingest", "--sources", str(out), data_dir=again)
    assert run.returncode == 0, run.stderr
    assert "indexed 75 entries" in run.stdout and "the index holds 6 sources" in run.stdout
    assert "near-duplicate entries" not in run.stdout  # the two pairs marked intended stay marked
    same_entries(settings.index_dir, again / "index")
    marked = [[(d["first"], d["second"], d["intended"]) for d in read_index(i).meta.duplicates]
              for i in (settings.index_dir, again / "index")]  # fmt: skip
    assert marked[1] == marked[0] and len(marked[0]) == 2 and all(why for *_, why in marked[0])
    questions = [q.q for q in load_queries(ROOT / "tests" / "data" / "dev.jsonl")]
    assert results(again, questions) == results(settings.data_dir, questions)


@pytest.mark.slow
def test_export_learned_adds_the_links_and_source_exports_one_source(made, tmp_path):
    _, data = made
    mine = tmp_path / "data"
    shutil.copytree(data, mine, symlinks=True)
    base = KnowledgeBase.open(Settings(data_dir=mine))
    target = next(e for e in base.entries if e.question == "How do I monitor the training cluster?")
    assert kb("link", "where are the cluster dashboards", target.id, data_dir=mine).returncode == 0
    assert kb("link", "--not-covered", "怎么报销差旅费", data_dir=mine).returncode == 0
    plain, with_links = tmp_path / "plain.jsonl", tmp_path / "learned.jsonl"
    assert kb("export", str(plain), data_dir=mine).returncode == 0
    run = kb("export", str(with_links), "--learned", data_dir=mine)
    assert run.returncode == 0, run.stderr
    assert "481 alternate questions and 3 questions the FAQ does not cover" in run.stdout
    rows = [json.loads(line) for line in with_links.read_text(encoding="utf-8").splitlines()]
    row = next(r for r in rows if r["id"] == target.id)
    assert row["alternates"][-1] == "where are the cluster dashboards"
    assert {"lang": "zh", "question": "怎么报销差旅费", "not_covered": True} in rows
    assert "where are the cluster dashboards" not in plain.read_text(encoding="utf-8")
    run = kb("export", str(tmp_path / "ops.csv"), "--source", "ops", data_dir=mine)
    assert run.returncode == 0 and "wrote 40 entries of 1 source, 80 alternate questions and 0 questions" in run.stdout
    with open(tmp_path / "ops.csv", encoding="utf-8-sig", newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 40 and {r["source"] for r in table} == {"ops"} and "not_covered" not in table[0]
    assert table[0]["answer"] == "Open the runbook `ops/restart-inference-service.md` and follow it."


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["out.txt"], "out.txt: cannot export to .txt; name a .csv, .tsv, .xlsx, .jsonl file"),
        (["out.csv", "--source", "nope"], "--source: no source 'nope' in the index; it holds team, ops"),
    ],
)
def test_export_errors_are_one_line(made, tmp_path, args, message):
    _, data = made
    run = kb("export", *[str(tmp_path / a) if a.startswith("out") else a for a in args], data_dir=data)
    assert run.returncode == 2 and run.stderr.strip().endswith(message)


@pytest.mark.slow
def test_the_answers_written_on_the_insights_page_are_ingested_and_exported(settings, tmp_path):
    """The written answers' file is a source of `kb ingest` and of the server's build after a write (kb.written_build),
    and `kb export` writes its entries, which ingesting the export gives back."""
    from kb.embedding import open_embedder
    from kb.written import WrittenFile, written_answer
    from kb.written_build import write_written

    folder = tmp_path / "faq"
    folder.mkdir()
    (folder / "team.md").write_text("# Team FAQ\n\n## How do I get a GPU?\n\nAsk in #infra.\n", encoding="utf-8")
    data = tmp_path / "data"
    for copy in (data, tmp_path / "data2"):  # the background's passages from the suite's embedding cache
        shutil.copytree(settings.cache_dir, copy / "cache")
    written = WrittenFile(data / "written.jsonl")
    first = written.save(
        written_answer(
            {"zh": "怎么申请机器？", "en": "How do I ask for a machine?"},
            {"zh": "填表。", "en": "Fill in the form."},
            "infra",
        )
    )
    run = kb("ingest", "--sources", str(folder), data_dir=data)
    assert run.returncode == 0, run.stderr
    assert "written  " in run.stdout and "1 entry  " in run.stdout.split("written  ")[1].splitlines()[0]
    second = written.save(written_answer({"en": "Who runs the cluster?"}, {"en": "The infra team."}))
    mine = Settings(data_dir=data)
    built = write_written(mine, open_embedder(mine.embed_model))  # as the server builds after a write
    assert (built.written, built.embedded) == (2, 1)  # the first answer's passages came from the cache
    out = tmp_path / "all.jsonl"
    assert kb("export", str(out), data_dir=data).returncode == 0
    rows = {row["id"]: row for row in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert (
        rows[first.id]["question"] == "怎么申请机器？"
        and rows[first.id]["question_en"] == "How do I ask for a machine?"
    )
    assert rows[first.id]["source"] == rows[second.id]["source"] == "written" and "infra" in rows[first.id]["tags"]
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(out, again / "all.jsonl")
    run = kb("ingest", "--sources", str(again), data_dir=tmp_path / "data2")
    assert run.returncode == 0, run.stderr
    entries = {e.id: e for e in read_index(tmp_path / "data2" / "index").entries}
    assert (
        entries[second.id].answer == "The infra team."
        and entries[first.id].localized("en").answer == "Fill in the form."
    )
