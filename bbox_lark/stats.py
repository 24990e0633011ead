"""Statistics of a bbox/1 document (``bbox-lark stats``; DECISIONS §10).

What is counted, and how:

* **Lines.** ``total`` physical lines = ``header`` + ``body``. ``blank`` counts
  whitespace-only lines anywhere, ``comment`` the body's ``#`` lines and ``content``
  everything else (the reference tool's meaning: ``total = content + blank + comment``).
  ``continuation`` and ``unknown`` are body lines of those classes (part of ``content``).
* **Events.** Every event kind, with zeros. ``lifecycle`` counts lifecycle lines by
  primitive.
* **Steps.** ``step=`` on events, lifecycle lines included; comments are not counted (a
  ``# metrics step=N`` refers to a step, it does not take one).
* **Calls.** Paired as the correlation checks pair them (:mod:`bbox_lark.correlate`): a start
  and its completion are **one** call, a ``t~`` progress line is no call. Tool calls are
  counted by tool name, MCP calls by ``server.method``, subagents by type; ``open`` counts
  starts that nothing completes.
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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.ast import Document, Event
from bbox_lark.checks.blobs import iter_blobs
from bbox_lark.checks.redactions import iter_redactions
from bbox_lark.correlate import FAMILIES, pair_calls
from bbox_lark.grammar import vocabulary
from bbox_lark.numbers import HEADER_TOTALS, Totals, read_totals
from bbox_lark.values import parse_int

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


@dataclass(frozen=True, slots=True)
class CallCounts:
    """Calls of one family: a start and its completion count once."""

    total: int = 0
    #: Starts that nothing completes.
    open: int = 0
    by_name: Tally = ()

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "open": self.open, "by_name": dict(self.by_name)}


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
        }


# -- values -----------------------------------------------------------------------------


def _metrics_step(event: Event, metrics: Mapping[str, Any]) -> int | None:
    step = event.step
    if step is not None:
        return step
    return parse_int(metrics.get("step"))


def sum_metrics(events: Iterable[Event]) -> MetricsTotals:
    """Token and cost sums over every ``# metrics`` in ``events``, once per step."""
    total = Totals()
    seen = counted = skipped = 0
    steps: set[int] = set()
    for event in events:
        metrics = event.metrics
        if metrics is None:
            continue
        seen += 1
        step = _metrics_step(event, metrics)
        if step is not None:
            if step in steps:
                skipped += 1
                continue
            steps.add(step)
        counted += 1
        total = total + read_totals(metrics)
    return MetricsTotals(total, seen, counted, skipped)


# -- the statistics ---------------------------------------------------------------------


def _line_counts(document: Document) -> LineCounts:
    header = len(document.header_lines)
    header_blank = sum(1 for h in document.header_lines if not h.raw.strip())
    classes = Counter(
        node.kind if node.kind in ("blank", "continuation", "comment", "unknown") else "content"
        for node in document.lines
    )
    body = len(document.lines)
    blank = header_blank + classes["blank"]
    comment = classes["comment"]
    total = header + body
    return LineCounts(
        total=total,
        header=header,
        body=body,
        content=total - blank - comment,
        blank=blank,
        comment=comment,
        continuation=classes["continuation"],
        unknown=classes["unknown"],
    )


def _calls(calls: Iterable[Event], open_starts: Iterable[Event], family: str) -> CallCounts:
    names = Counter(event.name or "(none)" for event in calls if FAMILIES.get(event.kind) == family)
    still_open = sum(1 for event in open_starts if FAMILIES.get(event.kind) == family)
    return CallCounts(total=sum(names.values()), open=still_open, by_name=_tally(names))


def _header_scalars(fields: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((key, fields[key]) for key in HEADER_KEYS if isinstance(fields.get(key), str))


def compute_stats(document: Document) -> Stats:
    """The statistics of a parsed document."""
    events = document.events
    kinds = Counter(event.kind for event in events)
    lifecycle = Counter(event.name or "" for event in events if event.kind == "lifecycle")

    steps = [step for e in events if e.kind not in ("comment", "unknown") and (step := e.step) is not None]
    step_range = StepRange(
        min(steps) if steps else None, max(steps) if steps else None, len(set(steps)), len(steps)
    )

    pairing = pair_calls(events)
    ids: set[str] = set()
    spans: set[str] = set()
    for event in events:
        if event.kind in CALL_ID_KINDS:
            if event.id:
                ids.add(event.id)
            if event.span:
                spans.add(event.span)

    redaction_kinds = Counter(r.kind for r in iter_redactions(document))
    blob_list = list(iter_blobs(document))
    blobs = Blobs(
        count=len(blob_list),
        bytes=sum(b.size_int or 0 for b in blob_list),
        distinct=len({b.sha256.lower() for b in blob_list if b.sha256}),
    )

    ends = [e for e in events if e.kind == "lifecycle" and e.name == "end"]
    summaries = [e for e in events if e.kind == "comment" and e.name == "summary"]

    return Stats(
        header=_header_scalars(document.header),
        lines=_line_counts(document),
        events=tuple((kind, kinds[kind]) for kind in vocabulary().event_kinds),
        lifecycle=_tally(lifecycle),
        steps=step_range,
        timestamps=sum(1 for event in events if event.ts is not None),
        tools=_calls(pairing.calls, pairing.open_starts, "tool"),
        mcp=_calls(pairing.calls, pairing.open_starts, "mcp"),
        subagents=_calls(pairing.calls, pairing.open_starts, "subagent"),
        call_ids=len(ids),
        spans=len(spans),
        redactions=Redactions(sum(redaction_kinds.values()), _tally(redaction_kinds)),
        blobs=blobs,
        metrics=sum_metrics(events),
        header_totals=read_totals(document.header, HEADER_TOTALS),
        end_totals=read_totals(ends[-1].fields) if ends else Totals(),
        summary_totals=read_totals(summaries[-1].fields) if summaries else Totals(),
    )


# -- several files ----------------------------------------------------------------------


def _sum_tally(tallies: Iterable[Tally]) -> Tally:
    total: Counter[str] = Counter()
    for tally in tallies:
        total.update(dict(tally))
    return _tally(total)


def _sum_calls(calls: list[CallCounts]) -> CallCounts:
    return CallCounts(
        total=sum(c.total for c in calls),
        open=sum(c.open for c in calls),
        by_name=_sum_tally(c.by_name for c in calls),
    )


def _sum_totals(totals: Iterable[Totals]) -> Totals:
    out = Totals()
    for more in totals:
        out = out + more
    return out


def combine_stats(items: Iterable[Stats]) -> Stats:
    """The totals of several files' statistics (``bbox-lark stats`` over several files).

    Counts are added up; the step range spans every file (``min`` of the lowest, ``max`` of
    the highest); token and cost sums and the stated totals are added per source. Values
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
    )


def stats_run_json(
    files: Iterable[tuple[str, Stats]], unreadable: Iterable[Mapping[str, str]] = ()
) -> dict[str, Any]:
    """``bbox-lark stats --json`` over several files (``docs/schema/stats.schema.json``,
    the run form): each file's statistics with its path, their totals, and the paths that
    could not be read."""
    listed = list(files)
    totals = combine_stats(stats for _, stats in listed).to_json()
    del totals["version"], totals["header"]
    return {
        "version": STATS_VERSION,
        "files": [{"path": path, **stats.to_json()} for path, stats in listed],
        "totals": {"files": len(listed), **totals},
        "unreadable": [dict(entry) for entry in unreadable],
    }
