/* The search page: results while typing (debounced /api/search, no reload), filters, arrow keys.
   Without JavaScript the same form submits to /search and the server renders the results. */
(function () {
  "use strict";
  var KB = window.KB;
  var el = KB.el, sourceLink = KB.sourceLink;
  var form = document.querySelector("[data-search-form]");
  if (!form) return;
  var input = form.querySelector("#q");
  var filters = Array.prototype.slice.call(form.querySelectorAll("[data-filter]"));
  var list = document.querySelector("[data-results]");
  var status = document.querySelector("[data-status]");
  var empty = document.querySelector("[data-empty]");
  var noAnswer = document.querySelector("[data-no-answer]");
  var noAnswerTitle = document.querySelector("[data-no-answer-title]");
  var noAnswerNearest = document.querySelector("[data-no-answer-nearest]");
  var confidence = document.querySelector("[data-confidence]");
  var elsewhere = document.querySelector("[data-elsewhere]");
  var seeAlsoArea = document.querySelector("[data-see-also-area]");
  var intro = document.querySelector("[data-intro]");
  var hero = document.querySelector(".hero");
  var labelsNode = document.getElementById("tag-labels");
  var tagLabels = labelsNode ? JSON.parse(labelsNode.textContent) : {};
  var DEBOUNCE_MS = 160;
  var LIMIT = 10; /* searched for; the server says how many deserve showing */
  var timer = null;
  var inflight = null;
  var lastKey = null;
  /* Searches made while typing carry this id, so the server records a run of them once. */
  var liveId = Math.random().toString(36).slice(2, 12);

  function params() {
    var p = new URLSearchParams();
    var q = input.value.trim();
    if (q) p.set("q", q);
    filters.forEach(function (select) { if (select.value) p.set(select.name, select.value); });
    return p;
  }


  function chips(tags) {
    var topics = tags.filter(function (t) { return tagLabels[t]; }).slice(0, 4);
    if (!topics.length) return null;
    var ul = el("ul", "chips");
    topics.forEach(function (t) {
      var li = el("li");
      var a = el("a", "chip", tagLabels[t]);
      a.href = "/search?tag=" + encodeURIComponent(t);
      li.appendChild(a);
      ul.appendChild(li);
    });
    return ul;
  }

  function resultItem(hit, reader, whole) {
    var li = el("li", "result");
    li.id = "r-" + hit.id;
    var link = el("a", "result-link");
    link.href = "/entries/" + encodeURIComponent(hit.id) + "?hl=" + hit.lang; /* the version the result shows */
    var h3 = el("h3", "result-q", hit.question);
    KB.markTerms(h3, hit.matched);
    link.appendChild(h3);
    li.appendChild(link);
    if (hit.note) li.appendChild(KB.versionNote(hit, reader));
    var answer = el("div", "result-answer prose");
    answer.innerHTML = hit.answer_html; /* rendered by the server with raw HTML disabled */
    if (whole) answer.setAttribute("data-whole", ""); /* the answer, or the one that may answer: never cut */
    KB.markTerms(answer, hit.matched);
    li.appendChild(answer);
    var meta = el("div", "result-meta");
    meta.appendChild(sourceLink(hit));
    var tagList = chips(hit.tags);
    if (tagList) meta.appendChild(tagList);
    li.appendChild(meta);
    return li;
  }

  function showIntro(show) {
    if (intro) intro.hidden = !show;
    if (hero) hero.classList.toggle("compact", !show);
  }

  function render(data) {
    var hits = data.hits.slice(0, data.shown);
    list.textContent = "";
    var firstWhole = data.state !== "not_covered";
    hits.forEach(function (hit, i) { list.appendChild(resultItem(hit, data.hl, i === 0 && firstWhole)); });
    KB.enhance(list);
    var count = hits.length === 1 ? KB.strings.results_count_one : KB.format("results_count", { n: hits.length });
    status.textContent = hits.length && data.answered ? count : "";
    var likely = !data.answered && data.state !== "not_covered";
    noAnswer.hidden = !(hits.length && !data.answered);
    noAnswerTitle.textContent =
      (!data.answered && data.note) || (likely ? KB.strings["results_" + data.state] : KB.strings.results_no_answer);
    if (noAnswerNearest) noAnswerNearest.hidden = likely;
    if (confidence) {
      /* the first result's confidence, in every state: how likely it is to answer */
      confidence.textContent = hits.length ? KB.format("results_confidence", { confidence: data.confidence.toFixed(2) }) : "";
      confidence.dataset.state = data.state || "";
      confidence.hidden = !hits.length;
    }
    if (seeAlsoArea) {
      seeAlsoArea.textContent = "";
      var threads = data.state !== "answered" && data.see_also ? data.see_also : [];
      if (threads.length) seeAlsoArea.appendChild(KB.seeAlso(threads));
    }
    elsewhere.textContent = data.answered && data.note ? data.note : "";
    elsewhere.hidden = !(hits.length && data.answered && data.note);
    empty.hidden = hits.length > 0;
  }

  function clear() {
    if (inflight) inflight.abort();
    list.textContent = "";
    status.textContent = "";
    noAnswer.hidden = true;
    if (confidence) confidence.hidden = true;
    elsewhere.hidden = true;
    empty.hidden = true;
    if (seeAlsoArea) seeAlsoArea.textContent = "";
    showIntro(true);
  }

  /* While the reader types, the first stage's results (judge=0); on Enter, the judged order. */
  function run(final) {
    var p = params();
    var key = p.toString();
    if (key === lastKey) return;
    lastKey = key;
    if (!p.has("q")) {
      if (p.toString()) {
        form.submit(); /* a filter without words lists the entries; the server renders that */
        return;
      }
      history.replaceState(null, "", "/");
      clear();
      return;
    }
    history.replaceState(null, "", "/search?" + key);
    showIntro(false);
    if (inflight) inflight.abort();
    inflight = new AbortController();
    var api = new URLSearchParams(p);
    api.set("k", String(LIMIT));
    api.set("channel", "web");
    api.set("live", liveId);
    if (!final) api.set("judge", "0");
    status.textContent = KB.strings.results_searching;
    fetch("/api/search?" + api.toString(), { signal: inflight.signal, headers: { Accept: "application/json" } })
      .then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) throw new Error(body.error || response.statusText);
          return body;
        });
      })
      .then(render)
      .catch(function (error) {
        if (error.name === "AbortError") return;
        list.textContent = "";
        empty.hidden = true;
        noAnswer.hidden = true;
        elsewhere.hidden = true;
        status.textContent = KB.format("results_error", { error: error.message });
      });
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  }

  function links() {
    return Array.prototype.slice.call(list.querySelectorAll(".result-link"));
  }

  input.addEventListener("input", schedule);
  filters.forEach(function (select) {
    select.addEventListener("change", function () { clearTimeout(timer); run(); });
  });
  form.addEventListener("submit", function (event) {
    if (!input.value.trim()) return; /* let the server handle a filter-only search */
    event.preventDefault();
    clearTimeout(timer);
    lastKey = null;
    run(true);
  });

  input.addEventListener("keydown", function (event) {
    if (event.key === "ArrowDown") {
      var first = links()[0];
      if (first) { event.preventDefault(); first.focus(); }
    } else if (event.key === "Escape") {
      input.value = "";
      clearTimeout(timer);
      run();
    }
  });

  list.addEventListener("keydown", function (event) {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    var all = links();
    var index = all.indexOf(document.activeElement);
    if (index === -1) return;
    event.preventDefault();
    var next = index + (event.key === "ArrowDown" ? 1 : -1);
    if (next < 0) input.focus();
    else if (next < all.length) {
      all[next].focus();
      all[next].closest(".result").scrollIntoView({ block: "nearest" });
    }
  });

  lastKey = params().toString();
})();
