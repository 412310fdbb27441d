"""Folds: which held-out fold a labelled question falls in, by the question or by its repository.

Folds by question (`fold`) spread each question at random; folds by repository (`grouped_fold`)
keep every question of one repository on one side, as a tracker the knowledge base has never
seen meets it. A written question (no URL) is its own repository.
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable

from .evaluate import EvalQuery

__all__ = ["FoldOf", "fold", "grouped_fold", "repository"]

FoldOf = Callable[[EvalQuery, int], int]

_REPOSITORY_URL = re.compile(r"https?://(?:www\.)?github\.com/([^/]+/[^/#?]+)")


def fold(query: EvalQuery, folds: int) -> int:
    """The question's fold, by a hash of its id."""
    return int(hashlib.sha1(query.id.encode()).hexdigest(), 16) % folds


def repository(query: EvalQuery) -> str:
    """The repository a real question was asked in (`owner/name` of its GitHub URL, else the URL's
    host and path); a written question (no URL) is its own."""
    if not query.url:
        return "written:" + query.id
    match = _REPOSITORY_URL.match(query.url[:2000])
    return match.group(1).lower() if match else query.url.split("#")[0].rsplit("/", 2)[0]


def grouped_fold(query: EvalQuery, folds: int) -> int:
    """A fold by the question's repository: no repository's questions on both sides of a fold."""
    return int(hashlib.sha1(repository(query).encode()).hexdigest(), 16) % folds
