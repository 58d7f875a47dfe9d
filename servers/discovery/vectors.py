"""What a tool's embedding is computed from, and the vectors a compiled snapshot carries.

A tool's vector is the mean (renormalised) of the vectors of a few short texts built from what
every tool has, `tool_texts`:

- its summary (`tool_text`): its name split into words, its title and the first line of its
  description;
- its action: the name as a phrase, where a name an importer made from the HTTP method and path
  (`get_files_id_content`) starts with the verb the method stands for ("list files content";
  a GET ending in an id: "get") and loses the path's `id` words;
- its title and its summary line alone, when it has them; a description line that is only
  "METHOD /path" (operations without a summary) is not a sentence and is left to the first text.

Each text is short, which is what this model matches a short request with best; the mean keeps
one vector per tool (the same storage and the same matrix product as before). Measured on the
development requests (bench/discovery/README.md, Slack's API): the summary alone put the right
tool in the top 3 for 42% of paraphrases (MRR 0.352), the mean of the texts' vectors 44% (MRR
0.42); the maximum over the texts instead of the mean 42% (0.38). The rest of a description and
the arguments are left to BM25 (hybrid.py), which searches all of them: embedding the long text
did worse (31%).

Vectors are stored by the digest of the texts joined (`tool_document`, servers/embeddings.py),
so an unchanged tool keeps its vector across versions and a changed one gets a new one.

Memory: 384 float32 per tool (1.5 KB), held once per snapshot; a principal's narrowed view
shares the same arrays.
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

import numpy as np

from . import embedding
from .embedding import DIMENSIONS

MAX_SUMMARY_CHARS = 300
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# A description line that only names the operation's method and path.
_METHOD_LINE = re.compile(r"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) /\S*$")
# What an HTTP method said as the first word of a name stands for.
_METHOD_VERBS = {"post": "create", "put": "update", "patch": "update"}


def name_words(name: str) -> str:
    """`removeTeamMember` and `remove_team_member` -> "remove team member"."""
    return " ".join(word.lower() for word in _WORDS.findall(name))


def _summary(wire: Mapping) -> str:
    description = str(wire.get("description") or "").strip()
    return description.split("\n", 1)[0].strip()[:MAX_SUMMARY_CHARS]


def tool_text(wire: Mapping) -> str:
    """The summary: name words, title and first description line, in one text."""
    parts = [name_words(str(wire.get("name") or ""))]
    title = str(wire.get("title") or "").strip()
    if title:
        parts.append(title)
    summary = _summary(wire)
    if summary and summary != title:
        parts.append(summary)
    return ". ".join(parts)


def action_phrase(name: str) -> str:
    """The name as a phrase that starts with what it does: `get_files_id` -> "get files",
    `get_files_id_content` -> "list files content", `post_files` -> "create files"."""
    words = name_words(name).split()
    if not words:
        return ""
    first = words[0]
    if first == "get" and words[-1] != "id":
        first = "list"
    words = [_METHOD_VERBS.get(first, first)] + [word for word in words[1:] if word != "id"]
    return " ".join(words)


def tool_texts(wire: Mapping) -> tuple[str, ...]:
    """The texts whose vectors' mean is the tool's vector (module docstring), without repeats."""
    texts = [tool_text(wire), action_phrase(str(wire.get("name") or ""))]
    title = str(wire.get("title") or "").strip()
    summary = _summary(wire)
    texts.append(title)
    if not _METHOD_LINE.match(summary):
        texts.append(summary)
    return tuple(dict.fromkeys(text for text in texts if text))


def tool_document(wire: Mapping) -> str:
    """What a tool's vector is stored by (its digest): its texts, one a line."""
    return "\n".join(tool_texts(wire))


def embed_documents(documents: Sequence[str]) -> np.ndarray:
    """Unit vectors (len(documents) x DIMENSIONS) of `tool_document` texts: each the
    renormalised mean of its lines' vectors (the lines of every document in one batch run)."""
    lines = [document.split("\n") for document in documents]
    flat = [line for document in lines for line in document]
    vectors = embedding.embed(flat) if flat else np.zeros((0, DIMENSIONS), dtype=np.float32)
    out = np.zeros((len(documents), DIMENSIONS), dtype=np.float32)
    start = 0
    for i, document in enumerate(lines):
        mean = vectors[start : start + len(document)].mean(axis=0)
        start += len(document)
        out[i] = mean / max(float(np.linalg.norm(mean)), 1e-12)
    return out


class ToolVectors:
    """The unit vectors of some tools, by name (tools without one are searched by words
    alone until their vector is computed)."""

    __slots__ = ("_rows", "matrix")

    def __init__(self, vectors: Mapping[str, np.ndarray] | None = None) -> None:
        names = list(vectors or {})
        self._rows = MappingProxyType({name: i for i, name in enumerate(names)})
        matrix = np.zeros((len(names), DIMENSIONS), dtype=np.float32)
        for i, name in enumerate(names):
            matrix[i] = vectors[name]  # type: ignore[index]
        matrix.setflags(write=False)
        self.matrix = matrix

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, name: object) -> bool:
        return name in self._rows

    def rows(self, names: Iterable[str]) -> tuple[list[str], np.ndarray]:
        """The names among `names` that have a vector, and their vectors (a view when all do)."""
        found = [name for name in names if name in self._rows]
        return found, self.matrix[[self._rows[name] for name in found]]

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes)


NO_VECTORS = ToolVectors()
