"""The links' JSON (`/admin/links`): questions a maintainer tied to the entry that answers them, or marked not covered."""

from __future__ import annotations

import time
from typing import cast

from pydantic import BaseModel, Field, model_validator

from kb.insights.taught_links import Link

from .schemas import CleanText, Lang, Origin

__all__ = ["LinkIn", "LinkOut", "LinksOut", "link_out", "MAX_LINK_QUESTION"]

MAX_LINK_QUESTION = 20_000  # characters sent; the question linked is checked against KB_MAX_QUERY_CHARS


class LinkIn(BaseModel):
    question: CleanText = Field(
        max_length=MAX_LINK_QUESTION,
        description="the question as people ask it (at most KB_MAX_QUERY_CHARS characters once trimmed); its "
        "language is detected",
    )
    entry_id: str | None = Field(
        default=None, max_length=200, description="the id of the entry that answers it (or `not_covered`)"
    )
    not_covered: bool = Field(default=False, description="true: the FAQ does not answer the question (no `entry_id`)")

    @model_validator(mode="after")
    def _one_target(self) -> "LinkIn":
        if self.not_covered == (self.entry_id is not None):
            raise ValueError('give `entry_id` (the entry that answers the question) or `"not_covered": true`, not both')
        return self


class LinkOut(BaseModel):
    id: int
    question: str
    lang: Lang
    entry_id: str | None = Field(description="the entry the question is linked to; null when not covered")
    not_covered: bool
    made_at: str = Field(description="when the link was made, ISO 8601 in UTC")
    origin: Origin
    url: str
    active: bool = Field(
        description="false once undone (`DELETE /admin/links/{id}`) or replaced by a newer link of the question"
    )
    removed_at: str | None = Field(default=None, description="when it was undone or replaced, ISO 8601 in UTC")


class LinksOut(BaseModel):
    links: list[LinkOut] = Field(description="oldest first")


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def link_out(link: Link) -> LinkOut:
    return LinkOut(
        id=link.id,
        question=link.question,
        lang=cast(Lang, link.lang),
        entry_id=link.entry,
        not_covered=link.not_covered,
        made_at=_utc(link.made_at),
        origin=cast(Origin, link.origin),
        url=link.url,
        active=link.active,
        removed_at=None if link.removed_at is None else _utc(link.removed_at),
    )
