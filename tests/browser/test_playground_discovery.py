"""The playground's discovery panel in Chromium: a person types what an agent would ask and sees
the ranking getmcp_search_tools answers with, its scores and hints, in the safe order."""

import re

from playwright.sync_api import expect

from accounts.models import User
from servers import embeddings
from servers.definition import import_definition
from tests.dashboard.views.test_playground_discovery import people_definition

from .test_dashboard_flow import sign_up


def test_a_person_searches_as_an_agent_and_sees_the_ranking_with_scores_and_hints(
    new_page, shoot, db_call, unique
):
    page = new_page()
    email = f"disc-{unique}@example.com"
    slug = f"people-{unique}"
    sign_up(page, email)

    def setup():
        org = User.objects.get(email=email).personal_organization()
        embeddings.embed_server(import_definition(people_definition(slug), org).pk)

    db_call(setup)

    page.goto(f"/servers/{slug}/playground/")
    panel = page.locator("#pg-discovery")
    expect(panel).to_contain_text("What an agent sees: discovery mode")
    expect(panel).to_contain_text("embeddings of 5 of the 5 tools")

    page.get_by_label("What the agent asks for").fill("ban a user from logging in")
    panel.get_by_role("button", name="Search as an agent").click()
    expect(page.locator("#pg-discover-summary")).to_contain_text("Ranking: hybrid")
    names = page.locator("#pg-discover-results tbody tr td:nth-child(2) .mono")
    expect(names.first).to_have_text("suspendUser")
    listed = names.all_inner_texts()
    assert listed.index("suspendUser") < listed.index("deleteUser")
    delete_row = page.locator("#pg-discover-results tbody tr", has_text="deleteUser")
    expect(delete_row).to_contain_text("destructive")
    expect(page.locator("#pg-discover-results")).to_contain_text(re.compile(r"#\d+ · 0\.\d{3}"))

    page.get_by_label("What the agent asks for").fill("who is on the team?")
    panel.get_by_role("button", name="Search as an agent").click()
    expect(page.locator("#pg-discover-summary")).to_contain_text("intent read as read")
    expect(names.first).to_have_text("listTeamMembers")
    listed = names.all_inner_texts()
    destructive = [i for i, name in enumerate(listed) if name in {"deleteUser", "removeTeamMember"}]
    others = [i for i in range(len(listed)) if i not in destructive]
    assert destructive and max(others) < min(destructive)
    shoot(page, "62-playground-discovery")
    assert not page.errors
