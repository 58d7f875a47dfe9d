from activity.retention import retention_days


def test_my_organizations_are_listed_with_my_role(api, org, outsider_org):
    results = api.get("/api/organizations/").json()["results"]
    assert results == [
        {
            "slug": org.slug,
            "name": org.name,
            "role": "owner",
            "createdAt": results[0]["createdAt"],
            "callLogRetentionDays": 30,
            "monthlyCallQuota": None,
            "taskConcurrency": None,
        }
    ]


def test_an_owner_sets_the_quotas_and_reads_the_usage(api, org):
    response = api.patch(
        f"/api/organizations/{org.slug}/",
        {"monthlyCallQuota": 500, "taskConcurrency": 2},
        format="json",
    )
    assert response.status_code == 200, response.json()
    usage = api.get(f"/api/organizations/{org.slug}/usage/").json()
    assert usage["monthlyCallQuota"] == 500 and usage["taskConcurrency"] == 2
    assert usage["calls"] == 0 and usage["remaining"] == 500


def test_an_owner_sets_and_resets_the_call_log_retention(api, org):
    response = api.patch(f"/api/organizations/{org.slug}/", {"callLogRetentionDays": 7})
    assert response.status_code == 200
    assert response.json()["callLogRetentionDays"] == 7
    assert retention_days(org) == 7
    api.patch(f"/api/organizations/{org.slug}/", {"callLogRetentionDays": None}, format="json")
    assert retention_days(org) == 30


def test_a_retention_below_a_day_is_refused(api, org):
    response = api.patch(f"/api/organizations/{org.slug}/", {"callLogRetentionDays": 0})
    assert list(response.json()["error"]["fields"]) == ["callLogRetentionDays"]


def test_a_plain_member_cannot_change_the_retention(api, user, outsider_org):
    outsider_org.memberships.create(user=user, role="member")
    response = api.patch(f"/api/organizations/{outsider_org.slug}/", {"callLogRetentionDays": 1})
    assert response.status_code == 403
    assert retention_days(outsider_org) == 30
