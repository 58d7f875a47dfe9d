from django.test import modify_settings

CSP = "dashboard.csp.ContentSecurityPolicyMiddleware"


@modify_settings(MIDDLEWARE={"append": CSP})
def test_dashboard_pages_carry_a_strict_content_security_policy(member_client, server):
    response = member_client.get(f"/servers/{server.slug}/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "style-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy


@modify_settings(MIDDLEWARE={"append": CSP})
def test_the_login_page_has_it_too(client, db):
    assert "default-src 'self'" in client.get("/login/")["Content-Security-Policy"]


@modify_settings(MIDDLEWARE={"append": CSP})
def test_json_answers_have_none_and_the_admin_a_policy_that_still_forbids_framing(
    member_client,
):
    response = member_client.post("/schema/check/", "{}", content_type="application/json")
    assert "Content-Security-Policy" not in response
    admin = member_client.get("/admin/login/")
    assert admin["Content-Security-Policy"] == (
        "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
    )
    assert admin["X-Frame-Options"] == "DENY"
    assert admin["X-Content-Type-Options"] == "nosniff"


def test_no_template_has_inline_script_or_style():
    """The policy forbids inline code, so a page that used some would silently break."""
    import re
    from pathlib import Path

    from django.conf import settings

    for path in (Path(settings.BASE_DIR) / "templates").rglob("*.html"):
        text = path.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)", text), path
        assert "<style" not in text, path
        assert not re.search(r"\son[a-z]+=", text), path
        assert ' style="' not in text, path
