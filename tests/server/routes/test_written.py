"""Answers written on /insights (server/routes/written.py): the form beside "Answered by…" and "Not covered", an answer
saved, searchable through `/api/search` once the request returns, linked to the questions it answers, edited,
removed and downloaded as an upstream FAQ entry; admin only and CSRF-safe; bad input refused naming the field.

The server is real: uvicorn on a loopback port in this process, with a data directory of its own (the session's
index linked in, so the builds it writes after a change are its own)."""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import parse_qs

import httpx
import pytest

from ingest.markdown_faq import parse_source
from kb.entries import Source
from kb.insights import InsightsStore, Question, store_path
from kb.settings import Settings
from kb.written import MAX_ANSWER, MAX_QUESTION, WrittenFile
from server import create_app
from tests.support.forms import insights_form_token as form_token
from tests.support.seeded_insights import BEARER, TOKEN

NPU = "how do I train on Huawei Ascend NPUs"  # no entry answers it
NPU_ZH = "怎么在昇腾 NPU 上训练"
ANSWER = "Set `trainer.device=npu` and install `torch_npu`:\n\n```bash\npip install torch_npu\n```"


@pytest.fixture(scope="module")
def write_settings(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    data_dir = tmp_path_factory.mktemp("write-data")
    (data_dir / "index").symlink_to(settings.index_dir)
    now = time.time()
    store = InsightsStore(store_path(data_dir))
    store.questions.add(
        [
            Question(NPU, "en", "web", False, None, 0.1, 12.0, asked_at=now - 300),
            Question(NPU_ZH, "zh", "slack", False, None, 0.1, 12.0, asked_at=now - 200),
        ]
    )
    store.close()
    return settings.with_(data_dir=data_dir, admin_token=TOKEN)


@pytest.fixture(scope="module")
def live(write_settings: Settings, serve: Callable[[Any], Any]) -> str:
    return serve(create_app(write_settings)).url


SIGNED_IN: dict[str, httpx.Cookies] = {}  # by server: one sign-in each (the sign-in form is rate limited)


@contextmanager
def signed_in(base: str, lang: str = "en") -> Iterator[httpx.Client]:
    """A client signed in to /insights with the form, as a browser is (the cookie, no bearer token)."""
    with httpx.Client(base_url=base, timeout=60, headers={"Accept-Language": lang}) as browser:
        if base in SIGNED_IN:
            browser.cookies = SIGNED_IN[base]
        else:
            token = form_token(browser)
            assert browser.post("/insights/sign-in", data={"token": TOKEN, "form_token": token}).status_code == 303
            SIGNED_IN[base] = httpx.Cookies(browser.cookies)
        yield browser


def hits(base: str, question: str) -> list[str]:
    return [h["id"] for h in httpx.get(f"{base}/api/search", params={"q": question}, timeout=30).json()["hits"]]


def fields(browser: httpx.Client, **values: Any) -> dict[str, Any]:
    return {"form_token": form_token(browser), "since": "7d", **values}


@pytest.mark.slow
def test_an_answer_written_on_the_page_is_searched_linked_edited_and_removed(
    live: str, write_settings: Settings
) -> None:
    with signed_in(live) as browser:
        page = browser.get("/insights").text
        recent = page.split('id="recent"')[1].split("</section>")[0]
        item = next(li for li in re.findall(r"<li data-text=.*?</li>", recent, re.S) if f">{NPU}</q>" in li)
        assert item.count("Write the answer") == 1 and item.count("Not covered by the FAQ") == 1
        assert "No answers written yet." in page
        gaps = page.split('id="gaps"')[1].split("</section>")[0]
        [group] = re.findall(
            r'<a class="button ghost small gap-write" href="([^"]+)">Write the answer to these</a>', gaps
        )
        assert sorted(parse_qs(unescape(group).split("?", 1)[1])["asked"]) == sorted(
            [NPU, NPU_ZH]
        )  # the group's wordings

        form = browser.get("/insights/write", params={"asked": [NPU, NPU_ZH], "since": "7d"})
        assert form.status_code == 200 and f'name="question_en" value="{NPU}"' in form.text
        assert form.text.count('name="asked"') == 2 and '<option value="roll">ROLL Q&amp;A</option>' in form.text

        answer = fields(browser, question_en="How do I train on Ascend NPUs?", answer_en=ANSWER, tags="npu, hardware")
        answer |= {"faq": "roll", "asked": [NPU, NPU_ZH]}
        saved = browser.post("/insights/write", data=answer)
        assert saved.status_code == 303 and saved.headers["location"] == "/insights?since=7d#written"
        [written] = WrittenFile(write_settings.written_path).read()
        # Searchable once the save has returned: the new build is served, and the questions it answers find it.
        assert hits(live, "train on Ascend NPUs with torch_npu")[0] == written.id
        assert hits(live, NPU_ZH)[0] == written.id
        home = httpx.get(f"{live}/", headers={"Accept-Language": "en"}).text  # its source, among the FAQs listed
        card = re.search(r'<a class="source-card" href="/search\?source=roll-written">.*?</a>', home, re.S)
        assert card and '<span class="source-card-meta">1 entry</span>' in card.group(0), card
        entry = httpx.get(f"{live}/api/entries/{written.id}").json()
        assert entry["answer"] == ANSWER and entry["source"]["name"] == "roll-written" and "npu" in entry["tags"]
        links = httpx.get(f"{live}/admin/links", headers=BEARER).json()["links"]
        assert {(link["question"], link["entry_id"]) for link in links} == {(NPU, written.id), (NPU_ZH, written.id)}

        page = browser.get("/insights?since=7d").text
        gaps = page.split('id="gaps"')[1].split("</section>")[0]
        assert NPU not in gaps and NPU_ZH not in gaps and "gap-write" not in gaps  # answered now: no gap any more
        row = re.search(rf'<tr id="written-{written.id}".*?</tr>', page, re.S).group(0)
        assert f'<a href="/entries/{written.id}">How do I train on Ascend NPUs?</a>' in row
        assert ">ROLL Q&amp;A (written by the maintainers)<" not in row and "ROLL Q&amp;A" in row
        assert '<td class="num" data-label="Questions linked">2</td>' in row
        assert f'href="/insights/written/{written.id}.md?lang=en"' in row and "?lang=zh" not in row

        snippet = browser.get(f"/insights/written/{written.id}.md", params={"lang": "en"})
        assert snippet.headers["content-disposition"] == f'attachment; filename="{written.id}.en.md"'
        assert snippet.text == f"## How do I train on Ascend NPUs?\n\n{ANSWER}\n"

        edit = browser.get(f"/insights/written/{written.id}")
        assert edit.status_code == 200 and "\npip install torch_npu\n```</textarea>" in edit.text
        changed = fields(
            browser, question_zh="如何在昇腾 NPU 上训练？", answer_zh="安装 `torch_npu`，设置 `trainer.device=npu`。"
        )
        changed |= {"question_en": "How do I train on Ascend NPUs?", "answer_en": ANSWER, "faq": "roll"}
        assert browser.post(f"/insights/written/{written.id}", data=changed).status_code == 303
        assert hits(live, "如何在昇腾 NPU 上训练？")[0] == written.id
        entry = httpx.get(f"{live}/api/entries/{written.id}", params={"lang": "zh"}).json()
        assert entry["question"] == "如何在昇腾 NPU 上训练？"
        assert [a.id for a in WrittenFile(write_settings.written_path).read()] == [written.id]  # edited in place

        removed = browser.post(f"/insights/written/{written.id}/remove", data=fields(browser))
        assert removed.status_code == 303 and removed.headers["location"] == "/insights?since=7d#written"
        assert written.id not in hits(live, "train on Ascend NPUs with torch_npu")
        assert httpx.get(f"{live}/api/entries/{written.id}").status_code == 404
        assert WrittenFile(write_settings.written_path).read() == []
        assert browser.post(f"/insights/written/{written.id}/remove", data=fields(browser)).status_code == 404


@pytest.mark.slow
def test_writing_is_for_the_admin_and_from_this_site_only(live: str, write_settings: Settings) -> None:
    answer = {"question_en": "Who may write?", "answer_en": "The admin.", "since": "7d"}
    with httpx.Client(base_url=live, timeout=60) as stranger:
        for path in ("/insights/write", "/insights/written/written-00000000", "/insights/written/written-00000000.md"):
            assert stranger.get(path, headers={"Accept": "application/json"}).status_code == 401, path
        assert stranger.post("/insights/write", data=answer, headers={"Accept": "application/json"}).status_code == 401
    with signed_in(live) as browser:
        assert browser.post("/insights/write", data={**answer, "form_token": ""}).status_code == 403
        evil = {"Origin": "https://evil.example"}
        assert browser.post("/insights/write", data=fields(browser, **answer), headers=evil).status_code == 403
        assert browser.get("/insights/written/written-00000000").status_code == 404
    assert WrittenFile(write_settings.written_path).read() == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("lang", "values", "message"),
    [
        ("en", {}, "Not saved. Question in Chinese: the question is empty; write a question and its answer"),
        ("en", {"question_en": "How?"}, "Not saved. Answer in English (Markdown): the answer is empty"),
        ("en", {"answer_zh": "答"}, "Not saved. Question in Chinese: the question is empty; write the question this"),
        (
            "en",
            {"question_en": "x" * (MAX_QUESTION + 1), "answer_en": "a"},
            f"Not saved. Question in English: {MAX_QUESTION + 1} characters long; at most {MAX_QUESTION}",
        ),
        (
            "en",
            {"question_en": "How?", "answer_en": "a" * (MAX_ANSWER + 1)},
            f"Not saved. Answer in English (Markdown): {MAX_ANSWER + 1:,} characters long; at most {MAX_ANSWER:,}",
        ),
        (
            "en",
            {"question_en": "How?", "answer_en": "a" * 50_000},
            f"Not saved. Answer in English (Markdown): 50,000 characters long; at most {MAX_ANSWER:,}",
        ),
        ("zh", {"question_zh": "怎么办？"}, "没有保存。中文答案（Markdown）：答案是空的"),
        (
            "zh",
            {"question_zh": "问" * 600, "answer_zh": "答"},
            f"没有保存。中文问题：有 600 个字符，最多 {MAX_QUESTION} 个",
        ),
        (
            "zh",
            {"question_zh": "怎么办？", "answer_zh": "这样。", "faq": "nope"},
            "没有保存。属于哪份 FAQ：没有名为 nope 的 FAQ",
        ),
    ],
)
def test_an_answer_that_cannot_be_saved_is_shown_again_naming_the_field(
    live: str, write_settings: Settings, lang: str, values: dict[str, str], message: str
) -> None:
    with signed_in(live, lang) as browser:
        refused = browser.post("/insights/write", data=fields(browser, asked=NPU, **values))
        assert refused.status_code == 422 and message in refused.text, refused.text[:3000]
        assert f'<input type="hidden" name="asked" value="{NPU}">' in refused.text  # the form as it was
    assert WrittenFile(write_settings.written_path).read() == []


def test_the_snippet_downloads_read_back_as_upstream_entries(tmp_path: Path) -> None:
    from kb.written import snippet, written_answer

    answer = written_answer({"zh": "问题？", "en": "Question?"}, {"zh": "答案。", "en": ANSWER})
    document = tmp_path / "qa.md"
    document.write_text("# FAQ\n\n" + snippet(answer, "en"), encoding="utf-8")
    [entry] = parse_source(document, Source("qa", "qa.md", "FAQ", "", "en", "", ""))
    assert (entry.question, entry.answer) == ("Question?", ANSWER)


@pytest.mark.slow
def test_a_build_that_fails_leaves_the_old_one_serving_and_the_answer_saved(
    settings: Settings, tmp_path: Path, serve: Callable[[Any], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build after a save fails (a stand-in for a full disk: `write_written` raising): the page says why, the
    build served keeps serving, the answer is kept, and the next save builds it in."""
    import server.written

    (tmp_path / "index").symlink_to(settings.index_dir)
    mine = settings.with_(data_dir=tmp_path, admin_token=TOKEN)
    base = serve(create_app(mine)).url

    def full_disk(*args: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(server.written, "write_written", full_disk)
    with signed_in(base) as browser:
        first = fields(browser, question_en="How do I get a bigger disk?", answer_en="Ask the infra team.")
        assert browser.post("/insights/write", data=first).status_code == 303
        [kept] = WrittenFile(mine.written_path).read()
        assert kept.id not in hits(base, "How do I get a bigger disk?")
        page = browser.get("/insights?since=7d").text
        assert "The index was not rebuilt (OSError: [Errno 28] No space left on device)" in page
        monkeypatch.undo()
        second = fields(browser, question_en="Where are the GPU quotas?", answer_en="In the quota sheet.")
        assert browser.post("/insights/write", data=second).status_code == 303
        assert hits(base, "How do I get a bigger disk?")[0] == kept.id
        assert "The index was not rebuilt" not in browser.get("/insights?since=7d").text


def version_of(form: str) -> str:
    found = re.search(r'<input type="hidden" name="version" value="([0-9a-f]+)">', form)
    assert found, form[:2000]
    return found.group(1)


def textarea(form: str, name: str) -> str:
    found = re.search(rf'<textarea id="{name}" name="{name}"[^>]*>(.*?)</textarea>', form, re.S)
    assert found, form[:2000]
    return unescape(found.group(1))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("lang", "message"),
    [
        ("en", "Not saved: someone saved another version of this answer after you opened this form (shown below)."),
        ("zh", "没有保存：你打开这个表单之后，有人保存了这个答案的另一个版本（见下方）。"),
    ],
)
def test_two_tabs_editing_one_answer_lose_no_edit(
    settings: Settings, tmp_path: Path, serve: Callable[[Any], Any], lang: str, message: str
) -> None:
    """Two sessions open one answer's edit form; the first saves; the second's save is refused (409) in the reader's
    language, showing the first's edit and keeping its own text in the form; saved again (merged), it goes through."""
    (tmp_path / "index").symlink_to(settings.index_dir)
    mine = settings.with_(data_dir=tmp_path, admin_token=TOKEN)
    base = serve(create_app(mine)).url
    written = WrittenFile(mine.written_path)
    with signed_in(base, lang) as first, signed_in(base, lang) as second:
        new = fields(first, question_en="How do I train on Ascend NPUs?", answer_en="Install `torch_npu`.")
        assert first.post("/insights/write", data=new).status_code == 303
        [answer] = written.read()
        tab_one, tab_two = (
            first.get(f"/insights/written/{answer.id}").text,
            second.get(f"/insights/written/{answer.id}").text,
        )
        assert version_of(tab_one) == version_of(tab_two) == answer.version

        theirs = "Install `torch_npu`, then set `trainer.device=npu`."
        one = fields(first, question_en="How do I train on Ascend NPUs?", answer_en=theirs, version=version_of(tab_one))
        assert first.post(f"/insights/written/{answer.id}", data=one).status_code == 303
        ours = "Install `torch_npu` <2.5> & check `npu-smi info`."
        two = fields(second, question_en="How do I train on Ascend NPUs?", answer_en=ours, tags="npu")
        refused = second.post(f"/insights/written/{answer.id}", data=two | {"version": version_of(tab_two)})
        assert refused.status_code == 409 and message in refused.text, refused.text[:3000]
        assert textarea(refused.text, "answer_en") == ours  # the second tab's text, kept in its form
        shown_theirs = re.search(r'<pre class="theirs-answer">(.*?)</pre>', refused.text, re.S)
        assert shown_theirs and unescape(shown_theirs.group(1)) == theirs  # the first tab's edit, shown
        [kept] = written.read()
        assert kept.answers["en"] == theirs and kept.tags == ()  # nothing of the refused save written
        assert version_of(refused.text) == kept.version  # a save now goes over the version shown

        merged = f"{theirs}\n\nCheck `npu-smi info`."
        again = second.post(
            f"/insights/written/{answer.id}", data=two | {"answer_en": merged, "version": version_of(refused.text)}
        )
        assert again.status_code == 303
        [kept] = written.read()
        assert kept.answers["en"] == merged and kept.tags == ("npu",) and kept.id == answer.id


@pytest.mark.slow
def test_an_answer_removed_while_it_is_edited_keeps_the_edit_to_save_as_a_new_answer(
    settings: Settings, tmp_path: Path, serve: Callable[[Any], Any]
) -> None:
    (tmp_path / "index").symlink_to(settings.index_dir)
    mine = settings.with_(data_dir=tmp_path, admin_token=TOKEN)
    base = serve(create_app(mine)).url
    written = WrittenFile(mine.written_path)
    with signed_in(base) as first, signed_in(base) as second:
        assert first.post("/insights/write", data=fields(first, question_en="Q?", answer_en="A.")).status_code == 303
        [answer] = written.read()
        form = second.get(f"/insights/written/{answer.id}").text
        assert first.post(f"/insights/written/{answer.id}/remove", data=fields(first)).status_code == 303
        edit = fields(second, question_en="Q?", answer_en="A, and more.", version=version_of(form))
        refused = second.post(f"/insights/written/{answer.id}", data=edit)
        assert refused.status_code == 409
        assert "Not saved: this answer was removed after you opened this form." in refused.text
        assert textarea(refused.text, "answer_en") == "A, and more."
        assert 'action="/insights/write"' in refused.text and 'name="version"' not in refused.text
        assert written.read() == []
        again = second.post("/insights/write", data=fields(second, question_en="Q?", answer_en="A, and more."))
        assert again.status_code == 303 and [a.answers["en"] for a in written.read()] == ["A, and more."]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_written_answer_forms_footer_speaks_of_the_answer_written_there(live: str, lang: str) -> None:
    with signed_in(live, lang) as browser:
        form = browser.get("/insights/write", params={"since": "7d"}).text
    footer = form.split('<footer class="site-footer">', 1)[1].split("</p>", 1)[0]
    said = {"en": "An answer written here joins this site&#39;s own FAQ", "zh": "这里写的答案加入本站自己的 FAQ"}[lang]
    assert said in footer and "framework" not in footer and "各框架" not in footer
