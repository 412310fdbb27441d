"""The `kb` command: its parser, assembled from one module per command, and `main`, which runs the one asked for.

Each module of COMMANDS adds its subcommands with `add_parser(sub)`, and each subcommand's parser
sets `run`, the function that `main` calls with the settings and the parsed arguments. A command
is added by writing its module and naming it in COMMANDS, whose order is `kb --help`'s; a channel's
own commands (`kb mcp`, `kb github`) come from its plugin's `add_parser` (server/channels/plugin.py),
after `kb sync`. Building the parser loads no numpy and no model: each command imports what it
needs when it runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Protocol, Sequence

from kb.errors import KBError
from server.channels import registry
from server.settings import ServerSettings

from . import (
    admin_token,
    calibrate,
    evaluate,
    export,
    harvest,
    ingest,
    insights,
    learning,
    search,
    serve,
    sync,
    translate,
    tuning,
)

__all__ = ["COMMANDS", "Command", "build_parser", "main"]


class Command(Protocol):
    """A command module: it adds its subcommands (each with its `run`) to the `kb` command's subparsers."""

    def add_parser(self, sub: Any) -> None: ...


# In `kb --help`'s order.
COMMANDS: tuple[Command, ...] = (
    ingest,
    translate,
    search,
    calibrate,
    evaluate,
    serve,
    admin_token,
    export,
    sync,
    harvest,
    insights,
    learning,
    tuning,
)


def all_commands() -> tuple[Command, ...]:
    """COMMANDS, with the channels' own commands (`kb mcp`, `kb github`) after `kb sync`, in the registry's order."""
    channels: tuple[Command, ...] = tuple(c.plugin for c in registry.CHANNELS if c.plugin is not None)
    after = COMMANDS.index(sync) + 1
    return COMMANDS[:after] + channels + COMMANDS[after:]


def build_parser(commands: Sequence[Command] | None = None) -> argparse.ArgumentParser:
    """The `kb` command's parser, with the subcommands of each of `commands` (by default, every command)."""
    parser = argparse.ArgumentParser(prog="kb", description="A bilingual FAQ knowledge base for LLM training.")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in all_commands() if commands is None else commands:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = ServerSettings.from_env()  # the library's and the server's: a bad one stops every command
        return args.run(settings, args)
    except KBError as exc:
        for line in str(exc).splitlines():  # several bad source files: a line each
            print(f"kb: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
