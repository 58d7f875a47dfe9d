"""A definition as text: YAML or JSON in (duplicate keys refused), YAML or JSON out."""

import json
from pathlib import Path

import yaml

from .. import documents
from .errors import DefinitionError

# --- loading ------------------------------------------------------------------------------------


def load_text(text: str, filename: str = "<input>") -> dict:
    """Parse a YAML or JSON document; errors name the line and column."""
    strict_json = filename.lower().endswith(".json")
    if strict_json or text.lstrip().startswith("{"):
        try:
            data = documents.load_json(text)
        except documents.DocumentError as exc:
            json_error = DefinitionError(f"{exc.where(filename)}: {exc.problem}")
            if strict_json:
                raise json_error from None
            # `{slug: a, ...}` is a YAML flow mapping, not broken JSON.
            try:
                data = _load_yaml(text, filename)
            except DefinitionError:
                raise json_error from None
    else:
        data = _load_yaml(text, filename)
    if not isinstance(data, dict):
        raise DefinitionError(f"{filename}: the document must be a mapping (a YAML/JSON object)")
    return data


def _load_yaml(text: str, filename: str):
    try:
        return documents.load_yaml(text)
    except documents.DocumentError as exc:
        raise DefinitionError(f"{exc.where(filename)}: {exc.problem}") from None


def load_file(path) -> dict:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise DefinitionError(f"{path}: not UTF-8 text") from None
    return load_text(text, str(path))


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data) -> bool:
        # A value used twice is written out twice: readers need not follow anchors.
        return True


def _represent_str(dumper, value):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_text(data: dict, fmt: str = "yaml") -> str:
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
