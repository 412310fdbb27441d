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

  /* Fill a bot bubble with a finished reply (the same markup as templates/_reply.html). */
  function showReply(bubble, reply) {
    bubble.textContent = "";
    var sources = reply.sources || [];
    /* the first entry may answer: its answer whole, set apart and marked not certain, then the others */
    var likely = !reply.answered && reply.state !== "not_covered" && sources.length > 0;
    if (reply.note) bubble.appendChild(el("p", "elsewhere", reply.note));
    if (likely) bubble.appendChild(el("p", "notice", KB.format(reply.state, { confidence: reply.confidence.toFixed(2) })));
    else if (!reply.answered && !reply.note) bubble.appendChild(el("p", "notice", KB.strings.chat_no_answer));
    if (reply.mode === "fallback") bubble.appendChild(el("p", "notice warn", KB.strings.chat_mode_fallback));
    /* HTML rendered by the server with raw HTML disabled. The extractive `answer` text also
       lists the source and related entries; here the cards below show those. */
    var html = reply.mode === "llm" ? reply.answer_html : (reply.answered && sources.length ? sources[0].answer_html : "");
    if (likely) {
      var first = sources[0];
      var box = el("div", "likely-answer");
      box.setAttribute("data-likely", "");
      var label = el("p", "likely-label", KB.strings.chat_not_certain + " · ");
      var title = el("a", "", first.question);
      title.href = "/entries/" + encodeURIComponent(first.id);
      label.appendChild(title);
      box.appendChild(label);
      if (first.note) box.appendChild(KB.versionNote(first, reply.lang));
      var quoted = el("div", "prose answer");
      quoted.innerHTML = first.answer_html;
      box.appendChild(quoted);
      var from = el("div", "reply-source");
      from.appendChild(el("span", "label", KB.strings.chat_source));
      from.appendChild(sourceLink(first));
      box.appendChild(from);
      box.appendChild(el("p", "reply-mode", KB.strings.chat_mode_extractive));
      bubble.appendChild(box);
    }
    if (html && reply.mode !== "llm" && sources[0].note) bubble.appendChild(KB.versionNote(sources[0], reply.lang));
    if (html) {
      var answer = el("div", "prose answer");
      answer.innerHTML = html;
      bubble.appendChild(answer);
    }
    if (sources.length) {
      if (reply.answered) {
        var source = el("div", "reply-source");
        source.appendChild(el("span", "label", KB.strings.chat_source));
        var link = el("a", "", sources[0].question);
        link.href = "/entries/" + encodeURIComponent(sources[0].id);
        source.appendChild(link);
        source.appendChild(sourceLink(sources[0]));
        bubble.appendChild(source);
        bubble.appendChild(el("p", "reply-mode",
          reply.mode === "llm" ? KB.strings.chat_mode_llm : KB.strings.chat_mode_extractive));
        if (sources.length > 1) {
          var related = el("div", "reply-related");
          related.appendChild(el("span", "label", KB.strings.chat_related));
          related.appendChild(relatedList(sources.slice(1, 4)));
          bubble.appendChild(related);
        }
      } else if (likely) {
        if (sources.length > 1) {
          var others = el("div", "reply-related");
          others.appendChild(el("span", "label", KB.strings.chat_others));
          others.appendChild(relatedList(sources.slice(1, 4)));
          bubble.appendChild(others);
        }
      } else {
        var nearest = el("div", "reply-related");
        nearest.appendChild(el("span", "label", KB.strings.chat_suggestions));
        nearest.appendChild(relatedList(sources.slice(0, 4)));
        bubble.appendChild(nearest);
      }
    }
    if (!reply.answered && reply.see_also && reply.see_also.length) bubble.appendChild(KB.seeAlso(reply.see_also));
    KB.enhance(bubble);
  }

  function showError(bubble, message) {
    bubble.textContent = "";
    bubble.appendChild(el("p", "notice warn", KB.format("chat_error", { error: message })));
  }

  /* Read a server-sent-event stream, calling onEvent(name, data) for each event. */
  function readEvents(response, onEvent) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    function pump() {
      return reader.read().then(function (chunk) {
        buffer += decoder.decode(chunk.value || new Uint8Array(), { stream: !chunk.done });
        var parts = buffer.split("\n\n");
        buffer = parts.pop();
        parts.forEach(function (part) {
          var name = "message";
          var data = "";
          part.split("\n").forEach(function (line) {
            if (line.indexOf("event:") === 0) name = line.slice(6).trim();
            else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
          });
          if (data) onEvent(name, JSON.parse(data));
        });
        if (!chunk.done) return pump();
      });
    }
    return pump();
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

    var streamed = null;
    var finished = false;
    fetch("/api/chat?channel=web", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      /* answered in the question's language */
      body: JSON.stringify({ message: message, history: history, about: (aboutField && aboutField.value) || undefined })
    }).then(function (response) {
      if (!response.ok) {
        return response.json().then(function (body) { throw new Error(body.error || response.statusText); });
      }
      return readEvents(response, function (name, data) {
        if (name === "delta") {
          if (!streamed) {
            bubble.textContent = "";
            streamed = el("div", "prose answer streaming");
            bubble.appendChild(streamed);
          }
          streamed.textContent += data.text;
        } else if (name === "done") {
          finished = true;
          showReply(bubble, data);
          // The follow-up needs only the last turns; the server caps the history it takes.
          history.push({ role: "user", content: message });
          history.push({ role: "assistant", content: data.answer.slice(0, 4000) });
          history = history.slice(-10);
          historyField.value = JSON.stringify(history);
        } else if (name === "error") {
          throw new Error(data.error);
        }
      });
    }).then(function () {
      if (!finished) throw new Error("the answer stopped early");
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
