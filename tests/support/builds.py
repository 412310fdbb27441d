"""Building an index for a test session, its passage vectors kept between sessions."""

from __future__ import annotations

import shutil

import pytest

from kb.settings import Settings


def build_keeping_vectors(settings: Settings, config: pytest.Config) -> None:
    """Build the index for `settings`, its passage vectors kept in pytest's cache directory
    between sessions (unchanged passages are not embedded again; no cache under
    `-p no:cacheprovider`)."""
    from ingest import build_index

    cache = getattr(config, "cache", None)
    kept = cache.mkdir("kb-embedding-cache") if cache is not None else None
    if kept is not None:
        shutil.copytree(kept, settings.cache_dir, dirs_exist_ok=True)
    build_index(settings)
    if kept is not None:
        shutil.copytree(settings.cache_dir, kept, dirs_exist_ok=True)
