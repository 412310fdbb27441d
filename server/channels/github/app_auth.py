"""A GitHub App's installation tokens: a JWT signed with the App's private key (RS256, issued by the App id, valid
for nine minutes) asks `POST /app/installations/{id}/access_tokens` for a token of that installation, which is kept
until a minute before it expires (an hour, GitHub says) and asked for again after. The same JWT asks `GET /app`
for the App's slug: its comments are written by `<slug>[bot]`."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import httpx
import jwt

from trackers.github.responses import GitHubUnavailable, json_of, object_of, text_at

from .client import DEADLINE

__all__ = ["AppTokens", "read_private_key"]

MARGIN = 60.0  # seconds before its expiry a token is replaced


def read_private_key(raw: str) -> str:
    """KB_GITHUB_PRIVATE_KEY: the PEM text itself, or the path of the `.pem` file GitHub gave."""
    if raw.lstrip().startswith("-----BEGIN"):
        return raw
    return Path(raw).expanduser().read_text(encoding="utf-8")


class AppTokens:
    """The installation tokens of one App, each kept until shortly before it expires."""

    def __init__(
        self, client: httpx.AsyncClient, app_id: str, private_key: str, clock: Callable[[], float] = time.time
    ) -> None:
        self.client = client
        self.app_id = app_id
        self.private_key = private_key
        self.clock = clock
        self._tokens: dict[int, tuple[str, float]] = {}  # installation -> (token, expires at)
        self._slug = ""
        self._lock = asyncio.Lock()

    async def token(self, installation: int) -> str:
        """A token of `installation`, asked for only when the one kept is missing or about to expire."""
        async with self._lock:
            kept = self._tokens.get(installation)
            if kept is not None and kept[1] - MARGIN > self.clock():
                return kept[0]
            answer = await self._ask("POST", f"/app/installations/{installation}/access_tokens", 201)
            token, expires_at = text_at(answer, "token"), text_at(answer, "expires_at")
            try:
                expires = datetime.fromisoformat(expires_at.replace("Z", "+00:00")).timestamp()
            except ValueError:
                raise GitHubUnavailable(
                    f"POST /app/installations/.../access_tokens: the answer's expires_at is not a time: {expires_at[:40]!r}"
                ) from None
            if not token:
                raise GitHubUnavailable("POST /app/installations/.../access_tokens: the answer has no token")
            self._tokens[installation] = (token, expires)
            return token

    async def login(self) -> str:
        """The App's login, `<slug>[bot]`, which writes its comments (asked once, then kept)."""
        if not self._slug:
            slug = text_at(await self._ask("GET", "/app", 200), "slug")
            if not slug:
                raise GitHubUnavailable("GET /app: the answer names no slug")
            self._slug = slug
        return f"{self._slug}[bot]"

    async def _ask(self, method: str, path: str, status: int) -> dict[str, Any]:
        now = int(self.clock())
        signed = jwt.encode(
            {"iat": now - 60, "exp": now + 540, "iss": self.app_id}, self.private_key, algorithm="RS256"
        )
        try:
            async with asyncio.timeout(DEADLINE):
                response = await self.client.request(method, path, headers={"Authorization": f"Bearer {signed}"})
        except TimeoutError:
            raise GitHubUnavailable(f"{method} {path}: no whole answer within {DEADLINE:g} s") from None
        except httpx.HTTPError as exc:
            raise GitHubUnavailable(f"{method} {path}: {type(exc).__name__}: {exc}") from None
        if response.status_code != status:
            said = response.text[:200].replace("\n", " ")
            raise GitHubUnavailable(f"{method} {path}: HTTP {response.status_code}: {said}")
        what = f"{method} {path}"
        return object_of(what, json_of(what, response.content, response.headers.get("content-type", "")))
