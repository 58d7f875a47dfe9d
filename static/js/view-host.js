/* The playground's view preview: an MCP Apps host built on the official SDK's host side
   (AppBridge, vendored by `make assets`). When a tool whose _meta.ui.resourceUri names a view
   answers, the view is read from the server, loaded into the sandbox proxy (/views/sandbox/,
   framed with sandbox="allow-scripts", so in an opaque origin) and given the call's arguments and
   result. What the view asks of the server (tools/call, resources/read) goes out through the
   playground's own session to /mcp/<slug>: the same endpoint, key, access rules, quotas and call
   log as any call, and it shows in the JSON-RPC exchange. */
import { AppBridge, PostMessageTransport } from "../vendor/ext-apps/app-bridge.js";

const root = document.getElementById("playground");
const HOST = { name: "getmcp playground", version: "1.0.0" };
const APP_MIME_TYPE = "text/html;profile=mcp-app";
let current = null;

function box() { return document.getElementById("pg-view"); }

function note(text, kind) {
  const p = document.createElement("p");
  p.className = kind === "bad" ? "field-errors" : "muted small";
  p.textContent = text;
  return p;
}

function teardown() {
  if (current) {
    current.bridge.close().catch(() => {});
    current = null;
  }
  const view = box();
  view.hidden = true;
  document.getElementById("pg-view-frame").replaceChildren();
  document.getElementById("pg-view-note").replaceChildren();
}

function allowedForApps(tool) {
  const visibility = tool && tool._meta && tool._meta.ui && tool._meta.ui.visibility;
  return !Array.isArray(visibility) || visibility.includes("app");
}

async function readView(uri) {
  const result = await root.mcpCall("resources/read", { uri });
  const content = (result.contents || [])[0];
  if (!content || content.mimeType !== APP_MIME_TYPE) throw new Error(`${uri} is not an MCP App (${content ? content.mimeType : "no contents"})`);
  const html = content.text !== undefined ? content.text : atob(content.blob || "");
  const ui = (content._meta && content._meta.ui) || {};
  return { html, csp: ui.csp || {}, permissions: ui.permissions || {}, prefersBorder: ui.prefersBorder };
}

function sandboxFrame(csp) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-forms");
  frame.setAttribute("title", "View preview");
  frame.className = "pg-view-frame";
  frame.src = `${root.dataset.sandboxUrl}?csp=${encodeURIComponent(JSON.stringify(csp))}`;
  return frame;
}

function proxyReady(frame) {
  return new Promise((resolve) => {
    function listener(event) {
      if (event.source === frame.contentWindow && event.data && event.data.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", listener);
        resolve();
      }
    }
    window.addEventListener("message", listener);
  });
}

function newBridge(frame, catalog) {
  const bridge = new AppBridge(null, HOST, {
    serverTools: {}, serverResources: {}, logging: {},
  }, {
    hostContext: {
      theme: document.documentElement.dataset.theme === "dark" ? "dark" : "light",
      displayMode: "inline", availableDisplayModes: ["inline"], platform: "web",
      containerDimensions: { maxHeight: 640 },
      locale: navigator.language,
    },
  });
  bridge.oncalltool = async (params) => {
    const tool = catalog.find((t) => t.name === params.name);
    if (!tool) throw new Error(`Unknown tool: ${params.name}`);
    // Tools not visible to apps are refused here, as the extension asks of hosts.
    if (!allowedForApps(tool)) throw new Error(`The tool ${params.name} is not available to views.`);
    return root.mcpCall("tools/call", { name: params.name, arguments: params.arguments || {} });
  };
  bridge.onreadresource = (params) => root.mcpCall("resources/read", { uri: params.uri });
  bridge.onlistresources = (params) => root.mcpCall("resources/list", params || {});
  bridge.onlistresourcetemplates = (params) => root.mcpCall("resources/templates/list", params || {});
  bridge.onloggingmessage = (params) => root.dispatchEvent(new CustomEvent("pg:view-log", { detail: params }));
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) frame.style.height = `${Math.min(Math.max(height, 60), 640)}px`;
  };
  return bridge;
}

async function show(detail) {
  teardown();
  const uri = detail.tool && detail.tool._meta && detail.tool._meta.ui && detail.tool._meta.ui.resourceUri;
  if (!uri || !detail.result) return;
  const view = box();
  view.hidden = false;
  const noteBox = document.getElementById("pg-view-note");
  noteBox.replaceChildren(note(`Rendered from ${uri} as a host would.`));
  let resource;
  try {
    resource = await readView(uri);
  } catch (e) {
    noteBox.replaceChildren(note(`The view could not be read: ${e.message}`, "bad"));
    return;
  }
  const frame = sandboxFrame(resource.csp);
  frame.classList.toggle("pg-view-bordered", resource.prefersBorder !== false);
  const ready = proxyReady(frame);
  document.getElementById("pg-view-frame").replaceChildren(frame);
  await ready;
  const bridge = newBridge(frame, detail.catalog || []);
  current = { bridge };
  bridge.oninitialized = () => {
    bridge.sendToolInput({ arguments: detail.arguments || {} });
    bridge.sendToolResult(detail.result);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  await bridge.sendSandboxResourceReady({ html: resource.html, csp: resource.csp, permissions: resource.permissions });
  frame.dataset.state = "loaded";
}

if (root) {
  root.addEventListener("pg:result", (event) => {
    show(event.detail).catch((e) => {
      document.getElementById("pg-view-note").replaceChildren(note(`The view failed: ${e.message}`, "bad"));
    });
  });
}
