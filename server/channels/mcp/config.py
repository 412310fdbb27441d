"""`kb mcp --print-config`: the configuration that launches this `kb mcp` from a coding agent.

An agent starts `kb mcp` itself, from its own working directory and `PATH`, where a `kb`
installed in a project's virtual environment (`make serve`'s `.venv/bin/kb`) is not found.
The configuration printed names the `kb` running now by its absolute path (or this Python
with `-m kbcli.cli` when that is how it runs) and the data directory it serves, so it works
wherever the agent starts it. The forms: Claude Code's `.mcp.json` and Cursor's
`.cursor/mcp.json` (the same JSON), Claude Code's `claude mcp add` command line, and
Codex's `~/.codex/config.toml` table.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

__all__ = ["FORMS", "NAME", "launch_command", "config_text"]

FORMS = ("claude", "cursor", "claude-add", "codex")
NAME = "faq"  # the server's name in the agent's configuration


def launch_command(argv0: str | None = None, executable: str | None = None) -> list[str]:
    """The command line, absolute, that runs this `kb mcp`: the `kb` script when it is what runs, else this Python
    with `-m kbcli.cli`."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    executable = sys.executable if executable is None else executable
    if argv0 and not argv0.endswith(".py") and argv0 not in ("-m", "-c"):
        script = Path(shutil.which(argv0) or argv0)
        if script.is_file():
            return [str(script.absolute()), "mcp"]
    return [str(Path(executable).absolute()), "-m", "kbcli.cli", "mcp"]


def launch_env(command: list[str], data_dir: Path) -> dict[str, str]:
    """The environment the command needs: the data directory, and for `-m kbcli.cli` the directory this
    `kbcli` is imported from (it may be a checkout the interpreter would not find by itself)."""
    env = {"KB_DATA_DIR": str(data_dir.absolute())}
    if "-m" in command:
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])  # beside server/: kbcli/
    return env


def config_text(form: str, data_dir: Path, command: list[str] | None = None) -> str:
    """The configuration in `form` (one of FORMS) for the command (default: `launch_command()`)."""
    command = command or launch_command()
    env = launch_env(command, data_dir)
    server = {"command": command[0], "args": command[1:], "env": env}
    if form in ("claude", "cursor"):
        return json.dumps({"mcpServers": {NAME: server}}, indent=2)
    if form == "claude-add":
        flags = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        return shlex.join(["claude", "mcp", "add", NAME, *flags, "--", *command])
    if form == "codex":
        table = ", ".join(f"{key} = {json.dumps(value)}" for key, value in env.items())
        return "\n".join(
            [
                f"[mcp_servers.{NAME}]",
                f"command = {json.dumps(command[0])}",
                f"args = {json.dumps(command[1:])}",
                f"env = {{ {table} }}",
            ]
        )
    raise ValueError(f"no MCP configuration form {form!r}; the forms are {', '.join(FORMS)}")
