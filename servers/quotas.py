"""Quotas and limits on tool calls (docs/quotas.md): an organization's monthly call quota, and a
key's or grant's calls per minute on each server and, optionally, per tool.

What counts is a tool call, on whichever surface it comes (MCP in both eras, the legacy HTTP+SSE
transport, REST, Webtools, a tool started as a task), once per call: the later rounds of an MRTR
call (those carrying `requestState`) are the same call. Calls of tools the principal cannot see
(servers/access.py) are refused before they count.

The counters live in Redis, so every worker and every reconnect sees the same numbers. A call
under no limit costs no Redis round trip: the organization's monthly count (which the Usage page
and API show whether or not there is a quota) is added up in the process and pushed with the
call log once a second (activity/usage_counts.py). A call under a limit costs one Lua script: it
increments every counter the call falls under and, when one of them goes over, takes the whole
call back out again and names the limit, so a refused call never uses quota. Over a limit the
answer is HTTP 429 with Retry-After (the end of the minute, or of the month), carrying the
JSON-RPC error; on the legacy SSE transport the same error also goes on the stream.
"""

import contextlib
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType

from django.conf import settings

from activity.recorder import flush as flush_call_log
from activity.usage_counts import count as count_usage
from infra import keys
from infra.redis import is_embedded
from mcp_protocol.jsonrpc import Request
from servers.discovery.names import CALL as META_CALL

MONTH_TTL = 40 * 24 * 3600
MINUTE_TTL = 120
RATE_LIMITED = -32000

CHARGE = """
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  if count == 1 then redis.call('EXPIRE', key, ARGV[2 * i]) end
  if count > tonumber(ARGV[2 * i - 1]) then
    for j = 1, i do redis.call('DECR', KEYS[j]) end
    return i
  end
end
return 0
"""
_scripts: dict = {}


@dataclass(frozen=True, slots=True)
class Limits:
    per_minute: int = 0
    tools: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    @property
    def empty(self) -> bool:
        return not self.per_minute and not self.tools


NO_LIMITS = Limits()


def limits_of(data) -> Limits:
    """A stored limit ({"perMinute": 60, "tools": {"name": 5}}) over the deployment default."""
    data = data if isinstance(data, dict) else {}
    per_minute = data.get("perMinute")
    if not isinstance(per_minute, int) or per_minute < 0:
        per_minute = settings.GOV_DEFAULT_CALLS_PER_MINUTE
    tools = data.get("tools") if isinstance(data.get("tools"), dict) else {}
    tools = {k: v for k, v in tools.items() if isinstance(v, int) and v > 0}
    limits = Limits(per_minute, MappingProxyType(tools))
    return NO_LIMITS if limits.empty else limits


def limit_problems(data) -> list[str]:
    if data in (None, {}):
        return []
    if not isinstance(data, dict):
        return ["must be an object"]
    found = [
        f"{key}: unknown (perMinute, tools)" for key in data if key not in ("perMinute", "tools")
    ]
    per_minute = data.get("perMinute")
    if per_minute is not None and (not isinstance(per_minute, int) or per_minute < 0):
        found.append("perMinute: must be a whole number, 0 for no limit")
    tools = data.get("tools")
    if tools is not None and (
        not isinstance(tools, dict) or not all(isinstance(v, int) and v > 0 for v in tools.values())
    ):
        found.append("tools: must map tool names to whole numbers above 0")
    return found


def monthly_quota(organization) -> int:
    quota = organization.monthly_call_quota
    return settings.GOV_DEFAULT_MONTHLY_CALL_QUOTA if quota is None else quota


def task_concurrency(organization_id: int) -> int:
    from accounts.models import Organization

    cap = (
        Organization.objects.filter(pk=organization_id)
        .values_list("task_concurrency", flat=True)
        .first()
    )
    return cap if cap else int(settings.MCP_TASKS_PER_ORG_CONCURRENCY)


# -- counter names ------------------------------------------------------------------------------


_month: list = [None, ""]  # (minute, "YYYYMM"): formatting a date costs more than the rest


def month_of(now: float) -> str:
    minute = int(now // 60)
    if _month[0] != minute:
        _month[1] = datetime.fromtimestamp(now, UTC).strftime("%Y%m")
        _month[0] = minute
    return _month[1]


_usage_keys: dict[int, str] = {}  # organization id -> its counter's name this month
_usage_month: list[str] = [""]


def _usage_key(organization_id: int, now: float) -> str:
    """keys.quota_month for this month, remembered per organization (a dict lookup costs a
    fraction of formatting the name on every call)."""
    month = month_of(now)
    if _usage_month[0] != month:
        _usage_keys.clear()
        _usage_month[0] = month
    key = _usage_keys.get(organization_id)
    if key is None:
        if len(_usage_keys) >= 100_000:  # bounded: a process serving very many organizations
            _usage_keys.clear()
        key = _usage_keys[organization_id] = keys.quota_month(organization_id, month)
    return key


def seconds_to_next_month(now: float) -> int:
    moment = datetime.fromtimestamp(now, UTC)
    year, month = (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
    return max(1, int(datetime(year, month, 1, tzinfo=UTC).timestamp() - now))


# -- charging a request -------------------------------------------------------------------------


class OverLimit(Exception):
    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


def tool_calls(parsed) -> list[str]:
    """The tools a parsed body calls (a request or a batch), MRTR continuations left out."""
    messages = parsed if isinstance(parsed, list) else [parsed]
    names = []
    for message in messages:
        if isinstance(message, str):  # REST and Webtools name the tool themselves
            names.append(message)
            continue
        if not isinstance(message, Request) or message.method != "tools/call":
            continue
        params = message.params if isinstance(message.params, dict) else {}
        name = params.get("name")
        if name == META_CALL:
            # A call through the discovery meta-tool counts as the tool it names.
            arguments = params.get("arguments")
            name = arguments.get("name") if isinstance(arguments, dict) else None
        if isinstance(name, str) and "requestState" not in params:
            names.append(name)
    return names


def counters(snapshot, credential, names, now: float) -> list[tuple[str, int, int, str]]:
    """(key, limit, ttl, what) for every counter these calls fall under."""
    limits = credential.limits
    quota = snapshot.monthly_call_quota
    if not quota and limits.empty:
        return []
    minute = int(now // 60)
    found = []
    for name in names:
        if name not in snapshot.tools:
            continue  # answered as unknown, never counted
        if quota:
            key = keys.quota_month(snapshot.organization_id, month_of(now))
            found.append((key, quota, MONTH_TTL, f"monthly quota of {quota} tool calls"))
        if limits.per_minute:
            key = keys.quota_minute(
                snapshot.organization_id, snapshot.server_id, credential.ident, minute
            )
            what = f"limit of {limits.per_minute} calls per minute"
            found.append((key, limits.per_minute, MINUTE_TTL, what))
        per_tool = limits.tools.get(name)
        if per_tool:
            key = keys.quota_minute(
                snapshot.organization_id, snapshot.server_id, credential.ident, minute, name
            )
            found.append(
                (key, per_tool, MINUTE_TTL, f"limit of {per_tool} calls per minute of {name}")
            )
    return found


async def charge(redis, snapshot, credential, names) -> None:
    """Count the calls; raises OverLimit (and counts nothing) when one goes over."""
    if not names:
        return
    now = time.time()
    found = counters(snapshot, credential, names, now)
    if found:
        counted = [key for key, *_ in found]
        args = [part for _, limit, ttl, _ in found for part in (limit, ttl)]
        broken = await _run(redis, counted, args)
        if broken:
            _key, _limit, ttl, what = found[broken - 1]
            retry_after = seconds_to_next_month(now) if ttl == MONTH_TTL else 60 - int(now % 60)
            raise OverLimit(f"Over the {what}; retry in {retry_after} s", retry_after)
    if not snapshot.monthly_call_quota:
        # No quota: the script above did not count the month, so usage is counted on the side.
        tools = snapshot.tools
        if len(names) == 1:  # almost every request: no generator
            calls = 1 if names[0] in tools else 0
        else:
            calls = sum(1 for name in names if name in tools)
        if calls:
            count_usage((_usage_key(snapshot.organization_id, now), calls, MONTH_TTL))


async def charge_request(redis, snapshot, credential) -> None:
    """The server's own limit (rateLimitPerMinute): every request to it counts, per credential,
    in a fixed one-minute window; the same script as the limits on tool calls, one round trip.
    Raises OverLimit (the refused request is not counted)."""
    limit = snapshot.rate_limit_per_minute
    if not limit:
        return
    now = time.time()
    window = keys.rate_window(snapshot.server_id, credential.ident, int(now // 60))
    if await _run(redis, [window], [limit, MINUTE_TTL]):
        retry_after = 60 - int(now % 60)
        raise OverLimit(
            f"Rate limit of {limit} calls per minute reached; retry in {retry_after} s",
            retry_after,
        )


async def _run(redis, counted: list[str], args: list[int]) -> int:
    """Counts one call on every counter; returns the 1-based index of the first one that went
    over (all taken back then), 0 when none did."""
    if is_embedded():
        # fakeredis has no Lua without an extra package: the same steps, one at a time.
        for index, key in enumerate(counted):
            count = await redis.incr(key)
            if count == 1:
                await redis.expire(key, args[2 * index + 1])
            if count > args[2 * index]:
                for undo in counted[: index + 1]:
                    await redis.decr(undo)
                return index + 1
        return 0
    script = _scripts.get(id(redis))
    if script is None:
        script = _scripts[id(redis)] = redis.register_script(CHARGE)
    return int(await script(keys=counted, args=args))


# -- reading usage (dashboard, API) -------------------------------------------------------------


def usage(organization, now: float | None = None) -> dict:
    from infra.redis import sync_client

    with contextlib.suppress(Exception):
        # This process's own counts not pushed yet (in embedded mode: every count there is).
        flush_call_log()
    now = time.time() if now is None else now
    month = month_of(now)
    raw = sync_client().get(keys.quota_month(organization.pk, month))
    quota = monthly_quota(organization)
    used = int(raw) if raw else 0
    return {
        "month": f"{month[:4]}-{month[4:]}",
        "calls": used,
        "monthlyCallQuota": quota or None,
        "remaining": max(quota - used, 0) if quota else None,
        "resetsInSeconds": seconds_to_next_month(now),
        "taskConcurrency": task_concurrency(organization.pk),
    }
