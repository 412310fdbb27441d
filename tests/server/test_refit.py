"""Refitting the query adapter from /insights while the server serves: admin only, with the page's form
token from this site, one at a time, the old adapter serving until the new build is swapped in;
/healthz and the page say when it was fitted and on how many questions. A real uvicorn on loopback."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

from kb.settings import Settings
from server import create_app
from tests.support.forms import insights_form_token as form_token

TOKEN = "refit-admin-token-3f1c"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
RESUME = "slime-b0ab398d"  # 如何续训？


@pytest.fixture(scope="module")
def live(settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[..., Any]) -> tuple[str, Path]:
    data = tmp_path_factory.mktemp("refit-data")
    # Not the session's insights database: reading its files here would drop this process's SQLite locks on it.
    shutil.copytree(
        settings.data_dir, data, dirs_exist_ok=True, symlinks=True, ignore=shutil.ignore_patterns("insights.sqlite*")
    )
    app = create_app(settings.with_(data_dir=data, admin_token=TOKEN))
    return serve(app).url, data


@pytest.fixture
def browser(live: tuple[str, Path]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live[0], timeout=120, headers={"Accept-Language": "en"}) as client:
        token = form_token(client)
        assert client.post("/insights/sign-in", data={"token": TOKEN, "form_token": token}).status_code == 303
        yield client


def _section(client: httpx.Client) -> str:
    return client.get("/insights").text.split('id="adapter"')[1].split("</section>")[0]


def test_healthz_names_the_adapter_served(live: tuple[str, Path]) -> None:
    health = httpx.get(f"{live[0]}/healthz", timeout=30).json()
    assert health["adapter"]["questions"] > 400
    assert re.fullmatch(r"[0-9a-f]{16}", health["adapter"]["digest"])
    assert health["adapter"]["fitted_at"].startswith("20")


@pytest.mark.slow
def test_a_link_then_a_refit_from_the_page_swaps_in_an_adapter_fitted_on_it(
    live: tuple[str, Path], browser: httpx.Client
) -> None:
    base, data = live
    before = httpx.get(f"{base}/healthz", timeout=30).json()
    section = _section(browser)
    assert "Fitted " in section and f"on {before['adapter']['questions']} questions" in section
    assert "Links made since: 0" in section
    made = httpx.post(
        f"{base}/admin/links",
        json={"question": "how do I pick up a run from where it stopped", "entry_id": RESUME},
        headers=BEARER,
        timeout=60,
    )
    assert made.status_code == 201, made.text
    assert "Links made since: 1" in _section(browser)

    # Without the form token, or from another site's page, nothing starts.
    assert browser.post("/insights/adapter", data={"form_token": ""}).status_code == 403
    evil = browser.post(
        "/insights/adapter", data={"form_token": form_token(browser)}, headers={"Origin": "https://evil.example"}
    )
    assert evil.status_code == 403
    assert httpx.post(f"{base}/insights/adapter", data={}, timeout=30).status_code in (401, 403)
    assert httpx.get(f"{base}/healthz", timeout=30).json()["build"] == before["build"]

    done = browser.post("/insights/adapter", data={"form_token": form_token(browser), "back": "adapter"})
    assert done.status_code == 303 and done.headers["location"].endswith("#adapter")
    # A second refit while the first runs starts nothing and the page says one is running.
    second = browser.post("/insights/adapter", data={"form_token": form_token(browser), "back": "adapter"})
    assert second.status_code == 303
    deadline = time.monotonic() + 180
    while True:
        health = httpx.get(f"{base}/healthz", timeout=30).json()
        if health["build"] != before["build"]:
            break
        assert time.monotonic() < deadline, "the refitted build was not swapped in"
        time.sleep(0.5)
    assert health["adapter"]["questions"] == before["adapter"]["questions"] + 1
    assert health["adapter"]["links"] == 1
    assert health["adapter"]["digest"] != before["adapter"]["digest"]
    assert len([p for p in (data / "builds").iterdir() if not p.name.startswith(".")]) >= 2
    assert "Links made since: 0" in _section(browser)
    searched = httpx.get(f"{base}/api/search", params={"q": "how do I pick up a run from where it stopped"}, timeout=30)
    assert searched.json()["hits"][0]["id"] == RESUME
