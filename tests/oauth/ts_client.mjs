// The TypeScript SDK's OAuth client against a getmcp server (driven by test_js_clients.py).
// argv: <server url> <redirect url> <seconds to wait at most for the access token to expire>
// stdout: "AUTHORIZE <url>" (then reads the code on stdin), "RESULT {...}", "REFRESHED {...}".
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [url, redirectUrl, waitSeconds] = process.argv.slice(2);
let clientInformation, savedTokens, verifier;
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return {
      client_name: "TypeScript SDK test",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  },
  clientInformation: () => clientInformation,
  saveClientInformation: (info) => { clientInformation = info; },
  tokens: () => savedTokens,
  saveTokens: (tokens) => { savedTokens = tokens; },
  redirectToAuthorization: (authorizationUrl) => { console.log(`AUTHORIZE ${authorizationUrl}`); },
  saveCodeVerifier: (value) => { verifier = value; },
  codeVerifier: () => verifier,
};
const lines = readline.createInterface({ input: process.stdin });
const nextLine = () => new Promise((resolve) => lines.once("line", resolve));
const transport = () => new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });

async function connect() {
  const first = transport();
  try {
    const client = new Client({ name: "ts-oauth-test", version: "1.0.0" });
    await client.connect(first);
    return client;
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  await first.finishAuth((await nextLine()).trim());
  const client = new Client({ name: "ts-oauth-test", version: "1.0.0" });
  await client.connect(transport());
  return client;
}

const client = await connect();
const tools = await client.listTools();
const called = await client.callTool({ name: "echo", arguments: { message: "from typescript" } });
const firstToken = savedTokens.access_token;
console.log(`RESULT ${JSON.stringify({
  tools: tools.tools.map((tool) => tool.name),
  text: called.content[0].text,
  refreshToken: Boolean(savedTokens.refresh_token),
})}`);
// The next call needs a refresh once the server refuses the first access token: poll for that
// (the pause between polls is the only timer) rather than sleep past its lifetime.
const deadline = Date.now() + Number(waitSeconds) * 1000;
const refused = async () => (await fetch(url, {
  method: "POST",
  headers: { Authorization: `Bearer ${firstToken}`, "Content-Type": "application/json" },
  body: "{}",
})).status === 401;
while (!(await refused())) {
  if (Date.now() > deadline) throw new Error(`the first access token still works after ${waitSeconds} s`);
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const again = await client.callTool({ name: "echo", arguments: { message: "after refresh" } });
console.log(`REFRESHED ${JSON.stringify({
  text: again.content[0].text,
  newToken: savedTokens.access_token !== firstToken,
})}`);
await client.close();
process.exit(0);
