"""GitHub webhook signatures: `X-Hub-Signature-256` is `sha256=` and the hex HMAC-SHA256 of the raw body, keyed with
the webhook's secret (GitHub's "Validating webhook deliveries"). Compared in constant time, before the body is read."""

from __future__ import annotations

import hashlib
import hmac

from ...exceptions import ServerError

__all__ = ["BadGitHubSignature", "sign", "verify"]


class BadGitHubSignature(ServerError):
    """A delivery that does not carry a valid signature of its body; the message says which part failed."""

    status = 401
    channel = "github"
    sender = "GitHub delivery"
    refusal = "not a valid GitHub delivery"


def sign(secret: str, body: bytes) -> str:
    """The `X-Hub-Signature-256` header GitHub sends with `body`."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify(secret: str, signature: str | None, body: bytes) -> None:
    """Raise `BadGitHubSignature` unless `signature` is the body's, under `secret`."""
    if not signature:
        raise BadGitHubSignature("no X-Hub-Signature-256 header")
    if not signature.startswith("sha256="):
        raise BadGitHubSignature("X-Hub-Signature-256 is not `sha256=<hex digest>`")
    if not hmac.compare_digest(signature.encode("ascii", "replace"), sign(secret, body).encode("ascii")):
        raise BadGitHubSignature("X-Hub-Signature-256 does not match the body under the webhook's secret")
