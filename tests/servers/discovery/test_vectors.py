"""What a tool's vector is computed from (servers/discovery/vectors.py): its short texts, and
their vectors' renormalised mean."""

import numpy as np
import pytest

from servers.discovery import embedding
from servers.discovery.vectors import action_phrase, embed_documents, tool_document, tool_texts


@pytest.mark.parametrize(
    ("name", "phrase"),
    [
        ("get_files_id", "get files"),
        ("get_files_id_content", "list files content"),
        ("post_files_content", "create files content"),
        ("put_files_id", "update files"),
        ("patch_users_id", "update users"),
        ("delete_files_id", "delete files"),
        ("deleteGuildBan", "delete guild ban"),
        ("conversations_kick", "conversations kick"),
        ("", ""),
    ],
)
def test_a_name_made_of_method_and_path_reads_as_what_it_does(name, phrase):
    assert action_phrase(name) == phrase


def test_a_tool_with_a_title_and_a_summary_has_each_as_a_text_without_repeats():
    wire = {
        "name": "get_files_id_content",
        "title": "Download file",
        "description": "Download file\n\nReturns the contents of a file in binary format.",
    }
    assert tool_texts(wire) == (
        "get files id content. Download file",
        "list files content",
        "Download file",
    )


def test_a_description_that_only_names_method_and_path_is_not_a_text_of_its_own():
    wire = {"name": "delete_guild_ban", "description": "DELETE /guilds/{guild_id}/bans/{user_id}"}
    assert tool_texts(wire) == (
        "delete guild ban. DELETE /guilds/{guild_id}/bans/{user_id}",
        "delete guild ban",
    )


def test_a_tool_with_nothing_but_a_name_has_one_text():
    assert tool_texts({"name": "ping"}) == ("ping",)
    assert tool_document({"name": "ping"}) == "ping"


def test_a_documents_vector_is_the_renormalised_mean_of_its_lines_vectors():
    wire = {"name": "conversations_kick", "description": "Removes a user from a conversation."}
    lines = list(tool_texts(wire))
    assert len(lines) == 3
    (vector,) = embed_documents([tool_document(wire)])
    mean = embedding.embed(lines).mean(axis=0)
    assert np.allclose(vector, mean / np.linalg.norm(mean), atol=1e-5)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_documents_embedded_together_get_the_vectors_they_get_alone():
    documents = [
        tool_document({"name": "list_pins", "description": "GET /channels/{channel_id}/pins"}),
        tool_document({"name": "getUser", "title": "Get user", "description": "A profile."}),
        "ping",
    ]
    together = embed_documents(documents)
    for document, vector in zip(documents, together, strict=True):
        assert float(vector @ embed_documents([document])[0]) > 0.9999
    assert embed_documents([]).shape == (0, embedding.DIMENSIONS)
