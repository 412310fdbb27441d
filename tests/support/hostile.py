"""The hostile FAQ (tests/data/hostile/): payloads in questions, answers and sources."""

from __future__ import annotations

from tests.support.paths import DATA

HOSTILE_SOURCES = DATA / "hostile"
HOSTILE_QUERY = "How do I resume <script>window.__xss = 'query'</script> training? <img src=x onerror=alert('query')>"
