"""`/docs`, `/redoc` and the OpenAPI schema: assets from this server, a summary for every route."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient


@pytest.mark.parametrize(
    ("path", "assets"), [("/docs", ["swagger-ui-bundle.js", "swagger-ui.css"]), ("/redoc", ["redoc.standalone.js"])]
)
def test_the_api_docs_load_their_assets_from_this_server(client: TestClient, path: str, assets: list[str]) -> None:
    page = client.get(path)
    assert page.status_code == 200 and "cdn" not in page.text and "https://" not in page.text
    policy = page.headers["content-security-policy"]
    assert re.search(r"script-src 'self'( 'sha256-[\w+/=]+')*;", policy) and "https:" not in policy
    for name in assets:
        assert f'"/static/api-docs/{name}"' in page.text
        asset = client.get(f"/static/api-docs/{name}")
        assert asset.status_code == 200 and len(asset.content) > 100_000


def test_openapi_documents_every_route_with_a_summary(client: TestClient) -> None:
    assert client.get("/docs").status_code == 200
    spec = client.get("/openapi.json").json()
    for path, method in [
        ("/api/search", "get"),
        ("/api/chat", "post"),
        ("/api/entries/{entry_id}", "get"),
        ("/healthz", "get"),
    ]:
        operation = spec["paths"][path][method]
        assert operation["summary"] and not operation["summary"].startswith(method.title())
    assert "text/event-stream" in spec["paths"]["/api/chat"]["post"]["responses"]["200"]["content"]
    assert not any(p.startswith(("/entries", "/search", "/chat", "/lang")) for p in spec["paths"])
