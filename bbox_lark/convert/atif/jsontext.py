"""JSON text of a trajectory, exactly as ``json.dumps(value, indent=2, ensure_ascii=…)``
writes it, in pieces and about four times faster.

Python's ``json`` falls back to its pure-Python encoder whenever ``indent`` is set: a chain of
generators, every piece of output passing up through one ``yield from`` per level of nesting.
A trajectory is deep (``steps[i].extra.bbox.lines[j].fields[k]``) and made of small values,
so that chain is most of the cost. This encoder walks the value with one plain recursive
function, writes a container's scalar members in one piece, and escapes strings with the
same C function ``json`` uses, so the text is the same character for character (a test
compares the two on generated values and on every trajectory of the test corpus).

:func:`pieces` gives the text in pieces of about one top-level item each (one step of
``steps``), so a writer can check and write them without holding a second copy of the whole
text, and can drop each piece once written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

__all__ = ["dumps", "pieces", "strings"]

#: The items of containers at this depth are joined into one piece each (the top-level
#: object is depth 0, its ``steps`` depth 1: one piece per step).
_PIECE_DEPTH = 1


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    """A dict key as ``json`` turns it into a string (it raises for any other type)."""
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def pieces(
    value: Any, *, ensure_ascii: bool = False, sink: Callable[[str], object] | None = None
) -> list[str]:
    """The text of ``json.dumps(value, indent=2, ensure_ascii=ensure_ascii)`` as a list of
    strings whose concatenation is that text (one piece per item of the top-level containers).
    With ``sink``, each piece is handed to it as soon as it is made (one step at a time) and
    what is left is returned: the text is never held whole.
    Values of types ``json`` cannot write raise its ``TypeError``; a value that contains
    itself raises ``ValueError`` (``RecursionError`` for one too deep, as ``json`` may)."""
    escape: Callable[[str], str] = encode_basestring_ascii if ensure_ascii else encode_basestring
    out: list[str] = []
    append = out.append
    pads = ["\n"]
    active: set[int] = set()

    def pad(level: int) -> str:
        while len(pads) <= level:
            pads.append("\n" + "  " * len(pads))
        return pads[level]

    def done(mark: int) -> None:
        """An item of the top-level containers is complete: one piece (handed on)."""
        out[mark:] = ["".join(out[mark:])]
        if sink is not None:
            for piece in out:
                sink(piece)
            out.clear()

    def scalar(item: Any) -> str | None:
        """The text of a scalar, or None for a container (or a type json refuses)."""
        if isinstance(item, str):
            return escape(item)
        if item is None:
            return "null"
        if item is True:
            return "true"
        if item is False:
            return "false"
        if isinstance(item, int):
            return int.__repr__(item)
        if isinstance(item, float):
            return _float(item)
        return None

    def container(item: Any, level: int) -> None:
        if isinstance(item, dict):
            if not item:
                append("{}")
                return
            marker = id(item)
            if marker in active:
                raise ValueError("Circular reference detected")
            active.add(marker)
            inner = pad(level + 1)
            comma = "," + inner
            separator = "{" + inner
            for key, member in item.items():
                head = separator + escape(key if key.__class__ is str else _key(key)) + ": "
                separator = comma
                if member.__class__ is str:
                    append(head + escape(member))
                    continue
                text = scalar(member)
                if text is not None:
                    append(head + text)
                    continue
                append(head)
                mark = len(out)
                container(member, level + 1)
                if level == _PIECE_DEPTH:
                    done(mark)
            append(pad(level) + "}")
            active.discard(marker)
            return
        if isinstance(item, (list, tuple)):
            if not item:
                append("[]")
                return
            marker = id(item)
            if marker in active:
                raise ValueError("Circular reference detected")
            active.add(marker)
            inner = pad(level + 1)
            comma = "," + inner
            separator = "[" + inner
            for member in item:
                if member.__class__ is str:
                    append(separator + escape(member))
                    separator = comma
                    continue
                text = scalar(member)
                if text is not None:
                    append(separator + text)
                    separator = comma
                    continue
                append(separator)
                separator = comma
                mark = len(out)
                container(member, level + 1)
                if level == _PIECE_DEPTH:
                    done(mark)
            append(pad(level) + "]")
            active.discard(marker)
            return
        # Not a JSON value: json.dumps raises the TypeError that names its type.
        json.dumps(item)
        raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")

    text = scalar(value)
    if text is not None:
        return [text]
    container(value, 0)
    return out


def strings(value: Any) -> Iterator[str]:
    """Every string in ``value`` (the keys of its objects included), in no particular order.
    A list of another class than ``list`` (one that makes its items as it is iterated, as a
    trajectory's steps do) is read an item at a time."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for key, member in item.items():
                if isinstance(key, str):
                    yield key
                todo.append(member)
        elif item.__class__ is list or isinstance(item, tuple):
            todo.extend(item)
        elif isinstance(item, list):
            todo.append(iter(item))
        elif isinstance(item, Iterator):
            member = next(item, _END)
            if member is not _END:
                todo.append(item)
                todo.append(member)


_END = object()


def dumps(value: Any, *, ensure_ascii: bool = False) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=ensure_ascii)``, faster."""
    return "".join(pieces(value, ensure_ascii=ensure_ascii))
