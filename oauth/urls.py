from django.urls import path

from . import apps_views, views

app_name = "oauth"

urlpatterns = [
    path(
        ".well-known/oauth-protected-resource/mcp/<slug:slug>",
        views.protected_resource,
        name="protected_resource",
    ),
    path(
        "mcp/<slug:slug>/.well-known/oauth-protected-resource",
        views.protected_resource,
        name="protected_resource_appended",
    ),
    path(
        ".well-known/oauth-protected-resource",
        views.protected_resource_root,
        name="protected_resource_root",
    ),
    path(
        ".well-known/oauth-authorization-server",
        views.authorization_server,
        name="authorization_server",
    ),
    path(".well-known/openid-configuration", views.authorization_server, name="openid"),
    # An issuer with a path (OAUTH_ISSUER=https://host/tenant): RFC 8414 inserts the well-known
    # name before the path, OpenID Connect Discovery appends it.
    path(
        ".well-known/oauth-authorization-server/<path:issuer_path>",
        views.authorization_server_at,
        name="authorization_server_inserted",
    ),
    path(
        ".well-known/openid-configuration/<path:issuer_path>",
        views.authorization_server_at,
        name="openid_inserted",
    ),
    path(
        "<path:issuer_path>/.well-known/openid-configuration",
        views.authorization_server_at,
        name="openid_appended",
    ),
    path(
        "<path:issuer_path>/.well-known/oauth-authorization-server",
        views.authorization_server_at,
        name="authorization_server_appended",
    ),
    path("oauth/authorize", views.authorize, name="authorize"),
    path("oauth/token", views.token, name="token"),
    path("oauth/register", views.register, name="register"),
    path("oauth/revoke", views.revoke, name="revoke"),
    path("account/connected-apps/", apps_views.connected_apps, name="connected_apps"),
    path(
        "account/connected-apps/<int:pk>/revoke/",
        apps_views.connected_app_revoke,
        name="connected_app_revoke",
    ),
    path(
        "account/connected-apps/<int:pk>/access/",
        apps_views.connected_app_access,
        name="connected_app_access",
    ),
]
