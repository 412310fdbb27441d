"""`kb serve`: check the index, then run the web app under uvicorn until Ctrl-C or SIGTERM.

    kb serve [--host ADDRESS] [--port N] [--workers N]

The app is `server.app:create_app`, built in each worker from the environment this command
sets; uvicorn's logging and proxy settings are chosen here (`log_config`, `uvicorn_options`).
"""

from __future__ import annotations

import argparse
import copy
import os
import signal
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from kb.errors import KBError
from server import admin_token
from server.index_check import check_index
from server.settings import ServerSettings

from .arenas import fewer_arenas

__all__ = ["add_parser", "cmd_serve", "log_config", "stopped_by_signal", "uvicorn_options"]


def add_parser(sub: Any) -> None:
    """Add `serve` to the `kb` command's subparsers."""
    p = sub.add_parser("serve", help="run the web app on the index `kb ingest` built")
    p.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=int, default=8000, help="the port to listen on (default 8000)")
    p.add_argument(
        "--workers", type=int, default=1, help="worker processes, each with its own index and searcher (default 1)"
    )
    p.set_defaults(run=cmd_serve)


def cmd_serve(settings: ServerSettings, args: argparse.Namespace) -> int:
    """Check the index, then run the web app; a missing or broken index stops here with one line, exit 2.

    The index is not built here: `kb ingest` does that. An index built from sources that
    have changed since is served, with a warning.
    """
    import uvicorn

    from kb.staleness import index_is_stale

    check_index(settings)
    from kb.scoring import Calibration

    Calibration.load(settings.calibration_path).check(settings.judge, settings.rerank_model or settings.llm_model)
    try:
        stale = index_is_stale(settings)
    except OSError as exc:  # the sources are gone or unreadable: the index is all there is
        print(f"kb: warning: cannot compare the index with the sources ({exc}); serving it", file=sys.stderr)
        stale = False
    if stale:
        print(
            f"kb: warning: {settings.index_dir} was built from other sources than {settings.sources_dir}; "
            "serving it anyway; run `kb ingest` to rebuild it",
            file=sys.stderr,
        )
    # The app reads its settings from the environment, so workers started by uvicorn agree.
    os.environ["KB_DATA_DIR"] = str(settings.data_dir)
    os.environ["KB_SOURCES_DIR"] = str(settings.sources_dir)
    # Without KB_ADMIN_TOKEN, the token kept in the data directory (made now the first time): /insights can be
    # signed in to, and the start-up log says where the token is. One that cannot be kept turns /insights off,
    # not the search: a read-only data directory is served as before.
    try:
        os.environ[admin_token.ENV] = admin_token.serving_token(settings.data_dir, os.environ)
    except KBError as exc:
        print(f"kb: warning: {exc}; serving with /insights off", file=sys.stderr)
        os.environ[admin_token.ENV] = ""
    fewer_arenas()  # before the request threads start; the workers inherit the setting
    if args.workers > 1:
        # Each worker's model would start one OpenMP thread per core, and N sets of them
        # spinning on the same cores slow every worker down: share the cores out instead.
        os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // args.workers)))
    with stopped_by_signal():
        uvicorn.run(
            "server.app:create_app",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            log_config=log_config(),
            **uvicorn_options(settings),
        )
    return 0


@contextmanager
def stopped_by_signal() -> Iterator[None]:
    """Ctrl-C or SIGTERM while the block runs is a clean stop, exit status 0.

    uvicorn shuts down gracefully on either, then raises the signal again for the handler
    that was there before; left at Python's defaults, that made `kb serve` die of SIGTERM
    or exit 130, and `make serve` end with `make: *** [serve] Terminated`.
    """
    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda sig, frame: None) for sig in handled}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def log_config() -> dict[str, Any]:
    """uvicorn's logging, and the server's own lines (`kb.*`: the index build swapped in, with
    its entries and seconds; refused origins; Slack) beside uvicorn's, from INFO up."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["kb"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    return config


def uvicorn_options(settings: ServerSettings) -> dict[str, Any]:
    """How uvicorn treats `X-Forwarded-For` and `X-Forwarded-Proto`: believed only from `KB_TRUSTED_PROXIES`.

    The client address they give is the one the rate limits count, so from anyone else
    they are ignored (uvicorn's own default would believe them from this machine).
    """
    from server.protocol import HeadDeadline

    proxies = list(settings.proxies)
    # HeadDeadline: a connection that has not sent a whole request head within 10 s is closed (server/protocol.py).
    return {"proxy_headers": bool(proxies), "forwarded_allow_ips": proxies or None, "http": HeadDeadline}
