from django.urls import path, re_path

from .views import assets, calls, connect, keys, orgs, parts, playground, schema, servers

app_name = "dashboard"

urlpatterns = [
    path("", servers.home, name="home"),
    path("servers/", servers.server_list, name="server_list"),
    path("servers/new/", servers.server_create, name="server_create"),
    path("servers/<slug:slug>/", servers.server_detail, name="server_detail"),
    path("servers/<slug:slug>/settings/", servers.server_settings, name="server_settings"),
    path("servers/<slug:slug>/delete/", servers.server_delete, name="server_delete"),
    path("servers/<slug:slug>/status/", servers.server_status, name="server_status"),
    path("servers/<slug:slug>/connect/", connect.connect, name="connect"),
    path("servers/<slug:slug>/playground/", playground.playground, name="playground"),
    path("servers/<slug:slug>/playground/key/", playground.playground_key, name="playground_key"),
    path("servers/<slug:slug>/analytics/", calls.server_analytics, name="server_analytics"),
    path("servers/<slug:slug>/tools/<int:pk>/toggle/", parts.tool_toggle, name="tool_toggle"),
    path("servers/<slug:slug>/<str:part>/new/", parts.part_create, name="part_create"),
    path("servers/<slug:slug>/<str:part>/<int:pk>/", parts.part_edit, name="part_edit"),
    path("servers/<slug:slug>/<str:part>/<int:pk>/delete/", parts.part_delete, name="part_delete"),
    path("servers/<slug:slug>/<str:part>/<int:pk>/move/", parts.part_move, name="part_move"),
    path("schema/check/", schema.schema_check, name="schema_check"),
    path("keys/", keys.key_list, name="key_list"),
    path("keys/new/", keys.key_create, name="key_create"),
    path("keys/<int:pk>/revoke/", keys.key_revoke, name="key_revoke"),
    path("calls/", calls.call_log, name="call_log"),
    path("calls/export.csv", calls.call_log_csv, name="call_log_csv"),
    path("analytics/", calls.organization_analytics, name="analytics"),
    path("organizations/new/", orgs.organization_create, name="organization_create"),
    path("organizations/switch/", orgs.switch, name="organization_switch"),
    path("organization/", orgs.organization_settings, name="organization_settings"),
    path("organization/members/", orgs.members, name="members"),
    path("organization/members/<int:pk>/role/", orgs.member_role, name="member_role"),
    path("organization/members/<int:pk>/remove/", orgs.member_remove, name="member_remove"),
    re_path(r"^static/(?P<path>.+)$", assets.static_file, name="static"),
]
