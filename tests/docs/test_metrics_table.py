"""docs/deployment.md's metrics table against a real scrape of `/metrics` (an app of the session's index, after a
sync and a question): every metric scraped is in the table with the kind, the help and the labels the scrape gives
it, and the table names none the scrape does not but the judge's, which only an app with a judge exports."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from kb.syncs import LastSync, write_last
from server.app import create_app
from tests.support.paths import ROOT
from tests.support.servers import own_data

DOC = ROOT / "docs" / "deployment.md"
ROW = re.compile(r"^\| `(kb_\w+?)(_total)?(?:\{([\w, ]*)\})?` \| (\w+) \| (.*) \|$")
# A label the client adds to a histogram's buckets, not one the metric declares.
BUCKET_LABELS = {"le"}
# Exported only by an app with a second-stage judge (KB_RERANK, KB_RERANK_MODEL), which needs a calibration fitted
# with it: the scrape here has none, and their rows say so.
JUDGE = {"kb_judge_failures", "kb_judge_questions"}


@dataclass(frozen=True)
class Row:
    kind: str
    labels: frozenset[str]
    help: str


def documented() -> dict[str, Row]:
    """The rows of the table under "## Metrics", by metric name (a counter's without `_total`, as a scrape's family
    names it)."""
    section = DOC.read_text(encoding="utf-8").split("## Metrics", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        found = ROW.match(line)
        if found:
            name, total, labels, kind, help = found.groups()
            assert (kind == "counter") == bool(total), f"{line}: a counter, and only a counter, is scraped with _total"
            named = frozenset(label.strip() for label in (labels or "").split(",") if label.strip())
            rows[name] = Row(kind, named, help.replace("\\|", "|"))
    return rows


def scraped(client: TestClient) -> dict[str, tuple[str, set[str] | None, str]]:
    """Each kb_ family of a scrape: its kind, the labels its samples carry (None when it has no sample yet) and its
    help, after a question asked through the API, so that the labelled series a question feeds have samples."""
    assert client.get("/api/search", params={"q": "how do I resume training in slime?"}).status_code == 200
    response = client.get("/metrics")
    assert response.status_code == 200
    found = {}
    for family in text_string_to_metric_families(response.text):
        if family.name.startswith("kb_"):
            labels = {name for sample in family.samples for name in sample.labels} - BUCKET_LABELS
            found[family.name] = (family.type, labels if family.samples else None, family.documentation)
    return found


def test_the_metrics_table_says_what_a_scrape_of_metrics_gives(
    settings: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The shipped build carries a query adapter, and the data directory has had a sync, so their gauges are
    among those scraped."""
    own = own_data(settings, tmp_path_factory, "metrics-scraped")
    write_last(own.data_dir, LastSync(at=time.time(), outcome="unchanged"))
    with TestClient(create_app(own)) as client:
        table, scrape = documented(), scraped(client)
    assert {"kb_query_adapter_questions", "kb_sync_last_outcome", "kb_questions"} <= set(scrape)
    assert sorted(set(scrape) - set(table)) == [], "scraped, not in the table"
    assert set(table) - set(scrape) == JUDGE, "in the table, not scraped"
    assert all(table[name].help.startswith("With a second-stage judge") for name in JUDGE)
    for name, (kind, labels, help) in scrape.items():
        row = table[name]
        assert (row.kind, row.help) == (kind, help), name
        if labels is not None:
            assert row.labels == labels, name
    assert scrape["kb_questions"][1] == {"channel", "kind", "outcome"}  # the question asked gave it a sample
    assert scrape["kb_sync_last_outcome"][1] == {"outcome"}
