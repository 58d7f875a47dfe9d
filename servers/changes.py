"""After a definition or key changes: bump generations so every process drops its cached copy,
and tell the open sessions of that server that a list changed.

Everything in Redis runs after the transaction commits, so no process can re-cache the old rows,
and only as a best effort: while Redis is down the change still succeeds, and the `Change` row
written in the same transaction (servers.invalidation) reaches every process once it is back.
"""

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import cast

import orjson
from django.conf import settings
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_delete, pre_save
from django.dispatch import receiver

from accounts.models import ApiKey
from infra import keys as rkeys
from infra import session_streams
from infra.redis import publish, sync_client

from . import invalidation, state_events
from .models import Change, Prompt, Resource, ResourceTemplate, Server, ServerVersion, Tool
from .outages import best_effort

LIST_CHANGED = {
    Tool: ("notifications/tools/list_changed",),
    Prompt: ("notifications/prompts/list_changed",),
    Resource: ("notifications/resources/list_changed",),
    ResourceTemplate: ("notifications/resources/list_changed",),
    ServerVersion: (
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    ),
}


def bump_server(slug: str) -> None:
    state_events.bump(rkeys.server_generation(slug), state_events.SERVER, slug)


def bump_key(digest: str) -> None:
    state_events.bump(rkeys.key_generation(digest), state_events.KEY, digest)


def _live_sessions(client, members_key: str) -> list[str]:
    """Members of a session set whose session still exists; expired ones are pruned."""
    sids = [raw.decode() for raw in client.smembers(members_key)]
    if not sids:
        return []
    pipe = client.pipeline(transaction=False)
    for sid in sids:
        pipe.exists(rkeys.session(sid))
    alive = pipe.execute()
    dead = [sid for sid, ok in zip(sids, alive, strict=True) if not ok]
    if dead:
        client.srem(members_key, *dead)
    return [sid for sid, ok in zip(sids, alive, strict=True) if ok]


def _queue_on_get_streams(pipe, sids, events) -> None:
    for sid in sids:
        for event in events:
            session_streams.append(
                pipe,
                sid,
                "get",
                {"d": event},
                maxlen=1000,
                ttl_seconds=settings.MCP_SESSION_IDLE_SECONDS,
            )


def notify_sessions(server_id: int, methods, params: dict | None = None) -> None:
    """Queue notifications on the GET stream of every open session of a server."""
    client = sync_client()
    sids = _live_sessions(client, rkeys.server_sessions(server_id))
    events = [
        orjson.dumps({"jsonrpc": "2.0", "method": m, **({"params": params} if params else {})})
        for m in methods
    ]
    pipe = client.pipeline(transaction=False)
    _queue_on_get_streams(pipe, sids, events)
    for method in methods:
        publish(
            pipe,
            rkeys.server_events(server_id),
            orjson.dumps({"method": method, "params": params or {}}),
        )
    pipe.execute()


def notify_resource_updated(server_id: int, uri: str) -> None:
    client = sync_client()
    event = orjson.dumps(
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}
    )
    sids = _live_sessions(client, rkeys.resource_subscribers(server_id, uri))
    pipe = client.pipeline(transaction=False)
    _queue_on_get_streams(pipe, sids, [event])
    publish(
        pipe,
        rkeys.server_events(server_id),
        orjson.dumps({"method": "notifications/resources/updated", "params": {"uri": uri}}),
    )
    pipe.execute()


@receiver(pre_save, sender=Server)
def _remember_old_slug(sender, instance, **kwargs) -> None:
    if instance.pk:
        instance._old_slug = (
            Server.objects.filter(pk=instance.pk).values_list("slug", flat=True).first()
        )


@receiver(pre_delete, sender=Server)
def _server_going(sender, instance, **kwargs) -> None:
    # However the server is deleted (dashboard, API, admin, shell), keys limited to it alone
    # must not widen to every server, and its open sessions (and their streams) must end.
    ApiKey.revoke_keys_only_for(instance)
    server_id = instance.pk
    transaction.on_commit(lambda: best_effort(end_sessions, server_id))


def end_sessions(server_id: int) -> None:
    client = sync_client()
    members = rkeys.server_sessions(server_id)
    sids = [cast(bytes, raw).decode() for raw in client.smembers(members)]
    pipe = client.pipeline(transaction=False)
    for sid in sids:
        pipe.delete(rkeys.session(sid))
        state_events.publish(pipe, state_events.SESSION, sid)
    pipe.delete(members)
    try:
        pipe.execute()
    finally:
        for sid in sids:
            state_events.forget_locally(state_events.SESSION, sid)


@receiver(post_save, sender=Server)
@receiver(post_delete, sender=Server)
def _server_changed(sender, instance, using: str = "default", **kwargs) -> None:
    slugs = {instance.slug, getattr(instance, "_old_slug", None)} - {None}
    for slug in slugs:
        invalidation.record(Change.SERVER, slug, using)
    transaction.on_commit(lambda: _bump_servers(slugs))


def _bump_servers(slugs: Iterable[str]) -> None:
    for slug in slugs:
        bump_server(slug)


# Inside `announced_once()`: the keys whose after-commit work is already registered.
_batch: ContextVar[set | None] = ContextVar("changes_batch", default=None)


@contextmanager
def announced_once() -> Iterator[None]:
    """Around a bulk change (servers.bulk): each server is bumped and its list change announced
    once after the commit, however many of its parts change, instead of once per part. Put it
    inside the transaction: if that rolls back, nothing is announced at all."""
    token = _batch.set(set())
    try:
        yield
    finally:
        _batch.reset(token)


def _on_commit(key: tuple, callback, using: str) -> None:
    seen = _batch.get()
    if seen is not None:
        if key in seen:
            return
        seen.add(key)
    transaction.on_commit(callback, using=using)


def _part_changed(sender, instance, using: str = "default", **kwargs) -> None:
    server_id = instance.server_id
    try:
        slug = instance.server.slug
    except Server.DoesNotExist:
        return
    uri = getattr(instance, "uri", None) if sender is Resource else None
    updated = uri if uri and not kwargs.get("created", False) else None
    invalidation.record(Change.SERVER, slug, using)

    def after_commit() -> None:
        bump_server(slug)
        best_effort(notify_sessions, server_id, LIST_CHANGED[sender])
        if updated:
            best_effort(notify_resource_updated, server_id, updated)

    _on_commit(("part", sender.__name__, server_id, updated), after_commit, using)


for _model in LIST_CHANGED:
    post_save.connect(_part_changed, sender=_model, dispatch_uid=f"changed-{_model.__name__}")
    post_delete.connect(_part_changed, sender=_model, dispatch_uid=f"deleted-{_model.__name__}")


@receiver(post_save, sender=ApiKey)
@receiver(post_delete, sender=ApiKey)
def _key_changed(sender, instance, using: str = "default", **kwargs) -> None:
    digest = instance.digest
    invalidation.record(Change.KEY, digest, using)
    transaction.on_commit(lambda: bump_key(digest))


@receiver(m2m_changed, sender=ApiKey.servers.through)
def _key_servers_changed(sender, instance, action, using: str = "default", **kwargs) -> None:
    if action.startswith("post_") and isinstance(instance, ApiKey):
        digest = instance.digest
        invalidation.record(Change.KEY, digest, using)
        transaction.on_commit(lambda: bump_key(digest))
