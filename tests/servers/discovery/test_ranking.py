"""Safe ranking and deterministic ties (servers/discovery/ranking.py, hybrid.py), on BM25 alone and
on the hybrid with the real model."""

import random

import pytest

from servers.discovery import embedding, ranking
from servers.discovery.hybrid import HybridIndex
from servers.discovery.vectors import ToolVectors, embed_documents, tool_document

READ_ONLY = {"readOnlyHint": True}
WRITES = {"readOnlyHint": False, "destructiveHint": False}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}


def tool(name, description, annotations):
    return {"name": name, "description": description, "annotations": annotations}


TICKETS = [
    tool("get_ticket", "Get a ticket.", READ_ONLY),
    tool("create_ticket", "Create a ticket.", WRITES),
    tool("delete_ticket", "Delete a ticket.", DESTRUCTIVE),
    tool("count_ticket", "Count tickets.", READ_ONLY),
    tool("update_ticket", "Update a ticket.", WRITES),
    tool("list_ticket", "List tickets.", READ_ONLY),
]
USERS = [
    tool("deleteUser", "Delete a user and all their data.", DESTRUCTIVE),
    tool("suspendUser", "Suspend a user so they can no longer sign in.", WRITES),
    tool("getUser", "Get a user's profile.", READ_ONLY),
    tool("removeTeamMember", "Remove a member from a team.", DESTRUCTIVE),
    tool("addTeamMember", "Add a member to a team.", WRITES),
    tool("listTeamMembers", "List the members of a team.", READ_ONLY),
    tool("createUser", "Create a user.", WRITES),
]


def names(found):
    return [c.name for c in found]


def with_vectors(tools):
    matrix = embed_documents([tool_document(t) for t in tools])
    return HybridIndex(tools, ToolVectors({t["name"]: matrix[i] for i, t in enumerate(tools)}))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("how many open tickets", ranking.READ),
        ("who got banned from the server?", ranking.READ),
        ("show the pinned messages", ranking.READ),
        ("list users", ranking.READ),
        ("delete the ticket", ranking.WRITE),
        ("kick someone off the team", ranking.WRITE),
        ("get rid of the old invoices", ranking.WRITE),
        ("tickets", ranking.UNKNOWN),
    ],
)
def test_the_intent_of_a_request_is_read_from_its_words(query, expected):
    assert ranking.intent(query) == expected


def test_equal_scores_put_the_non_destructive_tool_first_then_the_read_only_one_then_the_name():
    # Equal BM25 scores share a rank, so the fused scores tie and the rules decide.
    found = ranking.fuse(
        [("b_delete", 1.0), ("a_update", 1.0), ("c_read", 1.0), ("d_other", 0.5)],
        [],
        {"b_delete": (False, True), "a_update": (False, False), "c_read": (True, False)},
        ranking.UNKNOWN,
    )
    assert names(found) == ["c_read", "a_update", "b_delete", "d_other"]
    assert [c.lexical_rank for c in found] == [1, 1, 1, 4]
    tied = ranking.order(
        [
            ranking.Candidate("b_delete", 0.5, destructive=True),
            ranking.Candidate("z_update", 0.5),
            ranking.Candidate("y_read", 0.5, read_only=True),
            ranking.Candidate("a_update", 0.5),
        ],
        ranking.UNKNOWN,
    )
    assert names(tied) == ["y_read", "a_update", "z_update", "b_delete"]


def test_a_destructive_tool_never_ranks_above_a_non_destructive_one_with_the_same_words():
    twins = [
        tool("purge_cache", "Clear the cache entries.", DESTRUCTIVE),
        tool("flush_cache", "Clear the cache entries.", WRITES),
    ]
    for tools in (TICKETS + twins, twins[::-1] + TICKETS):
        found = HybridIndex(tools).search("clear the cache")
        assert names(found) == ["flush_cache", "purge_cache"]
        assert found[0].score == found[1].score


def test_a_read_request_never_gets_a_destructive_tool_above_a_non_destructive_candidate():
    index = HybridIndex(TICKETS)
    found = index.search("show the ticket", limit=10)
    destructive_at = [i for i, c in enumerate(found) if c.destructive]
    assert destructive_at == [len(found) - 1]
    assert found[0].read_only and found[0].boosted


def test_a_read_request_whose_only_candidate_is_destructive_still_gets_it_last_not_hidden():
    """Safe ranking orders, it does not filter: an agent that asks to see the pins of a room
    where only a destructive tool mentions pins is shown that tool, after every safe one."""
    tools = TICKETS + [
        tool("delete_pin", "Unpin a message from a channel.", DESTRUCTIVE),
        tool("get_channel", "Get a channel.", READ_ONLY),
    ]
    found = HybridIndex(tools).search("show the pins of this channel", limit=5)
    assert names(found) == ["get_channel", "delete_pin"]
    only = HybridIndex(tools).search("show the pins", limit=5)
    assert names(only) == ["delete_pin"]
    assert only[0].destructive and not only[0].boosted


def test_the_same_tools_in_any_definition_order_give_the_same_answer_ties_by_the_rules():
    same = "Works on one ticket."
    tools = [
        tool("delete_ticket", same, DESTRUCTIVE),
        tool("create_ticket", same, WRITES),
        tool("count_ticket", same, READ_ONLY),
        tool("close_ticket", same, WRITES),
        tool("read_ticket", same, READ_ONLY),
    ]
    answers = set()
    for seed in range(6):
        shuffled = tools + USERS
        random.Random(seed).shuffle(shuffled)
        answers.add(tuple((c.name, c.score) for c in HybridIndex(shuffled).search("ticket", 10)))
    assert len(answers) == 1
    (answer,) = answers
    assert len({score for _, score in answer}) == 1  # five equal scores: the rules decide
    assert [name for name, _ in answer] == [
        "count_ticket",
        "read_ticket",
        "close_ticket",
        "create_ticket",
        "delete_ticket",
    ]


def test_the_hybrid_ranks_count_first_for_how_many_open_tickets():
    index = with_vectors(TICKETS)
    query = "how many open tickets"
    found = index.search(query, 3, embedding.embed_query(query))
    assert found[0].name == "count_ticket"
    assert not any(c.destructive for c in found)


def test_the_hybrid_finds_the_issue_s_paraphrases_and_keeps_delete_below_suspend():
    index = with_vectors(USERS)
    kick = index.search(
        "kick someone off the team", 3, embedding.embed_query("kick someone off the team")
    )
    assert kick[0].name == "removeTeamMember"
    ban_query = "ban a user from logging in"
    ban = names(index.search(ban_query, 7, embedding.embed_query(ban_query)))
    assert ban[0] == "suspendUser"
    assert ban.index("suspendUser") < ban.index("deleteUser")


def test_a_query_with_nothing_to_do_with_any_tool_answers_nothing():
    index = with_vectors(TICKETS)
    assert index.search("zebra", 5, embedding.embed_query("zebra")) == []
