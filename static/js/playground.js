/* The playground: an MCP client in the page, talking to the real /mcp/<slug> endpoint over
   Streamable HTTP (protocol 2025-11-25, with a session). It answers the server's elicitation,
   sampling and roots requests, shows every JSON-RPC message with its timing, and keeps a history
   in localStorage. Server text is only ever written with textContent. */
(function () {
  "use strict";

  var PROTOCOL = "2025-11-25";
  var root = document.getElementById("playground");
  if (!root) return;
  var endpoint = root.dataset.endpoint;
  var slug = root.dataset.slug;
  var needsKey = root.dataset.needsKey === "1";
  var keyStore = "getmcp.playground.key." + slug;
  var historyStore = "getmcp.playground.history." + slug;

  var $ = function (id) { return document.getElementById(id); };
  var state = { session: null, nextId: 1, catalog: { tools: [], resources: [], templates: [], prompts: [] },
                selected: null, busy: false, task: null };

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { if (attrs[k] != null) node.setAttribute(k, attrs[k]); });
    if (text != null) node.textContent = String(text);
    return node;
  }

  function setStatus(text, kind) {
    var s = $("pg-status");
    s.textContent = text;
    s.className = "pg-status " + (kind || "");
  }

  // The session id arrives as a response header of initialize; fetch hides it inside request(),
  // so the transport records the last one it saw.
  var lastSessionId = null;
  var plainFetch = window.fetch.bind(window);
  function netFetch(url, options) {
    return plainFetch(url, options).then(function (r) {
      var sid = r.headers.get("Mcp-Session-Id");
      if (sid) lastSessionId = sid;
      return r;
    });
  }

  /* ---- exchange log ---- */
  var t0 = null;
  function logMessage(direction, message, note) {
    var list = $("pg-exchange");
    var empty = list.querySelector(".pg-empty");
    if (empty) empty.remove();
    var now = performance.now();
    if (t0 === null) t0 = now;
    var item = el("li", { class: "ex ex-" + direction });
    var head = el("div", { class: "ex-head" });
    head.appendChild(el("span", { class: "ex-dir" }, direction === "out" ? "→ sent" : direction === "in" ? "← received" : "• " + direction));
    var label = message && (message.method || (message.error ? "error" : message.result !== undefined ? "result" : ""));
    if (label) head.appendChild(el("span", { class: "ex-method mono" }, label + (message.id !== undefined ? " #" + message.id : "")));
    if (note) head.appendChild(el("span", { class: "ex-note" }, note));
    head.appendChild(el("span", { class: "ex-time" }, "+" + Math.round(now - t0) + " ms"));
    item.appendChild(head);
    if (message !== undefined) {
      var details = el("details", {});
      details.appendChild(el("summary", {}, "JSON"));
      details.appendChild(el("pre", { class: "code" }, JSON.stringify(message, null, 2)));
      if (direction === "error" || (message && message.error)) details.open = true;
      item.appendChild(details);
    }
    list.appendChild(item);
    list.scrollTop = list.scrollHeight;
  }

  /* ---- credential ---- */
  function mintKey() {
    return netFetch(root.dataset.keyUrl, {
      method: "POST", credentials: "same-origin",
      headers: { "X-CSRFToken": window.getmcp.csrfToken() },
    }).then(function (r) {
      if (!r.ok) throw new Error("Could not create a playground key (HTTP " + r.status + ").");
      return r.json();
    }).then(function (data) {
      sessionStorage.setItem(keyStore, JSON.stringify({ key: data.key, expires: data.expires_at }));
      logMessage("note", undefined, "Created the temporary key “" + data.name + "”, valid until " + new Date(data.expires_at).toLocaleTimeString());
      return data.key;
    });
  }

  function credential() {
    if (!needsKey) return Promise.resolve(null);
    var pasted = $("pg-key").value.trim();
    if (pasted) return Promise.resolve(pasted);
    var stored = JSON.parse(sessionStorage.getItem(keyStore) || "null");
    if (stored && new Date(stored.expires).getTime() - Date.now() > 60000) return Promise.resolve(stored.key);
    return mintKey();
  }

  /* ---- transport ---- */
  function headers(key, extra) {
    var h = { "Content-Type": "application/json", "Accept": "application/json, text/event-stream" };
    if (key) h["Authorization"] = "Bearer " + key;
    if (state.session) { h["Mcp-Session-Id"] = state.session.id; h["MCP-Protocol-Version"] = state.session.version; }
    Object.keys(extra || {}).forEach(function (k) { h[k] = extra[k]; });
    return h;
  }

  function httpError(response, body) {
    var message = "HTTP " + response.status;
    try {
      var parsed = JSON.parse(body);
      if (parsed.error && parsed.error.message) message += ": " + parsed.error.message;
      logMessage("in", parsed, "HTTP " + response.status);
    } catch (e) { if (body) message += ": " + body.slice(0, 200); }
    var err = new Error(message);
    err.status = response.status;
    return err;
  }

  /* Reads an SSE body; calls onMessage for every JSON-RPC message; resolves with the last event
     id and whether the response to `id` arrived. */
  function readSse(response, onMessage) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    var lastId = null;
    var retry = 1000;
    function dispatch(block) {
      var data = [];
      block.split(/\r?\n/).forEach(function (line) {
        if (line.indexOf("data:") === 0) data.push(line.slice(5).replace(/^ /, ""));
        else if (line.indexOf("id:") === 0) lastId = line.slice(3).trim();
        else if (line.indexOf("retry:") === 0) retry = parseInt(line.slice(6), 10) || retry;
      });
      if (data.length && data.join("").trim()) onMessage(JSON.parse(data.join("\n")));
    }
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) {
          if (buffer.trim()) dispatch(buffer);
          return { lastId: lastId, retry: retry };
        }
        buffer += decoder.decode(chunk.value, { stream: true });
        var parts = buffer.split(/\r?\n\r?\n/);
        buffer = parts.pop();
        parts.forEach(dispatch);
        return pump();
      });
    }
    return pump();
  }

  function post(key, message) {
    logMessage("out", message);
    return netFetch(endpoint, { method: "POST", headers: headers(key), body: JSON.stringify(message), credentials: "omit" });
  }

  /* Sends a request and resolves with its response message, answering the server's requests
     that arrive on the stream meanwhile. */
  /* One request on the page's session, for the view preview: its result, or an Error. */
  root.mcpCall = function (method, params) {
    return ensureSession().then(function () {
      return request(state.session.key, method, params);
    }).then(function (reply) {
      if (reply.error) throw new Error(reply.error.message || "error " + reply.error.code);
      return reply.result;
    });
  };

  function request(key, method, params) {
    var id = state.nextId++;
    var message = { jsonrpc: "2.0", id: id, method: method };
    if (params !== undefined) message.params = params;
    return post(key, message).then(function (response) {
      return handleResponse(key, response, id);
    });
  }

  function handleResponse(key, response, id) {
    var type = response.headers.get("Content-Type") || "";
    if (!response.ok) return response.text().then(function (body) { throw httpError(response, body); });
    if (type.indexOf("text/event-stream") === 0) return followStream(key, response, id, 0);
    return response.json().then(function (reply) { logMessage("in", reply); return reply; });
  }

  function followStream(key, response, id, attempt) {
    var final = null;
    return readSse(response, function (msg) {
      logMessage("in", msg);
      if (msg.id === id && (msg.result !== undefined || msg.error !== undefined)) final = msg;
      else if (msg.method && msg.id !== undefined) serverRequest(key, msg);
      else if (msg.method) notification(msg);
    }).then(function (end) {
      if (final) return final;
      if (!end.lastId || attempt > 20) throw new Error("The stream ended without a response.");
      logMessage("note", undefined, "Stream closed by the server; resuming from " + end.lastId);
      return new Promise(function (resolve) { setTimeout(resolve, end.retry); }).then(function () {
        return netFetch(endpoint, { method: "GET", credentials: "omit",
                                 headers: headers(key, { "Accept": "text/event-stream", "Last-Event-ID": end.lastId }) });
      }).then(function (again) {
        if (!again.ok) return again.text().then(function (body) { throw httpError(again, body); });
        return followStream(key, again, id, attempt + 1);
      });
    });
  }

  function respond(key, id, payload) {
    var message = Object.assign({ jsonrpc: "2.0", id: id }, payload);
    return post(key, message).then(function (r) {
      if (!r.ok) return r.text().then(function (body) { throw httpError(r, body); });
    }).catch(function (e) { logMessage("error", undefined, e.message); });
  }

  function relatedTask(params) {
    var meta = (params && params._meta) || {};
    var related = meta["io.modelcontextprotocol/related-task"];
    return related ? related.taskId : params && params.taskId;
  }

  function notification(msg) {
    var p = msg.params || {};
    if (msg.method === "notifications/progress") {
      if (state.task && relatedTask(p) === state.task.id) { showTaskProgress(p); return; }
      $("pg-timing").textContent = "Progress " + p.progress + (p.total ? " / " + p.total : "") + (p.message ? " · " + p.message : "");
    } else if (msg.method === "notifications/tasks/status" && state.task && p.taskId === state.task.id) {
      renderTask(p);
    }
  }

  /* ---- server -> client requests ---- */
  var pendingAsks = [];
  function serverRequest(key, msg) {
    if (msg.method === "roots/list") { respond(key, msg.id, { result: { roots: [] } }); return; }
    if (msg.method === "ping") { respond(key, msg.id, { result: {} }); return; }
    if (msg.method !== "elicitation/create" && msg.method !== "sampling/createMessage") {
      respond(key, msg.id, { error: { code: -32601, message: "The playground does not handle " + msg.method } });
      return;
    }
    pendingAsks.push({ key: key, msg: msg });
    if (pendingAsks.length === 1) showAsk();
  }

  function showAsk() {
    var box = $("pg-request");
    if (!pendingAsks.length) { box.hidden = true; return; }
    var ask = pendingAsks[0];
    var msg = ask.msg;
    var params = msg.params || {};
    var inputs = $("pg-request-inputs");
    var actions = $("pg-request-actions");
    actions.textContent = "";
    inputs.textContent = "";
    box.hidden = false;
    function finish(payload) {
      respond(ask.key, msg.id, payload);
      pendingAsks.shift();
      showAsk();
    }
    function button(label, cls, handler) {
      var b = el("button", { type: "button", class: "btn " + cls }, label);
      b.addEventListener("click", handler);
      actions.appendChild(b);
      return b;
    }
    if (msg.method === "elicitation/create") {
      $("pg-request-h").textContent = "The server asks you (elicitation)";
      $("pg-request-message").textContent = params.message || "";
      if (params.mode === "url") {
        var link = el("a", { href: params.url, target: "_blank", rel: "noopener noreferrer" }, params.url);
        inputs.appendChild(link);
        button("Done", "btn-primary", function () { finish({ result: { action: "accept" } }); });
      } else {
        window.SchemaForm.render(inputs, params.requestedSchema || { type: "object", properties: {} });
        button("Accept", "btn-primary", function () {
          var read = window.SchemaForm.collect(inputs);
          if (read.valid) finish({ result: { action: "accept", content: read.value } });
        });
      }
      button("Decline", "", function () { finish({ result: { action: "decline" } }); });
      button("Cancel", "btn-ghost", function () { finish({ result: { action: "cancel" } }); });
    } else {
      $("pg-request-h").textContent = "The server asks for a model reply (sampling)";
      var lines = (params.messages || []).map(function (m) {
        var c = m.content || {};
        return m.role + ": " + (c.type === "text" ? c.text : "[" + c.type + "]");
      });
      if (params.systemPrompt) lines.unshift("system: " + params.systemPrompt);
      $("pg-request-message").textContent = lines.join("\n");
      var id = "pg-sample-reply";
      var field = el("div", { class: "field" });
      field.appendChild(el("label", { for: id }, "Your reply, as the model"));
      var area = el("textarea", { id: id, rows: 3 });
      field.appendChild(area);
      inputs.appendChild(field);
      button("Send reply", "btn-primary", function () {
        finish({ result: { role: "assistant", content: { type: "text", text: area.value },
                           model: "playground-human", stopReason: "endTurn" } });
      });
      button("Refuse", "", function () { finish({ error: { code: -1, message: "The user refused the sampling request" } }); });
    }
    var first = inputs.querySelector("input, select, textarea") || actions.querySelector("button");
    if (first) first.focus();
  }

  /* ---- connection ---- */
  function connect() {
    state.session = null;
    setStatus("Connecting…", "pending");
    var key;
    return credential().then(function (k) {
      key = k;
      return request(key, "initialize", {
        protocolVersion: PROTOCOL,
        capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: false } },
        clientInfo: { name: "getmcp-playground", title: "getmcp playground", version: "1.0" },
      }).then(function (reply) { return { reply: reply }; });
    }).then(function (out) {
      if (out.reply.error) throw new Error(out.reply.error.message);
      var sid = lastSessionId;
      state.session = { id: sid, version: out.reply.result.protocolVersion, key: key,
                        capabilities: out.reply.result.capabilities || {} };
      return post(key, { jsonrpc: "2.0", method: "notifications/initialized" }).then(function () {
        var info = out.reply.result.serverInfo || {};
        setStatus("Connected to " + (info.title || info.name || slug) + " · protocol " + state.session.version, "ok");
        return loadCatalog();
      });
    }).catch(function (e) {
      state.session = null;
      setStatus("Not connected: " + e.message, "bad");
      if (e.status === 401 || e.status === 403) sessionStorage.removeItem(keyStore);
      throw e;
    });
  }


  function ensureSession() {
    if (state.session && needsKey && $("pg-key").value.trim() && $("pg-key").value.trim() !== state.session.key) {
      return connect();
    }
    return state.session ? Promise.resolve() : connect();
  }

  function listAll(method, field) {
    var out = [];
    function page(cursor) {
      var params = cursor ? { cursor: cursor } : {};
      // The playground shows every tool, also where agents get discovery's meta-tools.
      if (method === "tools/list") params._meta = { "getmcp/fullList": true };
      return request(state.session.key, method, params).then(function (reply) {
        if (reply.error) throw new Error(reply.error.message);
        out = out.concat(reply.result[field] || []);
        return reply.result.nextCursor ? page(reply.result.nextCursor) : out;
      });
    }
    return page(null);
  }

  function loadCatalog() {
    var caps = state.session.capabilities;
    var jobs = [
      caps.tools ? listAll("tools/list", "tools") : Promise.resolve([]),
      caps.resources ? listAll("resources/list", "resources") : Promise.resolve([]),
      caps.resources ? listAll("resources/templates/list", "resourceTemplates") : Promise.resolve([]),
      caps.prompts ? listAll("prompts/list", "prompts") : Promise.resolve([]),
    ];
    return Promise.all(jobs).then(function (lists) {
      state.catalog = { tools: lists[0], resources: lists[1], templates: lists[2], prompts: lists[3] };
      renderCatalog();
    });
  }

  function renderList(listId, items, empty, kind, append) {
    var list = $(listId);
    if (!append) list.textContent = "";
    if (!items.length) { if (empty) list.appendChild(el("li", { class: "muted pg-empty" }, empty)); return; }
    items.forEach(function (item) {
      var li = el("li", {});
      var b = el("button", { type: "button", class: "pg-item", "data-kind": kind });
      b.appendChild(el("span", { class: "mono strong" }, item.name || item.uri));
      var sub = kind === "resource" ? item.uri : kind === "template" ? item.uriTemplate : item.title || "";
      if (sub && sub !== item.name) b.appendChild(el("span", { class: "muted small" }, sub));
      b.addEventListener("click", function () {
        Array.prototype.forEach.call(root.querySelectorAll(".pg-item[aria-pressed=true]"), function (x) { x.setAttribute("aria-pressed", "false"); });
        b.setAttribute("aria-pressed", "true");
        select(kind, item);
      });
      b.setAttribute("aria-pressed", "false");
      li.appendChild(b);
      list.appendChild(li);
    });
  }

  function renderCatalog() {
    var c = state.catalog;
    renderList("pg-list-tools", c.tools, "No enabled tools. Add one on the Definition tab.", "tool");
    var noResources = c.resources.length || c.templates.length ? "" : "No resources.";
    renderList("pg-list-resources", c.resources, noResources, "resource");
    renderList("pg-list-resources", c.templates, "", "template", true);
    renderList("pg-list-prompts", c.prompts, "No prompts.", "prompt");
  }

  /* ---- running ---- */
  function schemaFor(kind, item) {
    if (kind === "tool") return item.inputSchema || { type: "object", properties: {} };
    if (kind === "prompt") {
      var props = {}, req = [];
      (item.arguments || []).forEach(function (a) {
        props[a.name] = { type: "string", title: a.title || a.name, description: a.description };
        if (a.required) req.push(a.name);
      });
      return { type: "object", properties: props, required: req };
    }
    if (kind === "template") {
      var vars = {}, names = [];
      (item.uriTemplate.match(/\{[^}]+\}/g) || []).forEach(function (group) {
        group.replace(/[{}+#./;?&]/g, " ").split(/[ ,]+/).forEach(function (v) {
          v = v.replace(/\*$/, "").split(":")[0];
          if (v) { vars[v] = { type: "string", title: v }; names.push(v); }
        });
      });
      return { type: "object", properties: vars, required: names };
    }
    return { type: "object", properties: {} };
  }

  function select(kind, item, values) {
    state.selected = { kind: kind, item: item };
    var title = { tool: "Call tool ", resource: "Read resource ", template: "Read template ", prompt: "Get prompt " }[kind];
    $("pg-run-h").textContent = title + (item.name || item.uri);
    $("pg-run-desc").textContent = item.description || (kind === "resource" ? item.uri : "");
    $("pg-form").hidden = false;
    $("pg-result").hidden = true;
    // The last call's time belongs to the last item; a call still running keeps "Running…".
    if (!state.busy) $("pg-timing").textContent = "";
    var schema = schemaFor(kind, item);
    var inputs = $("pg-inputs");
    inputs.dataset.empty = kind === "resource" ? "Nothing to fill in: press Run to read it." : "No arguments.";
    window.SchemaForm.render(inputs, schema, values);
    $("pg-raw").value = JSON.stringify(values || {}, null, 2);
    $("pg-run").textContent = { tool: "Call", resource: "Read", template: "Read", prompt: "Get" }[kind];
    var support = taskSupport(kind, item);
    var choice = $("pg-as-task");
    $("pg-task-choice").hidden = support === "forbidden";
    choice.checked = support === "required";
    choice.disabled = support === "required";
    $("pg-task-help").textContent = support === "required"
      ? "This tool always runs as a task: the playground follows its status and progress, asks you its questions and shows the result."
      : "The call answers at once with a task; the playground follows its status and progress, asks you its questions and shows the result.";
  }

  function taskSupport(kind, item) {
    if (kind !== "tool" || !state.session || !state.session.capabilities.tasks) return "forbidden";
    return (item.execution && item.execution.taskSupport) || "forbidden";
  }

  function mode() { return root.querySelector("input[name=pg-mode]:checked").value; }

  function readArguments() {
    if (mode() === "json") {
      var err = $("pg-raw-error");
      err.hidden = true;
      try {
        var v = JSON.parse($("pg-raw").value || "{}");
        if (typeof v !== "object" || Array.isArray(v) || v === null) throw new Error("must be a JSON object");
        return v;
      } catch (e) {
        err.textContent = "Arguments: " + e.message;
        err.hidden = false;
        $("pg-raw").focus();
        return null;
      }
    }
    var read = window.SchemaForm.collect($("pg-inputs"));
    return read.valid ? read.value : null;
  }

  function expand(template, values) {
    return template.replace(/\{([+#./;?&]?)([^}]+)\}/g, function (_, op, names) {
      var parts = names.split(",").map(function (n) {
        var v = values[n.replace(/\*$/, "").split(":")[0]];
        return v == null ? "" : op === "+" || op === "#" ? encodeURI(String(v)) : encodeURIComponent(String(v));
      });
      var prefix = { "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&" }[op] || "";
      return prefix + parts.join(",");
    });
  }

  function run(event) {
    event.preventDefault();
    if (!state.selected || state.busy) return;
    var args = readArguments();
    if (args === null) return;
    var sel = state.selected;
    var method, params;
    if (sel.kind === "tool") { method = "tools/call"; params = { name: sel.item.name, arguments: args }; }
    else if (sel.kind === "prompt") { method = "prompts/get"; params = { name: sel.item.name, arguments: args }; }
    else if (sel.kind === "template") { method = "resources/read"; params = { uri: expand(sel.item.uriTemplate, args) }; }
    else { method = "resources/read"; params = { uri: sel.item.uri }; }
    var asTask = sel.kind === "tool" && $("pg-as-task").checked && !$("pg-task-choice").hidden;
    var progressToken = null;
    if (asTask) {
      progressToken = "pg-" + Date.now();
      params.task = { ttl: TASK_TTL_MS };
      params._meta = { progressToken: progressToken };
    }
    state.busy = true;
    $("pg-run").disabled = true;
    $("pg-timing").textContent = "Running…";
    $("pg-task").hidden = true;
    var started = performance.now();
    ensureSession().then(function () {
      return request(state.session.key, method, params).catch(function (e) {
        if (e.status === 404) {  // the session expired: start a new one once
          return connect().then(function () { return request(state.session.key, method, params); });
        }
        throw e;
      });
    }).then(function (reply) {
      if (asTask && reply.result && reply.result.task) return followTask(reply.result.task);
      return reply;
    }).then(function (reply) {
      var ms = Math.round(performance.now() - started);
      // A person who picked another item meanwhile finds this call in the history instead.
      if (state.selected === sel) {
        $("pg-timing").textContent = ms + " ms";
        showResult(method, reply);
        // The view preview (view-host.js) renders a tool's MCP App from this.
        root.dispatchEvent(new CustomEvent("pg:result", { detail: {
          tool: sel.kind === "tool" ? sel.item : null, arguments: args,
          result: reply.result, catalog: state.catalog.tools } }));
      }
      remember(sel, args, method, ms, !reply.error && !(reply.result && reply.result.isError));
    }).catch(function (e) {
      var ms = Math.round(performance.now() - started);
      logMessage("error", undefined, e.message);
      if (state.selected === sel) {
        $("pg-timing").textContent = ms + " ms";
        showResult(method, { error: { message: e.message } });
      }
      remember(sel, args, method, ms, false);
      if (e.status === 401 || e.status === 403) { state.session = null; setStatus("Refused: " + e.message, "bad"); }
    }).then(function () {
      state.busy = false;
      $("pg-run").disabled = false;
      if (state.selected !== sel) $("pg-timing").textContent = "";
    });
  }

  /* ---- tasks (2025-11-25 core tasks in the session) ----
     The call answered with a task at once. tasks/result is asked at once and again whenever it
     gave up waiting: it blocks until the task ends and meanwhile puts the task's questions to
     us on its stream (answered in the "server asks" box). tasks/get is polled for the status,
     and the session's GET stream brings status changes and progress as they happen. */
  var TASK_TTL_MS = 60 * 60 * 1000;
  var TERMINAL = { completed: true, failed: true, cancelled: true };
  var STATUS_LABELS = { working: "Working", input_required: "Input required", completed: "Completed",
                        failed: "Failed", cancelled: "Cancelled" };

  function renderTask(task) {
    if (!state.task || task.taskId !== state.task.id) return;
    state.task.status = task.status;
    var badge = $("pg-task-status");
    badge.textContent = STATUS_LABELS[task.status] || task.status;
    badge.className = "badge badge-" + task.status;
    $("pg-task-message").textContent = task.statusMessage || (task.status === "input_required" ? "The task waits for your answer below." : "");
    $("pg-task-cancel").hidden = !!TERMINAL[task.status];
    if (task.status === "completed") finishTaskProgress();
  }

  // A completed task's bar is full, whatever the last progress notification said (a workflow's
  // last step is often its return, which reports no progress of its own).
  function finishTaskProgress() {
    var box = $("pg-task-progress-box");
    var bar = $("pg-task-progress");
    if (box.hidden) return;
    if (!bar.hasAttribute("value")) bar.max = 1;
    bar.value = bar.max;
    $("pg-task-progress-text").textContent = (bar.max > 1 ? bar.max + " / " + bar.max + " · " : "") + "Done";
  }

  function showTaskProgress(p) {
    if (state.task && state.task.status === "completed") return;
    var box = $("pg-task-progress-box");
    var bar = $("pg-task-progress");
    box.hidden = false;
    if (p.total) { bar.max = p.total; bar.value = p.progress; } else { bar.removeAttribute("value"); }
    $("pg-task-progress-text").textContent = (p.total ? p.progress + " / " + p.total : String(p.progress)) + (p.message ? " · " + p.message : "");
  }

  function listenForTask(t) {
    var key = state.session.key;
    netFetch(endpoint, { method: "GET", credentials: "omit", signal: t.abort.signal,
                         headers: headers(key, { "Accept": "text/event-stream" }) }).then(function (r) {
      if (!r.ok) return null;
      return readSse(r, function (msg) {
        if (relatedTask(msg.params) !== t.id) return;  // earlier tasks' news, replayed
        logMessage("in", msg, "GET stream");
        if (msg.method && msg.id === undefined) notification(msg);
      });
    }).catch(function () { /* aborted when the task ends, or the stream failed: polling goes on */ });
  }

  function followTask(task) {
    return new Promise(function (resolve) {
      var key = state.session.key;
      var t = { id: task.taskId, status: task.status, done: false, asking: false, abort: new AbortController() };
      state.task = t;
      $("pg-task").hidden = false;
      $("pg-task-id").textContent = "Task " + t.id;
      $("pg-task-progress-box").hidden = true;
      $("pg-task-cancel").disabled = false;
      renderTask(task);
      var interval = Math.max(task.pollInterval || 1000, 1000);

      function finish(reply) {
        if (t.done) return;
        t.done = true;
        t.abort.abort();
        state.task = null;
        $("pg-task-cancel").hidden = true;
        // The request box may still hold a question the task no longer needs.
        pendingAsks.length = 0;
        showAsk();
        resolve(reply);
      }
      function askForResult() {
        if (t.asking || t.done) return;
        t.asking = true;
        request(key, "tasks/result", { taskId: t.id }).then(function (reply) {
          t.asking = false;
          if (reply.error && !TERMINAL[t.status] && /Timed out/.test(reply.error.message || "")) return;
          // The task has ended: show the status it ended with before letting go of it.
          return request(key, "tasks/get", { taskId: t.id }).then(function (got) {
            if (got.result) renderTask(got.result);
          }, function () { /* the result still counts */ }).then(function () {
            if (t.done) return;
            if (!TERMINAL[t.status]) renderTask({ taskId: t.id, status: reply.error ? "failed" : "completed" });
            if (reply.error && t.status === "cancelled") reply = { error: { message: "The task was cancelled." } };
            finish(reply);
          });
        }, function () { t.asking = false; });
      }
      function poll() {
        if (t.done) return;
        request(key, "tasks/get", { taskId: t.id }).then(function (reply) {
          if (t.done) return;
          if (reply.error) { finish(reply); return; }
          renderTask(reply.result);
          if (TERMINAL[reply.result.status] || reply.result.status === "input_required") askForResult();
          setTimeout(poll, interval);
        }, function () { if (!t.done) setTimeout(poll, interval * 2); });
      }
      t.cancel = function () {
        $("pg-task-cancel").disabled = true;
        request(key, "tasks/cancel", { taskId: t.id }).then(function (reply) {
          if (reply.result) renderTask(reply.result);
          if (reply.result && reply.result.status === "cancelled") finish({ error: { message: "The task was cancelled." } });
        }, function (e) { logMessage("error", undefined, e.message); $("pg-task-cancel").disabled = false; });
      };
      listenForTask(t);
      askForResult();
      setTimeout(poll, interval);
    });
  }

  function showResult(method, reply) {
    var box = $("pg-result");
    var body = $("pg-result-body");
    body.textContent = "";
    box.hidden = false;
    box.className = "pg-result";
    if (reply.error) {
      box.classList.add("pg-result-error");
      body.appendChild(el("p", { class: "strong", role: "alert" }, "Error" + (reply.error.code !== undefined ? " " + reply.error.code : "") + ": " + reply.error.message));
      return;
    }
    var r = reply.result || {};
    if (r.isError) { box.classList.add("pg-result-error"); body.appendChild(el("p", { class: "strong", role: "alert" }, "The tool reported an error")); }
    var blocks = r.content || r.contents || (r.messages || []).map(function (m) { return Object.assign({ role: m.role }, m.content); });
    blocks.forEach(function (b) {
      var card = el("div", { class: "content-block" });
      var kind = b.role ? b.role + " · " + (b.type || "") : b.type || (b.uri ? b.uri : "");
      card.appendChild(el("div", { class: "content-kind" }, kind + (b.mimeType ? " · " + b.mimeType : "")));
      if (b.text !== undefined) card.appendChild(el("pre", { class: "prewrap" }, b.text));
      else if (b.blob !== undefined) card.appendChild(el("p", { class: "muted" }, "Binary, " + Math.round(b.blob.length * 0.75) + " bytes"));
      else if (b.type === "image" && /^image\/(png|jpeg|gif|webp)$/.test(b.mimeType || "")) card.appendChild(el("img", { src: "data:" + b.mimeType + ";base64," + b.data, alt: "Image result" }));
      else card.appendChild(el("pre", { class: "code" }, JSON.stringify(b, null, 2)));
      body.appendChild(card);
    });
    if (r.structuredContent !== undefined) {
      body.appendChild(el("div", { class: "content-kind" }, "structuredContent"));
      body.appendChild(el("pre", { class: "code" }, JSON.stringify(r.structuredContent, null, 2)));
    }
    if (!blocks.length && r.structuredContent === undefined) body.appendChild(el("pre", { class: "code" }, JSON.stringify(r, null, 2)));
  }

  /* ---- history ---- */
  function loadHistory() {
    try { return JSON.parse(localStorage.getItem(historyStore) || "[]"); } catch (e) { return []; }
  }
  function remember(sel, args, method, ms, ok) {
    var list = loadHistory();
    list.unshift({ at: new Date().toISOString(), kind: sel.kind, name: sel.item.name || sel.item.uri,
                   method: method, args: args, ms: ms, ok: ok });
    localStorage.setItem(historyStore, JSON.stringify(list.slice(0, 50)));
    renderHistory();
  }
  function renderHistory() {
    var list = $("pg-history");
    var items = loadHistory();
    list.textContent = "";
    if (!items.length) { list.appendChild(el("li", { class: "muted pg-empty" }, "Your calls on this server, kept in this browser.")); return; }
    items.forEach(function (h) {
      var li = el("li", { class: "hist " + (h.ok ? "hist-ok" : "hist-bad") });
      var b = el("button", { type: "button", class: "hist-btn" });
      b.appendChild(el("span", { class: "hist-dot", "aria-hidden": "true" }));
      b.appendChild(el("span", { class: "mono" }, h.method + " " + h.name));
      b.appendChild(el("span", { class: "muted small" }, new Date(h.at).toLocaleTimeString() + " · " + h.ms + " ms" + (h.ok ? "" : " · failed")));
      b.addEventListener("click", function () {
        var pool = { tool: state.catalog.tools, prompt: state.catalog.prompts, resource: state.catalog.resources, template: state.catalog.templates }[h.kind] || [];
        var item = pool.filter(function (x) { return (x.name || x.uri) === h.name; })[0];
        if (item) select(h.kind, item, h.args);
        else logMessage("note", undefined, "Connect first to replay " + h.name);
      });
      li.appendChild(b);
      list.appendChild(li);
    });
  }

  /* ---- wiring ---- */
  $("pg-connect").addEventListener("click", function () { connect().catch(function () {}); });
  $("pg-form").addEventListener("submit", run);
  $("pg-task-cancel").addEventListener("click", function () { if (state.task && state.task.cancel) state.task.cancel(); });
  $("pg-clear").addEventListener("click", function () {
    $("pg-exchange").textContent = "";
    t0 = null;
  });
  $("pg-history-clear").addEventListener("click", function () { localStorage.removeItem(historyStore); renderHistory(); });
  Array.prototype.forEach.call(root.querySelectorAll("input[name=pg-mode]"), function (radio) {
    radio.addEventListener("change", function () {
      var json = mode() === "json";
      if (json) {
        var read = window.SchemaForm.collect($("pg-inputs"));
        $("pg-raw").value = JSON.stringify(read.value, null, 2);
      } else if (state.selected) {
        try { window.SchemaForm.render($("pg-inputs"), schemaFor(state.selected.kind, state.selected.item), JSON.parse($("pg-raw").value || "{}")); } catch (e) { /* keep the form as it was */ }
      }
      $("pg-inputs").hidden = json;
      $("pg-raw-field").hidden = !json;
    });
  });
  if (needsKey) $("pg-key").addEventListener("change", function () { state.session = null; setStatus("Not connected", ""); });
  renderHistory();
  connect().catch(function () {});
})();
