"""The HTML pages in-process: search (as a plain form), entries, chat, errors, and Markdown rendering."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
from html import unescape
from typing import Any

import pytest
from fastapi.testclient import TestClient

from server.rendering.highlight import MAX_LINE, highlight_code, stylesheet
from server.rendering.markdown import is_safe_url, mark_terms, render_markdown
from tests.support.forms import form_token

EN = {"Accept-Language": "en-US,en;q=0.9"}
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}


def first_hit_id(client: TestClient, query: str) -> str:
    return client.get("/api/search", params={"q": query}).json()["hits"][0]["id"]


# --- rendering ---------------------------------------------------------------------------


def test_markdown_escapes_raw_html_and_drops_unsafe_links() -> None:
    html = str(
        render_markdown(
            "<script>alert(1)</script> [a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) "
            "[c](data:text/html,x) <javascript:alert(1)> [ok](https://example.org) [rel](/entries/x)"
        )
    )
    assert "<script" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html.lower() and 'href="data:' not in html
    assert '<a href="https://example.org" rel="noopener noreferrer">ok</a>' in html
    assert '<a href="/entries/x">rel</a>' in html


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("https://x.org", True),
        ("/a/b", True),
        ("#top", True),
        ("mailto:a@b.c", True),
        ("javascript:alert(1)", False),
        (" java\tscript:alert(1)", False),
        ("vbscript:x", False),
        ("data:,x", False),
    ],
)
def test_safe_urls(url: str, safe: bool) -> None:
    assert is_safe_url(url) is safe


def text_of(html: str) -> str:
    """What a reader sees (and the copy button copies) of highlighted code."""
    return unescape(re.sub(r"<[^>]+>", "", html))


def test_code_blocks_are_highlighted_with_a_copy_button() -> None:
    code = "# resume\npython train.py --load /ckpt --tp 8\n"
    html = str(render_markdown(f"```bash\n{code}```"))
    assert '<button type="button" class="copy" hidden>' in html
    assert '<pre><code class="language-bash">' in html
    assert '<span class="tok-c1"># resume</span>' in html
    assert '<span class="tok-m">8</span>' in html
    assert " --load /ckpt " in html, "a flag and a path stay whole"
    assert text_of(html.split("<code", 1)[1].split(">", 1)[1].split("</code>", 1)[0]) == code


@pytest.mark.parametrize(
    ("info", "code", "token"),
    [
        ("yaml", "actor:\n  max_tokens_per_gpu: 8192  # per GPU\n", '<span class="tok-nt">max_tokens_per_gpu</span>'),
        ("python", "@torch.no_grad()\ndef step(x):\n    return x is None\n", '<span class="tok-k">def</span> step'),
        ("", "pip install slime\nexport CUDA_DEVICE_MAX_CONNECTIONS=1", '<span class="tok-nb">export</span>'),
        ("text", "$ ray status\nNo cluster", '<span class="tok-gp">$ </span>ray status\nNo cluster'),
    ],
)
def test_code_is_highlighted_by_its_language_and_kept_verbatim(info: str, code: str, token: str) -> None:
    html = highlight_code(code, info)
    assert token in html
    assert text_of(html) == code


@pytest.mark.parametrize(
    ("info", "code"),
    [
        ("", "RuntimeError: size mismatch for weight: copying a param with shape torch.Size([4, 8])"),
        ("no-such-language", "def f(): return 1 # not Python to this block"),
        ("text", "global_batch_size = per_device_train_batch_size * world_size"),
    ],
)
def test_unknown_or_missing_languages_are_plain_text(info: str, code: str) -> None:
    html = highlight_code(code, info)
    assert "<span" not in html and text_of(html) == code
    assert 'class="language-' not in str(render_markdown(f"```{info}\n{code}\n```"))


@pytest.mark.parametrize("info", ["bash", "python", "yaml", "console", "", "html"])
def test_highlighter_escapes_everything(info: str) -> None:
    code = "echo \"<b>\" # <i>\n<script>alert(1)</script>\n$ x='</code>' & y\n"
    html = highlight_code(code, info)
    assert "<b>" not in html and "<i>" not in html and "<script" not in html and "</code>" not in html
    assert "&lt;" in html and "&amp; y" in html and text_of(html) == code
    assert not re.search(r"<(?!/?span[ >])", html), "no element but spans"
    assert "style=" not in html, "classes only: the pages' CSP forbids inline styles"


def test_the_stylesheet_for_highlighted_code_is_the_one_served(client: TestClient) -> None:
    served = client.get("/static/code.css")
    assert served.status_code == 200 and served.headers["content-type"].startswith("text/css")
    assert served.text == stylesheet(), (
        'templates/static/code.css is out of date: python -c "from server.rendering.highlight import stylesheet; '
        "print(stylesheet(), end='')\" > templates/static/code.css"
    )
    assert ".codeblock .tok-c1 { color: var(--tok-comment)" in served.text
    assert "code.css" in client.get("/").text


def test_marks_wrap_terms_in_text_and_inline_code_not_in_markup() -> None:
    assert str(mark_terms("OOM <b> oom", ["oom"])) == "<mark>OOM</mark> &lt;b&gt; <mark>oom</mark>"
    html = str(render_markdown("Set `max_tokens_per_gpu` [link](https://x.org/oom)", ["max_tokens_per_gpu", "oom"]))
    assert '<code class="word"><mark>max_tokens_per_gpu</mark></code>' in html
    assert 'href="https://x.org/oom"' in html


# --- the search page ---------------------------------------------------------------------


def test_home_page(client: TestClient) -> None:
    response = client.get("/", headers=EN)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert '<form class="search-form big" action="/search" method="get"' in response.text
    assert "slime" in response.text  # the sources listed with their entry counts
    for path in re.findall(r'(?:src|href)="(/static/[^"]+)"', response.text):
        assert client.get(path).status_code == 200, path


def test_search_page_renders_results_without_javascript(client: TestClient) -> None:
    response = client.get("/search", params={"q": "max_tokens_per_gpu"}, headers=EN)
    assert response.status_code == 200
    results = re.findall(r'<li class="result" id="r-([^"]+)">', response.text)
    assert results and results[0] == first_hit_id(client, "max_tokens_per_gpu")
    assert "<mark>max_tokens_per_gpu</mark>" in response.text
    assert 'class="source"' in response.text and 'class="chip"' in response.text


def test_search_page_filters(client: TestClient) -> None:
    browse = client.get("/search", params={"source": "slime"}, headers=EN)
    ids = re.findall(r'<li class="result" id="r-([^"]+)">', browse.text)
    assert ids and all(i.startswith("slime-") for i in ids)
    filtered = client.get("/search", params={"q": "OOM", "source": "roll"}, headers=EN)
    assert all(i.startswith("roll-") for i in re.findall(r'id="r-([^"]+)"', filtered.text))


def test_empty_search_is_the_home_page(client: TestClient) -> None:
    response = client.get("/search", params={"q": ""}, headers=EN)
    assert response.status_code == 200 and 'class="result"' not in response.text


@pytest.mark.parametrize(
    "query", ['<script>alert("x")</script>', '"><img src=x onerror=alert(1)>', "javascript:alert(1)"]
)
def test_queries_are_reflected_escaped(client: TestClient, query: str) -> None:
    response = client.get("/search", params={"q": query}, headers=EN)
    assert response.status_code == 200
    if "<" in query:
        assert query not in response.text
    assert '<script>alert("x")' not in response.text
    assert "<img src=x" not in response.text
    assert 'href="javascript:' not in response.text


def test_a_very_long_query_is_refused_on_the_page(client: TestClient) -> None:
    # 60 000 characters: the longest URL the test client sends (100 KB goes by POST, in test_api).
    response = client.get("/search", params={"q": "<b>" + "x" * 60_000}, headers=EN)
    assert response.status_code == 422
    assert "That request could not be used" in response.text
    assert "q: the query is" in response.text
    assert len(response.text) < 30_000  # the query is not echoed back whole
    assert "<b>xxx" not in response.text


# --- entries -------------------------------------------------------------------------------


def test_entry_page(client: TestClient) -> None:
    entry = client.get(f"/api/entries/{first_hit_id(client, 'slime 如何续训')}").json()
    response = client.get(f"/entries/{entry['id']}", headers=ZH)
    assert response.status_code == 200
    page = response.text
    assert entry["question"] in page
    assert entry["answer_html"] in page
    assert f'href="{entry["url"]}"' in page
    for related in entry["related"]:
        assert f'href="/entries/{related["id"]}"' in page
    assert "在原文中查看" in page


def test_also_asked_as_shows_issue_titles_as_the_search_reads_them(client: TestClient) -> None:
    page = client.get("/entries/chatlearn-v1-5ce102b7", headers=EN).text
    also = page[page.index("Also asked as") :]
    shown = [unescape(q) for q in re.findall(r'<span class="related-q">([^<]*)</span>', also)]
    assert "Missing init_process_group call when converting model to HF format." in shown
    assert not [q for q in shown if q.startswith(("[", "【"))], shown


def test_short_inline_code_is_one_word_and_the_home_heading_is_the_site_name(client: TestClient) -> None:
    html = render_markdown("use `--save-interval` or `python train.py --load ckpt`")
    assert '<code class="word">--save-interval</code>' in html and "<code>python train.py --load ckpt</code>" in html
    home = client.get("/", headers=EN).text
    brand = re.search(r'<span class="brand-name">([^<]*)</span>', home)
    assert brand and f"<h1>{brand[1]}</h1>" in home


def test_entry_with_code_has_copy_buttons(client: TestClient) -> None:
    hit = client.get("/api/search", params={"q": "Megatron HF 模型转换 deepseek", "k": 10}).json()["hits"]
    with_code = next(h for h in hit if "<pre>" in h["answer_html"])
    page = client.get(f"/entries/{with_code['id']}").text
    assert 'class="copy"' in page and "tok-" in page


def test_unknown_entry_is_a_404_page(client: TestClient) -> None:
    response = client.get("/entries/<script>nope", headers=EN)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "Not found" in response.text and "<script>nope" not in response.text
    assert 'action="/search"' in response.text


def test_unknown_page_is_a_404_page(client: TestClient) -> None:
    response = client.get("/no/such/page", headers={**EN, "Accept": "text/html"})
    assert response.status_code == 404 and "Not found" in response.text


# --- chat ----------------------------------------------------------------------------------


def test_chat_page(client: TestClient) -> None:
    response = client.get("/chat", params={"q": "如何续训？"}, headers=ZH)
    assert response.status_code == 200
    assert '<form class="chat-form" action="/chat" method="post"' in response.text
    assert ">如何续训？</textarea>" in response.text


def test_chat_form_works_without_javascript_and_keeps_the_conversation(client: TestClient) -> None:
    token = form_token(client)
    first = client.post(
        "/chat", data={"message": "slime 训练时 OOM 怎么办？", "history": "[]", "form_token": token}, headers=EN
    )
    assert first.status_code == 200
    assert 'class="reply-source"' in first.text and 'class="source"' in first.text
    history = re.search(r'name="history" value="([^"]*)"', first.text)
    assert history
    turns = json.loads(
        history.group(1)
        .replace("&#34;", '"')
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
    )
    assert [t["role"] for t in turns] == ["user", "assistant"]
    second = client.post(
        "/chat", data={"message": "那 ROLL 呢？", "history": json.dumps(turns), "form_token": token}, headers=EN
    )
    assert second.text.count('class="turn user"') == 2
    assert second.text.count('class="turn bot"') == 2


def test_a_chat_about_an_entry_shows_it_and_reads_questions_with_it_without_javascript(client: TestClient) -> None:
    entry_id = first_hit_id(client, "slime 如何续训？")
    entry_page = client.get(f"/entries/{entry_id}", headers=EN).text
    assert f'href="/chat?about={entry_id}"' in entry_page
    chat = client.get("/chat", params={"about": entry_id}, headers=EN).text
    assert f'<input type="hidden" name="about" value="{entry_id}">' in chat
    assert re.search(rf'data-chat-subject>.*<a href="/entries/{entry_id}"[^>]*>How do I resume training\?</a>', chat), (
        "the subject, in the reader's language"
    )
    reply = client.post(
        "/chat",
        data={"message": "how do I do that on 2 nodes?", "about": entry_id, "form_token": form_token(client)},
        headers=EN,
    ).text
    assert f'<a href="/entries/{entry_id}"' in reply.split('class="reply-source"', 1)[1][:400]
    assert f'name="about" value="{entry_id}"' in reply, "the next question is about the entry too"
    unknown = client.get("/chat", params={"about": "nope"}, headers=EN)
    assert unknown.status_code == 422 and "about: no entry with id &#39;nope&#39;" in unknown.text


def test_chat_form_shows_no_confident_answer(client: TestClient) -> None:
    response = client.post(
        "/chat", data={"message": "what is the best pizza in Naples?", "form_token": form_token(client)}, headers=EN
    )
    assert "The FAQ has no confident answer to this." in response.text
    assert "Nearest entries" in response.text


def test_chat_form_rejects_an_empty_message(client: TestClient) -> None:
    response = client.post("/chat", data={"message": "  ", "form_token": form_token(client)}, headers=EN)
    assert response.status_code == 422 and "message: the message is empty" in response.text


# --- HEAD, as uptime monitors send it ------------------------------------------------------


def _raw(url: str, method: str, path: str) -> tuple[str, dict[str, str], bytes]:
    """One request over a plain socket, read to the end: (status line, headers, whatever came after them)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: kb\r\nConnection: close\r\n\r\n".encode())
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, rest = reply.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return status, headers, rest


def test_head_on_the_pages_is_200_with_no_body_over_real_http(settings: Any, serve: Any, client: TestClient) -> None:
    from server import create_app

    app = create_app(settings)
    url = serve(app).url
    entry_id = first_hit_id(client, "how do I resume training")
    for path in ("/", "/chat", f"/entries/{entry_id}", "/search?q=resume+training+after+a+HEAD", "/search"):
        status, headers, body = _raw(url, "HEAD", path)
        assert status == "HTTP/1.1 200 OK", (path, status)
        assert body == b"", path
        assert headers["content-type"].startswith("text/html"), path
        _, got, page = _raw(url, "GET", path)
        assert headers["content-length"] == got["content-length"] == str(len(page)), path
    app.state.recorder.flush()
    with sqlite3.connect(app.state.recorder.store.path) as db:
        [(recorded,)] = db.execute(
            "SELECT count(*) FROM questions WHERE text = 'resume training after a HEAD'"
        ).fetchall()
    assert recorded == 1, "the GET search is recorded, a monitor's HEAD is not"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"tag": "nope"}, "tag: unknown tag &#39;nope&#39;; known: attention, batch-size, chatlearn, "),
        ({"q": "oom", "tag": "nope"}, "tag: unknown tag &#39;nope&#39;; known: attention, batch-size, chatlearn, "),
        ({"source": "nowhere"}, "source: unknown source &#39;nowhere&#39;; known: chatlearn, "),
    ],
)
def test_an_unknown_filter_names_the_values_it_may_take(
    client: TestClient, params: dict[str, str], message: str
) -> None:
    page = client.get("/search", params=params, headers=EN)
    assert page.status_code == 422 and message in page.text


def test_a_long_name_in_inline_code_may_break_at_its_parts() -> None:
    html = render_markdown("set `models.policy_trainer.max_token_in_packing=4096` with `python train.py --x`")
    assert "<code>models.<wbr>policy_<wbr>trainer.<wbr>max_<wbr>token_<wbr>in_<wbr>packing=<wbr>4096</code>" in html
    assert "<code>python train.py --x</code>" in html  # short names are left whole
    marked = render_markdown("`models.policy_trainer.max_token_in_packing`", marks=["max_token_in_packing"])
    assert "trainer.<wbr><mark>max_<wbr>token_<wbr>in_<wbr>packing</mark></code>" in marked, marked


def test_a_line_over_the_limit_is_plain_and_lines_around_it_are_highlighted() -> None:
    long = "x" * (MAX_LINE + 1)
    html = highlight_code(f"export A=1\necho {long}\nexport B=2\n", "bash")
    assert html.count('<span class="tok-nb">export</span>') == 2
    assert f"echo {long}\n" in html


def test_a_construct_over_lines_keeps_its_text_whole() -> None:
    code = 'def f():\n    """Resume\n    from --load."""\n    return 1'
    html = highlight_code(code, "python")
    assert text_of(html) == code and '<span class="tok-k">return</span>' in html


def test_a_question_in_the_home_pages_address_is_searched_as_on_the_search_page(client: TestClient) -> None:
    moved = client.get("/", params={"q": "how do I resume training"}, follow_redirects=False)
    assert (moved.status_code, moved.headers["location"]) == (302, "/search?q=how+do+I+resume+training")
    page = client.get("/", params={"q": "how do I resume training"}).text
    assert 'id="r-slime-b0ab398d"' in page
    assert 'id="r-' not in client.get("/").text


def test_the_first_results_answer_is_never_cut_and_the_source_filter_names_each_faq(client: TestClient) -> None:
    page = client.get("/search", params={"q": "how do I resume training"}).text
    first = page.split('<li class="result"', 2)[1]
    assert "data-whole" in first.split('<div class="result-meta">')[0]
    select = page.split('name="source"', 1)[1].split("</select>", 1)[0]
    labels = [
        unescape(label).rsplit(" (", 1)[0]
        for label in re.findall(r'<option value="[\w-]+"[^>]*>([^<]+)</option>', select)
    ]
    assert len(labels) == len(set(labels)) > 4, labels
    assert {"ROLL Q&A", "ROLL Ascend NPU FAQ"} <= set(labels) and "ROLL" not in labels and "DeepSpeed" not in labels
