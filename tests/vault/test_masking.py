"""Secret masking: one module, any letter case, percent-encoded and base64 forms."""

import base64
from urllib.parse import quote, quote_plus

import pytest

from vault.masking import MASK, Masker

SECRET = "Sup3r/Secret+Value=Host"


@pytest.mark.parametrize(
    "form",
    [
        SECRET,
        SECRET.lower(),
        SECRET.upper(),
        quote(SECRET, safe=""),
        quote(SECRET, safe="").lower(),
        quote_plus(SECRET),
        base64.b64encode(SECRET.encode()).decode(),
        base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("="),
    ],
    ids=["as-is", "lower", "upper", "percent", "percent-lower-hex", "plus", "b64", "b64url"],
)
def test_every_form_of_a_secret_is_masked(form):
    assert Masker([SECRET]).mask(f"error at <{form}> here") == f"error at <{MASK}> here"


def test_a_host_that_came_back_lower_cased_is_masked():
    masker = Masker(["Internal-Billing.Corp"])
    assert masker.mask("could not connect to internal-billing.corp:443") == (
        f"could not connect to {MASK}:443"
    )


def test_short_values_are_left_alone():
    assert Masker(["ab"]).mask("about abba") == "about abba"


def test_the_upstream_relay_masks_through_the_same_module():
    from servers.upstream.connection import Upstream

    upstream = Upstream(url="https://x.example/mcp", secret_values=("Tok3n-VALUE",))
    assert upstream.mask("refused tok3n-value") == f"refused {MASK}"
