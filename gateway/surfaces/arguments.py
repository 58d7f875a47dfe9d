"""A tool's arguments checked against its inputSchema, as REST and Webtools answer them: each
error with a JSON-pointer-like path, and the same errors said in one line."""

from typing import Any


def input_errors(tool: Any, arguments: Any) -> list[dict[str, str]]:
    """The tool's own compiled validator, error by error, with JSON-pointer-like paths."""
    errors = sorted(tool.input_validator.iter_errors(arguments), key=lambda e: list(e.path))
    return [
        {
            "path": "/" + "/".join(str(part) for part in error.absolute_path),
            "message": error.message,
        }
        for error in errors
    ]


def in_words(errors: list[dict[str, str]], field: str) -> str:
    """`field` is where the arguments sit in the body (Webtools: "request")."""
    return "; ".join(
        f"{field}{e['path'] if e['path'] != '/' else ''}: {e['message']}" for e in errors
    )
