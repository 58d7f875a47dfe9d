"""scim/patch.py: PATCH operations in the shapes Okta and Entra ID send them."""

import pytest

from scim.patch import PATCH_SCHEMA, PatchError, apply_patch


def patch(*operations):
    return {"schemas": [PATCH_SCHEMA], "Operations": list(operations)}


USER = {
    "userName": "a@b.c",
    "active": True,
    "name": {"givenName": "A"},
    "emails": [{"value": "a@b.c", "type": "work"}],
}


def test_okta_deactivates_with_a_path_less_value():
    after = apply_patch(USER, patch({"op": "replace", "value": {"active": False}}))
    assert after["active"] is False
    assert USER["active"] is True  # the input is left as it was


def test_entra_deactivates_with_a_capitalized_op_and_a_path():
    assert (
        apply_patch(USER, patch({"op": "Replace", "path": "active", "value": "False"}))["active"]
        == "False"
    )  # coerced to a boolean by scim/users.py


def test_a_value_path_sets_the_matching_element_or_adds_one():
    changed = apply_patch(
        USER, patch({"op": "replace", "path": 'emails[type eq "work"].value', "value": "n@b.c"})
    )
    assert changed["emails"] == [{"value": "n@b.c", "type": "work"}]
    added = apply_patch(
        USER, patch({"op": "add", "path": 'emails[type eq "home"].value', "value": "h@b.c"})
    )
    assert {"type": "home", "value": "h@b.c"} in added["emails"]


def test_a_sub_attribute_path_and_a_dotted_name_inside_a_value():
    after = apply_patch(
        USER,
        patch(
            {"op": "replace", "path": "name.familyName", "value": "B"},
            {"op": "replace", "value": {"name.givenName": "Z"}},
        ),
    )
    assert after["name"] == {"givenName": "Z", "familyName": "B"}


def test_group_members_are_added_and_removed_in_both_shapes():
    group = {"displayName": "G", "members": [{"value": "1"}]}
    added = apply_patch(
        group, patch({"op": "add", "path": "members", "value": [{"value": "2"}, {"value": "1"}]})
    )
    assert added["members"] == [{"value": "1"}, {"value": "2"}]
    okta = apply_patch(added, patch({"op": "remove", "path": 'members[value eq "1"]'}))
    assert okta["members"] == [{"value": "2"}]
    entra = apply_patch(
        added, patch({"op": "Remove", "path": "members", "value": [{"value": "2"}]})
    )
    assert entra["members"] == [{"value": "1"}]


@pytest.mark.parametrize(
    "body",
    [
        {"Operations": [{"op": "replace", "value": {}}]},  # no schema
        patch(),
        patch({"op": "move", "path": "active"}),
        patch({"op": "remove"}),
        patch({"op": "replace", "value": "not an object"}),
    ],
)
def test_a_malformed_patch_is_refused(body):
    with pytest.raises(PatchError):
        apply_patch(USER, body)
