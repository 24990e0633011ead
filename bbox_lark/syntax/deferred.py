"""Parts of a parsed event built on first access (docs/design.md, "Parts built on read").

The parser (:func:`bbox_lark.syntax.shape.event_node`) leaves an event's ``field_nodes``,
``args`` and ``metric_nodes`` unbuilt when ``check`` does not read them: the slot holds a
:class:`Deferred`, and the class attribute of the slot (:class:`_BuiltOnRead`, set by
:func:`build_on_read` on each family of :mod:`bbox_lark.syntax.nodes` that may hold one) builds
them on the first read. This module imports nothing of the package: it is machinery the
nodes use, not a node.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MemberDescriptorType
from typing import Any


class Deferred(tuple[Any, ...]):
    """Parts of a parsed event the parser left unbuilt: ``(read, *state)``, where
    ``read(*state)`` gives the event's ``(field_nodes, args, metric_nodes)``.

    The parser (:func:`bbox_lark.syntax.shape.event_node`) puts one such object in each of those
    slots that ``check`` does not read (it reads ``fields``, ``quote_faults``, ``metrics``
    and ``result``, which are built at once); the first read of any of them calls ``read``
    (the parse side's reader, from the source and the offsets the scan found) and stores its
    parts in every slot that still holds this object. So the node reads, compares, prints,
    pickles and ``dataclasses.replace``-s as if they had been built with it: every way to
    look at a slot goes through :class:`_BuiltOnRead`. A tuple, so that the parser passes it
    where the class's annotation says ``tuple[...]``; nothing outside this module sees one.
    """

    __slots__ = ()


#: The slots of an event that may hold a :class:`Deferred`, in the order ``read`` gives them.
DEFERRED_PARTS = ("field_nodes", "args", "metric_nodes")


class _BuiltOnRead:
    """The class attribute of a :data:`DEFERRED_PARTS` slot: reads the slot (through its own
    member descriptor, kept here), building the deferred parts first when it holds a
    :class:`Deferred`. ``slots`` are the member descriptors of the class's
    :data:`DEFERRED_PARTS`, in that order (None for a part its family does not hold: ``read``
    gives it empty). Writes go to the slot unchanged (the frozen ``__setattr__`` still
    refuses them; ``__init__`` and unpickling write through the slot)."""

    __slots__ = ("slot", "slots")

    def __init__(self, slot: Any, slots: tuple[Any, ...]) -> None:
        self.slot = slot
        self.slots = slots

    def __get__(self, node: Any, owner: type | None = None) -> Any:
        if node is None:
            return self
        value = self.slot.__get__(node, owner)
        if type(value) is Deferred:
            read: Callable[..., tuple[Any, ...]] = value[0]
            for slot, part in zip(self.slots, read(*value[1:]), strict=True):
                if slot is not None and slot.__get__(node, owner) is value:
                    slot.__set__(node, part)
            value = self.slot.__get__(node, owner)
        return value

    def __set__(self, node: Any, value: Any) -> None:
        self.slot.__set__(node, value)

    def __delete__(self, node: Any) -> None:
        self.slot.__delete__(node)


def _member(cls: type, name: str) -> Any:
    """The slot's member descriptor of ``name`` in ``cls`` (or a base), or None."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            found = klass.__dict__[name]
            return found if isinstance(found, MemberDescriptorType) else None
    return None


def build_on_read(cls: type) -> None:
    """Make each :data:`DEFERRED_PARTS` slot of the event class ``cls`` build on read."""
    # After every event class is made: their ``__init__`` (``_classes._fast_frozen_init``)
    # keeps writing through the plain slot descriptors it found then. Each family gets its
    # own descriptors (``field_nodes``' slot is the base's, the others its own).
    slots = tuple(_member(cls, name) for name in DEFERRED_PARTS)
    for name, slot in zip(DEFERRED_PARTS, slots, strict=True):
        if slot is not None:
            setattr(cls, name, _BuiltOnRead(slot, slots))
