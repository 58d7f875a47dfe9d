"""Whole results kept in Redis while a truncated copy goes to the client, read back in pages.

Key `mcp:results:<id>` (hash: org, server, credential, pages, page size, text; TTL the server's
setting) and, per organization, `mcp:results:org:<org>` (sorted set of "<id>:<chars>" scored by
expiry), which keeps the organization under RESULT_STORE_MAX_CHARS_PER_ORG: expired entries
are dropped, then the oldest evicted; a single result larger than the cap is not kept at all
(the truncated answer says so). Ids are 192 random bits, and a read must come from the same
server and credential, so a link is worth nothing to anyone else.
"""

import secrets
import time

from django.conf import settings

from infra import keys

URI_PREFIX = "getmcp://results/"
MIME_TYPE = "text/plain"


def _key(result_id: str) -> str:
    return keys.stored_result(result_id)


def _org_key(org_id: int) -> str:
    return keys.stored_results_of_org(org_id)


def org_cap() -> int:
    return int(getattr(settings, "RESULT_STORE_MAX_CHARS_PER_ORG", 50_000_000))


def page_uri(result_id: str, page: int) -> str:
    return f"{URI_PREFIX}{result_id}?page={page}"


async def store(
    redis, *, org_id: int, server_id: int, credential: str, text: str, page_chars: int, ttl: int
) -> str | None:
    """Keep `text`; its id, or None when it is larger than the organization's whole cap."""
    size = len(text)
    cap = org_cap()
    if size > cap:
        return None
    result_id = secrets.token_urlsafe(24)
    now = time.time()
    org_key = _org_key(org_id)
    await redis.zremrangebyscore(org_key, "-inf", now)
    members = await redis.zrange(org_key, 0, -1)
    used = sum(int(member.rsplit(b":", 1)[1]) for member in members)
    evict = []
    for member in members:  # oldest (soonest to expire) first
        if used + size <= cap:
            break
        evict.append(member)
        used -= int(member.rsplit(b":", 1)[1])
    pipe = redis.pipeline(transaction=False)
    if evict:
        pipe.zrem(org_key, *evict)
        pipe.delete(*[_key(member.rsplit(b":", 1)[0].decode()) for member in evict])
    pages = max(1, -(-size // page_chars))
    pipe.hset(
        _key(result_id),
        mapping={
            "org": org_id,
            "server": server_id,
            "credential": credential,
            "pages": pages,
            "page_chars": page_chars,
            "text": text,
        },
    )
    pipe.expire(_key(result_id), ttl)
    pipe.zadd(org_key, {f"{result_id}:{size}": now + ttl})
    pipe.expire(org_key, ttl)
    await pipe.execute()
    return result_id


def parse_uri(uri: str) -> tuple[str, int] | None:
    """(id, page) of a result URI; page 1 when none is given; None when malformed."""
    if not uri.startswith(URI_PREFIX):
        return None
    rest = uri[len(URI_PREFIX) :]
    result_id, _, query = rest.partition("?")
    page = 1
    if query:
        name, _, value = query.partition("=")
        if name != "page" or not value.isdigit():
            return None
        page = int(value)
    if not result_id or len(result_id) > 64 or page < 1:
        return None
    return result_id, page


async def read_page(redis, uri: str, *, server_id: int, credential: str) -> dict | None:
    """The resources/read result of one page; None for anything the caller may not read."""
    parsed = parse_uri(uri)
    if parsed is None:
        return None
    result_id, page = parsed
    entry = await redis.hgetall(_key(result_id))
    if (
        not entry
        or int(entry[b"server"]) != server_id
        or entry[b"credential"].decode() != credential
    ):
        return None
    pages, page_chars = int(entry[b"pages"]), int(entry[b"page_chars"])
    if page > pages:
        return None
    text = entry[b"text"].decode()
    chunk = text[(page - 1) * page_chars : page * page_chars]
    meta: dict[str, int | str] = {"getmcp/page": page, "getmcp/pages": pages}
    if page < pages:
        meta["getmcp/nextPage"] = page_uri(result_id, page + 1)
    return {
        "contents": [{"uri": uri, "mimeType": MIME_TYPE, "text": chunk, "_meta": meta}],
    }
