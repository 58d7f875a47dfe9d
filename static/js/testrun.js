/* The tool test page: a form from the input schema, one POST, the report shown as text. */
(function () {
  "use strict";
  var root = document.getElementById("testrun");
  if (!root) return;
  var $ = function (id) { return document.getElementById(id); };
  var schema = JSON.parse($("tool-schema").textContent || "{}");
  function show(id, value) { $(id).textContent = JSON.stringify(value, null, 2); }

  document.addEventListener("DOMContentLoaded", function () {
    window.SchemaForm.render($("tr-inputs"), schema);
  });

  $("tr-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var read = window.SchemaForm.collect($("tr-inputs"));
    if (!read.valid) return;
    $("tr-run").disabled = true;
    $("tr-timing").textContent = "Running…";
    var started = performance.now();
    fetch(root.dataset.url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": window.getmcp.csrfToken() },
      body: JSON.stringify({ arguments: read.value }),
    }).then(function (r) { return r.json(); }).then(function (report) {
      var timing = report.timing || {};
      $("tr-timing").textContent = (timing.totalMs !== undefined ? timing.totalMs : Math.round(performance.now() - started)) + " ms" +
        (timing.upstreamMs ? " · upstream " + timing.upstreamMs + " ms" : "") +
        (timing.attempts > 1 ? " · " + timing.attempts + " attempts" : "");
      $("tr-result-card").hidden = false;
      show("tr-result", report.result || { error: report.error });
      $("tr-result-card").classList.toggle("danger-zone", !!(report.error || (report.result && report.result.isError)));
      $("tr-http-card").hidden = !report.request;
      if (report.request) { show("tr-request", report.request); show("tr-response", report.response); }
      var lines = (report.logs || []).map(function (l) { return "[" + l.level + "] " + (typeof l.data === "string" ? l.data : JSON.stringify(l.data)); })
        .concat((report.progress || []).map(function (p) { return "progress " + p.progress + (p.total ? "/" + p.total : "") + (p.message ? " " + p.message : ""); }));
      lines = lines.concat((report.printed || []).map(function (p) { return "[" + p.stream + "] " + p.text.replace(/\n$/, ""); }));
      $("tr-logs").textContent = lines.length ? lines.join("\n") : "No logs or progress.";
      if ($("tr-host-card") && report.hostCalls) {
        $("tr-host-card").hidden = false;
        $("tr-host").textContent = report.hostCalls.length ? report.hostCalls.map(function (c) {
          return c.function + " " + c.arguments + " · " + c.ms + " ms" + (c.error ? " · " + c.error : "");
        }).join("\n") : "No host calls.";
      }
    }).catch(function (e) {
      $("tr-timing").textContent = "Failed: " + e.message;
    }).then(function () { $("tr-run").disabled = false; });
  });
})();
