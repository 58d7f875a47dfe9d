/* The tool editor's View section: "Generate view" posts the chosen template, the output schema
   and the sample result to the server, which answers the view's settings; they go into the View
   settings field (and, for custom HTML, the starter document into Custom HTML). */
(function () {
  "use strict";
  var section = document.getElementById("tool-view");
  if (!section) return;
  var $ = function (id) { return document.getElementById(id); };

  function setText(id, text) {
    var field = $(id);
    if (!field) return;
    if (field.codeEditor) field.codeEditor.setValue(text, 1);
    field.value = text;
    field.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function showFormTool() {
    var forForm = section.querySelector("[data-view-generator-for=form]");
    if (forForm) forForm.hidden = $("id_view_generator").value !== "form";
  }

  function generate() {
    var status = $("view-generate-status");
    status.textContent = "Generating…";
    var schema = $("id_output_schema");
    fetch(section.dataset.generateUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": window.getmcp.csrfToken() },
      body: JSON.stringify({
        template: $("id_view_generator").value,
        formTool: $("id_view_form_tool") ? $("id_view_form_tool").value : "",
        sample: $("id_view_sample").value,
        outputSchema: schema ? schema.value : "",
      }),
    }).then(function (r) {
      return r.json().then(function (data) { return { ok: r.ok, data: data }; });
    }).then(function (answer) {
      if (!answer.ok) { status.textContent = answer.data.error || "Could not generate the view."; return; }
      var view = answer.data.view;
      if (view.html !== undefined) { setText("id_view_html", view.html); delete view.html; }
      setText("id_view", JSON.stringify(view, null, 2));
      status.textContent = "Generated: adjust it below, save, then try it in the playground.";
    }).catch(function (e) { status.textContent = "Could not generate the view: " + e.message; });
  }

  $("view-generate").addEventListener("click", generate);
  $("id_view_generator").addEventListener("change", showFormTool);
  showFormTool();
})();
