"""The policy a host puts on a view: only what the view declared, nothing else."""

from servers.views.policy import content_security_policy


def directives(policy: str) -> dict[str, str]:
    return dict(part.split(" ", 1) for part in policy.split("; "))


def test_a_view_that_declares_nothing_reaches_nothing():
    found = directives(content_security_policy({}))
    assert found["default-src"] == "'none'"
    assert found["connect-src"] == "'none'"
    assert found["frame-src"] == "'none'"
    assert found["base-uri"] == "'none'"
    assert found["object-src"] == "'none'"
    assert found["script-src"] == "'unsafe-inline'"


def test_declared_origins_are_allowed_where_the_extension_maps_them():
    found = directives(
        content_security_policy(
            {
                "connectDomains": ["https://api.example.com", "wss://live.example.com"],
                "resourceDomains": ["https://*.cdn.example.com"],
                "frameDomains": ["https://www.youtube.com"],
            }
        )
    )
    assert found["connect-src"] == "https://api.example.com wss://live.example.com"
    for directive in ("script-src", "style-src", "img-src", "font-src", "media-src"):
        assert found[directive].endswith("https://*.cdn.example.com")
    assert found["frame-src"] == "https://www.youtube.com"


def test_an_entry_that_would_add_a_directive_or_a_keyword_is_dropped():
    policy = content_security_policy(
        {
            "connectDomains": ["https://ok.example.com", "https://x.com; script-src *", "*"],
            "resourceDomains": ["'unsafe-eval'", 7],
            "baseUriDomains": "https://not-a-list.example.com",
        }
    )
    found = directives(policy)
    assert found["connect-src"] == "https://ok.example.com"
    assert found["base-uri"] == "'none'"
    assert "unsafe-eval" not in policy and policy.count("script-src") == 1
