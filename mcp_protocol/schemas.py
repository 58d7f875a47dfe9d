"""JSON Schema 2020-12 validators for schemas users write: never fetch a `$ref` from the network."""

from jsonschema import Draft202012Validator
from referencing import Registry

# An empty registry with no retrieve function: a `$ref` that is not inside the schema fails to
# resolve instead of being fetched (schemas come from tenants; fetching would be an SSRF hole).
_OFFLINE = Registry()
REF_KEYWORDS = ("$ref", "$dynamicRef")


def validator_for(schema: dict) -> Draft202012Validator:
    return Draft202012Validator(
        schema, registry=_OFFLINE, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def external_refs(schema, path: str = "") -> list[str]:
    """Paths of every `$ref`/`$dynamicRef` that points outside the schema itself."""
    found = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            here = f"{path}.{key}" if path else key
            if key in REF_KEYWORDS and isinstance(value, str) and not value.startswith("#"):
                found.append(here)
            else:
                found.extend(external_refs(value, here))
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            found.extend(external_refs(item, f"{path}[{i}]"))
    return found
