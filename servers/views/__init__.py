"""Views: a tool's result shown as an MCP App (the `io.modelcontextprotocol/ui` extension).

A tool may carry a `view` in the server-as-code format. When the definition is compiled, every
view becomes a `ui://views/<tool>` resource of type `text/html;profile=mcp-app` (a resource of
kind `view`, read by servers.views.kind) and the tool's `_meta.ui.resourceUri` points at it, so a
host that speaks MCP Apps renders the tool's result in a sandboxed frame. A server with no view
and no hand-written app resource advertises no extension (servers.compiled.features).

```yaml
tools:
  - name: list_orders
    view:
      template: table        # table | card | chart | form | html
      title: Orders          # the view's heading (optional)
      data: items            # dotted path to the data inside the result (optional)
      columns: [{key: id, label: Order}, {key: total, label: Total}]   # table
      pageSize: 10                                                     # table
      fields: [{key: id, label: Order}]                                # card
      chart: {type: line, x: day, y: [total]}                          # chart: line | bar
      tool: create_order     # form: the tool the form calls, its fields from that tool's input
      submitLabel: Create    # form
      html: "<!doctype html>..."   # html: a whole document, written by hand
      csp: {connectDomains: [https://api.example.com], resourceDomains: [], frameDomains: [],
            baseUriDomains: []}
      permissions: {clipboardWrite: {}}   # camera, microphone, geolocation, clipboardWrite
      prefersBorder: true
      domain: ""             # the host-specific dedicated origin (optional)
```

The package: spec.py (the format and its checks), generate.py (a template's settings from an
output schema or a sample result), document.py (the HTML document, tenant text escaped), sdk.py
(the vendored MCP Apps SDK, inlined into each document), expand.py (views into resources and
`_meta` at compile time) and kind.py (the resource kind that serves them).
"""

from .expand import expand_views, view_uri
from .generate import generate_view
from .spec import TEMPLATES, view_problems

__all__ = ["TEMPLATES", "expand_views", "generate_view", "view_problems", "view_uri"]
