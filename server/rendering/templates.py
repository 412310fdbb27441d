"""Pages: the Jinja environment (templates/, then the channels' own), cache-busted static URLs, and `page()` to render one."""

from __future__ import annotations

import hashlib
from functools import partial
from importlib.resources import files
from pathlib import Path
from typing import Any, Iterable

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from kb.hyperlinks import tracker_link
from kb.provenance import original_label, original_url, version_note
from kb.stacktrace import MAX_PASTE_CHARS
from kb.tags import label as tag_label
from kb.tags import tag_table
from kb.verdict import AnswerState

from ..headers import PAGE_HEADERS
from .intro import site
from .markdown import breakable, mark_terms, plain_text, render_markdown
from .strings import CONTENT_COOKIE, COOKIE, LANGS, Translator, choose_lang

__all__ = ["TEMPLATES_DIR", "STATIC_DIR", "create_templates", "page", "request_lang", "content_lang"]

# The pages and static files: `server/templates/` in an installed wheel (setup.py puts the
# top-level `templates/` there), `templates/` beside `server/` in a source checkout.
_SERVER_DIR = Path(str(files("server"))).resolve()
TEMPLATES_DIR = next(
    (d for d in (_SERVER_DIR / "templates", _SERVER_DIR.parent / "templates") if d.is_dir()),
    _SERVER_DIR.parent / "templates",
)
STATIC_DIR = TEMPLATES_DIR / "static"


def _static_versions() -> dict[str, str]:
    """A short content hash per static file, appended as ?v= so browsers never run stale code."""
    versions = {}
    for path in STATIC_DIR.rglob("*"):
        if path.is_file():
            name = path.relative_to(STATIC_DIR).as_posix()
            versions[name] = hashlib.sha1(path.read_bytes()).hexdigest()[:10]
    return versions


def state_words(t: Translator) -> dict[str, str]:
    """Each uncertain state's wording for the browser's scripts: the chat's (keyed by the state) and the search
    page's (`results_<state>`)."""
    return {key: t(key) for s in AnswerState if s.uncertain for key in (s.value, f"results_{s.value}")}


def create_templates(channels: Iterable[Path] = ()) -> Jinja2Templates:
    """The pages' environment: a template is looked for in `templates/` first, then in each of the channels' own
    template directories, in turn (their plugins' `templates`: GitHub's panel on /insights)."""
    loaders = [jinja2.FileSystemLoader(TEMPLATES_DIR), *(jinja2.FileSystemLoader(d) for d in channels)]
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    versions = _static_versions()
    env.globals["static"] = lambda name: f"/static/{name}?v={versions.get(name, '0')}"
    env.filters["markdown"] = render_markdown
    env.filters["mark"] = mark_terms
    env.filters["plain"] = plain_text
    env.filters["breakable"] = breakable
    env.globals["version_note"] = version_note
    env.globals["original_url"] = original_url
    env.globals["original_label"] = original_label
    env.globals["tracker_link"] = tracker_link  # a harvested thread's URL, when it is one to link
    env.globals["state_words"] = state_words
    env.globals["max_paste_chars"] = MAX_PASTE_CHARS  # a box's maxlength: a pasted trace is reduced, not cut
    return Jinja2Templates(env=env)


def request_lang(request: Request) -> str:
    return choose_lang(request.cookies.get(COOKIE), request.headers.get("accept-language"))


def content_lang(request: Request) -> str:
    """The language to show entries in on a page: the version last switched to, else the page's."""
    chosen = request.cookies.get(CONTENT_COOKIE)
    return chosen if chosen in LANGS else request_lang(request)


def page(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    """Render a template with the reader's language, its strings (`t`), tag labels (`tag`) and
    the site's name (`site`, from the build the request is pinned to, when there is one)."""
    lang = request_lang(request)
    templates: Jinja2Templates = request.app.state.templates
    t = Translator(lang)
    served = (request.scope.get("state") or {}).get("served")
    full = {
        "lang": lang,
        "t": t,
        "site": site(served.kb if served is not None else None, request.app.state.settings, lang),
        "topic_label": partial(_tag, lang=lang),
        "tag_labels": lambda ids: {i: _tag(i, lang) for i in ids},
        "topic_ids": tag_table().tags,
        "path": request.url.path,
        "current_url": _here(request),
        **context,
    }
    response = templates.TemplateResponse(request, name, full, status_code=status_code)
    response.headers.update(PAGE_HEADERS)
    return response


def _here(request: Request) -> str:
    """This page's path and query, for the language toggle to come back to (a long query dropped, a long path
    for the home page: neither is echoed whole)."""
    path, query = request.url.path, request.url.query
    if len(path) > 2100:
        return "/"
    return path + (f"?{query}" if query and len(query) <= 2100 else "")


def _tag(tag_id: str, lang: str) -> str:
    try:
        return tag_label(tag_id, lang)
    except KeyError:
        return tag_id
