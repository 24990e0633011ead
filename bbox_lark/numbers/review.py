"""What went wrong in a session: the facts a reviewer asks for first, as plain data.

:class:`Reviewer` is fed a session's calls (:class:`~bbox_lark.numbers.session.CallRecord`, as
:class:`~bbox_lark.numbers.session.SessionCounter` decides them), its model responses and the times
its lines state, in one pass, and :meth:`Reviewer.finish` returns a :class:`Review`:

* **failed calls**: outcome ``error`` (docs/reference.md#outcomes,
  :func:`bbox_lark.numbers.outcomes.call_outcome`);
* **never completed**: outcome ``pending`` (a start nothing completed);
* **retries**: outcome ``retry``, or a call that repeats the failed call just before it of
  the same tool (same tool and arguments);
* **loops**: the same call (:func:`call_key`: the tool and its arguments, normalised) made
  :attr:`ReviewOptions.loop_min` times or more, each repeat at most
  :attr:`ReviewOptions.loop_window` calls after the one before it (``in a row`` when each
  follows the other directly);
* **long gaps**: more than :attr:`ReviewOptions.gap_seconds` between two timed lines
  (``ts=``, or the ``# t=`` elapsed marks);
* **costliest model responses**: the :attr:`ReviewOptions.costliest` responses with the most
  token weight (output ×5, uncached input ×1, cache reads ×0.1: how list prices relate),
  each with its estimated cost where the ``prices`` extra can price it;
* **where it went wrong**: the first failed call not followed (later in the file) by a
  successful call of the same tool.

Memory holds a few ints per call (to put the calls in start order at the end) and the
distinct call keys; each list keeps its first :attr:`ReviewOptions.listed` items and counts
the rest. ``report`` draws the summary card from it; ``stats --json`` and the tables can
carry the same facts through :meth:`Review.to_json`.
"""

from __future__ import annotations

import bisect
import heapq
import re
from array import array
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from bbox_lark.numbers.outcomes import OUTCOMES

if TYPE_CHECKING:
    from bbox_lark.numbers.session import CallRecord, SessionTotals
    from bbox_lark.numbers.usage import Response
    from bbox_lark.syntax.nodes import Event
    from bbox_lark.syntax.record import Record

__all__ = [
    "CallItem",
    "CostlyResponse",
    "Costs",
    "Gap",
    "Loop",
    "Review",
    "ReviewOptions",
    "Reviewer",
    "call_key",
    "session_costs",
]

#: Fields that name, place or time a call rather than say what it does: left out of its key.
BOOKKEEPING_FIELDS = frozenset(
    {
        "id",
        "span",
        "ts",
        "tid",
        "step",
        "latency_ms",
        "tokens_in",
        "tokens_out",
        "tokens_cached",
        "cost_usd",
        "model",
        "sig",
        "attempt",
        "parent",
        "interrupted",
    }
)

#: Characters of a call key or a result kept for the page.
SNIPPET = 160

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class ReviewOptions:
    """The thresholds (docs/report.md#what-went-wrong)."""

    #: A loop is the same call made this many times or more ...
    loop_min: int = 5
    #: ... each repeat at most this many calls after the previous one.
    loop_window: int = 20
    #: A gap between two timed lines longer than this is listed.
    gap_seconds: float = 300.0
    #: How many of the costliest responses are listed.
    costliest: int = 5
    #: Items kept per list (the rest are counted).
    listed: int = 50


@dataclass(frozen=True, slots=True)
class CallItem:
    """One call the review names."""

    line: int
    tool: str
    outcome: str
    #: The line that completed it, or None.
    end_line: int | None = None
    #: The start of the result that completed it (or of the call's own result).
    text: str = ""
    #: The call's pairing as :mod:`bbox_lark.numbers.session` states it (``id``, ``order``,
    #: ``ambiguous``), or None when the numbers do not say.
    pairing: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "tool": self.tool,
            "outcome": self.outcome,
            "end_line": self.end_line,
            "text": self.text,
            "pairing": self.pairing,
        }


@dataclass(frozen=True, slots=True)
class Loop:
    """The same call repeated: its key, how often, and where."""

    tool: str
    key: str
    count: int
    first_line: int
    last_line: int
    #: The start lines of the first :attr:`ReviewOptions.listed` repeats.
    lines: tuple[int, ...]
    #: Every repeat directly followed the previous one (no other call between).
    in_a_row: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "key": self.key,
            "count": self.count,
            "first_line": self.first_line,
            "last_line": self.last_line,
            "lines": list(self.lines),
            "in_a_row": self.in_a_row,
        }


@dataclass(frozen=True, slots=True)
class Gap:
    """A long time between two timed lines."""

    line: int
    previous: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "previous": self.previous, "seconds": self.seconds}


@dataclass(frozen=True, slots=True)
class CostlyResponse:
    """One of the costliest model responses."""

    line: int
    last_line: int
    model: str | None
    tokens_in: int
    tokens_out: int
    tokens_cached: int
    #: The token weight it was ranked by (output ×5, input ×1, cache reads ×0.1).
    weight: float
    estimated_usd: Decimal | None

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "last_line": self.last_line,
            "model": self.model,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "tokens_cached": self.tokens_cached,
            "weight": self.weight,
            "estimated_usd": None if self.estimated_usd is None else str(self.estimated_usd),
        }


@dataclass(frozen=True, slots=True)
class Review:
    """What went wrong, each list in line order (loops: those in a row first, then by
    count; responses by weight)."""

    calls: int
    failed: tuple[CallItem, ...] = ()
    failed_count: int = 0
    pending: tuple[CallItem, ...] = ()
    pending_count: int = 0
    retries: tuple[CallItem, ...] = ()
    retry_count: int = 0
    loops: tuple[Loop, ...] = ()
    gaps: tuple[Gap, ...] = ()
    gap_count: int = 0
    costliest: tuple[CostlyResponse, ...] = ()
    #: The first failed call no later success of the same tool followed.
    went_wrong: CallItem | None = None
    #: Calls whose pairing with their result is ambiguous (None: the numbers do not say).
    ambiguous: tuple[int, ...] | None = None
    options: ReviewOptions = field(default_factory=ReviewOptions)

    @property
    def loop_calls(self) -> int:
        return sum(loop.count for loop in self.loops)

    def to_json(self) -> dict[str, Any]:
        o = self.options
        return {
            "calls": self.calls,
            "failed": {"count": self.failed_count, "items": [c.to_json() for c in self.failed]},
            "never_completed": {"count": self.pending_count, "items": [c.to_json() for c in self.pending]},
            "retries": {"count": self.retry_count, "items": [c.to_json() for c in self.retries]},
            "loops": [loop.to_json() for loop in self.loops],
            "long_gaps": {"count": self.gap_count, "items": [g.to_json() for g in self.gaps]},
            "costliest_responses": [r.to_json() for r in self.costliest],
            "went_wrong": None if self.went_wrong is None else self.went_wrong.to_json(),
            "ambiguous": None if self.ambiguous is None else list(self.ambiguous),
            "options": {
                "loop_min": o.loop_min,
                "loop_window": o.loop_window,
                "gap_seconds": o.gap_seconds,
                "costliest": o.costliest,
            },
        }


@dataclass(frozen=True, slots=True)
class Costs:
    """A session's stated and estimated cost, kept apart (docs/reference.md#usage): the one
    place the report, the index and the live page read them from."""

    stated_usd: Decimal | None
    estimated_usd: Decimal | None
    #: Why there is no estimate (or None).
    estimate_note: str | None


def session_costs(totals: SessionTotals | None) -> Costs:
    """The stated cost (``cost_usd``, ``@end cost=``, ATIF's ``total_cost_usd``) and the
    estimate beside it, as :mod:`bbox_lark.numbers.session` gives them."""
    if totals is None:
        return Costs(None, None, None)
    stated = getattr(totals, "stated_cost_usd", None)
    estimated = getattr(totals, "estimated_cost_usd", None)
    note = getattr(totals, "estimate_note", None) if totals.usage_source is not None else None
    return Costs(stated, estimated, note)


def call_key(event: Event | Record) -> str:
    """The call ``event`` makes, normalised to compare repeats: its name, positional
    arguments and fields (without the ones that name, place or time a call:
    :data:`BOOKKEEPING_FIELDS`, nor ``extra.*``), whitespace collapsed."""
    parts = [event.name or ""]
    for arg in event.args:
        parts.append("[" + ", ".join(str(a) for a in arg) + "]" if isinstance(arg, tuple) else str(arg))
    for name, value in sorted(event.fields.items()):
        if name in BOOKKEEPING_FIELDS or name.startswith("extra."):
            continue
        parts.append(f"{name}={value}")
    return _SPACE.sub(" ", " ".join(parts)).strip()


def _snippet(text: str) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"


#: Each outcome of :data:`bbox_lark.numbers.outcomes.OUTCOMES` as a small code (the calls' array).
_OUTCOME_CODE = {name: code for code, name in enumerate(OUTCOMES)}
_OK = _OUTCOME_CODE["ok"]


class Reviewer:
    """A session's review as a stream: :meth:`start` each call line as it is read (its key),
    :meth:`call` each :class:`~bbox_lark.numbers.session.CallRecord` as it is decided,
    :meth:`response` each ended response, :meth:`time` each timed line; then
    :meth:`finish`."""

    def __init__(self, options: ReviewOptions | None = None, model: str | None = None) -> None:
        self.options = options or ReviewOptions()
        #: The model a response is priced as when it names none (the header's).
        self.model = model
        self._keys: dict[str, int] = {}
        self._key_names: list[str] = []
        self._tools: dict[str, int] = {}
        self._tool_names: list[str] = []
        self._open: dict[int, int] = {}  # call line -> key id, until its record comes
        # One entry per call: start line, key id, tool id, outcome code.
        self._lines = array("q")
        self._key_of = array("I")  # ids of distinct keys and tools: 4 bytes each
        self._tool_of = array("I")
        self._outcome = array("b")
        # The failed and pending calls listed: the first ``listed`` of each by line, as a
        # heap whose top is the latest of them (an item is kept only while it may be listed).
        self._failed: list[tuple[int, int, CallItem]] = []
        self._pending: list[tuple[int, int, CallItem]] = []
        # "What went wrong" is the first failure after its tool's last success: per tool, the
        # latest success so far and the failures after it (a failure before a success of its
        # tool can never be it), so a long log does not hold every failure.
        self._last_ok: dict[str, int] = {}
        self._after_ok: dict[str, list[CallItem]] = {}
        self._counts = {"error": 0, "pending": 0}
        self._ambiguous: list[int] | None = None
        # Per clock (``ts``, ``elapsed``): the gaps found, their count, the last timed line.
        self._gaps: dict[str, list[Gap]] = {"ts": [], "elapsed": []}
        self._gap_count = {"ts": 0, "elapsed": 0}
        self._last_time: dict[str, tuple[int, float]] = {}
        self._heap: list[tuple[float, int, Response]] = []

    # -- feeding ---------------------------------------------------------------------------------

    def start(self, event: Event | Record) -> None:
        """A line that may make a call: its key is kept until its record comes."""
        self._open[event.line] = self._key_id(call_key(event))

    def _key_id(self, key: str) -> int:
        found = self._keys.get(key)
        if found is None:
            found = self._keys[key] = len(self._key_names)
            self._key_names.append(key[:SNIPPET])
        return found

    def call(self, record: CallRecord, text: str = "") -> None:
        """One decided call; ``text`` is the start of the result that completed it."""
        start = record.start_line
        key = self._open.pop(start, None)
        if record.end_line is not None:
            self._open.pop(record.end_line, None)
        if key is None:
            key = self._key_id(" ".join(filter(None, (record.tool, record.args))))
        tool = record.tool or "(none)"
        if record.family != "tool":
            tool = f"{record.family}:{tool}"
        tool_id = self._tools.get(tool)
        if tool_id is None:
            tool_id = self._tools[tool] = len(self._tool_names)
            self._tool_names.append(tool)
        # Kept in start order: records come as calls complete, nearly in that order already.
        lines = self._lines
        code = _OUTCOME_CODE.get(record.outcome, 5)
        if not lines or lines[-1] <= start:
            lines.append(start)
            self._key_of.append(key)
            self._tool_of.append(tool_id)
            self._outcome.append(code)
        else:
            at = bisect.bisect_right(lines, start)
            lines.insert(at, start)
            self._key_of.insert(at, key)
            self._tool_of.insert(at, tool_id)
            self._outcome.insert(at, code)
        pairing = getattr(record, "pairing", None)  # the numbers' pairing mark, where it exists
        if isinstance(pairing, str):
            if self._ambiguous is None:
                self._ambiguous = []
            if pairing == "ambiguous" and len(self._ambiguous) < 10 * self.options.listed:
                self._ambiguous.append(start)
        if code == _OK:
            if start > self._last_ok.get(tool, 0):
                self._last_ok[tool] = start
                held = self._after_ok.get(tool)
                if held:
                    self._after_ok[tool] = [item for item in held if item.line > start]
        elif record.outcome in ("error", "pending"):
            self._counts[record.outcome] += 1
            end = record.end_line if record.end_line != start else None
            item = CallItem(start, tool, record.outcome, end, _snippet(text), pairing)
            first = self._failed if record.outcome == "error" else self._pending
            entry = (-start, -len(self._lines), item)  # (the count of calls: their order)
            if len(first) < self.options.listed:
                heapq.heappush(first, entry)
            elif first and -first[0][0] > start:  # (listed=0: nothing is listed)
                heapq.heapreplace(first, entry)
            if record.outcome == "error" and start > self._last_ok.get(tool, 0):
                self._after_ok.setdefault(tool, []).append(item)

    def response(self, response: Response) -> None:
        """One ended model response."""
        usage = response.usage
        weight = (usage.tokens_out or 0) * 5 + (usage.tokens_in or 0) + (usage.tokens_cached or 0) * 0.1
        if weight <= 0:
            return
        entry = (weight, -response.first_line, response)
        if len(self._heap) < self.options.costliest:
            heapq.heappush(self._heap, entry)
        elif entry[:2] > self._heap[0][:2]:
            heapq.heapreplace(self._heap, entry)

    def time(self, line: int, seconds: float, clock: str = "ts") -> None:
        """Line ``line`` happened at ``seconds`` on ``clock``: ``ts`` (``ts=`` values) or
        ``elapsed`` (``# t=`` marks). The gaps of ``ts`` are listed when any line has one."""
        last = self._last_time.get(clock)
        if last is not None and seconds - last[1] > self.options.gap_seconds:
            self._gap_count[clock] += 1
            if len(self._gaps[clock]) < self.options.listed:
                self._gaps[clock].append(Gap(line, last[0], round(seconds - last[1], 3)))
        if last is None or seconds >= last[1]:
            self._last_time[clock] = (line, seconds)

    # -- the end ---------------------------------------------------------------------------------

    def finish(self) -> Review:
        options = self.options
        order = range(len(self._lines))
        loops = self._find_loops(order)
        retries, retry_count = self._find_retries(order)
        listed = options.listed
        clock = "ts" if "ts" in self._last_time else "elapsed"
        failed = [entry[2] for entry in sorted(self._failed, key=lambda e: e[:2], reverse=True)]
        pending = [entry[2] for entry in sorted(self._pending, key=lambda e: e[:2], reverse=True)]
        return Review(
            calls=len(order),
            failed=tuple(failed[:listed]),
            failed_count=self._counts["error"],
            pending=tuple(pending[:listed]),
            pending_count=self._counts["pending"],
            retries=tuple(retries[:listed]),
            retry_count=retry_count,
            loops=tuple(loops[:listed]),
            gaps=tuple(self._gaps[clock]),
            gap_count=self._gap_count[clock],
            costliest=self._costliest(),
            went_wrong=self._went_wrong(),
            ambiguous=None if self._ambiguous is None else tuple(sorted(self._ambiguous)),
            options=options,
        )

    def _find_loops(self, order: range) -> list[Loop]:
        options = self.options
        runs: dict[int, list[Any]] = {}  # key -> [count, last position, lines, in a row]
        found: list[Loop] = []

        def close(key: int, run: list[Any]) -> None:
            if run[0] >= options.loop_min:
                lines = run[2]
                tool = self._tool_names[run[4]]
                found.append(Loop(tool, self._key_names[key], run[0], lines[0], run[5], tuple(lines), run[3]))

        for position, index in enumerate(order):
            key = self._key_of[index]
            line = self._lines[index]
            run = runs.get(key)
            if run is not None and position - run[1] <= options.loop_window:
                run[3] = run[3] and position - run[1] == 1
                run[0] += 1
                run[1] = position
                run[5] = line
                if len(run[2]) < options.listed:
                    run[2].append(line)
                continue
            if run is not None:
                close(key, run)
            runs[key] = [1, position, [line], True, self._tool_of[index], line]
        for key, run in runs.items():
            close(key, run)
        found.sort(key=lambda loop: (not loop.in_a_row, -loop.count, loop.first_line))
        return found

    def _find_retries(self, order: range) -> tuple[list[CallItem], int]:
        last: dict[int, tuple[int, int]] = {}  # tool -> (key, outcome) of its previous call
        items: list[CallItem] = []
        count = 0
        retry, error = _OUTCOME_CODE["retry"], _OUTCOME_CODE["error"]
        for index in order:
            tool, key, outcome = self._tool_of[index], self._key_of[index], self._outcome[index]
            before = last.get(tool)
            if outcome == retry or (before is not None and before == (key, error)):
                count += 1
                if len(items) < self.options.listed:
                    name = self._tool_names[tool]
                    items.append(CallItem(self._lines[index], name, _outcome_name(outcome)))
            last[tool] = (key, outcome)
        return items, count

    def _went_wrong(self) -> CallItem | None:
        # :meth:`call` holds exactly the failures after their tool's latest success: a
        # success prunes the failures before it, and a failure before one is never added
        # (results may come out of order). So the first of them by line is the answer, with
        # no second pass over the calls (tests/test_review.py compares it with every call).
        candidates = [item for held in self._after_ok.values() for item in held]
        return min(candidates, key=lambda item: item.line, default=None)

    def _costliest(self) -> tuple[CostlyResponse, ...]:
        from bbox_lark.numbers.prices import estimate_cost

        out: list[CostlyResponse] = []
        for weight, _, response in sorted(self._heap, key=lambda e: (-e[0], -e[1])):
            usage = response.usage
            model = response.model or self.model
            estimate = estimate_cost([(model, usage)]).cost_usd
            out.append(
                CostlyResponse(
                    response.first_line,
                    response.last_line,
                    model,
                    usage.tokens_in or 0,
                    usage.tokens_out or 0,
                    usage.tokens_cached or 0,
                    round(weight, 1),
                    estimate,
                )
            )
        return tuple(out)


def _outcome_name(code: int) -> str:
    for name, value in _OUTCOME_CODE.items():
        if value == code:
            return name
    return "unknown"


def review_bbox(path: Any, options: ReviewOptions | None = None) -> Review:
    """The review of a bbox file (a path), in one pass over its nodes."""
    from bbox_lark.numbers.session import SessionCounter
    from bbox_lark.numbers.usage import Responses
    from bbox_lark.syntax.nodes import Event as EventNode
    from bbox_lark.syntax.parser import Head, iter_nodes

    with open(path, "rb") as stream:
        nodes = iter_nodes(stream, attach=False)
        head = next(nodes)
        assert isinstance(head, Head)
        header = dict(head.header_info.fields) if head.header_info is not None else {}
        model = header.get("model")
        reviewer = Reviewer(options, model if isinstance(model, str) else None)
        counter = SessionCounter(header)
        responses = Responses()
        feed = ReviewFeed(reviewer)
        for node in nodes:
            if not isinstance(node, EventNode):
                continue
            feed.event(node)
            for response in responses.feed(node):
                reviewer.response(response)
            for record in counter.feed(node):
                feed.record(record, node)
        for response in responses.finish():
            reviewer.response(response)
        pending, _, _ = counter.finish()
        for record in pending:
            feed.record(record, None)
    return reviewer.finish()


class ReviewFeed:
    """Feeds a :class:`Reviewer` from events read in order: call keys, the times lines state
    (``ts=``, ``# t=``), and each record with the text of the line that completed it."""

    def __init__(self, reviewer: Reviewer) -> None:
        self.reviewer = reviewer

    def event(self, event: Event | Record) -> None:
        from bbox_lark.syntax.correlate import FAMILIES
        from bbox_lark.syntax.values import parse_elapsed, parse_timestamp

        kind = event.kind
        if kind in FAMILIES:
            self.reviewer.start(event)
        if kind == "comment" and event.name == "elapsed":
            value = event.fields.get("t")
            elapsed = parse_elapsed(value) if isinstance(value, str) else None
            if elapsed is not None:
                self.reviewer.time(event.line, float(elapsed), "elapsed")
            return
        ts = event.ts
        if ts is not None:
            moment = parse_timestamp(ts)
            if moment is not None:
                try:
                    seconds = moment.timestamp()
                except (TypeError, ValueError, OverflowError):
                    return
                self.reviewer.time(event.line, seconds)

    def record(self, record: CallRecord, completion: Event | Record | None) -> None:
        text = ""
        if completion is not None and completion.line == record.end_line:
            result = completion.result
            text = result.text if result is not None else completion.text
        self.reviewer.call(record, text[: SNIPPET * 2])
