"""Real Git repositories for the tests of `kb sync`, made with the `git` command in a test's folder."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

__all__ = ["Upstream", "TEAM_FAQ", "team_faq", "manifest", "team_workspace"]


class Upstream:
    """A working repository standing for a FAQ's upstream: files written and committed, branches and tags moved."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch=main")

    @property
    def url(self) -> str:
        return self.folder.as_uri()

    def git(self, *args: str) -> str:
        env = {
            "GIT_AUTHOR_NAME": "FAQ author",
            "GIT_AUTHOR_EMAIL": "faq@example.org",
            "GIT_COMMITTER_NAME": "FAQ author",
            "GIT_COMMITTER_EMAIL": "faq@example.org",
            "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z",
            "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z",
            "HOME": str(self.folder),
            "PATH": "/usr/bin:/bin",
        }
        done = subprocess.run(["git", *args], cwd=self.folder, capture_output=True, text=True, env=env, check=True)
        return done.stdout.strip()

    def commit(self, message: str, files: dict[str, str]) -> str:
        """Write `files` (path -> text), commit them, and return the commit."""
        for path, text in files.items():
            target = self.folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


# A small FAQ: each `##` heading a question, in upstream's order.
TEAM_FAQ = {
    "How do I install the trainer?": "Run `pip install trainer` in a fresh virtual environment; Python 3.10 or newer "
    "is needed, and a C compiler for the fused kernels.",
    "Why does training hang at the first step?": "NCCL is waiting for a peer that never started. Check that every "
    "node can reach the master port, and set NCCL_DEBUG=INFO to see which rank is missing.",
    "How do I resume from a checkpoint?": "Pass `--load DIR` with the folder the last run saved into; the optimizer "
    "state and the data loader's position are restored with the weights.",
    "What does CUDA out of memory at the backward pass mean?": "The activations of one micro-batch do not fit. Lower "
    "the micro-batch size, or turn on activation checkpointing with `--recompute full`.",
}


def team_faq(entries: dict[str, str] = TEAM_FAQ, title: str = "Team FAQ") -> str:
    return f"# {title}\n\n" + "".join(f"## {q}\n\n{a}\n\n" for q, a in entries.items())


def manifest(repo: str, path: str = "docs/faq.md", ref: str = "main", extra: str = "") -> str:
    """A sources.toml of one source, `team`, taken from `path` of `repo` at `ref`."""
    return (
        "[[source]]\n"
        'name = "team"\n'
        'file = "team.md"\n'
        'title = "Team FAQ"\n'
        'framework = "Trainer"\n'
        'lang = "en"\n'
        'version = "unsynced"\n'
        f'url = "https://git.example.org/team/faq/blob/0000000/{path}"\n'
        f'repo = "{repo}"\n'
        f'path = "{path}"\n'
        f'ref = "{ref}"\n'
        'entries = "headings"\n' + extra
    )


def team_workspace(tmp_path: Path, cache_dir: Path) -> tuple[Upstream, Path]:
    """The team FAQ committed upstream (`tmp_path/upstream`) and a sources folder following it (`tmp_path/sources`),
    with the embedding cache of `cache_dir` copied into `tmp_path/data`, so a sync embeds nothing it need not."""
    upstream = Upstream(tmp_path / "upstream")
    upstream.commit("The team FAQ", {"docs/faq.md": team_faq()})
    shutil.copytree(cache_dir, tmp_path / "data" / "cache")
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "sources.toml").write_text(manifest(upstream.url), encoding="utf-8")
    (sources / "team.md").write_text(team_faq(), encoding="utf-8")
    return upstream, sources
