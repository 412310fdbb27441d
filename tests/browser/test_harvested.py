"""A draft from the tracker accepted on /insights in a real browser (headless Chromium against uvicorn on loopback),
in Chinese and in English: the draft's Markdown rendered as an entry's is (code, a fenced block, a list: no raw
marks), one click on Accept, the draft leaves the list, the count of entries from the tracker grows, and the search
page finds the new entry first, its page rendering the answer and linking the thread it came from as the tracker
thread, not as an FAQ's original."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import pytest

from kb.harvest import Draft, ThreadQuestion
from kb.insights import InsightsStore, store_path
from kb.settings import Settings
from server import create_app
from tests.support.browser import DESKTOP, sign_in
from tests.support.seeded_insights import TOKEN

THREAD = "https://github.com/THUDM/slime/issues/{}"
DRAFTS = {
    "en": (
        501, "How do I run slime on Huawei Ascend NPUs?",
        "Use the `mindspeed` backend image and pass `--device npu`:\n\n```bash\npython train.py --device npu\n```\n\n"
        "- the image: **mindspeed**\n- the flag: `--device npu`", "does slime support ascend npu",
    ),
    "zh": (
        502, "slime 怎么接入自定义的奖励服务？",
        "用 `--custom-rm-path` 指向你的奖励函数：\n\n```python\ndef reward(sample):\n    return 1.0\n```\n\n"
        "- 返回每个样本的分数\n- 见 **自定义奖励** 一节", "如何自定义奖励函数",
    ),
}  # fmt: skip
TEXTS = {"en": ("Accept", "Entries from the tracker: {n};"), "zh": ("采纳", "来自议题区的条目：{n} 个")}
THREAD_LINK = {"en": "View the tracker thread", "zh": "查看 issue 区的原帖"}
ORIGINAL_LINK = {"en": "View in the original FAQ", "zh": "在原文中查看"}


def rendered(box: Any, answer: str) -> None:
    """`box` holds `answer` rendered as Markdown: its inline code, fenced block and list as elements, no raw marks."""
    flag = answer.split("`")[1]
    assert box.locator("code", has_text=flag).count() >= 1
    assert (
        box.locator("pre code").count() == 1 and box.locator("li").count() == 2 and box.locator("strong").count() == 1
    )
    text = box.text_content()
    assert "```" not in text and "**" not in text and "`" not in text and "\n- " not in text


@pytest.fixture(scope="module")
def live(settings: Settings, tmp_path_factory: pytest.TempPathFactory, serve: Callable[[Any], Any]) -> tuple[str, Any]:
    data_dir = tmp_path_factory.mktemp("harvest-browser")
    (data_dir / "index").symlink_to(settings.index_dir)
    store = InsightsStore(store_path(data_dir))
    store.drafts.keep(
        Draft(
            repo="THUDM/slime",
            number=n,
            url=THREAD.format(n),
            kind="issue",
            question=q,
            answer=a,
            signals={"answer": "thanked", "by": "MEMBER"},
            closed_at=1_760_000_000.0 + n,
            alternates=(ThreadQuestion(alt, THREAD.format(n + 100), n + 100),),
            answer_author="zhuzilin",
        )  # fmt: skip
        for n, q, a, alt in DRAFTS.values()
    )
    store.close()
    app = create_app(settings.with_(data_dir=data_dir, admin_token=TOKEN))
    return serve(app).url, app


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_draft_is_accepted_in_one_click_and_searchable(
    admin_tab: Callable[..., Any], lang: str, artifacts: Path
) -> None:
    t = admin_tab(viewport=DESKTOP, locale="zh-CN" if lang == "zh" else "en-US")
    page = sign_in(t, TOKEN)
    number, question, answer, _ = DRAFTS[lang]
    accept, counted = TEXTS[lang]
    before = page.locator("#harvested [data-from-tracker]").inner_text()
    row = page.locator(f"#harvested tr[data-harvested='THUDM/slime#{number}']")
    assert row.locator(".harvested-question").inner_text() == question
    row.locator("details summary").click()  # the answer, as it reads
    rendered(row.locator(".harvested-answer"), answer)
    assert "`" not in row.locator("details summary").inner_text()  # its summary is plain text
    t.screenshot(artifacts / f"insights-harvested-{lang}.png")
    row.locator("button[data-action=accept]").click()
    page.wait_for_url("**/insights?since=7d#harvested")
    assert page.locator(f"#harvested tr[data-harvested='THUDM/slime#{number}']").count() == 0
    after = page.locator("#harvested [data-from-tracker]").inner_text()
    assert int(re.findall(r"\d+", after)[0]) == int(re.findall(r"\d+", before)[0]) + 1  # entries from the tracker
    assert counted.split("{n}")[0] in after
    written_row = page.locator("#written tr[data-written]", has=page.locator(f"a:text-is('{question}')"))
    answer_id = written_row.get_attribute("data-written")

    t.goto(f"/search?q={question}")  # the search page finds it first
    page.wait_for_selector("#results > .result")
    assert page.locator("#results > .result").first.locator(f"a[href^='/entries/{answer_id}']").count() >= 1
    t.goto(f"/entries/{answer_id}")
    assert answer.split("`")[0].strip() in page.locator("main").inner_text()
    rendered(page.locator("main .entry-answer"), answer)
    assert page.locator(f"main a[href='{THREAD.format(number)}']").count() >= 1  # its page links the thread
    link = page.locator(f"main .side-links a[href='{THREAD.format(number)}']")
    assert link.inner_text() == THREAD_LINK[lang]  # as the tracker thread it is
    assert ORIGINAL_LINK[lang] not in page.locator("main").inner_text()
    t.screenshot(artifacts / f"entry-from-tracker-{lang}.png")
