/* The chat page: posts to /api/chat with `Accept: text/event-stream` and shows the answer as it
   arrives; keeps the conversation so follow-ups ("what about sglang?") are read in context.
   Without JavaScript the form posts to /chat and the server renders the conversation. */
(function () {
  "use strict";
  var KB = window.KB;
  var el = KB.el, sourceLink = KB.sourceLink;
  var form = document.querySelector("[data-chat-form]");
  if (!form) return;
  var box = form.querySelector("textarea");
  var send = form.querySelector("button[type=submit]");
  var conversation = document.querySelector("[data-conversation]");
  var examples = document.querySelector("[data-chat-examples]");
  var historyField = form.querySelector("input[name=history]");
  var aboutField = form.querySelector("input[name=about]");  /* the entry the conversation is about, if any */
  var history = [];
  try { history = JSON.parse(historyField.value) || []; } catch (e) { history = []; }
  var busy = false;

  function scrollDown() {
    window.scrollTo({ top: document.body.scrollHeight, behavior: "smooth" });
  }

  function relatedList(hits) {
    var ul = el("ul", "related compact");
    hits.forEach(function (hit) {
      var li = el("li");
      var a = el("a");
      a.href = "/entries/" + encodeURIComponent(hit.id);
      a.appendChild(el("span", "related-q", hit.question));
      a.appendChild(el("span", "related-src", [KB.sourceLabel(hit), hit.source.version].filter(Boolean).join(" · ")));
      li.appendChild(a);
      ul.appendChild(li);
    });
    return ul;
  }

  function replySource(hit, titled) {
    var source = el("div", "reply-source");
    source.appendChild(el("span", "label", KB.strings.chat_source));
    if (titled) source.appendChild(entryLink(hit));
    source.appendChild(sourceLink(hit));
    return source;
  }

  function entryLink(hit) {
    var a = el("a", "", hit.question);
    a.href = "/entries/" + encodeURIComponent(hit.id);
    return a;
  }

  function labelled(label, hits) {
    var box = el("div", "reply-related");
    box.appendChild(el("span", "label", label));
    box.appendChild(relatedList(hits));
    return box;
  }

  var TEXT = { none: "chat_no_answer", fallback: "chat_mode_fallback" };
  var ENTRIES = { related: "chat_related", others: "chat_others", nearest: "chat_suggestions" };

  /* The blocks of a reply in the page's markup (the same as templates/_reply.html); reply.js orders them. */
  function view(reply) {
    var mode = el.bind(null, "p", "reply-mode");
    return {
      text: function (key, values) { return TEXT[key] ? KB.strings[TEXT[key]] : KB.format(key, values); },
      notice: function (text, kind) { return el("p", kind === "elsewhere" ? "elsewhere" : ("notice " + kind).trim(), text); },
      versionNote: function (hit) { return KB.versionNote(hit, reply.lang); },
      answer: function (html) {
        var answer = el("div", "prose answer");
        answer.innerHTML = html;  /* rendered by the server with raw HTML disabled */
        return answer;
      },
      likely: function (first) {
        var box = el("div", "likely-answer");
        box.setAttribute("data-likely", "");
        var label = el("p", "likely-label", KB.strings.chat_not_certain + " · ");
        label.appendChild(entryLink(first));
        box.appendChild(label);
        return box;
      },
      quoted: function (first) { return [replySource(first, false), mode(KB.strings.chat_mode_extractive)]; },
      cited: function (best) {
        return [replySource(best, true), mode(reply.mode === "llm" ? KB.strings.chat_mode_llm : KB.strings.chat_mode_extractive)];
      },
      closing: function () { return []; },
      entries: function (kind, hits) { return labelled(KB.strings[ENTRIES[kind]], hits); },
      seeAlso: KB.seeAlso
    };
  }

  /* Fill a bot bubble with a finished reply. */
  function showReply(bubble, reply) {
    KBReply.render(bubble, reply, view(reply));
    KB.enhance(bubble);
  }

  function showError(bubble, message) {
    bubble.textContent = "";
    bubble.appendChild(el("p", "notice warn", KB.format("chat_error", { error: message })));
  }

  function ask(message) {
    if (busy || !message) return;
    busy = true;
    send.disabled = true;
    if (examples) examples.hidden = true;
    var userTurn = el("li", "turn user");
    userTurn.appendChild(el("div", "bubble", message));
    conversation.appendChild(userTurn);
    var botTurn = el("li", "turn bot");
    var bubble = el("div", "bubble");
    var waiting = el("span", "thinking", KB.strings.chat_thinking);
    bubble.appendChild(waiting);
    botTurn.appendChild(bubble);
    conversation.appendChild(botTurn);
    scrollDown();

    KBReply.ask("/api/chat?channel=web", {
      /* answered in the question's language */
      body: JSON.stringify({ message: message, history: history, about: (aboutField && aboutField.value) || undefined })
    }, {
      delta: KBReply.stream(bubble, function () { return el("div", "prose answer streaming"); }),
      done: function (data) {
        showReply(bubble, data);
        // The follow-up needs only the last turns; the server caps the history it takes.
        history.push({ role: "user", content: message });
        history.push({ role: "assistant", content: data.answer.slice(0, 4000) });
        history = history.slice(-10);
        historyField.value = JSON.stringify(history);
      }
    }).catch(function (error) {
      showError(bubble, error.message);
    }).then(function () {
      busy = false;
      send.disabled = false;
      box.focus();
      scrollDown();
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var message = box.value.trim();
    if (!message) return;
    box.value = "";
    ask(message);
  });

  box.addEventListener("keydown", function (event) {
    /* Enter sends; Shift+Enter is a new line; Enter while an input method is composing is not ours. */
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
      event.preventDefault();
      form.requestSubmit ? form.requestSubmit() : form.dispatchEvent(new Event("submit", { cancelable: true }));
    }
  });

  document.querySelectorAll("[data-example]").forEach(function (button) {
    button.addEventListener("click", function () { ask(button.value); });
  });

  var fresh = document.querySelector("[data-chat-new]");
  if (fresh) {
    fresh.addEventListener("click", function (event) {
      if (aboutField && aboutField.value) return;  /* leave the entry's conversation: a plain /chat */
      event.preventDefault();
      history = [];
      historyField.value = "[]";
      conversation.textContent = "";
      if (examples) examples.hidden = false;
      box.value = "";
      box.focus();
    });
  }
})();
