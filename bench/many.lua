-- wrk script: stateless (2026-07-28) tools/call `echo` across many servers, each request to the
-- next server of the list in BENCH_TARGETS (a file of "path key" lines), round robin.
-- Errors and the BENCH_RESULT line: bench/result.lua, as for call.lua.

local targets_file = os.getenv("BENCH_TARGETS")
-- setup(), response() and done(): bench/result.lua, found beside this script.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "result.lua")

function init(args)
  counter = 0
  errors = 0
  targets = {}
  for line in io.lines(targets_file) do
    local path, key = line:match("^(%S+) (%S+)$")
    if path then table.insert(targets, {path, key}) end
  end
  local meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
    '"io.modelcontextprotocol/clientCapabilities":{},' ..
    '"io.modelcontextprotocol/clientInfo":{"name":"bench-many","version":"1"}}'
  body_head = '{"jsonrpc":"2.0","id":"t' .. thread_no .. '-'
  body_tail = '","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},' .. meta .. '}}'
end

function request()
  counter = counter + 1
  local target = targets[(counter % #targets) + 1]
  local headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Mcp-Protocol-Version"] = "2026-07-28",
    ["Mcp-Method"] = "tools/call",
    ["Mcp-Name"] = "echo",
    ["Authorization"] = "Bearer " .. target[2],
  }
  return wrk.format("POST", target[1], headers, body_head .. counter .. body_tail)
end
