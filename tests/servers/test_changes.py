"""What happens around a definition change or a deleted server, however it is made."""

from accounts.models import ApiKey
from infra import keys as rkeys
from infra.redis import sync_client
from servers.definition import import_definition


def definition(slug):
    return {"slug": slug, "name": slug, "tools": []}


def test_deleting_a_server_revokes_keys_limited_to_it_alone(
    org, django_capture_on_commit_callbacks
):
    doomed = import_definition(definition("doomed"), org)
    other = import_definition(definition("other"), org)
    only_doomed, _ = ApiKey.issue(org, "only doomed", servers=[doomed])
    both, _ = ApiKey.issue(org, "both", servers=[doomed, other])
    everything, _ = ApiKey.issue(org, "everything")
    with django_capture_on_commit_callbacks(execute=True):
        doomed.delete()
    only_doomed.refresh_from_db()
    both.refresh_from_db()
    everything.refresh_from_db()
    assert only_doomed.revoked_at is not None
    assert both.revoked_at is None and [s.slug for s in both.servers.all()] == ["other"]
    assert everything.revoked_at is None


def test_deleting_a_server_ends_its_sessions(org, django_capture_on_commit_callbacks):
    server = import_definition(definition("with-sessions"), org)
    client = sync_client()
    client.hset(rkeys.session("s1"), mapping={"srv": server.pk})
    client.sadd(rkeys.server_sessions(server.pk), "s1")
    with django_capture_on_commit_callbacks(execute=True):
        server.delete()
    assert not client.exists(rkeys.session("s1"))
    assert not client.exists(rkeys.server_sessions(server.pk))
