"""What the JSON API's tests share: the fields of a hit and of its source, two questions, an error's body."""

from __future__ import annotations

from typing import Any

HIT_KEYS = {
    "id",
    "question",
    "answer",
    "answer_html",
    "score",
    "source",
    "url",
    "permalink",
    "section",
    "tags",
    "lang",
    "languages",
    "note",
    "translated_by",
    "original_url",
    "reviewed",
    "matched",
    "file",
}


SOURCE_KEYS = {"name", "title", "titles", "url", "framework", "version"}


RESUME_ZH = "slime 如何续训？"


RESUME_EN = "how do I resume training from a checkpoint in slime"


def error_body(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"ok", "error", "status"}
    assert body["ok"] is False and body["status"] == status
    return body["error"]
