-- wrk script: POSTs tools/call `echo` on one MCP session, each request with its own JSON-RPC id.
-- Environment: BENCH_SESSION_ID, BENCH_PROTOCOL_VERSION, BENCH_TEXT, BENCH_AUTHORIZATION.
-- A response counts as an error unless it is HTTP 200 with a JSON-RPC result that is no tool error.
-- done() prints one line "BENCH_RESULT {json}" for bench/run.py.

local session_id = os.getenv("BENCH_SESSION_ID")
local protocol_version = os.getenv("BENCH_PROTOCOL_VERSION") or "2025-11-25"
local text = os.getenv("BENCH_TEXT") or "hello"
local authorization = os.getenv("BENCH_AUTHORIZATION") or ""

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
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["Mcp-Protocol-Version"] = protocol_version
  if authorization ~= "" then
    wrk.headers["Authorization"] = authorization
  end
  if session_id and session_id ~= "" then
    wrk.headers["Mcp-Session-Id"] = session_id
  end
  body_head = '{"jsonrpc":"2.0","id":"t' .. thread_no .. '-'
  body_tail = '","method":"tools/call","params":{"name":"echo","arguments":{"text":"' .. text .. '"}}}'
end

function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil, body_head .. counter .. body_tail)
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
