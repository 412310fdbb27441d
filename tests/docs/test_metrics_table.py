"""docs/deployment.md's metrics table names every metric `/metrics` gives, and none it does not."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from tests.support.paths import ROOT

DOC = ROOT / "docs" / "deployment.md"


def documented() -> set[str]:
    """The names in the first column of the table under "## Metrics", a counter without `_total`."""
    section = DOC.read_text(encoding="utf-8").split("## Metrics", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ")[0] for line in section.splitlines() if line.startswith("| `kb_")]
    return {re.sub(r"_total$", "", name) for row in rows for name in re.findall(r"`(kb_\w+)", row)}


def test_the_metrics_table_names_every_metric_scraped(client: TestClient) -> None:
    """The shipped build carries a query adapter, so its two gauges are among those scraped."""
    scraped = {f.name for f in text_string_to_metric_families(client.get("/metrics").text) if f.name.startswith("kb_")}
    assert "kb_query_adapter_questions" in scraped
    assert sorted(scraped - documented()) == []
    source = "".join(path.read_text(encoding="utf-8") for path in (ROOT / "server").glob("*.py"))
    assert sorted(name for name in documented() if f'"{name}' not in source) == []
