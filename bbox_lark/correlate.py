"""Call pairing: which line starts a call, which completes it (DECISIONS §6, §9).

This is the correlation semantics of :mod:`bbox_lark.checks.correlation` as a plain
function, so that statistics (and any other consumer) count calls exactly the way the
checks pair them:

* Ids register on ``t t! x c q s p`` lines only. The key is ``id`` if present, else
  ``span``; the two are separate namespaces. Keys match earlier lines only.
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

from bbox_lark.ast import START_RESULT_KINDS, Event

#: Prefixes whose lines are calls and whose ids register.
REGISTERING = frozenset({"t", "t!", "x", "c", "q", "s", "p"})
#: Prefix -> family: a completion must be of the start's family.
FAMILIES = {"t": "t", "t!": "t", "x": "x", "q": "q", "c": "c", "s": "s", "p": "p"}

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
    if event.prefix == "t!":
        return True
    return (
        event.prefix in REGISTERING and event.result is not None and event.result.kind in START_RESULT_KINDS
    )


def _is_final(event: Event) -> bool:
    return event.result is not None and event.result.kind not in START_RESULT_KINDS


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


def pair_calls(events: Iterable[Event]) -> Pairing:
    """Pair the starts and completions of ``events`` (a document's events, in order)."""
    open_calls: dict[Key, deque[_Open]] = defaultdict(deque)
    seen: set[Key] = set()
    anonymous: dict[str | None, deque[_Open]] = defaultdict(deque)
    starts: list[_Open] = []
    calls: list[Event] = []
    completes: dict[int, int] = {}
    orphans: list[Event] = []
    unknown: list[Event] = []
    ambiguous: list[Event] = []

    def close_oldest(key: Key, family: str | None) -> Event | None:
        queue = open_calls.get(key)
        while queue and not queue[0].open:
            queue.popleft()
        if not queue:
            return None
        for call in queue:
            if call.open and (family is None or call.family == family):
                call.open = False
                return call.event
        return None

    for event in events:
        prefix = event.prefix
        if prefix == "o":
            key = call_key(event)
            if key is None:
                continue
            if key not in seen:
                unknown.append(event)
            elif _is_final(event):
                started = close_oldest(key, None)
                if started is not None:
                    completes[event.line] = started.line
            continue
        if prefix == "t~":
            key = call_key(event)
            if key is not None:
                queue = open_calls.get(key)
                if not queue or not any(c.open and c.family == "t" for c in queue):
                    orphans.append(event)
            elif not any(c.open for c in anonymous.get(event.name, ())) and not any(
                c.open and c.event.name == event.name and c.event.prefix == "t!" for c in starts
            ):
                orphans.append(event)
            continue
        if prefix not in REGISTERING:
            continue
        family = FAMILIES[prefix]
        key = call_key(event)
        if key is None:
            if prefix == "t!":
                call = _Open(event, family)
                anonymous[event.name].append(call)
                starts.append(call)
            elif prefix == "t":
                queue = anonymous.get(event.name)
                while queue:
                    call = queue.popleft()
                    if call.open:
                        call.open = False
                        completes[event.line] = call.event.line
                        break
            if event.line not in completes:
                calls.append(event)
            continue
        if is_start(event):
            queue = open_calls[key]
            if any(c.open for c in queue):
                ambiguous.append(event)
            call = _Open(event, family)
            queue.append(call)
            starts.append(call)
            calls.append(event)
        else:
            started = close_oldest(key, family)
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
