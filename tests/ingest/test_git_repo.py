"""`kb sync`'s use of `git` against a hostile manifest: no `repo` or `ref` becomes an option or a command, and the
manifest check refuses such values with one line naming the file, the source and the field. Real `git`, real
local repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.git_repo import Repository
from ingest.sync import sync
from kb.errors import SourceError, SyncFailed
from kb.settings import Settings
from tests.support.git_repos import Upstream, manifest, team_faq


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    repo = Upstream(tmp_path / "upstream")
    repo.commit("The team FAQ", {"docs/faq.md": team_faq()})
    return repo


def hostile(tmp_path: Path) -> list[tuple[str, str, Path]]:
    """(repo, ref, the file each would create if git ran it as a command)."""
    made = [tmp_path / f"pwned-{n}" for n in range(5)]
    return [
        ("{url}", f"--upload-pack=touch {made[0]} #", made[0]),
        (f"--upload-pack=touch {made[1]}", "main", made[1]),
        (f"ext::sh -c touch% {made[2]}", "main", made[2]),
        (f"ssh://-oProxyCommand=touch%20{made[3]}/x", "main", made[3]),
        ("{url}", f"--output={made[4]}", made[4]),
    ]


def test_git_never_takes_a_repo_or_ref_for_an_option(tmp_path: Path, upstream: Upstream) -> None:
    """Even past the manifest check (a library caller), git reads each value as a repository or a ref."""
    for repo, ref, made in hostile(tmp_path):
        mirror = Repository(repo.format(url=upstream.url), tmp_path / "mirrors", "team")
        with pytest.raises(SyncFailed):
            mirror.fetch()
            mirror.resolve(ref)
        assert not made.exists(), (repo, ref)


def test_the_manifest_check_refuses_them_naming_file_source_and_field(tmp_path: Path, upstream: Upstream) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "team.md").write_text(team_faq(), encoding="utf-8")
    ours = Settings(data_dir=tmp_path / "data", sources_dir=sources)
    for repo, ref, made in hostile(tmp_path):
        text = manifest(repo.format(url=upstream.url), ref=ref.replace("\\", "\\\\"))
        (sources / "sources.toml").write_text(text, encoding="utf-8")
        field = "ref" if ref != "main" else "repo"
        line = 9 if field == "repo" else 11
        with pytest.raises(SourceError) as raised:
            sync(ours)
        message = str(raised.value)
        assert message.startswith(f"{sources / 'sources.toml'}:{line}: source 'team': field '{field}': "), message
        assert len(message.splitlines()) == 1
        assert not made.exists()


def test_a_translation_ref_is_checked_too(tmp_path: Path, upstream: Upstream) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "team.md").write_text(team_faq(), encoding="utf-8")
    (sources / "team.zh.md").write_text(team_faq(), encoding="utf-8")
    extra = '\n[source.translation]\nfile = "team.zh.md"\nlang = "zh"\npath = "docs/faq.zh.md"\nref = "-x"\n'
    (sources / "sources.toml").write_text(manifest(upstream.url, extra=extra), encoding="utf-8")
    with pytest.raises(SourceError, match=r"sources.toml:18: source 'team', \[source.translation\]: field 'ref': '-x'"):
        sync(Settings(data_dir=tmp_path / "data", sources_dir=sources))


def test_ordinary_refs_and_repos_pass(tmp_path: Path, upstream: Upstream) -> None:
    from ingest.upstream import load_upstreams

    sources = tmp_path / "sources"
    sources.mkdir()
    for repo, ref in [
        ("https://github.com/alibaba/ROLL", "v0.3.0"),
        ("git@github.com:THUDM/slime.git", "main"),
        ("ssh://git@git.example.org:2222/team/faq.git", "release/2026-01"),
        (upstream.url, "248875a0c4b1e2f3a4b5c6d7e8f9a0b1c2d3e4f5"),
    ]:
        (sources / "sources.toml").write_text(manifest(repo, ref=ref), encoding="utf-8")
        (found,) = load_upstreams(sources)
        assert (found.repo, found.ref) == (repo, ref)
