/* Votes on answers on the search and chat pages: helpful or not, then (for "not helpful") an
   optional reason and comment, posted to /api/feedback. The page includes #vote-template only
   while the server takes feedback; without it this script does nothing. A second vote on the
   same answer replaces the first (the server keeps one per answer per browser session). */
(function () {
  "use strict";
  var template = document.getElementById("vote-template");
  if (!template) return;
  var stringsNode = document.getElementById("vote-strings");
  var strings = stringsNode ? JSON.parse(stringsNode.textContent) : {};
  var results = document.querySelector("[data-results]");
  var conversation = document.querySelector("[data-conversation]");
  var searchBox = document.getElementById("q");

  function post(vote, row) {
    var error = row.querySelector(".vote-error");
    error.hidden = true;
    return fetch("/api/feedback?channel=web", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(vote)
    }).then(function (response) {
      if (response.ok) return;
      return response.json().then(function (body) { throw new Error(body.error || response.statusText); });
    }).catch(function (problem) {
      error.textContent = (strings.failed || "{error}").split("{error}").join(problem.message);
      error.hidden = false;
    });
  }

  function attach(container, entryId, question) {
    if (!entryId || !question || container.querySelector("[data-votes]")) return;
    var row = template.content.firstElementChild.cloneNode(true);
    var why = row.querySelector(".vote-why");
    var done = row.querySelector(".vote-done");
    var vote = { entry_id: entryId, message: question, helpful: true };

    function finish() {
      Array.prototype.forEach.call(row.querySelectorAll(".vote, .votes-q"), function (node) { node.hidden = true; });
      why.hidden = true;
      done.hidden = false;
    }

    row.querySelector("[data-vote=up]").addEventListener("click", function () {
      vote = { entry_id: entryId, message: question, helpful: true };
      post(vote, row);
      finish();
    });
    row.querySelector("[data-vote=down]").addEventListener("click", function (event) {
      vote = { entry_id: entryId, message: question, helpful: false };
      post(vote, row); /* counted now; the reason and comment, if given, replace it */
      event.currentTarget.classList.add("chosen");
      why.hidden = false;
      why.querySelector("input").focus();
    });
    why.addEventListener("submit", function (event) {
      event.preventDefault();
      var reason = why.querySelector("input[name=reason]:checked");
      var comment = why.querySelector("input[name=comment]").value.trim();
      if (reason) vote.reason = reason.value;
      if (comment) vote.comment = comment;
      if (reason || comment) post(vote, row);
      finish();
    });
    container.appendChild(row);
  }

  function decorate() {
    if (results && searchBox) {
      var question = searchBox.value.trim();
      Array.prototype.forEach.call(results.querySelectorAll(".result"), function (item) {
        attach(item.querySelector(".result-meta") || item, item.id.replace(/^r-/, ""), question);
      });
    }
    if (conversation) {
      Array.prototype.forEach.call(conversation.querySelectorAll(".turn.bot"), function (turn) {
        var link = turn.querySelector(".reply-source a[href^='/entries/']");
        var asked = turn.previousElementSibling && turn.previousElementSibling.querySelector(".bubble");
        if (link && asked) {
          attach(turn.querySelector(".bubble"), decodeURIComponent(link.getAttribute("href").slice(9)), asked.textContent.trim());
        }
      });
    }
  }

  [results, conversation].forEach(function (node) {
    if (node) new MutationObserver(decorate).observe(node, { childList: true, subtree: true });
  });
  decorate();
})();
