"""The widget over HTTP: the script and its caching, its config, the demo page, and CORS by origin."""

from __future__ import annotations

import gzip
import html
import importlib
import logging
import re
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from kb.settings import Settings
from server import create_app
from server.middleware import MAX_REMEMBERED, APICors
from server.routes.widget import SCRIPT_FILE, script_source
from tests.support.paths import ROOT

ALLOWED = "https://docs.example.com"
OTHER = "https://evil.example.net"
ON_EVERY_RESPONSE = {"x-kb-index", "x-content-type-options", "referrer-policy"}  # not CORS's own
PREFLIGHT_HEADERS = {  # Starlette's CORSMiddleware answers a preflight so
    "vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers, Access-Control-Request-Private-Network",
    "access-control-allow-origin": ALLOWED,
    "access-control-allow-methods": "GET, POST",
    "access-control-allow-headers": "Accept, Accept-Language, Content-Language, Content-Type",
    "access-control-max-age": "600",
    "content-type": "text/plain; charset=utf-8",
    "content-length": "2",
}
GZIP_BUDGET = 10_000  # bytes: the widget stays small


@pytest.fixture(scope="module")
def cors(settings: Settings) -> Iterator[TestClient]:
    """The app with one allowed origin (plus a trailing slash and spaces, as people write them)."""
    with TestClient(create_app(settings.with_(allowed_origins=f" {ALLOWED}/ , http://localhost:3000"))) as client:
        yield client


def preflight(client: TestClient, path: str, origin: str, method: str = "POST", headers: str = "content-type") -> Any:
    return client.options(
        path,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": headers,
        },
    )


@pytest.mark.parametrize("module", ["server.middleware", "server.routes.widget"])
def test_exported_members_exist(module: str) -> None:
    loaded = importlib.import_module(module)
    assert loaded.__all__ and all(hasattr(loaded, name) for name in loaded.__all__)


# --- the script ------------------------------------------------------------------------


def test_widget_script_is_served_as_javascript_with_caching_headers(client: TestClient) -> None:
    response = client.get("/widget.js", headers={"Accept-Encoding": "identity"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=3600"
    assert response.headers["etag"].startswith('W/"')
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cross-origin-resource-policy"] == "cross-origin"
    assert "Accept-Encoding" in response.headers["vary"]
    assert "content-encoding" not in response.headers
    assert response.content == script_source()
    assert SCRIPT_FILE.read_bytes() in response.content and b"var KBReply = " in response.content


def test_widget_script_is_gzipped_when_asked_and_small(client: TestClient) -> None:
    response = client.get("/widget.js", headers={"Accept-Encoding": "gzip, deflate"})
    assert response.headers["content-encoding"] == "gzip"
    assert int(response.headers["content-length"]) < GZIP_BUDGET
    assert response.content == script_source()  # httpx has decompressed it
    assert len(gzip.compress(script_source(), 9)) < GZIP_BUDGET


def test_widget_script_revalidates_with_its_etag(client: TestClient) -> None:
    etag = client.get("/widget.js").headers["etag"]
    again = client.get("/widget.js", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag and again.headers["cache-control"] == "public, max-age=3600"
    assert client.get("/widget.js", headers={"If-None-Match": 'W/"other"'}).status_code == 200


def test_widget_script_defines_one_global_and_uses_no_cdn() -> None:
    source = script_source().decode("utf-8")
    assert source.count("window.KBWidget =") == 1
    assert "window." not in source.replace("window.KBWidget", "").replace("window.CSS", "").replace(
        "window.CSSStyleSheet", ""
    )
    assert "//cdn" not in source and "import " not in source
    assert ".innerHTML = html" in source and source.count("innerHTML") == 1, "only the server's rendered answer is HTML"


def test_widget_votes_use_the_main_pages_icons_not_emoji() -> None:
    """Emoji need an emoji font (without one they are boxes); the main pages draw SVG thumbs."""
    source = SCRIPT_FILE.read_text(encoding="utf-8")
    votes = (ROOT / "templates" / "_votes.html").read_text(encoding="utf-8")
    thumbs = re.findall(r'<path d="([^"]+)"', votes)
    assert len(thumbs) == 2 and all(f'"{d}"' in source for d in thumbs)
    assert not re.search("[\U0001f300-\U0001faff\u2600-\u27bf]", source), "no emoji left in the widget"


def test_widget_config_offers_feedback_while_votes_can_be_recorded(
    client: TestClient, settings: Settings, tmp_path: Path
) -> None:
    response = client.get("/api/widget-config")
    expected = {"feedback": True, "max_message_chars": settings.max_query_chars, "max_paste_chars": 50_000}
    assert response.json() == expected
    assert response.headers["cache-control"] == "no-cache"

    (tmp_path / "index").symlink_to(settings.index_dir)
    (tmp_path / "insights.sqlite").mkdir()  # not a database: nothing can be recorded
    with TestClient(create_app(settings.with_(data_dir=tmp_path))) as without_store:
        assert without_store.get("/api/widget-config").json()["feedback"] is False


def test_demo_page_embeds_the_widget_and_shows_the_line(client: TestClient) -> None:
    response = client.get("/widget-demo", headers={"Accept-Language": "en"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    page = response.text
    shown = re.search(r'<script src="/widget\.js" ([^>]*) defer></script>', page)
    code = html.unescape(re.sub(r"<[^>]+>", "", page.split("<pre", 1)[1].split("</pre>", 1)[0]))
    offered = re.search(r'<script src="http://testserver/widget\.js" ([^>]*) defer></script>', code)
    assert shown and offered, "the widget on the page, and the line to copy"
    assert shown[1] == offered[1] == 'data-lang="auto" data-title="Training FAQ"'
    assert "KB_ALLOWED_ORIGINS" in page
    zh = client.get("/widget-demo", headers={"Accept-Language": "zh-CN"}).text
    assert "嵌入式问答小部件" in zh


# --- CORS ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/chat", "/api/search", "/api/widget-config"])
def test_preflight_from_an_allowed_origin(cors: TestClient, path: str) -> None:
    response = preflight(cors, path, ALLOWED)
    assert response.status_code == 200
    own = {name: value for name, value in response.headers.items() if name not in ON_EVERY_RESPONSE}
    assert own == PREFLIGHT_HEADERS


@pytest.mark.parametrize("path", ["/api/chat", "/api/search"])
def test_preflight_from_another_origin_is_refused_without_cors_headers(
    cors: TestClient, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    response = preflight(cors, path, OTHER)
    assert response.status_code == 403
    assert not any(name.startswith("access-control-") for name in response.headers)
    assert response.json() == {"ok": False, "status": 403, "error": f"origin '{OTHER}' is not in KB_ALLOWED_ORIGINS"}


def test_a_refused_origin_is_logged_once(settings: Settings, caplog: pytest.LogCaptureFixture) -> None:
    with TestClient(create_app(settings.with_(allowed_origins=ALLOWED))) as client:
        for _ in range(3):
            preflight(client, "/api/chat", OTHER)
    refused = [m for m in caplog.messages if "cross-origin API call refused" in m]
    assert refused == [
        f"cross-origin API call refused: origin '{OTHER}' is not in KB_ALLOWED_ORIGINS (add it to KB_ALLOWED_ORIGINS to allow it)"
    ]


@pytest.mark.slow
def test_preflights_from_5000_origins_keep_the_log_and_the_memory_bounded(
    settings: Settings, serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(settings.with_(allowed_origins=ALLOWED))
    url = serve(app).url
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="kb.server"), httpx.Client(base_url=url) as http:
        for n in range(5000):
            assert preflight(http, "/api/chat", f"https://site-{n}.example.net").status_code == 403
    seconds = time.monotonic() - started
    refused = [m for m in caplog.messages if "cross-origin API call refused" in m]
    assert 60 <= len(refused) <= 60 + seconds + 1, (len(refused), seconds)  # a burst of 60, then one a second
    assert "more like this not logged" in refused[-1]
    cors = app.middleware_stack
    while not isinstance(cors, APICors):
        cors = cors.app
    assert len(cors.refused) == MAX_REMEMBERED
    assert cors.refused.get("https://site-0.example.net") is None and cors.refused.get("https://site-4999.example.net")


@pytest.mark.parametrize(
    ("method", "headers", "error"),
    [
        ("DELETE", "content-type", "method DELETE is not allowed; use GET or POST"),
        (
            "POST",
            "content-type, x-api-key",
            "request header 'x-api-key' is not allowed; allowed: accept, accept-language, content-language, content-type",
        ),
    ],
)
def test_preflight_for_a_method_or_header_the_api_does_not_take(
    cors: TestClient, method: str, headers: str, error: str
) -> None:
    response = preflight(cors, "/api/chat", ALLOWED, method, headers)
    assert response.status_code == 403 and response.json()["error"] == error
    assert "access-control-allow-origin" not in response.headers


def test_actual_requests_get_the_origin_back_only_when_allowed(cors: TestClient) -> None:
    allowed = cors.get("/api/search", params={"q": "OOM"}, headers={"Origin": ALLOWED})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == ALLOWED and allowed.headers["vary"] == "Origin"
    other = cors.get("/api/search", params={"q": "OOM"}, headers={"Origin": OTHER})
    assert "access-control-allow-origin" not in other.headers and other.headers["vary"] == "Origin"
    local = cors.get("/api/widget-config", headers={"Origin": "http://localhost:3000"})
    assert local.headers["access-control-allow-origin"] == "http://localhost:3000"
    none = cors.get("/api/widget-config")
    assert "access-control-allow-origin" not in none.headers and none.headers["vary"] == "Origin"


def test_chat_json_and_stream_carry_the_header_for_an_allowed_origin(cors: TestClient) -> None:
    body = {"message": "slime 如何续训？"}
    answer = cors.post("/api/chat", json=body, headers={"Origin": ALLOWED})
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == ALLOWED
    with cors.stream(
        "POST", "/api/chat", json=body, headers={"Origin": ALLOWED, "Accept": "text/event-stream"}
    ) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert stream.headers["access-control-allow-origin"] == ALLOWED
        assert "event: done" in stream.read().decode()


def test_errors_carry_the_header_too_so_the_widget_can_read_them(cors: TestClient) -> None:
    response = cors.post("/api/chat", json={"message": "  "}, headers={"Origin": ALLOWED})
    assert response.status_code == 422 and response.headers["access-control-allow-origin"] == ALLOWED
    assert response.json()["error"] == "message: the message is empty"


def test_pages_and_slack_are_not_opened_to_other_origins(cors: TestClient) -> None:
    for path in ("/", "/widget-demo", "/healthz"):
        response = cors.get(path, headers={"Origin": ALLOWED})
        assert "access-control-allow-origin" not in response.headers, path
    slack = preflight(cors, "/slack/command", ALLOWED)
    assert slack.status_code == 405 and "access-control-allow-origin" not in slack.headers


def test_no_origins_means_no_cross_origin_access(client: TestClient) -> None:
    assert preflight(client, "/api/chat", ALLOWED).status_code == 403
    assert "access-control-allow-origin" not in client.get("/api/widget-config", headers={"Origin": ALLOWED}).headers


def test_a_star_allows_every_origin(settings: Settings) -> None:
    with TestClient(create_app(settings.with_(allowed_origins="*"))) as client:
        response = preflight(client, "/api/chat", OTHER)
        assert response.status_code == 200 and response.headers["access-control-allow-origin"] == "*"
        answer = client.get("/api/widget-config", headers={"Origin": OTHER})
        assert answer.headers["access-control-allow-origin"] == "*" and answer.headers["vary"] == "Origin"
