/* A chat reply, for the chat page (chat.js, after this file) and the widget (the server serves
   /widget.js with this file inside it, so the widget stays one script and adds no global): the
   request to /api/chat and its event stream, and which blocks a finished reply shows, in which
   order, for each state. Each caller draws the blocks in its own markup through a `view`:
     text(key, values)     "none", "fallback" or the reply's state, worded
     notice(text, kind)    a line above the answer; kind "elsewhere", "" or "warn"
     versionNote(hit)      what the entry says of its version or language
     answer(html)          an answer as the server rendered it (Markdown with raw HTML off)
     likely(first)         the box that sets the first entry's answer apart, with its label
     quoted(first)         the lines closing that box (its source, how it was answered, votes)
     cited(best)           the lines under an answer, above the related entries
     closing(best)         the lines under the related entries
     entries(kind, hits)   entries of kind "related", "others" or "nearest"
     seeAlso(threads)      resolved tracker threads, marked as not the FAQ's answer
   Nodes are built with textContent; only the server's rendered answer is HTML. */
var KBReply = (function () {
  "use strict";

  /* The first entry may answer: not an answer, yet not "not covered", and an entry to offer. */
  function mayAnswer(reply) {
    return !reply.answered && reply.state !== "not_covered" && (reply.sources || []).length > 0;
  }

  function append(parent, nodes) {
    [].concat(nodes || []).forEach(function (node) { if (node) parent.appendChild(node); });
  }

  function likelyBox(first, view) {
    var box = view.likely(first);
    if (first.note) box.appendChild(view.versionNote(first));
    box.appendChild(view.answer(first.answer_html));
    append(box, view.quoted(first));
    return box;
  }

  /* Fill `bubble` with a finished reply. */
  function render(bubble, reply, view) {
    bubble.textContent = "";
    var add = function (nodes) { append(bubble, nodes); };
    var sources = reply.sources || [];
    var likely = mayAnswer(reply);
    if (reply.note) add(view.notice(reply.note, "elsewhere"));
    if (likely) add(view.notice(view.text(reply.state, { confidence: reply.confidence.toFixed(2) }), ""));
    else if (!reply.answered && !reply.note) add(view.notice(view.text("none"), ""));
    if (reply.mode === "fallback") add(view.notice(view.text("fallback"), "warn"));
    /* An LLM's answer, else the first entry's when it answers; the extractive `answer` text also
       lists the source and related entries, which the blocks below show. */
    var html = reply.mode === "llm" ? reply.answer_html : (reply.answered && sources.length ? sources[0].answer_html : "");
    if (html && reply.mode !== "llm" && sources[0].note) add(view.versionNote(sources[0]));
    if (html) add(view.answer(html));
    if (likely) {
      add(likelyBox(sources[0], view));
      if (sources.length > 1) add(view.entries("others", sources.slice(1, 4)));
    } else if (reply.answered && sources.length) {
      add(view.cited(sources[0]));
      if (sources.length > 1) add(view.entries("related", sources.slice(1, 4)));
      add(view.closing(sources[0]));
    } else if (sources.length) {
      add(view.entries("nearest", sources.slice(0, 4)));
    }
    if (!reply.answered && reply.see_also && reply.see_also.length) add(view.seeAlso(reply.see_also));
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
          var name = "message", text = "";
          part.split("\n").forEach(function (line) {
            if (line.indexOf("event:") === 0) name = line.slice(6).trim();
            else if (line.indexOf("data:") === 0) text += line.slice(5).trim();
          });
          if (text) onEvent(name, JSON.parse(text));
        });
        if (!chunk.done) return pump();
      });
    }
    return pump();
  }

  /* POST a message to `url` and read the answer as it streams: on.delta(text) for each piece,
     on.done(reply) for the finished reply. Fails with the server's error, or if the stream ends early. */
  function ask(url, init, on) {
    init.method = "POST";
    init.headers = { "Content-Type": "application/json", Accept: "text/event-stream" };
    return fetch(url, init).then(function (response) {
      if (!response.ok) {
        return response.json().then(function (body) { throw new Error(body.error || response.statusText); });
      }
      var finished = false;
      return readEvents(response, function (name, data) {
        if (name === "delta") on.delta(data.text);
        else if (name === "done") { finished = true; on.done(data); }
        else if (name === "error") throw new Error(data.error);
      }).then(function () {
        if (!finished) throw new Error("the answer stopped early");
      });
    });
  }

  /* The streamed answer so far, in a node made by make() that replaces the bubble's "thinking" line. */
  function stream(bubble, make) {
    var node = null;
    return function (text) {
      if (!node) {
        bubble.textContent = "";
        node = bubble.appendChild(make());
      }
      node.textContent += text;
    };
  }

  return { mayAnswer: mayAnswer, render: render, ask: ask, stream: stream };
})();
