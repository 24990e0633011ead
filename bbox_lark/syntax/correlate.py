"""Call pairing: which line starts a call, which completes it (docs/reference.md#correlation).

This is the correlation semantics of :mod:`bbox_lark.checks.correlation` as a plain
function, so that statistics (and any other consumer) count calls exactly the way the
checks pair them:

* Ids register on ``t t! x c q s p`` lines only (the kinds in :data:`FAMILIES`). The key
  is ``id`` if present, else ``span``; the two are separate namespaces. Keys match earlier lines only.
* A call is *open* from a start (a ``t!`` line, or a call whose result is ``[running]``,
  ``[pending]``, ``[started]`` or ``[launched]``) until a completion: an ``o:`` with a final
  result, or a later line of the same family with the same key (``t!``/``t`` -> ``t``,
  ``x`` -> ``x``, ``q`` -> ``q``, ``c`` -> ``c``). A completion closes the *oldest* open call
  with its key.
* A ``t!`` without id or span is completed by the next ``t:`` of the same tool name that has
  no id or span either.
* A ``t~`` progress line is never a call; it needs an open ``t!`` start.

A *call* is every registering line that does not complete an earlier start: a start and its
completion are one call.
"""

from __future__ import annotations

import bisect
import hashlib
import sys
from array import array
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import field
from typing import ClassVar

from bbox_lark._classes import dataclass
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Event
from bbox_lark.syntax.record import Record

#: Line kind -> correlation family, for the kinds whose lines are calls and whose ids
#: register (docs/reference.md#correlation): a completion must be of its start's family (a tool start is
#: completed by a tool line). The kinds are the grammar's line kinds (docs/reference.md#line-kinds).
FAMILIES = {
    "tool": "tool",
    "tool_start": "tool",
    "subagent": "subagent",
    "question": "question",
    "mcp": "mcp",
    "skill": "skill",
    "plan": "plan",
}

Key = tuple[str, str]
_Slot = Key | tuple[Key, str]

#: True where ``hash`` has 64 bits (:class:`SeenKeys`).
_WIDE_HASH = sys.hash_info.width >= 64


#: The fields a call's key is read from, the first present one winning (docs/reference.md#correlation).
KEY_FIELDS = ("id", "span")


def call_key(event: Event | Record) -> Key | None:
    """``("id", value)``, else ``("span", value)``, else None."""
    fields = event.fields
    for name in KEY_FIELDS:
        value = fields.get(name)
        if isinstance(value, str) and value:
            return (name, value)
    return None


def result_kind(event: Event | Record) -> str | None:
    """The kind of the line's result (``Result.kind``), None without one: a record holds it
    (``check`` builds no result), a node's result gives it."""
    if isinstance(event, Record):
        return event.result_kind
    result = event.result
    return result.kind if result is not None else None


def is_start(event: Event) -> bool:
    """True for a line that opens a call: ``t!``, or a registering line whose result is a
    start form (``[running]``, ``[pending]``, ``[started]``, ``[launched]``)."""
    if event.kind == "tool_start":
        return True
    starts = vocabulary().start_statuses
    return event.kind in FAMILIES and event.result is not None and event.result.kind in starts


class OpenCall:
    """A call that is open: what the pairing keeps of its start line (its number, column,
    prefix and name, its family and key), not the line's node, so that a never-completed
    call costs a small record until the end of the file, whatever its line held."""

    __slots__ = ("col", "family", "key", "line", "name", "open", "prefix", "tool_start")

    def __init__(self, event: Event | Record, family: str, key: Key | None) -> None:
        self.line = event.line
        self.col = event.col
        self.prefix = event.prefix
        self.name = event.name
        self.family = family
        self.key = key
        self.tool_start = event.kind == "tool_start"
        self.open = True

    def __repr__(self) -> str:
        return f"OpenCall({self.prefix}:{self.name} line {self.line}, key {self.key})"


@dataclass(frozen=True, slots=True)
class Pairing:
    """How the calls of a document pair up. Line numbers identify events."""

    #: Every call in order: starts and calls that complete nothing (not completions).
    calls: tuple[Event, ...] = ()
    #: Completion line -> the start line it completes (``o:`` lines included).
    completes: dict[int, int] = field(default_factory=dict)
    #: Starts that nothing completes, in order (their line, prefix, name: :class:`OpenCall`).
    open_starts: tuple[OpenCall, ...] = ()
    #: ``t~`` lines with no open start to belong to (W001).
    orphan_progress: tuple[Event, ...] = ()
    #: ``o:`` lines whose key no earlier registering line had (W002).
    unknown_observations: tuple[Event, ...] = ()
    #: Starts whose key an earlier call still held open (W024).
    ambiguous: tuple[Event, ...] = ()

    def is_completion(self, event: Event) -> bool:
        return event.line in self.completes


class OpenCallCalls:
    """Open calls indexed so that every question the pairing asks costs O(1) amortized:
    by key (oldest first), by key and family, and how many ``t!`` starts of each tool name
    are open. A closed call leaves its queues once it reaches their front, and an empty
    queue is dropped, so no line ever scans the calls still open (a file with thousands of
    open starts stays linear) and closed calls are not kept."""

    __slots__ = ("by_key", "by_key_family", "open_tool_starts")

    def __init__(self) -> None:
        # A key's open calls, oldest first: one call alone (most keys), a queue when an
        # earlier call of the key is still open (a queue costs about 600 bytes).
        self.by_key: dict[Key, OpenCall | deque[OpenCall]] = {}
        self.by_key_family: dict[tuple[Key, str], OpenCall | deque[OpenCall]] = {}
        self.open_tool_starts: dict[str | None, int] = defaultdict(int)

    @staticmethod
    def _front(held: OpenCall | deque[OpenCall] | None) -> OpenCall | None:
        if held is None:
            return None
        if isinstance(held, OpenCall):
            return held if held.open else None
        while held and not held[0].open:
            held.popleft()
        return held[0] if held else None

    @staticmethod
    def _push(slots: dict[_Slot, OpenCall | deque[OpenCall]], at: _Slot, call: OpenCall) -> None:
        held = slots.get(at)
        if held is None:
            slots[at] = call
        elif isinstance(held, OpenCall):
            slots[at] = deque((held, call)) if held.open else call
        else:
            held.append(call)

    def add(self, call: OpenCall, key: Key | None) -> None:
        if key is not None:
            self._push(self.by_key, key, call)  # type: ignore[arg-type]
            self._push(self.by_key_family, (key, call.family), call)  # type: ignore[arg-type]
        if call.tool_start:
            self.open_tool_starts[call.name] += 1

    def close(self, call: OpenCall) -> int:
        """Close ``call``; its start's line."""
        call.open = False
        if call.tool_start:
            self.open_tool_starts[call.name] -= 1
        key = call.key
        if key is not None:
            if self._front(self.by_key.get(key)) is None:
                self.by_key.pop(key, None)
            slot = (key, call.family)
            if self._front(self.by_key_family.get(slot)) is None:
                self.by_key_family.pop(slot, None)
        return call.line

    def any_open(self, key: Key, family: str | None = None) -> bool:
        held = self.by_key.get(key) if family is None else self.by_key_family.get((key, family))
        return self._front(held) is not None

    def oldest(self, key: Key, family: str | None) -> OpenCall | None:
        held = self.by_key.get(key) if family is None else self.by_key_family.get((key, family))
        return self._front(held)


_NO_DIGESTS = array("Q")


class SeenKeys:
    """The call keys seen so far (for W002: an observation whose key no earlier line had).

    Memory: each key is kept as a 64-bit digest, 8 bytes a key, in 256 sorted
    arrays (one per value of the digest's first byte), plus the digests not yet sorted in
    (at most :attr:`RECENT`, or a 128th of the keys when that is more). Sorting them in
    rebuilds one array at a time, so the peak is the keys' size and one array more, never
    twice the keys' size. A log of a million distinct ids holds about 8 MB here. Two keys
    colliding on 64 bits (about one chance in 10^7 for ten million keys) would make an
    observation of the one count as seen.

    The digest is Python's own ``hash`` of the key where it has 64 bits (keys never leave
    the process, and string hashes are salted per process, so no input can aim at a
    collision), else a BLAKE2b digest: ``hash`` costs a tenth of it."""

    __slots__ = ("_buckets", "_count", "_recent")

    #: A ClassVar: compiled (setup.py), a bare class attribute of a native class would be a
    #: per-instance default, missing from the class itself (``SeenKeys.RECENT``).
    RECENT: ClassVar[int] = 4096

    def __init__(self) -> None:
        self._recent: set[int] = set()
        # One empty array for all: a bucket is never changed in place (_sort_in replaces
        # it), and a checker is made for every file, most of them small.
        self._buckets: list[array[int]] = [_NO_DIGESTS] * 256
        self._count = 0

    @staticmethod
    def _digest(key: Key) -> int:
        if _WIDE_HASH:
            return hash(key) & 0xFFFF_FFFF_FFFF_FFFF
        data = f"{key[0]}={key[1]}".encode("utf-8", "surrogateescape")
        return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")

    def add(self, key: Key) -> None:
        value = hash(key) & 0xFFFF_FFFF_FFFF_FFFF if _WIDE_HASH else self._digest(key)  # _digest, inline
        recent = self._recent
        if value in recent or self._has(value):
            return
        recent.add(value)
        if len(recent) >= self.RECENT and len(recent) >= self._count >> 7:
            self._sort_in()

    def _sort_in(self) -> None:
        """Move the recent digests into their arrays, one array rebuilt at a time."""
        ordered = sorted(self._recent)
        self._recent.clear()
        buckets = self._buckets
        start, size = 0, len(ordered)
        while start < size:
            top = ordered[start] >> 56
            end = bisect.bisect_left(ordered, (top + 1) << 56, start)
            merged = buckets[top].tolist()
            merged += ordered[start:end]
            merged.sort()
            buckets[top] = array("Q", merged)
            start = end
        self._count += size

    def __contains__(self, key: Key) -> bool:
        return self._has(self._digest(key))

    def holds(self, key: Key) -> bool:
        """Whether the key was seen (what :class:`RecentKeys` answers with None when it
        cannot tell)."""
        return key in self

    def _has(self, value: int) -> bool:
        if value in self._recent:
            return True
        bucket = self._buckets[value >> 56]
        index = bisect.bisect_left(bucket, value)
        return index < len(bucket) and bucket[index] == value


class RecentKeys:
    """The call keys of the last two parts of a file checked in parts (``check --jobs``),
    in place of :class:`SeenKeys` in the process that pairs the parts' calls: it keeps no
    key history, so its memory does not grow with the file. A key it does not hold may
    still have been seen in an earlier part: :meth:`Pairer.feed` then says ``DEFERRED``,
    and the caller settles it after a second look at the earlier parts
    (:func:`bbox_lark.checks.parallel.check_split`)."""

    __slots__ = ("_current", "_parts", "_previous")

    def __init__(self) -> None:
        self._current: set[Key] = set()
        self._previous: set[Key] = set()
        self._parts = 1  # parts begun so far

    def add(self, key: Key) -> None:
        self._current.add(key)

    def holds(self, key: Key) -> bool | None:
        """True when the key was seen in this part or the one before; False when it was not
        and those two parts are all there was so far; else None (not known here)."""
        if key in self._current or key in self._previous:
            return True
        return False if self._parts <= 2 else None

    def next_part(self) -> None:
        """The next part begins: forget the keys of the part before the one just read."""
        self._previous, self._current = self._current, set()
        self._parts += 1


#: What :meth:`Pairer.feed` says about an event (the first three report nothing: a caller
#: may test ``outcome <= COMPLETION``).
OTHER, CALL, COMPLETION, ORPHAN, UNKNOWN, AMBIGUOUS, DEFERRED = range(7)


class Pairer:
    """The pairing as a stream: :meth:`feed` each event in order, then :attr:`open_starts`.

    It keeps the open calls (each a small :class:`OpenCall`, not its line's node), the keys
    seen (:class:`SeenKeys`) and, per tool name, the open ``t!`` starts without a key;
    nothing else."""

    __slots__ = ("_anonymous", "_index", "_open", "_seen", "_starts", "completed")

    def __init__(self, seen: SeenKeys | RecentKeys | None = None) -> None:
        self._index = OpenCallCalls()
        self._starts = vocabulary().start_statuses
        self._seen = seen if seen is not None else SeenKeys()
        self._anonymous: dict[str | None, deque[OpenCall]] = {}
        self._open: dict[int, OpenCall] = {}  # by id(), in the order the calls started
        #: After :meth:`feed` returned ``COMPLETION``: the line of the start it completed.
        self.completed = 0

    def _start(self, call: OpenCall) -> None:
        self._index.add(call, call.key)
        self._open[id(call)] = call

    def _close(self, call: OpenCall) -> int:
        del self._open[id(call)]
        return self._index.close(call)

    def _close_oldest(self, key: Key, family: str | None) -> int | None:
        call = self._index.oldest(key, family)
        return self._close(call) if call is not None else None

    def feed(self, event: Event | Record) -> int:
        """``CALL`` (a call that completes nothing, starts included), ``COMPLETION`` (the
        start's line is in :attr:`completed`), ``ORPHAN`` (a ``t~`` with no open start),
        ``UNKNOWN`` (an ``o:`` whose key no earlier line had), ``AMBIGUOUS`` (a start whose
        key an earlier call still holds: also a call), ``DEFERRED`` (with
        :class:`RecentKeys`: an ``o:`` whose key is not open and not recent, so whether an
        earlier line had it is not known here), or ``OTHER``."""
        kind = event.kind
        if kind == "observation":
            key = call_key(event)
            if key is None:
                return OTHER
            oldest = self._index.oldest(key, None)
            if oldest is None:
                # Not open: nothing to complete, so the key's history only decides W002. (An
                # open key was seen: the line that opened it registered it.)
                held = self._seen.holds(key)
                return OTHER if held else UNKNOWN if held is False else DEFERRED
            result = result_kind(event)
            if result is not None and result not in self._starts:  # a final result
                self.completed = self._close(oldest)
                return COMPLETION
            return OTHER
        if kind == "tool_progress":
            key = call_key(event)
            if key is not None:
                if not self._index.any_open(key, "tool"):
                    return ORPHAN
            elif self._index.open_tool_starts.get(event.name, 0) <= 0:
                return ORPHAN
            return OTHER
        family = FAMILIES.get(kind)
        if family is None:
            return OTHER
        key = call_key(event)
        if key is None:
            if kind == "tool_start":
                call = OpenCall(event, family, None)
                self._anonymous.setdefault(event.name, deque()).append(call)
                self._start(call)
            elif kind == "tool":
                queue = self._anonymous.get(event.name)
                while queue:
                    call = queue.popleft()
                    if call.open:
                        self.completed = self._close(call)
                        if not queue:
                            del self._anonymous[event.name]
                        return COMPLETION
                if queue is not None:
                    del self._anonymous[event.name]
            return CALL
        outcome = CALL
        result = result_kind(event)
        if kind == "tool_start" or (result is not None and result in self._starts):  # is_start
            if self._index.any_open(key):
                outcome = AMBIGUOUS
            self._start(OpenCall(event, family, key))
        elif (key, family) in self._index.by_key_family:  # else no open call of its own to close
            started = self._close_oldest(key, family)
            if started is not None:
                self.completed = started
                outcome = COMPLETION
        self._seen.add(key)
        return outcome

    @property
    def open_starts(self) -> list[OpenCall]:
        """The starts nothing has completed yet, in order."""
        return list(self._open.values())


def pair_calls(events: Iterable[Event]) -> Pairing:
    """Pair the starts and completions of ``events`` (a document's events, in order)."""
    pairer = Pairer()
    calls: list[Event] = []
    completes: dict[int, int] = {}
    orphans: list[Event] = []
    unknown: list[Event] = []
    ambiguous: list[Event] = []
    for event in events:
        outcome = pairer.feed(event)
        if outcome == OTHER:
            continue
        if outcome == CALL:
            calls.append(event)
        elif outcome == COMPLETION:
            completes[event.line] = pairer.completed
        elif outcome == ORPHAN:
            orphans.append(event)
        elif outcome == UNKNOWN:
            unknown.append(event)
        else:
            ambiguous.append(event)
            calls.append(event)
    return Pairing(
        calls=tuple(calls),
        completes=completes,
        open_starts=tuple(pairer.open_starts),
        orphan_progress=tuple(orphans),
        unknown_observations=tuple(unknown),
        ambiguous=tuple(ambiguous),
    )
