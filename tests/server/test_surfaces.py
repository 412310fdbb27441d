"""The start-up lines that say whether `/mcp`, `/v1` and `/metrics` are on (server/surfaces.py)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient

from server import create_app


def started(settings: Any, caplog: pytest.LogCaptureFixture) -> dict[str, logging.LogRecord]:
    """The status line of each surface, by its first words, from a start of the app with `settings`."""
    with caplog.at_level(logging.INFO, logger="kb.server"), TestClient(create_app(settings)):
        pass
    return {
        prefix: record
        for record in caplog.records
        for prefix in ("MCP server", "OpenAI-compatible API", "Metrics", "Slack routes")
        if record.getMessage().startswith(prefix)
    }


@pytest.mark.slow
def test_a_default_start_says_each_surface_at_info_with_its_setting(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    lines = started(settings.with_(mcp_token="", api_keys="", metrics_token="", slack_signing_secret=""), caplog)
    assert {prefix: record.levelno for prefix, record in lines.items()} == {
        "MCP server": logging.INFO,
        "OpenAI-compatible API": logging.INFO,
        "Metrics": logging.INFO,
        "Slack routes": logging.INFO,
    }
    assert "KB_MCP_TOKEN is not set" in lines["MCP server"].getMessage()
    assert "set KB_API_KEYS" in lines["OpenAI-compatible API"].getMessage()
    assert "set KB_METRICS_TOKEN" in lines["Metrics"].getMessage()


@pytest.mark.slow
def test_a_start_with_the_tokens_says_who_may_use_each(settings: Any, caplog: pytest.LogCaptureFixture) -> None:
    lines = started(settings.with_(mcp_token="m-token-1", api_keys="k1,k2", metrics_token="t-1"), caplog)
    assert lines["MCP server"].getMessage() == "MCP server on: /mcp, for clients sending KB_MCP_TOKEN as a bearer token"
    assert "one of KB_API_KEYS" in lines["OpenAI-compatible API"].getMessage()
    assert "sending KB_METRICS_TOKEN" in lines["Metrics"].getMessage()


@pytest.mark.slow
def test_a_start_says_whether_insights_are_on_and_how_to_sign_in(
    settings: Any, caplog: pytest.LogCaptureFixture, tmp_path: Any
) -> None:
    from server.admin_token import kept_token, token_file

    data = tmp_path / "data"
    data.mkdir()
    (data / "index").symlink_to(settings.index_dir)

    def insights_line(s: Any) -> str:
        with caplog.at_level(logging.INFO, logger="kb.server"), TestClient(create_app(s)):
            pass
        lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Insights")]
        caplog.clear()
        assert len(lines) == 1, lines
        return lines[0]

    assert insights_line(settings.with_(data_dir=data, admin_token="")).startswith(
        "Insights off: /insights and /admin answer 404, KB_ADMIN_TOKEN being empty"
    )
    assert insights_line(settings.with_(data_dir=data, admin_token="chosen-token-1")) == (
        "Insights on: /insights, sign in with the admin token KB_ADMIN_TOKEN"
    )
    token = kept_token(data)
    line = insights_line(settings.with_(data_dir=data, admin_token=token))
    assert line == (
        f"Insights on: /insights, sign in with the admin token kept in {token_file(data)} (`kb admin-token` prints it)"
    )
    assert token not in line
