"""scim/filters.py: the filters Okta's and Entra ID's provisioning send, and RFC 7644's grammar
around them, evaluated on resources as dicts."""

import pytest

from scim.filters import FilterError, compile_filter, equality

JANE = {
    "userName": "Jane@Example.com",
    "externalId": "00uA",
    "active": True,
    "name": {"givenName": "Jane", "familyName": "Doe"},
    "emails": [
        {"value": "jane@example.com", "type": "work", "primary": True},
        {"value": "jd@home.example", "type": "home"},
    ],
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Platform"},
}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ('userName eq "jane@example.com"', True),  # caseExact=false
        ('externalId eq "00ua"', False),  # externalId is case-exact
        ('externalId eq "00uA"', True),
        ("active eq true", True),
        ('name.givenName sw "Ja" and name.familyName ew "oe"', True),
        ('userName co "example" and not (active eq false)', True),
        ('emails[type eq "work"].value eq "jane@example.com"', True),
        ('emails[type eq "home"].value eq "jane@example.com"', False),
        ('emails[type eq "work" and value co "jane"]', True),
        ('emails eq "jd@home.example"', True),
        ("name.middleName pr", False),
        ("emails pr", True),
        ('userName eq "x" or externalId eq "00uA"', True),
        ('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "jane@example.com"', True),
        (
            'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "platform"',
            True,
        ),
        ('(userName eq "x" or userName eq "y") and active eq true', False),
    ],
)
def test_a_filter_matches_as_rfc_7644_says(text, matches):
    assert compile_filter(text)(JANE) is matches


@pytest.mark.parametrize(
    "text",
    ['userName eq "open', "userName eq", 'userName like "x"', "(active eq true", "", 'a eq "b" c'],
)
def test_a_malformed_filter_is_refused(text):
    with pytest.raises(FilterError):
        compile_filter(text)


def test_the_lookup_before_a_create_is_recognised_as_one_equality():
    assert equality('userName eq "a@b.c"') == ("username", "a@b.c")
    assert equality('externalId eq "x" and active eq true') is None
    assert equality('emails[type eq "work"].value eq "a@b.c"') is None
