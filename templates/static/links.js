/* The insights page's teaching actions. "Answered by…" opens an entry picker: it offers the
   entries nearest the question at once, then searches as the maintainer types (debounced
   GET /insights/entries, which, unlike /api/search, is not recorded as a question asked), and
   choosing an entry posts the page's own form, which links the question to it. Without
   JavaScript the same form takes an entry id. The recent questions are filtered as one types. */
(function () {
  "use strict";
  var stringsNode = document.getElementById("picker-strings");
  if (!stringsNode) return;
  var strings = JSON.parse(stringsNode.textContent);
  var DEBOUNCE_MS = 180;
  var K = 8;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function picker(form) {
    var details = form.closest("details");
    var idField = form.querySelector("input[name=entry_id]");
    var question = form.querySelector("input[name=question]").value;
    var search = el("input", "teach-search");
    search.type = "search";
    search.placeholder = strings.search;
    search.autocomplete = "off";
    search.setAttribute("aria-label", strings.search);
    var list = el("ul", "teach-results");
    list.setAttribute("role", "listbox");
    var note = el("p", "teach-note");
    note.hidden = true;
    var label = form.querySelector(".teach-id");
    form.insertBefore(search, label);
    form.insertBefore(list, label);
    form.insertBefore(note, label);
    form.classList.add("picking");

    var timer = null;
    var asked = 0; /* only the latest search's answer is shown */
    var shownFor = null;
    var active = -1;
    var choosing = false;

    function choices() { return Array.prototype.slice.call(list.querySelectorAll(".teach-choice")); }

    function highlight(index) {
      var all = choices();
      if (!all.length) { active = -1; return; }
      active = (index + all.length) % all.length;
      all.forEach(function (button, i) {
        button.classList.toggle("active", i === active);
        button.parentNode.setAttribute("aria-selected", i === active ? "true" : "false");
      });
      all[active].scrollIntoView({ block: "nearest" });
    }

    function choose(id) {
      if (choosing) return;
      choosing = true;
      idField.value = id;
      choices().forEach(function (button) { button.disabled = true; });
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
    }

    function show(entries) {
      list.textContent = "";
      active = -1;
      note.hidden = entries.length > 0;
      note.textContent = entries.length ? "" : strings.none;
      entries.forEach(function (entry) {
        var li = el("li");
        li.setAttribute("role", "option");
        var button = el("button", "teach-choice");
        button.type = "button";
        button.dataset.id = entry.id;
        button.appendChild(el("span", "teach-choice-q", entry.question));
        button.appendChild(el("span", "teach-choice-src", entry.framework + " · " + entry.id));
        button.addEventListener("click", function () { choose(entry.id); });
        li.appendChild(button);
        list.appendChild(li);
      });
    }

    function find() {
      var text = search.value.trim() || question; /* nothing typed: the entries nearest the question */
      if (text === shownFor) return;
      var mine = ++asked;
      fetch("/insights/entries?" + new URLSearchParams({ q: text, k: String(K) }), {
        headers: { Accept: "application/json" }, credentials: "same-origin"
      }).then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) throw new Error(body.error || response.statusText);
          return body;
        });
      }).then(function (body) {
        if (mine !== asked) return;
        shownFor = text;
        show(body.entries || []);
      }).catch(function (problem) {
        if (mine !== asked) return;
        list.textContent = "";
        note.textContent = strings.failed.split("{error}").join(problem.message);
        note.hidden = false;
      });
    }

    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(find, DEBOUNCE_MS);
    });
    search.addEventListener("keydown", function (event) {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        highlight(active + (event.key === "ArrowDown" ? 1 : -1));
      } else if (event.key === "Enter") {
        event.preventDefault(); /* never the form's own submit with no entry chosen */
        var all = choices();
        if (all.length) choose(all[active >= 0 ? active : 0].dataset.id);
      } else if (event.key === "Escape" && details) {
        details.open = false;
      }
    });
    if (details) {
      details.addEventListener("toggle", function () {
        if (!details.open) return;
        search.focus();
        find();
      });
    }
  }

  Array.prototype.forEach.call(document.querySelectorAll("form[data-picker]"), picker);

  /* The recent questions: those holding what is typed in their search box. */
  var findBox = document.querySelector("[data-recent-find]");
  var recent = document.querySelector("[data-recent]");
  var none = document.querySelector("[data-recent-none]");
  if (findBox && recent) {
    findBox.addEventListener("input", function () {
      var wanted = findBox.value.trim().toLowerCase();
      var shown = 0;
      Array.prototype.forEach.call(recent.children, function (item) {
        var match = !wanted || item.dataset.text.indexOf(wanted) !== -1;
        item.hidden = !match;
        if (match) shown += 1;
      });
      if (none) none.hidden = shown > 0;
    });
  }
})();
