/* getmcp's view runtime: the table, card, chart and form templates. It runs inside the host's
   sandboxed frame, after the MCP Apps SDK (McpApps), and receives the tool's result through the
   SDK. Every value is written with textContent or as an SVG attribute: a result is data, never
   markup. A form calls its tool back through the host (app.callServerTool), so the call takes the
   same way as any other: the host's tools/call to the server. */
const settings = JSON.parse(document.getElementById("view-settings").textContent);
const body = document.getElementById("view-body");
const MAX_POINTS = 1000;
const SVG = "http://www.w3.org/2000/svg";
document.getElementById("view-title").textContent = settings.title || "";

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(key, String(value));
  }
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  return node;
}

function display(value) {
  if (value === undefined || value === null) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function label(key) {
  const words = String(key).replace(/[_-]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/* What a result holds: structuredContent, else its one text block read as JSON, else the text. */
function payload(result) {
  if (result && result.structuredContent !== undefined && result.structuredContent !== null) {
    return result.structuredContent;
  }
  const texts = ((result && result.content) || []).filter((c) => c.type === "text").map((c) => c.text);
  if (texts.length === 1) {
    try { return JSON.parse(texts[0]); } catch (e) { /* plain text */ }
  }
  return texts.join("\n");
}

function at(data, path) {
  if (!path) return data;
  for (const part of String(path).split(".")) {
    if (data === undefined || data === null) return undefined;
    data = data[part];
  }
  return data;
}

function replace(...nodes) {
  body.replaceChildren(...nodes);
}

function message(text, kind) {
  return el("p", { class: kind || "muted" }, text);
}

function errorText(result) {
  const text = ((result && result.content) || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  return text || "The tool reported an error.";
}

/* ---- table: sortable, paged ---- */
function columnsOf(rows) {
  if (Array.isArray(settings.columns) && settings.columns.length) return settings.columns;
  const keys = [];
  for (const row of rows.slice(0, 50)) {
    if (row && typeof row === "object") for (const key of Object.keys(row)) if (!keys.includes(key)) keys.push(key);
  }
  return keys.map((key) => ({ key, label: label(key) }));
}

function compare(a, b) {
  if (a === undefined || a === null) return b === undefined || b === null ? 0 : 1;
  if (b === undefined || b === null) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return display(a).localeCompare(display(b), undefined, { numeric: true });
}

function renderTable(data) {
  if (!Array.isArray(data)) return replace(message("The result holds no list of rows to show."));
  const rows = data.map((row) => (row && typeof row === "object" ? row : { value: row }));
  const columns = columnsOf(rows);
  const pageSize = settings.pageSize || 10;
  const state = { key: null, descending: false, page: 0 };
  const table = el("table", { class: "view-table" });
  const head = el("thead");
  const headRow = el("tr");
  const tbody = el("tbody");
  const pager = el("nav", { class: "view-pager", "aria-label": "Pages" });
  const previous = el("button", { type: "button", class: "view-prev" }, "Previous");
  const next = el("button", { type: "button", class: "view-next" }, "Next");
  const where = el("span", { class: "view-page" });
  pager.append(previous, where, next);
  columns.forEach((column) => {
    const th = el("th", { scope: "col", "aria-sort": "none" });
    const button = el("button", { type: "button", class: "view-sort" }, column.label || label(column.key));
    button.addEventListener("click", () => {
      state.descending = state.key === column.key ? !state.descending : false;
      state.key = column.key;
      state.page = 0;
      draw();
    });
    th.appendChild(button);
    headRow.appendChild(th);
  });
  head.appendChild(headRow);
  table.append(head, tbody);

  function draw() {
    const sorted = rows.slice();
    if (state.key !== null) {
      sorted.sort((a, b) => compare(a[state.key], b[state.key]) * (state.descending ? -1 : 1));
    }
    const pages = Math.max(1, Math.ceil(sorted.length / pageSize));
    state.page = Math.min(state.page, pages - 1);
    const shown = sorted.slice(state.page * pageSize, (state.page + 1) * pageSize);
    tbody.replaceChildren(...shown.map((row) => {
      const tr = el("tr");
      columns.forEach((column) => tr.appendChild(el("td", {}, display(row[column.key]))));
      return tr;
    }));
    Array.from(headRow.children).forEach((th, index) => {
      const sorting = state.key === columns[index].key;
      th.setAttribute("aria-sort", sorting ? (state.descending ? "descending" : "ascending") : "none");
    });
    where.textContent = `Page ${state.page + 1} of ${pages} · ${sorted.length} rows`;
    previous.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }
  previous.addEventListener("click", () => { state.page -= 1; draw(); });
  next.addEventListener("click", () => { state.page += 1; draw(); });
  draw();
  replace(table, pager);
}

/* ---- card: one record's fields ---- */
function recordList(record, fields) {
  const list = el("dl", { class: "view-card" });
  const shown = Array.isArray(fields) && fields.length
    ? fields
    : Object.keys(record).map((key) => ({ key, label: label(key) }));
  shown.forEach((field) => {
    list.append(el("dt", {}, field.label || label(field.key)), el("dd", {}, display(record[field.key])));
  });
  return list;
}

function renderCard(data) {
  if (Array.isArray(data)) data = data[0];
  if (data === undefined || data === null) return replace(message("The result is empty."));
  if (typeof data !== "object") return replace(el("p", { class: "view-text" }, display(data)));
  replace(recordList(data, settings.fields));
}

/* ---- chart: a line or bar chart of numeric series ---- */
function renderChart(data) {
  if (!Array.isArray(data) || !data.length) return replace(message("The result holds no series to chart."));
  const rows = data.slice(0, MAX_POINTS).filter((row) => row && typeof row === "object");
  const chart = settings.chart || {};
  const keys = Object.keys(rows[0] || {});
  const x = chart.x || keys[0];
  let series = Array.isArray(chart.y) && chart.y.length ? chart.y : keys.filter((k) => k !== x && typeof rows[0][k] === "number");
  series = series.filter((key) => rows.some((row) => typeof row[key] === "number"));
  if (!series.length) return replace(message("The result holds no numeric field to chart."));
  const values = rows.flatMap((row) => series.map((key) => row[key]).filter((v) => typeof v === "number"));
  const low = Math.min(0, ...values);
  const high = Math.max(...values, low + 1);
  const width = 640, height = 280, left = 48, right = 12, top = 12, bottom = 40;
  const plotW = width - left - right, plotH = height - top - bottom;
  const yOf = (v) => top + plotH - ((v - low) / (high - low)) * plotH;
  const slot = plotW / rows.length;
  const xOf = (i) => left + slot * i + slot / 2;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", class: "view-chart", "aria-label": settings.title || "Chart" });
  root.appendChild(svg("line", { x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH, class: "axis" }));
  [low, (low + high) / 2, high].forEach((v) => {
    const tick = svg("text", { x: left - 6, y: yOf(v) + 4, "text-anchor": "end", class: "tick" });
    tick.textContent = Number.isInteger(v) ? String(v) : v.toFixed(2);
    root.appendChild(tick);
  });
  const every = Math.max(1, Math.ceil(rows.length / 12));
  rows.forEach((row, i) => {
    if (i % every) return;
    const tick = svg("text", { x: xOf(i), y: top + plotH + 16, "text-anchor": "middle", class: "tick" });
    tick.textContent = display(row[x]).slice(0, 16);
    root.appendChild(tick);
  });
  series.forEach((key, s) => {
    const color = `var(--series-${s % 6})`;
    if (chart.type === "bar") {
      const barW = (slot * 0.8) / series.length;
      rows.forEach((row, i) => {
        const v = row[key];
        if (typeof v !== "number") return;
        const y0 = yOf(Math.max(0, low)), y1 = yOf(v);
        const bar = svg("rect", { x: left + slot * i + slot * 0.1 + barW * s, y: Math.min(y0, y1), width: barW, height: Math.abs(y0 - y1), fill: color, class: "bar" });
        const tip = svg("title");
        tip.textContent = `${display(row[x])} · ${label(key)}: ${v}`;
        bar.appendChild(tip);
        root.appendChild(bar);
      });
    } else {
      const points = rows.map((row, i) => (typeof row[key] === "number" ? `${xOf(i)},${yOf(row[key])}` : null)).filter(Boolean);
      root.appendChild(svg("polyline", { points: points.join(" "), fill: "none", stroke: color, "stroke-width": 2, class: "line" }));
    }
  });
  const legend = el("ul", { class: "view-legend" });
  series.forEach((key, s) => {
    const item = el("li", {}, label(key));
    item.style.setProperty("--swatch", `var(--series-${s % 6})`);
    legend.appendChild(item);
  });
  replace(root, legend);
}

/* ---- form: the fields of another tool's input, calling it through the host ---- */
const form = { fields: {}, node: null, output: null };

function fieldFor(name, schema, required) {
  const id = `field-${name}`;
  const wrap = el("div", { class: "view-field" });
  const text = el("label", { for: id }, (schema.title || label(name)) + (required ? " *" : ""));
  let input;
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (Array.isArray(schema.enum)) {
    input = el("select", { id, name, required });
    schema.enum.forEach((option) => input.appendChild(el("option", { value: display(option) }, display(option))));
  } else if (type === "boolean") {
    input = el("input", { id, name, type: "checkbox" });
  } else if (type === "number" || type === "integer") {
    input = el("input", { id, name, type: "number", step: type === "integer" ? "1" : "any", required });
  } else if (type === "object" || type === "array") {
    input = el("textarea", { id, name, rows: 3, required, placeholder: "JSON" });
  } else {
    input = el("input", { id, name, type: "text", required });
  }
  if (schema.default !== undefined) setValue(input, type, schema.default);
  wrap.append(text, input);
  if (schema.description) wrap.appendChild(el("small", {}, schema.description));
  form.fields[name] = { input, type };
  return wrap;
}

function setValue(input, type, value) {
  if (type === "boolean") input.checked = !!value;
  else input.value = typeof value === "object" ? JSON.stringify(value) : display(value);
}

function collect() {
  const args = {};
  for (const [name, { input, type }] of Object.entries(form.fields)) {
    if (type === "boolean") { args[name] = input.checked; continue; }
    if (input.value === "") continue;
    if (type === "number" || type === "integer") args[name] = Number(input.value);
    else if (type === "object" || type === "array") args[name] = JSON.parse(input.value);
    else args[name] = input.value;
  }
  return args;
}

function showAnswer(result) {
  if (result.isError) return form.output.replaceChildren(message(errorText(result), "error"));
  const data = payload(result);
  const node = data && typeof data === "object" && !Array.isArray(data)
    ? recordList(data)
    : el("pre", { class: "view-text" }, typeof data === "string" ? data : JSON.stringify(data, null, 2));
  form.output.replaceChildren(node);
}

function renderForm() {
  const spec = settings.form;
  if (!spec) return replace(message("This form's tool is not on the server.", "error"));
  const schema = spec.inputSchema || {};
  const required = schema.required || [];
  const node = el("form", { class: "view-form" });
  if (spec.description) node.appendChild(el("p", { class: "muted" }, spec.description));
  for (const [name, property] of Object.entries(schema.properties || {})) {
    node.appendChild(fieldFor(name, property || {}, required.includes(name)));
  }
  const submit = el("button", { type: "submit" }, settings.submitLabel || "Send");
  node.appendChild(submit);
  form.output = el("section", { class: "view-answer", "aria-live": "polite" });
  node.addEventListener("submit", async (event) => {
    event.preventDefault();
    let args;
    try { args = collect(); } catch (e) { return form.output.replaceChildren(message(`Not valid JSON: ${e.message}`, "error")); }
    submit.disabled = true;
    form.output.replaceChildren(message(`Calling ${spec.tool}…`));
    try {
      showAnswer(await app.callServerTool({ name: spec.tool, arguments: args }));
    } catch (e) {
      form.output.replaceChildren(message(e && e.message ? e.message : String(e), "error"));
    } finally {
      submit.disabled = false;
    }
  });
  form.node = node;
  replace(node, form.output);
}

function prefill(data) {
  if (!data || typeof data !== "object" || Array.isArray(data)) return;
  for (const [name, { input, type }] of Object.entries(form.fields)) {
    if (data[name] !== undefined) setValue(input, type, data[name]);
  }
}

/* ---- wiring ---- */
function render(result) {
  if (settings.template === "form") return prefill(payload(result));
  if (result.isError) return replace(message(errorText(result), "error"));
  const data = at(payload(result), settings.data);
  if (settings.template === "table") renderTable(data);
  else if (settings.template === "chart") renderChart(data);
  else renderCard(data);
}

const app = new McpApps.App({ name: "getmcp view", version: "1.0.0" }, {});
app.ontoolresult = (result) => render(result);
app.onhostcontextchanged = (context) => applyHost(context);
if (settings.template === "form") renderForm();

function applyHost(context) {
  if (!context) return;
  if (context.theme) document.documentElement.dataset.theme = context.theme;
  if (context.styles && context.styles.variables && McpApps.applyHostStyleVariables) {
    McpApps.applyHostStyleVariables(context.styles.variables);
  }
}

await app.connect();
applyHost(app.getHostContext());
