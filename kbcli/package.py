"""The installed package's own folders, which no `kb` command writes into."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from kb.errors import KBError

__all__ = ["PACKAGES", "package_folders", "refuse_package"]

PACKAGES = ("kb", "ingest", "server", "kbcli")


def package_folders() -> list[Path]:
    """Each package's folder as imported (in a checkout or in site-packages alike)."""
    return [Path(str(import_module(name).__file__)).resolve().parent for name in PACKAGES]


def refuse_package(folder: Path, writes: str, instead: str) -> None:
    """Raise a KBError naming `folder` when it lies inside the installed package: the shipped
    FAQs are read from there, and an upgrade or a reinstall would lose (or be blocked by) what
    a command wrote."""
    inside = folder.resolve()
    for package in package_folders():
        if inside == package or package in inside.parents:
            raise KBError(f"{folder}: {writes} it, but it is inside the installed package; {instead}")
