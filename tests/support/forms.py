"""The form tokens a browser sends back with the pages' forms."""

from __future__ import annotations

import re
from typing import Any


def form_token(client: Any, path: str = "/chat") -> str:
    """The hidden `form_token` of the form on a page, as a browser that loaded it would send it."""
    found = re.search(r'name="form_token" value="([\w-]+)"', client.get(path).text)
    assert found, f"no form_token on {path}"
    return found.group(1)


def insights_form_token(browser: Any) -> str:
    """The form token of the /insights page, as the signed-in admin's browser holds it."""
    found = re.search(r'name="form_token" value="([\w-]+)"', browser.get("/insights").text)
    assert found
    return found.group(1)
