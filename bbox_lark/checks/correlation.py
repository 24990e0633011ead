"""Call correlation: starts, progress, observations and completions (DECISIONS §6, §9).

A call is *open* from a start (a ``t!`` line, or a call whose result is ``[running]``,
``[pending]``, ``[started]`` or ``[launched]``) until a completion: an ``o:`` with a final
result, or a later line of the same family with the same key (``t!``/``t`` -> ``t``,
``x`` -> ``x``, ``q`` -> ``q``, ``c`` -> ``c``). Keys are ``id`` if present, else ``span``
(separate namespaces), and are matched only against earlier lines. Every completion closes
the *oldest* open call with its key.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass

from bbox_lark.ast import START_RESULT_KINDS, Event
from bbox_lark.checks import Context, describe, example, rule

FAMILY = "correlation"

#: Prefixes whose ids register a call.
REGISTERING = frozenset({"t", "t!", "x", "c", "q", "s", "p"})
#: Prefix -> family for completions by a later line of the same family.
FAMILIES = {"t": "t", "t!": "t", "x": "x", "q": "q", "c": "c", "s": "s", "p": "p"}

describe(
    "W001",
    "progress-without-start",
    "warning",
    "A `t~` progress line matches no open tool start (by id, span, or tool name).",
    "Progress belongs to a running call; without one it cannot be attributed.",
    example("t~:test span=t200 [64/128 passed]\n"),
    example(
        "t!:test span=t200 cargo test → [running]\n"
        "t~:test span=t200 [64/128 passed]\n"
        "t:test span=t200 → [ok]\n"
    ),
    family=FAMILY,
)
describe(
    "W002",
    "unknown-call-id",
    "warning",
    "An `o:` observation refers to a call id (or span) no earlier line registered.",
    "An observation must follow the call it reports on; an unknown id is a typo or a lost line.",
    example("o: id=call_9 → [ok]\n"),
    example("t:test id=call_9 → [running]\no: id=call_9 → [ok]\n"),
    family=FAMILY,
)
describe(
    "W007",
    "tool-start-never-completed",
    "warning",
    "A `t!` tool start is never completed (by `t:`, or an `o:` with a final result).",
    "A start without an end means the log was cut off or a result was lost.",
    example("t!:test id=call_1 cargo test → [running]\n"),
    example("t!:test id=call_1 cargo test → [running]\no: id=call_1 → [ok]\n"),
    family=FAMILY,
)
describe(
    "W024",
    "ambiguous-call-id",
    "warning",
    "A call starts with an id (or span) that an earlier call still holds open.",
    "Completions close the oldest open call, so the pairing is a guess. Real writers truncate"
    " ids (`id=toolu_01`); make ids unique.",
    example(
        "t!:Read id=toolu_01 a.rs → [running]\nt!:Read id=toolu_01 b.rs → [running]\n"
        "o: id=toolu_01 → [ok]\no: id=toolu_01 → [ok]\n"
    ),
    example(
        "t!:Read id=toolu_01a a.rs → [running]\nt!:Read id=toolu_01b b.rs → [running]\n"
        "o: id=toolu_01a → [ok]\no: id=toolu_01b → [ok]\n"
    ),
    family=FAMILY,
)
describe(
    "W025",
    "call-never-completed",
    "warning",
    "A call that started (`[running]`, `[pending]`, `[started]`, `[launched]`) is never completed.",
    "Subagents, questions and MCP calls left open mean the log was cut off or a result was lost."
    " (`t!` starts have their own code, W007.)",
    example('x:explore id=sub_1 "find auth failures" → [launched]\n'),
    example('x:explore id=sub_1 "find auth failures" → [launched]\no: id=sub_1 → summary="3 found"\n'),
    family=FAMILY,
)


@dataclass(slots=True)
class _Call:
    event: Event
    family: str
    open: bool = True


def _key(event: Event) -> tuple[str, str] | None:
    value = event.fields.get("id")
    if isinstance(value, str) and value:
        return ("id", value)
    value = event.fields.get("span")
    if isinstance(value, str) and value:
        return ("span", value)
    return None


def _key_col(event: Event, key: tuple[str, str]) -> int:
    node = next((n for n in event.field_nodes if n.key == key[0]), None)
    return node.value_col if node is not None else 1


def _is_final(event: Event) -> bool:
    return event.result is not None and event.result.kind not in START_RESULT_KINDS


@rule
def correlation_checks(ctx: Context) -> None:
    open_calls: dict[tuple[str, str], deque[_Call]] = defaultdict(deque)
    seen: set[tuple[str, str]] = set()
    anonymous: dict[str | None, deque[_Call]] = defaultdict(deque)
    starts: list[_Call] = []

    def close_oldest(key: tuple[str, str], family: str | None) -> bool:
        queue = open_calls.get(key)
        while queue and not queue[0].open:
            queue.popleft()
        if not queue:
            return False
        for call in queue:
            if call.open and (family is None or call.family == family):
                call.open = False
                return True
        return False

    for event in ctx.document.events:
        prefix = event.prefix
        if prefix == "o":
            key = _key(event)
            if key is None:
                continue
            if key not in seen:
                ctx.report(
                    "W002",
                    event.line,
                    _key_col(event, key),
                    f"observation for unknown call {key[0]}={key[1]}",
                )
            elif _is_final(event):
                close_oldest(key, None)
            continue
        if prefix == "t~":
            key = _key(event)
            if key is not None:
                queue = open_calls.get(key)
                if not queue or not any(c.open and c.family == "t" for c in queue):
                    ctx.report(
                        "W001",
                        event.line,
                        _key_col(event, key),
                        f"progress for {key[0]}={key[1]} with no open start",
                    )
            elif not any(c.open for c in anonymous.get(event.name, ())) and not any(
                c.open and c.event.name == event.name and c.event.prefix == "t!" for c in starts
            ):
                ctx.report("W001", event.line, 1, f"progress for tool {event.name!r} with no open start")
            continue
        if prefix not in REGISTERING:
            continue
        family = FAMILIES[prefix]
        is_start = prefix == "t!" or (event.result is not None and event.result.kind in START_RESULT_KINDS)
        key = _key(event)
        if key is None:
            if prefix == "t!":
                call = _Call(event, family)
                anonymous[event.name].append(call)
                starts.append(call)
            elif prefix == "t":
                queue = anonymous.get(event.name)
                while queue:
                    call = queue.popleft()
                    if call.open:
                        call.open = False
                        break
            continue
        if is_start:
            queue = open_calls[key]
            if any(c.open for c in queue):
                ctx.report(
                    "W024",
                    event.line,
                    _key_col(event, key),
                    f"{key[0]}={key[1]} is already held by an open call",
                )
            call = _Call(event, family)
            queue.append(call)
            starts.append(call)
        else:
            close_oldest(key, family)
        seen.add(key)

    for call in starts:
        if call.open:
            event = call.event
            if event.prefix == "t!":
                ctx.report("W007", event.line, 1, f"tool start `t!:{event.name}` is never completed")
            else:
                ctx.report("W025", event.line, 1, f"`{event.prefix}:` call started here is never completed")
