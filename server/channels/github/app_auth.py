"""A GitHub App's installation tokens: a JWT signed with the App's private key (RS256, issued by the App id, valid
for nine minutes) asks `POST /app/installations/{id}/access_tokens` for a token of that installation, which is kept
until a minute before it expires (an hour, GitHub says) and asked for again after."""

from __future__ import annotations

import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Callable

import httpx
import jwt

from .answers import GitHubUnavailable, json_of, object_of, text_at

__all__ = ["AppTokens", "read_private_key"]

MARGIN = 60.0  # seconds before its expiry a token is replaced


def read_private_key(raw: str) -> str:
    """KB_GITHUB_PRIVATE_KEY: the PEM text itself, or the path of the `.pem` file GitHub gave."""
    if raw.lstrip().startswith("-----BEGIN"):
        return raw
    return Path(raw).expanduser().read_text(encoding="utf-8")


class AppTokens:
    """The installation tokens of one App, each kept until shortly before it expires."""

    def __init__(self, client: httpx.Client, app_id: str, private_key: str, clock: Callable[[], float] = time.time):
        self.client = client
        self.app_id = app_id
        self.private_key = private_key
        self.clock = clock
        self._tokens: dict[int, tuple[str, float]] = {}  # installation -> (token, expires at)
        self._lock = threading.Lock()

    def token(self, installation: int) -> str:
        """A token of `installation`, asked for only when the one kept is missing or about to expire."""
        with self._lock:
            kept = self._tokens.get(installation)
            if kept is not None and kept[1] - MARGIN > self.clock():
                return kept[0]
            token, expires = self._ask(installation)
            self._tokens[installation] = (token, expires)
            return token

    def _ask(self, installation: int) -> tuple[str, float]:
        now = int(self.clock())
        signed = jwt.encode(
            {"iat": now - 60, "exp": now + 540, "iss": self.app_id}, self.private_key, algorithm="RS256"
        )
        path = f"/app/installations/{installation}/access_tokens"
        try:
            response = self.client.post(path, headers={"Authorization": f"Bearer {signed}"})
        except httpx.HTTPError as exc:
            raise GitHubUnavailable(f"POST {path}: {type(exc).__name__}: {exc}") from None
        if response.status_code != 201:
            raise GitHubUnavailable(f"POST {path}: HTTP {response.status_code}: {response.text[:200]}")
        answer = object_of(
            f"POST {path}", json_of(f"POST {path}", response.content, response.headers.get("content-type", ""))
        )
        token, expires_at = text_at(answer, "token"), text_at(answer, "expires_at")
        try:
            expires = datetime.fromisoformat(expires_at.replace("Z", "+00:00")).timestamp()
        except ValueError:
            raise GitHubUnavailable(
                f"POST {path}: the answer's expires_at is not a time: {expires_at[:40]!r}"
            ) from None
        if not token:
            raise GitHubUnavailable(f"POST {path}: the answer has no token")
        return token, expires
