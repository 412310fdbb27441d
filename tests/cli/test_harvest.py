"""`kb harvest`: drafts from gh's JSON printed as JSON lines and nothing else, from GitHub's API (a stand-in on a
loopback port: tests/support/github_issues.py) paged, incremental and through a rate limit, kept for /insights."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from kb.insights import InsightsStore, store_path
from tests.support.cli import kb
from tests.support.github_issues import IssuesStandIn

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "harvest" / "threads.json"
ANSWER = "Pass `--load` with the directory `--save` wrote; the rollout id resumes from the checkpoint."


def test_dry_run_json_prints_one_draft_a_line_and_nothing_else(tmp_path: Path) -> None:
    done = kb("harvest", "--from", str(FIXTURE), "--dry-run", "--json", data_dir=tmp_path / "data")
    assert done.returncode == 0, done.stderr
    drafts = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(drafts) >= 15
    for draft in drafts:
        assert {"number", "url", "question", "answer", "signals"} <= draft.keys()
        assert draft["url"].startswith("https://github.com/") and draft["question"] and draft["answer"]
    by_url = {d["url"]: d for d in drafts}
    assert by_url["https://github.com/THUDM/slime/issues/39"]["signals"]["by"] == "MEMBER"
    assert not (tmp_path / "data" / "insights.sqlite").exists()  # a dry run keeps nothing


def test_a_file_that_is_not_threads_is_one_line_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "issues.json"
    bad.write_text('[{"number": 1, "title": "x"}, {"title": "no number"}]', encoding="utf-8")
    done = kb("harvest", "--from", str(bad), "--dry-run", data_dir=tmp_path / "data")
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"kb: error: {bad}[1].number: None is not an issue or Discussion number"
    ]
    missing = kb("harvest", "--from", str(tmp_path / "nope.json"), data_dir=tmp_path / "data")
    assert missing.returncode == 2 and "nope.json" in missing.stderr


def test_repo_harvests_through_the_api_pages_waits_out_a_rate_limit_and_asks_only_for_what_changed(
    tmp_path: Path, serve: Callable[..., Any]
) -> None:
    api = IssuesStandIn(serve)
    api.add(1, "How do I resume training from a checkpoint?", ANSWER, "2026-01-02T00:00:00Z")
    api.add(2, "Add a critic", ANSWER, "2026-01-02T00:00:00Z", pull=True)
    api.add(
        3,
        "Why is the reward zero?",
        "It is not planned, but you could check your reward function first.",
        "2026-01-03T00:00:00Z",
        reason="not_planned",
    )
    api.add(
        4,
        "How do I set the global batch size?",
        "It is the samples of one train step: rollout_batch_size * n_samples_per_prompt / global_batch_size steps.",
        "2026-01-04T00:00:00Z",
    )
    api.limited = 1
    data = tmp_path / "data"
    env = {"KB_GITHUB_API_URL": api.url, "KB_GITHUB_TOKEN": "ghp_test"}
    first = kb("harvest", "--repo", "THUDM/slime", data_dir=data, **env)
    assert first.returncode == 0, first.stderr
    assert "read 3 threads, chose 2, made 2 drafts; left 1 closed as not_planned" in first.stdout
    listed = [query for path, query in api.calls if path.endswith("/issues")]
    assert listed[0]["state"] == "closed" and "since" not in listed[0] and {q.get("page") for q in listed} >= {"2"}
    assert set(api.tokens) == {"Bearer ghp_test"}
    store = InsightsStore(store_path(data))
    assert sorted(k.draft.number for k in store.drafts()) == [1, 4]
    store.close()

    api.calls.clear()
    api.add(
        5,
        "How do I convert a checkpoint to Hugging Face?",
        "Run tools/convert_torch_dist_to_hf.py with the --input-dir of the iteration you want.",
        "2099-01-01T00:00:00Z",
    )
    second = kb("harvest", "--repo", "THUDM/slime", "--dry-run", "--json", data_dir=data, **env)
    since = [query.get("since") for path, query in api.calls if path.endswith("/issues")][0]
    kept = json.loads((data / "harvest.json").read_text(encoding="utf-8"))["THUDM/slime"]
    assert since == kept and [json.loads(line)["number"] for line in second.stdout.splitlines()] == [5]


def test_an_api_that_refuses_is_one_line(tmp_path: Path, serve: Callable[..., Any]) -> None:
    api = IssuesStandIn(serve)
    done = kb("harvest", "--repo", "not a repo", data_dir=tmp_path / "data", KB_GITHUB_API_URL=api.url)
    assert done.returncode == 2 and "--repo 'not a repo': expected OWNER/NAME" in done.stderr


def test_a_github_out_of_reach_says_to_harvest_gh_json_with_from(tmp_path: Path) -> None:
    # A loopback port nothing listens on: the connection is refused, as offline.
    done = kb("harvest", "--repo", "THUDM/slime", data_dir=tmp_path / "data", KB_GITHUB_API_URL="http://127.0.0.1:9")
    assert done.returncode == 2, done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    assert "GitHub could not be reached (ConnectError" in line and "--from FILE" in line and "gh issue list" in line
