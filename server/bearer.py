"""Bearer tokens: whether a request's `Authorization` header carries one of the tokens a setting gives."""

from __future__ import annotations

import hmac
from typing import Iterable

__all__ = ["bearer_matches"]


def bearer_matches(expected: Iterable[str], authorization: str) -> bool:
    """Whether `authorization` is `Bearer <token>` for one of `expected`, compared in constant time
    (each one compared, whichever matches); an empty token never matches."""
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    sent = given.strip().encode("utf-8", "replace")
    matched = False
    for token in expected:
        matched |= bool(token) and hmac.compare_digest(sent, token.encode("utf-8"))
    return matched
