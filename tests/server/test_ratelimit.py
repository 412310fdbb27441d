"""Rate limiting per client: a burst of KB_RATE_LIMIT requests, then 429 with Retry-After; some paths exempt.

The app runs with `2/second`: two immediate requests pass, the third gets 429. Nothing
here depends on timing beyond that and one wait of just over a second for the bucket to
refill. The token buckets themselves are tested with a clock the test moves.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from kb.errors import SettingsError
from kb.settings import Settings
from kbcli.serve import uvicorn_options
from server import create_app
from server.protocol import HeadDeadline
from server.ratelimit import TokenBuckets
from server.settings import ServerSettings
from tests.support.clock import Clock
from tests.support.forms import form_token
from tests.support.slack import SECRET, command_body, slack_headers


@pytest.fixture(scope="module")
def limited(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings.with_(rate_limit="2/second", slack_signing_secret=SECRET))) as client:
        yield client


def other_client(limited: TestClient, address: str) -> TestClient:
    """A second client, from another address, on the same running app."""
    return TestClient(limited.app, client=(address, 40000))


def exhaust(client: TestClient, path: str = "/api/widget-config") -> None:
    """Use up the bucket: 429 comes within a few requests (two tokens, plus what refilled meanwhile)."""
    for _ in range(10):
        if client.get(path).status_code == 429:
            return
    raise AssertionError("never limited")


def test_the_third_immediate_request_gets_429_with_retry_after(limited: TestClient) -> None:
    client = other_client(limited, "10.0.0.1")
    statuses = [client.get("/api/widget-config").status_code for _ in range(3)]
    assert statuses[:2] == [200, 200]
    assert statuses[2] == 429
    response = client.get("/api/search", params={"q": "resume training"})
    assert response.status_code == 429
    assert int(response.headers["retry-after"]) >= 1
    assert response.json() == {
        "ok": False,
        "status": 429,
        "error": f"too many requests from this client: the limit is 2/second (KB_RATE_LIMIT); "
        f"try again in {response.headers['retry-after']} s",
    }


def test_a_page_gets_the_error_page(limited: TestClient) -> None:
    client = other_client(limited, "10.0.0.2")
    exhaust(client)
    response = client.get("/search", params={"q": "resume"}, headers={"Accept-Language": "en"})
    assert response.status_code == 429
    assert response.headers["content-type"].startswith("text/html")
    assert "KB_RATE_LIMIT" in response.text and int(response.headers["retry-after"]) >= 1
    assert "script-src 'self'" in response.headers["content-security-policy"]


def test_each_client_has_its_own_bucket(limited: TestClient) -> None:
    first, second = other_client(limited, "10.0.0.3"), other_client(limited, "10.0.0.4")
    exhaust(first)
    assert second.get("/api/widget-config").status_code == 200


@pytest.mark.slow
def test_the_bucket_refills(limited: TestClient) -> None:
    client = other_client(limited, "10.0.0.5")
    exhaust(client)
    time.sleep(1.1)
    assert client.get("/api/widget-config").status_code == 200


def test_health_static_files_widget_and_slack_are_not_counted(settings: Settings) -> None:
    app = create_app(settings.with_(rate_limit="1/hour", slack_signing_secret=SECRET))
    body = command_body("how do I resume training in slime?")
    with TestClient(app) as client:
        exhaust(client)
        assert client.get("/healthz").status_code == 200
        assert client.get("/static/app.css").status_code == 200
        assert client.get("/widget.js").status_code == 200
        assert client.post("/slack/command", content=body, headers=slack_headers(body)).status_code == 200
        assert client.get("/api/widget-config").status_code == 429, "still limited where it counts"


def test_every_path_the_settings_page_lists_as_exempt_is_not_counted(settings: Settings) -> None:
    """docs/settings.md's list (`rate_exempt`): a request there past the limit gets its own answer, never 429."""
    from server.error_handler import rate_exempt

    with TestClient(create_app(settings.with_(rate_limit="1/hour"))) as client:
        exhaust(client)
        for path in rate_exempt():
            for _ in range(3):
                response = client.get(path + "x" if path.endswith("/") else path)
                assert response.status_code != 429, path
        assert client.get("/api/widget-config").status_code == 429, "still limited where it counts"


@pytest.mark.slow
def test_429_carries_cors_headers_so_the_widget_can_read_it(settings: Settings) -> None:
    origin = "https://docs.example.com"
    app = create_app(settings.with_(rate_limit="1/minute", allowed_origins=origin))
    with TestClient(app) as client:
        client.get("/api/widget-config", headers={"Origin": origin})
        response = client.get("/api/widget-config", headers={"Origin": origin})
    assert response.status_code == 429
    assert response.headers["access-control-allow-origin"] == origin
    assert int(response.headers["retry-after"]) == 60


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_bucket(
    settings: Settings, serve: Callable[..., Any]
) -> None:
    """A real uvicorn, as `kb serve` runs it with KB_TRUSTED_PROXIES naming the proxy (here this machine)."""
    settings = settings.with_(rate_limit="1/hour", trusted_proxies="127.0.0.1")
    server = serve(create_app(settings), **uvicorn_options(settings))
    with httpx.Client(base_url=server.url) as http:

        def get(address: str) -> int:
            return http.get("/api/widget-config", headers={"X-Forwarded-For": address}).status_code

        assert [get("203.0.113.7"), get("203.0.113.7")] == [200, 429]
        assert get("198.51.100.23") == 200


def test_x_forwarded_for_from_a_peer_not_trusted_is_ignored(settings: Settings, serve: Callable[..., Any]) -> None:
    """By default no proxy is trusted, this machine included: a client cannot pick its own bucket."""
    settings = settings.with_(rate_limit="1/hour")
    server = serve(create_app(settings), **uvicorn_options(settings))
    with httpx.Client(base_url=server.url) as http:
        statuses = [
            http.get("/api/widget-config", headers={"X-Forwarded-For": address}).status_code
            for address in ("203.0.113.7", "198.51.100.23", "192.0.2.1")
        ]
    assert statuses == [200, 429, 429]


def test_sign_in_attempts_are_limited_to_5_a_minute_whatever_x_forwarded_for_says(
    settings: Settings, serve: Callable[..., Any]
) -> None:
    settings = settings.with_(admin_token="correct-horse-battery-staple")
    server = serve(create_app(settings), **uvicorn_options(settings))
    with httpx.Client(base_url=server.url) as http:
        form = form_token(http, "/insights")

        def sign_in(token: str, n: int) -> httpx.Response:
            data = {"token": token, "form_token": form}
            return http.post("/insights/sign-in", data=data, headers={"X-Forwarded-For": f"203.0.113.{n}"})

        assert [sign_in(f"guess-{n}", n).status_code for n in range(5)] == [401] * 5
        sixth = sign_in("correct-horse-battery-staple", 5)  # even the right token: the limit comes first
    assert sixth.status_code == 429 and 1 <= int(sixth.headers["retry-after"]) <= 12
    assert "too many sign-in attempts from this client: the limit is 5 a minute" in sixth.text


@pytest.mark.parametrize(
    ("value", "proxies"), [("", ()), ("10.0.0.5", ("10.0.0.5",)), (" 10.0.0.0/24 , ::1 ", ("10.0.0.0/24", "::1"))]
)
def test_trusted_proxies_are_read(value: str, proxies: tuple[str, ...]) -> None:
    settings = ServerSettings.from_env({"KB_TRUSTED_PROXIES": value})
    assert settings.proxies == proxies
    assert uvicorn_options(settings) == {
        "proxy_headers": bool(proxies),
        "forwarded_allow_ips": list(proxies) or None,
        "http": HeadDeadline,  # the protocol that closes a connection stalled before its request head
    }


@pytest.mark.parametrize("value", ["localhost", "10.0.0.5,*", "10.0.0.300"])
def test_a_bad_trusted_proxy_is_named_at_start_up(value: str) -> None:
    with pytest.raises(SettingsError, match=r"setting KB_TRUSTED_PROXIES=.*: expected IP addresses or networks"):
        ServerSettings.from_env({"KB_TRUSTED_PROXIES": value})


def test_off_means_no_limit(client: TestClient) -> None:
    assert client.app.state.settings.rate is None
    assert all(client.get("/api/widget-config").status_code == 200 for _ in range(20))


# --- the buckets ---------------------------------------------------------------------------


def test_a_bucket_allows_a_burst_then_one_request_per_interval() -> None:
    clock = Clock()
    buckets = TokenBuckets(3, 60.0, clock)  # 3/minute
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a") == pytest.approx(20.0)
    clock.now += 19.0
    assert buckets.take("a") == pytest.approx(1.0)
    clock.now += 1.0
    assert buckets.take("a") == 0.0


def test_idle_buckets_are_dropped() -> None:
    clock = Clock()
    buckets = TokenBuckets(10, 1.0, clock)
    for i in range(1000):
        buckets.take(f"client-{i}")
    assert len(buckets) == 1000
    clock.now += 1.0  # long enough for every bucket to be full again
    buckets.take("someone")
    assert len(buckets) == 1


def test_the_number_of_buckets_is_bounded() -> None:
    buckets = TokenBuckets(10, 3600.0, Clock(), max_clients=100)
    for i in range(1000):
        buckets.take(f"client-{i}")
    assert len(buckets) == 100


@pytest.mark.parametrize("value", ["600", "0/minute", "ten/second", "5/day", "5 per minute", ""])
def test_a_bad_rate_limit_is_named_at_start_up(value: str) -> None:
    with pytest.raises(SettingsError) as info:
        ServerSettings.from_env({"KB_RATE_LIMIT": value})
    assert str(info.value) == (
        f"setting KB_RATE_LIMIT={value!r}: expected N/second, N/minute or N/hour with N above 0, or off"
    )


@pytest.mark.parametrize(
    ("value", "rate"),
    [("2/second", (2, 1.0)), ("600/minute", (600, 60.0)), ("1000/HOUR", (1000, 3600.0)), ("off", None)],
)
def test_rate_limits_are_read(value: str, rate: tuple[int, float] | None) -> None:
    assert ServerSettings.from_env({"KB_RATE_LIMIT": value}).rate == rate
