-- wrk script: stateless (2026-07-28) tools/call `echo` across many servers, each request to the
-- next server of the list in BENCH_TARGETS (a file of "path key" lines), round robin.
-- A response counts as an error unless it is HTTP 200 with a JSON-RPC result that is no tool error.
-- done() prints one line "BENCH_RESULT {json}" like call.lua.

local targets_file = os.getenv("BENCH_TARGETS")
local threads = {}
local next_thread = 0

function setup(thread)
  next_thread = next_thread + 1
  thread:set("thread_no", next_thread)
  table.insert(threads, thread)
end

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

function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"result"', 1, true)
      or string.find(body, '"isError"%s*:%s*true') then
    errors = errors + 1
  end
end

function done(summary, latency, requests)
  local bad = 0
  for _, thread in ipairs(threads) do
    bad = bad + thread:get("errors")
  end
  local socket = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"bad_responses":%d,' ..
    '"socket_errors":%d,"p50_us":%d,"p95_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d}\n',
    summary.requests, summary.duration, bad,
    socket.connect + socket.read + socket.write + socket.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99),
    latency.mean, latency.max))
end
