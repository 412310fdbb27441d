"""The docs' generated sections: the parts of docs/*.md that mirror the code, written from the code.

A generated section sits between two marker comments in a page:

    <!-- generated: NAME (python tools/gendocs.py) -->
    ...
    <!-- end generated -->

`python tools/gendocs.py` rewrites every section from the code; `python tools/gendocs.py --check`
writes nothing and exits 1 naming each page and section that is out of date
(`tests/docs/test_generated.py` runs the same check). Each section is written from one place in the code:

- `modules`: the module map, from each module's first docstring sentence (kb/, ingest/, server/, kbcli/),
  read with `ast`, so no module is imported (tools/module_map.py);
- `cli`: the `kb` command's reference, from its argparse parser (`kbcli.cli.build_parser`, one module a command);
- `settings-library`, `settings-server`, `settings-channels`: the settings tables, from the
  `setting(default, help)` fields of `kb.settings.Settings`, `server.settings.SiteSettings` and each
  channel's `settings_class` (in its package), in the registry's order;
- `metrics`: the metrics table, from the metrics declared in server/metrics.py (their names, kinds,
  labels and help, as `/metrics` gives them), read with `ast`;
- `channels`: the channel list, from the registry (server/channels/registry.py);
- `test-files`: how many modules of each package have a test file of their own name (docs/development.md,
  tools/module_map.py);
- `rate-exempt`: the paths `KB_RATE_LIMIT` does not count (as `server.error_handler.rate_exempt` composes them).

Nothing here loads the model or an index: it imports the parser, the settings classes and the registry
only. The output depends on the code alone (modules sorted by path, settings
and channels in declaration order), so two runs write the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import fields
from pathlib import Path
from typing import Callable, Iterator, Sequence

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python tools/gendocs.py`: the packages are at the checkout's top
    sys.path.insert(0, str(ROOT))

from tools.module_map import modules, test_files  # noqa: E402
from tools.sections import GenerationError, cell, rewrite  # noqa: E402

COMMAND = "python tools/gendocs.py"


# The CLI reference --------------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each subcommand, in the order the parser lists them."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return found


def _option(action: argparse.Action) -> tuple[str, str]:
    """An argument as the reference lists it: (how it is written, its help with its default and choices)."""
    metavar = action.metavar if isinstance(action.metavar, str) else None
    if action.option_strings:
        takes = action.nargs != 0
        value = metavar or (("{" + ",".join(map(str, action.choices)) + "}") if action.choices else action.dest.upper())
        written = ", ".join(f"{o} {value}" if takes else o for o in action.option_strings)
    else:
        written = metavar or action.dest
        if action.nargs in ("+", "*"):
            written += " ..."
    text = action.help or ""
    if action.choices and not action.option_strings:
        text += f" (one of {', '.join(map(str, action.choices))})"
    if action.required and action.option_strings:
        text += " (required)"
    shown = action.default not in (None, False, argparse.SUPPRESS) and action.nargs != 0
    if shown and "default" not in text:
        text += f" (default {action.default})"
    return written, text


def _usage(prog: str, parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(prog, width=10_000)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return " ".join(formatter.format_help().split())


def _command(prog: str, help: str, parser: argparse.ArgumentParser, level: int) -> Iterator[str]:
    yield f"{'#' * level} `{prog}`\n\n"
    if help:
        said = cell(help).rstrip(".")
        yield said[:1].upper() + said[1:] + ".\n\n"
    yield f"    {_usage(prog, parser)}\n\n"
    arguments = [a for a in parser._actions if not isinstance(a, (argparse._SubParsersAction, argparse._HelpAction))]
    if arguments:
        yield "| argument | what it does |\n|---|---|\n"
        yield "".join(f"| `{written}` | {cell(text)} |\n" for written, text in map(_option, arguments))
        yield "\n"
    for name, sub_help, sub in _subcommands(parser):
        yield from _command(f"{prog} {name}", sub_help, sub, level + 1)


def cli() -> str:
    from kbcli.cli import build_parser

    parser = build_parser()
    commands = _subcommands(parser)
    index = ", ".join(f"[`kb {name}`](#kb-{name})" for name, _, _ in commands)
    body = "".join(part for name, help, sub in commands for part in _command(f"kb {name}", help, sub, 3))
    return f"Commands: {index}.\n\n{body}".rstrip("\n") + "\n"


# The settings tables ------------------------------------------------------------------------------


def _default(value: object) -> str:
    from kb.settings import DEFAULT_DATA_DIR, SHIPPED_SOURCES

    if value == DEFAULT_DATA_DIR:
        return "`~/.local/share/kb`"
    if value == SHIPPED_SOURCES:
        return "the FAQs shipped in `kb/sources`"
    if value == "":
        return "empty"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _settings_table(own: type, inherited: type | None) -> str:
    known = {f.name for f in fields(inherited)} if inherited else set()
    rows = "".join(
        f"| `KB_{f.name.upper()}` | {_default(f.default)} | {cell(f.metadata['help'])} |\n"
        for f in fields(own)
        if f.name not in known
    )
    return "| variable | default | what it does |\n|---|---|---|\n" + rows


def settings_library() -> str:
    from kb.settings import Settings

    return _settings_table(Settings, None)


def settings_server() -> str:
    from kb.settings import Settings
    from server.settings import SiteSettings

    return _settings_table(SiteSettings, Settings)


def settings_channels() -> str:
    """A table for each channel that declares settings (`Channel.settings_class`), in the registry's order; a
    setting two channels share is listed under the first."""
    from server.channels.registry import CHANNELS

    listed: set[str] = set()
    parts = []
    for channel in CHANNELS:
        if channel.settings_class is None:
            continue
        own = [f for f in fields(channel.settings_class) if f.name not in listed]
        listed |= {f.name for f in own}
        rows = "".join(f"| `KB_{f.name.upper()}` | {_default(f.default)} | {cell(f.metadata['help'])} |\n" for f in own)
        where = channel.settings_class.__module__.replace(".", "/") + ".py"
        parts.append(
            f"### {channel.label_en}\n\n`{channel.settings_class.__name__}` (`{where}`); "
            f"set up in [{channel.label_en}]({_anchor(channel.docs, 'docs/settings.md')}).\n\n"
            "| variable | default | what it does |\n|---|---|---|\n" + rows
        )
    return "\n".join(parts)


# The metrics table --------------------------------------------------------------------------------

_KINDS = {
    "Counter": "counter",
    "CounterMetricFamily": "counter",
    "Histogram": "histogram",
    "HistogramMetricFamily": "histogram",
    "Gauge": "gauge",
    "GaugeMetricFamily": "gauge",
}


def _strings(node: ast.AST | None) -> list[str]:
    """The string constants of a literal list or tuple (a metric's labels)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def metric_rows(path: Path) -> list[tuple[str, str, list[str], str]]:
    """(name, kind, labels, help) of each metric a module declares: each call of a prometheus_client
    metric class or family whose first two arguments are literal strings, sorted by name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _KINDS):
            continue
        texts = [a.value for a in node.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if len(texts) < 2:
            raise GenerationError(
                f"{path.relative_to(ROOT)}:{node.lineno}: {node.func.id}(...) without a literal name and help"
            )
        keywords = {k.arg: k.value for k in node.keywords}
        labels = _strings(node.args[2] if len(node.args) > 2 else keywords.get("labels", keywords.get("labelnames")))
        found.append((texts[0], _KINDS[node.func.id], labels, texts[1]))
    return sorted(found)


# Each kind of question a channel declares (`Channel.asks`), and the histogram that times it.
_TIMED = {"search": "kb_search_seconds", "chat": "kb_chat_seconds"}


def metrics() -> str:
    from server.channels import registry
    from server.channels.channel import ASKS

    rows = []
    for name, kind, labels, help in metric_rows(ROOT / "server" / "metrics.py"):
        scraped = name + "_total" if kind == "counter" else name
        labelled = f"{scraped}{{{', '.join(labels)}}}" if labels else scraped
        rows.append(f"| `{labelled}` | {kind} | {cell(help)} |\n")
    fed = []
    for asked in ASKS:
        names = [f"`{c.name}`" for c in registry.CHANNELS if asked in c.asks]
        fed.append(f"`{_TIMED[asked]}` has a series for {', '.join(names) or 'no channel'}")
    return (
        "| metric | kind | what it counts |\n|---|---|---|\n"
        + "".join(rows)
        + "\nBy channel: "
        + "; ".join(fed)
        + " (what each channel's questions are published as, `asks` in its declaration).\n"
    )


# The channels -------------------------------------------------------------------------------------


def _anchor(docs: str, page: str) -> str:
    """A channel's `docs` (`docs/channels.md#slack`) as a link from `page` (a file under docs/)."""
    target, _, anchor = docs.partition("#")
    relative = Path(target).relative_to("docs").as_posix() if target.startswith("docs/") else "../" + target
    return ("" if relative == page else relative) + (f"#{anchor}" if anchor else "")


def channels() -> str:
    from server.channels import registry

    rows = []
    for c in registry.CHANNELS:
        on = ", ".join(f"`{v}`" for v in c.variables) if c.variables else "always"
        path = f"`{c.prefix}`" if c.prefix else "the site's own (pages, `/api/`)"
        limit = "not counted (the platform's servers send everyone's)" if c.platform and c.prefix else "counted"
        timed = ", ".join(f"`{_TIMED[kind]}`" for kind in c.asks) or "none"
        point = f"precision {c.precision}" if c.precision is not None else "`KB_ANSWER_PRECISION`"
        rows.append(
            f"| `{c.name}` | [{cell(c.label_en)}]({_anchor(c.docs, 'channels.md')}) ({cell(c.label_zh)}) | {path} "
            f"| {on} | {limit} | {timed} | {point} |\n"
        )
    header = (
        "| channel | what it is (set up) | its paths | turned on by | `KB_RATE_LIMIT` | its questions timed in "
        "| answers at (unless `KB_CHANNEL_PRECISION` names it) |\n"
        "|---|---|---|---|---|---|---|\n"
    )
    return header + "".join(rows)


def exempt_paths() -> tuple[str, ...]:
    """What `server.error_handler.rate_exempt()` returns, composed as it composes it (the platforms' prefixes, then
    `_RATE_EXEMPT`) without importing the error handler's module, which loads the search."""
    from server.channels import registry

    path = ROOT / "server" / "error_handler.py"
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_RATE_EXEMPT" for t in node.targets):
            fixed = tuple(_strings(node.value))
            break
    else:
        raise GenerationError("server/error_handler.py: no `_RATE_EXEMPT = (...)` tuple of paths")
    return (*(c.prefix for c in registry.CHANNELS if c.platform and c.prefix), *fixed)


def rate_exempt() -> str:
    paths = ", ".join(f"`{p}`" for p in exempt_paths())
    return f"Not counted by `KB_RATE_LIMIT` (`rate_exempt` in `server/error_handler.py`): {paths}.\n"


# Pages and sections -------------------------------------------------------------------------------

SECTIONS: dict[str, tuple[str, Callable[[], str]]] = {
    "modules": ("docs/architecture.md", modules),
    "cli": ("docs/cli.md", cli),
    "settings-library": ("docs/settings.md", settings_library),
    "settings-server": ("docs/settings.md", settings_server),
    "settings-channels": ("docs/settings.md", settings_channels),
    "rate-exempt": ("docs/settings.md", rate_exempt),
    "metrics": ("docs/deployment.md", metrics),
    "channels": ("docs/channels.md", channels),
    "test-files": ("docs/development.md", test_files),
}


def generate(root: Path = ROOT) -> dict[str, str]:
    """{page: its text with every generated section rewritten}, for the pages under `root` that have sections."""
    pages: dict[str, str] = {}
    for name, (page, make) in SECTIONS.items():
        if page not in pages:
            pages[page] = (root / page).read_text(encoding="utf-8")
        pages[page] = rewrite(pages[page], name, make(), page)
    return pages


def stale(root: Path = ROOT) -> list[str]:
    """`page: section NAME` for each generated section under `root` that the code would write otherwise."""
    found = []
    for name, (page, make) in SECTIONS.items():
        text = (root / page).read_text(encoding="utf-8")
        if rewrite(text, name, make(), page) != text:
            found.append(f"{page}: section `{name}`")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Rewrite the docs' generated sections from the code.")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale section")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose docs/ to read (default: this one)")
    args = parser.parse_args(argv)
    try:
        if args.check:
            out_of_date = stale(args.root)
            for line in out_of_date:
                print(f"out of date: {line}", file=sys.stderr)
            if out_of_date:
                print(f"run `{COMMAND}` and commit the pages it rewrites", file=sys.stderr)
            return 1 if out_of_date else 0
        for page, text in generate(args.root).items():
            path = args.root / page
            if path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
                print(f"rewrote {page}")
    except GenerationError as exc:
        print(f"gendocs: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
