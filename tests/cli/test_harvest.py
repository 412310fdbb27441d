"""`kb harvest`: drafts from gh's JSON printed as JSON lines and nothing else, from GitHub's API (a stand-in on a
loopback port: tests/support/github_issues.py) paged, incremental and through a rate limit, kept for /insights; its
issues or its Discussions, with the harvest's own settings, with or without the GitHub bot registered."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from kb.insights import InsightsStore, store_path
from tests.support.cli import _environment, kb
from tests.support.github_issues import IssuesStandIn, discussion
from tests.support.paths import ROOT

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
    assert sorted(k.draft.number for k in store.drafts.all()) == [1, 4]
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


def test_a_thread_that_is_not_utf_8_is_refused_on_its_own_with_one_line_and_the_rest_harvested(tmp_path: Path) -> None:
    """A lone surrogate (`\\ud800` in the JSON) in one thread's body, bytes that are not UTF-8 in another's title: each
    refused with one line naming it, no traceback, and every other thread harvested as without them."""
    threads = json.loads(FIXTURE.read_text(encoding="utf-8"))
    whole = kb("harvest", "--from", str(FIXTURE), "--dry-run", "--json", data_dir=tmp_path / "data")
    made = {json.loads(line)["url"] for line in whole.stdout.splitlines()}
    chosen = [i for i, t in enumerate(threads) if t["url"] in made][:2]
    text = json.dumps(threads, ensure_ascii=False)
    first, second = (threads[i] for i in chosen)
    text = text.replace(json.dumps(first["body"], ensure_ascii=False), json.dumps(first["body"] + "\ud800"), 1)
    raw = text.encode("utf-8").replace(
        second["title"].encode("utf-8"), second["title"].encode("utf-8") + b"\xff\xfe", 1
    )
    hostile = tmp_path / "issues.json"
    hostile.write_bytes(raw)
    done = kb("harvest", "--from", str(hostile), "--dry-run", "--json", data_dir=tmp_path / "data")
    assert done.returncode == 0, done.stderr
    refused = [line for line in done.stderr.splitlines() if "refused" in line]
    assert refused == [
        f"kb harvest: {hostile}[{chosen[0]}]: refused, its body (character {len(first['body']) + 1}: a lone surrogate, "
        "or bytes that are not UTF-8) is not UTF-8 text",
        f"kb harvest: {hostile}[{chosen[1]}]: refused, its title (character {len(second['title']) + 1}: a lone "
        "surrogate, or bytes that are not UTF-8) is not UTF-8 text",
    ]
    assert "Traceback" not in done.stderr
    kept = {json.loads(line)["url"] for line in done.stdout.splitlines()}
    assert kept == made - {first["url"], second["url"]}


def test_from_reads_at_most_limit_threads_saying_so_and_its_progress_on_stderr(tmp_path: Path) -> None:
    done = kb("harvest", "--from", str(FIXTURE), "--dry-run", "--limit", "20", data_dir=tmp_path / "data")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert f"kb harvest: --from {FIXTURE}: 150 threads; the first 20 read (--limit)" in lines
    assert any(line.startswith("kb harvest: threads read ") and "/20" in line for line in lines), lines
    assert "read 20 threads" in done.stdout
    refused = kb("harvest", "--from", str(FIXTURE), "--limit", "0", data_dir=tmp_path / "data")
    assert refused.returncode == 2 and "--limit: invalid _positive value" not in refused.stderr
    assert "'0': a whole number of threads, 1 or more" in refused.stderr


def test_repo_stops_at_an_empty_page_whatever_its_link_says(tmp_path: Path, serve: Callable[..., Any]) -> None:
    """A stand-in for GitHub (a real HTTP server on a loopback port) that lists empty pages, each naming a next."""
    api = IssuesStandIn(serve)
    api.empty_pages = True
    env = {"KB_GITHUB_API_URL": api.url, "KB_GITHUB_TOKEN": "ghp_test"}
    done = kb("harvest", "--repo", "THUDM/slime", "--dry-run", data_dir=tmp_path / "data", **env)
    assert done.returncode == 0, done.stderr
    assert "read 0 threads" in done.stdout and len(api.calls) == 1


def test_repo_gives_up_at_its_deadline_keeping_nothing(tmp_path: Path, serve: Callable[..., Any]) -> None:
    """A slow stand-in for GitHub (a real HTTP server on a loopback port): a harvest given 3 s ends within them, with
    one line saying how far it got, and remembers no harvest (the next asks for everything again)."""
    api = IssuesStandIn(serve, per_page_cap=1)
    for n in range(1, 30):
        api.add(n, f"How do I set option number {n}?", ANSWER, f"2026-01-{n:02d}T00:00:00Z")
    api.slow = 0.4
    env = {"KB_GITHUB_API_URL": api.url, "KB_GITHUB_TOKEN": "ghp_test"}
    started = time.monotonic()
    done = kb("harvest", "--repo", "THUDM/slime", "--deadline", "3", data_dir=tmp_path / "data", **env)
    took = time.monotonic() - started
    assert done.returncode == 2 and took < 3 + 1.5, took
    [said] = [line for line in done.stderr.splitlines() if line.startswith("kb: error:")]
    assert "the harvest took over its deadline of 3 s" in said and "nothing was kept" in said
    assert not (tmp_path / "data" / "harvest.json").exists()


def test_repo_discussions_harvests_the_answered_discussions_and_remembers_them_apart(
    tmp_path: Path, serve: Callable[..., Any]
) -> None:
    api = IssuesStandIn(serve)
    api.discussions.append(discussion(7, "How do I resume training from a checkpoint?", ANSWER, "2026-02-01T00:00:00Z"))
    env = {"KB_HARVEST_API_URL": api.url, "KB_HARVEST_TOKEN": "ghp_harvest"}
    done = kb("harvest", "--repo", "THUDM/slime", "--discussions", data_dir=tmp_path / "data", **env)
    assert done.returncode == 0, done.stderr
    assert "read 1 threads, chose 1, made 1 drafts" in done.stdout and set(api.tokens) == {"Bearer ghp_harvest"}
    kept = json.loads((tmp_path / "data" / "harvest.json").read_text(encoding="utf-8"))
    assert list(kept) == ["THUDM/slime discussions"]  # the issues' last harvest is another
    wrong = kb("harvest", "--from", str(FIXTURE), "--discussions", data_dir=tmp_path / "data")
    assert wrong.returncode == 2 and "--discussions: only with --repo" in wrong.stderr


# `kb` with the GitHub bot's line taken out of the registry before the settings are composed: no KB_GITHUB_* setting.
_UNREGISTERED = """
import json, sys
from server.channels import registry
registry.CHANNELS = tuple(c for c in registry.CHANNELS if c.name != "github")
from kbcli.cli import main
from server.settings import ServerSettings
code = main(["harvest", "--repo", "THUDM/slime", "--dry-run", "--json"])
loaded = sorted(m for m in sys.modules if m.startswith("server.channels.github."))
print(json.dumps({"code": code, "loaded": loaded, "bot": hasattr(ServerSettings(), "github_token")}), file=sys.stderr)
"""


def test_repo_harvests_with_the_github_channel_not_registered(tmp_path: Path, serve: Callable[..., Any]) -> None:
    """With its own settings (KB_HARVEST_*), and with the GitHub bot's variables deployments set before: each reaches
    the stand-in (a real HTTP server on a loopback port) with its token, and nothing of the bot's code is loaded."""
    api = IssuesStandIn(serve)
    api.add(1, "How do I resume training from a checkpoint?", ANSWER, "2026-01-02T00:00:00Z")
    for given, token in (
        ({"KB_HARVEST_API_URL": api.url, "KB_HARVEST_TOKEN": "ghp_harvest"}, "ghp_harvest"),
        ({"KB_GITHUB_API_URL": api.url, "KB_GITHUB_TOKEN": "ghp_bot"}, "ghp_bot"),
    ):
        api.tokens.clear()
        done = subprocess.run(
            [sys.executable, "-c", _UNREGISTERED],
            cwd=ROOT,
            env=_environment(tmp_path / "data", given),
            capture_output=True,
            text=True,
            timeout=300,
        )
        said = json.loads(done.stderr.strip().splitlines()[-1])
        assert said["code"] == 0, done.stderr
        assert [json.loads(line)["number"] for line in done.stdout.splitlines()] == [1]
        assert said["bot"] is False and said["loaded"] == ["server.channels.github.settings"]  # its declaration's
        assert set(api.tokens) == {f"Bearer {token}"}


def test_confirmed_drafts_only_answers_someone_confirmed_by_flag_or_setting(tmp_path: Path) -> None:
    every = kb("harvest", "--from", str(FIXTURE), "--dry-run", "--json", data_dir=tmp_path / "data")
    kinds = [json.loads(line)["signals"]["answer"] for line in every.stdout.splitlines()]
    assert "last_before_close" in kinds and "thanked" in kinds
    flag = kb("harvest", "--from", str(FIXTURE), "--confirmed", "--dry-run", "--json", data_dir=tmp_path / "data")
    setting = kb(
        "harvest",
        "--from",
        str(FIXTURE),
        "--dry-run",
        "--json",
        data_dir=tmp_path / "data",
        KB_HARVEST_EVIDENCE="confirmed",
    )
    for done in (flag, setting):
        assert done.returncode == 0, done.stderr
        confirmed = [json.loads(line)["signals"]["answer"] for line in done.stdout.splitlines()]
        assert confirmed and set(confirmed) <= {"thanked", "accepted", "endorsed"}
        assert len(confirmed) == sum(kind != "last_before_close" for kind in kinds)
    wrong = kb("harvest", "--from", str(FIXTURE), "--dry-run", data_dir=tmp_path / "data", KB_HARVEST_EVIDENCE="sure")
    assert wrong.returncode != 0 and "KB_HARVEST_EVIDENCE" in wrong.stderr and "sure" in wrong.stderr
