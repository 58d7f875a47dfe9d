"""Tool embeddings are computed when a server is published or its tools change, off the request
path: inline after the commit in embedded mode (Celery eager), on a real Celery worker when
REDIS_URL is set; the snapshot a process loads carries them."""

import numpy as np
import pytest

from getmcp.celery import app as celery_app
from servers import embedding_jobs, embeddings, snapshot
from servers.definition import import_definition
from servers.discovery import embedding
from servers.discovery.vectors import embed_documents, tool_document
from servers.models import ToolEmbedding
from servers.publishing import publish
from tests.celery_workers import running_workers
from tests.waiting import wait_until

TOOLS = [
    ("list_invoices", "List the invoices of a customer."),
    ("send_invoice", "Email an invoice to its customer."),
    ("delete_invoice", "Delete an invoice for good."),
    ("count_invoices", "How many invoices there are."),
]


def definition(slug: str, mode: str = "on", tools=TOOLS) -> dict:
    return {
        "slug": slug,
        "name": slug,
        "agents": {"discovery": {"mode": mode}},
        "tools": [
            {
                "name": name,
                "description": description,
                "inputSchema": {"type": "object"},
                "config": {"content": [{"type": "text", "text": "ok"}]},
            }
            for name, description in tools
        ],
    }


def digests_of(server) -> set[str]:
    loaded = snapshot.compile_definition(
        snapshot.definition_for(server), server_id=server.pk, organization_id=0, generation="t"
    )
    return {embedding.digest(tool_document(wire)) for wire in loaded.tool_list}


@pytest.fixture
def eager():
    """Embedded mode: Celery runs a task in the process that queues it."""
    before = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = before


def test_publishing_computes_the_embeddings_and_the_loaded_snapshot_carries_them(
    org, unique, eager, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        server = import_definition(definition(f"emb-{unique}"), org)
        publish(server)
    digests = digests_of(server)
    assert ToolEmbedding.objects.filter(digest__in=digests).count() == len(TOOLS)
    loaded = snapshot._load(server.slug, "1")
    assert len(loaded.tool_vectors) == len(TOOLS)
    names, matrix = loaded.tool_vectors.rows([name for name, _ in TOOLS])
    assert names == [name for name, _ in TOOLS]
    expected = embed_documents([tool_document(loaded.tools["send_invoice"].wire)])[0]
    assert float(matrix[1] @ expected) > 0.9999
    # Republishing what is already embedded computes nothing.
    assert embeddings.embed_server(server.pk) == 0


def test_a_changed_tool_gets_a_new_vector_and_the_unchanged_ones_keep_theirs(
    org, unique, eager, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        server = import_definition(definition(f"emb-{unique}"), org)
        publish(server)
    before = digests_of(server)
    tool = server.tools.get(name="count_invoices")
    tool.description = "Count the invoices that are still unpaid."
    with django_capture_on_commit_callbacks(execute=True):
        tool.save()
        publish(server)
    after = digests_of(server)
    assert len(after - before) == 1
    assert ToolEmbedding.objects.filter(digest__in=after).count() == len(TOOLS)


def test_a_server_without_discovery_is_not_embedded(
    org, unique, eager, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        server = import_definition(definition(f"emb-{unique}", mode="off"), org)
        publish(server)
    assert not ToolEmbedding.objects.filter(digest__in=digests_of(server)).exists()
    assert len(snapshot._load(server.slug, "1").tool_vectors) == 0


def test_saving_many_tools_in_one_transaction_queues_one_job(
    org, unique, monkeypatch, django_capture_on_commit_callbacks
):
    queued = []
    monkeypatch.setattr(embedding_jobs, "_schedule", queued.append)
    many = [(f"tool_{i}", f"Tool number {i}.") for i in range(30)]
    with django_capture_on_commit_callbacks(execute=True):
        server = import_definition(definition(f"emb-{unique}", tools=many), org)
    assert queued == [server.pk]


@pytest.mark.django_db(transaction=True)
def test_with_redis_a_celery_worker_computes_them_after_the_publish(org, unique, tmp_path):
    assert not celery_app.conf.task_always_eager  # REDIS_URL is set: a real broker
    with running_workers(tmp_path) as start:
        start()
        server = import_definition(definition(f"emb-{unique}"), org)
        publish(server)
        digests = digests_of(server)
        wait_until(
            lambda: ToolEmbedding.objects.filter(digest__in=digests).count() >= len(TOOLS),
            timeout=120,
            interval=0.5,
            what="the worker to compute the embeddings",
        )
    rows = ToolEmbedding.objects.filter(digest__in=digests)
    vectors = [np.frombuffer(bytes(row.vector), dtype="<f4") for row in rows]
    assert all(abs(float(np.linalg.norm(v)) - 1) < 1e-4 for v in vectors)
