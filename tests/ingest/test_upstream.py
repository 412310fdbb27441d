"""The edits `kb sync` makes to a maintainer's sources.toml: only the values it sets change, in place."""

from __future__ import annotations

import difflib
import tomllib

from ingest.upstream import edit_manifest, moved_url

HAND_WRITTEN = """\
# Our FAQs, kept in step with upstream by `kb sync`.
[site]
name = "Team knowledge base"

[[source]]
# the team's own FAQ
ref = "main"          # the branch we follow
name = 'team'
repo = "https://git.example.org/team/faq"
path = 'docs/faq.md'  # in the repository
file = "team.md"
version = "unsynced"  # kb sync moves this
title = { zh = "团队常见问题", en = "Team FAQ" }
lang = "en"

[source.translation]   # the Chinese page
file = "team.zh.md"
lang = "zh"
translated_by = "maintainers"
stale = [
  "team-1111",  # reviewed next week
  "team-2222",
]
reviewed = true

[[source]]
name = "infra"
file = "infra.md"
title = "Infra"
lang = "en"
"""


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_only_the_version_line_changes_when_that_is_all_that_moved() -> None:
    fields = {"version": "2026-01-02 (4f2a9c1)", "url": "", "path": "docs/faq.md"}
    after = edit_manifest(HAND_WRITTEN, "team", fields)
    assert changed_lines(HAND_WRITTEN, after) == [
        '-version = "unsynced"  # kb sync moves this',
        '+version = "2026-01-02 (4f2a9c1)"  # kb sync moves this',
    ]


def test_a_key_the_table_lacks_goes_after_its_last_key_and_an_empty_one_is_not_written() -> None:
    after = edit_manifest(HAND_WRITTEN, "team", {"url": "https://git.example.org/team/faq/blob/4f2a9c1/docs/faq.md"})
    lines = after.splitlines()
    assert lines[lines.index('lang = "en"') + 1] == 'url = "https://git.example.org/team/faq/blob/4f2a9c1/docs/faq.md"'
    assert len(changed_lines(HAND_WRITTEN, after)) == 1
    assert edit_manifest(HAND_WRITTEN, "infra", {"url": "", "version": ""}) == HAND_WRITTEN
    assert tomllib.loads(after)["source"][0]["url"].endswith("/docs/faq.md")


def test_a_list_over_several_lines_is_replaced_whole_and_the_rest_kept() -> None:
    after = edit_manifest(HAND_WRITTEN, "team", {"stale": ["team-1111", "team-3333"]}, translation=True)
    assert changed_lines(HAND_WRITTEN, after) == [
        "-stale = [",
        '-  "team-1111",  # reviewed next week',
        '-  "team-2222",',
        "-]",
        '+stale = ["team-1111", "team-3333"]',
    ]
    parsed = tomllib.loads(after)
    assert parsed["source"][0]["translation"] == {
        "file": "team.zh.md",
        "lang": "zh",
        "translated_by": "maintainers",
        "stale": ["team-1111", "team-3333"],
        "reviewed": True,
    }
    assert edit_manifest(HAND_WRITTEN, "team", {"stale": ["team-1111", "team-2222"]}, translation=True) == HAND_WRITTEN


def test_a_moved_link_percent_encodes_the_path_as_the_pinned_links_do() -> None:
    """A file under "User Guides/" is linked as "User%20Guides/", on GitHub and elsewhere, as a browser sends it."""
    path = "docs_roll/docs/User Guides/Hardware Support/ascend_npu_faq.md"
    github = moved_url("", "https://github.com/alibaba/ROLL", "abc123", path)
    assert (
        github
        == "https://github.com/alibaba/ROLL/blob/abc123/docs_roll/docs/User%20Guides/Hardware%20Support/ascend_npu_faq.md"
    )
    gitea = moved_url(
        "https://git.example.org/team/faq/src/blob/old/docs/faq.md", "https://git.example.org/team/faq", "abc123", path
    )
    assert gitea == (
        "https://git.example.org/team/faq/src/blob/abc123/docs_roll/docs/User%20Guides/Hardware%20Support/ascend_npu_faq.md"
    )
    assert moved_url("", "https://github.com/alibaba/ROLL", "abc123", "docs/qa.md").endswith("/blob/abc123/docs/qa.md")
