"""Folds by question and by repository (kb/folds.py): no repository's questions on both sides of a fold."""

from __future__ import annotations

from kb.evaluate import EvalQuery
from kb.folds import fold, grouped_fold, repository


def test_grouped_folds_keep_each_repository_on_one_side() -> None:
    urls = [f"https://github.com/{repo}/issues/{n}" for repo in ("THUDM/slime", "alibaba/ROLL") for n in range(20)]
    queries = [EvalQuery(f"q{i}", "q", (), "en", url) for i, url in enumerate(urls)]
    assert {repository(q) for q in queries} == {"thudm/slime", "alibaba/roll"}
    for repo in ("thudm/slime", "alibaba/roll"):
        assert len({grouped_fold(q, 5) for q in queries if repository(q) == repo}) == 1
    written = [EvalQuery(f"w{i}", "q", (), "en") for i in range(40)]
    assert len({grouped_fold(q, 5) for q in written}) > 1  # a written question is its own


def test_a_question_is_in_one_fold_of_as_many_as_asked() -> None:
    queries = [EvalQuery(f"q{i}", "q", (), "en") for i in range(50)]
    assert {fold(q, 5) for q in queries} == set(range(5))
    assert [fold(q, 5) for q in queries] == [fold(q, 5) for q in queries]


def test_a_tracker_url_outside_github_is_its_host_and_path() -> None:
    query = EvalQuery("q", "q", (), "en", "https://gitee.com/owner/repo/issues/7#note")
    assert repository(query) == "https://gitee.com/owner/repo"
