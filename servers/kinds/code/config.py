"""Validation of a code tool's config: language, source (checked by the language) and limits."""

from typing import Any

from . import python
from .limits import validate_limits

# language -> module with check(source), check_on_save(source), program(source), entry(source),
# referenced_secrets(source) and run(tool, arguments, ctx).
LANGUAGES = {"python": python}
CONFIG_FIELDS = frozenset({"language", "source", "limits", "connections"})


def validate_config(config: dict[str, Any]) -> list[str]:
    if not isinstance(config, dict):
        return ["config: must be a mapping"]
    errors = []
    language = config.get("language", "python")
    runtime = LANGUAGES.get(language)
    if runtime is None:
        errors.append(f"config.language: must be one of {', '.join(LANGUAGES)}")
    else:
        errors.extend(
            f"config.source: {problem}" for problem in runtime.check(config.get("source"))
        )
    errors.extend(validate_limits(config.get("limits"), "config.limits"))
    errors.extend(_validate_connections(config.get("connections", [])))
    errors.extend(f"config.{key}: unknown field" for key in sorted(set(config) - CONFIG_FIELDS))
    return errors


def validate_on_save(config: dict[str, Any]) -> list[str]:
    """The checks too costly for every compile, run where a definition is saved (after
    validate_config found nothing)."""
    runtime = LANGUAGES.get(config.get("language", "python"))
    if runtime is None:
        return []
    return [f"config.source: {problem}" for problem in runtime.check_on_save(config["source"])]


def _validate_connections(connections: Any) -> list[str]:
    """`connections: [github, {provider: google, scopes: [...]}]`: the caller's connected
    accounts the code reads as `connections["github"]` (connections/)."""
    from connections.requirement import validate

    if not isinstance(connections, list):
        return ["config.connections: must be a list of providers"]
    errors = []
    for index, item in enumerate(connections):
        errors += validate(item, f"config.connections[{index}]")
    return errors
