"""The read-only mapping a node holds its keyed values in (:class:`FrozenDict`), so that a node
is a value (``==`` and ``hash``); :mod:`bbox_lark.syntax.nodes` re-exports it. Imports nothing
of the package."""

from __future__ import annotations

from typing import Any, NoReturn, TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")


def _read_only(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(
        "a node's values are read-only: make a new node with bbox_lark.syntax.build.edited(node, ...)"
        " (or dict(mapping) for a copy to change)"
    )


def _frozen_value(value: Any) -> Any:
    """A hashable form of a value held in a :class:`FrozenDict` (a header's nested lists and
    maps are hashed as tuples and sorted item tuples)."""
    if isinstance(value, list | tuple):
        return tuple(_frozen_value(item) for item in value)
    if isinstance(value, dict):
        return frozenset((key, _frozen_value(item)) for key, item in value.items())
    return value


class FrozenDict(dict[_K, _V]):
    """The read-only mapping a node holds its keyed values in (``Event.fields``,
    ``Event.metrics``, ``Header.fields``, ``Header.key_lines``): a ``dict`` for every reader
    (``json.dumps``, ``isinstance(x, dict)``, ``.get`` at C speed), but every method that
    would change it raises TypeError, and it hashes by value, so that a node is a value
    (``==`` and ``hash``). An edit makes a new node (:func:`bbox_lark.syntax.build.edited`); a list
    value of an event is a tuple."""

    __slots__ = ()

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _read_only

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset((key, _frozen_value(value)) for key, value in self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict[_K, _V]:
        return self

    def __deepcopy__(self, memo: Any) -> FrozenDict[_K, _V]:
        return self

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


#: The empty :class:`FrozenDict` (most lines have no fields).
NO_FIELDS: FrozenDict[str, Any] = FrozenDict()


def frozen_fields(fields: dict[str, Any]) -> FrozenDict[str, Any]:
    """``fields`` as a :class:`FrozenDict`, each list value a tuple."""
    if not fields:
        return NO_FIELDS
    if type(fields) is FrozenDict:
        return fields
    for value in fields.values():
        if type(value) is list:
            return FrozenDict({k: tuple(v) if type(v) is list else v for k, v in fields.items()})
    return FrozenDict(fields)
