-- What bench/call.lua and bench/many.lua share, loaded by both with dofile: the per-thread error
-- count and the one line "BENCH_RESULT {json}" that done() prints for bench/run.py.
-- A response counts as an error unless it is HTTP 200 with a JSON-RPC result that is no tool error.

threads = {}
local next_thread = 0

function setup(thread)
  next_thread = next_thread + 1
  thread:set("thread_no", next_thread)
  table.insert(threads, thread)
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
