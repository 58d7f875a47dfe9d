"""Every environment variable getmcp reads: its type, default and meaning, in one place.

`Environment()` reads them (parsing.py says how); getmcp/settings.py turns them into Django
settings, and no other module reads the environment (tests/getmcp/test_environment.py scans
for it). README.md's settings table is generated from the declarations below
(`make settings-table`; tests/test_readme.py checks it is current), and docker-compose.yml
passes each one to the app containers (tests/test_setup_files.py).
"""

from typing import Any

from .records import ObservabilityVariables, RecordVariables
from .serving import EndpointVariables, InspectorVariables, OutageVariables
from .site import AccountVariables, OAuthVariables, SiteVariables
from .tools import CodeVariables, OutboundVariables


class Environment(
    ObservabilityVariables,
    RecordVariables,
    OAuthVariables,
    CodeVariables,
    OutboundVariables,
    InspectorVariables,
    OutageVariables,
    EndpointVariables,
    AccountVariables,
    SiteVariables,
):
    """Every variable, read from the process environment (or the mapping given)."""


def table_rows() -> list[str]:
    """The README's settings table (markdown), one row per variable, in declaration order."""
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for name, (_, variable) in Environment.declared().items():
        shown = variable.shown or _shown(variable.default)
        rows.append(f"| `{name}` | {shown} | {variable.meaning} |")
    return rows


def _shown(default: Any) -> str:
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, list):
        return f"`{','.join(default)}`" if default else "empty"
    return f"`{default}`" if default != "" else "empty"


def deployed_names() -> set[str]:
    """The variables the app containers get (docker-compose.yml)."""
    return {name for name, (_, variable) in Environment.declared().items() if variable.deployed}
