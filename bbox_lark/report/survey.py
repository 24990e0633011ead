"""The report's first pass: what the page needs to know before it writes its first line.

The page is written in one stream (:mod:`bbox_lark.report.page`), top to bottom: the header
card with the session's totals comes first, a call shows the observation that completes it
even when that arrives hundreds of lines later, a folded output says how many lines it holds
and every diagnostic sits under its line. All of that is known only at the end of the file,
so this pass runs first. It reads the line scan's records (:func:`~bbox_lark.syntax.record.iter_records`),
as ``check`` does: a line's node is built only for what a record does not hold (a call's
arguments, the text of a result that completes a call). What it learns is small per-line
facts (ints and short previews); the page then renders the same records
(:func:`bbox_lark.report.write_page` keeps them for it, so the file is parsed once), or, for a
file too large to hold, reads the file again.

Every number (a call's outcome and latency, the responses' usage, the totals, the costs)
comes from :mod:`bbox_lark.numbers.session`, the one place that decides them
(docs/reference.md#outcomes), so the page agrees with ``stats`` and the tables.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bbox_lark.numbers.review import Review, Reviewer, ReviewFeed, ReviewOptions
from bbox_lark.numbers.session import CallRecord, SessionCounter, SessionTotals
from bbox_lark.numbers.usage import Response, Responses
from bbox_lark.syntax.nodes import Diagnostic, Event
from bbox_lark.syntax.parser import Head, NodeStream
from bbox_lark.syntax.record import Record, RecordStream

#: A comment an importer writes for itself: ``# claude-code record <type>`` and its JSON.
_BOOKKEEPING = re.compile(r"[a-z][a-z0-9-]* record\b")

#: How much of a far observation's result a call row previews.
PREVIEW = 240

#: Continuation lines shown without a fold.
UNFOLDED = 3

#: ``tid`` lanes drawn; later threads share the last lane.
LANES = 8


@dataclass
class ToolRow:
    """One line of the per-tool table."""

    name: str
    calls: int = 0
    errors: int = 0
    pending: int = 0
    latencies: array[int] = field(default_factory=lambda: array("q"))


@dataclass
class Far:
    """An observation that completes a call further down: what its call row shows."""

    line: int
    outcome: str
    text: str
    #: Milliseconds between the call and its completion (:attr:`CallRecord.latency_ms`).
    latency_ms: int | None


class LineWords:
    """Line -> one of a few words (a call's outcome), a byte a line up to the last line set
    (a dict cost about 100 bytes a call: 1M lines, 40 MiB). ``get``, ``[line] = word``,
    ``values`` (in line order), ``len``."""

    def __init__(self) -> None:
        self._codes = bytearray()  # per line: 0, else 1 + the word's place in _words
        self._words: list[str] = []
        self._count = 0

    def __setitem__(self, line: int, word: str) -> None:
        if word not in self._words:
            if len(self._words) == 255:
                raise ValueError("more than 255 distinct words")
            self._words.append(word)
        codes = self._codes
        if line >= len(codes):
            codes.extend(bytes(line + 1 - len(codes) + len(codes) // 2))
        self._count += codes[line] == 0
        codes[line] = 1 + self._words.index(word)

    def get(self, line: int, default: Any = None) -> Any:
        code = self._codes[line] if 0 <= line < len(self._codes) else 0
        return self._words[code - 1] if code else default

    def values(self) -> Iterator[str]:
        words = self._words
        return (words[code - 1] for code in self._codes if code)

    def __len__(self) -> int:
        return self._count


class LineLinks:
    """Line -> an earlier line (a completion's call), as the distance back: 4 bytes a line up
    to the last line set (a longer distance in a dict). ``get``, ``[line] = earlier``."""

    def __init__(self) -> None:
        self._back: array[int] = array("I")
        self._far: dict[int, int] = {}

    def __setitem__(self, line: int, earlier: int) -> None:
        back = self._back
        if line >= len(back):
            back.frombytes(bytes(back.itemsize * (line + 1 - len(back) + len(back) // 2)))
        distance = line - earlier
        if 0 < distance <= 0xFFFF_FFFF:
            back[line] = distance
        else:
            back[line] = 0
            self._far[line] = earlier

    def get(self, line: int, default: Any = None) -> Any:
        distance = self._back[line] if 0 <= line < len(self._back) else 0
        if distance:
            return line - distance
        return self._far.get(line, default) if self._far else default


@dataclass
class Survey:
    """What the first pass learnt (per-line facts are keyed by 1-based line number)."""

    header: dict[str, Any] = field(default_factory=dict)
    body_start: int = 1
    lines: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    #: Call line (the start, for a start and its completion) -> its outcome.
    outcomes: LineWords = field(default_factory=lambda: LineWords())
    #: Completion line -> the line of the call it completes.
    completes: LineLinks = field(default_factory=lambda: LineLinks())
    #: Call lines completed on the next event line (one row on the page), one bit per line.
    joined: bytearray = field(default_factory=bytearray)
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
    #: What a point of the usage chart is: ``responses`` (usage stated on event lines), or
    #: ``steps`` when the session's usage comes from ``# metrics`` (as the totals count it).
    usage_unit: str = "responses"
    #: The last ``# t=`` mark, in seconds.
    elapsed: int | None = None
    #: The session's totals (:mod:`bbox_lark.numbers.session`).
    totals: SessionTotals | None = None
    #: What went wrong (:mod:`bbox_lark.numbers.review`).
    review: Review | None = None
    #: Comment lines an importer wrote for itself (``# claude-code record …``), folded away.
    bookkeeping: set[int] = field(default_factory=set)
    #: Call line -> its pairing with its result, where the numbers say it is ambiguous.
    ambiguous: set[int] = field(default_factory=set)

    @property
    def pending(self) -> int:
        return sum(1 for outcome in self.outcomes.values() if outcome == "pending")

    @property
    def calls(self) -> int:
        return len(self.outcomes)

    @property
    def errors(self) -> int:
        return sum(1 for outcome in self.outcomes.values() if outcome == "error")

    @property
    def duration(self) -> float | None:
        """Seconds from the earliest to the latest ``ts=``, else the last ``# t=`` mark."""
        totals = self.totals
        if totals is not None and totals.duration_ms:
            return totals.duration_ms / 1000
        return float(self.elapsed) if self.elapsed is not None else None


def survey(
    stream: RecordStream | NodeStream,
    *,
    path: Any = None,
    rules: tuple[Any, Any, Any] = (None, None, ()),
    options: ReviewOptions | None = None,
    keep: list[Head | Record] | None = None,
) -> Survey:
    """Read ``stream`` (:func:`~bbox_lark.syntax.record.iter_records`, or
    :func:`~bbox_lark.iter_nodes` with ``attach=False``: each node is then read through its
    record) once: check it (``rules``: the ``select``, ``ignore`` and ``allowed-secrets``
    settings), review it (:mod:`bbox_lark.numbers.review`, with ``options``) and gather the
    page's facts. ``keep``: the head and every record are appended to it, for the page."""
    from bbox_lark.api import checker_for

    found = Survey()
    select, ignore, allowed = rules
    checker = checker_for(path, None, select, ignore, allowed_secrets=allowed)
    head = next(stream)
    assert isinstance(head, Head)
    checker.start(head)
    if keep is not None:
        keep.append(head)
    if head.header_info is not None:
        found.header = dict(head.header_info.fields)
    found.body_start = head.body_start
    model = found.header.get("model")
    reviewer = Reviewer(options, model if isinstance(model, str) else None)
    feed = ReviewFeed(reviewer)
    counter = SessionCounter(found.header)
    calls = _Calls(found)
    responses = Responses()
    output = _Output(found.continuation)
    faults = stream.faults
    for item in stream:
        for fault in faults:
            checker.fault(fault)
        faults.clear()
        node = item if type(item) is Record else Record.of(item)  # type: ignore[arg-type]
        checker.record(node)
        if keep is not None:
            keep.append(node)
        kind = node.kind
        if kind == "continuation":
            if node.owner is not None:
                output.add(node.owner, node.line)
            continue
        if kind == "blank":
            continue
        found.kinds[kind] += 1
        if kind == "comment":
            if node.name == "elapsed":
                found.elapsed = _elapsed(node)
            elif _BOOKKEEPING.match(node.text):
                found.bookkeeping.add(node.line)
        feed.event(node)
        tid = node.fields.get("tid")
        if isinstance(tid, str) and tid and tid not in found.lanes:
            found.lanes[tid] = min(len(found.lanes), LANES - 1)
        _response(found, responses.feed(node), reviewer)
        for record in counter.feed(node):
            calls.add(record, node)
            feed.record(record, node)
        calls.previous = node.line
    for fault in faults:
        checker.fault(fault)
    for diagnostic in checker.finish():
        found.severities[diagnostic.severity] += 1
        found.diagnostics.setdefault(diagnostic.line, []).append(diagnostic)
    _response(found, responses.finish(), reviewer)
    output.finish()
    pending, steps, found.totals = counter.finish()
    if found.totals.usage_source == "metrics":  # the chart shows what the totals counted
        found.usage_unit = "steps"
        found.usage_lines, found.usage_in, found.usage_out = array("q"), array("q"), array("q")
        for step in steps:
            metrics = step.metrics
            if metrics.prompt is None and metrics.completion is None:
                continue
            found.usage_lines.append(step.first_line)
            found.usage_in.append(int(metrics.prompt or 0) + int(metrics.cached or 0))
            found.usage_out.append(int(metrics.completion or 0))
    for record in pending:
        calls.add(record, None)
        feed.record(record, None)
    for line in found.diagnostics:  # a result with findings keeps its own row (the findings view)
        start = found.completes.get(line)
        if start is not None and has_bit(found.joined, start):
            found.joined[start >> 3] &= ~(1 << (start & 7))
    found.review = reviewer.finish()
    if found.review.ambiguous:
        found.ambiguous.update(found.review.ambiguous)
    found.lines = stream.lines_read
    return found


class _Calls:
    """Each call as :class:`~bbox_lark.numbers.session.SessionCounter` decides it: its outcome at
    its line, its completion joined to it, its row of the per-tool table."""

    def __init__(self, found: Survey) -> None:
        self.found = found
        #: The event line before the current one (a completion on the next event line is
        #: shown joined under its call; a later one is previewed at the call).
        self.previous = 0

    def add(self, record: CallRecord, event: Event | Record | None) -> None:
        found = self.found
        start, end = record.start_line, record.end_line
        found.outcomes[start] = record.outcome
        name = record.tool or "(none)"
        if record.family != "tool":
            name = f"{record.family}:{name}"
        row = found.tools.get(name)
        if row is None:
            row = found.tools[name] = ToolRow(name)
        row.calls += 1
        if record.outcome == "error":
            row.errors += 1
        elif record.outcome == "pending":
            row.pending += 1
        if record.latency_ms is not None:
            row.latencies.append(record.latency_ms)
        if end is None or end == start or event is None or event.line != end:
            return
        found.completes[end] = start
        if start == self.previous:
            _set_bit(found.joined, start)
        else:
            result = event.result
            text = result.text if result is not None else event.text
            found.far[start] = Far(end, record.outcome, text[:PREVIEW], record.latency_ms)


def _response(found: Survey, ended: tuple[Response, ...], reviewer: Reviewer) -> None:
    for response in ended:
        reviewer.response(response)
        usage = response.usage
        found.usage_lines.append(response.first_line)
        found.usage_in.append(usage.input_with_cache or 0)
        found.usage_out.append(usage.tokens_out or 0)


def _elapsed(event: Event | Record) -> int | None:
    from bbox_lark.syntax.values import parse_elapsed

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


def _set_bit(bits: bytearray, index: int) -> None:
    byte = index >> 3
    if byte >= len(bits):
        bits.extend(bytes(byte + 1 - len(bits) + len(bits) // 2))
    bits[byte] |= 1 << (index & 7)


def has_bit(bits: bytearray, index: int) -> bool:
    """Whether :func:`_set_bit` set bit ``index`` of ``bits``."""
    byte = index >> 3
    return byte < len(bits) and bool(bits[byte] & (1 << (index & 7)))
