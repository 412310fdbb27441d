"""Hostile text is shown, never run: queries, entry text and source Markdown on every page, in the API and in Slack.

tests/data/hostile/ is a FAQ written to attack: `<script>`, `onerror=`, `onload=`,
`javascript:` and `data:` links (in Markdown, raw HTML and autolinks), HTML entities,
code that tries to close its block, and Slack's `<!channel>` and `<url|text>` in its
questions, answers, section titles and manifest. It is ingested into its own data
directory, and every place a reader sees it is parsed as a browser would (for HTML) or
as Slack would (for mrkdwn): no element or attribute that can run code, no link that is
not http(s), mailto or this server's, and the payloads still there as visible text. The
same content in real Chromium: tests/browser/test_xss.py.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any, Iterator

import pytest
from fastapi.testclient import TestClient

from kb.settings import Settings
from server import create_app
from server.channels.slack.blocks import shared_message
from tests.support.forms import form_token
from tests.support.hostile import HOSTILE_QUERY
from tests.support.slack import SECRET, command_body, slack_headers

# Scripts a page may load: its own, from /static/, never inline.
OWN_SCRIPT = re.compile(r"^/static/[\w.-]+\.js\?v=\w+$")
SAFE_URL = re.compile(r"^(https?:|mailto:|/|#|\?)", re.IGNORECASE)


@pytest.fixture(scope="module")
def hostile(hostile_settings: Settings) -> Iterator[TestClient]:
    # The payloads are in the entries' answers: at precision 0.25 every first hit is given as the answer.
    settings = hostile_settings.with_(slack_signing_secret=SECRET, answer_precision=0.25)
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.fixture(scope="module")
def entry_ids(hostile: TestClient) -> list[str]:
    return [entry.id for entry in hostile.app.state.reloader.served.kb.entries]


class Elements(HTMLParser):
    """What a browser would build from some HTML: each element with its attributes, and the visible text."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[tuple[dict[str, str], str]] = []  # each <script>'s attributes and content
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {name: value or "" for name, value in attrs}))
        if tag == "script":
            self.scripts.append((self.elements[-1][1], ""))

    def handle_data(self, data: str) -> None:
        if self.scripts and self.lasttag == "script" and self.cdata_elem is not None:
            attrs, content = self.scripts[-1]
            self.scripts[-1] = (attrs, content + data)
        else:
            self.text.append(data)

    @property
    def visible(self) -> str:
        return re.sub(r"\s+", " ", "".join(self.text))


def assert_inert(html: str) -> Elements:
    """No element, attribute or link in `html` can run code; returns the parsed HTML for more checks."""
    parsed = Elements(html)
    for tag, attrs in parsed.elements:
        assert tag not in ("iframe", "object", "embed", "frame", "base"), (tag, attrs)
        for name, value in attrs.items():
            assert not name.startswith("on"), f"<{tag} {name}={value!r}>"
            if name in ("href", "src", "action", "formaction", "xlink:href", "srcdoc"):
                url = re.sub(r"[\x00-\x20]+", "", value)
                assert SAFE_URL.match(url), f"<{tag} {name}={value!r}>"
    for attrs, content in parsed.scripts:
        if attrs.get("type") == "application/json":  # data for the page's script, never run
            json.loads(content)
            assert "<" not in content, f"markup inside a JSON data block: {content!r}"
        else:
            assert OWN_SCRIPT.match(attrs.get("src", "")), f"a script not from /static/: {attrs}"
            assert content.strip() == "", f"inline script: {content!r}"
    return parsed


# --- pages ---------------------------------------------------------------------------------


def test_every_entry_page_shows_the_payloads_as_text(hostile: TestClient, entry_ids: list[str]) -> None:
    seen = ""
    for entry_id in entry_ids:
        response = hostile.get(f"/entries/{entry_id}", headers={"Accept-Language": "en"})
        assert response.status_code == 200
        seen += assert_inert(response.text).visible
    for payload in (
        # the question; its code span of several words is quoted: “…”
        "How do I resume <script>window.__xss = 'question'</script> training with “<img src=x onerror=alert('question')>”?",
        "Setup <img src=x onerror=\"window.__xss = 'section'\"> & more",  # a section title
        "Hostile FAQ <script>window.__xss = 'title'</script>",  # the manifest's title
        "<script>window.__xss = 'answer-script'</script>",  # raw HTML in the answer
        "<a href=\"javascript:window.__xss = 'raw-link'\">a raw link</a>",
        "[a javascript link](javascript:window.__xss='md-link')",  # a Markdown link not made a link
        "<script>window.__xss = 'entity'</script>",  # &lt;script&gt; in the Markdown: text, decoded once
        "</code></pre><script>window.__xss = 'fence'</script>",  # code that tries to close its block
        "</code><script>window.__xss = 'inline-code'</script>",
    ):
        assert payload in seen, payload


def test_the_search_page_with_a_hostile_query(hostile: TestClient) -> None:
    response = hostile.get("/search", params={"q": HOSTILE_QUERY}, headers={"Accept-Language": "en"})
    assert response.status_code == 200
    parsed = assert_inert(response.text)
    assert "window.__xss = 'question'" in parsed.visible, "the hostile entry is found and listed"
    box = next(attrs for tag, attrs in parsed.elements if tag == "input" and attrs.get("name") == "q")
    assert box["value"] == HOSTILE_QUERY


def test_browsing_the_hostile_source(hostile: TestClient) -> None:
    response = hostile.get("/search", params={"source": "hostile"}, headers={"Accept-Language": "en"})
    assert response.status_code == 200
    assert "How do I resume <script>window.__xss = 'question'</script>" in assert_inert(response.text).visible


def test_the_chat_page_with_a_hostile_question_and_history(hostile: TestClient) -> None:
    earlier = "[x](javascript:alert(1)) <img src=x onerror=alert(2)> [log in](https://evil.example/login) ![](https://evil.example/p.png)"
    history = json.dumps(
        [{"role": "user", "content": "<script>window.__xss = 1</script>"}, {"role": "assistant", "content": earlier}]
    )
    response = hostile.post(
        "/chat",
        data={"message": HOSTILE_QUERY, "history": history, "form_token": form_token(hostile)},
        headers={"Accept-Language": "en"},
    )
    assert response.status_code == 200
    parsed = assert_inert(response.text)
    assert HOSTILE_QUERY in parsed.visible
    assert "<script>window.__xss = 1</script>" in parsed.visible
    assert earlier in parsed.visible  # the earlier answer, as the history field had it: text, not Markdown
    urls = [value for _, attrs in parsed.elements for name, value in attrs.items() if name in ("href", "src")]
    assert not any("evil.example" in url for url in urls), urls
    drafted = assert_inert(hostile.get("/chat", params={"q": HOSTILE_QUERY}).text)
    assert HOSTILE_QUERY in drafted.visible  # the draft in the box


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("/entries/<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>"),
        ("/search?source=<script>alert(1)</script>", "<script>alert(1)</script>"),
        ("/lang/<svg onload=alert(1)>", "<svg onload=alert(1)>"),
    ],
)
def test_error_pages_show_the_input_as_text(hostile: TestClient, path: str, shown: str) -> None:
    response = hostile.get(path, headers={"Accept": "text/html", "Accept-Language": "en"})
    assert response.status_code in (404, 422)
    assert shown in assert_inert(response.text).visible


PAGES = ["/", "/search?q=resume", "/entries/{id}", "/chat", "/widget-demo", "/entries/missing"]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_has_a_strict_content_security_policy(hostile: TestClient, entry_ids: list[str], path: str) -> None:
    response = hostile.get(path.format(id=entry_ids[0]), headers={"Accept": "text/html"})
    assert response.headers["content-type"].startswith("text/html")
    policy = dict(
        (part.strip().split(" ", 1) + [""])[:2] for part in response.headers["content-security-policy"].split(";")
    )
    assert policy["script-src"] == "'self'"
    assert "unsafe-inline" not in response.headers["content-security-policy"]
    assert "unsafe-eval" not in response.headers["content-security-policy"]
    assert policy["object-src"] == "'none'" and policy["base-uri"] == "'none'"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/api/search?q=resume"),
        ("GET", "/api/entries/missing"),
        ("GET", "/healthz"),
        ("GET", "/static/app.js"),
        ("GET", "/widget.js"),
        ("GET", "/openapi.json"),
        ("POST", "/api/chat"),
        ("GET", "/api/search?q=%FF"),
    ],
)
def test_every_response_forbids_sniffing_and_keeps_the_referrer_short(
    hostile: TestClient, method: str, path: str
) -> None:
    response = hostile.request(method, path)
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "strict-origin-when-cross-origin"


def test_a_server_error_carries_them_too(hostile_settings: Settings) -> None:
    """A 500 is sent from outside the middleware stack; the error handler adds them itself."""
    app = create_app(hostile_settings)

    @app.get("/api/broken")
    async def broken() -> None:
        raise RuntimeError("a bug")

    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/api/broken")
    assert response.status_code == 500 and response.json()["error"] == "internal error"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "strict-origin-when-cross-origin"


# --- the API -------------------------------------------------------------------------------


def test_answer_html_from_the_api_is_inert(hostile: TestClient, entry_ids: list[str]) -> None:
    hits = hostile.get("/api/search", params={"q": HOSTILE_QUERY, "k": 10}).json()["hits"]
    assert {hit["id"] for hit in hits} == set(entry_ids)
    for hit in hits:
        assert_inert(hit["answer_html"])
        for related in hostile.get(f"/api/entries/{hit['id']}").json()["related"]:
            assert_inert(related["answer_html"])
    chat = hostile.post("/api/chat", json={"message": HOSTILE_QUERY}).json()
    assert_inert(chat["answer_html"])
    for source in chat["sources"]:
        assert_inert(source["answer_html"])


def test_markdown_entities_and_code_stay_text_in_answer_html(hostile: TestClient, entry_ids: list[str]) -> None:
    entry = hostile.get(f"/api/entries/{entry_ids[0]}").json()
    parsed = assert_inert(entry["answer_html"])
    assert "<script>window.__xss = 'entity'</script>" in parsed.visible
    assert "<img src=x onerror=alert('numeric')>" in parsed.visible
    assert [attrs["href"] for tag, attrs in parsed.elements if tag == "a"] == [
        "https://example.com/docs/java%09script:alert('md-tab')",  # a relative link, made absolute: harmless
    ]
    assert not [tag for tag, _ in parsed.elements if tag in ("img", "svg", "script")]


# --- Slack ---------------------------------------------------------------------------------

SLACK_LINK = re.compile(r"<([^<>|]*)(?:\|[^<>]*)?>")


def mrkdwn_texts(message: dict[str, Any]) -> list[str]:
    """Every mrkdwn text Slack would format in a message's blocks."""
    texts = []
    for block in message.get("blocks", []):
        for part in [block.get("text")] + list(block.get("elements", [])):
            if isinstance(part, dict) and part.get("type") == "mrkdwn":
                texts.append(part["text"])
    return texts


def assert_slack_inert(text: str, root: str) -> None:
    """No mention (`<!channel>`, `<@U…>`, `<#C…>`) and no link but to this server or the FAQ source."""
    for match in SLACK_LINK.finditer(text):
        target = match.group(1)
        assert target.startswith((root, "https://example.com/docs/")), f"a link Slack would make: {match.group(0)!r}"
    assert "<!" not in text and "<@" not in text and "<#" not in text


def test_slack_answer_escapes_the_payloads(hostile: TestClient) -> None:
    body = command_body("how do I resume training <!channel> <https://evil.example|click>")
    response = hostile.post("/slack/command", content=body, headers=slack_headers(body))
    assert response.status_code == 200
    texts = mrkdwn_texts(response.json())
    for text in texts:
        assert_slack_inert(text, "http://testserver/")
    answer = "\n".join(texts)
    assert "&lt;!channel&gt; &lt;!here&gt; &lt;@U0123ABC&gt; &lt;https://evil.example|click me&gt;" in answer
    assert "&lt;script&gt;window.__xss = 'answer-script'&lt;/script&gt;" in answer


def test_a_shared_answer_escapes_the_payloads(hostile: TestClient, entry_ids: list[str]) -> None:
    kb = hostile.app.state.reloader.served.kb
    for entry_id in entry_ids:
        message = shared_message(kb.get(entry_id), kb.related(entry_id, 3), "en", "https://faq.example.com/", "U0001")
        assert message["response_type"] == "in_channel"
        for text in mrkdwn_texts(message):
            assert_slack_inert(text.replace("<@U0001>", ""), "https://faq.example.com/")


def test_the_notification_text_of_a_shared_answer_is_escaped(hostile: TestClient, entry_ids: list[str]) -> None:
    kb = hostile.app.state.reloader.served.kb
    message = shared_message(kb.get(entry_ids[0]), [], "en", "https://faq.example.com/", "U0001")
    assert_slack_inert(message["text"], "https://faq.example.com/")
