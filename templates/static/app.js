/* Shared by every page: the interface strings, copy buttons, keyboard shortcuts, the language toggle.
   Loaded in <head> without `defer` so the "js" class is set before the first paint. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  var stringsNode = document.getElementById("strings");
  var strings = stringsNode ? JSON.parse(stringsNode.textContent) : {};

  function format(key, values) {
    var text = strings[key] || key;
    Object.keys(values || {}).forEach(function (name) {
      text = text.split("{" + name + "}").join(String(values[name]));
    });
    return text;
  }

  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }

  /* Wrap each of `terms` in <mark> inside `root`'s text, leaving code blocks alone. */
  function markTerms(root, terms) {
    var words = (terms || []).filter(function (t) { return t && t.trim().length > 1; });
    if (!words.length) return;
    words.sort(function (a, b) { return b.length - a.length; });
    /* A Latin word is marked only as a whole word; a Chinese term wherever it occurs. */
    var pattern = new RegExp(words.map(function (w) {
      var body = escapeRegExp(w);
      if (/^[A-Za-z0-9_]/.test(w)) body = "(?<![A-Za-z0-9_])" + body;
      if (/[A-Za-z0-9_]$/.test(w)) body += "(?![A-Za-z0-9_])";
      return body;
    }).join("|"), "gi");
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        return node.parentNode.closest("pre, mark") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
      }
    });
    var nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    nodes.forEach(function (node) {
      var text = node.nodeValue;
      pattern.lastIndex = 0;
      if (!pattern.test(text)) return;
      pattern.lastIndex = 0;
      var fragment = document.createDocumentFragment();
      var last = 0;
      text.replace(pattern, function (match, offset) {
        fragment.appendChild(document.createTextNode(text.slice(last, offset)));
        var mark = document.createElement("mark");
        mark.textContent = match;
        fragment.appendChild(mark);
        last = offset + match.length;
        return match;
      });
      fragment.appendChild(document.createTextNode(text.slice(last)));
      node.parentNode.replaceChild(fragment, node);
    });
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      var ok = document.execCommand("copy");
      document.body.removeChild(area);
      ok ? resolve() : reject(new Error("copy failed"));
    });
  }

  /* Cut (with a fade) only the result answers under `root` that are much taller than the
     cut: one that would lose a few lines, such as a short answer's code, is shown whole, and so is
     the first result's when it answers or may answer (`data-whole`): its fix is never faded out. */
  function cutLongAnswers(root) {
    root.querySelectorAll(".result-answer").forEach(function (answer) {
      var em = parseFloat(getComputedStyle(answer).fontSize) || 15;
      answer.classList.toggle("long", !answer.hasAttribute("data-whole") && answer.scrollHeight > 15 * em);
    });
  }

  /* Reveal and wire the copy buttons of the code blocks under `root`; cut long answers. */
  function enhance(root) {
    cutLongAnswers(root);
    root.querySelectorAll(".codeblock .copy").forEach(function (button) {
      if (button.dataset.ready) return;
      button.dataset.ready = "1";
      button.hidden = false;
      button.textContent = strings.copy || "Copy";
      button.addEventListener("click", function (event) {
        event.preventDefault();
        event.stopPropagation();
        var code = button.closest(".codeblock").querySelector("pre code");
        copyText(code.textContent).then(function () {
          button.textContent = strings.copied || "Copied";
          button.classList.add("done");
          setTimeout(function () {
            button.textContent = strings.copy || "Copy";
            button.classList.remove("done");
          }, 1600);
        });
      });
    });
  }

  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  document.addEventListener("keydown", function (event) {
    var slash = event.key === "/" && !event.ctrlKey && !event.metaKey && !event.altKey && !typing(event.target);
    var ctrlK = (event.ctrlKey || event.metaKey) && (event.key === "k" || event.key === "K");
    if (!slash && !ctrlK) return;
    var box = document.getElementById("q");
    event.preventDefault();
    if (box) {
      box.focus();
      box.select();
    } else {
      window.location.href = "/";
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    enhance(document);
    /* The toggle goes back to the page as it is now (live search changes the address). */
    document.querySelectorAll("[data-lang-toggle]").forEach(function (link) {
      link.addEventListener("click", function () {
        var url = new URL(link.href, window.location.href);
        url.searchParams.set("next", window.location.pathname + window.location.search);
        link.href = url.pathname + url.search;
      });
    });
    document.querySelectorAll("[data-copy-text]").forEach(function (node) {
      node.title = strings.copy || "Copy";
      node.addEventListener("click", function () { copyText(node.textContent.trim()); });
    });
  });

  /* Elements the search and chat scripts build: text only, never HTML. */
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /* The source's title in the page's language where it has one (the text may be in another). */
  function sourceTitle(hit) {
    var lang = document.documentElement.getAttribute("data-lang");
    return (hit.source.titles && hit.source.titles[lang]) || hit.source.title;
  }

  /* What names the source beside an entry: its framework, else its title (as Entry.source_label). */
  function sourceLabel(hit) {
    return hit.source.framework || sourceTitle(hit);
  }

  /* The source, linked to the entry's place in it; without a url, its file instead (as _macros.html). */
  function sourceLink(hit) {
    var a = el(hit.url ? "a" : "span", "source");
    a.title = sourceTitle(hit);
    a.appendChild(el("span", "source-fw", sourceLabel(hit)));
    if (hit.source.version) a.appendChild(el("span", "source-ver", hit.source.version));
    if (!hit.url) {
      a.appendChild(el("span", "source-ver", hit.file));
      return a;
    }
    a.href = hit.url;
    a.rel = "noopener noreferrer";
    var icon = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    icon.setAttribute("class", "ext");
    icon.setAttribute("viewBox", "0 0 16 16");
    icon.setAttribute("aria-hidden", "true");
    var path = document.createElementNS("http://www.w3.org/2000/svg", "path");
    path.setAttribute("d", "M6 3h7v7M13 3 6.5 9.5M11 9.5V13H3V5h3.5");
    path.setAttribute("fill", "none");
    path.setAttribute("stroke", "currentColor");
    path.setAttribute("stroke-width", "1.5");
    path.setAttribute("stroke-linecap", "round");
    path.setAttribute("stroke-linejoin", "round");
    icon.appendChild(path);
    a.appendChild(icon);
    return a;
  }

  /* A hit's version note (another language, or a translation) in the page's language, whatever
     the reader's (`reader`, the search's hl) is: the API words `note` in the reader's, so it is
     worded again here from the page's strings (kb/provenance.py says it the same way). */
  function noteText(hit, reader) {
    var page = document.documentElement.getAttribute("data-lang");
    if (!reader || reader === page || !strings.note_only_in) return hit.note;
    function name(code) { return strings["note_language_" + code] || code; }
    if (hit.lang !== reader) return format("note_only_in", { missing: name(reader), language: name(hit.lang) });
    var kind = hit.translated_by === "machine" ? (hit.reviewed ? "reviewed" : "machine") : "maintainers";
    return format("note_" + kind, { language: name(hit.lang === "zh" ? "en" : "zh") });
  }

  /* A hit's version note, with the original's link when it is a translation (as the
     version_line macro in _macros.html), in the page's language. */
  function versionNote(hit, reader) {
    var p = el("p", "only-in", noteText(hit, reader));
    p.lang = document.documentElement.lang || "";
    if (hit.original_url && hit.translated_by) {
      p.appendChild(document.createTextNode(" "));
      var a = el("a", "original-link", strings.note_original || "original");
      a.href = hit.original_url;
      a.rel = "noopener noreferrer";
      p.appendChild(a);
    }
    return p;
  }

  /* "See also": resolved tracker threads below the entries of a question the FAQ may not answer, marked as not
     its answer (the same markup as templates/_see_also.html); the API gives them only in the likely and
     not_covered states. */
  function seeAlso(threads) {
    var box = el("aside", "see-also");
    box.setAttribute("data-see-also", "");
    box.appendChild(el("p", "see-also-title", strings.see_also_title));
    var ul = el("ul", "see-also-list");
    threads.forEach(function (thread) {
      var li = el("li");
      var a = el("a", "", thread.title);
      a.href = /^https:\/\//.test(thread.url) ? thread.url : "#";
      a.rel = "noopener noreferrer nofollow";
      li.appendChild(a);
      li.appendChild(document.createTextNode(" "));
      li.appendChild(el("span", "see-also-where", thread.repo + "#" + thread.number));
      ul.appendChild(li);
    });
    box.appendChild(ul);
    box.appendChild(el("p", "see-also-note", strings.see_also_not_answer));
    return box;
  }

  window.KB = {
    strings: strings, format: format, markTerms: markTerms, enhance: enhance, el: el, sourceLink: sourceLink,
    versionNote: versionNote, sourceTitle: sourceTitle, sourceLabel: sourceLabel, seeAlso: seeAlso,
  };
})();
