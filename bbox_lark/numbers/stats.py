"""Statistics of a bbox/1 document (``bbox-lark stats``; docs/reference.md#stats).

What is counted, and how:

* **Lines.** ``total`` physical lines = ``header`` + ``body``. ``blank`` counts
  whitespace-only lines anywhere, ``comment`` the body's ``#`` lines and ``content``
  everything else (the reference tool's meaning: ``total = content + blank + comment``).
  ``continuation`` and ``unknown`` are body lines of those classes (part of ``content``).
* **Events.** Every event kind, with zeros. ``lifecycle`` counts lifecycle lines by
  primitive.
* **Steps.** ``step=`` on events, lifecycle lines included; comments are not counted (a
  ``# metrics step=N`` refers to a step, it does not take one).
* **Calls.** Paired as the correlation checks pair them (:mod:`bbox_lark.syntax.correlate`): a start
  and its completion are **one** call, a ``t~`` progress line is no call. Tool calls are
  counted by tool name, MCP calls by ``server.method``, subagents by type; ``open`` counts
  starts that nothing completes.
  Each call has an **outcome** (:func:`bbox_lark.numbers.outcomes.call_outcome`: ``ok error pending
  skipped retry unknown``), counted per family and per tool.
* **Ids.** Distinct ``id=`` and ``span=`` values on call lines (``t t! t~ o x c q s p``).
* **Redactions and blobs.** Every marker and pointer in the body, continuations included
  (the comment that states the redaction count is not counted, as in check W018).
* **Tokens and cost.** Summed from ``# metrics`` (a trailing comment on an event takes the
  event's step; a ``# metrics step=N`` line names its step). Keys are aliased:
  ``prompt``/``prompt_tokens``/``tokens_in``, ``completion``/``completion_tokens``/
  ``tokens_out``, ``cached``/``cached_tokens``/``tokens_cached``, ``cost``/``cost_usd``
  (``$`` allowed), ``tokens``/``total_tokens``. Each step counts **once**: the first metrics
  seen for a step win and later ones for the same step are skipped; metrics without a step
  each count. The totals the file states itself (header ``tokens_total_in``/
  ``tokens_total_out``/``tokens_cached``, the last ``@end`` line's fields, the closing
  summary comment) are reported beside these sums and never added to them.
* **Usage, models and cost** come from :mod:`bbox_lark.numbers.session`, which decides every number
  of a session: usage under the writers' names (``tokens_in``, ``tokens_out``,
  ``tokens_cached``) from ``# metrics`` or, when a file has none, from the usage stated on
  event lines (once per model response), which source it used, the models named, the stated
  cost (``@end``, the summary comment, else ``# metrics``) and beside it the estimated cost
  (``genai-prices``), the first and last ``ts=`` and the time between them.
"""

from __future__ import annotations

import heapq
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import IO, Any

from bbox_lark._classes import dataclass
from bbox_lark.numbers.outcomes import OUTCOMES, PAIRINGS
from bbox_lark.numbers.session import SessionCounter, SessionTotals
from bbox_lark.numbers.usage import Totals, Usage
from bbox_lark.syntax.correlate import FAMILIES
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Document, Event, HeaderLine, Line
from bbox_lark.syntax.record import Record
from bbox_lark.syntax.scan import find_blobs, line_redactions

STATS_VERSION = 1

#: Header keys shown in the statistics (when present as plain values).
HEADER_KEYS = ("format", "id", "mode", "model", "repo", "repo_sha", "branch", "runner")

#: Line kinds whose ``id=``/``span=`` values are call ids: every call, its progress and
#: its observations.
CALL_ID_KINDS = frozenset(FAMILIES) | {"tool_progress", "observation"}

Tally = tuple[tuple[str, int], ...]


def _tally(counter: Mapping[str, int]) -> Tally:
    """Counts, most frequent first, ties by name."""
    return tuple(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


@dataclass(frozen=True, slots=True)
class LineCounts:
    total: int = 0
    header: int = 0
    body: int = 0
    content: int = 0
    blank: int = 0
    comment: int = 0
    continuation: int = 0
    unknown: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "total": self.total,
            "header": self.header,
            "body": self.body,
            "content": self.content,
            "blank": self.blank,
            "comment": self.comment,
            "continuation": self.continuation,
            "unknown": self.unknown,
        }


@dataclass(frozen=True, slots=True)
class StepRange:
    #: Lowest and highest ``step=`` (None when no line has one).
    min: int | None = None
    max: int | None = None
    #: Distinct step values.
    distinct: int = 0
    #: Lines that carry a step.
    lines: int = 0

    def to_json(self) -> dict[str, int | None]:
        return {"min": self.min, "max": self.max, "distinct": self.distinct, "lines": self.lines}


Outcomes = tuple[int, ...]
_NO_OUTCOMES: Outcomes = (0,) * len(OUTCOMES)


def _outcomes_json(counts: Outcomes) -> dict[str, int]:
    return dict(zip(OUTCOMES, counts, strict=True))


def _add_outcomes(a: Outcomes, b: Outcomes) -> Outcomes:
    return tuple(x + y for x, y in zip(a, b, strict=True))


@dataclass(frozen=True, slots=True)
class CallCounts:
    """Calls of one family: a start and its completion count once."""

    total: int = 0
    #: Starts that nothing completes (the ``pending`` outcome).
    open: int = 0
    by_name: Tally = ()
    #: Calls per outcome (:data:`bbox_lark.numbers.outcomes.OUTCOMES` order).
    outcomes: Outcomes = _NO_OUTCOMES
    #: Per name, the calls per outcome, in ``by_name`` order.
    by_tool: tuple[tuple[str, Outcomes], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "open": self.open,
            "by_name": dict(self.by_name),
            "outcomes": _outcomes_json(self.outcomes),
            "by_tool": {
                name: {"calls": sum(counts), **_outcomes_json(counts)} for name, counts in self.by_tool
            },
        }


@dataclass(frozen=True, slots=True)
class Redactions:
    total: int = 0
    by_kind: Tally = ()

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "by_kind": dict(self.by_kind)}


@dataclass(frozen=True, slots=True)
class Blobs:
    #: Blob pointers.
    count: int = 0
    #: Sum of their ``bytes=`` (pointers without a valid size add nothing).
    bytes: int = 0
    #: Distinct ``sha256=`` values.
    distinct: int = 0

    def to_json(self) -> dict[str, int]:
        return {"count": self.count, "bytes": self.bytes, "distinct": self.distinct}


@dataclass(frozen=True, slots=True)
class MetricsTotals:
    """Sums over ``# metrics``, each step counted once."""

    totals: Totals = Totals()
    #: Metrics comments found (trailing or standalone).
    seen: int = 0
    #: Metrics that were added up.
    counted: int = 0
    #: Metrics skipped because an earlier one already counted for their step.
    skipped: int = 0

    def to_json(self) -> dict[str, Any]:
        return {**self.totals.to_json(), "seen": self.seen, "counted": self.counted, "skipped": self.skipped}


def _decimal_json(value: Decimal | None) -> float | None:
    return float(value) if value is not None else None


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """Model usage under the writers' names (:mod:`bbox_lark.numbers.session`)."""

    usage: Usage = Usage()
    #: ``metrics`` or ``responses`` (the source counted), None when no usage is stated;
    #: over several files ``mixed`` when they differ.
    source: str | None = None
    #: Model responses found on event lines (each counted once).
    responses: int = 0
    #: Counted usage per model in force (``(none)``: before any model was named).
    by_model: tuple[tuple[str, Usage], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            **self.usage.to_json(),
            "source": self.source,
            "responses": self.responses,
            "by_model": {model: usage.to_json() for model, usage in self.by_model},
        }


@dataclass(frozen=True, slots=True)
class Cost:
    """The cost a file states (never replaced) and the estimate beside it, in USD."""

    stated: Decimal | None = None
    estimated: Decimal | None = None
    #: Why there is no estimate (or what it leaves out); None when complete.
    estimate_note: str | None = None
    #: True when the estimate is a lower bound (some usage named no cache writes, §13).
    lower_bound: bool = False


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """The earliest and latest valid ``ts=``; over several files ``duration_ms`` adds up
    each file's."""

    first_ts: str | None = None
    last_ts: str | None = None
    duration_ms: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"first_ts": self.first_ts, "last_ts": self.last_ts, "duration_ms": self.duration_ms}


@dataclass(frozen=True, slots=True)
class Stats:
    """Everything ``bbox-lark stats`` reports. :meth:`to_json` gives the JSON form
    (``docs/schema/stats.schema.json``)."""

    header: tuple[tuple[str, str], ...] = ()
    lines: LineCounts = LineCounts()
    events: Tally = ()
    lifecycle: Tally = ()
    steps: StepRange = StepRange()
    #: Lines with a valid ``ts=``.
    timestamps: int = 0
    tools: CallCounts = CallCounts()
    mcp: CallCounts = CallCounts()
    subagents: CallCounts = CallCounts()
    #: Distinct ``id=`` values on call lines.
    call_ids: int = 0
    #: Distinct ``span=`` values on call lines.
    spans: int = 0
    redactions: Redactions = Redactions()
    blobs: Blobs = Blobs()
    metrics: MetricsTotals = MetricsTotals()
    #: Totals from the header (``tokens_total_in``, ``tokens_total_out``, ``tokens_cached``).
    header_totals: Totals = Totals()
    #: Totals from the last ``@end`` line's fields.
    end_totals: Totals = Totals()
    #: Totals from the last closing summary comment (``# tokens=... cost=...``).
    summary_totals: Totals = Totals()
    usage: UsageTotals = UsageTotals()
    cost: Cost = Cost()
    #: Every model named (header ``model:``, ``# model:``, ``model=``), first appearance first.
    models: tuple[str, ...] = ()
    time: TimeSpan = TimeSpan()
    #: Calls per pairing (:data:`bbox_lark.numbers.outcomes.PAIRINGS` order: id, order, ambiguous).
    pairing: tuple[int, ...] = (0, 0, 0)
    #: Counted ``# metrics`` whose ``cached`` exceeds their ``prompt`` (W028).
    metrics_cached_over_prompt: int = 0

    def event_count(self, kind: str) -> int:
        return dict(self.events).get(kind, 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATS_VERSION,
            "header": dict(self.header),
            "lines": self.lines.to_json(),
            "events": dict(self.events),
            "lifecycle": dict(self.lifecycle),
            "steps": self.steps.to_json(),
            "timestamps": self.timestamps,
            "calls": {
                "tool": self.tools.to_json(),
                "mcp": self.mcp.to_json(),
                "subagent": self.subagents.to_json(),
            },
            "call_ids": self.call_ids,
            "spans": self.spans,
            "redactions": self.redactions.to_json(),
            "blobs": self.blobs.to_json(),
            "tokens": {
                "metrics": self.metrics.to_json(),
                "header": self.header_totals.to_json(),
                "end": self.end_totals.to_json(),
                "summary": self.summary_totals.to_json(),
            },
            "usage": self.usage.to_json(),
            "cost_usd": _decimal_json(self.cost.stated),
            "estimated_cost_usd": _decimal_json(self.cost.estimated),
            "estimate_note": self.cost.estimate_note,
            "estimate_lower_bound": self.cost.lower_bound,
            "models": list(self.models),
            "time": self.time.to_json(),
            "pairing": dict(zip(PAIRINGS, self.pairing, strict=True)),
            "metrics_cached_over_prompt": self.metrics_cached_over_prompt,
        }


# -- values -----------------------------------------------------------------------------


def sum_metrics(events: Iterable[Event]) -> MetricsTotals:
    """Token and cost sums over every ``# metrics`` in ``events``, once per step
    (:mod:`bbox_lark.numbers.session` counts them)."""
    counter = SessionCounter(estimate=False)
    for event in events:
        counter.feed(event)
    return _metrics_of(counter.finish()[2])


def _metrics_of(totals: SessionTotals) -> MetricsTotals:
    return MetricsTotals(
        totals.metrics_totals, totals.metrics_seen, totals.metrics_counted, totals.metrics_skipped
    )


# -- the statistics ---------------------------------------------------------------------


def _calls(totals: SessionTotals, family: str) -> CallCounts:
    tools = [tool for tool in totals.tools if tool.family == family]
    names = Counter({tool.tool: tool.calls for tool in tools})
    outcomes = {tool.tool: tool.outcomes for tool in tools}
    by_name = _tally(names)
    summed = _NO_OUTCOMES
    for counts in outcomes.values():
        summed = _add_outcomes(summed, counts)
    return CallCounts(
        total=sum(names.values()),
        open=summed[OUTCOMES.index("pending")],
        by_name=by_name,
        outcomes=summed,
        by_tool=tuple((name, outcomes[name]) for name, _ in by_name),
    )


def _usage(totals: SessionTotals) -> UsageTotals:
    return UsageTotals(
        usage=totals.usage,
        source=totals.usage_source,
        responses=totals.responses,
        by_model=tuple(
            (model if model is not None else "(none)", usage) for model, usage in totals.usage_by_model
        ),
    )


def _header_scalars(fields: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((key, fields[key]) for key in HEADER_KEYS if isinstance(fields.get(key), str))


def compute_stats(document: Document) -> Stats:
    """The statistics of a parsed document (:class:`StatsCounter` over its lines)."""
    counter = StatsCounter(document.header)
    for node in document.lines:
        counter.append(node)
    return counter.finish(document.header_lines)


class Distinct:
    """How many distinct strings were :meth:`add` ed, exactly, in bounded memory: up to
    :attr:`LIMIT` are held in a set; past that, the set is written to a temporary file as one
    sorted run and emptied, and :meth:`count` merges the runs (an external sort). A session
    of a million calls counts its call ids in the memory of :attr:`LIMIT` of them."""

    #: Values held in memory before a run is written out.
    LIMIT = 20_000

    def __init__(self) -> None:
        self._held: set[str] = set()
        self._runs: list[IO[bytes]] = []

    def add(self, value: str) -> None:
        held = self._held
        held.add(value)
        if len(held) > self.LIMIT:
            self._spill()

    def _spill(self) -> None:
        run = tempfile.TemporaryFile()  # noqa: SIM115 (closed by count())
        # Escaped so that no value holds the separator; runs are sorted as the bytes they
        # are written as, the order heapq.merge compares them in.
        run.writelines(
            sorted(
                value.encode("utf-8", "surrogatepass").replace(b"\\", b"\\\\").replace(b"\n", b"\\n") + b"\n"
                for value in self._held
            )
        )
        run.seek(0)
        self._runs.append(run)
        self._held = set()

    def count(self) -> int:
        """The number of distinct values added (then the runs are gone: call it once)."""
        if not self._runs:
            return len(self._held)
        if self._held:
            self._spill()
        count = 0
        last: bytes | None = None
        try:
            for value in heapq.merge(*self._runs):
                if value != last:
                    count += 1
                    last = value
        finally:
            for run in self._runs:
                run.close()
            self._runs = []
        return count


class StatsCounter:
    """:func:`compute_stats` as a stream: :meth:`append` each body node in file order (a
    document's lines, or :func:`bbox_lark.syntax.parser.iter_nodes`' nodes with continuations
    attached), then :meth:`finish`. It keeps the calls still open, the models and tools
    named, the blob digests and at most :attr:`Distinct.LIMIT` distinct steps, call ids and
    spans in memory (more go to disk), never the lines (docs/design.md, "Memory per
    command"). It is a :class:`bbox_lark.api.Keeper`: ``run(checker, stream, counter)``
    checks and counts in one pass."""

    def __init__(self, header: Mapping[str, Any]) -> None:
        self._header = header
        self._numbers = SessionCounter(header, steps=False, calls=False)
        self._classes: Counter[str] = Counter()
        self._body = 0
        self._kinds: Counter[str] = Counter()
        self._lifecycle: Counter[str] = Counter()
        self._step_values = Distinct()
        self._step_min: int | None = None
        self._step_max: int | None = None
        self._step_lines = 0
        self._timestamps = 0
        self._ids = Distinct()
        self._spans = Distinct()
        self._redactions: Counter[str] = Counter()
        self._blob_count = 0
        self._blob_bytes = 0
        self._blob_digests: set[str] = set()

    def append(self, node: Line | Record, /) -> None:
        """Count one body line: its node (an event, a continuation or a blank line), or its
        record (:func:`bbox_lark.syntax.record.iter_records`: what ``check`` reads; no node is
        built but for the few numbers a record does not hold)."""
        self._body += 1
        kind = node.kind
        self._classes[kind if kind in ("blank", "continuation", "comment", "unknown") else "content"] += 1
        raw = node.raw
        if "[redacted:" in raw:
            for redaction in line_redactions(node.node() if isinstance(node, Record) else node):
                self._redactions[redaction.kind] += 1
        if "@blob" in raw:
            for blob in find_blobs(raw, node.line):
                self._blob_count += 1
                self._blob_bytes += blob.size_int or 0
                if blob.sha256:
                    self._blob_digests.add(blob.sha256.lower())
        if type(node) is Record:
            if not node.is_event:
                return
        elif not isinstance(node, Event):
            return
        self._kinds[kind] += 1
        if kind == "lifecycle":
            self._lifecycle[node.name or ""] += 1
        numbers = self._numbers
        numbers.feed(node)  # it reads the line's step and ts: read them from it
        if (step := numbers.line_step) is not None:
            self._step_lines += 1
            self._step_values.add(str(step))
            if self._step_min is None or step < self._step_min:
                self._step_min = step
            if self._step_max is None or step > self._step_max:
                self._step_max = step
        if numbers.line_ts is not None:
            self._timestamps += 1
        if kind in CALL_ID_KINDS:
            if value := node.id:
                self._ids.add(value)
            if value := node.span:
                self._spans.add(value)

    def finish(self, header_lines: Sequence[HeaderLine]) -> Stats:
        """The statistics of everything appended (``header_lines``: the document's)."""
        numbers = self._numbers.finish()[2]
        classes = self._classes
        header = len(header_lines)
        blank = sum(1 for h in header_lines if not h.raw.strip()) + classes["blank"]
        comment = classes["comment"]
        total = header + self._body
        redactions = self._redactions
        return Stats(
            header=_header_scalars(self._header),
            lines=LineCounts(
                total=total,
                header=header,
                body=self._body,
                content=total - blank - comment,
                blank=blank,
                comment=comment,
                continuation=classes["continuation"],
                unknown=classes["unknown"],
            ),
            events=tuple((kind, self._kinds[kind]) for kind in vocabulary().event_kinds),
            lifecycle=_tally(self._lifecycle),
            steps=StepRange(self._step_min, self._step_max, self._step_values.count(), self._step_lines),
            timestamps=self._timestamps,
            tools=_calls(numbers, "tool"),
            mcp=_calls(numbers, "mcp"),
            subagents=_calls(numbers, "subagent"),
            call_ids=self._ids.count(),
            spans=self._spans.count(),
            redactions=Redactions(sum(redactions.values()), _tally(redactions)),
            blobs=Blobs(count=self._blob_count, bytes=self._blob_bytes, distinct=len(self._blob_digests)),
            metrics=_metrics_of(numbers),
            header_totals=numbers.header_totals,
            end_totals=numbers.end_totals,
            summary_totals=numbers.summary_totals,
            usage=_usage(numbers),
            cost=Cost(
                numbers.stated_cost_usd,
                numbers.estimated_cost_usd,
                numbers.estimate_note,
                numbers.estimate_lower_bound,
            ),
            models=numbers.models,
            time=TimeSpan(numbers.first_ts, numbers.last_ts, numbers.duration_ms),
            pairing=numbers.pairing,
            metrics_cached_over_prompt=numbers.metrics_cached_over_prompt,
        )


# -- several files ----------------------------------------------------------------------


def _sum_tally(tallies: Iterable[Tally]) -> Tally:
    total: Counter[str] = Counter()
    for tally in tallies:
        total.update(dict(tally))
    return _tally(total)


def _sum_calls(calls: list[CallCounts]) -> CallCounts:
    by_name = _sum_tally(c.by_name for c in calls)
    per_tool: dict[str, Outcomes] = {}
    outcomes = _NO_OUTCOMES
    for c in calls:
        outcomes = _add_outcomes(outcomes, c.outcomes)
        for name, counts in c.by_tool:
            per_tool[name] = _add_outcomes(per_tool.get(name, _NO_OUTCOMES), counts)
    return CallCounts(
        total=sum(c.total for c in calls),
        open=sum(c.open for c in calls),
        by_name=by_name,
        outcomes=outcomes,
        by_tool=tuple((name, per_tool[name]) for name, _ in by_name),
    )


def _sum_usage(items: list[UsageTotals]) -> UsageTotals:
    usage = Usage()
    by_model: dict[str, Usage] = {}
    for item in items:
        usage = usage + item.usage
        for model, more in item.by_model:
            by_model[model] = by_model.get(model, Usage()) + more
    sources = {item.source for item in items if item.source is not None}
    return UsageTotals(
        usage=usage,
        source=sources.pop() if len(sources) == 1 else "mixed" if sources else None,
        responses=sum(item.responses for item in items),
        by_model=tuple(by_model.items()),
    )


def _sum_cost(stats: list[Stats]) -> Cost:
    """Stated costs add up where stated; estimates add up, and the note says how many files
    with usage have none."""
    stated = [s.cost.stated for s in stats if s.cost.stated is not None]
    estimated = [s.cost.estimated for s in stats if s.cost.estimated is not None]
    missing = sum(1 for s in stats if s.cost.estimated is None and s.usage.source is not None)
    note = None
    if missing:
        note = f"{missing} file(s) with usage have no estimate"
    elif not estimated:
        note = "no usage"
    return Cost(
        sum(stated, Decimal(0)) if stated else None,
        sum(estimated, Decimal(0)) if estimated else None,
        note,
        any(s.cost.lower_bound for s in stats),
    )


def _sum_time(spans: list[TimeSpan]) -> TimeSpan:
    from bbox_lark.syntax.values import parse_timestamp

    def when(value: str) -> Any:
        return parse_timestamp(value)

    firsts = [t.first_ts for t in spans if t.first_ts is not None]
    lasts = [t.last_ts for t in spans if t.last_ts is not None]
    durations = [t.duration_ms for t in spans if t.duration_ms is not None]
    return TimeSpan(
        min(firsts, key=when) if firsts else None,
        max(lasts, key=when) if lasts else None,
        sum(durations) if durations else None,
    )


def _sum_totals(totals: Iterable[Totals]) -> Totals:
    out = Totals()
    for more in totals:
        out = out + more
    return out


def combine_stats(items: Iterable[Stats]) -> Stats:
    """The totals of several files' statistics (``bbox-lark stats`` over several files).

    Counts are added up; the step range spans every file (``min`` of the lowest, ``max`` of
    the highest); token and cost sums and the stated totals are added per source, usage and
    stated and estimated costs are added up (see :func:`_sum_cost`), models are listed once
    and the durations add up. Values
    that are distinct *per file* (distinct steps, call ids, spans, blob hashes) are added
    too: an id used in two files counts twice. The header is not combined."""
    stats = list(items)
    mins = [s.steps.min for s in stats if s.steps.min is not None]
    maxes = [s.steps.max for s in stats if s.steps.max is not None]
    kinds: Counter[str] = Counter()
    for s in stats:
        kinds.update(dict(s.events))
    return Stats(
        header=(),
        lines=LineCounts(
            **{name: sum(getattr(s.lines, name) for s in stats) for name in LineCounts.__dataclass_fields__}
        ),
        events=tuple((kind, kinds[kind]) for kind in vocabulary().event_kinds),
        lifecycle=_sum_tally(s.lifecycle for s in stats),
        steps=StepRange(
            min(mins) if mins else None,
            max(maxes) if maxes else None,
            sum(s.steps.distinct for s in stats),
            sum(s.steps.lines for s in stats),
        ),
        timestamps=sum(s.timestamps for s in stats),
        tools=_sum_calls([s.tools for s in stats]),
        mcp=_sum_calls([s.mcp for s in stats]),
        subagents=_sum_calls([s.subagents for s in stats]),
        call_ids=sum(s.call_ids for s in stats),
        spans=sum(s.spans for s in stats),
        redactions=Redactions(
            sum(s.redactions.total for s in stats), _sum_tally(s.redactions.by_kind for s in stats)
        ),
        blobs=Blobs(
            count=sum(s.blobs.count for s in stats),
            bytes=sum(s.blobs.bytes for s in stats),
            distinct=sum(s.blobs.distinct for s in stats),
        ),
        metrics=MetricsTotals(
            _sum_totals(s.metrics.totals for s in stats),
            seen=sum(s.metrics.seen for s in stats),
            counted=sum(s.metrics.counted for s in stats),
            skipped=sum(s.metrics.skipped for s in stats),
        ),
        header_totals=_sum_totals(s.header_totals for s in stats),
        end_totals=_sum_totals(s.end_totals for s in stats),
        summary_totals=_sum_totals(s.summary_totals for s in stats),
        usage=_sum_usage([s.usage for s in stats]),
        cost=_sum_cost(stats),
        models=tuple(dict.fromkeys(model for s in stats for model in s.models)),
        time=_sum_time([s.time for s in stats]),
        pairing=tuple(sum(s.pairing[i] for s in stats) for i in range(len(PAIRINGS))),
        metrics_cached_over_prompt=sum(s.metrics_cached_over_prompt for s in stats),
    )


def stats_run_json(
    files: Iterable[tuple[str, Stats]],
    unreadable: Iterable[Mapping[str, str]] = (),
    counted_in: Iterable[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """``bbox-lark stats --json`` (``docs/schema/stats.schema.json``): one shape for one file
    or many, so a script reads ``files`` and ``totals`` alike whatever it was given: each
    file's statistics with its path, their totals, and the paths that could not be read."""
    listed = list(files)
    totals = combine_stats(stats for _, stats in listed).to_json()
    del totals["version"], totals["header"]
    return {
        "version": STATS_VERSION,
        "files": [{"path": path, **stats.to_json()} for path, stats in listed],
        "totals": {"files": len(listed), **totals},
        "unreadable": [dict(entry) for entry in unreadable],
        "counted_in": [dict(entry) for entry in counted_in],
    }
