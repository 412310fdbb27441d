"""`GET /api/entries/{id}`, and the API's 404 and 405 as JSON."""

from __future__ import annotations

import shutil
from typing import Any, Iterator

import openpyxl
import pytest
from fastapi.testclient import TestClient

from ingest import build_index
from kbcli.cli import main
from server import create_app
from server.settings import ServerSettings
from tests.support.api import RESUME_ZH, error_body


def test_entry(client: TestClient) -> None:
    first = client.get("/api/search", params={"q": RESUME_ZH}).json()["hits"][0]
    body = client.get(f"/api/entries/{first['id']}").json()
    assert body["id"] == first["id"] and body["question"] == first["question"]
    assert body["answer"] == first["answer"] and body["answer_html"] == first["answer_html"]
    assert len(body["related"]) == 3 and first["id"] not in {h["id"] for h in body["related"]}


def test_unknown_entry_is_a_json_404(client: TestClient) -> None:
    message = error_body(client.get("/api/entries/no-such-entry"), 404)
    assert "no-such-entry" in message


def test_unknown_api_path_and_wrong_method(client: TestClient) -> None:
    error_body(client.get("/api/nothing-here"), 404)
    error_body(client.get("/api/chat"), 405)


@pytest.fixture(scope="module")
def own_files(settings: ServerSettings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The app on a folder without a manifest (so without a url): a Markdown file and a workbook with a sheet "FAQ"."""
    folder = tmp_path_factory.mktemp("own-files")
    (folder / "infra.md").write_text(
        "# Infra FAQ\n\n## How do I get GPU quota?\n\nAsk in #infra.\n\n"
        "## Where are the shared checkpoints?\n\nUnder `/mnt/shared/ckpt`.\n",
        encoding="utf-8",
    )
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "FAQ"
    sheet.append(["question", "answer"])
    sheet.append(["Why does the job get a 502?", "Restart the gateway."])
    book.save(folder / "team.xlsx")
    data = tmp_path_factory.mktemp("own-files-data")
    shutil.copytree(settings.cache_dir, data / "cache")
    own = settings.with_(data_dir=data, sources_dir=folder)
    build_index(own)
    with TestClient(create_app(own)) as client:
        yield client


def entry_of(client: TestClient, question: str) -> dict[str, Any]:
    hit = client.get("/api/search", params={"q": question}).json()["hits"][0]
    assert hit["question"] == question
    return client.get(f"/api/entries/{hit['id']}").json()


@pytest.mark.slow
def test_an_entry_without_a_url_names_its_file_and_line(own_files: TestClient) -> None:
    body = entry_of(own_files, "Where are the shared checkpoints?")
    assert (body["url"], body["file"], body["line"], body["sheet"]) == ("", "infra.md", 7, "")
    page = own_files.get(f"/entries/{body['id']}", headers={"Accept-Language": "en"}).text
    assert "<dt>File</dt><dd><code>infra.md</code> · line 7</dd>" in page


@pytest.mark.slow
def test_a_workbook_entry_names_its_sheet_and_row_not_a_line(
    own_files: TestClient, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    body = entry_of(own_files, "Why does the job get a 502?")
    assert (body["url"], body["file"], body["line"], body["sheet"]) == ("", "team.xlsx", 2, "FAQ")
    english = own_files.get(f"/entries/{body['id']}", headers={"Accept-Language": "en"}).text
    assert "<dt>File</dt><dd><code>team.xlsx</code> · sheet FAQ, row 2</dd>" in english
    chinese = own_files.get(f"/entries/{body['id']}", headers={"Accept-Language": "zh-CN"}).text
    assert "<code>team.xlsx</code> · 工作表 FAQ 第 2 行</dd>" in chinese
    monkeypatch.setenv("KB_DATA_DIR", str(own_files.app.state.settings.data_dir))
    assert main(["search", "Why does the job get a 502?", "--brief", "-k", "1"]) == 0
    assert "   team.xlsx: sheet 'FAQ', row 2" in capsys.readouterr().out.splitlines()
