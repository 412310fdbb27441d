"""What the labelled thread fixtures (tests/data/harvest/unseen.json, heldout.json) share: the label vocabulary and
how an issue URL is read, renamed repositories folded together."""

from __future__ import annotations

import re

CATEGORIES = {
    "resolved", "open", "no_answer", "stale", "stale_answered", "not_planned", "duplicate", "non_maintainer",
    "self_resolved", "asker_is_maintainer", "maintainer_no_answer", "unresolved", "answer_missing", "not_a_question",
    "closing_note", "contributor_answer", "feature_request", "release_request", "pr_link", "short_fix",
    "new_problem", "user_answer_confirmed",
}  # fmt: skip
POSITIVE_AUTHORS = {
    "maintainer": {"OWNER", "MEMBER", "COLLABORATOR"},
    "contributor": {"CONTRIBUTOR"},
    "user": {"NONE"},
}
# Repositories renamed on GitHub: one thread can be stored under either name.
OWNER_ALIASES = {"thudm": "zai-org", "volcengine": "verl-project"}
REPO_ALIASES = {"llama-factory": "llamafactory"}
MOVED = {
    "microsoft/deepspeed": "deepspeedai/deepspeed", "openaccess-ai-collective/axolotl": "axolotl-ai-cloud/axolotl",
    "pytorch/torchtune": "meta-pytorch/torchtune", "openllmai/openrlhf": "openrlhf/openrlhf",
}  # fmt: skip
ISSUE_URL = re.compile(r"https://github\.com/([^/\s\"]+)/([^/\s\"]+)/issues/(\d+)")
CJK = re.compile(r"[\u4e00-\u9fff]")


def _repo_and_number(url: str) -> tuple[str, int]:
    found = ISSUE_URL.fullmatch(url.strip().rstrip("/"))
    assert found, f"not a GitHub issue URL: {url!r}"
    owner, repo, number = found.group(1).lower(), found.group(2).lower(), int(found.group(3))
    name = f"{OWNER_ALIASES.get(owner, owner)}/{REPO_ALIASES.get(repo, repo)}"
    return MOVED.get(name, name), number
