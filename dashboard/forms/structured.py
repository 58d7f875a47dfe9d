"""A JSON (or YAML) document typed into a textarea, loaded as strictly as the definition loader
(servers.documents): a repeated key is refused, never "the last one wins"."""

import json

from django import forms

from servers import documents


def pretty(value) -> str:
    if value in (None, "", {}, []) and not isinstance(value, dict | list):
        return ""
    return json.dumps(value, indent=2, ensure_ascii=False)


class StructuredField(forms.CharField):
    """A JSON (or YAML) document typed into a textarea; cleans to the parsed value."""

    def __init__(
        self, *, expect=(dict,), empty=None, rows=8, allow_yaml=True, schema_check=None, **kwargs
    ):
        kwargs.setdefault("required", False)
        # data-code-editor makes it an editor (static/js/code-editor.js); data-schema-check
        # adds the server's JSON Schema errors to it, inline.
        attrs = {
            "rows": rows,
            "spellcheck": "false",
            "class": "code",
            "data-json-editor": "",
            "data-code-editor": "yaml" if allow_yaml else "json",
        }
        if schema_check is not None:  # a lazy URL: evaluating it here would import the URLconf
            attrs["data-schema-check"] = schema_check
        kwargs.setdefault("widget", forms.Textarea(attrs=attrs))
        super().__init__(strip=False, **kwargs)
        self.expect = expect
        self.empty = empty
        self.allow_yaml = allow_yaml

    def prepare_value(self, value):
        if isinstance(value, str):
            return value
        return pretty(value)

    def to_python(self, value):
        if value is None or not str(value).strip():
            return self.empty
        text = str(value)
        # Strict like the definition loader (servers.documents): a repeated key is refused,
        # never "the last one wins", so what the editor shows is what is stored.
        try:
            parsed = documents.load_json(text)
        except documents.DocumentError as json_error:
            if json_error.line is None:
                problem = json_error.problem.removeprefix("invalid JSON: ")
                raise forms.ValidationError(f"Not accepted: {problem}.") from None
            problem = json_error.problem.removeprefix("invalid JSON: ")
            not_json = forms.ValidationError(
                f"Not valid JSON: {problem} (line {json_error.line}, column {json_error.column})."
            )
            if not self.allow_yaml:
                raise not_json from None
            try:
                parsed = documents.load_yaml(text)
            except documents.DocumentError as exc:
                if exc.line is None or "alias" in exc.problem or "duplicate key" in exc.problem:
                    # Not a typo in the text: what YAML allows and this platform refuses.
                    raise forms.ValidationError(f"Not accepted: {exc.problem}.") from None
                raise not_json from None
        if not isinstance(parsed, self.expect):
            names = " or ".join("an object" if t is dict else "a list" for t in self.expect)
            raise forms.ValidationError(f"Must be {names}.")
        return parsed
