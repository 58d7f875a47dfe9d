"""A collection's `{{variables}}`: their values, which of them hold credentials, and strings
rendered with them.

A `{{variable}}` is replaced by its value when the collection (or the `variables` given) has
one; a variable that holds a credential becomes a secret placeholder; any other variable without
a value becomes an argument of the tool (`value_argument`), since a person would have typed it
in Postman before sending.
"""

import re

from ..preview import Argument, argument_name, secret_name, secret_placeholder, unique
from .entries import description

VARIABLE = re.compile(r"\{\{\s*([^{}\s]+)\s*\}\}")
WHOLE_VARIABLE = re.compile(r"^\{\{\s*([^{}\s]+)\s*\}\}$")
_SECRET_WORDS = re.compile(r"token|secret|password|passwd|api[_-]?key|apikey|credential|auth", re.I)


class Variables:
    def __init__(self, document: dict, overrides: dict, prefix: str) -> None:
        self.prefix = prefix
        self.values: dict[str, str] = {}
        for var in document.get("variable") or []:
            if isinstance(var, dict) and var.get("key") and not var.get("disabled"):
                value = var.get("value")
                self.values[str(var["key"])] = "" if value is None else str(value)
        self.values.update({str(k): str(v) for k, v in overrides.items()})
        self.secret_variables: set[str] = set()
        self._find_auth_variables(document)
        self.secrets: list[str] = []

    def _find_auth_variables(self, node) -> None:
        """Variables any auth block uses hold credentials, whatever they are called."""
        if isinstance(node, dict):
            for text in _auth_values(node.get("auth")):
                self.secret_variables.update(VARIABLE.findall(text))
            for value in node.values():
                if isinstance(value, dict | list):
                    self._find_auth_variables(value)
        elif isinstance(node, list):
            for value in node:
                self._find_auth_variables(value)

    def is_secret(self, variable: str) -> bool:
        return variable in self.secret_variables or bool(_SECRET_WORDS.search(variable))

    def secret(self, variable: str) -> str:
        name = secret_name(self.prefix, variable)
        if name not in self.secrets:
            self.secrets.append(name)
        return secret_placeholder(name)

    def render(self, text: str, problems: list[str], where: str) -> str:
        """`text` with every variable that has a value replaced; secrets become placeholders."""

        def replace(match):
            variable = match.group(1)
            if self.is_secret(variable):
                return self.secret(variable)
            if variable.startswith("$"):
                problems.append(
                    f"{where}: Postman's dynamic variable {{{{{variable}}}}} is not supported; left out"
                )
                return ""
            if self.values.get(variable):
                return self.values[variable]
            problems.append(f"{where}: variable {{{{{variable}}}}} has no value; left out")
            return ""

        return VARIABLE.sub(replace, text)

    def render_data(self, value, problems, where):
        if isinstance(value, str):
            return self.render(value, problems, where)
        if isinstance(value, dict):
            return {k: self.render_data(v, problems, where) for k, v in value.items()}
        if isinstance(value, list):
            return [self.render_data(v, problems, where) for v in value]
        return value

    def value_argument(
        self, raw, location, wire, taken, problems, where, description: str = ""
    ) -> Argument | str:
        """An argument for a value that is a lone unset variable; else the value rendered."""
        raw = "" if raw is None else str(raw)
        whole = WHOLE_VARIABLE.match(raw)
        if whole and not self.is_secret(whole.group(1)) and not whole.group(1).startswith("$"):
            variable = whole.group(1)
            default = self.values.get(variable)
            text = description or f"Postman variable {{{{{variable}}}}}."
            return _string_argument(wire, location, default, not default, text, taken)
        return self.render(raw, problems, where)

    def entry_argument(
        self, entry, location, taken, problems, where, *, required_when_empty: bool = False
    ) -> Argument:
        """The argument for a query parameter or form field (`entry`: Postman's key, value and
        description): a lone unset variable's (value_argument), else a string whose default is
        the rendered value; `required_when_empty`: an entry with no value must be given."""
        wire = str(entry["key"])
        text = description(entry.get("description"))
        value = self.value_argument(
            entry.get("value"), location, wire, taken, problems, where, text
        )
        if isinstance(value, Argument):
            return value
        required = required_when_empty and not value
        return _string_argument(wire, location, value, required, text, taken)


def _string_argument(wire, location, default, required, text, taken) -> Argument:
    schema = {"type": "string"}
    if default:
        schema["default"] = default
    return Argument(
        name=unique(argument_name(wire), taken),
        location=location,
        wire_name=wire,
        schema=schema,
        required=required,
        description=text,
    )


def _auth_values(auth) -> list[str]:
    """The text values of an auth block's entries (`{"bearer": [{"key", "value"}, ...]}`)."""
    if not isinstance(auth, dict):
        return []
    return [
        entry["value"]
        for entries in auth.values()
        if isinstance(entries, list)
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("value"), str)
    ]
