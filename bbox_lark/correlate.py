"""Call pairing: which line starts a call, which completes it (DECISIONS §6, §9).

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

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from bbox_lark.ast import Event
from bbox_lark.grammar import vocabulary

#: Line kind -> correlation family, for the kinds whose lines are calls and whose ids
#: register (DECISIONS §6, §9): a completion must be of its start's family (a tool start is
#: completed by a tool line). The kinds are the grammar's line kinds (DECISIONS §8).
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


def call_key(event: Event) -> Key | None:
    """``("id", value)``, else ``("span", value)``, else None."""
    value = event.fields.get("id")
    if isinstance(value, str) and value:
        return ("id", value)
    value = event.fields.get("span")
    if isinstance(value, str) and value:
        return ("span", value)
    return None


def is_start(event: Event) -> bool:
    """True for a line that opens a call: ``t!``, or a registering line whose result is a
    start form (``[running]``, ``[pending]``, ``[started]``, ``[launched]``)."""
    if event.kind == "tool_start":
        return True
    starts = vocabulary().start_statuses
    return event.kind in FAMILIES and event.result is not None and event.result.kind in starts


def _is_final(event: Event) -> bool:
    return event.result is not None and event.result.kind not in vocabulary().start_statuses


@dataclass(slots=True)
class _Open:
    event: Event
    family: str
    open: bool = True


@dataclass(frozen=True, slots=True)
class Pairing:
    """How the calls of a document pair up. Line numbers identify events."""

    #: Every call in order: starts and calls that complete nothing (not completions).
    calls: tuple[Event, ...] = ()
    #: Completion line -> the start line it completes (``o:`` lines included).
    completes: dict[int, int] = field(default_factory=dict)
    #: Starts that nothing completes, in order.
    open_starts: tuple[Event, ...] = ()
    #: ``t~`` lines with no open start to belong to (W001).
    orphan_progress: tuple[Event, ...] = ()
    #: ``o:`` lines whose key no earlier registering line had (W002).
    unknown_observations: tuple[Event, ...] = ()
    #: Starts whose key an earlier call still held open (W024).
    ambiguous: tuple[Event, ...] = ()

    def is_completion(self, event: Event) -> bool:
        return event.line in self.completes


class _OpenCalls:
    """Open calls indexed so that every question the pairing asks costs O(1) amortized:
    by key (oldest first), by key and family, and how many ``t!`` starts of each tool name
    are open. Closed calls stay in the queues until they reach the front (each is removed
    once), so no line ever scans the calls still open (a file with thousands of open
    starts stays linear)."""

    __slots__ = ("by_key", "by_key_family", "open_tool_starts")

    def __init__(self) -> None:
        self.by_key: dict[Key, deque[_Open]] = defaultdict(deque)
        self.by_key_family: dict[tuple[Key, str], deque[_Open]] = defaultdict(deque)
        self.open_tool_starts: dict[str | None, int] = defaultdict(int)

    @staticmethod
    def _front(queue: deque[_Open] | None) -> _Open | None:
        while queue and not queue[0].open:
            queue.popleft()
        return queue[0] if queue else None

    def add(self, call: _Open, key: Key | None) -> None:
        if key is not None:
            self.by_key[key].append(call)
            self.by_key_family[(key, call.family)].append(call)
        if call.event.kind == "tool_start":
            self.open_tool_starts[call.event.name] += 1

    def close(self, call: _Open) -> Event:
        call.open = False
        if call.event.kind == "tool_start":
            self.open_tool_starts[call.event.name] -= 1
        return call.event

    def any_open(self, key: Key, family: str | None = None) -> bool:
        queue = self.by_key.get(key) if family is None else self.by_key_family.get((key, family))
        return self._front(queue) is not None

    def close_oldest(self, key: Key, family: str | None) -> Event | None:
        queue = self.by_key.get(key) if family is None else self.by_key_family.get((key, family))
        call = self._front(queue)
        return self.close(call) if call is not None else None


def pair_calls(events: Iterable[Event]) -> Pairing:
    """Pair the starts and completions of ``events`` (a document's events, in order)."""
    index = _OpenCalls()
    seen: set[Key] = set()
    anonymous: dict[str | None, deque[_Open]] = defaultdict(deque)
    starts: list[_Open] = []
    calls: list[Event] = []
    completes: dict[int, int] = {}
    orphans: list[Event] = []
    unknown: list[Event] = []
    ambiguous: list[Event] = []

    for event in events:
        kind = event.kind
        if kind == "observation":
            key = call_key(event)
            if key is None:
                continue
            if key not in seen:
                unknown.append(event)
            elif _is_final(event):
                started = index.close_oldest(key, None)
                if started is not None:
                    completes[event.line] = started.line
            continue
        if kind == "tool_progress":
            key = call_key(event)
            if key is not None:
                if not index.any_open(key, "tool"):
                    orphans.append(event)
            elif index.open_tool_starts.get(event.name, 0) <= 0:
                orphans.append(event)
            continue
        family = FAMILIES.get(kind)
        if family is None:
            continue
        key = call_key(event)
        if key is None:
            if kind == "tool_start":
                call = _Open(event, family)
                anonymous[event.name].append(call)
                index.add(call, None)
                starts.append(call)
            elif kind == "tool":
                queue = anonymous.get(event.name)
                while queue:
                    call = queue.popleft()
                    if call.open:
                        index.close(call)
                        completes[event.line] = call.event.line
                        break
            if event.line not in completes:
                calls.append(event)
            continue
        if is_start(event):
            if index.any_open(key):
                ambiguous.append(event)
            call = _Open(event, family)
            index.add(call, key)
            starts.append(call)
            calls.append(event)
        else:
            started = index.close_oldest(key, family)
            if started is not None:
                completes[event.line] = started.line
            else:
                calls.append(event)
        seen.add(key)

    return Pairing(
        calls=tuple(calls),
        completes=completes,
        open_starts=tuple(c.event for c in starts if c.open),
        orphan_progress=tuple(orphans),
        unknown_observations=tuple(unknown),
        ambiguous=tuple(ambiguous),
    )
