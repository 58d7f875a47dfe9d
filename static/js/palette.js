/* The command palette: Ctrl-K (Cmd-K) or "/" opens it on any dashboard page. It lists the
   current organization's servers and tools (asked of /search/, which checks the role and the
   organization) and the dashboard's own pages (from the sidebar); arrows move, Enter opens,
   Escape closes. Without this script the sidebar and the server pages still lead everywhere. */
(function () {
  "use strict";

  var dialog, input, list, hint, items = [], active = -1, asked = 0, timer = null;

  function pages(text) {
    var wanted = text.toLowerCase();
    return Array.prototype.slice.call(document.querySelectorAll("#sidebar a[href]"))
      .map(function (a) { return { kind: "page", name: a.textContent.trim(), detail: "Page", url: a.getAttribute("href") }; })
      .filter(function (p) { return wanted && p.name.toLowerCase().indexOf(wanted) !== -1; });
  }

  function render(results) {
    items = results;
    list.textContent = "";
    results.forEach(function (item, i) {
      var li = document.createElement("li");
      li.id = "palette-item-" + i;
      li.setAttribute("role", "option");
      li.className = "palette-item";
      li.dataset.kind = item.kind;
      var kind = document.createElement("span");
      kind.className = "badge badge-kind";
      kind.textContent = item.kind;
      var name = document.createElement("span");
      name.className = item.kind === "tool" ? "mono strong palette-name" : "strong palette-name";
      name.textContent = item.name;
      var detail = document.createElement("span");
      detail.className = "muted small palette-detail";
      detail.textContent = item.detail;
      li.appendChild(kind); li.appendChild(name); li.appendChild(detail);
      li.addEventListener("mousedown", function (e) { e.preventDefault(); go(i); });
      list.appendChild(li);
    });
    hint.textContent = results.length ? "↑ ↓ to move · Enter to open · Esc to close"
      : (input.value.trim() ? "Nothing matches “" + input.value.trim() + "”." : "Type to search servers and tools.");
    select(results.length ? 0 : -1);
  }

  function select(i) {
    active = i;
    Array.prototype.forEach.call(list.children, function (li, n) { li.setAttribute("aria-selected", n === i ? "true" : "false"); });
    if (i >= 0) {
      input.setAttribute("aria-activedescendant", "palette-item-" + i);
      list.children[i].scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function go(i) {
    if (items[i]) window.location.assign(items[i].url);
  }

  function search() {
    var text = input.value.trim();
    var mine = ++asked;
    fetch(dialog.dataset.searchUrl + "?q=" + encodeURIComponent(text), {
      credentials: "same-origin", headers: { "Accept": "application/json" }
    }).then(function (r) { return r.ok ? r.json() : { results: [] }; }).then(function (data) {
      if (mine !== asked) return;  // a later keystroke already asked again
      render(data.results.concat(pages(text)));
    }, function () { if (mine === asked) render(pages(text)); });
  }

  function open() {
    if (dialog.open) return;
    dialog.showModal();
    input.value = "";
    search();
    input.focus();
  }

  function typing(target) {
    return target.closest("input, textarea, select, [contenteditable], .ace_editor");
  }

  document.addEventListener("DOMContentLoaded", function () {
    dialog = document.getElementById("palette");
    if (!dialog || typeof dialog.showModal !== "function") return;
    input = document.getElementById("palette-input");
    list = document.getElementById("palette-results");
    hint = document.getElementById("palette-hint");
    document.querySelectorAll("[data-palette-open]").forEach(function (b) {
      b.hidden = false;
      b.addEventListener("click", open);
    });
    input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(search, 120); });
    input.addEventListener("keydown", function (e) {
      if (e.key === "ArrowDown") { e.preventDefault(); if (items.length) select((active + 1) % items.length); }
      else if (e.key === "ArrowUp") { e.preventDefault(); if (items.length) select((active - 1 + items.length) % items.length); }
      else if (e.key === "Enter") { e.preventDefault(); go(active); }
      // A search field eats the first Escape (it clears the text); the palette closes at once.
      else if (e.key === "Escape") { e.preventDefault(); dialog.close(); }
    });
    dialog.addEventListener("click", function (e) { if (e.target === dialog) dialog.close(); });
    document.addEventListener("keydown", function (e) {
      var isK = (e.ctrlKey || e.metaKey) && !e.altKey && (e.key === "k" || e.key === "K");
      var isSlash = e.key === "/" && !e.ctrlKey && !e.metaKey && !e.altKey && !typing(e.target);
      if (isK || isSlash) { e.preventDefault(); open(); }
    });
  });
})();
