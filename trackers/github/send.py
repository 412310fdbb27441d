"""The REST core's two callers, which only send: `send` (sync, the harvest's trackers) and `send_async` (the GitHub
bot's client), each a loop that sends what a `rest.Call` says, reads the body into its cap, and waits out a rate limit.

Both are given connections that reach the API URL only and follow no redirect (`connections`,
`async_connections`), so the token goes to no other host. The deadline holds however the server sends: the async
caller runs each try under `asyncio.timeout`; the sync one gives each read what the deadline leaves and looks at
the deadline again between the chunks of a body, so a server that drips its reply is given up at it too.
"""

from __future__ import annotations

import asyncio
import time
from typing import Awaitable, Callable

import httpx

from .rest import READ_TIMEOUT, Call, Reply, Wait, headers

__all__ = ["async_connections", "connections", "send", "send_async"]

AsyncToken = Callable[[], Awaitable[str]]


def connections(api_url: str, agent: str) -> httpx.Client:
    """Sync connections to GitHub's API at `api_url` only: no redirect followed, GitHub's media type and version."""
    return httpx.Client(
        base_url=api_url.rstrip("/"), headers=headers(agent), timeout=READ_TIMEOUT, follow_redirects=False
    )


def async_connections(api_url: str, agent: str) -> httpx.AsyncClient:
    """Async connections to GitHub's API at `api_url` only, as `connections`."""
    return httpx.AsyncClient(base_url=api_url.rstrip("/"), headers=headers(agent), timeout=10.0, follow_redirects=False)


def send(client: httpx.Client, call: Call, token: str = "", sleep: Callable[[float], None] = time.sleep) -> Reply:
    """`call` sent until it has a reply (a rate limit waited out with `sleep`); GitHubUnavailable when it has none."""
    sent = {"Authorization": f"Bearer {token}"} if token else {}
    while True:
        timeout = call.read_timeout()
        try:
            with client.stream(
                call.method, call.path, params=call.params, json=call.json, headers=sent, timeout=timeout
            ) as response:
                body = call.capped()
                for chunk in response.iter_bytes():
                    body.add(chunk)
                    call.timeout()  # past the deadline between two chunks: given up there
        except httpx.HTTPError as exc:
            raise call.failed(exc, timeout) from None
        step = call.read(response.status_code, response.headers, body.body)
        if isinstance(step, Wait):
            sleep(step.seconds)
            continue
        return step


async def send_async(
    client: httpx.AsyncClient,
    call: Call,
    token: AsyncToken,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Reply:
    """`call` sent until it has a reply, each try under what the deadline leaves (a rate limit waited out with
    `sleep`, which holds no thread); GitHubUnavailable when it has none. `token` gives the token for each try."""
    while True:
        try:
            async with asyncio.timeout(call.timeout()):
                sent = {"Authorization": f"Bearer {await token()}"}
                request = client.build_request(call.method, call.path, params=call.params, json=call.json, headers=sent)
                response = await client.send(request, stream=True)
                try:
                    body = call.capped()
                    async for chunk in response.aiter_bytes():
                        body.add(chunk)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise call.passed() from None
        except httpx.HTTPError as exc:
            raise call.failed(exc) from None
        step = call.read(response.status_code, response.headers, body.body)
        if isinstance(step, Wait):
            await sleep(step.seconds)
            continue
        return step
