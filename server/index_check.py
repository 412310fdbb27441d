"""The index read as the server will read it, before `kb serve` or `kb mcp` starts: one line naming what is wrong."""

from __future__ import annotations

from typing import Callable

from kb.errors import IndexUnreadable, KBError
from kb.settings import Settings

__all__ = ["check_index"]


def check_index(settings: Settings) -> None:
    """Read the index as the server will (manifest, checksums, model); raise IndexUnreadable naming what is wrong.

    The embedder it loads stays loaded for the server in this process.
    """
    from kb.embedding import open_embedder
    from kb.index import read_index, read_meta

    _as_index_error(settings, lambda: read_meta(settings.index_dir))  # missing or foreign: said before the model loads
    model = open_embedder(settings.embed_model).model
    _as_index_error(settings, lambda: read_index(settings.index_dir, model=model))


def _as_index_error(settings: Settings, read: Callable[[], object]) -> None:
    """Run `read`; a file it did not expect becomes an IndexUnreadable naming the index and the fault."""
    try:
        read()
    except KBError:
        raise
    except (OSError, RuntimeError, TypeError, ValueError, AttributeError) as exc:
        # A directory where a file belongs, a manifest field of the wrong type, bytes FAISS cannot read.
        raise IndexUnreadable(settings.index_dir, f"cannot be read ({type(exc).__name__}: {exc})") from None
