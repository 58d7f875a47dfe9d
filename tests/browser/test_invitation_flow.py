"""Membership by consent, in a real browser: an owner invites an address that has no account;
the invitee opens the emailed link, signs up with that address, accepts, and lands in the
organization, whose members page then lists them; their personal organization stays their own."""

import re

from playwright.sync_api import expect

from accounts.models import Membership, User

PASSWORD = "a long browser passphrase"
LINK = re.compile(r"https?://[^/\s]+(/invitations/[^/\s]+/)")


def emailed_link(server, email: str) -> str:
    """The console e-mail backend writes to the live server's output (its log file)."""
    text = server.log_path.read_text(errors="replace")
    start = text.rindex(f"To: {email}")
    return LINK.search(text, start).group(1)


def test_an_invitee_signs_up_from_the_link_and_accepts(
    new_page, shoot, db_call, unique, dashboard_server
):
    owner = new_page()
    owner.goto("/signup/")
    owner.fill("#id_email", f"owner-{unique}@example.com")
    owner.fill("#id_password", PASSWORD)
    owner.click("button[type=submit]")
    expect(owner).to_have_url(re.compile(r"/servers/$"))

    invitee_email = f"bob-{unique}@example.com"
    owner.goto("/organization/members/")
    owner.fill("#id_email", invitee_email)
    owner.select_option("#id_role", "member")
    owner.click("button:has-text('Send invitation')")
    pending = owner.get_by_role("table", name="Pending invitations")
    expect(pending.locator("tr", has_text=invitee_email)).to_be_visible()
    expect(pending.get_by_role("button", name=re.compile("Revoke"))).to_be_visible()
    shoot(owner, "invite-01-members-pending")
    assert not db_call(User.objects.filter(email=invitee_email).exists)

    invitee = new_page()
    link = emailed_link(dashboard_server, invitee_email)
    invitee.goto(link)
    expect(invitee.get_by_role("heading", name=re.compile("Join"))).to_be_visible()
    shoot(invitee, "invite-02-link-anonymous")
    invitee.click("text=Create account")
    expect(invitee.locator("#id_email")).to_have_value(invitee_email)
    invitee.fill("#id_name", "Bob")
    invitee.fill("#id_password", PASSWORD)
    invitee.click("button[type=submit]")
    expect(invitee).to_have_url(re.compile(re.escape(link) + "$"))
    expect(invitee.get_by_role("button", name="Accept and join")).to_be_visible()
    shoot(invitee, "invite-03-link-logged-in")
    invitee.click("button:has-text('Accept and join')")
    expect(invitee).to_have_url(re.compile(r"/servers/$"))
    org_name = f"owner-{unique}@example.com's organization"
    # Still in their own organization until they pick the new one.
    expect(invitee.locator("#org-select option:checked")).to_have_text(
        "Bob's organization"  # named after the name given at sign-up
    )
    expect(invitee.locator(".message", has_text="You joined")).to_be_visible()
    shoot(invitee, "invite-04-joined")
    invitee.select_option("#org-select", label=org_name)
    expect(invitee.locator("#org-select option:checked")).to_have_text(org_name)

    owner.goto("/organization/members/")
    expect(owner.locator("tr", has_text=invitee_email)).to_contain_text("Member")
    expect(owner.get_by_role("table", name="Pending invitations")).to_have_count(0)
    shoot(owner, "invite-05-members-after")

    def placement():
        bob = User.objects.get(email=invitee_email)
        membership = Membership.objects.get(user=bob, organization__name__startswith="owner-")
        return bob.personal_org_id, membership.organization_id, membership.role

    personal, joined, role = db_call(placement)
    assert personal != joined and role == "member"
    assert not owner.errors and not invitee.errors
