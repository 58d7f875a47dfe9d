"""Ending the MCP sessions a set of credentials opened, from outside the endpoint.

A session's hash records the credential that made it (`cred`: `key:<id>` or `grant:<id>`,
gateway/pipeline/caller.py `ident`), and every server keeps the set of its session ids, so the
sessions of a person's keys and grants on one organization's servers are found without a scan.
Ending one is what the endpoint's own end does (gateway/endpoint/sessions.py `end`: the hash,
its subscriptions and its place in the server's set go, every process's state mirror forgets
it), plus a wake-up with `keys.SESSION_ENDED` on the session's channel: each open stream of it,
on whichever web process holds it, checks the session at once and closes (gateway/endpoint/
streams.py), rather than at its next keep-alive turn. Streams without a session (2026-07-28
`subscriptions/listen`) are told on their credential's channel (`keys.credential_ended`) and
check the credential at once (gateway/endpoint/listen.py).

Best effort, like every Redis side effect of a change made durable in Postgres: the credential
is refused on its next request anyway (it is suspended or revoked), so a session left behind by
a Redis outage can serve nothing; its stream ends at the first keep-alive once Redis is back.
"""

from typing import cast

from infra import keys as rkeys
from infra.redis import publish, sync_client

from . import state_events
from .outages import best_effort


def end_sessions_of(*, server_ids, credentials: set[str]) -> int:
    """End every session on these servers opened by one of these credential idents; returns how
    many were ended."""
    if not credentials:
        return 0
    ended = best_effort(_end, list(server_ids), credentials)
    return ended or 0


def _end(server_ids: list[int], credentials: set[str]) -> int:
    redis = sync_client()
    # Session-less streams (2026-07-28 `subscriptions/listen`) listen on their credential's
    # channel: they check it at once (gateway/endpoint/listen.py).
    pipe = redis.pipeline(transaction=False)
    for ident in credentials:
        publish(pipe, rkeys.credential_ended(ident), b"1")
    pipe.execute()
    wanted = {c.encode() for c in credentials}
    ended: list[tuple[int, str]] = []
    for server_id in server_ids:
        members = cast(set[bytes], redis.smembers(rkeys.server_sessions(server_id)))
        sids = [s.decode() for s in members]
        if not sids:
            continue
        pipe = redis.pipeline(transaction=False)
        for sid in sids:
            pipe.hget(rkeys.session(sid), "cred")
        for sid, cred in zip(sids, pipe.execute(), strict=True):
            if cred in wanted:
                ended.append((server_id, sid))
    if not ended:
        return 0
    pipe = redis.pipeline(transaction=False)
    for _server_id, sid in ended:
        pipe.smembers(rkeys.session_subscriptions(sid))
    subscriptions = pipe.execute()
    pipe = redis.pipeline(transaction=False)
    for (server_id, sid), uris in zip(ended, subscriptions, strict=True):
        for uri in uris:
            pipe.srem(rkeys.resource_subscribers(server_id, uri.decode()), sid)
        pipe.srem(rkeys.server_sessions(server_id), sid)
        pipe.delete(rkeys.session(sid), rkeys.session_subscriptions(sid))
        state_events.publish(pipe, state_events.SESSION, sid)
        publish(pipe, rkeys.session_wake(sid), rkeys.SESSION_ENDED)
    try:
        pipe.execute()
    finally:
        for _server_id, sid in ended:
            state_events.forget_locally(state_events.SESSION, sid)
    return len(ended)
