"""The numbers of a session: call outcomes, model usage, step metrics and session totals.

One module decides them (docs/reference.md#stats, docs/reference.md#usage and
docs/reference.md#outcomes), so that ``stats``, the tables, the report and the converters all count alike.

**Outcomes.** :func:`call_outcome` says how a call ended, from its start line and the line
that completed it (:mod:`bbox_lark.syntax.correlate` pairs them): one of :data:`OUTCOMES`.

* ``ok``: ``[ok]``, a count, a selection, fields, free text, a blob, ``[loaded]``, ``[auto]``
  and ``[auto: …]``, a redacted result (the call ended; only its text was hidden);
* ``error``: ``[err: …]``, ``[error]``, ``[error: …]``, or a text result that starts with
  ``error:`` (any case);
* ``pending``: a start (``t!``, ``[running]``, ``[pending]``, ``[started]``,
  ``[launched]``) that nothing completed;
* ``skipped``: ``[skip]``; ``retry``: ``[retry N/M]``;
* ``unknown``: no result at all (``t:read a.rs`` with no arrow, or an empty one).

The completion's result decides when there is one, else the call's own line's.

**Usage of a model response** (§12). Writers put usage on event lines (``tokens_in=9
tokens_out=3 tokens_cached=12834``) and restate one response's usage on each of its lines,
``tokens_out`` growing as it streams. Consecutive event lines that state usage with equal
``tokens_in`` and ``tokens_cached``, with no ``u:`` or ``o:`` line between them, are **one
response**; its output is the largest ``tokens_out``. Lines that state no usage (a ``t:``
completion, a comment) neither join nor end a response; ``u:`` and ``o:`` lines end it, as
does a line whose usage differs. Comments and lifecycle lines are not responses (``@end
tokens_in=…`` states the session's totals). :class:`Responses` does the grouping.

**Step metrics** (§10). ``# metrics`` (trailing, or a ``# metrics step=N`` line) count once
per step, the first one seen for a step winning; metrics without a step each count. Keys are
aliased (:data:`METRIC_ALIASES`): ``prompt``/``prompt_tokens``/``tokens_in``,
``completion``/``completion_tokens``/``tokens_out``, ``cached``/``cached_tokens``/
``tokens_cached``, ``cost``/``cost_usd``, ``tokens``/``total_tokens``.

**Which source a session's usage comes from.** ``# metrics`` when any counted metrics state
a token count (the writer summed them per step on purpose), else the responses on event
lines; :attr:`SessionTotals.usage_source` says which (``metrics``, ``responses`` or None),
and both sums stay visible (:attr:`SessionTotals.metrics_usage`,
:attr:`SessionTotals.response_usage`). Totals the file states itself (header
``tokens_total_in``/``tokens_total_out``/``tokens_cached``, the last ``@end`` line's fields,
the closing ``# tokens=… cost=…`` comment) are reported beside, never added.

**Cost.** The *stated* cost is the last ``@end`` line's ``cost``/``cost_usd``, else the
closing summary comment's, else the ``# metrics`` costs summed; it is never replaced. The
*estimated* cost (:class:`Pricer`) prices the counted usage with the ``genai-prices`` table
(the ``prices`` extra: ``pip install 'bbox-lark[prices]'``; imported only when an estimate
is asked for). Usage names follow the writers: ``tokens_in`` excludes cache reads
(Anthropic's convention, what Claude-based writers write), so the price table, whose input
*includes* cache reads, is given ``tokens_in + tokens_cached`` as input and
``tokens_cached`` as cache reads. Each request (a response, or a step's ``# metrics``) is
priced on its own, since prices have tiers by a request's input size. Cache *writes* have no
writer's name on event lines: a writer that leaves them out of ``tokens_in`` leaves them out
of the estimate too (one that states a session's cost, as ``@end cost_usd=``, may count
them: then the two differ); the Claude Code importer adds them to ``tokens_in``, priced as
plain input. The model of a request is the one in force at its first line: the header
``model:``, switched by ``# model: NAME`` comments and by ``model=`` fields (``@init
model=…``, ``a: … model=…``). No estimate when a model that used tokens is unknown (not
named, or not in the table): a partial sum would read as the whole;
:attr:`SessionTotals.estimate_note` says why.

**Records.** :class:`SessionCounter` reads a session's events in order (in bounded memory:
the open calls, the current response and one small record per distinct step) and hands out
a :class:`CallRecord` for each call once its outcome is known; :meth:`SessionCounter.finish`
gives the :class:`StepRecord` of each step and the :class:`SessionTotals`.
:func:`read_session` does this over a file's text or a stream of lines (through
:func:`bbox_lark.syntax.parser.iter_nodes`) and :func:`document_numbers` over a parsed document.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field
from decimal import Decimal
from typing import Any, cast

from bbox_lark._classes import dataclass
from bbox_lark.numbers.outcomes import OUTCOMES, PAIRINGS, call_outcome, starts_call
from bbox_lark.numbers.prices import Estimate, Pricer
from bbox_lark.numbers.usage import (
    HEADER_TOTALS,
    Response,
    Responses,
    Totals,
    Usage,
    number_reads,
    read_totals,
)
from bbox_lark.syntax.correlate import AMBIGUOUS, CALL, COMPLETION, FAMILIES, Pairer, call_key
from bbox_lark.syntax.nodes import Document, Event
from bbox_lark.syntax.record import Record
from bbox_lark.syntax.values import parse_int, parse_timestamp

#: Longest args summary in a :class:`CallRecord`, in characters.
ARGS_SUMMARY_CHARS = 200


# -- records ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call: a start and its completion, or a call line that completes nothing."""

    session_id: str
    #: The call's ``id=`` value, else its ``span=`` value, else None (:attr:`key_field`).
    key: str | None
    #: ``id``, ``span`` or None.
    key_field: str | None
    #: Tool name, ``server.method``, subagent type, skill, plan action; None when unnamed.
    tool: str | None
    #: Correlation family: ``tool mcp subagent question skill plan``.
    family: str
    #: The start line's kind (``tool_start``, ``tool``, ``mcp``, ...).
    kind: str
    #: The positional arguments, space-separated, cut at :data:`ARGS_SUMMARY_CHARS`.
    args: str
    start_line: int
    #: The completing line (an ``o:`` or a later line of the family); None when nothing
    #: completed the call (or it needed nothing: then ``end_line`` is ``start_line``).
    end_line: int | None
    outcome: str
    #: ``latency_ms=`` of the completion, else of the start, else the time between their
    #: ``ts=`` values; None when none is known.
    latency_ms: int | None
    step: int | None
    ts: str | None
    #: The model response whose line made the call (:attr:`Response.ordinal`), or None.
    response: int | None = None
    #: The usage the call's line states: shared by the calls of one response, so add up
    #: one call per :attr:`response`, or use the session totals.
    usage: Usage | None = None
    #: How the call was paired (:data:`PAIRINGS`, §13): ``id`` (by its key, or it ended on
    #: its own line: nothing guessed), ``order`` (a start without a key, completed by the
    #: next line of its tool), ``ambiguous`` (its result could belong to another open call
    #: with the same key, or the same tool without a key: paired in order, a guess).
    pairing: str = "id"


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One distinct ``step=`` value: of an event line, or only of a ``# metrics step=N``
    (then ``events`` is 0 and the lines are the metrics line's)."""

    session_id: str
    step: int
    first_line: int
    last_line: int
    #: Event lines with this step (comments excluded).
    events: int
    #: Calls whose start line has this step.
    calls: int
    #: The ``# metrics`` counted for the step (the first seen), or empty totals.
    metrics: Totals
    #: Usage of the responses whose first line has this step.
    usage: Usage


@dataclass(frozen=True, slots=True)
class ToolOutcomes:
    """How the calls of one tool (family and name) ended."""

    family: str
    tool: str
    calls: int
    #: One count per outcome, in :data:`OUTCOMES` order.
    outcomes: tuple[int, ...]

    def to_json(self) -> dict[str, int]:
        return {"calls": self.calls, **dict(zip(OUTCOMES, self.outcomes, strict=True))}


@dataclass(frozen=True, slots=True)
class SessionTotals:
    """A session's totals (one file)."""

    session_id: str
    #: Event lines (comments, lifecycle and unknown lines included).
    events: int
    calls: int
    #: Calls per outcome, in :data:`OUTCOMES` order.
    outcomes: tuple[int, ...]
    #: Per tool, sorted by family then name.
    tools: tuple[ToolOutcomes, ...]
    #: Distinct ``step=`` values on event lines.
    steps: int
    responses: int
    #: The usage counted (from :attr:`usage_source`).
    usage: Usage
    #: ``metrics``, ``responses`` or None (no usage stated).
    usage_source: str | None
    response_usage: Usage
    metrics_usage: Usage
    #: ``# metrics`` seen, counted and skipped (an earlier one counted for their step).
    metrics_seen: int
    metrics_counted: int
    metrics_skipped: int
    #: The ``# metrics`` sums (tokens and cost), each step once.
    metrics_totals: Totals
    header_totals: Totals
    end_totals: Totals
    summary_totals: Totals
    stated_cost_usd: Decimal | None
    estimated_cost_usd: Decimal | None
    #: Why there is no estimate (or None).
    estimate_note: str | None
    #: Every model named (header, ``# model:``, ``model=``), in order of first appearance.
    models: tuple[str, ...]
    #: Counted usage per model in force (None: no model named yet).
    usage_by_model: tuple[tuple[str | None, Usage], ...]
    #: Earliest and latest valid ``ts=``, and the milliseconds between them.
    first_ts: str | None
    last_ts: str | None
    duration_ms: int | None
    #: True when the estimate is a lower bound: some usage named no cache writes (§13).
    estimate_lower_bound: bool = False
    #: Calls per pairing (:data:`PAIRINGS` order).
    pairing: tuple[int, ...] = (0, 0, 0)
    #: Counted ``# metrics`` whose ``cached`` exceeds their ``prompt`` (W028; the prompt
    #: was taken as uncached input).
    metrics_cached_over_prompt: int = 0

    def outcome_count(self, outcome: str) -> int:
        return self.outcomes[OUTCOMES.index(outcome)]


@dataclass(frozen=True, slots=True)
class SessionNumbers:
    """What :func:`read_session` and :func:`document_numbers` give."""

    totals: SessionTotals
    #: Every call in order of its start line (empty when an ``on_call`` took them).
    calls: tuple[CallRecord, ...] = ()
    steps: tuple[StepRecord, ...] = ()


# -- counting ---------------------------------------------------------------------------


def _args_summary(event: Event | Record) -> str:
    parts: list[str] = []
    for arg in event.args:
        parts.append("[" + ", ".join(str(a) for a in arg) + "]" if isinstance(arg, tuple) else str(arg))
    text = " ".join(parts)
    return text if len(text) <= ARGS_SUMMARY_CHARS else text[: ARGS_SUMMARY_CHARS - 1] + "…"


def _latency(start: _Start, end: Event | Record | None) -> int | None:
    if end is not None and (value := end.latency_ms) is not None:
        return value
    if (value := start.latency_ms) is not None:
        return value
    if end is None or end.line == start.line:
        return None
    a, b = start.ts, end.ts
    if a is None or b is None:
        return None
    first, last = parse_timestamp(a), parse_timestamp(b)
    if first is None or last is None:
        return None
    try:
        milliseconds = round((last - first).total_seconds() * 1000)
    except TypeError:
        return None
    return milliseconds if milliseconds >= 0 else None


@dataclass(slots=True)
class _Start:
    """What a call's numbers need of its start line, kept while the call is open instead of
    the line's node (a never-completed call costs this small record until the end of the
    file, as :class:`~bbox_lark.syntax.correlate.OpenCall` does for ``check``)."""

    line: int
    kind: str
    name: str | None
    key: Any
    args: str
    step: int | None
    ts: str | None
    latency_ms: int | None
    usage: Usage | None
    response: int | None
    starts: bool

    @classmethod
    def of(
        cls,
        event: Event | Record,
        response: int | None,
        usage: Usage | None,
        step: int | None,
        ts: str | None,
    ) -> _Start:
        """``usage``, ``step`` and ``ts``: the line's, as :meth:`SessionCounter.feed` read them."""
        return cls(
            event.line,
            event.kind,
            event.name,
            call_key(event),
            _args_summary(event),
            step,
            ts,
            event.latency_ms,
            usage,
            response,
            starts_call(event),
        )

    @classmethod
    def counted(cls, event: Event | Record) -> _Start:
        """What counting the call needs (its line, kind, name, key and whether it starts),
        without what only its :class:`CallRecord` reads (``SessionCounter(calls=False)``)."""
        return cls(
            event.line,
            event.kind,
            event.name,
            call_key(event),
            "",
            None,
            None,
            None,
            None,
            None,
            starts_call(event),
        )

    @property
    def pairing_key(self) -> Any:
        return self.key if self.key is not None else ("", self.name)


def _comment_model(event: Event | Record) -> str | None:
    """The model a ``# model: NAME …`` comment switches to."""
    text = event.text
    head, _, rest = text.partition(":")
    if head.strip() != "model":
        return None
    for word in rest.split():
        if "=" not in word:
            return word.strip("\"'") or None
    return None


@dataclass(slots=True)
class _Step:
    first_line: int
    last_line: int
    events: int = 0
    calls: int = 0
    metrics: Totals = field(default_factory=Totals)
    usage: Usage = field(default_factory=Usage)


class SessionCounter:
    """A session's numbers as a stream: :meth:`feed` each event (a document's events, or
    :func:`~bbox_lark.syntax.parser.iter_nodes`' events) in order; each call returns the
    :class:`CallRecord` of the calls this line decided; :meth:`finish` returns the calls
    still open (``pending``), the steps and the totals.

    ``header`` is the document's header fields (for the session id, the model and the
    stated totals); ``session_id`` overrides the header's ``id``. Without ``steps`` no
    record is kept per step (``stats`` reads none: its memory then does not grow with the
    steps), and :meth:`finish` gives no steps and counts none. Without ``calls`` no
    :class:`CallRecord` is made (:meth:`feed` and :meth:`finish` give none; the calls are
    counted all the same).

    It reads nodes or records (:class:`~bbox_lark.syntax.record.Record`, what ``check``
    reads): a record's node is built only for what the record does not hold (a call's
    arguments, with ``calls``; the usage of a free-text line whose fields stand inside its
    text; a text result that may start with ``error:``)."""

    def __init__(
        self,
        header: Mapping[str, Any] | None = None,
        *,
        session_id: str | None = None,
        estimate: bool = True,
        steps: bool = True,
        calls: bool = True,
    ) -> None:
        self._keep_steps = steps
        self._keep_calls = calls
        fields = dict(header or {})
        header_id = fields.get("id")
        self.session_id = (
            session_id if session_id is not None else header_id if isinstance(header_id, str) else ""
        )
        self._response_prices = Pricer() if estimate else None
        self._metrics_prices = Pricer() if estimate else None
        self._header_totals = read_totals(fields, HEADER_TOTALS)
        self._pairer = Pairer()
        self._open: dict[int, _Start] = {}  # start line -> what its record needs
        self._responses = Responses()
        model = fields.get("model")
        self._models: dict[str, None] = {}
        if isinstance(model, str) and model:
            self._switch(model)
        self._events = 0
        self._outcomes = [0] * len(OUTCOMES)
        self._tools: dict[tuple[str, str], list[int]] = {}
        self._steps: dict[int, _Step] = {}
        self._response_count = 0
        self._response_usage = Usage()
        self._response_by_model: dict[str | None, Usage] = {}
        self._metrics = Totals()
        #: The counted metrics' usage, each made uncached per step (§13).
        self._metrics_usage = Usage()
        self._metrics_by_model: dict[str | None, Usage] = {}
        self._metric_steps: set[int] = set()
        self._metrics_seen = self._metrics_counted = self._metrics_skipped = 0
        self._end = Totals()
        self._summary = Totals()
        self._first: tuple[Any, str] | None = None
        self._last: tuple[Any, str] | None = None
        #: Open starts by pairing key (the call key, or the tool of a start without one).
        self._open_keys: dict[Any, int | dict[int, None]] = {}
        self._ambiguous: set[int] = set()
        self._pairing = [0] * len(PAIRINGS)
        self._over_prompt = 0
        self.line_ts: str | None = None
        self.line_step: int | None = None
        #: The last valid ``ts=`` value read and its moment.
        self._ts_seen: tuple[Any, Any] = (None, None)

    def _switch(self, model: str) -> None:
        self._responses.model = model
        self._models.setdefault(model, None)

    def _step(self, step: int, line: int) -> _Step:
        """The step's record (made at ``line`` when new); its lines are those of its events."""
        record = self._steps.get(step)
        if record is None:
            record = _Step(line, line)
            if self._keep_steps:
                self._steps[step] = record
        return record

    def _response_ended(self, response: Response) -> None:
        self._response_count += 1
        self._response_usage = self._response_usage + response.usage
        model = response.model
        self._response_by_model[model] = self._response_by_model.get(model, Usage()) + response.usage
        if self._response_prices is not None:
            self._response_prices.add(model, response.usage)
        if response.step is not None and self._keep_steps:
            record = self._step(response.step, response.first_line)
            record.usage = record.usage + response.usage

    def _record(
        self, start: _Start, end: Event | Record | None, line: Event | Record | None = None
    ) -> CallRecord | None:
        """Count a call: ``start`` completed by ``end``, or a call ``line`` that completes
        nothing (then ``start`` is its own), or a start nothing completed; its record (None
        without ``calls``)."""
        key = start.key
        family = FAMILIES[start.kind]
        if end is not None:
            outcome = call_outcome(end, end)  # the completing line's result decides
        elif line is not None:
            outcome = call_outcome(line)
        else:
            outcome = "pending"
        index = OUTCOMES.index(outcome)
        self._outcomes[index] += 1
        tally = self._tools.setdefault((family, start.name or "(none)"), [0] * len(OUTCOMES))
        tally[index] += 1
        number = start.line
        if number in self._ambiguous:
            self._ambiguous.discard(number)
            pairing = "ambiguous"
        elif key is None and end is not None and end.line != number:
            pairing = "order"
        else:
            pairing = "id"
        self._pairing[PAIRINGS.index(pairing)] += 1
        if not self._keep_calls:
            return None
        return CallRecord(
            session_id=self.session_id,
            key=key[1] if key is not None else None,
            key_field=key[0] if key is not None else None,
            tool=start.name,
            family=family,
            kind=start.kind,
            args=start.args,
            start_line=start.line,
            end_line=end.line if end is not None else None if start.starts else start.line,
            outcome=outcome,
            latency_ms=_latency(start, end),
            step=start.step,
            ts=start.ts,
            response=start.response,
            usage=start.usage,
            pairing=pairing,
        )

    def feed(self, event: Event | Record) -> list[CallRecord]:
        """Take the next event (its node or its record); return the calls it decided
        (usually none or one; none without ``calls``)."""
        kind = event.kind
        self._events += 1
        decided: list[CallRecord] = []
        # Model switches first: a line's own ``model=`` is the model of its response.
        if kind == "comment":
            if event.name == "model" and (model := _comment_model(event)) is not None:
                self._switch(model)
            elif event.name == "summary":
                self._summary = read_totals(event.fields)
        else:
            model_field = event.fields.get("model")
            if model_field is not None:
                model_field = number_reads(event).get("model")
            if isinstance(model_field, str) and model_field:
                self._switch(model_field)
            if kind == "lifecycle" and event.name == "end":
                self._end = read_totals(event.fields)
        for ended in self._responses.feed(event):
            self._response_ended(ended)
        current = self._responses.current
        response = current.ordinal if current is not None and self._responses.usage is not None else None

        ts = self._timestamp(event)
        step = event.step if kind not in ("comment", "unknown") else None
        # The line's valid ``ts=`` and (not on a comment or an unknown line) ``step=``, for
        # a caller that counts them too (:class:`bbox_lark.numbers.stats.StatsCounter`).
        self.line_ts, self.line_step = ts, step
        record = None
        if step is not None and self._keep_steps:  # else no step record is kept
            record = self._step(step, event.line)
            if record.events == 0:
                record.first_line = event.line
            record.events += 1
            record.last_line = event.line

        metrics = event.metrics
        if metrics is not None:
            self._count_metrics(event, metrics)

        outcome = self._pairer.feed(event)
        if outcome in (CALL, AMBIGUOUS):
            if record is not None:
                record.calls += 1
            if self._keep_calls:
                start = _Start.of(event, response, self._responses.usage, step, ts)
            else:
                start = _Start.counted(event)
            if start.starts:
                self._open[event.line] = start
                self._hold(start)
            else:
                made = self._record(start, None, event)
                if made is not None:
                    decided.append(made)
        elif outcome == COMPLETION:
            opened = self._open.pop(self._pairer.completed, None)
            if opened is not None:
                self._release(opened)
                made = self._record(opened, event)
                if made is not None:
                    decided.append(made)
        return decided

    def _timestamp(self, event: Event | Record) -> str | None:
        """``event.ts`` (a valid ``ts=``, else None), its timestamp parsed once; the earliest
        and the latest so far are kept."""
        stated = event.fields.get("ts")
        if stated is not None and stated == self._ts_seen[0]:  # lines often share their ts
            moment = self._ts_seen[1]
        else:
            moment = parse_timestamp(stated) if isinstance(stated, str) else None
            if moment is None:
                return None
            self._ts_seen = (stated, moment)
        ts = cast(str, stated)
        try:
            if self._first is None or moment < self._first[0]:
                self._first = (moment, ts)
            if self._last is None or moment >= self._last[0]:
                self._last = (moment, ts)
        except TypeError:  # pragma: no cover - every accepted ts has a zone
            pass
        return ts

    def _hold(self, start: _Start) -> None:
        """Note an open start under its pairing key: when another is open under the same
        key, a result could belong to either (§13), so both are ``ambiguous``."""
        key = start.pairing_key
        held = self._open_keys.get(key)
        if held is None:  # one call open under a key (most keys): its line, not a dict
            self._open_keys[key] = start.line
            return
        if isinstance(held, int):
            held = self._open_keys[key] = {held: None}
        self._ambiguous.update(held)
        self._ambiguous.add(start.line)
        held[start.line] = None

    def _release(self, start: _Start) -> None:
        """The open call ``start`` is complete: it leaves its key's open calls."""
        key = start.pairing_key
        held = self._open_keys.get(key)
        if isinstance(held, int):
            if held == start.line:
                del self._open_keys[key]
        elif held is not None:
            held.pop(start.line, None)
            if not held:
                del self._open_keys[key]

    def _count_metrics(self, event: Event | Record, metrics: Mapping[str, Any]) -> None:
        self._metrics_seen += 1
        step = event.step
        if step is None:
            step = parse_int(metrics.get("step"))
        if step is not None:
            if step in self._metric_steps:
                self._metrics_skipped += 1
                return
            self._metric_steps.add(step)
        self._metrics_counted += 1
        totals = read_totals(metrics)
        if totals.cached_over_prompt:
            self._over_prompt += 1
        self._metrics = self._metrics + totals
        self._metrics_usage = self._metrics_usage + totals.usage
        model = self._responses.model
        self._metrics_by_model[model] = self._metrics_by_model.get(model, Usage()) + totals.usage
        if self._metrics_prices is not None:
            self._metrics_prices.add(model, totals.usage)
        if step is not None and self._keep_steps:
            record = self._step(step, event.line)
            record.metrics = record.metrics + totals

    def finish(self) -> tuple[list[CallRecord], tuple[StepRecord, ...], SessionTotals]:
        """The calls nothing completed, the steps (by step value) and the totals."""
        for ended in self._responses.finish():
            self._response_ended(ended)
        pending = [made for start in self._open.values() if (made := self._record(start, None)) is not None]
        self._open.clear()
        steps = tuple(
            StepRecord(
                self.session_id, step, s.first_line, s.last_line, s.events, s.calls, s.metrics, s.usage
            )
            for step, s in sorted(self._steps.items())
        )
        metrics_usage = self._metrics_usage
        if not metrics_usage.empty:
            source: str | None = "metrics"
            usage, by_model, prices = metrics_usage, self._metrics_by_model, self._metrics_prices
        elif not self._response_usage.empty:
            source, usage = "responses", self._response_usage
            by_model, prices = self._response_by_model, self._response_prices
        else:
            source, usage, by_model, prices = None, Usage(), {}, None
        stated = self._end.cost
        if stated is None:
            stated = self._summary.cost
        if stated is None:
            stated = self._metrics.cost
        usage_by_model = tuple(by_model.items())
        if prices is not None:
            estimate = prices.estimate
        else:
            estimate = Estimate(None, "no usage" if source is None else "not asked for")
        duration = None
        if self._first is not None and self._last is not None:
            duration = round((self._last[0] - self._first[0]).total_seconds() * 1000)
        totals = SessionTotals(
            session_id=self.session_id,
            events=self._events,
            calls=sum(self._outcomes),
            outcomes=tuple(self._outcomes),
            tools=tuple(
                ToolOutcomes(family, name, sum(counts), tuple(counts))
                for (family, name), counts in sorted(self._tools.items())
            ),
            steps=sum(1 for s in self._steps.values() if s.events),
            responses=self._response_count,
            usage=usage,
            usage_source=source,
            response_usage=self._response_usage,
            metrics_usage=metrics_usage,
            metrics_seen=self._metrics_seen,
            metrics_counted=self._metrics_counted,
            metrics_skipped=self._metrics_skipped,
            metrics_totals=self._metrics,
            header_totals=self._header_totals,
            end_totals=self._end,
            summary_totals=self._summary,
            stated_cost_usd=stated,
            estimated_cost_usd=estimate.cost_usd,
            estimate_note=estimate.note,
            models=tuple(self._models),
            usage_by_model=usage_by_model,
            first_ts=self._first[1] if self._first is not None else None,
            last_ts=self._last[1] if self._last is not None else None,
            duration_ms=duration,
            estimate_lower_bound=estimate.lower_bound,
            pairing=tuple(self._pairing),
            metrics_cached_over_prompt=self._over_prompt,
        )
        return pending, steps, totals


def _collect(
    counter: SessionCounter, events: Iterable[Event], on_call: Callable[[CallRecord], None] | None
) -> SessionNumbers:
    calls: list[CallRecord] = []
    take = on_call if on_call is not None else calls.append
    for event in events:
        for record in counter.feed(event):
            take(record)
    pending, steps, totals = counter.finish()
    for record in pending:
        take(record)
    calls.sort(key=lambda record: record.start_line)
    return SessionNumbers(totals, tuple(calls), steps)


def document_numbers(
    document: Document,
    *,
    session_id: str | None = None,
    estimate: bool = True,
    on_call: Callable[[CallRecord], None] | None = None,
) -> SessionNumbers:
    """The numbers of a parsed document. With ``on_call``, each call record goes there as
    soon as it is decided (pending calls at the end) instead of into the result."""
    counter = SessionCounter(document.header, session_id=session_id, estimate=estimate)
    return _collect(counter, document.events, on_call)


def read_session(
    source: Any,
    *,
    session_id: str | None = None,
    estimate: bool = True,
    max_line: int | None = None,
    on_call: Callable[[CallRecord], None] | None = None,
) -> SessionNumbers:
    """The numbers of a session read as a stream (``source`` as for
    :func:`bbox_lark.syntax.parser.iter_nodes`: text, bytes, a file object or lines), in bounded
    memory: no document is built, and with ``on_call`` no call record is kept either."""
    from bbox_lark.syntax.parser import Head, iter_nodes
    from bbox_lark.syntax.source import DEFAULT_MAX_LINE

    nodes = iter_nodes(source, max_line=max_line or DEFAULT_MAX_LINE)
    iterator: Iterator[Any] = iter(nodes)
    head = next(iterator)
    assert isinstance(head, Head)
    header = head.header_info.fields if head.header_info is not None else {}
    counter = SessionCounter(header, session_id=session_id, estimate=estimate)
    return _collect(counter, (node for node in iterator if isinstance(node, Event)), on_call)
