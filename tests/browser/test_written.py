"""Writing the answer on /insights in a real browser (headless Chromium against uvicorn on loopback), in Chinese and
in English: "Write the answer" beside a question the FAQ could not answer, the form refusing an empty answer by
name, the answer saved and found by the search page, then edited, downloaded as an upstream entry and removed."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import pytest

from kb.insights import InsightsStore, Question, store_path
from kb.settings import Settings
from kb.written import WrittenFile, written_answer
from server import create_app
from tests.support.browser import DESKTOP, sign_in
from tests.support.seeded_insights import TOKEN

ASKED = {
    "zh": "怎么在昇腾 NPU 上跑 GRPO 训练",
    "en": "how do I run GRPO training on Ascend NPUs",
}  # no entry answers them
WRITTEN = {
    "zh": ("如何在昇腾 NPU 上训练？", "安装 `torch_npu`，再设置 `trainer.device=npu`。"),
    "en": ("How do I train on Ascend NPUs?", "Install `torch_npu`, then set `trainer.device=npu`."),
}
TEXTS = {
    "zh": {"write": "写答案", "refused": "没有保存。中文答案（Markdown）：答案是空的", "edit": "编辑", "remove": "删除"},
    "en": {"write": "Write the answer", "refused": "Not saved. Answer in English (Markdown): the answer is empty",
           "edit": "Edit", "remove": "Remove"},
}  # fmt: skip


@pytest.fixture(scope="module")
def live(settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[[Any], Any]) -> tuple[str, Any]:
    data_dir = tmp_path_factory.mktemp("write-browser")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    now = time.time()
    store.questions.add(
        [Question(q, lang, "web", False, None, 0.1, 12.0, asked_at=now - 60) for lang, q in ASKED.items()]
    )
    store.close()
    app = create_app(settings.with_(data_dir=data_dir, admin_token=TOKEN))
    return serve(app).url, app


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_writing_editing_and_removing_an_answer_in_a_browser(
    admin_tab: Callable[..., Any], lang: str, artifacts: Path, tmp_path: Path
) -> None:
    t = admin_tab(viewport=DESKTOP, locale="zh-CN" if lang == "zh" else "en-US", accept_downloads=True)
    page = sign_in(t, TOKEN)
    texts, (question, answer) = TEXTS[lang], WRITTEN[lang]
    item = page.locator("#recent li[data-text]", has=page.locator(f"q:text-is('{ASKED[lang]}')"))
    item.locator("a.teach-write").click()
    page.wait_for_url("**/insights/write?*")
    assert page.locator(".written-asked q").inner_text() == ASKED[lang]
    assert page.locator(f"#question_{lang}").input_value() == ASKED[lang]  # the question as asked, to edit

    page.fill(f"#question_{lang}", question)
    page.locator(".written-form button[type=submit]").click()  # no answer yet: refused, naming the field
    alert = page.locator("[role=alert]")
    alert.wait_for()
    assert texts["refused"] in alert.inner_text() and alert.get_attribute("data-refused") == f"answer_{lang}"
    assert page.locator(f"#answer_{lang}").get_attribute("aria-invalid") == "true"
    assert page.locator(f"#question_{lang}").input_value() == question  # what was typed is kept
    t.problems[:] = [p for p in t.problems if "status of 422" not in p]  # the refused form comes back with 422

    page.fill(f"#answer_{lang}", answer)
    page.fill("#tags", "npu")
    page.select_option("#faq", "roll")
    t.screenshot(artifacts / f"insights-write-{lang}.png")
    page.locator(".written-form button[type=submit]").click()
    page.wait_for_url("**/insights?since=7d#written")
    row = page.locator("#written tr[data-written]")
    assert row.count() == 1 and row.locator("a").first.inner_text() == question
    answer_id = row.get_attribute("data-written")
    linked = page.locator("#recent li[data-text]", has=page.locator(f"q:text-is('{ASKED[lang]}')"))
    assert linked.locator(f"a[href='/entries/{answer_id}']").inner_text() == question  # the question is linked to it

    t.goto(f"/search?q={question}")  # the search page finds it first
    page.wait_for_selector("#results > .result")
    assert page.locator("#results > .result").first.locator(f"a[href^='/entries/{answer_id}']").count() >= 1

    t.goto("/insights?since=7d#written")
    with page.expect_download() as download:
        page.locator(f"#written a[href='/insights/written/{answer_id}.md?lang={lang}']").click()
    saved = tmp_path / "snippet.md"
    download.value.save_as(saved)
    assert saved.read_text(encoding="utf-8") == f"## {question}\n\n{answer}\n"

    page.locator("#written a", has_text=texts["edit"]).click()
    page.wait_for_url(f"**/insights/written/{answer_id}?*")
    assert page.locator(f"#answer_{lang}").input_value() == answer
    page.fill(f"#answer_{lang}", answer + " (v2)")
    page.locator(".written-form button[type=submit]").click()
    page.wait_for_url("**/insights?since=7d#written")
    t.goto(f"/entries/{answer_id}")
    assert "(v2)" in page.locator("main").inner_text()

    t.goto("/insights?since=7d#written")
    page.locator("#written button", has_text=texts["remove"]).click()
    page.wait_for_url("**/insights?since=7d#written")
    assert page.locator("#written tr[data-written]").count() == 0


CHANGED = {
    "zh": "没有保存：你打开这个表单之后，有人保存了这个答案的另一个版本（见下方）。",
    "en": "Not saved: someone saved another version of this answer after you opened this form (shown below).",
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_two_tabs_editing_one_answer_in_a_browser_lose_no_edit(
    admin_tab: Callable[..., Any], live: tuple[str, Any], lang: str, artifacts: Path
) -> None:
    """Two tabs of one signed-in browser open one answer's edit form; the first saves; the second's save comes back
    saying so in the reader's language, the first tab's edit shown and the second's text still in its field; saved
    again, the second tab's text is the answer."""
    question, answer = WRITTEN[lang]
    file = WrittenFile(live[1].state.settings.written_path)
    kept = file.save(written_answer({lang: question}, {lang: answer}))
    t = admin_tab(viewport=DESKTOP, locale="zh-CN" if lang == "zh" else "en-US")
    one = sign_in(t, TOKEN)
    two = t.context.new_page()
    for tab in (one, two):
        tab.goto(f"{live[0]}/insights/written/{kept.id}?since=7d")
        assert tab.locator(f"#answer_{lang}").input_value() == answer

    one.fill(f"#answer_{lang}", answer + " (1)")
    one.locator(".written-form button[type=submit]").click()
    one.wait_for_url("**/insights?since=7d#written")

    two.fill(f"#answer_{lang}", answer + " (2)")
    two.locator(".written-form button[type=submit]").click()
    alert = two.locator("[role=alert][data-changed=written]")
    alert.wait_for()
    assert CHANGED[lang] in alert.inner_text()
    assert two.locator(".theirs-answer").inner_text() == answer + " (1)"  # the other tab's edit, shown
    assert two.locator(f"#answer_{lang}").input_value() == answer + " (2)"  # this tab's text, kept
    two.screenshot(path=str(artifacts / f"insights-written-changed-{lang}.png"), full_page=True)
    assert [a.answers[lang] for a in file.read() if a.id == kept.id] == [answer + " (1)"]

    two.fill(f"#answer_{lang}", answer + " (1) (2)")  # merged
    two.locator(".written-form button[type=submit]").click()
    two.wait_for_url("**/insights?since=7d#written")
    assert [a.answers[lang] for a in file.read() if a.id == kept.id] == [answer + " (1) (2)"]
    file.remove(kept.id)
    two.close()
