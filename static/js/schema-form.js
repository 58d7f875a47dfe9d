/* Builds an HTML form from a JSON Schema and reads the values back.
   Used by the tool editor's preview, the playground's inputs and its elicitation requests.
   Everything from the schema is written with textContent, never as HTML. */
(function () {
  "use strict";

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (attrs[k] !== undefined && attrs[k] !== null && attrs[k] !== false) node.setAttribute(k, attrs[k]);
    });
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function typeOf(schema) {
    if (!schema || typeof schema !== "object") return "json";
    var t = schema.type;
    if (Array.isArray(t)) t = t.filter(function (x) { return x !== "null"; })[0];
    if (!t && (schema.enum || schema.oneOf || schema.anyOf)) t = "string";
    if (!t && schema.properties) t = "object";
    return t || "json";
  }

  function choices(schema) {
    if (Array.isArray(schema.enum)) {
      var names = schema.enumNames || [];
      return schema.enum.map(function (v, i) { return { value: v, label: names[i] || String(v) }; });
    }
    var list = schema.oneOf || schema.anyOf;
    if (Array.isArray(list) && list.every(function (o) { return o && "const" in o; })) {
      return list.map(function (o) { return { value: o.const, label: o.title || String(o.const) }; });
    }
    return null;
  }

  var counter = 0;

  function field(container, name, schema, required, path, value) {
    schema = schema || {};
    var id = "sf-" + (++counter);
    var type = typeOf(schema);
    var wrap = el("div", { class: "field", "data-sf-path": path, "data-sf-type": type });
    var labelText = schema.title || name;
    var label = el("label", { for: id }, labelText);
    if (!required) label.appendChild(el("span", { class: "optional" }, " optional"));
    var help = schema.description ? el("p", { class: "help", id: id + "-help" }, schema.description) : null;
    var input;
    var opts = choices(schema);
    var itemOpts = type === "array" && schema.items ? choices(schema.items) : null;

    if (type === "object" && schema.properties) {
      var fs = el("fieldset", { class: "sf-object", "data-sf-path": path, "data-sf-type": "object" });
      fs.appendChild(el("legend", {}, labelText));
      if (help) fs.appendChild(help);
      build(fs, schema, path, value || {});
      container.appendChild(fs);
      return;
    } else if (type === "boolean") {
      wrap.className = "field field-check";
      input = el("input", { type: "checkbox", id: id });
      if (value === true || (value === undefined && schema.default === true)) input.checked = true;
      label.textContent = "";
      label.appendChild(input);
      label.appendChild(el("span", {}, " " + labelText));
      wrap.appendChild(label);
    } else if (itemOpts) {
      var group = el("fieldset", { class: "sf-multi", "data-sf-path": path, "data-sf-type": "multi" });
      group.appendChild(el("legend", {}, labelText));
      itemOpts.forEach(function (o, i) {
        var cid = id + "-" + i;
        var l = el("label", { for: cid });
        var box = el("input", { type: "checkbox", id: cid, value: JSON.stringify(o.value) });
        if (Array.isArray(value) && value.indexOf(o.value) >= 0) box.checked = true;
        l.appendChild(box);
        l.appendChild(el("span", {}, " " + o.label));
        group.appendChild(l);
      });
      if (help) group.appendChild(help);
      group.appendChild(el("p", { class: "field-errors", hidden: "" }));
      container.appendChild(group);
      return;
    } else if (opts) {
      input = el("select", { id: id });
      if (!required) input.appendChild(el("option", { value: "" }, "—"));
      opts.forEach(function (o) {
        var option = el("option", { value: JSON.stringify(o.value) }, o.label);
        if (value !== undefined ? value === o.value : schema.default === o.value) option.selected = true;
        input.appendChild(option);
      });
      wrap.appendChild(label);
      wrap.appendChild(input);
    } else if (type === "string" || type === "number" || type === "integer") {
      var long = type === "string" && (!schema.maxLength || schema.maxLength > 200) && !schema.format;
      var attrs = { id: id };
      if (type !== "string") { attrs.type = "number"; attrs.step = type === "integer" ? "1" : "any"; attrs.inputmode = "decimal"; }
      else if (schema.format === "email") attrs.type = "email";
      else if (schema.format === "uri") attrs.type = "url";
      else if (schema.format === "date") attrs.type = "date";
      else if (schema.format === "date-time") attrs.type = "datetime-local";
      if ("minimum" in schema) attrs.min = schema.minimum;
      if ("maximum" in schema) attrs.max = schema.maximum;
      if (schema.maxLength) attrs.maxlength = schema.maxLength;
      input = el(long ? "textarea" : "input", attrs);
      if (long) input.rows = 2;
      var initial = value !== undefined ? value : schema.default;
      if (initial !== undefined && initial !== null) input.value = String(initial);
      if (schema.examples && schema.examples.length) input.placeholder = String(schema.examples[0]);
      wrap.appendChild(label);
      wrap.appendChild(input);
    } else {
      // Arrays, free-form objects, unions: typed as JSON.
      input = el("textarea", { id: id, class: "code", rows: 3, spellcheck: "false" });
      input.placeholder = type === "array" ? "[ ]" : "JSON";
      if (value !== undefined) input.value = JSON.stringify(value, null, 2);
      else if (schema.default !== undefined) input.value = JSON.stringify(schema.default, null, 2);
      wrap.dataset.sfType = "json";
      label.appendChild(el("span", { class: "optional" }, " JSON"));
      wrap.appendChild(label);
      wrap.appendChild(input);
    }
    if (required && input) input.setAttribute("aria-required", "true");
    if (help) { wrap.appendChild(help); input.setAttribute("aria-describedby", id + "-help"); }
    wrap.appendChild(el("p", { class: "field-errors", hidden: "", id: id + "-err" }));
    container.appendChild(wrap);
  }

  function build(container, schema, prefix, values) {
    var props = (schema && schema.properties) || {};
    var required = (schema && schema.required) || [];
    Object.keys(props).forEach(function (name) {
      field(container, name, props[name], required.indexOf(name) >= 0,
            prefix ? prefix + "." + name : name, values ? values[name] : undefined);
    });
  }

  function render(container, schema, values) {
    container.textContent = "";
    container._sfSchema = schema;
    var props = schema && schema.properties && Object.keys(schema.properties);
    if (!props || !props.length) {
      container.appendChild(el("p", { class: "muted small" }, container.dataset.empty || "No inputs."));
      return;
    }
    build(container, schema, "", values || {});
  }

  function showError(node, message) {
    var err = node.querySelector(":scope > .field-errors");
    if (!err) return;
    err.textContent = message || "";
    err.hidden = !message;
    node.classList.toggle("field-invalid", !!message);
    var input = node.querySelector("input, select, textarea");
    if (input) input.setAttribute("aria-invalid", message ? "true" : "false");
  }

  function readField(node, schema, required, errors) {
    var type = node.dataset.sfType;
    var input = node.querySelector("input, select, textarea");
    showError(node, "");
    if (type === "object") {
      var obj = {};
      var props = schema.properties || {};
      var req = schema.required || [];
      Array.prototype.forEach.call(node.querySelectorAll(":scope > [data-sf-path]"), function (child) {
        var key = child.dataset.sfPath.split(".").pop();
        var v = readField(child, props[key] || {}, req.indexOf(key) >= 0, errors);
        if (v !== undefined) obj[key] = v;
      });
      return Object.keys(obj).length || required ? obj : undefined;
    }
    if (type === "multi") {
      var picked = Array.prototype.filter.call(node.querySelectorAll("input:checked"), function () { return true; })
        .map(function (b) { return JSON.parse(b.value); });
      if (!picked.length && required) { showError(node, "Pick at least one."); errors.push(node); }
      return picked.length || required ? picked : undefined;
    }
    if (type === "boolean") return input.checked;
    if (input.tagName === "SELECT") {
      if (input.value === "") {
        if (required) { showError(node, "Required."); errors.push(node); }
        return undefined;
      }
      return JSON.parse(input.value);
    }
    var raw = input.value;
    if (raw.trim() === "") {
      if (required) { showError(node, "Required."); errors.push(node); }
      return undefined;
    }
    if (type === "number" || type === "integer") {
      var n = Number(raw);
      if (!isFinite(n) || (type === "integer" && !Number.isInteger(n))) {
        showError(node, type === "integer" ? "Must be a whole number." : "Must be a number.");
        errors.push(node);
        return undefined;
      }
      return n;
    }
    if (type === "json") {
      try { return JSON.parse(raw); } catch (e) {
        showError(node, "Not valid JSON: " + e.message); errors.push(node); return undefined;
      }
    }
    return raw;
  }

  function collect(container) {
    var schema = container._sfSchema || {};
    var props = schema.properties || {};
    var req = schema.required || [];
    var out = {};
    var errors = [];
    Array.prototype.forEach.call(container.querySelectorAll(":scope > [data-sf-path]"), function (node) {
      var key = node.dataset.sfPath;
      var v = readField(node, props[key] || {}, req.indexOf(key) >= 0, errors);
      if (v !== undefined) out[key] = v;
    });
    if (errors.length) {
      var first = errors[0].querySelector("input, select, textarea");
      if (first) first.focus();
    }
    return { value: out, valid: errors.length === 0 };
  }

  window.SchemaForm = { render: render, collect: collect };
})();
