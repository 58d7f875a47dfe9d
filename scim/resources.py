"""SCIM resources as JSON (RFC 7643), and the discovery documents (ServiceProviderConfig,
Schemas, ResourceTypes) that Okta's and Entra ID's provisioning read first."""

from django.conf import settings

from .models import ScimGroup, ScimUser

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
CONFIG_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
RESOURCE_TYPE_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema"
CONTENT_TYPE = "application/scim+json"
MAX_RESULTS = 200


def base_url() -> str:
    return settings.SITE_URL.rstrip("/") + "/scim/v2"


def _meta(kind: str, obj, path: str) -> dict:
    return {
        "resourceType": kind,
        "created": obj.created_at.isoformat(),
        "lastModified": obj.updated_at.isoformat(),
        "location": f"{base_url()}/{path}/{obj.uid}",
        "version": f'W/"{int(obj.updated_at.timestamp() * 1000)}"',
    }


def user_resource(user: ScimUser, groups: list[ScimGroup] | None = None) -> dict:
    attributes = dict(user.attributes or {})
    resource = {
        "schemas": [USER_SCHEMA, *attributes.pop("schemas_extra", [])],
        **attributes,
        "id": str(user.uid),
        "userName": user.user_name,
        "active": user.active,
        "meta": _meta("User", user, "Users"),
    }
    if user.external_id:
        resource["externalId"] = user.external_id
    if groups is None:
        groups = list(user.groups.all())
    resource["groups"] = [
        {"value": str(g.uid), "display": g.display_name, "$ref": f"{base_url()}/Groups/{g.uid}"}
        for g in groups
    ]
    return resource


def group_resource(group: ScimGroup, *, members: bool = True) -> dict:
    resource = {
        "schemas": [GROUP_SCHEMA],
        "id": str(group.uid),
        "displayName": group.display_name,
        "meta": _meta("Group", group, "Groups"),
    }
    if group.external_id:
        resource["externalId"] = group.external_id
    if members:
        resource["members"] = [
            {"value": str(m.uid), "display": m.user_name, "$ref": f"{base_url()}/Users/{m.uid}"}
            for m in group.members.all()
        ]
    return resource


def list_response(resources: list[dict], *, total: int, start: int) -> dict:
    return {
        "schemas": [LIST_SCHEMA],
        "totalResults": total,
        "startIndex": start,
        "itemsPerPage": len(resources),
        "Resources": resources,
    }


def error_body(status: int, detail: str, scim_type: str | None = None) -> dict:
    body: dict = {"schemas": [ERROR_SCHEMA], "status": str(status), "detail": detail}
    if scim_type:
        body["scimType"] = scim_type
    return body


def service_provider_config() -> dict:
    return {
        "schemas": [CONFIG_SCHEMA],
        "documentationUri": settings.SITE_URL.rstrip("/") + "/docs/scim",
        "patch": {"supported": True},
        "bulk": {"supported": False, "maxOperations": 0, "maxPayloadSize": 0},
        "filter": {"supported": True, "maxResults": MAX_RESULTS},
        "changePassword": {"supported": False},
        "sort": {"supported": False},
        "etag": {"supported": False},
        "authenticationSchemes": [
            {
                "type": "oauthbearertoken",
                "name": "Bearer token",
                "description": "The organization's SCIM token (dashboard: Organization, SCIM).",
                "primary": True,
            }
        ],
        "meta": {"resourceType": "ServiceProviderConfig", "location": base_url() + "/"},
    }


def _attribute(name: str, kind: str = "string", **extra) -> dict:
    return {
        "name": name,
        "type": kind,
        "multiValued": False,
        "required": False,
        "caseExact": False,
        "mutability": "readWrite",
        "returned": "default",
        "uniqueness": "none",
        **extra,
    }


def _multi(name: str, subs: list[dict]) -> dict:
    return _attribute(name, "complex", multiValued=True, subAttributes=subs)


def schemas() -> list[dict]:
    value = _attribute("value")
    kind = _attribute("type")
    primary = _attribute("primary", "boolean")
    name = _attribute(
        "name",
        "complex",
        subAttributes=[
            _attribute(n) for n in ("formatted", "familyName", "givenName", "middleName")
        ],
    )
    user = {
        "id": USER_SCHEMA,
        "name": "User",
        "description": "A person in this organization",
        "attributes": [
            _attribute("userName", required=True, uniqueness="server"),
            name,
            _attribute("displayName"),
            _attribute("active", "boolean"),
            _multi("emails", [value, kind, primary]),
            _multi("groups", [value, _attribute("display")]) | {"mutability": "readOnly"},
        ],
    }
    group = {
        "id": GROUP_SCHEMA,
        "name": "Group",
        "description": "A group; its members get the role the organization maps it to",
        "attributes": [
            _attribute("displayName", required=True, uniqueness="server"),
            _multi("members", [value, _attribute("display")]),
        ],
    }
    for schema in (user, group):
        schema["schemas"] = [SCHEMA_SCHEMA]
        schema["meta"] = {
            "resourceType": "Schema",
            "location": f"{base_url()}/Schemas/{schema['id']}",
        }
    return [user, group]


def resource_types() -> list[dict]:
    return [
        {
            "schemas": [RESOURCE_TYPE_SCHEMA],
            "id": kind,
            "name": kind,
            "endpoint": f"/{kind}s",
            "schema": schema,
            "meta": {
                "resourceType": "ResourceType",
                "location": f"{base_url()}/ResourceTypes/{kind}",
            },
        }
        for kind, schema in (("User", USER_SCHEMA), ("Group", GROUP_SCHEMA))
    ]
