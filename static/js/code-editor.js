/* Code editor for JSON, YAML and Python fields: every <textarea data-code-editor="json|yaml|python">
   becomes an Ace editor (highlighting, bracket matching, folding) with inline errors: JSON parse
   errors, YAML parse errors (js-yaml), and for textareas with data-schema-check the server's JSON
   Schema check. The textarea stays the form field: the editor writes every change into it (and
   fires "input", so the page's other scripts see it), and a value set on the textarea by a script
   shows in the editor. Ace is loaded only on pages with such a field and only when `make assets`
   installed it (the <meta name="getmcp-code-editor"> tells where); otherwise the textarea stays
   as it is. Ace runs in strict-CSP mode (no injected <style>, no workers): its CSS is linked. */
(function () {
  "use strict";
  // The editor follows the system's colour scheme, like the rest of the dashboard (app.css).
  var THEME = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches
    ? "tomorrow_night" : "tomorrow";

  var MODES = { json: "ace/mode/json", yaml: "ace/mode/yaml", python: "ace/mode/python" };
  var nativeValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value");

  function debounce(fn, ms) {
    var timer;
    return function () { clearTimeout(timer); timer = setTimeout(fn, ms); };
  }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = resolve;
      s.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(s);
    });
  }

  function linkCss(href) {
    var link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = href;
    document.head.appendChild(link);
  }

  function csrfToken() {
    return window.getmcp && window.getmcp.csrfToken ? window.getmcp.csrfToken() : "";
  }

  /* Where a JSON.parse error is: V8 says "... at position N" (and newer ones "(line L column C)"). */
  function jsonErrorRow(message, session) {
    var lc = /line (\d+) column (\d+)/.exec(message);
    if (lc) return { row: +lc[1] - 1, column: +lc[2] - 1 };
    var at = /position (\d+)/.exec(message);
    if (at) return session.doc.indexToPosition(+at[1], 0);
    return { row: Math.max(session.getLength() - 1, 0), column: 0 };
  }

  /* The row of a JSON Schema error's path ("properties.a.type"): the line of its last key. */
  function pathRow(path, text) {
    var parts = String(path || "").split(/[.[\]]+/).filter(Boolean);
    var lines = text.split("\n");
    var from = 0;
    for (var p = 0; p < parts.length; p++) {
      if (/^\d+$/.test(parts[p])) continue;
      var needle = JSON.stringify(parts[p]) + ":";
      var needleSpaced = JSON.stringify(parts[p]) + " :";
      for (var i = from; i < lines.length; i++) {
        if (lines[i].indexOf(needle) !== -1 || lines[i].indexOf(needleSpaced) !== -1) { from = i; break; }
      }
    }
    return from;
  }

  function upgrade(area) {
    var language = area.dataset.codeEditor;
    if (!MODES[language] || area.dataset.codeEditorReady) return;
    area.dataset.codeEditorReady = "1";
    var host = document.createElement("div");
    host.className = "code-editor";
    host.style.height = Math.max((+area.getAttribute("rows") || 8) * 20 + 12, 120) + "px";
    area.insertAdjacentElement("beforebegin", host);
    area.classList.add("code-editor-source");
    area.setAttribute("tabindex", "-1");
    area.setAttribute("aria-hidden", "true");

    var editor = window.ace.edit(host, {
      mode: MODES[language],
      theme: "ace/theme/" + THEME,
      useWorker: false,
      tabSize: 2,
      useSoftTabs: true,
      showPrintMargin: false,
      highlightActiveLine: false,
      fontSize: "13px",
      wrap: false,
      // Tab indents inside the editor; Escape hands the keyboard back to the page (no trap).
      enableKeyboardAccessibility: true,
    });
    var session = editor.getSession();
    editor.setValue(nativeValue.get.call(area), -1);
    editor.renderer.setScrollMargin(6, 6);
    host.editor = editor;
    area.codeEditor = editor;

    // The editor's own text input is what a keyboard or screen-reader user reaches.
    var label = area.id && document.querySelector('label[for="' + area.id + '"]');
    var input = editor.textInput.getElement();
    if (label) {
      if (!label.id) label.id = area.id + "_label";
      input.setAttribute("aria-labelledby", label.id);
      label.addEventListener("click", function () { editor.focus(); });
    }
    var described = area.getAttribute("aria-describedby");
    if (described) input.setAttribute("aria-describedby", described);

    // Shown later (a tab, a toggled section) or resized by its handle: Ace must re-measure.
    if (window.ResizeObserver) new ResizeObserver(function () { editor.resize(); }).observe(host);

    var syncing = false;
    // Scripts that set area.value (the kind switch, the playground) are shown in the editor.
    Object.defineProperty(area, "value", {
      configurable: true,
      get: function () { return nativeValue.get.call(area); },
      set: function (v) {
        nativeValue.set.call(area, v);
        if (!syncing && editor.getValue() !== v) { syncing = true; editor.setValue(v, -1); syncing = false; }
      },
    });
    area.addEventListener("input", function () {
      if (syncing) return;
      var v = nativeValue.get.call(area);
      if (editor.getValue() !== v) { syncing = true; editor.setValue(v, -1); syncing = false; }
    });

    var check = debounce(function () { validate(area, editor, language); }, 250);
    editor.on("change", function () {
      if (!syncing) {
        syncing = true;
        nativeValue.set.call(area, editor.getValue());
        area.dispatchEvent(new Event("input", { bubbles: true }));
        syncing = false;
      }
      check();
    });
    editor.on("blur", function () { area.dispatchEvent(new Event("change", { bubbles: true })); });
    validate(area, editor, language);
  }

  var schemaSeq = 0;
  function validate(area, editor, language) {
    var session = editor.getSession();
    var text = editor.getValue();
    var host = editor.container;
    function show(annotations) {
      session.setAnnotations(annotations);
      host.classList.toggle("code-editor-invalid", annotations.some(function (a) { return a.type === "error"; }));
      host.setAttribute("data-errors", annotations.map(function (a) { return "line " + (a.row + 1) + ": " + a.text; }).join("\n"));
    }
    if (!text.trim() || language === "python") { show([]); return; }
    if (language === "json") {
      try { JSON.parse(text); } catch (e) {
        var at = jsonErrorRow(e.message, session);
        show([{ row: at.row, column: at.column, type: "error", text: "Invalid JSON: " + e.message }]);
        return;
      }
    } else if (language === "yaml" && window.jsyaml) {
      try { window.jsyaml.load(text); } catch (e) {
        var mark = e.mark || {};
        show([{ row: mark.line || 0, column: mark.column || 0, type: "error", text: "Invalid YAML: " + (e.reason || e.message) }]);
        return;
      }
    }
    var url = area.dataset.schemaCheck;
    if (!url) { show([]); return; }
    var mine = ++schemaSeq;
    area._schemaSeq = mine;
    fetch(url, {
      method: "POST", credentials: "same-origin", body: text,
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    }).then(function (r) { return r.json(); }).then(function (data) {
      if (area._schemaSeq !== mine) return;
      show((data.errors || []).map(function (err) {
        return { row: pathRow(err.path, text), column: 0, type: "error",
                 text: "JSON Schema: " + (err.path ? err.path + ": " : "") + err.message };
      }));
    }).catch(function () { /* the server check is a help; the form still validates on save */ });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var areas = document.querySelectorAll("textarea[data-code-editor]");
    var meta = document.querySelector('meta[name="getmcp-code-editor"]');
    if (!areas.length || !meta) return;
    var base = meta.getAttribute("content");
    var needsYaml = Array.prototype.some.call(areas, function (a) { return a.dataset.codeEditor === "yaml"; });
    linkCss(base + "ace/css/ace.css");
    linkCss(base + "ace/css/theme/" + THEME + ".css");
    loadScript(base + "ace/ace.js").then(function () {
      window.ace.config.set("useStrictCSP", true);
      window.ace.config.set("basePath", base + "ace/");
      window.ace.config.set("loadWorkerFromBlob", false);
      return needsYaml ? loadScript(base + "js-yaml/js-yaml.min.js").catch(function () {}) : null;
    }).then(function () {
      Array.prototype.forEach.call(areas, upgrade);
      document.documentElement.classList.add("code-editors-ready");
    }).catch(function () { /* Ace missing or broken: the plain textareas keep working */ });
  });
})();
