from django.urls import path, re_path

from . import views

app_name = "scim"

urlpatterns = [
    path("ServiceProviderConfig", views.service_provider_config, name="config"),
    path("Schemas", views.schemas, name="schemas"),
    path("Schemas/<str:schema_id>", views.schemas, name="schema"),
    path("ResourceTypes", views.resource_types, name="resource_types"),
    path("ResourceTypes/<str:type_id>", views.resource_types, name="resource_type"),
    path("Users", views.user_list, name="users"),
    path("Users/<str:uid>", views.user_detail, name="user"),
    path("Groups", views.group_list, name="groups"),
    path("Groups/<str:uid>", views.group_detail, name="group"),
    re_path(r"^(?P<path>.*)$", views.not_found, name="not_found"),
]
