"""`kb mcp`: the MCP server over standard input and output, on the local index, for a coding agent that launches it.

    kb mcp [--print-config FORM]

The tools are the MCP channel's own (`tools.create_mcp`), as `/mcp` serves them; with `--print-config` it prints
the configuration that launches it instead (`config.py`). The channel's plugin adds it to the `kb` command.
"""

from __future__ import annotations

import argparse
from typing import Any

from ...index_check import check_index
from ...settings import ServerSettings
from .config import FORMS as MCP_CONFIG_FORMS

__all__ = ["add_parser", "cmd_mcp"]


def add_parser(sub: Any) -> None:
    """Add `mcp` to the `kb` command's subparsers."""
    p = sub.add_parser("mcp", help="the MCP server for coding agents, over standard input and output")
    p.add_argument(
        "--print-config",
        choices=MCP_CONFIG_FORMS,
        metavar="{" + ",".join(MCP_CONFIG_FORMS) + "}",
        help="print the configuration that launches this `kb mcp`, with its absolute path, for Claude Code "
        "(.mcp.json, or the `claude mcp add` line), Cursor (.cursor/mcp.json) or Codex (~/.codex/config.toml)",
    )
    p.set_defaults(run=cmd_mcp)


def cmd_mcp(settings: ServerSettings, args: argparse.Namespace) -> int:
    """The MCP server over standard input and output, on the local index, for a coding agent that launches it.

    Questions are recorded for the insights (channel `mcp`) as the server records them;
    standard output carries the protocol alone, so everything else goes to standard error.
    With `--print-config FORM`, print the configuration that launches this `kb mcp` from an agent instead.
    """
    if args.print_config:
        from .config import config_text

        print(config_text(args.print_config, settings.data_dir))
        return 0

    import anyio

    from kb.events import Events
    from kb.insights import Recorder
    from kb.knowledge import KnowledgeBase

    from .stdio import serve_stdio
    from .tools import create_mcp

    check_index(settings)
    recorder = Recorder.open(settings)
    try:
        kb = KnowledgeBase.open(settings)
        links = recorder.store.links.all() if recorder.store is not None else []
        if links:
            kb = kb.taught(links)  # the links of the recorder's database, as the server teaches them
        if recorder.store is not None:  # its harvested drafts, for "see also", as the server reads them
            from kb.see_also import stored_threads

            cache = settings.cache_dir / "embeddings.sqlite"
            kb.see_also.load(stored_threads(recorder.store), kb.searcher.embedder, cache)
        mcp = create_mcp(lambda: kb, Events([recorder.hear]))
        anyio.run(serve_stdio, mcp)
    finally:
        recorder.close()
    return 0
