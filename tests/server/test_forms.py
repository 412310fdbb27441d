"""The forms the pages post (the chat, insights sign-in and sign-out), against a real server: each is
taken only with the token of a page this site served, and never from another site's page."""

from __future__ import annotations

from typing import Any, Callable

import httpx
import pytest

from kb.settings import Settings
from server import create_app
from tests.support.forms import form_token

TOKEN = "correct-horse-battery-staple"
EXPIRED = "This form has expired or was sent from another site. Reload the page and try again."
FORMS = [  # (the page with the form, where it posts, its fields, what a good post gets)
    ("/chat", "/chat", {"message": "how do I resume training in slime?", "history": "[]"}, 200),
    ("/insights", "/insights/sign-in", {"token": TOKEN, "since": "7d"}, 303),
    ("/insights", "/insights/sign-out", {}, 303),
]


@pytest.fixture
def url(settings: Settings, serve: Callable[..., Any]) -> str:
    """A server of the test's own, so that no test uses up another's sign-in attempts (5 a minute)."""
    return serve(create_app(settings.with_(admin_token=TOKEN))).url


@pytest.mark.parametrize(("page", "action", "fields", "status"), FORMS)
def test_a_form_is_taken_with_the_token_of_the_page_it_came_from(
    url: str, page: str, action: str, fields: dict[str, str], status: int
) -> None:
    with httpx.Client(base_url=url, headers={"Accept-Language": "en"}) as browser:
        token = form_token(browser, page)
        cookie = browser.cookies["kb_form"]
        assert cookie == token
        response = browser.post(action, data={**fields, "form_token": token}, headers={"Origin": url})
    assert response.status_code == status


@pytest.mark.slow
@pytest.mark.parametrize(("page", "action", "fields", "status"), FORMS)
@pytest.mark.parametrize("attack", ["no token", "another browser's token", "another site's page", "origin null"])
def test_a_form_posted_from_elsewhere_is_refused(
    url: str, page: str, action: str, fields: dict[str, str], status: int, attack: str
) -> None:
    with httpx.Client(base_url=url) as other:
        stolen = form_token(other, page)  # a token, but another browser's
    with httpx.Client(base_url=url, headers={"Accept-Language": "en"}) as browser:
        token = form_token(browser, page)
        data, headers = {**fields, "form_token": token}, {"Origin": url}
        if attack == "no token":
            data.pop("form_token")
        elif attack == "another browser's token":
            data["form_token"] = stolen
        elif attack == "another site's page":
            headers["Origin"] = "https://evil.example"
        else:
            headers["Origin"] = "null"
        response = browser.post(action, data=data, headers=headers)
        assert response.status_code == 403 and EXPIRED in response.text
        assert "kb_admin" not in browser.cookies


def test_the_refusal_is_in_the_readers_language(url: str) -> None:
    response = httpx.post(f"{url}/chat", data={"message": "如何续训"}, headers={"Accept-Language": "zh-CN"})
    assert response.status_code == 403 and "这个表单已过期，或是从别的网站发来的。请刷新页面后再试。" in response.text
