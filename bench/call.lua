-- wrk script: POSTs tools/call `echo` on one MCP session, each request with its own JSON-RPC id.
-- Environment: BENCH_SESSION_ID, BENCH_PROTOCOL_VERSION, BENCH_TEXT, BENCH_AUTHORIZATION.
-- Errors and the BENCH_RESULT line for bench/run.py: bench/result.lua.

local session_id = os.getenv("BENCH_SESSION_ID")
local protocol_version = os.getenv("BENCH_PROTOCOL_VERSION") or "2025-11-25"
local text = os.getenv("BENCH_TEXT") or "hello"
local authorization = os.getenv("BENCH_AUTHORIZATION") or ""

-- setup(), response() and done(): bench/result.lua, found beside this script.
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "result.lua")

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
