"""The admin token kept in the data directory: the one `kb serve` signs /insights in with when KB_ADMIN_TOKEN is not set.

`kb serve` without `KB_ADMIN_TOKEN` in its environment reads `$KB_DATA_DIR/admin-token`, or makes
it (a random token, the file readable by its owner alone, 0600), and serves with it; `kb
admin-token` prints it, and the start-up log names the file, never the token. `KB_ADMIN_TOKEN`
set wins; set and empty, it keeps the admin routes off. A file others may read is refused, naming
the file and its mode, rather than served with: `kb serve` then serves with /insights off.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import Mapping

from kb.errors import KBError

from .settings import ServerSettings

__all__ = ["FILE", "ENV", "token_file", "kept_token", "serving_token", "status"]

FILE = "admin-token"
ENV = "KB_ADMIN_TOKEN"
_BYTES = 24  # 32 URL-safe characters
_MAX = 4096  # characters read of the file: a token, not a document


def token_file(data_dir: Path) -> Path:
    return Path(data_dir) / FILE


def kept_token(data_dir: Path) -> str:
    """The token kept in the data directory, made (0600) when there is none; KBError naming the file when it
    cannot be read or written, is empty, or others may read it."""
    path = token_file(data_dir)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read(path)
    except OSError as exc:
        raise KBError(f"{path}: cannot keep the admin token there ({exc.strerror}); set {ENV} instead") from None
    token = secrets.token_urlsafe(_BYTES)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(token + "\n")
    return token


def _read(path: Path) -> str:
    try:
        mode = path.stat().st_mode
        with path.open(encoding="utf-8", errors="replace") as file:
            token = file.read(_MAX).strip()
    except OSError as exc:
        raise KBError(f"{path}: cannot read the admin token ({exc.strerror}); set {ENV} instead") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KBError(
            f"{path}: the admin token is readable by others (mode {stat.S_IMODE(mode):o}); "
            f"run `chmod 600 {path}`, or delete it for a new one"
        )
    if not token or any(c.isspace() for c in token):
        raise KBError(f"{path}: holds no admin token (one line, no spaces); delete it for a new one")
    return token


def serving_token(data_dir: Path, environ: Mapping[str, str]) -> str:
    """The token `kb serve` and `kb admin-token` use: KB_ADMIN_TOKEN when set (empty: none, the admin routes off),
    else the one kept in the data directory."""
    if ENV in environ:
        return environ[ENV].strip()
    return kept_token(data_dir)


def status(settings: ServerSettings) -> str:
    """The start-up line about /insights: on, and how to sign in; or off, and why."""
    if not settings.admin_token:
        return (
            f"Insights off: /insights and /admin answer 404, {ENV} being empty "
            f"(`kb serve` makes a token, kept in {token_file(settings.data_dir)}, when {ENV} is not set at all)"
        )
    path = token_file(settings.data_dir)
    try:
        kept = path.is_file() and _read(path) == settings.admin_token
    except KBError:
        kept = False
    if kept:
        return f"Insights on: /insights, sign in with the admin token kept in {path} (`kb admin-token` prints it)"
    return f"Insights on: /insights, sign in with the admin token {ENV}"
