// The live inspector: one WebSocket (inspector/consumers.py), rows as requests happen,
// filters, pause/resume, a detail panel, and live progress of calls that became tasks.
(function () {
  "use strict";
  const root = document.getElementById("inspector");
  if (!root) return;
  const MAX_ROWS = 500;
  const tbody = root.querySelector("#inspector-rows tbody");
  const empty = root.querySelector("#inspector-empty");
  const state = root.querySelector("#inspector-state");
  const count = root.querySelector("#inspector-count");
  const pauseButton = root.querySelector("#inspector-pause");
  const filters = {
    status: root.querySelector("#f-status"),
    method: root.querySelector("#f-method"),
    client: root.querySelector("#f-client"),
  };
  const detail = root.querySelector("#inspector-detail");
  const events = [];
  let paused = false;
  let skipped = 0;
  let socket = null;
  let retry = 500;

  function cell(row, text, label, className) {
    const td = document.createElement("td");
    td.dataset.label = label;
    if (className) td.className = className;
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function clientText(event) {
    const c = event.client || {};
    if (c.name) return c.version ? c.name + " " + c.version : c.name;
    return c.userAgent || "unknown client";
  }

  function matches(event) {
    const status = filters.status.value;
    if (status && event.outcome !== status) return false;
    const method = filters.method.value.trim().toLowerCase();
    if (method && !(event.method + " " + event.target).toLowerCase().includes(method)) return false;
    const client = filters.client.value.trim().toLowerCase();
    if (client && !(clientText(event) + " " + (event.client.userAgent || "")).toLowerCase().includes(client)) return false;
    return true;
  }

  function render(event) {
    const row = document.createElement("tr");
    row.dataset.event = event.id;
    row.dataset.outcome = event.outcome;
    row.dataset.process = event.process;
    if (event.taskId) row.dataset.task = event.taskId;
    row.tabIndex = 0;
    const at = new Date(event.at * 1000);
    cell(row, at.toLocaleTimeString() + "." + String(at.getMilliseconds()).padStart(3, "0"), "Time", "nowrap mono");
    cell(row, clientText(event), "Client");
    cell(row, event.transport + (event.revision ? " · " + event.revision : ""), "Transport", "small");
    const method = cell(row, event.method + (event.target ? " " + event.target : ""), "Method", "mono");
    if (event.taskId) {
      const progress = document.createElement("div");
      progress.className = "muted small task-progress";
      progress.textContent = "task " + event.taskId.slice(0, 12);
      method.appendChild(progress);
    }
    // What the server asked the client meanwhile: a URL elicitation shows the link it sent.
    for (const asked of event.asked || []) {
      const note = document.createElement("div");
      note.className = "muted small asked";
      note.dataset.asked = asked.method;
      note.textContent = asked.mode === "url"
        ? "asked the client to open " + asked.url + (asked.message ? " (" + asked.message + ")" : "")
        : "asked the client: " + asked.method + (asked.mode ? " (" + asked.mode + ")" : "");
      method.appendChild(note);
    }
    const status = cell(row, "", "Status");
    const badge = document.createElement("span");
    badge.className = "badge badge-" + event.outcome;
    // A stream shows when it opens and is updated in place when it closes.
    const word = event.stream === "open" ? "streaming" : event.stream === "closed" ? "closed" : event.outcome.replace("_", " ");
    badge.textContent = event.status + " " + word;
    status.appendChild(badge);
    if (event.stream) row.dataset.stream = event.stream;
    const ms = event.latencyMs;
    const latency = event.stream === "open" ? "opened in " + ms.toFixed(1) + " ms"
      : event.stream === "closed" ? "open for " + (ms / 1000).toFixed(1) + " s" : ms.toFixed(1) + " ms";
    cell(row, latency, "Latency", "nowrap");
    let reason = event.reason ? event.reasonText || event.reason : event.error || "";
    // OAuth refusals carry the authorization server's own description too.
    if (event.reason && event.transport === "oauth" && event.error) reason += ": " + event.error;
    cell(row, reason, "Reason", "small");
    row.hidden = !matches(event);
    return row;
  }

  function add(event) {
    const known = events.findIndex(function (e) { return e.id === event.id; });
    if (known >= 0) {
      // The end of a stream already shown open: the same row, updated where it stands.
      events[known] = event;
      const old = tbody.querySelector('tr[data-event="' + event.id + '"]');
      if (old) old.replaceWith(render(event));
      return;
    }
    events.push(event);
    tbody.insertBefore(render(event), tbody.firstChild);
    while (events.length > MAX_ROWS) {
      const old = events.shift();
      const gone = tbody.querySelector('tr[data-event="' + old.id + '"]');
      if (gone) gone.remove();
    }
    empty.hidden = true;
    skipped += event.skippedBefore || 0;
    count.textContent = events.length + " request" + (events.length === 1 ? "" : "s") +
      (skipped ? " (" + skipped + " more not shown: over the live rate)" : "");
  }

  function refilter() {
    for (const event of events) {
      const row = tbody.querySelector('tr[data-event="' + event.id + '"]');
      if (row) row.hidden = !matches(event);
    }
  }

  function show(id) {
    const event = events.find(function (e) { return e.id === id; });
    if (!event) return;
    for (const row of tbody.querySelectorAll("tr[aria-selected]")) row.removeAttribute("aria-selected");
    const row = tbody.querySelector('tr[data-event="' + id + '"]');
    if (row) row.setAttribute("aria-selected", "true");
    detail.hidden = false;
    detail.querySelector("#detail-title").textContent = event.httpMethod + " " + event.method + (event.target ? " " + event.target : "");
    const bits = [event.status, event.transport, event.revision, clientText(event), event.credential ? "key " + event.credential : "", "served by " + event.process];
    if (event.reason) bits.push("refused: " + (event.reasonText || event.reason));
    detail.querySelector("#detail-meta").textContent = bits.filter(Boolean).join(" · ");
    detail.querySelector("#detail-request").textContent = JSON.stringify(event.request, null, 2);
    detail.querySelector("#detail-response").textContent = JSON.stringify(event.response, null, 2);
  }

  function taskUpdate(update) {
    const row = tbody.querySelector('tr[data-task="' + update.taskId + '"]');
    const note = row && row.querySelector(".task-progress");
    if (!note) return;
    let text = "task " + update.taskId.slice(0, 12);
    if (update.kind === "progress") {
      text += ": " + update.progress + (update.total ? "/" + update.total : "") + (update.message ? " " + update.message : "");
    } else if (update.status) {
      text += ": " + update.status + (update.message ? " " + update.message : "");
    }
    note.textContent = text;
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + root.dataset.socket);
    socket.addEventListener("open", function () {
      retry = 500;
      if (paused) socket.send(JSON.stringify({ type: "pause" }));
    });
    socket.addEventListener("message", function (message) {
      const data = JSON.parse(message.data);
      if (data.type === "hello") {
        state.textContent = paused ? "Paused: new requests are not shown" : "Live";
        root.dataset.live = "true";
      } else if (data.type === "requests") {
        for (const event of data.events) add(event);
      } else if (data.type === "task") {
        taskUpdate(data);
      }
    });
    socket.addEventListener("close", function (close) {
      root.dataset.live = "false";
      // A refused handshake (not allowed to watch) and an unreachable server look alike here.
      state.textContent = close.code === 4429
        ? "Too many inspector pages are open in this session; close one (retrying…)"
        : "Disconnected; reconnecting…";
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 10000);
    });
  }

  pauseButton.addEventListener("click", function () {
    paused = !paused;
    pauseButton.textContent = paused ? "Resume" : "Pause";
    state.textContent = paused ? "Paused: new requests are not shown" : "Live";
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: paused ? "pause" : "resume" }));
  });
  root.querySelector("#inspector-clear").addEventListener("click", function () {
    events.length = 0;
    skipped = 0;
    tbody.textContent = "";
    empty.hidden = false;
    detail.hidden = true;
    count.textContent = "";
  });
  for (const input of Object.values(filters)) input.addEventListener("input", refilter);
  root.querySelector("#inspector-filters").addEventListener("submit", function (e) { e.preventDefault(); });
  tbody.addEventListener("click", function (e) {
    const row = e.target.closest("tr[data-event]");
    if (row) show(row.dataset.event);
  });
  tbody.addEventListener("keydown", function (e) {
    const row = e.target.closest("tr[data-event]");
    if (row && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); show(row.dataset.event); }
  });
  connect();
})();
