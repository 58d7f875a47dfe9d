/* Small behaviours of the dashboard. Every page works without them; they add copy buttons, tabs,
   confirmations and as-you-type validation. No inline scripts: the CSP forbids them. */
(function () {
  "use strict";

  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (input) return input.value;
    var match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }
  window.getmcp = { csrfToken: csrfToken };

  function debounce(fn, ms) {
    var timer;
    return function () {
      var args = arguments;
      clearTimeout(timer);
      timer = setTimeout(function () { fn.apply(null, args); }, ms);
    };
  }

  function copyText(text, button) {
    function done() {
      var old = button.textContent;
      button.textContent = "Copied";
      button.classList.add("copied");
      setTimeout(function () { button.textContent = old; button.classList.remove("copied"); }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallback(text); done(); });
    } else { fallback(text); done(); }
  }
  function fallback(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "offscreen";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing else to try */ }
    document.body.removeChild(area);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (source) copyText(source.value !== undefined && source.tagName !== "CODE" ? source.value : source.textContent, button);
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var message = form.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  });

  document.addEventListener("change", function (event) {
    if (event.target.matches("[data-autosubmit]")) event.target.form.submit();
    // The server page's bulk bar: "Select this page" ticks every row of the page.
    if (event.target.matches("[data-bulk-all]")) {
      document.querySelectorAll("[data-bulk-id]").forEach(function (box) { box.checked = event.target.checked; });
    }
    if (event.target.matches("[data-bulk-all], [data-bulk-id]")) {
      var scope = document.getElementById("bulk-scope");
      if (scope) scope.value = "selected";
    }
  });

  function initTabs(list) {
    var tabs = Array.prototype.slice.call(list.querySelectorAll("[role=tab]"));
    function select(tab) {
      tabs.forEach(function (t) {
        var on = t === tab;
        t.setAttribute("aria-selected", on ? "true" : "false");
        t.tabIndex = on ? 0 : -1;
        var panel = document.getElementById(t.getAttribute("aria-controls"));
        if (panel) panel.hidden = !on;
      });
    }
    tabs.forEach(function (tab, i) {
      tab.addEventListener("click", function () { select(tab); });
      tab.addEventListener("keydown", function (e) {
        var next = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : null;
        if (next === null) return;
        var target = tabs[(next + tabs.length) % tabs.length];
        select(target);
        target.focus();
        e.preventDefault();
      });
    });
  }

  function initNav() {
    var toggle = document.querySelector("[data-nav-toggle]");
    var nav = document.getElementById("sidebar");
    if (!toggle || !nav) return;
    toggle.addEventListener("click", function () {
      var open = nav.classList.toggle("open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  /* Any JSON textarea: parse as you type and say where it breaks. YAML is accepted by the server
     for configs, so a parse failure there is a hint, not a block. */
  function initJsonEditor(area) {
    var status = document.createElement("p");
    status.className = "json-status";
    status.setAttribute("aria-live", "polite");
    area.insertAdjacentElement("afterend", status);
    function check() {
      var text = area.value.trim();
      if (!text) { status.textContent = ""; status.className = "json-status"; return; }
      try {
        JSON.parse(text);
        status.textContent = "Valid JSON";
        status.className = "json-status ok";
      } catch (e) {
        status.textContent = "Not JSON yet (YAML is accepted here too): " + e.message;
        status.className = "json-status warn";
      }
    }
    area.addEventListener("input", debounce(check, 150));
    check();
    area._jsonStatus = status;
  }

  /* The input schema editor: local JSON parse at once, the server's check shortly after,
     and the generated form preview. */
  function initSchemaEditor(box) {
    var area = document.getElementById(box.dataset.target);
    var preview = document.getElementById(box.dataset.preview);
    var status = document.getElementById(box.dataset.target + "_status");
    if (!area) return;
    var seq = 0;
    function setStatus(text, kind) {
      status.textContent = text;
      status.className = "schema-status " + kind;
      area.setAttribute("aria-invalid", kind === "bad" ? "true" : "false");
    }
    var serverCheck = debounce(function (text, mine) {
      fetch(box.dataset.checkUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
        body: text,
        credentials: "same-origin",
      }).then(function (r) { return r.json(); }).then(function (data) {
        if (mine !== seq) return;
        if (data.valid) setStatus("Valid JSON Schema (draft 2020-12).", "ok");
        else setStatus(data.errors.map(function (e) { return (e.path ? e.path + ": " : "") + e.message; }).join(" · "), "bad");
      }).catch(function () { if (mine === seq) setStatus("Could not reach the server to check the schema.", "warn"); });
    }, 350);
    function update() {
      var mine = ++seq;
      var schema;
      try { schema = JSON.parse(area.value); } catch (e) {
        setStatus("Invalid JSON: " + e.message, "bad");
        return;
      }
      if (preview && window.SchemaForm) window.SchemaForm.render(preview, schema);
      setStatus("Checking…", "pending");
      serverCheck(area.value, mine);
    }
    area.addEventListener("input", update);
    if (area._jsonStatus) area._jsonStatus.remove();
    update();
  }

  /* Switching a tool's kind offers that kind's starting config when the editor holds none
     (or still holds another kind's untouched example). */
  function initKindSwitch() {
    var examplesNode = document.getElementById("kind-examples");
    var kind = document.getElementById("id_kind");
    var config = document.getElementById("id_config");
    if (!examplesNode || !kind || !config) return;
    var examples = JSON.parse(examplesNode.textContent);
    function pretty(v) { return JSON.stringify(v, null, 2); }
    function isExample(text) {
      return Object.keys(examples).some(function (k) { return text.trim() === pretty(examples[k]); });
    }
    function fill() {
      var text = config.value.trim();
      if ((text === "" || text === "{}" || isExample(text)) && examples[kind.value]) {
        config.value = pretty(examples[kind.value]);
        config.dispatchEvent(new Event("input"));
      }
    }
    /* Fields that belong to one kind (the Python source of kind: code) show only for it. */
    function toggle() {
      document.querySelectorAll("[data-kind-only]").forEach(function (node) {
        var mine = node.dataset.kindOnly === kind.value;
        node.hidden = !mine;
        var source = node.querySelector("textarea");
        if (mine && source && !source.value.trim() && node.dataset.example) {
          source.value = node.dataset.example;
          source.dispatchEvent(new Event("input"));
        }
      });
    }
    kind.addEventListener("change", fill);
    kind.addEventListener("change", toggle);
    fill();
    toggle();
  }

  function initFillKey(input) {
    var placeholder = input.dataset.fillKey;
    var snippets = Array.prototype.slice.call(document.querySelectorAll("[data-snippet]"));
    snippets.forEach(function (s) { s.dataset.template = s.textContent; });
    input.addEventListener("input", function () {
      var key = input.value.trim() || placeholder;
      snippets.forEach(function (s) { s.textContent = s.dataset.template.split(placeholder).join(key); });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    initNav();
    document.querySelectorAll("[data-tabs]").forEach(initTabs);
    document.querySelectorAll("textarea[data-json-editor]").forEach(initJsonEditor);
    document.querySelectorAll("[data-schema-editor]").forEach(initSchemaEditor);
    document.querySelectorAll("[data-fill-key]").forEach(initFillKey);
    initKindSwitch();
  });
})();
