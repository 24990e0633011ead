"""The report's first pass: what the page needs to know before it writes its first line.

The page is written in one stream (:mod:`bbox_lark.report.page`), top to bottom: the header
card with the session's totals comes first, a call shows the observation that completes it
even when that arrives hundreds of lines later, a folded output says how many lines it holds
and every diagnostic sits under its line. All of that is known only at the end of the file,
so the input is read twice: this pass keeps small per-line facts (ints and short previews,
never the nodes or their text), the second pass renders each node as it is read again.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bbox_lark.ast import BlankLine, Continuation, Diagnostic, Event
from bbox_lark.correlate import AMBIGUOUS, CALL, COMPLETION, Pairer
from bbox_lark.parser import Head, NodeStream

#: How much of a far observation's result a call row previews.
PREVIEW = 240

#: Continuation lines shown without a fold.
UNFOLDED = 3

#: ``tid`` lanes drawn side by side; later threads share the last lane.
LANES = 8


@dataclass
class ToolRow:
    """One line of the per-tool table."""

    name: str
    calls: int = 0
    errors: int = 0
    latencies: list[int] = field(default_factory=list)


@dataclass
class Far:
    """An observation that completes a call further down: what its call row shows."""

    line: int
    outcome: str
    text: str
    #: Seconds between the call's and the observation's ``ts=`` (None when either lacks one).
    seconds: float | None


@dataclass
class Survey:
    """What the first pass learnt (per-line facts are keyed by 1-based line number)."""

    header: dict[str, Any] = field(default_factory=dict)
    body_start: int = 1
    lines: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    #: Call line (the start, for a start/completion pair) -> its outcome.
    outcomes: dict[int, str] = field(default_factory=dict)
    #: Completion line -> the line of the call it completes.
    completes: dict[int, int] = field(default_factory=dict)
    #: Call line -> the far observation that completes it.
    far: dict[int, Far] = field(default_factory=dict)
    #: Event line -> (number of its continuation lines, line of the last one), for the events
    #: whose output is folded (more than :data:`UNFOLDED` lines).
    continuation: dict[int, tuple[int, int]] = field(default_factory=dict)
    diagnostics: dict[int, list[Diagnostic]] = field(default_factory=dict)
    severities: Counter[str] = field(default_factory=Counter)
    tools: dict[str, ToolRow] = field(default_factory=dict)
    #: ``tid`` value -> lane number (0 .. LANES-1).
    lanes: dict[str, int] = field(default_factory=dict)
    #: Usage per model response: its first line, input (cache reads included) and output.
    usage_lines: array[int] = field(default_factory=lambda: array("q"))
    usage_in: array[int] = field(default_factory=lambda: array("q"))
    usage_out: array[int] = field(default_factory=lambda: array("q"))
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    elapsed: int | None = None
    #: The session's totals as :mod:`bbox_lark.numbers` states them (usage, cost), label -> text.
    totals: list[tuple[str, str]] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return len(self.outcomes)

    @property
    def errors(self) -> int:
        return sum(1 for outcome in self.outcomes.values() if outcome == "error")

    @property
    def duration(self) -> float | None:
        """Seconds from the first to the last ``ts=``, else the last ``# t=`` mark."""
        if self.first_ts is not None and self.last_ts is not None and self.last_ts > self.first_ts:
            return (self.last_ts - self.first_ts).total_seconds()
        return float(self.elapsed) if self.elapsed is not None else None


def outcome_of(event: Event) -> str:
    """The outcome of a call or observation line (DECISIONS §12 "Outcomes")."""
    from bbox_lark.report.figures import outcome

    return outcome(event)


def _ts(event: Event) -> datetime | None:
    from bbox_lark.values import parse_timestamp

    value = event.ts
    return parse_timestamp(value) if value is not None else None


def _latency(event: Event) -> int | None:
    try:
        return event.latency_ms
    except (ValueError, TypeError):
        return None


def survey(stream: NodeStream, *, path: Any = None, max_diagnostics: int | None = None) -> Survey:
    """Read ``stream`` (:func:`~bbox_lark.iter_nodes` with ``attach=False``) once: check it
    and gather the page's facts."""
    from bbox_lark.api import checker_for

    found = Survey()
    checker = checker_for(path, None, None, None)
    pairer = Pairer()
    head = next(stream)
    assert isinstance(head, Head)
    checker.start(head)
    if head.header_info is not None:
        found.header = dict(head.header_info.fields)
    found.body_start = head.body_start
    faults = stream.faults
    starts: dict[int, tuple[str, datetime | None, int | None]] = {}  # open start -> name, ts, latency
    previous_event = 0
    usage = _Usage(found)
    output = _Output(found.continuation)
    totals = _numbers_collector()
    for node in stream:
        for fault in faults:
            checker.fault(fault)
        faults.clear()
        checker.node(node)  # type: ignore[arg-type]
        if isinstance(node, Continuation):
            if node.owner is not None:
                output.add(node.owner, node.line)
            continue
        if isinstance(node, BlankLine) or not isinstance(node, Event):
            continue
        if totals is not None:
            totals.add(node)
        found.kinds[node.kind] += 1
        stamp = _ts(node)
        if stamp is not None:
            if found.first_ts is None:
                found.first_ts = stamp
            found.last_ts = stamp
        if node.kind == "comment" and node.name == "elapsed":
            found.elapsed = _elapsed(node)
        tid = node.fields.get("tid")
        if isinstance(tid, str) and tid and tid not in found.lanes:
            found.lanes[tid] = min(len(found.lanes), LANES - 1)
        usage.add(node)
        verdict = pairer.feed(node)
        if verdict in (CALL, AMBIGUOUS):
            outcome = "pending" if _is_start(node) else outcome_of(node)
            found.outcomes[node.line] = outcome
            name = _tool_name(node)
            row = found.tools.get(name)
            if row is None:
                row = found.tools[name] = ToolRow(name)
            row.calls += 1
            if outcome == "error":
                row.errors += 1
            latency = _latency(node)
            if _is_start(node):
                starts[node.line] = (name, stamp, latency)
            elif latency is not None:
                row.latencies.append(latency)
        elif verdict == COMPLETION:
            start = pairer.completed
            found.completes[node.line] = start
            outcome = outcome_of(node)
            found.outcomes[start] = outcome
            name, began, latency = starts.pop(start, ("?", None, None))
            latency = _latency(node) or latency
            if latency is None and began is not None and stamp is not None:
                latency = int((stamp - began).total_seconds() * 1000)
            row = found.tools.get(name)
            if row is not None:
                if outcome == "error":
                    row.errors += 1
                if latency is not None:
                    row.latencies.append(latency)
            if start != previous_event:
                result = node.result
                text = result.text if result is not None else node.text
                seconds = (stamp - began).total_seconds() if stamp is not None and began is not None else None
                found.far[start] = Far(node.line, outcome, text[:PREVIEW], seconds)
        previous_event = node.line
    for fault in faults:
        checker.fault(fault)
    for diagnostic in checker.finish():
        found.severities[diagnostic.severity] += 1
        found.diagnostics.setdefault(diagnostic.line, []).append(diagnostic)
    usage.finish()
    output.finish()
    found.lines = stream.lines_read
    if totals is not None:
        found.totals = totals.finish(found.header)
    return found


def _is_start(event: Event) -> bool:
    from bbox_lark.correlate import is_start

    return is_start(event)


def _tool_name(event: Event) -> str:
    """The per-tool table's row: the tool's name; for other calls their prefix and name
    (``c:github.issues``, ``x:explore``), else the line kind."""
    if event.kind in ("tool", "tool_start") and event.name:
        return event.name
    return f"{event.prefix}:{event.name}" if event.name else event.kind


def _elapsed(event: Event) -> int | None:
    from bbox_lark.values import parse_elapsed

    value = event.fields.get("t")
    return parse_elapsed(value) if isinstance(value, str) else None


class _Output:
    """Counts each event's continuation lines (they follow their event, so one event is
    counted at a time) and keeps the counts of the outputs that will be folded."""

    def __init__(self, folds: dict[int, tuple[int, int]]) -> None:
        self._folds = folds
        self._owner = 0
        self._count = 0
        self._last = 0

    def add(self, owner: int, line: int) -> None:
        if owner != self._owner:
            self.finish()
            self._owner, self._count = owner, 0
        self._count += 1
        self._last = line

    def finish(self) -> None:
        if self._count > UNFOLDED:
            self._folds[self._owner] = (self._count, self._last)
        self._count = 0


class _Usage:
    """Model usage per response, counted as :mod:`bbox_lark.report.figures` says (DECISIONS §12)."""

    def __init__(self, found: Survey) -> None:
        from bbox_lark.report.figures import ResponseUsage

        self._found = found
        self._responses = ResponseUsage(self._emit)

    def _emit(self, line: int, tokens_in: int, tokens_out: int) -> None:
        found = self._found
        found.usage_lines.append(line)
        found.usage_in.append(tokens_in)
        found.usage_out.append(tokens_out)

    def add(self, event: Event) -> None:
        self._responses.add(event)

    def finish(self) -> None:
        self._responses.finish()


def _numbers_collector() -> Any:
    from bbox_lark.report.figures import SessionTotals

    return SessionTotals()
