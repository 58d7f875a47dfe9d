"""Copies of JSON data for compiled Snapshots: deep read-only ones (a Snapshot is shared by every
request of a process, so nothing may change it in place), and ones whose strings are shared."""

import sys


def _read_only(self, *args, **kwargs):
    raise TypeError(f"{type(self).__name__} is read-only: it belongs to a shared Snapshot")


class FrozenDict(dict):
    """A dict no one can change; still a dict, so orjson and jsonschema take it as it is."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _read_only


class FrozenList(list):
    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = clear = extend = insert = pop = remove = reverse = sort = _read_only


def freeze(value):
    """A deep read-only copy of JSON data."""
    if isinstance(value, dict):
        return FrozenDict((key, freeze(item)) for key, item in value.items())
    if isinstance(value, list | tuple):
        return FrozenList(freeze(item) for item in value)
    return value


# Strings up to this long (and every mapping key) are interned when a definition is compiled.
SHARED_TEXT_CHARS = 64


def interned(value):
    """A copy of JSON data whose keys and short strings are the process's shared copies: keys
    such as "type" or "content", kinds, tool and argument names repeat across every server a
    process holds, so a warm call to one of many servers finds them in the CPU's caches, and
    10,000 definitions keep one copy of each instead of 10,000."""
    if isinstance(value, dict):
        return {
            (sys.intern(key) if type(key) is str else key): interned(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [interned(item) for item in value]
    if type(value) is str and len(value) <= SHARED_TEXT_CHARS:
        return sys.intern(value)
    return value
