"""Metrics for operators: what `GET /metrics` exports in Prometheus's text format, one set per process.

Three sources, one registry per app (`Metrics`):
- `RequestMetrics`, an ASGI middleware, counts each response by method, route (the route's
  template, `/entries/{entry_id}`, so the label set stays small) and status;
- `Metrics.hear` listens to what the library publishes (`kb.events`, like the insights
  recorder): each question's time to its result, by channel and kind (search, live search
  as the reader types, chat), and whether the FAQ answered it or abstained;
- `State`, read when scraped: the index build served (entry count, model, when built),
  the insights queue (waiting, dropped), the second-stage judge's outcomes, and the
  embedder's model runs (`kb.latency`, counted by the library), and the last sync from upstream.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kb.adapter import QueryAdapter
from kb.events import Chatted, Event, Searched
from kb.syncs import OUTCOMES, LastSync, last_sync

from .channels import registry
from .reload import Reloader

__all__ = ["Metrics", "RequestMetrics", "State", "CONTENT_TYPE"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Seconds: a search takes 10 to 30 ms, a chat with an LLM seconds.
SEARCH_BUCKETS = (0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5)
CHAT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0)


class Metrics:
    """The app's registry, its counters and histograms, and the listener that feeds them."""

    def __init__(self) -> None:
        disable_created_metrics()  # no `_created` series beside each counter: the process start says as much
        self.channels = frozenset(registry.names())
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "kb_http_requests",
            "HTTP requests answered, by method (other for any but GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS), "
            "route (its template, /entries/{entry_id}; unmatched for a 404 or a request a limit refused before "
            "routing) and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.search_seconds = Histogram(
            "kb_search_seconds",
            "Time from a question asked as a search to its result, by channel (a chat turn is timed in "
            "kb_chat_seconds)",
            ["channel"],
            buckets=SEARCH_BUCKETS,
            registry=self.registry,
        )
        self.chat_seconds = Histogram(
            "kb_chat_seconds",
            "Time from a chat message to its answer (to its sources, when streamed), by channel; a chat bot's "
            "message is a chat turn even when the search alone answers it",
            ["channel"],
            buckets=CHAT_BUCKETS,
            registry=self.registry,
        )
        self.questions = Counter(
            "kb_questions",
            "Questions asked, by channel, kind (search, live as the reader types, chat) and outcome (answered, "
            "abstained)",
            ["channel", "kind", "outcome"],
            registry=self.registry,
        )

    def hear(self, event: Event) -> None:
        """A listener of `kb.events.Events`: time and count each question asked, under its channel's name
        (a name the registry does not have counts as `other`, so the series stay as many as the channels)."""
        if isinstance(event, Searched):
            seconds = time.perf_counter() - event.started
            channel = self._channel(event.channel)
            self.search_seconds.labels(channel).observe(seconds)
            kind = "live" if event.live else "search"
            self.questions.labels(channel, kind, _outcome(event.result.answered)).inc()
        elif isinstance(event, Chatted):
            channel = self._channel(event.channel)
            self.chat_seconds.labels(channel).observe(time.perf_counter() - event.started)
            self.questions.labels(channel, "chat", _outcome(event.answered)).inc()

    def _channel(self, name: str) -> str:
        return name if name in self.channels else "other"

    def watch(self, state: "State") -> None:
        self.registry.register(state)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


def _outcome(answered: bool) -> str:
    return "answered" if answered else "abstained"


class State(Collector):
    """What is read when scraped: the build served, the insights queue, the judge, the embedder."""

    def __init__(self, reloader: Callable[[], Reloader], recorder: Callable[[], Any]) -> None:
        self.reloader = reloader
        self.recorder = recorder

    def collect(self) -> Iterator[Metric]:
        kb = self.reloader().served.kb
        meta = kb.meta
        info = GaugeMetricFamily("kb_index_info", "The index build served (always 1)", labels=["build", "model"])
        info.add_metric([kb.path.name, meta.model], 1)
        yield info
        yield GaugeMetricFamily("kb_index_entries", "Entries in the index build served", value=len(kb.entries))
        yield GaugeMetricFamily(
            "kb_index_age_seconds", "Seconds since the index build served was built", value=meta.age_seconds
        )
        recorder = self.recorder()
        yield GaugeMetricFamily(
            "kb_insights_waiting",
            "Questions and votes not yet written to the insights database",
            value=recorder.waiting,
        )
        yield CounterMetricFamily(
            "kb_insights_dropped",
            "Questions and votes dropped since start-up (more than KB_INSIGHTS_QUEUE_SIZE were waiting)",
            value=recorder.dropped,
        )
        yield from _judge(kb.judging.stats() if kb.judging is not None else None)
        yield _embedding(kb.searcher.embedder.runs)
        yield from _adapter(kb.searcher.adapter)
        yield from _sync(last_sync(self.reloader().settings.data_dir))


def _sync(last: LastSync | None) -> Iterator[Metric]:
    """When the last sync from upstream (`kb sync`, KB_SYNC_INTERVAL) finished, and how (nothing before the first)."""
    if last is None:
        return
    yield GaugeMetricFamily(
        "kb_sync_last_timestamp_seconds",
        "When the last sync from the sources' upstream (kb sync, KB_SYNC_INTERVAL) finished (Unix time; none "
        "before the first)",
        value=last.at,
    )
    outcome = GaugeMetricFamily(
        "kb_sync_last_outcome",
        "The last sync's outcome: 1 for the one it had (built, unchanged or failed), 0 for the others",
        labels=["outcome"],
    )
    for name in OUTCOMES:
        outcome.add_metric([name], 1 if last.outcome == name else 0)
    yield outcome


def _adapter(adapter: QueryAdapter | None) -> Iterator[Metric]:
    """When the query adapter served was fitted, and on how many questions (nothing without one)."""
    if adapter is None:
        return
    summary = adapter.summary()
    try:
        fitted = datetime.fromisoformat(summary["fitted_at"]).timestamp()
    except ValueError:
        fitted = 0.0
    yield GaugeMetricFamily(
        "kb_query_adapter_fitted_timestamp_seconds",
        "When the query adapter served was fitted (Unix time; kb tune, or the refit after a link on /insights); "
        "none without one",
        value=fitted,
    )
    yield GaugeMetricFamily(
        "kb_query_adapter_questions",
        "The labelled questions the query adapter served was fitted on (a question that is the alternate of two "
        "entries counts once)",
        value=summary["questions"],
    )


def _judge(stats: dict[str, Any] | None) -> Iterator[Metric]:
    if stats is None:
        return
    outcomes = CounterMetricFamily(
        "kb_judge_questions",
        "With a second-stage judge: questions it read (judged), left to the first stage (skipped), or found cached",
        labels=["outcome"],
    )
    for outcome in ("judged", "skipped", "cached"):
        outcomes.add_metric([outcome], stats.get(outcome, 0))
    yield outcomes
    failed = CounterMetricFamily(
        "kb_judge_failures",
        "With a second-stage judge: verdicts not used, by kind (the first stage's order stood)",
        labels=["kind"],
    )
    for kind, count in sorted(stats.get("failed", {}).items()):
        failed.add_metric([kind], count)
    yield failed


def _embedding(runs: Any) -> Metric:
    counts, total = runs.snapshot()
    cumulative, buckets = 0, []
    for bound, count in zip((*runs.bounds, float("inf")), counts):
        cumulative += count
        buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
    family = HistogramMetricFamily("kb_embedding_seconds", "Time of each run of the embedding model (a batch of texts)")
    family.add_metric([], buckets, total)
    return family


class RequestMetrics:
    """Count each HTTP response by method, route template and status (`kb_http_requests_total`)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.requests = metrics.requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # when the app raises before it answers

        async def send_watching(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_watching)
        finally:
            template = getattr(scope.get("route"), "path", None) or _unrouted(scope["path"])
            self.requests.labels(_method(scope["method"]), template, str(status)).inc()


# The methods counted by name; any other (anyone can send `QWERTY /`) is counted as `other`.
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _method(method: str) -> str:
    """The label of a request's method: one of `_METHODS`, or `other`."""
    return method if method in _METHODS else "other"


# Paths served outside the API's routes (which name themselves in the scope): the static files, and the channels
# whose prefix is one path (no trailing `/`), served by an ASGI app of their own.
_STATIC = ("/static/", "/static/api-docs/")


def _unrouted(path: str) -> str:
    """The label of a path no API route took: its mount, or `unmatched` (a 404, or a request a limit
    answered before routing), never the path itself, which anyone picks."""
    unrouted = (*(c.prefix for c in registry.CHANNELS if c.prefix and not c.prefix.endswith("/")), *_STATIC)
    for prefix in reversed(unrouted):
        if path == prefix or prefix.endswith("/") and path.startswith(prefix):
            return prefix
    return "unmatched"
