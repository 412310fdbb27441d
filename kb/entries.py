"""Sources and entries: the question-and-answer records the knowledge base is made of."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Source", "Entry", "entry_id"]


@dataclass(frozen=True)
class Source:
    """One FAQ document, as described in the sources manifest."""

    name: str  # short id: "slime", "chatlearn-v1"
    file: str  # Markdown file, relative to the manifest
    title: str
    framework: str
    lang: str  # "zh" or "en"
    version: str
    url: str  # pinned link; relative links in the text resolve against it
    live_url: str = ""
    entries: str = "headings"  # "headings" or "list"


@dataclass(frozen=True)
class Entry:
    """One question with its answer, and where it came from."""

    id: str
    question: str
    answer: str  # Markdown, links absolute
    source: str  # Source.name
    source_title: str
    source_version: str
    source_url: str  # the pinned page
    framework: str
    section: str  # heading the entry sits under ("" when none)
    url: str  # deep link: heading anchor, section anchor, or the page
    lang: str
    tags: tuple[str, ...] = field(default=())
    line: int = 0  # 1-based line of the question in the source file

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tags"] = list(self.tags)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Entry":
        data = dict(data)
        data["tags"] = tuple(data.get("tags", ()))
        return cls(**data)

    @property
    def text(self) -> str:
        """Question and answer together, as embedded and as matched by eval."""
        return f"{self.question}\n\n{self.answer}"


def entry_id(source_name: str, question: str) -> str:
    """A stable id: the same source and question give the same id after every ingest."""
    digest = hashlib.sha1(f"{source_name}\n{question.strip()}".encode("utf-8")).hexdigest()
    return f"{source_name}-{digest[:8]}"
