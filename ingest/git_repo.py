"""A source's upstream Git repository, read with the `git` command: fetched into a bare mirror
under the data directory, a ref resolved to one commit, a file read at that commit.

The `git` command rather than a Python library: it reaches every repository the deployer's
own `git` reaches (https with their credential helper, ssh with their keys, `file://`), and
it follows renames (`git diff --find-renames`) as the rest of their tools do. Every branch and
tag is fetched with `+` (forced), so a force-pushed branch or a moved tag is read as it is now.

No value from the manifest can become an option of `git`: each comes after `--end-of-options`
(the manifest check refuses a `repo` or `ref` starting with `-` besides: ingest/manifest.py), the
`ext::` and `fd::` transports (which run commands) are refused by configuration whatever the
deployer's own says, and a file is measured (`git cat-file -s`) before it is read, so a file past
KB_SYNC_MAX_FILE_BYTES is never read into memory.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from kb.errors import SyncFailed

__all__ = ["Repository", "GIT_TIMEOUT"]

GIT_TIMEOUT = 300.0  # seconds a fetch may take before the sync gives up on the repository
_REFS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
_END = "--end-of-options"  # what follows is an argument, never an option (git 2.24 and later)
# Transports that run a command of the URL's choosing are never used, whatever the deployer's configuration says.
_HARDENED = ("-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never")


class Repository:
    """The mirror of one upstream repository, named after its URL, for the source `source`."""

    def __init__(self, url: str, cache: Path, source: str, max_bytes: int = 0):
        self.url, self.source, self.max_bytes = url, source, max_bytes  # max_bytes: the largest file read (0: any)
        self.mirror = Path(cache) / f"{hashlib.sha1(url.encode('utf-8')).hexdigest()[:16]}.git"

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        env = os.environ | {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}  # never wait for a password; English errors
        try:
            done = subprocess.run(
                ["git", *_HARDENED, "--git-dir", str(self.mirror), *args],
                capture_output=True,
                env=env,
                timeout=GIT_TIMEOUT,
            )
        except FileNotFoundError:
            raise SyncFailed(self.source, "the `git` command is not installed") from None
        except subprocess.TimeoutExpired:
            raise SyncFailed(self.source, f"{self.url} did not answer within {GIT_TIMEOUT:.0f} s") from None
        if check and done.returncode != 0:
            raise SyncFailed(self.source, f"git {args[0]} {self.url}: {_last_line(done.stderr)}")
        return done

    def fetch(self) -> None:
        """Bring every branch and tag of the upstream into the mirror (made on first use)."""
        if not (self.mirror / "HEAD").exists():
            self.mirror.mkdir(parents=True, exist_ok=True)
            self._git("init", "--bare", "--quiet")
        self._git("fetch", "--quiet", "--force", "--prune", "--no-tags", _END, self.url, *_REFS)

    def resolve(self, ref: str) -> str:
        """The commit `ref` (a branch, tag or commit) names in the mirror; a commit no branch holds is fetched by itself."""
        for attempt in range(2):
            done = self._git("rev-parse", "--verify", "--quiet", _END, f"{ref}^{{commit}}", check=False)
            if done.returncode == 0:
                return done.stdout.decode().strip()
            if attempt == 0:
                if self._git("fetch", "--quiet", _END, self.url, ref, check=False).returncode != 0:
                    break
        raise SyncFailed(self.source, f"ref {ref!r} is no branch, tag or commit of {self.url}")

    def read(self, commit: str, path: str) -> bytes | None:
        """The file at `path` in `commit`, or None when the commit has none there; SyncFailed, before it is read,
        when it is larger than `max_bytes`."""
        sized = self._git("cat-file", "-s", _END, f"{commit}:{path}", check=False)
        if sized.returncode != 0:
            return None
        size = int(sized.stdout.decode().strip() or 0)
        if self.max_bytes and size > self.max_bytes:
            raise SyncFailed(
                self.source,
                f"{self.url} {path!r} at {commit[:7]} is {size:,} bytes, more than KB_SYNC_MAX_FILE_BYTES "
                f"({self.max_bytes:,})",
            )
        done = self._git("cat-file", "blob", _END, f"{commit}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None

    def date(self, commit: str) -> str:
        """The day `commit` was committed, as YYYY-MM-DD."""
        return self._git("show", "-s", "--format=%cs", _END, commit).stdout.decode().strip()

    def renamed(self, old: str, new: str, path: str) -> str | None:
        """Where the file at `path` in commit `old` is in commit `new`, when it was moved; None when it was not
        (or `old` is not in the mirror: a commit no branch holds any more)."""
        done = self._git("diff", "--find-renames", "--name-status", "-z", _END, old, new, check=False)
        if done.returncode != 0:
            return None
        fields = done.stdout.decode("utf-8", "replace").split("\0")
        i = 0
        while i < len(fields) - 1:
            status = fields[i]
            if status.startswith(("R", "C")):
                if fields[i + 1] == path and status.startswith("R"):
                    return fields[i + 2]
                i += 3
            else:
                i += 2
        return None


def _last_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else "failed"
