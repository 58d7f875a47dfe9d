// The official TypeScript SDK's streamable HTTP server with the same `echo` tool as getmcp's
// bench server: express, stateful sessions (Mcp-Session-Id), JSON answers (enableJsonResponse),
// one Node process. As the SDK's README sets it up: one transport and McpServer per session.
import { randomUUID } from "node:crypto";
import express from "express";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

const port = Number(process.env.PORT || 8766);
const transports = {};

function newServer() {
  const server = new McpServer({ name: "bench-ts-sdk", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echo the text back.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

const app = express();
app.use(express.json());

app.post("/mcp", async (req, res) => {
  const sid = req.headers["mcp-session-id"];
  let transport = sid ? transports[sid] : undefined;
  if (!transport) {
    if (sid || !isInitializeRequest(req.body)) {
      res.status(400).json({ jsonrpc: "2.0", error: { code: -32000, message: "No valid session" }, id: null });
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => { transports[id] = transport; },
    });
    transport.onclose = () => { if (transport.sessionId) delete transports[transport.sessionId]; };
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});

app.listen(port, "127.0.0.1", () => console.log(`ts-sdk bench server on ${port}`));
