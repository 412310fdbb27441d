"""`kb admin-token`: print the admin token that `kb serve` signs /insights in with.

    kb admin-token

`KB_ADMIN_TOKEN` when it is set, else the token kept in the data directory (`server.admin_token`),
made now when there is none, as `kb serve` would.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from server import admin_token
from server.settings import ServerSettings

__all__ = ["add_parser", "cmd_admin_token"]


def add_parser(sub: Any) -> None:
    """Add `admin-token` to the `kb` command's subparsers."""
    p = sub.add_parser(
        "admin-token", help="print the admin token /insights signs in with (KB_ADMIN_TOKEN, else the data directory's)"
    )
    p.set_defaults(run=cmd_admin_token)


def cmd_admin_token(settings: ServerSettings, args: argparse.Namespace) -> int:
    """Print the admin token `kb serve` signs /insights in with: KB_ADMIN_TOKEN, else the one kept in the data
    directory (made now when there is none, as `kb serve` would)."""
    token = admin_token.serving_token(settings.data_dir, os.environ)
    if not token:
        print(f"kb: error: {admin_token.ENV} is set and empty: /insights is off; unset it for a token", file=sys.stderr)
        return 2
    print(token)
    return 0
