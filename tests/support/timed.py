"""Which histograms of `/metrics` time a channel's questions, read as a Prometheus scrape reads them: what
`Channel.asks` declares, and docs/deployment.md and docs/channels.md say, checked against what a question did."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from server.channels import registry
from server.channels.channel import ASKS

__all__ = ["declared", "timed"]

HISTOGRAMS = {"kb_search_seconds": "search", "kb_chat_seconds": "chat"}


def timed(exposition: str, channel: str) -> set[str]:
    """The kinds of question (`search`, `chat`) whose histogram has counted at least one of `channel`'s."""
    found = set()
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            counted = sample.name.removesuffix("_count")
            if counted in HISTOGRAMS and sample.name.endswith("_count") and sample.labels.get("channel") == channel:
                if sample.value > 0:
                    found.add(HISTOGRAMS[counted])
    assert set(HISTOGRAMS.values()) == set(ASKS)
    return found


def declared(channel: str) -> set[str]:
    """What the registered channel of that name declares its questions are published as."""
    found = registry.channel(channel)
    assert found is not None, f"no channel {channel!r} in the registry"
    return set(found.asks)
