"""Tracker author associations: whose comments the harvest takes as answers (`KB_HARVEST_ASSOCIATIONS`)."""

from __future__ import annotations

__all__ = ["MEMBERS", "ASSOCIATIONS", "associations_of"]

MEMBERS = ("OWNER", "MEMBER", "COLLABORATOR")  # author associations of the repository's own people
ASSOCIATIONS = (*MEMBERS, "CONTRIBUTOR")  # those a maintainer may choose from


def associations_of(text: str) -> tuple[str, ...]:
    """The author associations a comma-separated list names ("OWNER,MEMBER,CONTRIBUTOR"); ValueError naming what is
    not one of `ASSOCIATIONS`."""
    found = tuple(a.strip().upper() for a in text.split(",") if a.strip())
    wrong = [a for a in found if a not in ASSOCIATIONS]
    if not found or wrong:
        raise ValueError(f"{text!r}: a comma-separated list of {', '.join(ASSOCIATIONS)}")
    return found
