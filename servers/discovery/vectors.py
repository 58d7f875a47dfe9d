"""What a tool's embedding is computed from, and the vectors a compiled snapshot carries.

A tool's text is its summary: its name split into words, its title and the first line of its
description. Its arguments and the rest of its description are left to BM25 (hybrid.py), which
searches all of them: measured on the development requests (bench/discovery/README.md, Slack's
API), embedding the long text (arguments, every paragraph, annotations) put the right tool in
the top 3 for 31% of paraphrased requests, the summary for 39%: a short request matches a short
text best with this model. Vectors are stored by the digest of that text (servers/embeddings.py),
so an unchanged tool keeps its vector across versions and a changed one gets a new one.

Memory: 384 float32 per tool (1.5 KB), held once per snapshot; a principal's narrowed view
shares the same arrays.
"""

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import numpy as np

from .embedding import DIMENSIONS

MAX_SUMMARY_CHARS = 300
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def name_words(name: str) -> str:
    """`removeTeamMember` and `remove_team_member` -> "remove team member"."""
    return " ".join(word.lower() for word in _WORDS.findall(name))


def tool_text(wire: Mapping) -> str:
    parts = [name_words(str(wire.get("name") or ""))]
    title = str(wire.get("title") or "").strip()
    if title:
        parts.append(title)
    description = str(wire.get("description") or "").strip()
    summary = description.split("\n", 1)[0].strip()[:MAX_SUMMARY_CHARS]
    if summary and summary != title:
        parts.append(summary)
    return ". ".join(parts)


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
