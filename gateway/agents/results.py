"""Whole results kept in Redis while a truncated copy goes to the client, read back in pages.

Key `mcp:results:<id>` (hash: org, server, credential, pages, page size, text; TTL the server's
setting) and, per organization, `mcp:results:org:<org>` (sorted set of "<id>:<chars>" scored by
expiry), which keeps the organization under RESULT_STORE_MAX_CHARS_PER_ORG: expired entries
are dropped, then the oldest evicted; a single result larger than the cap is not kept at all
(the truncated answer says so). Organizations cost nothing to make, so the paying account behind
them (accounts/billing.py) has a cap of its own over all of them,
RESULT_STORE_MAX_CHARS_PER_OWNER, kept the same way in `mcp:results:owner:<owner>` (members
"<org>:<id>:<chars>"): what Redis holds grows with people, not with organizations. Ids are 192
random bits, and a read must come from the same server and credential, so a link is worth
nothing to anyone else.
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
    return settings.RESULT_STORE_MAX_CHARS_PER_ORG


def owner_cap() -> int:
    return settings.RESULT_STORE_MAX_CHARS_PER_OWNER


def _chars(member: bytes) -> int:
    return int(member.rsplit(b":", 1)[1])


async def _oldest_over(
    redis, key: str, size: int, cap: int, now: float, gone: frozenset[bytes] = frozenset()
) -> list[bytes]:
    """The members of `key` to evict, oldest (soonest to expire) first, so `size` more fits
    (members in `gone` are being evicted already)."""
    await redis.zremrangebyscore(key, "-inf", now)
    members = [member for member in await redis.zrange(key, 0, -1) if member not in gone]
    used = sum(_chars(member) for member in members)
    evict = []
    for member in members:
        if used + size <= cap:
            break
        evict.append(member)
        used -= _chars(member)
    return evict


def page_uri(result_id: str, page: int) -> str:
    return f"{URI_PREFIX}{result_id}?page={page}"


async def store(
    redis,
    *,
    org_id: int,
    server_id: int,
    credential: str,
    text: str,
    page_chars: int,
    ttl: int,
    owner_id: int | None = None,
) -> str | None:
    """Keep `text`; its id, or None when it is larger than a whole cap (the organization's, or
    its paying account's when it has one)."""
    size = len(text)
    if size > org_cap() or (owner_id is not None and size > owner_cap()):
        return None
    result_id = secrets.token_urlsafe(24)
    now = time.time()
    org_key = _org_key(org_id)
    # Evicted as (organization, "<id>:<chars>"): an owner's eviction may reach any of its orgs.
    evict: list[tuple[int, bytes]] = [
        (org_id, member) for member in await _oldest_over(redis, org_key, size, org_cap(), now)
    ]
    owner_key = keys.stored_results_of_owner(owner_id) if owner_id is not None else None
    owner_evict: list[bytes] = []
    if owner_key is not None:
        gone = frozenset(b"%d:%s" % (org, member) for org, member in evict)
        owner_evict.extend(gone)
        for member in await _oldest_over(redis, owner_key, size, owner_cap(), now, gone):
            owner_evict.append(member)
            of_org, _, rest = member.partition(b":")
            evict.append((int(of_org), rest))
    pipe = redis.pipeline(transaction=False)
    for org, member in evict:
        pipe.zrem(_org_key(org), member)
        pipe.delete(_key(member.rsplit(b":", 1)[0].decode()))
    if owner_key is not None and owner_evict:
        pipe.zrem(owner_key, *owner_evict)
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
    if owner_key is not None:
        pipe.zadd(owner_key, {f"{org_id}:{result_id}:{size}": now + ttl})
        pipe.expire(owner_key, ttl)
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
