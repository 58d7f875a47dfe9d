// The official TypeScript SDK as a person's MCP client (driven by test_typescript_client.py):
// it declares URL elicitation, calls a connection-backed tool, and answers the server's
// `elicitation/create` (mode "url") with what the test writes on stdin once the browser is done.
// argv: <server url> <API key> <tool>
// stdout: "ELICIT {params}", "COMPLETE <elicitationId>", "RESULT {...}" (per call), "DONE".
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ElicitationCompleteNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [url, key, tool] = process.argv.slice(2);
const lines = readline.createInterface({ input: process.stdin });
const nextLine = () => new Promise((resolve) => lines.once("line", resolve));

const client = new Client(
  { name: "ts-elicitation-test", version: "1.0.0" },
  { capabilities: { elicitation: { url: {} } } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  console.log(`ELICIT ${JSON.stringify(request.params)}`);
  // The test opens the URL in a browser, then tells the client what the person chose.
  return { action: (await nextLine()).trim() };
});
client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
  console.log(`COMPLETE ${notification.params.elicitationId}`);
});

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
await client.connect(transport);
for (const round of ["first", "again"]) {
  const result = await client.callTool({ name: tool, arguments: {} });
  const text = result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
  console.log(`RESULT ${JSON.stringify({ round, isError: Boolean(result.isError), text })}`);
}
console.log(`DONE ${client.getServerVersion()?.name ?? ""}`);
await client.close();
process.exit(0);
