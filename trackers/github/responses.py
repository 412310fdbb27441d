"""GitHub's API responses, read with care: the body capped at `MAX_RESPONSE_BYTES`, its JSON parsed and its shape checked;
`GitHubUnavailable` naming the call and what was wrong, never a traceback, when a reply cannot be used (an HTML
page from a proxy, a list where an object was expected, a number too long for Python to read, 300 MB of anything).

The REST core (rest.py) reads each reply through `Capped` and `json_of`; its callers take the fields with `listed`,
`object_of`, `text_at` and `id_at`, which accept any JSON value."""

from __future__ import annotations

import json
from typing import Any

from kb.errors import KBError

__all__ = ["GitHubUnavailable", "Capped", "json_of", "listed", "object_of", "text_at", "id_at", "MAX_RESPONSE_BYTES"]

# 100 comments a page of at most 65,536 characters each, as JSON, fit in 16 MiB; no reply the bot reads is larger.
MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class GitHubUnavailable(KBError):
    """The API refused a call, could not be reached, or answered what cannot be used; the message says which call
    and why."""


class Capped:
    """A reply's body read chunk by chunk, refused once it passes `limit` bytes (`what`: the call, for the error)."""

    def __init__(self, what: str, limit: int = MAX_RESPONSE_BYTES) -> None:
        self.what, self.limit = what, limit
        self.chunks: list[bytes] = []
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            raise GitHubUnavailable(f"{self.what}: the answer is over {self.limit // (1024 * 1024)} MiB; not read")
        self.chunks.append(chunk)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


def json_of(what: str, body: bytes, content_type: str = "", lenient: bool = False) -> Any:
    """The JSON value of a reply's body ({} for an empty one); GitHubUnavailable saying why it is not JSON. `lenient`:
    bytes that are not UTF-8 kept as lone surrogates, for the reader to refuse the one value that holds them."""
    if not body.strip():
        return {}
    try:
        return json.loads(body.decode("utf-8", "surrogateescape") if lenient else body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        kind = content_type.split(";")[0].strip() or "no content type"
        raise GitHubUnavailable(f"{what}: the answer is not JSON ({kind}, {len(body)} bytes)") from None
    except RecursionError:
        raise GitHubUnavailable(f"{what}: the answer is nested too deep") from None
    except ValueError:  # an integer of over 4,300 digits
        raise GitHubUnavailable(f"{what}: the answer holds a number too long to read") from None


def listed(what: str, value: Any) -> list[dict[str, Any]]:
    """The objects of a reply that should be a list of objects (others in it left out)."""
    if not isinstance(value, list):
        raise GitHubUnavailable(f"{what}: the answer is a JSON {_kind(value)}, not a list")
    return [item for item in value if isinstance(item, dict)]


def object_of(what: str, value: Any) -> dict[str, Any]:
    """A reply that should be a JSON object."""
    if not isinstance(value, dict):
        raise GitHubUnavailable(f"{what}: the answer is a JSON {_kind(value)}, not an object")
    return value


def text_at(value: Any, *keys: str) -> str:
    """The text at `keys` in nested objects ("" when any step is not an object, or the end is not text)."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else ""


def id_at(what: str, value: Any, key: str = "id") -> int:
    """The positive integer id at `key` of an object; GitHubUnavailable when there is none."""
    found = value.get(key) if isinstance(value, dict) else None
    if not isinstance(found, int) or isinstance(found, bool) or not 0 < found < 2**63:
        raise GitHubUnavailable(f"{what}: the answer's {key} is not an id")
    return found


def _kind(value: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
