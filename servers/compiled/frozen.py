"""Deep read-only copies of JSON data: a compiled Snapshot is shared by every request of a
process, so nothing may change it in place."""


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
