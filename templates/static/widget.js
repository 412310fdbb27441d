/* The FAQ chat widget for other sites. One tag adds it:
     <script src="https://faq.example.com/widget.js" data-lang="auto" data-title="Training FAQ" defer></script>
   A button opens a chat panel that asks the FAQ server's /api/chat. Everything is drawn inside
   the Shadow DOM of one <kb-faq-widget> element; the only global is window.KBWidget.
   A reply is laid out by reply.js (KBReply), which the server serves inside this script.
   data-lang: auto (the page's language, then each answer's), zh or en, for the labels; answers follow the question.
   data-title, data-position (right or left), data-accent (a CSS colour),
   data-server (default: the origin this script was loaded from). */
(function () {
  "use strict";
  if (window.KBWidget) return;

  var STRINGS = {
    en: {
      title: "FAQ", open: "Ask the FAQ", close: "Close", question: "Your question", send: "Send",
      intro: "Ask in English or Chinese, or paste an error message. Answers are quoted from the FAQ, each with where it comes from.",
      placeholder: "Ask a question…", thinking: "Looking it up…", source: "Source", entry: "Open the full entry",
      related: "Related", nearest: "Nearest entries", none: "The FAQ has no confident answer to this.",
      likely: "The first entry may answer this (confidence {confidence}), but it is not certain:",
      notCertain: "May answer, not certain", others: "Other entries", quoted: "Quoted from the FAQ",
      llm: "Written by a language model from the cited entries.",
      fallback: "The language model could not answer; this is the FAQ's own answer.",
      error: "Something went wrong: ", offline: "Could not reach the FAQ server.",
      blocked: "This site is not set up to use the FAQ server.",
      helpful: "Helpful", unhelpful: "Not helpful", thanks: "Thanks for the feedback.",
      seeAlso: "A resolved issue that may help", notAnswer: "From the project's tracker: not the FAQ's answer."
    },
    zh: {
      title: "FAQ", open: "向 FAQ 提问", close: "关闭", question: "你的问题", send: "发送",
      intro: "用中文或英文提问，或直接粘贴报错。回答摘自 FAQ，并注明出处。",
      placeholder: "输入问题……", thinking: "正在查找……", source: "来源", entry: "查看完整条目",
      related: "相关条目", nearest: "最接近的条目", none: "FAQ 里没有把握回答这个问题。",
      likely: "第一个条目可能回答了这个问题（置信度 {confidence}），但没有把握：",
      notCertain: "可能的答案，没有把握", others: "其他条目", quoted: "摘自 FAQ 原文",
      llm: "由语言模型根据引用的条目撰写。",
      fallback: "语言模型未能作答，以下为 FAQ 原文。",
      error: "出错了：", offline: "无法连接 FAQ 服务器。",
      blocked: "这个网站还没有获准使用 FAQ 服务器。",
      helpful: "有帮助", unhelpful: "没帮助", thanks: "感谢反馈。",
      seeAlso: "可能有帮助的已解决 issue", notAnswer: "来自项目的 issue 区，不是 FAQ 的答案。"
    }
  };

  var CSS_TEXT =
    ".w{--a:#4f46e5;--bg:#fff;--fg:#1b1f27;--mut:#5d6574;--bd:#e3e6ec;--s2:#f3f4f8;--link:#3730a3;--code:#f7f8fa;" +
    "color-scheme:light dark;color:var(--fg);font:14px/1.55 -apple-system,BlinkMacSystemFont,\"Segoe UI\",Roboto," +
    "\"Helvetica Neue\",\"PingFang SC\",\"Hiragino Sans GB\",\"Microsoft YaHei\",\"Noto Sans CJK SC\",Arial,sans-serif;" +
    "text-align:left;-webkit-text-size-adjust:100%}" +
    "@media (prefers-color-scheme:dark){.w{--bg:#171a21;--fg:#e7e9ee;--mut:#9aa2b1;--bd:#2e3440;--s2:#1f232c;" +
    "--link:#aab4ff;--code:#12151b}}" +
    "*{box-sizing:border-box}[hidden]{display:none!important}" +
    "button{font:inherit;cursor:pointer}" +
    ":focus-visible{outline:3px solid var(--a);outline-offset:2px}" +
    ".launcher{position:fixed;bottom:20px;right:20px;z-index:2147483000;width:56px;height:56px;border:0;" +
    "border-radius:50%;background:var(--a);color:#fff;display:grid;place-items:center;" +
    "box-shadow:0 6px 20px rgba(16,24,40,.28)}" +
    ".launcher svg{width:28px;height:28px}.left .launcher,.left .panel{right:auto;left:20px}" +
    ".panel{position:fixed;bottom:88px;right:20px;z-index:2147483001;width:390px;max-width:calc(100vw - 40px);" +
    "height:min(620px,calc(100vh - 108px));display:flex;flex-direction:column;background:var(--bg);" +
    "border:1px solid var(--bd);border-radius:14px;box-shadow:0 16px 48px rgba(16,24,40,.24);overflow:hidden}" +
    ".head{display:flex;align-items:center;gap:8px;padding:10px 8px 10px 16px;background:var(--a);color:#fff}" +
    "h2{flex:1;margin:0;font-size:15px;font-weight:650;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}" +
    ".close{width:36px;height:36px;border:0;border-radius:8px;background:transparent;color:inherit;font-size:24px;line-height:1}" +
    ".close:hover{background:rgba(255,255,255,.18)}.close:focus-visible{outline-color:#fff;outline-offset:-3px}" +
    ".log{flex:1;overflow-y:auto;overscroll-behavior:contain;padding:14px;display:flex;flex-direction:column;gap:12px}" +
    ".intro,.note,.wait{margin:0;color:var(--mut)}.note{margin-bottom:8px}.elsewhere{font-weight:600}.warn{color:#b45309}" +
    ".msg{border-radius:12px;padding:10px 12px;overflow-wrap:anywhere}" +
    ".user{align-self:flex-end;max-width:85%;background:var(--a);color:#fff;white-space:pre-wrap}" +
    /* a long pasted trace scrolls inside its own bubble, so the reply under it stays in view */
    ".user{max-height:9.5em;overflow-y:auto;flex:none}" +
    ".likely{margin:4px 0 0;padding:8px 10px;border:1px dashed var(--bd);border-left:4px solid #f3d08b;border-radius:8px;background:var(--bg)}" +
    ".likely-label{margin:0 0 6px;font-size:13px;color:var(--mut)}.likely-label a{font-weight:600}" +
    ".bot{background:var(--s2);border:1px solid var(--bd)}" +
    ".answer>*{margin:0 0 .6em}.answer>:last-child{margin-bottom:0}.answer h1,.answer h2,.answer h3{font-size:1em}" +
    ".answer pre{background:var(--code);border:1px solid var(--bd);border-radius:8px;padding:8px 10px;overflow-x:auto;" +
    "font-size:12.5px;white-space:pre}.answer ul,.answer ol,.list{padding-left:20px}.answer img{max-width:100%}" +
    ".answer table{border-collapse:collapse;display:block;overflow-x:auto}.answer td,.answer th{border:1px solid var(--bd);padding:2px 6px}" +
    "code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,\"Liberation Mono\",monospace;font-size:.9em}" +
    ".answer :not(pre)>code{background:var(--code);border:1px solid var(--bd);border-radius:4px;padding:0 .25em}" +
    "a{color:var(--link)}.meta{margin-top:10px;padding-top:8px;border-top:1px solid var(--bd);font-size:13px}" +
    ".meta+.meta{border-top:0;padding-top:0}.label{display:block;color:var(--mut);font-size:12px;font-weight:600}" +
    ".list{margin:2px 0 0}.list li+li{margin-top:2px}.fw{color:var(--mut)}.mode{margin:8px 0 0;font-size:12px;color:var(--mut)}" +
    ".votes{display:flex;gap:6px;margin-top:8px}.votes button{display:inline-flex;align-items:center;gap:5px;" +
    "border:1px solid var(--bd);background:var(--bg);color:inherit;border-radius:8px;padding:3px 10px;font-size:13px}" +
    ".votes button:hover{border-color:var(--a)}.votes svg{width:15px;height:15px;flex:none;stroke-width:1.8;stroke-linecap:round}" +
    "form{display:flex;gap:8px;align-items:flex-end;padding:10px;border-top:1px solid var(--bd);background:var(--bg)}" +
    "textarea{flex:1;resize:none;min-height:42px;max-height:120px;padding:9px 11px;font:inherit;color:inherit;" +
    "background:var(--s2);border:1px solid var(--bd);border-radius:10px}textarea:focus-visible{outline-offset:0}" +
    ".send{width:42px;height:42px;border:0;border-radius:10px;background:var(--a);color:#fff;display:grid;place-items:center}" +
    ".send:disabled{opacity:.55;cursor:progress}.send svg{width:20px;height:20px}" +
    ".sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}" +
    "@media (max-width:480px){.panel,.left .panel{inset:0;width:100%;max-width:none;height:100%;border:0;border-radius:0}" +
    ".open .launcher{display:none}textarea{font-size:16px}}";

  var ICON_CHAT = "M4 5.5A2.5 2.5 0 0 1 6.5 3h11A2.5 2.5 0 0 1 20 5.5v9a2.5 2.5 0 0 1-2.5 2.5H11l-4.5 4v-4h0A2.5 2.5 0 0 1 4 14.5z";
  var ICON_SEND = "M4 12l16-8-6 16-2.5-6.5z";
  /* The thumbs of the main pages' vote buttons (templates/_votes.html). */
  var ICON_UP = "M7 11v10H4a1 1 0 0 1-1-1v-8a1 1 0 0 1 1-1zm0 0 4-8a2.5 2.5 0 0 1 2.5 2.5V9h5.3a2 2 0 0 1 2 2.3l-1.2 8A2 2 0 0 1 17.6 21H7";
  var ICON_DOWN = "M17 13V3h3a1 1 0 0 1 1 1v8a1 1 0 0 1-1 1zm0 0-4 8a2.5 2.5 0 0 1-2.5-2.5V15H5.2a2 2 0 0 1-2-2.3l1.2-8A2 2 0 0 1 6.4 3H17";

  var script = document.currentScript || document.querySelector("script[src*='widget.js']");
  var data = (script && script.dataset) || {};
  var server;
  try {
    server = data.server ? new URL(data.server, location.href).href.replace(/\/+$/, "")
      : new URL(script ? script.src : location.href).origin;
  } catch (e) {
    console.error("KBWidget: data-server=" + JSON.stringify(data.server) + " is not a URL");
    return;
  }
  var followAnswers = !data.lang || data.lang === "auto";  /* labels switch to each answer's language */
  var pageLang = (followAnswers ? document.documentElement.lang || navigator.language || "" : data.lang);
  var lang = String(pageLang).toLowerCase().indexOf("zh") === 0 ? "zh" : "en";
  var S = STRINGS[lang];
  var accent = data.accent && window.CSS && CSS.supports("color", data.accent) ? data.accent : "";
  if (data.accent && !accent) console.warn("KBWidget: data-accent=" + JSON.stringify(data.accent) + " is not a CSS colour; using the default");

  var config = { feedback: false, max_message_chars: 2000, max_paste_chars: 50000 };
  var blocked = false;
  var history = [];
  var busy = false;
  var root, wrap, launcher, panel, log, form, box, send, close, question;

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (name === "text") node.textContent = attrs[name];
      else if (name === "class") node.className = attrs[name];
      else node.setAttribute(name, attrs[name]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function icon(path) {
    var svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("fill", "none");
    svg.setAttribute("stroke", "currentColor");
    svg.setAttribute("stroke-width", "2");
    svg.setAttribute("stroke-linejoin", "round");
    var shape = document.createElementNS("http://www.w3.org/2000/svg", "path");
    shape.setAttribute("d", path);
    svg.appendChild(shape);
    return svg;
  }

  function link(href, text, className) {
    var a = el("a", { href: href, target: "_blank", rel: "noopener noreferrer", text: text });
    if (className) a.className = className;
    return a;
  }

  function blockedMessage() {
    return "KBWidget: the FAQ server " + server + " does not allow calls from this page's origin (" +
      location.origin + "). Add " + location.origin + " to KB_ALLOWED_ORIGINS on the FAQ server " +
      "(a comma-separated list of origins) and restart it.";
  }

  function build() {
    var host = document.createElement("kb-faq-widget");
    host.style.setProperty("all", "initial", "important");
    root = host.attachShadow({ mode: "open" });
    if (root.adoptedStyleSheets !== undefined && window.CSSStyleSheet && CSSStyleSheet.prototype.replaceSync) {
      var sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS_TEXT);
      root.adoptedStyleSheets = [sheet];
    } else {
      root.appendChild(el("style", { text: CSS_TEXT }));
    }
    launcher = el("button", {
      class: "launcher", type: "button", "aria-label": S.open, title: S.open,
      "aria-haspopup": "dialog", "aria-expanded": "false", "aria-controls": "kbw-panel"
    }, [icon(ICON_CHAT)]);
    close = el("button", { class: "close", type: "button", "aria-label": S.close, title: S.close, text: "×" });
    log = el("div", { class: "log", role: "log", "aria-live": "polite" }, [el("p", { class: "intro", text: S.intro })]);
    box = el("textarea", { id: "kbw-q", rows: "1", placeholder: S.placeholder, maxlength: "50000" });
    send = el("button", { class: "send", type: "submit", "aria-label": S.send, title: S.send }, [icon(ICON_SEND)]);
    question = el("label", { class: "sr", for: "kbw-q", text: S.question });
    form = el("form", {}, [question, box, send]);
    panel = el("div", { class: "panel", id: "kbw-panel", role: "dialog", "aria-modal": "true", "aria-labelledby": "kbw-title" }, [
      el("div", { class: "head" }, [el("h2", { id: "kbw-title", text: data.title || S.title }), close]),
      log, form
    ]);
    panel.hidden = true;
    wrap = el("div", { class: "w" + (data.position === "left" ? " left" : ""), lang: lang === "zh" ? "zh-CN" : "en" }, [launcher, panel]);
    if (accent) wrap.style.setProperty("--a", accent);
    root.appendChild(wrap);
    document.body.appendChild(host);

    launcher.addEventListener("click", function () { panel.hidden ? open() : closePanel(); });
    close.addEventListener("click", closePanel);
    panel.addEventListener("keydown", onKey);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var message = box.value.trim();
      if (message && !busy) { box.value = ""; grow(); ask(message); }
    });
    box.addEventListener("input", grow);
    box.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
        event.preventDefault();
        send.click();
      }
    });
    loadConfig();
  }

  /* With data-lang="auto", the labels from here on are in the language of the last answer. */
  function useLanguage(code) {
    if (!followAnswers || !STRINGS[code] || code === lang) return;
    lang = code;
    S = STRINGS[lang];
    wrap.setAttribute("lang", lang === "zh" ? "zh-CN" : "en");
    [[launcher, S.open], [close, S.close], [send, S.send]].forEach(function (pair) {
      pair[0].setAttribute("aria-label", pair[1]);
      pair[0].title = pair[1];
    });
    question.textContent = S.question;
    box.placeholder = S.placeholder;
    if (!data.title) root.getElementById("kbw-title").textContent = S.title;
  }

  function grow() {
    box.style.height = "auto";
    box.style.height = Math.min(box.scrollHeight + 2, 120) + "px";
  }

  function focusable() {
    return Array.prototype.filter.call(
      panel.querySelectorAll("a[href],button:not([disabled]),textarea,[tabindex]:not([tabindex='-1'])"),
      function (node) { return node.getClientRects().length > 0; });
  }

  /* Esc closes; Tab and Shift+Tab go round the panel's controls and never leave it. */
  function onKey(event) {
    if (event.key === "Escape") { event.preventDefault(); closePanel(); return; }
    if (event.key !== "Tab") return;
    var items = focusable();
    if (!items.length) return;
    var first = items[0], last = items[items.length - 1], active = root.activeElement;
    if (event.shiftKey && (active === first || !panel.contains(active))) { event.preventDefault(); last.focus(); }
    else if (!event.shiftKey && (active === last || !panel.contains(active))) { event.preventDefault(); first.focus(); }
  }

  function open() {
    panel.hidden = false;
    wrap.classList.add("open");
    launcher.setAttribute("aria-expanded", "true");
    if (blocked && !log.querySelector(".blocked")) log.appendChild(el("p", { class: "note warn blocked", text: S.blocked }));
    box.focus();
  }

  function closePanel() {
    panel.hidden = true;
    wrap.classList.remove("open");
    launcher.setAttribute("aria-expanded", "false");
    launcher.focus();
  }

  function loadConfig() {
    fetch(server + "/api/widget-config", { credentials: "omit" }).then(function (response) {
      return response.ok ? response.json() : null;
    }).then(function (body) {
      if (!body) return;
      config = body;
      box.setAttribute("maxlength", String(body.max_paste_chars || body.max_message_chars || 2000));
    }, function () {
      blocked = true;
      console.error(blockedMessage());
    });
  }

  /* The source's title in the labels' language where it has one; its framework, else that title, beside an entry. */
  function sourceTitle(hit) {
    return (hit.source.titles && hit.source.titles[lang]) || hit.source.title;
  }

  function sourceLabel(hit) {
    return hit.source.framework || sourceTitle(hit);
  }

  function entryList(label, hits) {
    var list = el("ul", { class: "list" });
    hits.forEach(function (hit) {
      list.appendChild(el("li", {}, [
        link(hit.permalink, hit.question), document.createTextNode(" "),
        el("span", { class: "fw", text: "· " + sourceLabel(hit) })
      ]));
    });
    return el("div", { class: "meta" }, [el("span", { class: "label", text: label }), list]);
  }

  /* "See also": resolved tracker threads near a question the FAQ does not cover, marked as not its answer. */
  function seeAlso(threads) {
    var list = el("ul", { class: "list" });
    threads.forEach(function (thread) {
      list.appendChild(el("li", {}, [
        link(thread.url, thread.title), document.createTextNode(" "),
        el("span", { class: "fw", text: "· " + thread.repo + "#" + thread.number })
      ]));
    });
    return el("div", { class: "meta see-also" }, [
      el("span", { class: "label", text: S.seeAlso }), list, el("p", { class: "mode", text: S.notAnswer })
    ]);
  }

  /* HTML for an answer as the server rendered it (Markdown with raw HTML off); links open in a new tab. */
  function answerBlock(html) {
    var answer = el("div", { class: "answer" });
    answer.innerHTML = html;
    Array.prototype.forEach.call(answer.querySelectorAll(".codebar,button,script,style,iframe"), function (node) { node.remove(); });
    Array.prototype.forEach.call(answer.querySelectorAll("a"), function (a) {
      a.target = "_blank";
      a.rel = "noopener noreferrer";
    });
    return answer;
  }

  // One vote per answer per visit: the session the server signed in its first chat reply, kept
  // for this tab's session (the widget sends no cookies, so the server cannot set one).
  var session = null;
  try { session = sessionStorage.getItem("kb-widget-session"); } catch (e) { session = null; }

  function keepSession(issued) {
    if (session || !issued) return;
    session = issued;
    try { sessionStorage.setItem("kb-widget-session", issued); } catch (e) { /* kept for this page only */ }
  }

  function votes(message, hit) {
    var row = el("div", { class: "votes" });
    [[true, S.helpful, ICON_UP], [false, S.unhelpful, ICON_DOWN]].forEach(function (choice) {
      var button = el("button", { type: "button", class: "vote" }, [icon(choice[2]), el("span", { text: choice[1] })]);
      button.addEventListener("click", function () {
        fetch(server + "/api/feedback", {
          method: "POST", credentials: "omit", headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ message: message, entry_id: hit.id, helpful: choice[0], session: session })
        }).catch(function () {});
        row.replaceWith(el("p", { class: "mode", text: S.thanks }));
      });
      row.appendChild(button);
    });
    return row;
  }

  function sourceLine(hit) {
    return el("div", { class: "meta" }, [
      el("span", { class: "label", text: S.source }),
      link(hit.url, [sourceTitle(hit), hit.source.version].filter(Boolean).join(" · "), "source"),
      document.createTextNode(" · "),
      link(hit.permalink, S.entry, "entry")
    ]);
  }

  function versionNote(hit) {
    var said = el("p", { class: "note", text: hit.note });
    if (hit.translated_by && hit.original_url) {
      said.appendChild(document.createTextNode(" "));
      said.appendChild(el("a", { href: hit.original_url, target: "_blank", rel: "noopener noreferrer", text: hit.lang === "zh" ? "原文" : "original" }));
    }
    return said;
  }

  /* The blocks of a reply in the widget's markup; reply.js orders them. */
  function view(reply, message) {
    var voted = function (hit) { return config.feedback ? votes(message, hit) : null; };
    return {
      text: function (key, values) { return S[key].replace("{confidence}", values && values.confidence); },
      notice: function (text, kind) { return el("p", { class: ("note " + kind).trim(), text: text }); },
      versionNote: versionNote,
      answer: answerBlock,
      likely: function (first) {
        return el("div", { class: "likely" }, [
          el("p", { class: "likely-label" }, [document.createTextNode(S.notCertain + " · "), link(first.permalink, first.question)])
        ]);
      },
      quoted: function (first) { return [sourceLine(first), el("p", { class: "mode", text: S.quoted }), voted(first)]; },
      cited: sourceLine,
      closing: function (best) { return [reply.mode === "llm" ? el("p", { class: "mode", text: S.llm }) : null, voted(best)]; },
      entries: function (kind, hits) { return entryList(S[kind], hits); },
      seeAlso: seeAlso
    };
  }

  function showReply(bubble, reply, message) {
    useLanguage(reply.lang);
    KBReply.render(bubble, reply, view(reply, message));
  }

  function ask(message) {
    if (busy) return;
    busy = true;
    send.disabled = true;
    var question = el("div", { class: "msg user", text: message });
    var bubble = el("div", { class: "msg bot" }, [el("p", { class: "wait", text: S.thinking })]);
    log.appendChild(question);
    log.appendChild(bubble);
    log.scrollTop = log.scrollHeight;
    KBReply.ask(server + "/api/chat?channel=widget", {
      credentials: "omit",
      body: JSON.stringify({ message: message, history: history.slice(-10) })
    }, {
      delta: KBReply.stream(bubble, function () { return el("div", { class: "answer" }); }),
      done: function (body) {
        keepSession(body.session);
        showReply(bubble, body, message);
        history.push({ role: "user", content: message }, { role: "assistant", content: body.answer.slice(0, 4000) });
      }
    }).catch(function (error) {
      var text = error instanceof TypeError ? (blocked ? S.blocked : S.offline) : S.error + error.message;
      if (error instanceof TypeError && blocked) console.error(blockedMessage());
      bubble.textContent = "";
      bubble.appendChild(el("p", { class: "note warn", text: text }));
    }).then(function () {
      busy = false;
      send.disabled = false;
      /* Show the question at the top, so a long answer is read from its start. */
      log.scrollTop = question.offsetTop - log.offsetTop - 12;
      if (!panel.hidden) box.focus();
    });
  }

  window.KBWidget = Object.freeze({
    version: "1",
    open: function () { if (panel) open(); },
    close: function () { if (panel) closePanel(); },
    ask: function (message) { if (panel && message) { open(); ask(String(message)); } }
  });
  if (document.body) build();
  else document.addEventListener("DOMContentLoaded", build);
})();
