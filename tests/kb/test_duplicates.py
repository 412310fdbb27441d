"""Near-duplicate entries (kb/duplicates.py): found in the shipped FAQs and in a folder of one's own at
ingest, within a source and across sources, never between an entry and its translation; a manifest's
[[intended_duplicates]] mark silences a pair, and a mark that is wrong is named with its line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ingest import build_index
from ingest.pipeline import built_entry_vectors
from kb.duplicates import THRESHOLD, Duplicate, EntryVectors, find_duplicates
from kb.entries import entry_id
from kb.errors import IndexUnreadable, SourceError
from kb.index import read_index, read_meta
from kb.settings import Settings
from tests.support.duplicates_faq import ACROSS, WITHIN, intended, write_team_faqs

# Found by reading the shipped FAQs: ROLL's and ChatLearn's Megatron-to-HF conversion, and
# the notes' "save error" under QLoRA and again under LoRA.
SHIPPED_PAIRS = {
    frozenset(("roll-5af528c9", "chatlearn-8b7488c3")),
    frozenset(("training-env-72fcab3a", "training-env-2480d48b")),
}


def pairs(found: list[Duplicate]) -> set[frozenset[str]]:
    return {frozenset((d.first, d.second)) for d in found}


@pytest.fixture(scope="module")
def shipped(settings: Settings) -> tuple[list, EntryVectors]:
    """The shipped entries and their vectors as `kb ingest` finds near-duplicates by (from the session's build)."""
    return built_entry_vectors(settings)


def test_the_shipped_faqs_two_known_pairs_are_found_and_no_other(shipped) -> None:
    entries, vectors = shipped
    found = find_duplicates(entries, vectors)
    assert pairs(found) == SHIPPED_PAIRS
    assert all(d.languages == ("en", "zh") and not d.intended for d in found)


def test_the_threshold_keeps_a_margin_on_both_sides_on_the_shipped_faqs(shipped) -> None:
    """Every pair of shipped entries scored: the known ones well above the threshold, all others well below."""
    entries, vectors = shipped
    every = find_duplicates(entries, vectors, threshold=-2.0, neighbours=len(entries))
    assert len(every) == len(entries) * (len(entries) - 1) // 2  # every pair shares a language here
    known = [d.score for d in every if frozenset((d.first, d.second)) in SHIPPED_PAIRS]
    others = [d.score for d in every if frozenset((d.first, d.second)) not in SHIPPED_PAIRS]
    assert min(known) >= THRESHOLD + 0.03 and max(others) <= THRESHOLD - 0.03


def test_the_shipped_build_holds_both_pairs_marked_intended_and_nothing_to_look_at(settings: Settings) -> None:
    stored = [Duplicate.from_dict(d) for d in read_meta(settings.index_dir).duplicates]
    assert pairs(stored) == SHIPPED_PAIRS
    why = {frozenset((d.first, d.second)): d.intended for d in stored}
    assert why[frozenset(("roll-5af528c9", "chatlearn-8b7488c3"))].startswith("ROLL's and ChatLearn's FAQs each")
    assert all(d.intended for d in stored)


@pytest.fixture
def workspace(tmp_path: Path, settings: Settings) -> Settings:
    """A data directory seeded with the session's embedding cache."""
    shutil.copytree(settings.cache_dir, tmp_path / "data" / "cache")
    return Settings(data_dir=tmp_path / "data")


@pytest.mark.slow
def test_a_pair_within_a_source_and_one_across_sources_are_found_but_no_translation(tmp_path, workspace) -> None:
    report = build_index(workspace, write_team_faqs(tmp_path / "team"))
    assert pairs(list(report.duplicates)) == {frozenset(ACROSS), frozenset(WITHIN)}
    # en-faq.md is the English of zh-faq.md's first two entries, as a source of its own:
    # compared in no language, as an entry and its translation are not.
    assert not any(i.startswith("team-en-") for d in report.duplicates for i in (d.first, d.second))
    across = next(d for d in report.duplicates if {d.first, d.second} == set(ACROSS))
    assert across.languages == ("zh",) and across.score >= THRESHOLD and across.intended == ""
    assert report.warnings == ()
    # The build holds them, as /insights reads them.
    stored = [Duplicate.from_dict(d) for d in read_index(workspace.index_dir).meta.duplicates]
    assert stored == list(report.duplicates)


@pytest.mark.slow
def test_a_pair_marked_intended_is_silenced_with_its_reason(tmp_path, workspace) -> None:
    folder = write_team_faqs(tmp_path / "team", intended(*WITHIN, why="Asked both ways in the team channel"))
    report = build_index(workspace, folder)
    by_pair = {frozenset((d.first, d.second)): d for d in report.duplicates}
    assert by_pair[frozenset(WITHIN)].intended == "Asked both ways in the team channel"
    assert by_pair[frozenset(ACROSS)].intended == ""
    assert report.warnings == ()


@pytest.mark.slow
def test_a_mark_naming_no_entry_or_a_pair_not_alike_is_a_warning_with_its_line(tmp_path, workspace) -> None:
    gone, distinct = "team-00000000", (ACROSS[0], entry_id("ops", "如何重启一个节点"))  # conversion vs restarting
    folder = write_team_faqs(tmp_path / "team", intended(ACROSS[0], gone) + intended(*distinct))
    report = build_index(workspace, folder)
    manifest = folder / "sources.toml"
    lines = manifest.read_text(encoding="utf-8").splitlines()
    first, second = (n for n, line in enumerate(lines, 1) if line == "[[intended_duplicates]]")
    assert report.warnings[0] == (
        f"{manifest}:{first}: [[intended_duplicates]] names {gone}, which no entry has "
        "(an entry's id changes with its question; `kb ingest` lists the pairs it finds by id)"
    )
    assert report.warnings[1].startswith(
        f"{manifest}:{second}: {distinct[0]} and {distinct[1]} are not near-duplicates (score 0."
    )
    assert report.warnings[1].endswith(f"reported from {THRESHOLD:.2f}): the [[intended_duplicates]] mark can go")
    assert not any(d.intended for d in report.duplicates)  # neither mark silenced anything


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (f'["{ACROSS[0]}"]', f"field 'entries' must give the ids of two different entries, got ['{ACROSS[0]}']"),
        (f'["{ACROSS[0]}", " {ACROSS[0]}"]', "field 'entries' must give the ids of two different entries"),
    ],
)
def test_a_malformed_mark_is_an_error_naming_its_line_and_the_old_index_keeps_serving(
    tmp_path, workspace, entries, message
) -> None:
    folder = write_team_faqs(tmp_path / "team")
    build_index(workspace, folder)
    before = read_meta(workspace.index_dir)
    manifest = folder / "sources.toml"
    line = len(manifest.read_text(encoding="utf-8").splitlines()) + 3  # the `entries = ...` line
    manifest.write_text(
        manifest.read_text(encoding="utf-8") + f'\n[[intended_duplicates]]\nentries = {entries}\nwhy = "x"\n',
        encoding="utf-8",
    )
    with pytest.raises(SourceError) as info:
        build_index(workspace, folder)
    assert str(info.value).startswith(f"{manifest}:{line}: [[intended_duplicates]] #1: {message}")
    assert read_meta(workspace.index_dir) == before


@pytest.mark.slow
def test_a_build_whose_duplicates_are_not_pairs_is_refused_naming_the_field(tmp_path, workspace) -> None:
    build_index(workspace, write_team_faqs(tmp_path / "team"))
    meta = workspace.index_dir / "meta.json"
    data = json.loads(meta.read_text(encoding="utf-8"))
    data["duplicates"][0]["score"] = "high"
    meta.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(IndexUnreadable, match="meta.json: duplicates must be pairs of entries, each with its scores"):
        read_meta(workspace.index_dir)
