"""A team's own FAQ, a folder of Markdown without a manifest, served by a real uvicorn:
the home page speaks of its sources (not of the shipped frameworks, nor of frameworks made up
from the file names), and an entry without
a link or version shows its file instead of an empty button. Screenshots at 1280 and 375 px."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from kb.settings import Settings
from server.settings import ServerSettings
from tests.support.browser import DESKTOP, Page

PHONE = {"width": 375, "height": 740}
SHIPPED_NAMES = ("ChatLearn", "ROLL", "slime")


@pytest.fixture(scope="module")
def own_settings(tmp_path_factory: pytest.TempPathFactory, settings: Settings) -> Settings:
    from ingest import build_index

    folder = tmp_path_factory.mktemp("team-faq")
    (folder / "infra.md").write_text(
        "# Infra FAQ\n\n## How do I get GPU quota?\n\nAsk in #infra with your project name.\n\n"
        "## Where are the shared checkpoints?\n\nUnder `/mnt/shared/ckpt`, read-only. Copy one with:\n\n"
        "```bash\nrsync -a /mnt/shared/ckpt/llama-70b/ ~/ckpt/\n```\n",
        encoding="utf-8",
    )
    (folder / "onboarding.md").write_text(
        "# 新人指南\n\n## 怎么申请集群账号？\n\n在 #infra 频道里发工号。\n\n## VPN 连不上怎么办？\n\n重启客户端，再联系 IT。\n",
        encoding="utf-8",
    )
    data = tmp_path_factory.mktemp("team-data")
    shutil.copytree(settings.cache_dir, data / "cache")
    own = ServerSettings(data_dir=data, sources_dir=folder, rate_limit="off")
    build_index(own)
    return own


@pytest.fixture(scope="module")
def base_url(own_settings: Settings, serve: Callable[[Any], Any]) -> str:
    from server import create_app

    return serve(create_app(own_settings)).url


def entry_id(base_url: str, query: str) -> str:
    return httpx.get(f"{base_url}/api/search", params={"q": query}).json()["hits"][0]["id"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_home_page_speaks_of_the_index_sources(base_url: str, lang: str) -> None:
    page = httpx.get(base_url + "/", headers={"Accept-Language": lang}).text
    for name in SHIPPED_NAMES:
        assert name not in page
    title = {"en": "FAQ", "zh": "常见问题"}[lang]  # two sources that name no framework and no site
    assert f"<h1>{title}</h1>" in page
    examples = re.findall(r'class="example" href="[^"]*">([^<]*)<', page)
    assert len(examples) == 2  # one question from each source
    assert set(examples) <= {
        "How do I get GPU quota?",
        "Where are the shared checkpoints?",
        "怎么申请集群账号？",
        "VPN 连不上怎么办？",
    }


def test_an_entry_without_a_link_shows_its_file(base_url: str) -> None:
    page = httpx.get(
        f"{base_url}/entries/{entry_id(base_url, 'shared checkpoints')}", headers={"Accept-Language": "en"}
    ).text
    assert 'href=""' not in page
    assert "View in the original FAQ" not in page
    assert "<dt>Version</dt>" not in page
    assert "<dt>File</dt><dd><code>infra.md</code> · line 7</dd>" in page
    results = httpx.get(f"{base_url}/search", params={"q": "shared checkpoints"}).text
    assert 'href=""' not in results and "infra.md" in results
    hit = httpx.get(f"{base_url}/api/search", params={"q": "shared checkpoints"}).json()["hits"][0]
    assert (hit["url"], hit["file"]) == ("", "infra.md")


@pytest.mark.parametrize(
    ("width", "context"), [("desktop", {"viewport": DESKTOP}), ("phone", {"viewport": PHONE, "is_mobile": True})]
)
def test_screenshots_of_an_own_faq(
    tab: Callable[..., Page], base_url: str, artifacts: Path, width: str, context
) -> None:
    t = tab(locale="en-US", **context)
    t.goto("/")
    assert t.page.locator("h1").inner_text() == "FAQ"
    t.no_horizontal_scroll()
    t.screenshot(artifacts / f"own-faq-home-{width}.png")
    t.goto(f"/entries/{entry_id(base_url, 'shared checkpoints')}")
    assert t.page.locator("a[href='']").count() == 0
    t.no_horizontal_scroll()
    t.screenshot(artifacts / f"own-faq-entry-{width}.png")
    t.goto("/")
    t.page.locator("#q").press_sequentially("shared checkpoints", delay=15)
    t.page.wait_for_selector("#results > .result")
    assert t.page.locator("#results span.source").first.inner_text().split() == ["Infra", "FAQ", "infra.md"]
    assert t.page.locator("#results a[href='']").count() == 0
    t.screenshot(artifacts / f"own-faq-results-{width}.png")
