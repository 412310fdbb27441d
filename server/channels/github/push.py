"""GitHub's `push` event: the sources of sources.toml whose upstream (`repo`, `ref`) is the repository and branch
pushed to, synced in the background as `KB_SYNC_INTERVAL` syncs them (server/syncing.py).

A source matches when its `repo` is the repository pushed to (compared as GitHub names it: its web, clone, SSH
and Git URLs, the scheme, a user, `.git` and case aside) and its `ref` the ref pushed (`main` matches
`refs/heads/main`, a tag `v1` matches `refs/tags/v1`; a source pinned to a commit never moves). A push that no
source matches, or that deletes its branch, is acknowledged and left, with a log line saying why. The manifest
is read here for these fields only (the server does not import `ingest`); the sync reads it whole, and says what
is wrong with it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .events import BadGitHubEvent, payload_of

__all__ = ["Push", "Followed", "read_push", "followed", "sources_pushed", "place"]

_SCHEME = re.compile(r"^[a-z][\w+.-]*://(?:[^@/]*@)?(.*)$")  # https://user@host/path, file:///path
_SCP = re.compile(r"^[^@/:]+@([^:/]+):(.*)$")  # git@github.com:owner/name
_URLS = ("html_url", "clone_url", "ssh_url", "git_url", "svn_url", "url")


@dataclass(frozen=True)
class Push:
    """A push: the repository (its full name and the places it is cloned from) and the ref pushed."""

    repo: str  # owner/name
    places: frozenset[str]  # the repository's URLs, as `place` reads them
    ref: str  # refs/heads/main, refs/tags/v1
    deleted: bool  # the push deleted the branch or tag


@dataclass(frozen=True)
class Followed:
    """A source that names its upstream: its name, its `repo`, and the refs it (and its translation) follow."""

    name: str
    repo: str
    refs: tuple[str, ...]


def followed(sources_dir: Path) -> list[Followed]:
    """The sources of `sources_dir/sources.toml` that give a `repo` ([] when there is no manifest to read)."""
    try:
        with open(Path(sources_dir) / "sources.toml", "rb") as file:
            tables = tomllib.load(file).get("source", [])
    except (OSError, tomllib.TOMLDecodeError):
        return []
    found = []
    for table in tables if isinstance(tables, list) else []:
        if not isinstance(table, dict) or not table.get("repo"):
            continue
        refs = [str(table.get("ref", ""))]
        other = table.get("translation")
        if isinstance(other, dict) and other.get("path"):
            refs.append(str(other.get("ref") or refs[0]))
        found.append(Followed(str(table.get("name", "")), str(table["repo"]), tuple(dict.fromkeys(refs))))
    return found


def place(url: str) -> str:
    """Where a repository URL points, scheme, user, `.git`, trailing slash and case aside."""
    text = url.strip().lower().rstrip("/").removesuffix(".git")
    found = _SCHEME.match(text) or _SCP.match(text)
    if found is None:
        return text
    return found[1] if found.re is _SCHEME else f"{found[1]}/{found[2]}"


def read_push(body: bytes) -> Push:
    """The push delivered in `body`; BadGitHubEvent naming the field when it is not GitHub's shape."""
    payload = payload_of(body)
    repo, ref = payload.get("repository"), payload.get("ref")
    if not isinstance(repo, dict) or not isinstance(repo.get("full_name"), str):
        raise BadGitHubEvent("repository.full_name: missing, or not text")
    if not isinstance(ref, str):
        raise BadGitHubEvent("ref: missing, or not text")
    urls: list[Any] = [repo.get(name) for name in _URLS]
    return Push(
        repo["full_name"],
        frozenset(place(u) for u in urls if isinstance(u, str) and u),
        ref,
        bool(payload.get("deleted")),
    )


def _refs(ref: str) -> tuple[str, ...]:
    """The refs a push names that a source's `ref` follows."""
    return (ref, f"refs/heads/{ref}", f"refs/tags/{ref}")


def sources_pushed(push: Push, sources: list[Followed]) -> tuple[list[str], str]:
    """The names of the sources `push` moves, and, when there are none, why."""
    if push.deleted:
        return [], f"{push.ref} was deleted"
    same = [s for s in sources if place(s.repo) in push.places]
    if not same:
        return [], f"no source in sources.toml names {push.repo} as its repo"
    moved = [s.name for s in same if any(push.ref in _refs(ref) for ref in s.refs if ref)]
    if not moved:
        follows = ", ".join(sorted({f"{s.name}: {'/'.join(s.refs)}" for s in same}))
        return [], f"{push.ref} is not the ref its sources follow ({follows})"
    return moved, ""
