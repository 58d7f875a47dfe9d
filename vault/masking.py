"""The one place that hides secret values in text that leaves the process (error messages,
request/response dumps, cached responses, upstream errors).

A secret can come back in another form than it was sent: a host is lower-cased by URL parsing,
a value in a query string is percent-encoded (with upper- or lower-case hex), a token goes out
base64-encoded in a header. Every form listed in `_forms` is matched, case-insensitively.
"""

import base64
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

MASK = "***"
# Shorter values would mask ordinary text ("on", "id") wherever it occurs.
MIN_MASKED_LENGTH = 3


def _base64_forms(value: str) -> set[str]:
    raw = value.encode()
    forms = set()
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode("ascii")
        forms.update({text, text.rstrip("=")})
    return forms


def _forms(value: str) -> set[str]:
    forms = {value, quote(value, safe=""), quote(value), quote_plus(value)}
    if len(value) >= 6:
        # Shorter base64 forms are too likely to occur in ordinary text.
        forms.update(_base64_forms(value))
    return {form for form in forms if len(form) >= MIN_MASKED_LENGTH}


class Masker:
    """Replaces every known secret value, in any of its forms and any letter case, with ***."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values = [v for v in values if isinstance(v, str) and v]
        forms: set[str] = set()
        for value in self._values:
            if len(value) >= MIN_MASKED_LENGTH:
                forms.update(_forms(value))
        ordered = sorted(forms, key=len, reverse=True)
        self._pattern = (
            re.compile("|".join(map(re.escape, ordered)), re.IGNORECASE) if ordered else None
        )

    def add(self, *values: str) -> "Masker":
        return Masker([*self._values, *values])

    def mask(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MASK, text)

    def mask_data(self, data):
        """The same structure with every string masked (keys included)."""
        if isinstance(data, str):
            return self.mask(data)
        if isinstance(data, dict):
            return {self.mask(str(k)): self.mask_data(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.mask_data(v) for v in data]
        return data


def mask(text: str, values: Iterable[str]) -> str:
    return Masker(values).mask(text)
