"""The server-as-code format: load YAML/JSON, validate, export rows -> dict, import dict -> rows.

The dict shape is described in docs/architecture.md. Export omits optional fields that hold their
default value, so `export_definition(import_definition(x)) == normalize_definition(x)`, and a file
written in that canonical form round-trips byte for byte as data.

The package: text.py (YAML/JSON in and out), fields.py (the wire keys of each part),
validation.py with checks.py (every problem of a dict), rows.py (export and import).
"""

from .errors import DefinitionError
from .fields import PARTS, SERVER_FIELDS
from .rows import export_definition, import_definition, normalize_definition
from .text import dump_text, load_file, load_text
from .validation import template_name_problems, validate_definition

__all__ = [
    "PARTS",
    "SERVER_FIELDS",
    "DefinitionError",
    "dump_text",
    "export_definition",
    "import_definition",
    "load_file",
    "load_text",
    "normalize_definition",
    "template_name_problems",
    "validate_definition",
]
