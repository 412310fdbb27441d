"""Drafts from the tracker on /insights (server/routes/harvested.py): listed the most asked first with how many came
from the tracker, accepted in one click as a written answer that links its thread (searchable once the request
returns, its other threads linked as alternates), or as alternates of the entry that answers it already, edited
first, dismissed for good; admin only and CSRF-safe.

The server is real: uvicorn on a loopback port in this process, with a data directory of its own (the session's
index linked in)."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import httpx
import pytest

from kb.harvest import Draft, ThreadQuestion
from kb.insights import InsightsStore, store_path
from kb.settings import Settings
from kb.written import WrittenFile
from server import create_app
from tests.support.cli import kb
from tests.support.forms import insights_form_token as form_token
from tests.support.seeded_insights import BEARER, TOKEN

THREAD = "https://github.com/THUDM/slime/issues/{}"
NPU_ANSWER = "Use the `mindspeed` backend image and pass `--device npu`; see the Ascend guide.\n\n```bash\nslime train --device npu\n```"


def draft(number: int, question: str, answer: str, asked: tuple[ThreadQuestion, ...] = (), entry_id: str = "") -> Draft:
    return Draft(
        repo="THUDM/slime", number=number, url=THREAD.format(number), kind="issue", question=question, answer=answer,
        signals={"answer": "thanked", "by": "MEMBER"}, closed_at=1_760_000_000.0 + number, alternates=asked,
        entry_id=entry_id, answer_author="zhuzilin",
    )  # fmt: skip


DRAFTS = [
    draft(
        11,
        "How do I run slime on Huawei Ascend NPUs?\n\nWe have 910B cards; can slime train on them?",
        NPU_ANSWER,
        (
            ThreadQuestion("slime 能在昇腾 NPU 上训练吗", THREAD.format(12), 12),
            ThreadQuestion("does slime support ascend npu", THREAD.format(13), 13),
        ),
    ),  # fmt: skip
    draft(21, "Where does slime write its wandb logs?", "Set `--wandb-dir`; the default is the save directory."),
    draft(
        31, "Why is my tokenizer's pad token missing in slime?", "Add `--pad-token` or set it in the tokenizer config."
    ),
    draft(
        41,
        "How to continue from a checkpoint",
        "Pass `--load`.",
        (ThreadQuestion("resume from ckpt", THREAD.format(42), 42),),
        entry_id="slime-b0ab398d",
    ),
]


@pytest.fixture(scope="module")
def harvest_settings(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    data_dir = tmp_path_factory.mktemp("harvest-data")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep(DRAFTS)
    store.close()
    return settings.with_(data_dir=data_dir, admin_token=TOKEN)


@pytest.fixture(scope="module")
def live(harvest_settings: Settings, serve: Callable[[Any], Any]) -> str:
    return serve(create_app(harvest_settings)).url


@contextmanager
def signed_in(base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, timeout=60, headers={"Accept-Language": "en"}) as browser:
        token = form_token(browser)
        assert browser.post("/insights/sign-in", data={"token": TOKEN, "form_token": token}).status_code == 303
        yield browser


def section(page: str) -> str:
    return page.split('id="harvested"')[1].split("</section>")[0]


def decide(browser: httpx.Client, action: str, number: int) -> httpx.Response:
    data = {"form_token": form_token(browser), "since": "7d", "repo": "THUDM/slime", "number": str(number)}
    return browser.post(f"/insights/harvested/{action}", data=data)


@pytest.mark.slow
def test_drafts_are_accepted_in_one_click_edited_or_dismissed(live: str, harvest_settings: Settings) -> None:
    with signed_in(live) as browser:
        listed = section(browser.get("/insights").text)
        assert re.findall(r'data-harvested="([^"]+)"', listed) == [
            "THUDM/slime#11",
            "THUDM/slime#41",
            "THUDM/slime#31",
            "THUDM/slime#21",
        ]
        assert "Entries from the tracker: 0; drafts accepted 0, dismissed 0, waiting 4." in listed
        assert listed.count('data-action="accept"') == 4 and "Add as alternate questions" in listed

        accepted = decide(browser, "accept", 11)
        assert accepted.status_code == 303 and accepted.headers["location"] == "/insights?since=7d#harvested"
        [written] = WrittenFile(harvest_settings.written_path).read()
        assert (
            written.questions == {"en": "How do I run slime on Huawei Ascend NPUs?"}
            and written.answers["en"] == NPU_ANSWER
        )
        assert written.faq == "slime" and written.extra["url"] == THREAD.format(11)
        found = httpx.get(f"{live}/api/search", params={"q": "run slime on Ascend NPU"}).json()["hits"][0]
        assert found["id"] == written.id
        entry = httpx.get(f"{live}/api/entries/{written.id}").json()
        assert entry["url"] == THREAD.format(11)
        links = httpx.get(f"{live}/admin/links", headers=BEARER).json()["links"]
        assert {(link["question"], link["entry_id"], link["origin"], link["url"]) for link in links} == {
            (
                "How do I run slime on Huawei Ascend NPUs?\n\nWe have 910B cards; can slime train on them?",
                written.id,
                "tracker",
                THREAD.format(11),
            ),  # the body's wording, beside the title that heads the entry
            ("slime 能在昇腾 NPU 上训练吗", written.id, "tracker", THREAD.format(12)),
            ("does slime support ascend npu", written.id, "tracker", THREAD.format(13)),
        }
        assert decide(browser, "accept", 11).status_code == 303  # a second click decides nothing more
        assert len(WrittenFile(harvest_settings.written_path).read()) == 1

        assert decide(browser, "accept", 41).status_code == 303  # an entry answers it: its questions become alternates
        links = httpx.get(f"{live}/admin/links", headers=BEARER).json()["links"]
        assert {(link["question"], link["url"]) for link in links if link["entry_id"] == "slime-b0ab398d"} == {
            ("How to continue from a checkpoint", THREAD.format(41)),
            ("resume from ckpt", THREAD.format(42)),
        }

        assert decide(browser, "dismiss", 21).status_code == 303
        form = browser.get("/insights/harvested/edit", params={"repo": "THUDM/slime", "number": 31, "since": "7d"})
        assert 'name="harvested" value="THUDM/slime#31"' in form.text and "Add `--pad-token`" in form.text
        saved = browser.post(
            "/insights/write",
            data={
                "form_token": form_token(browser), "since": "7d", "harvested": "THUDM/slime#31", "faq": "slime",
                "question_en": "Why is the pad token missing?", "answer_en": "Add `--pad-token`.",
            },
        )  # fmt: skip
        assert saved.status_code == 303
        edited = next(a for a in WrittenFile(harvest_settings.written_path).read() if a.id != written.id)
        assert edited.questions["en"] == "Why is the pad token missing?" and edited.extra["url"] == THREAD.format(31)

        exported = harvest_settings.data_dir / "export.jsonl"  # in `kb export`, its thread and alternates with it
        assert kb("export", str(exported), "--learned", data_dir=harvest_settings.data_dir).returncode == 0
        row = next(
            r for r in map(json.loads, exported.read_text(encoding="utf-8").splitlines()) if r["id"] == written.id
        )
        assert row["url"] == THREAD.format(11)
        assert f"does slime support ascend npu <{THREAD.format(13)}>" in row["alternates"]

        listed = section(browser.get("/insights").text)
        assert 'data-harvested="' not in listed and "No drafts waiting." in listed
        assert "Entries from the tracker: 2; drafts accepted 3, dismissed 1, waiting 0." in listed
    store = InsightsStore(store_path(harvest_settings.data_dir))
    store.drafts.keep(DRAFTS)  # harvested again: the decided threads are not offered again
    assert store.drafts.all() == []
    store.close()


def test_deciding_needs_the_admin_and_the_page_form_token(live: str) -> None:
    data = {"repo": "THUDM/slime", "number": "21", "since": "7d"}
    assert httpx.post(f"{live}/insights/harvested/dismiss", data=data).status_code in (401, 403)
    with signed_in(live) as browser:
        assert browser.post("/insights/harvested/dismiss", data=data).status_code == 403  # no form token
        missing = browser.post(
            "/insights/harvested/dismiss", data=data | {"number": "999", "form_token": form_token(browser)}
        )
        assert missing.status_code == 404


@pytest.mark.slow
def test_a_draft_edited_in_two_tabs_becomes_one_answer_and_the_second_keeps_its_text(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[[Any], Any]
) -> None:
    """Two tabs open one draft's edit form and both save: the first accepts it as a written answer; the second is
    refused (409), saying the draft was accepted meanwhile and naming the answer, its own text still in the form
    (no second answer accepting the same thread); saved again it is a new answer of its own."""
    data_dir = tmp_path_factory.mktemp("harvest-tabs")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep([DRAFTS[2]])
    store.close()
    mine = settings.with_(data_dir=data_dir, admin_token=TOKEN)
    base = serve(create_app(mine)).url
    written = WrittenFile(mine.written_path)
    query = {"repo": "THUDM/slime", "number": 31, "since": "7d"}
    with signed_in(base) as first, signed_in(base) as second:
        assert first.get("/insights/harvested/edit", params=query).status_code == 200
        assert second.get("/insights/harvested/edit", params=query).status_code == 200
        form = {
            "since": "7d",
            "harvested": "THUDM/slime#31",
            "faq": "slime",
            "question_en": "Why is the pad token missing?",
        }
        one = first.post(
            "/insights/write", data=form | {"form_token": form_token(first), "answer_en": "Add `--pad-token`."}
        )
        assert one.status_code == 303
        [accepted] = written.read()
        ours = "Set `pad_token` in the tokenizer config."
        two = second.post("/insights/write", data=form | {"form_token": form_token(second), "answer_en": ours})
        assert two.status_code == 409
        assert (
            "Not saved: the draft from the tracker THUDM/slime#31 was accepted after you opened this form." in two.text
        )
        assert f'data-became="{accepted.id}"' in two.text and f"It became {accepted.id}" in two.text
        assert ours in two.text and 'name="harvested"' not in two.text  # the text kept; a save now is a new answer
        assert [a.id for a in written.read()] == [accepted.id]
        again = second.post(
            "/insights/write", data=form | {"form_token": form_token(second), "answer_en": ours, "harvested": ""}
        )
        assert again.status_code == 303 and len(written.read()) == 2


@pytest.mark.slow
def test_accept_clicked_in_two_tabs_at_once_makes_one_answer(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[[Any], Any]
) -> None:
    data_dir = tmp_path_factory.mktemp("harvest-clicks")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep([DRAFTS[1]])
    store.close()
    mine = settings.with_(data_dir=data_dir, admin_token=TOKEN)
    base = serve(create_app(mine)).url
    with signed_in(base) as first, signed_in(base) as second:
        with ThreadPoolExecutor(max_workers=4) as pool:
            clicks = list(pool.map(lambda tab: decide(tab, "accept", 21), [first, second, first, second]))
    assert [click.status_code for click in clicks] == [303] * 4
    assert len(WrittenFile(mine.written_path).read()) == 1


def test_a_draft_the_llm_condensed_is_marked_so(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> None:
    from fastapi.testclient import TestClient

    data_dir = tmp_path_factory.mktemp("harvest-condensed")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    condensed = draft(61, "Why does NCCL time out at rank 3?\n\nHow do I stop the timeout?", "Raise `--nccl-timeout`.")
    store.drafts.keep([condensed, draft(62, "Where does slime keep its logs?", "Under `--save`.")])
    signals = json.dumps({"answer": "thanked", "condensed": "llm", "model": "qwen3-32b"})
    with store.db.transaction() as db:
        db.execute("UPDATE harvested_drafts SET signals = ? WHERE number = 61", (signals,))
    store.close()
    with TestClient(create_app(settings.with_(data_dir=data_dir, admin_token=TOKEN))) as client:
        for lang, words in (("en", "Condensed from a long thread by a language model (qwen3-32b)"), ("zh", "由语言模型（qwen3-32b）从长帖概括")):  # fmt: skip
            page = section(client.get("/insights", headers={**BEARER, "Accept-Language": lang}).text)
            rows = page.split('data-harvested="')[1:]
            assert [row.split('"', 1)[0] for row in rows if "data-condensed" in row] == ["THUDM/slime#61"]
            assert words in page


def test_each_draft_says_how_its_answer_was_chosen(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every kind of choice the harvest's rules make is named on the page, in both languages."""
    from fastapi.testclient import TestClient

    from kb.harvest.rules import ANSWER_KINDS

    data_dir = tmp_path_factory.mktemp("harvest-kinds")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep(
        [draft(70 + i, f"Question {kind} about slime?", "Pass `--load`.") for i, kind in enumerate(ANSWER_KINDS)]
    )
    with store.db.transaction() as db:
        for i, kind in enumerate(ANSWER_KINDS):
            db.execute(
                "UPDATE harvested_drafts SET signals = ? WHERE number = ?", (json.dumps({"answer": kind}), 70 + i)
            )
    store.close()
    words = {
        "en": ("the accepted answer", "the one the asker thanked", "the one the maintainers said is right", "the last maintainer answer before the close"),
        "zh": ("已采纳的回答", "提问者致谢的回答", "维护者认可的回答", "关闭前维护者的最后回答"),
    }  # fmt: skip
    with TestClient(create_app(settings.with_(data_dir=data_dir, admin_token=TOKEN))) as client:
        for lang, said in words.items():
            response = client.get("/insights", headers={**BEARER, "Accept-Language": lang})
            assert response.status_code == 200
            rows = {row.split('"', 1)[0]: row for row in section(response.text).split('data-harvested="')[1:]}
            for i, how in enumerate(said):
                assert how in rows[f"THUDM/slime#{70 + i}"], (lang, ANSWER_KINDS[i])
