"""Per-tool access: what one principal (an API key, an OAuth grant, and the role of the member
behind either) may use of one server. Enforced here, and only here.

A limit names the tools, resources (URIs and URI templates) and prompts allowed; a list left
out allows everything of its kind. Three limits may apply to a request, and all of them do:

- the key's, per server (`ApiKey.access`: {"<server id>": {"tools": [...], ...}});
- the grant's, for its one server (`oauth.Grant.access`: {"tools": [...], ...});
- the role's, a server setting (`Server.role_access`: {"member": {"tools": [...]}}), applied
  to the keys a member created and the grants a member gave, compiled into the snapshot.

How it is enforced: `scoped(snapshot, credential)` returns the snapshot *as that principal
sees it*, a copy whose tool, resource, template and prompt maps and lists hold only what is
allowed. The gate swaps it in right after authentication, so every list (tools/list,
resources/list, resources/templates/list, prompts/list, the OpenAPI document, Webtools
metadata, the discovery document) and every call path (both protocol eras, MRTR rounds, tasks,
the legacy HTTP+SSE transport, REST, Webtools) reads the same narrowed maps. A withheld tool is
answered exactly like a tool that does not exist: the principal cannot tell them apart.

Cost on a warm call: the principal's limits are compiled once when its credential is loaded
(gateway/endpoint/auth.py, cached per process); the narrowed snapshot is built once per
(snapshot, limit) and cached; a request then costs two dict lookups and no SQL.
"""

from collections import OrderedDict
from dataclasses import dataclass, replace
from types import MappingProxyType

from accounts.policy import RANK
from servers.discovery.hybrid import LazyIndex

KINDS = ("tools", "resources", "prompts")
VIEW_CACHE_SIZE = 4096
ALL_LISTS = (
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
)


@dataclass(frozen=True, slots=True)
class Scope:
    """None allows every item of that kind; a frozenset allows only the names in it."""

    tools: frozenset | None = None
    resources: frozenset | None = None
    prompts: frozenset | None = None

    @property
    def unlimited(self) -> bool:
        return self.tools is None and self.resources is None and self.prompts is None


UNLIMITED = Scope()


def _names(value) -> frozenset | None:
    if value is None:
        return None
    return frozenset(item for item in value if isinstance(item, str))


def scope_of(data) -> Scope:
    """A stored limit ({"tools": [...], "resources": [...], "prompts": [...]}) as a Scope."""
    if not isinstance(data, dict):
        return UNLIMITED
    return Scope(*(_names(data.get(kind)) for kind in KINDS))


def _both(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def intersect(*scopes: Scope | None) -> Scope:
    result = UNLIMITED
    for scope in scopes:
        if scope is not None:
            result = Scope(*(_both(getattr(result, k), getattr(scope, k)) for k in KINDS))
    return result


def problems(data, *, per_server: bool) -> list[str]:
    """What is wrong with a limit as a client sent it (API, forms); [] when it is fine."""
    if data in (None, {}):
        return []
    if not isinstance(data, dict):
        return ["must be an object"]
    if per_server:
        found = []
        for server, limit in data.items():
            if not str(server).isdigit():
                found.append(f"{server}: keys are server ids")
            found += [f"{server}.{p}" for p in problems(limit, per_server=False)]
        return found
    found = [f"{key}: unknown (tools, resources, prompts)" for key in data if key not in KINDS]
    for kind in KINDS:
        value = data.get(kind)
        if value is not None and (
            not isinstance(value, list) or not all(isinstance(v, str) for v in value)
        ):
            found.append(f"{kind}: must be a list of names")
    return found


def role_access_problems(data) -> list[str]:
    """Server.role_access ("roleAccess" in the definition format), as validate_definition
    reports problems: {"member": {"tools": [...]}, "viewer": {...}}."""
    if not isinstance(data, dict):
        return ["roleAccess: must be an object keyed by role"]
    roles = ("owner", "admin", "member", "viewer")
    found = [
        f"roleAccess.{role}: unknown role (owner, admin, member, viewer)"
        for role in data
        if role not in roles
    ]
    for role, limit in data.items():
        found += [f"roleAccess.{role}.{p}" for p in problems(limit, per_server=False)]
    return found


# The role access of a server that limits no role (most): one mapping shared by their snapshots.
NO_ROLE_ACCESS: MappingProxyType = MappingProxyType({})


# Lowest first (accounts/policy.py ranks them): a role's limit also bounds every role below it.
ROLES_BY_RANK = tuple(sorted(RANK, key=RANK.__getitem__))


def compile_role_access(data) -> MappingProxyType:
    """Server.role_access -> {role: Scope}, for the snapshot.

    `roleAccess` means "no more than": a role gets its own limit intersected with the limit of
    every role above it that is named, so a role the server does not name is never wider than a
    higher one it does name, and demoting a member can only narrow what their keys and grants
    reach. Roles above every named role stay unlimited (they are left out of the mapping)."""
    if not isinstance(data, dict) or not data:
        return NO_ROLE_ACCESS
    compiled: dict[str, Scope] = {}
    bound: Scope | None = None
    for role in reversed(ROLES_BY_RANK):
        if role in data:
            own = scope_of(data[role])
            bound = own if bound is None else intersect(bound, own)
        if bound is not None:
            compiled[role] = bound
    return MappingProxyType(compiled)


def key_access(data) -> MappingProxyType:
    """ApiKey.access -> {server id: Scope}, for the credential."""
    if not isinstance(data, dict):
        return MappingProxyType({})
    return MappingProxyType(
        {int(server): scope_of(limit) for server, limit in data.items() if str(server).isdigit()}
    )


# -- the view a principal gets ------------------------------------------------------------------

_views: OrderedDict = OrderedDict()


def scope_for(snapshot, credential) -> Scope:
    own = credential.access.get(snapshot.server_id)
    role = snapshot.role_scopes.get(credential.role) if credential.role else None
    if role is None:
        return own or UNLIMITED
    return role if own is None else intersect(own, role)


def scoped(snapshot, credential):
    """The snapshot as this principal sees it (the snapshot itself when nothing is limited)."""
    if not credential.access and not (credential.role and snapshot.role_scopes):
        return snapshot
    scope = scope_for(snapshot, credential)
    if scope.unlimited:
        return snapshot
    key = (snapshot.server_id, snapshot.server_info.get("version"), scope)
    entry = _views.get(key)
    if entry is not None and entry[0] is snapshot:
        return entry[1]
    view = narrow(snapshot, scope)
    _views[key] = (snapshot, view)
    if len(_views) > VIEW_CACHE_SIZE:
        _views.popitem(last=False)
    return view


def narrow(snapshot, scope: Scope):
    def allowed(names, name) -> bool:
        return names is None or name in names

    tools = {n: t for n, t in snapshot.tools.items() if allowed(scope.tools, n)}
    resources = {u: r for u, r in snapshot.resources.items() if allowed(scope.resources, u)}
    templates = tuple(
        t for t in snapshot.resource_templates if allowed(scope.resources, t.uri_template)
    )
    prompts = {n: p for n, p in snapshot.prompts.items() if allowed(scope.prompts, n)}
    return replace(
        snapshot,
        tools=MappingProxyType(tools),
        tool_list=tuple(w for w in snapshot.tool_list if w["name"] in tools),
        resources=MappingProxyType(resources),
        resource_list=tuple(w for w in snapshot.resource_list if w["uri"] in resources),
        resource_templates=templates,
        template_list=tuple(t.wire for t in templates),
        templates_by_uri=MappingProxyType(
            {u: t for u, t in snapshot.templates_by_uri.items() if t in templates}
        ),
        prompts=MappingProxyType(prompts),
        prompt_list=tuple(w for w in snapshot.prompt_list if w["name"] in prompts),
        # Tool search ranks over what this principal may use, never over withheld tools.
        search_index=LazyIndex(),
    )


def clear_cache() -> None:
    _views.clear()
