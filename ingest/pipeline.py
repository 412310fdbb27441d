"""The ingest pipeline: parse the sources, embed the entries (cached), write the index."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from kb.adapter import QueryAdapter
from kb.duplicates import Duplicate, EntryVectors, IntendedPair, find_duplicates, with_intended
from kb.embedding import Embedder, open_embedder
from kb.embedding_cache import EmbeddingCache, embed_with_cache
from kb.entries import Entry
from kb.errors import IndexMissing, IndexUnreadable, SourceError
from kb.glossary import load_glossary
from kb.index import IndexMeta, read_adapter, read_index, write_index
from kb.learning import LearnedQuestion, load_learned
from kb.search import searched_text
from kb.settings import Settings
from kb.staleness import BACKGROUND_PATH, SourceDirs, folder_names, index_is_stale, source_dirs, sources_hash

from .intended import load_intended
from .manifest import MANIFEST_NAME, load_site
from .sources import read_sources

__all__ = [
    "BuildReport",
    "SourceSummary",
    "build_index",
    "sources_hash",
    "index_is_stale",
    "indexed_sources",
    "BACKGROUND_PATH",
    "SHIPPED_ADAPTER",
]

# A query adapter kept beside the sources it was fitted for (`kb tune --output`), as the shipped FAQs keep theirs.
SHIPPED_ADAPTER = "query-adapter.npz"

Progress = Callable[[str, int, int], None]  # (stage, done, total)
QUESTION_VECTORS = False


@dataclass(frozen=True)
class SourceSummary:
    """One source as an index holds it: what `kb ingest` reports."""

    name: str
    title: str
    entries: int
    languages: tuple[str, ...]
    file: str = ""


def summarize(entries: Iterable[Entry]) -> tuple[SourceSummary, ...]:
    """The sources of these entries, in first-seen order, with their entry counts and languages."""
    first: dict[str, Entry] = {}
    counts: dict[str, int] = {}
    langs: dict[str, set[str]] = {}
    for e in entries:
        first.setdefault(e.source, e)
        counts[e.source] = counts.get(e.source, 0) + 1
        langs.setdefault(e.source, set()).update(e.languages)
    return tuple(
        SourceSummary(name, e.source_title_in("en"), counts[name], tuple(sorted(langs[name])), e.file)
        for name, e in first.items()
    )


def indexed_sources(index_dir: Path) -> tuple[SourceSummary, ...] | None:
    """The sources of the index at `index_dir` (read from its entries), or None when there
    is none or it cannot be read."""
    try:
        with open(Path(index_dir) / "entries.jsonl", encoding="utf-8") as f:
            return summarize(Entry.from_dict(json.loads(line)) for line in f)
    except (OSError, ValueError, TypeError):
        return None


@dataclass(frozen=True)
class BuildReport:
    meta: IndexMeta
    entries: int
    embedded: int  # passages computed now; the rest came from the cache
    seconds: float
    passages: int = 0  # vectors in the index: one per language of each entry
    warnings: tuple[str, ...] = ()  # translated entries that may not match their original; alternates of no entry
    sources: tuple[SourceSummary, ...] = ()  # what the new index holds
    replaced: tuple[SourceSummary, ...] | None = None  # what the index it replaced held (None: there was none)
    alternates: int = 0  # learned questions that are alternates of an entry
    not_covered: int = 0  # learned questions the FAQ does not cover
    adapter: str = ""  # where the build's query adapter came from, or why it has none
    duplicates: tuple[Duplicate, ...] = ()  # near-duplicate entries, those the manifests mark intended too
    paired: dict[str, Entry] = field(default_factory=dict)  # the entries those pairs name, by id


def background_sentences(path: Path = BACKGROUND_PATH) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def build_index(
    settings: Settings,
    sources_dir: SourceDirs | None = None,
    progress: Progress | None = None,
    sync: dict[str, Any] | None = None,
    folders: SourceDirs | None = None,
) -> BuildReport:
    """Parse, embed and write a new index from one directory of sources or several, and the
    answers written on the insights page (`settings.written_path`); on any error the previous
    index stays as it was. `sync` is kept with the build (`kb sync`'s record); `folders`, the
    folders the build records as read from (default: those read; `kb sync` reads staged copies)."""
    started = time.perf_counter()
    sources_dir = source_dirs(sources_dir or settings.sources_dir)
    recorded = folder_names(folders if folders is not None else sources_dir)
    parsed = read_sources(sources_dir, settings.written_path)  # the answers written on /insights too
    entries = parsed.entries
    learned, learned_warnings = learned_questions(sources_dir, entries)
    # The Q&A files' alternates and not-covered rows, then the TOML files'.
    learned, learned_warnings = parsed.learned + learned, parsed.warnings + learned_warnings
    replaced = indexed_sources(settings.index_dir)
    embedder = open_embedder(settings.embed_model)
    vectors = _embed_build(settings, embedder, entries, learned, progress)
    duplicates, duplicate_warnings = near_duplicates(sources_dir, entries, vectors.of_entries(entries), parsed.intended)
    warnings = (
        _pair_warnings(entries, vectors.passages, vectors.owners) + tuple(learned_warnings) + tuple(duplicate_warnings)
    )
    adapter, adapter_note = adapter_for(settings, sources_dir, entries, embedder.model)
    meta = write_index(
        settings.index_dir,
        entries,
        vectors.passages,
        vectors.background,
        embedder.model,
        sources_hash(sources_dir),
        owners=vectors.owners,
        learned=learned,
        learned_vectors=vectors.learned,
        site=site_of(sources_dir),
        adapter=adapter,
        duplicates=duplicates,
        sync=sync,
        folders=recorded,
    )
    covered = sum(1 for q in learned if q.entry is not None)
    paired = {i for d in duplicates for i in (d.first, d.second)}
    return BuildReport(
        meta,
        len(entries),
        vectors.embedded,
        time.perf_counter() - started,
        len(vectors.owners),
        warnings,
        summarize(entries),
        replaced,
        alternates=covered,
        not_covered=len(learned) - covered,
        adapter=adapter_note,
        duplicates=tuple(duplicates),
        paired={e.id: e for e in entries if e.id in paired},
    )


def passage_texts(entries: list[Entry]) -> tuple[np.ndarray, list[str]]:
    """The texts an entry's vectors are made of, grouped by entry, with the entry each belongs to.

    Each language's whole text first: a question meets the version it is closest to. With
    QUESTION_VECTORS, each language's question alone too. Entries carry their glossary
    equivalents (see kb/glossary.py); a query is embedded as typed."""
    glossary = load_glossary()
    versions = [(i, glossary.gloss(v.text)) for i, entry in enumerate(entries) for v in entry.versions()]
    if QUESTION_VECTORS:
        versions += [(i, glossary.gloss(v.question)) for i, entry in enumerate(entries) for v in entry.versions()]
        versions.sort(key=lambda pair: pair[0])  # stable: per entry, whole texts before questions
    return np.array([i for i, _ in versions], dtype=np.int64), [text for _, text in versions]


@dataclass(frozen=True)
class BuildVectors:
    """What a build embeds: the passages, the background sentences, the learned questions, and the questions
    and background as a search embeds them (what near-duplicates are found by)."""

    passages: np.ndarray
    owners: np.ndarray  # the entry each passage belongs to
    embedded: int  # passages computed now; the rest came from the cache
    background: np.ndarray
    learned: np.ndarray
    asked: np.ndarray
    background_asked: np.ndarray

    def of_entries(self, entries: list[Entry]) -> EntryVectors:
        """The vectors near-duplicate entries are found by."""
        return EntryVectors.of_build(
            entries, self.passages, self.owners, self.asked, self.background, self.background_asked
        )


def _embed_build(
    settings: Settings,
    embedder: Embedder,
    entries: list[Entry],
    learned: list[LearnedQuestion],
    progress: Progress | None,
) -> BuildVectors:
    """Embed what a build needs, through the embedding cache, with each stage's progress (a first ingest
    embeds for minutes on a busy machine)."""

    def step(stage: str) -> Callable[[int, int], None] | None:
        return (lambda done, total: progress(stage, done, total)) if progress else None

    owners, texts = passage_texts(entries)
    glossary = load_glossary()
    cache = EmbeddingCache(settings.cache_dir / "embeddings.sqlite", embedder.model)
    try:
        vectors, embedded = embed_with_cache(embedder, texts, cache, step("embed"))
        background, _ = embed_with_cache(
            embedder, [glossary.gloss(s) for s in background_sentences()], cache, step("background")
        )
        # A learned question is embedded as the question a search embeds, so that asking it again meets it.
        learned_vectors, _ = embed_with_cache(
            embedder, [searched_text(q.question) for q in learned], cache, step("learned"), queries=True
        )
        asked, background_asked = asked_vectors(
            embedder, entries, cache, step("questions"), step("background questions")
        )
    finally:
        cache.close()
    return BuildVectors(vectors, owners, embedded, background, learned_vectors, asked, background_asked)


def adapter_for(
    settings: Settings, sources_dirs: list[Path], entries: list[Entry], model: str
) -> tuple[QueryAdapter | None, str]:
    """The query adapter a new build carries, and a line saying where it came from or why there is none.

    An adapter fits a build embedded by its model that holds every source it was fitted for:
    the very same sources, or those and more (the shipped FAQs and a few entries of one's own,
    `--with-shipped --sources DIR`: the shipped adapter still maps questions for the shipped
    entries, and the line says which sources it has not learned). Of those found (the previous
    build's, one kept beside the sources), the one fitted for the most of the build's sources,
    then last, is carried: `kb tune` refits from what the build holds.
    """
    sources = sorted({e.source for e in entries})
    found: list[tuple[QueryAdapter, str]] = []
    for folder in sources_dirs:
        path = folder / SHIPPED_ADAPTER
        if path.exists():
            try:
                found.append((QueryAdapter.load(path), str(path)))
            except (OSError, ValueError) as exc:
                raise SourceError(path, f"not a query adapter ({exc})") from None
    try:
        previous = read_adapter(settings.index_dir)
    except (IndexMissing, IndexUnreadable):
        previous = None  # no previous build, or none that can be read: nothing to carry
    if previous is not None:
        found.append((previous, "the previous build"))
    fitting = [(a, where) for a, where in found if a.model == model and _fitted_for(a, sources)]
    if not fitting:
        if found:
            return None, "none: the adapters found were fitted for other sources or another model; run `kb tune`"
        return None, ""
    adapter, where = max(
        fitting, key=lambda pair: (len(pair[0].about.get("sources", ())), str(pair[0].about.get("fitted_at", "")))
    )
    note = (
        f"fitted {adapter.about.get('fitted_at', '?')} on {adapter.about.get('questions', 0)} questions, from {where}"
    )
    unlearned = [name for name in sources if name not in adapter.about.get("sources", ())]
    if unlearned:
        note += f"; not on {', '.join(unlearned)}: `kb tune` refits it on every source"
    return adapter, note


def _fitted_for(adapter: QueryAdapter, sources: list[str]) -> bool:
    """Whether `adapter` was fitted for some of `sources` and none besides."""
    fitted = adapter.about.get("sources")
    return isinstance(fitted, list) and bool(fitted) and set(fitted) <= set(sources)


def site_of(sources_dirs: list[Path]) -> dict[str, dict[str, str]]:
    """The site's name and tagline the folders' manifests give: each from the last folder that
    gives it (a folder of one's own after the shipped FAQs names the site)."""
    site: dict[str, dict[str, str]] = {}
    for folder in sources_dirs:
        site |= load_site(folder)
    return site


def asked_vectors(
    embedder: Embedder,
    entries: list[Entry],
    cache: EmbeddingCache,
    progress: Callable[[int, int], None] | None = None,
    background_progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each version's question (in `Entry.versions()` order) and every sixth background
    sentence, embedded as a search embeds a question: what near-duplicates are found by.

    The background's 100 questions give the questions' origin (`kb.duplicates`): the mean of
    all 600 moves no shipped pair's score by more than 0.002, at six times the cost of a
    first ingest (a minute on 2 busy cores)."""
    asked = [searched_text(v.question) for entry in entries for v in entry.versions()]
    questions, _ = embed_with_cache(embedder, asked, cache, progress, queries=True)
    background = [searched_text(s) for s in background_sentences()[::6]]
    return questions, embed_with_cache(embedder, background, cache, background_progress, queries=True)[0]


def built_entry_vectors(settings: Settings) -> tuple[list[Entry], EntryVectors]:
    """The entries of the build at `settings.index_dir` and their vectors as ingest finds
    near-duplicates by (the questions from the embedding cache, embedded where missing)."""
    index = read_index(settings.index_dir)
    embedder = open_embedder(settings.embed_model)
    cache = EmbeddingCache(settings.cache_dir / "embeddings.sqlite", embedder.model)
    try:
        asked, background_asked = asked_vectors(embedder, index.entries, cache)
    finally:
        cache.close()
    vectors = EntryVectors.of_build(
        index.entries, index.vector_matrix(), index.rows.owners, asked, index.background, background_asked
    )
    return index.entries, vectors


def near_duplicates(
    sources_dirs: list[Path], entries: list[Entry], vectors: EntryVectors, in_files: Sequence[IntendedPair] = ()
) -> tuple[list[Duplicate], list[str]]:
    """The near-duplicate entries (`kb.duplicates`), those the folders' manifests (and `in_files`, the
    Q&A files' rows) mark intended said so, and a warning for each mark that names no entry or a pair not found."""
    marks = [mark for folder in sources_dirs for mark in load_intended(folder / MANIFEST_NAME)] + list(in_files)
    return with_intended(find_duplicates(entries, vectors), marks, entries, vectors)


def learned_questions(sources_dirs: list[Path], entries: list[Entry]) -> tuple[list[LearnedQuestion], list[str]]:
    """The learned questions kept in the source folders, and a warning for each alternate of no entry."""
    known = {e.id for e in entries}
    learned: list[LearnedQuestion] = []
    warnings: list[str] = []
    for folder in sources_dirs:
        found, said = load_learned(folder, known)
        learned += found
        warnings += said
    return learned, warnings


def _pair_warnings(entries: list[Entry], vectors: np.ndarray, owners: np.ndarray) -> tuple[str, ...]:
    """A line for each translated entry whose nearest translated entry of its document, in embedding
    space, is another's, when exchanging the two entries' translations would pair them better (the
    sum of the two pairs' similarities higher): the two files may have drifted apart (an entry added
    to one only shifts every pair after it, two swapped entries swap their pairs). Two questions on
    one topic may sit nearer each other's translation than their own ("HCCL communication timeout"
    and "cross-node NPU communication timeout"), but not both at once. Measured on the 75 shipped
    pairs: exchanging any entry's translation with that of the other entry nearest it lowers the sum
    by 0.035 or more; with each entry paired with the next one's translation, 68 of the 69 such pairs
    warn (as many as the nearest alone found), and any two neighbours swapped warn."""
    first = np.searchsorted(owners, np.arange(len(entries)))  # each entry's first row: its own language
    warnings = []
    by_source: dict[str, list[int]] = {}
    for i, entry in enumerate(entries):
        if entry.translations:
            by_source.setdefault(entry.source, []).append(i)
    for members in by_source.values():
        originals = vectors[first[members]]
        translated = vectors[first[members] + 1]
        similarity = originals @ translated.T
        for row, i in enumerate(members):
            nearest = int(np.argmax(similarity[row]))
            exchanged = similarity[row, nearest] + similarity[nearest, row]
            if nearest != row and exchanged > similarity[row, row] + similarity[nearest, nearest]:
                e, other = entries[i], entries[members[nearest]].translations[0]
                warnings.append(
                    f"{e.id}: {e.question!r} is paired by position with {e.translations[0].question!r}, "
                    f"but {other.question!r} is nearer to it; check that both files list the same questions in the same order"
                )
    return tuple(warnings)
