"""The backtracking analysis (tests/support/redos.py) finds the shapes known to be superlinear in Python's `re`, as
it runs them, and passes the shapes the project writes to read each run once."""

from __future__ import annotations

import re

import pytest

from tests.support.redos import attacks

OLD_FENCE = r"(?:^|(?<=\s))```([\w+#.-]*)\s(.*?)\s*```(?=\s|$)"  # 11.8 s at 65,536 characters of "```a"


@pytest.mark.parametrize(
    ("pattern", "how", "degree"),
    [
        (r"\s+x", "finditer", 2),  # from each space of a run, to its end
        (r"<!--.*?-->", "finditer", 2),  # an opening never closed, repeated
        (OLD_FENCE, "finditer", 3),
        (r"(!?\[[^\[\]\n]*\]\()(\s*)(<[^>\n]*>|[^\s()<>]+)", "finditer", 2),  # 3.0 s at 65,536 of "[](<"
        (r"a*a*b", "match", 2),
        (r"(a+)+b", "match", 11),
        (r"(?m)^\s*x", "finditer", 2),  # `^` after every newline of a run of them
    ],
)
def test_a_superlinear_pattern_is_found_with_its_degree(pattern: str, how: str, degree: int) -> None:
    found = attacks(re.compile(pattern), how)
    assert found and found[0].degree == degree, [str(a) for a in found]


@pytest.mark.parametrize(
    ("pattern", "how"),
    [
        (r"\s+", "finditer"),
        (r"(?<!\s)\s+x", "finditer"),  # a run entered at its start only
        (r"(?:^|(?<=\s))```([\w+#.-]*+)\s", "finditer"),
        (r"```(?=\s|$)", "finditer"),
        (r"(!?\[[^\[\]\n]*\]\()(\s*)(<[^<>\n]*+>|[^\s()<>]+)", "finditer"),
        (r"a*+a*b", "match"),  # a possessive repeat gives nothing back
        (r"a*b", "match"),
        (r"(?m)^ *x", "finditer"),
        (r"\bfoo\w*x", "finditer"),
    ],
)
def test_a_linear_pattern_is_passed(pattern: str, how: str) -> None:
    assert [str(a) for a in attacks(re.compile(pattern), how)] == []
