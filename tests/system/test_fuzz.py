"""The whole JSON API fuzzed from its own OpenAPI schema (schemathesis): no 500, every response as documented.

Each operation gets a bounded number of generated requests, valid and invalid ones
(schemathesis's positive and negative modes), sent in-process. Each response must not be
a server error, and its status code, content type, headers and body must match what the
schema declares for that operation. The Slack routes (which need Slack's signature) and
the admin routes (which need the admin token) are left out. The app runs on the
session's index with a data directory of its own, so the votes it records stay apart.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from kb.settings import Settings
from server import create_app

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
EXAMPLES = 25  # per operation and mode: the whole run stays well under a minute on 2 cores


# The schema is the app's own; it does not depend on settings, so an app not yet started gives it.
schema = schemathesis.openapi.from_dict(create_app().openapi()).exclude(
    path_regex=r"^/(slack|feishu|dingtalk|admin|insights)(/|$)"
)


@pytest.fixture(scope="module")
def fuzzed_app(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The app the requests go to, started on its first request and stopped when the module is done."""
    data = tmp_path_factory.mktemp("kb-fuzz")
    os.symlink(Path(settings.index_dir).resolve(), data / "index")
    yield create_app(settings.with_(data_dir=data))
    asgi.shutdown_lifespans()


@pytest.mark.slow
@schema.parametrize()
@hypothesis_settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_api_answers_as_its_schema_says(case: Any, fuzzed_app: Any) -> None:
    case.call_and_validate(checks=CHECKS, app=fuzzed_app)
