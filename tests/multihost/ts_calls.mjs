// The official TypeScript SDK against a getmcp server (driven by tests/multihost/test_clients.py).
// argv: <server url> <api key> <calls>; stdout: "TOOLS [...]", then "RESULT <text>" per call.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key, calls] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: "ts-multihost-test", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
console.log(`TOOLS ${JSON.stringify(tools.tools.map((tool) => tool.name).sort())}`);
for (let number = 0; number < Number(calls); number++) {
  const result = await client.callTool({ name: "echo", arguments: { message: `ts ${number}` } });
  console.log(`RESULT ${result.content[0].text}`);
}
await client.close();
