"""Retrieval evaluation: Recall@1/@3, MRR@10 by language, and how well the system abstains.

A query set is JSON Lines: {"id", "q", "expect": [...], "lang"}, or a whole issue in place of `q`: {"id", "title",
"body", "expect": [...], "lang", "url"}, whose question is built as the GitHub bot builds it
(`kb.issue_question.question_of`). An entry is a correct hit
when a string in `expect` equals its id or occurs in its question + answer after
normalisation (lower case; whitespace, `*`, backticks and `#` removed). `expect: []` marks
a query the corpus cannot answer: the right behaviour is to abstain.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .confidence import summary
from .entries import Entry
from .errors import SourceError
from .hits import Hit, SearchResult
from .issue_question import question_of

__all__ = [
    "EvalQuery",
    "QueryOutcome",
    "EvalReport",
    "load_queries",
    "is_expected",
    "unmatched",
    "check_expected",
    "evaluate",
    "question_lines",
]

DEPTH = 10


@dataclass(frozen=True)
class EvalQuery:
    id: str
    q: str
    expect: tuple[str, ...]
    lang: str
    url: str = ""  # where a real question was asked (an issue tracker); "" for a written one
    line: int = field(default=0, compare=False)  # its line in the query file (0: not read from one)
    issue: bool = False  # a whole issue (`title` and `body`), `q` the question built of it
    title: str = ""  # a whole issue's title ("" otherwise): held out with it when its fold is (`kb.cross_validation`)

    @property
    def answerable(self) -> bool:
        return bool(self.expect)


@dataclass(frozen=True)
class QueryOutcome:
    query: EvalQuery
    rank: int | None  # 1-based rank of the first correct hit within DEPTH, None if absent
    answered: bool
    result: SearchResult = field(compare=False, repr=False)


@dataclass(frozen=True)
class Scores:
    queries: int
    recall_at_1: float
    recall_at_3: float
    mrr_at_10: float
    false_abstention: float


@dataclass(frozen=True)
class EvalReport:
    by_lang: dict[str, Scores]
    overall: Scores
    out_of_scope: int
    abstained: int  # out-of-scope queries that were correctly not answered
    outcomes: list[QueryOutcome] = field(repr=False)

    def confidence(self) -> dict[str, Any]:
        """How well the confidence tells a right first hit from a wrong one on these questions (kb.confidence.summary)."""
        return summary([o.result.confidence for o in self.outcomes], [o.rank == 1 for o in self.outcomes])

    def answering(self, threshold: float | None = None) -> dict[str, Any]:
        """The questions answered at `threshold` (None: as searched, `answered`): how many, how many
        of those had the right entry first, their precision and their share of all questions."""
        # A certain answer (confidence 1.0: asked in the entry's own words) answers at any threshold.
        said = [o.answered if threshold is None else o.result.confidence >= min(threshold, 1.0) for o in self.outcomes]
        answered = sum(said)
        right = sum(s and o.rank == 1 for s, o in zip(said, self.outcomes))
        return {
            "answered": answered,
            "right": right,
            "precision": round(right / answered, 4) if answered else None,
            "coverage": round(answered / len(self.outcomes), 4) if self.outcomes else 0.0,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": asdict(self.overall),
            "by_lang": {k: asdict(v) for k, v in self.by_lang.items()},
            "out_of_scope": {"queries": self.out_of_scope, "abstained": self.abstained},
            "confidence": self.confidence(),
            "answered": self.answering(),
            "misses": [
                {
                    "id": o.query.id,
                    "q": o.query.q,
                    "rank": o.rank,
                    "answered": o.answered,
                    "top": o.result.hits[0].entry.id if o.result.hits else None,
                }
                for o in self.outcomes
                if (o.query.answerable and (o.rank != 1 or not o.answered)) or (not o.query.answerable and o.answered)
            ],
        }


def load_queries(path: Path) -> list[EvalQuery]:
    """The queries of a JSON Lines file; SourceError naming the file (and the line) when it holds none or one is not a query."""
    queries = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise SourceError(path, "no such query file") from None
    except UnicodeDecodeError as exc:
        raise SourceError(path, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:  # a directory, a file it may not read
        raise SourceError(path, f"cannot be read ({exc.strerror or exc})") from None
    for number, line in enumerate(lines, 1):
        if line.strip():
            queries.append(_query(path, line, number))
    if not queries:
        raise SourceError(
            path, 'no queries in the file: one JSON object a line, {"id": ..., "q": ..., "expect": [...]}'
        )
    return queries


def _query(path: Path, line: str, number: int) -> EvalQuery:
    def wrong(message: str) -> SourceError:
        return SourceError(path, message, line=number)

    try:
        raw = json.loads(line)
    except ValueError as exc:
        raise wrong(f'not JSON ({exc}); a query file holds one JSON object a line, {{"id": ..., "q": ...}}') from None
    if not isinstance(raw, dict):
        raise wrong(f'a JSON {type(raw).__name__}, not a query object {{"id": ..., "q": ..., "expect": [...]}}')
    if "id" not in raw:
        raise wrong("no 'id' field")
    issue = "q" not in raw and ("title" in raw or "body" in raw)
    if issue:
        title, body = raw.get("title", ""), raw.get("body", "")
        if not isinstance(title, str) or not isinstance(body, str) or not (title.strip() or body.strip()):
            raise wrong(f"'title' {title!r} and 'body': expected an issue's title and body (text, not both empty)")
        q = question_of(title, body)
    elif "q" not in raw:
        raise wrong("no 'q' field (or 'title' and 'body' for a whole issue)")
    else:
        q = raw["q"]
    if not isinstance(q, str) or not q.strip():
        raise wrong(f"'q' is {q!r}: expected the question's text")
    expect = raw.get("expect", [])
    if not isinstance(expect, list) or not all(isinstance(e, str) for e in expect):
        raise wrong(f"'expect' is {expect!r}: expected a list of entry ids or answer texts ([] when out of scope)")
    return EvalQuery(
        str(raw["id"]),
        q,
        tuple(expect),
        str(raw.get("lang", "en")),
        str(raw.get("url", "")),
        number,
        issue,
        title.strip() if issue else "",
    )


def _squash(text: str) -> str:
    return re.sub(r"[\s*`#]+", "", text.lower())


def is_expected(entry: Entry, expect: Iterable[str]) -> bool:
    haystack = _squash(f"{entry.question}\n{entry.answer}")
    return any(e == entry.id or (_squash(e) and _squash(e) in haystack) for e in expect)


def unmatched(queries: Iterable[EvalQuery], entries: Sequence[Entry]) -> list[EvalQuery]:
    """The answerable queries whose `expect` names no entry (a typo, or an entry since removed)."""
    return [q for q in queries if q.answerable and not any(is_expected(e, q.expect) for e in entries)]


def check_expected(labelled: Sequence[tuple[str, EvalQuery]], entries: Sequence[Entry]) -> None:
    """Refuse, with a SourceError naming the file and line, a question (given with its file) whose
    `expect` names no entry of the index (a typo, an entry since removed): fitted on, it would teach
    that the right answer is none of them."""
    missing = unmatched([q for _, q in labelled], entries)
    if missing:
        path = next(path for path, q in labelled if q is missing[0])
        more = f" (and {len(missing) - 1} more questions)" if len(missing) > 1 else ""
        raise SourceError(
            path, f"'expect' {list(missing[0].expect)!r} names no entry of the index{more}", missing[0].line
        )


def _first_correct(hits: tuple[Hit, ...], expect: tuple[str, ...]) -> int | None:
    for hit in hits[:DEPTH]:
        if is_expected(hit.entry, expect):
            return hit.rank
    return None


def _scores(outcomes: list[QueryOutcome]) -> Scores:
    n = len(outcomes)
    if not n:
        return Scores(0, 0.0, 0.0, 0.0, 0.0)
    return Scores(
        queries=n,
        recall_at_1=round(sum(o.rank == 1 for o in outcomes) / n, 4),
        recall_at_3=round(sum(o.rank is not None and o.rank <= 3 for o in outcomes) / n, 4),
        mrr_at_10=round(sum(1 / o.rank for o in outcomes if o.rank) / n, 4),
        false_abstention=round(sum(not o.answered for o in outcomes) / n, 4),
    )


def evaluate(search: Callable[..., SearchResult], queries: list[EvalQuery]) -> EvalReport:
    """Run every query through `search(q, k)` (a whole issue's with `reads="issue"`) and score the results."""
    outcomes = []
    for query in queries:
        result = search(query.q, DEPTH, reads="issue") if query.issue else search(query.q, DEPTH)
        rank = _first_correct(result.hits, query.expect) if query.answerable else None
        outcomes.append(QueryOutcome(query, rank, result.answered, result))
    answerable = [o for o in outcomes if o.query.answerable]
    out_of_scope = [o for o in outcomes if not o.query.answerable]
    langs = sorted({o.query.lang for o in answerable})
    return EvalReport(
        by_lang={lang: _scores([o for o in answerable if o.query.lang == lang]) for lang in langs},
        overall=_scores(answerable),
        out_of_scope=len(out_of_scope),
        abstained=sum(not o.answered for o in out_of_scope),
        outcomes=outcomes,
    )


def question_lines(report: EvalReport, needed: dict[str, float]) -> list[dict[str, Any]]:
    """One record a question: its id, the question searched (built of a whole issue as the bot builds it), the first
    entry, the confidence, the state, whether it had the right entry first, and whether each point answers it, given
    the confidence each needs (`needed`, by the point's name: `Weights.threshold` of its precision)."""
    return [
        {
            "id": o.query.id,
            "question": o.query.q,
            "first": o.result.hits[0].entry.id if o.result.hits else None,
            "confidence": round(o.result.confidence, 4),
            "state": o.result.state,
            "right": o.rank == 1 if o.query.answerable else None,
            "answers": {name: o.result.at(threshold).answered for name, threshold in needed.items()},
        }
        for o in report.outcomes
    ]
