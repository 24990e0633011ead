"""Call correlation checks (docs/reference.md#correlation).

The pairing itself (what opens a call, what completes it, which key it goes by) lives in
:mod:`bbox_lark.syntax.correlate`, shared with the statistics; these checks report what it found.
"""

from __future__ import annotations

from bbox_lark.checks.base import Context, Rule, describe, example, kinds, rule, shorten
from bbox_lark.syntax.correlate import (
    AMBIGUOUS,
    COMPLETION,
    DEFERRED,
    FAMILIES,
    KEY_FIELDS,
    ORPHAN,
    UNKNOWN,
    Key,
    Pairer,
    RecentKeys,
    call_key,
)
from bbox_lark.syntax.record import Record

FAMILY = "correlation"

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
    fix="Give the `t~` line the id (or span) of an earlier `t!` start of the same call.",
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
    fix="Give the `o:` line the id (or span) of an earlier call it reports on.",
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
    fix="Complete the start: a later `t:` line (or an `o:` with a final result) with the same id or span.",
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
    fix="Give every call its own id; complete the earlier call before reusing its id.",
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
    fix="Complete the call: an `o:` line (or a later line of the same kind) with its id and a final result.",
    family=FAMILY,
)


def _key_col(event: Record, key: Key | None) -> int:
    if key is None:
        return 1
    node = next((n for n in event.field_nodes if n.key == key[0]), None)
    return node.value_col if node is not None else 1


@rule
class CorrelationRule(Rule):
    """The pairing of :mod:`bbox_lark.syntax.correlate` as a stream
    (:class:`~bbox_lark.syntax.correlate.Pairer`):
    W001, W002 and W024 when their line comes, W007 and W025 for the starts still open at
    the end. It holds the open calls and the keys seen (about 8 bytes a
    key: :class:`~bbox_lark.syntax.correlate.SeenKeys`); a file checked in parts keeps only the
    last parts' keys and settles the rest at the end (:meth:`defer_history`)."""

    family = FAMILY
    keys = frozenset(KEY_FIELDS)
    #: The lines that can open, complete or refer to a call.
    sees = kinds("observation", "tool_progress", *FAMILIES)

    def __init__(self) -> None:
        self.pairer = Pairer()
        #: With :meth:`defer_history`: the ``o:`` lines whose W002 is not settled yet, as
        #: (line, column of the key, key).
        self.deferred: list[tuple[int, int, Key]] = []

    def defer_history(self, keys: RecentKeys) -> None:
        """Pair with ``keys`` (the last parts' keys only) instead of the whole history: an
        observation whose key is neither open nor recent goes to :attr:`deferred`, for
        :meth:`settle` once the earlier lines have been looked at again."""
        self.pairer = Pairer(keys)

    def settle(self, first_seen: dict[Key, int], ctx: Context) -> None:
        """W002 for each deferred observation whose key no earlier line had, given the line
        where each deferred key was first seen (missing: never)."""
        for line, col, key in self.deferred:
            seen = first_seen.get(key)
            if seen is None or seen >= line:
                self._unknown(line, col, key, ctx)
        self.deferred = []

    @staticmethod
    def _unknown(line: int, col: int, key: Key, ctx: Context) -> None:
        ctx.report("W002", line, col, f"observation for unknown call {key[0]}={key[1]}")

    def node(self, event: Record, ctx: Context) -> None:
        outcome = self.pairer.feed(event)
        if outcome <= COMPLETION:  # OTHER, CALL, COMPLETION: nothing to report (most lines)
            return
        if outcome == ORPHAN:
            key = call_key(event)
            what = f"{key[0]}={shorten(key[1])}" if key else f"tool {shorten(event.name or '')!r}"
            ctx.report("W001", event.line, _key_col(event, key), f"progress for {what} with no open start")
        elif outcome in (UNKNOWN, DEFERRED):
            key = call_key(event)
            assert key is not None
            if outcome == UNKNOWN:
                self._unknown(event.line, _key_col(event, key), key, ctx)
            else:
                self.deferred.append((event.line, _key_col(event, key), key))
        elif outcome == AMBIGUOUS:
            key = call_key(event)
            assert key is not None
            ctx.report(
                "W024", event.line, _key_col(event, key), f"{key[0]}={key[1]} is already held by an open call"
            )

    def finish(self, ctx: Context) -> None:
        for event in self.pairer.open_starts:
            if event.prefix == "t!":
                ctx.report(
                    "W007", event.line, 1, f"tool start `t!:{shorten(event.name or '')}` is never completed"
                )
            else:
                ctx.report("W025", event.line, 1, f"`{event.prefix}:` call started here is never completed")
