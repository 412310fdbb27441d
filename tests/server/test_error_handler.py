"""The one handler's statuses: by exception class, through the class hierarchy; the server's errors apart from the
library's; a platform's refusal answered and logged within its channel's budget."""

from __future__ import annotations

import logging

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from kb.errors import EntryNotFound, KBError, QueryError, SettingsError
from server.bots.delivery_ids import DeliveryIds, Guard, keep_guard
from server.channels.slack.payload import BadSlackPayload
from server.channels.slack.signature import BadSlackSignature
from server.error_handler import STATUS, describe, install_error_handler, status_of
from server.exceptions import ServerError
from server.ratelimit import LogBudget


class _NarrowQuery(QueryError):
    """A subclass the table does not list: it takes its parent's status."""


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (EntryNotFound("nope"), 404),
        (QueryError("q", "is empty"), 422),
        (_NarrowQuery("q", "is empty"), 422),
        (SettingsError("KB_TOP_K", "0", "a number above 0"), 500),
        (BadSlackSignature("the X-Slack-Signature header is missing"), 401),
        (BadSlackPayload("payload: not JSON"), 400),
        (KBError("an error the table does not name"), 500),
        (ServerError("an error the table does not name"), 500),
    ],
)
def test_the_status_comes_from_the_nearest_class_listed(error: Exception, status: int) -> None:
    assert status_of(error) == status
    assert describe(error) == (status, str(error))


def test_the_servers_errors_are_not_the_librarys() -> None:
    for error in (BadSlackSignature, BadSlackPayload):
        assert issubclass(error, ServerError) and not issubclass(error, KBError)
    assert all(issubclass(cls, (KBError, ServerError)) for cls in STATUS)


def test_an_unknown_exception_is_an_internal_error_without_its_text() -> None:
    assert describe(RuntimeError("secret detail")) == (500, "internal error")


def test_a_platform_refusal_is_answered_with_its_status_and_logged_within_its_channels_budget(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No route catches it: the one handler answers with the refusal's status and logs one line within the budget
    the channel keeps (here one line a minute), however many such requests come."""
    app = FastAPI()
    install_error_handler(app)
    keep_guard(app, "slack", Guard(DeliveryIds(60), refused=LogBudget(lines=1)))

    @app.post("/slack/command")
    async def command() -> None:
        raise BadSlackSignature("the X-Slack-Signature header is missing")

    with caplog.at_level(logging.WARNING, logger="kb.server"):
        responses = [TestClient(app).post("/slack/command") for _ in range(3)]
    said = "not a valid Slack request: the X-Slack-Signature header is missing"
    assert [(r.status_code, r.json()) for r in responses] == [(401, {"ok": False, "error": said, "status": 401})] * 3
    assert [r.getMessage() for r in caplog.records] == [
        "Slack request to /slack/command from testclient refused: the X-Slack-Signature header is missing"
    ]
