"""Values Postgres can store, made from whatever a caller sent: never dropped, only escaped.

Postgres refuses NUL (U+0000) in text and in jsonb strings and keys, and no UTF-8 encoder takes a
lone surrogate (U+D800..U+DFFF). One such character in a client name or an argument would make
the whole row, or the whole batch it is written in, fail. Here each becomes its visible escape
(`\\u0000`, `\\ud800`), so the row is kept and shows what was sent.
"""

NUL_ESCAPE = "\\u0000"


def storable_text(text: str) -> str:
    if "\x00" in text:
        text = text.replace("\x00", NUL_ESCAPE)
    if text.isascii():
        return text  # no surrogate: encodes as it is (and isascii reads one flag, no copy)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def storable_json(value):
    """`value` with every string (keys too) made storable; lists and dicts are rebuilt without
    recursion, so any depth the caller sent is safe here."""
    if isinstance(value, str):
        return storable_text(value)
    if not isinstance(value, dict | list):
        return value
    root = {} if isinstance(value, dict) else []
    stack = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(item, dict | list):
                copy = {} if isinstance(item, dict) else []
                stack.append((item, copy))
            else:
                copy = storable_text(item) if isinstance(item, str) else item
            if isinstance(target, dict):
                target[storable_text(str(key))] = copy
            else:
                target.append(copy)
    return root
