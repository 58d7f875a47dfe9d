"""`manage.py embed_tools`: what an upgrade that changes the tools' texts runs, so servers in
discovery mode get their vectors back without a publish."""

import io

import pytest
from django.core.management import CommandError, call_command

from servers import snapshot
from servers.definition import import_definition
from servers.models import ToolEmbedding
from servers.publishing import publish
from tests.servers.test_embeddings import TOOLS, definition, digests_of


def test_the_command_computes_the_vectors_a_server_lacks_and_then_nothing(org, unique):
    server = import_definition(definition(f"emb-cmd-{unique}"), org)
    publish(server)
    digests = digests_of(server)
    # As after an upgrade whose texts are new: no stored vector matches them.
    ToolEmbedding.objects.filter(digest__in=digests).delete()
    out = io.StringIO()
    call_command("embed_tools", server.slug, stdout=out)
    assert out.getvalue().strip() == f"{len(TOOLS)} tool vectors computed"
    assert ToolEmbedding.objects.filter(digest__in=digests).count() == len(TOOLS)
    assert len(snapshot._load(server.slug, "1").tool_vectors) == len(TOOLS)
    again = io.StringIO()
    call_command("embed_tools", server.slug, stdout=again)
    assert again.getvalue().strip() == "0 tool vectors computed"


def test_an_unknown_slug_is_an_error_not_a_silent_nothing(db):
    with pytest.raises(CommandError, match="no such server: nope-none"):
        call_command("embed_tools", "nope-none")
