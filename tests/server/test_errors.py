"""The one handler's statuses: by exception class, through the class hierarchy; the server's errors apart from the library's."""

from __future__ import annotations

import pytest

from kb.errors import EntryNotFound, KBError, QueryError, SettingsError
from server.channels.slack.payload import BadSlackPayload
from server.channels.slack.signature import BadSlackSignature
from server.errors import STATUS, describe, status_of
from server.exceptions import ServerError


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
