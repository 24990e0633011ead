"""The numbers of a session: call outcomes, model usage, step metrics and session totals.

One module decides them (docs/reference.md#stats, docs/reference.md#usage and
docs/reference.md#outcomes), so that ``stats``, the tables, the report and the converters all count alike.

**Outcomes.** :func:`call_outcome` says how a call ended, from its start line and the line
that completed it (:mod:`bbox_lark.correlate` pairs them): one of :data:`OUTCOMES`.

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
:func:`bbox_lark.parser.iter_nodes`) and :func:`document_numbers` over a parsed document.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.ast import Document, Event
from bbox_lark.correlate import AMBIGUOUS, CALL, COMPLETION, FAMILIES, Pairer, call_key, is_start
from bbox_lark.grammar import vocabulary
from bbox_lark.record import Record
from bbox_lark.values import MAX_INT, parse_int, parse_timestamp

#: How a call can end (docs/reference.md#outcomes), in the order reports list them.
OUTCOMES = ("ok", "error", "pending", "skipped", "retry", "unknown")

#: How a call was paired (:attr:`CallRecord.pairing`), in the order ``stats`` lists them.
PAIRINGS = ("id", "order", "ambiguous")

#: Metric key -> the quantity it counts (docs/reference.md#stats).
METRIC_ALIASES: dict[str, str] = {
    "prompt": "prompt",
    "prompt_tokens": "prompt",
    "tokens_in": "prompt",
    "completion": "completion",
    "completion_tokens": "completion",
    "tokens_out": "completion",
    "cached": "cached",
    "cached_tokens": "cached",
    "tokens_cached": "cached",
    "tokens": "tokens",
    "total_tokens": "tokens",
    "cost": "cost",
    "cost_usd": "cost",
    "cache_creation_input_tokens": "cache_write",
    "extra.cache_creation_input_tokens": "cache_write",
}

#: Header key -> quantity (the totals a header states).
HEADER_TOTALS: dict[str, str] = {
    "tokens_total_in": "prompt",
    "tokens_total_out": "completion",
    "tokens_cached": "cached",
}

#: The usage fields writers put on event lines (docs/reference.md#usage).
USAGE_FIELDS = ("tokens_in", "tokens_out", "tokens_cached")

#: The fields a number is read from (§13): usage, model and cost. On a free-text line
#: (``u a th td``) they count only in the line's trailing run of fields
#: (:func:`number_fields`); one followed by more text is W027.
NUMBER_KEYS = frozenset({*USAGE_FIELDS, "model", "cost", "cost_usd"})

#: Line kinds that end the current model response.
_RESPONSE_BREAKS = frozenset({"user", "observation"})
#: Line kinds that are never part of a response.
_NOT_RESPONSES = frozenset({"comment", "lifecycle", "unknown"})

#: Longest args summary in a :class:`CallRecord`, in characters.
ARGS_SUMMARY_CHARS = 200


# -- values -----------------------------------------------------------------------------


def _decimal(value: object, *, dollar: bool = False) -> Decimal | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    if dollar and text.startswith("$"):
        text = text[1:]
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    if not number.is_finite() or number < 0:
        return None
    return number


def _count(value: object) -> int | None:
    """A token count: a whole number up to :data:`~bbox_lark.values.MAX_INT` (a longer one is
    malformed, as for every typed integer), else None."""
    if isinstance(value, str) and len(value) > 40:
        return None
    number = _decimal(value)
    if number is None or number != number.to_integral_value() or number > MAX_INT:
        return None
    return int(number)


def _max(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _plus(a: Any, b: Any) -> Any:
    if a is None:
        return b
    return a if b is None else a + b


@dataclass(frozen=True, slots=True)
class Totals:
    """Token counts and cost as a source states them (``# metrics``, a header, ``@end``);
    None where the source gave no such quantity."""

    prompt: int | None = None
    completion: int | None = None
    cached: int | None = None
    tokens: int | None = None
    cost: Decimal | None = None
    #: Cache writes (``cache_creation_input_tokens``, ``extra.cache_creation_input_tokens``):
    #: part of ``prompt``, priced as cache writes.
    cache_write: int | None = None

    @property
    def empty(self) -> bool:
        return all(
            getattr(self, name) is None
            for name in ("prompt", "completion", "cached", "tokens", "cost", "cache_write")
        )

    @property
    def usage(self) -> Usage:
        """The token counts under the writers' names (§13): ``prompt`` includes ``cached``
        (ATIF's convention, which ``# metrics`` follow), so ``tokens_in`` is ``prompt −
        cached``; a ``cached`` larger than ``prompt`` (W028) takes the prompt as uncached."""
        prompt, cached = self.prompt, self.cached
        if prompt is not None and cached is not None and cached <= prompt:
            prompt -= cached
        return Usage(prompt, self.completion, cached, self.cache_write)

    @property
    def cached_over_prompt(self) -> bool:
        """True when ``cached`` is larger than ``prompt`` (W028: the prompt is then taken as
        uncached input)."""
        return self.prompt is not None and self.cached is not None and self.cached > self.prompt

    def __add__(self, more: Totals) -> Totals:
        return Totals(
            _plus(self.prompt, more.prompt),
            _plus(self.completion, more.completion),
            _plus(self.cached, more.cached),
            _plus(self.tokens, more.tokens),
            _plus(self.cost, more.cost),
            _plus(self.cache_write, more.cache_write),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "completion": self.completion,
            "cached": self.cached,
            "tokens": self.tokens,
            "cost": float(self.cost) if self.cost is not None else None,
            "cache_write": self.cache_write,
        }


def read_totals(values: Mapping[str, Any], aliases: Mapping[str, str] = METRIC_ALIASES) -> Totals:
    """The quantities in ``values`` (metrics, or a line's fields), by alias; the first valid
    value of each quantity wins."""
    found: dict[str, Any] = {}
    for key, value in values.items():
        quantity = aliases.get(key)
        if quantity is None or quantity in found:
            continue
        parsed = _decimal(value, dollar=True) if quantity == "cost" else _count(value)
        if parsed is not None:
            found[quantity] = parsed
    return Totals(**found)


@dataclass(frozen=True, slots=True)
class Usage:
    """Model usage under the writers' names (docs/reference.md#usage). ``tokens_in`` excludes cache
    reads (``tokens_cached``) as Claude-based writers count it. None: not stated."""

    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_cached: int | None = None
    #: Cache writes, where the source names them (part of ``tokens_in``, priced as cache
    #: writes); None where it does not (the estimate is then a lower bound).
    tokens_cache_write: int | None = None

    @property
    def empty(self) -> bool:
        return self.tokens_in is None and self.tokens_out is None and self.tokens_cached is None

    @property
    def input_with_cache(self) -> int | None:
        """Input including cache reads (what ATIF's ``prompt_tokens`` and price tables
        count), or None when neither is stated."""
        if self.tokens_in is None and self.tokens_cached is None:
            return None
        return (self.tokens_in or 0) + (self.tokens_cached or 0)

    def __add__(self, more: Usage) -> Usage:
        return Usage(
            _plus(self.tokens_in, more.tokens_in),
            _plus(self.tokens_out, more.tokens_out),
            _plus(self.tokens_cached, more.tokens_cached),
            _plus(self.tokens_cache_write, more.tokens_cache_write),
        )

    def to_json(self) -> dict[str, int | None]:
        out = {
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "tokens_cached": self.tokens_cached,
        }
        if self.tokens_cache_write is not None:
            out["tokens_cache_write"] = self.tokens_cache_write
        return out


def _trailing_run(event: Event | Record) -> tuple[int, dict[str, Any]]:
    """Where a line's trailing run of fields starts in its text, and those fields (the first
    occurrence of a key wins)."""
    text, base = event.text, event.text_col
    end = len(text)
    trailing: dict[str, Any] = {}
    for node in reversed(event.field_nodes):
        start, stop = node.col - base, node.end_col - base
        if stop > end or text[stop:end].strip():
            break
        trailing[node.key] = node.value  # later in the loop is earlier on the line: it wins
        end = start
    return end, trailing


def number_fields(event: Event) -> Mapping[str, Any]:
    """The fields a number (usage, model, cost) is read from (§13): every field of a line,
    but on a free-text line (``u a th td``) only its trailing run of fields, after the last
    word of text (and before a trailing ``# metrics``). A field followed by more text is
    prose (``a: Set tokens_out=9 in the fixture.``); :func:`fields_inside_text` lists them."""
    if not event.field_nodes or event.prefix not in _free_text():
        return event.fields
    _, trailing = _trailing_run(event)
    return event.fields if len(trailing) == len(event.fields) else trailing


#: A field's key (docs/reference.md, "Inside a line").
_FIELD_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")

#: How many words from a line's end :func:`_numbers_trail` looks at.
_TRAIL_WORDS = 64


def _numbers_trail(text: str, keys: frozenset[str]) -> bool:
    """True when each of ``keys`` stands, once, in the run of bare ``key=value`` words that
    ends ``text``: then none is inside the text, and :func:`fields_inside_text` need not
    build the line's field nodes (W027 runs on every free-text line that states usage).
    False when it cannot tell that cheaply (a quote, a list, a key written twice, a long run):
    the field nodes decide then."""
    words = text.rsplit(None, _TRAIL_WORDS)
    seen: set[str] = set()
    for word in reversed(words[1:] if len(words) > _TRAIL_WORDS else words):
        key, equals, value = word.partition("=")
        if not equals or '"' in word or "[" in value or not _FIELD_KEY.fullmatch(key):
            break
        seen.add(key)
    return keys <= seen and all(text.count(f"{key}=") == 1 for key in keys)


def fields_inside_text(event: Event | Record) -> list[Any]:
    """The usage, model and cost fields (:data:`NUMBER_KEYS`) of a free-text line that more
    text follows: numbers are not read from them (W027)."""
    if event.prefix not in _free_text() or NUMBER_KEYS.isdisjoint(event.fields):
        return []
    if _numbers_trail(event.text, NUMBER_KEYS.intersection(event.fields)):
        return []  # the usual line: its usage stands at its end (no field nodes built)
    tail, _ = _trailing_run(event)
    base = event.text_col
    return [node for node in event.field_nodes if node.key in NUMBER_KEYS and node.col - base < tail]


def _free_text() -> frozenset[str]:
    return vocabulary().free_text_prefixes


def line_usage(event: Event) -> Usage | None:
    """The usage an event line states (its ``tokens_in``/``tokens_out``/``tokens_cached``
    fields, from the trailing run of a free-text line: :func:`number_fields`), or None when
    it states none or is not a response line (comments, lifecycle lines and unknown lines
    never are)."""
    if event.kind in _NOT_RESPONSES:
        return None
    stated = event.fields
    if "tokens_in" not in stated and "tokens_out" not in stated and "tokens_cached" not in stated:
        return None
    fields = number_fields(event)
    usage = Usage(
        _count(fields.get("tokens_in")),
        _count(fields.get("tokens_out")),
        _count(fields.get("tokens_cached")),
        _count(fields.get("tokens_cache_write")),
    )
    return None if usage.empty else usage


# -- outcomes ---------------------------------------------------------------------------


def call_outcome(start: Event, completion: Event | None = None) -> str:
    """How a call ended (one of :data:`OUTCOMES`): from the result of the line that
    completed it when there is one, else from its own line's (a start that nothing
    completed is ``pending``)."""
    if completion is None and is_start(start):
        return "pending"
    result = (completion if completion is not None else start).result
    if result is None:
        return "unknown"
    kind = result.kind
    # One comparison per result kind that is no success: every other form (a count, a
    # selection, fields, text, a blob, loaded, auto, a redacted result) is one.
    if kind == "error":
        return "error"
    if kind == "skip":
        return "skipped"
    if kind == "retry":
        return "retry"
    if kind == "empty":
        return "unknown"
    if kind in vocabulary().start_statuses:
        return "pending"
    if kind == "text" and result.text[:6].lower() == "error:":
        return "error"
    return "ok"


# -- responses --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Response:
    """One model response: its lines share ``tokens_in`` and ``tokens_cached``."""

    #: 1-based, in file order.
    ordinal: int
    first_line: int
    last_line: int
    #: ``tokens_out`` is the largest any of its lines stated.
    usage: Usage
    #: The model in force at its first line, or None.
    model: str | None = None
    #: The step of its first line that has one, or None.
    step: int | None = None


class Responses:
    """Groups event lines into model responses (docs/reference.md#usage), as a stream: :meth:`feed`
    each event in order; it returns the responses that line ended, and :meth:`finish` the
    ones still open at the end.

    "Consecutive" is within a thread: lines with a ``tid=`` form responses with the lines of
    their own thread only (a subagent's lines interleaved with the main agent's, as Claude
    Code's sidechain records are, neither join nor end the main agent's response). At most
    :attr:`THREADS` threads have an open response; a further thread ends the oldest one."""

    __slots__ = ("_last", "_open", "_ordinal", "model")

    THREADS = 1024

    def __init__(self) -> None:
        self._ordinal = 0
        #: Thread -> its open response and that response's (tokens_in, tokens_cached).
        self._open: dict[str | None, tuple[Response, tuple[int | None, int | None]]] = {}
        self._last: str | None = None
        #: The model in force (the caller switches it: header, ``# model:``, ``model=``).
        self.model: str | None = None

    def feed(self, event: Event) -> tuple[Response, ...]:
        """Take the next line; return the responses it ended (usually none or one). After
        the call, :attr:`current` is the open response of this line's thread."""
        tid = event.tid
        self._last = tid
        if event.kind in _RESPONSE_BREAKS:
            held = self._open.pop(tid, None)
            return (held[0],) if held is not None else ()
        usage = line_usage(event)
        if usage is None:
            return ()
        key = (usage.tokens_in, usage.tokens_cached)
        held = self._open.get(tid)
        if held is not None and key == held[1]:
            current = held[0]
            out = current.usage.tokens_out
            if usage.tokens_out is not None and (out is None or usage.tokens_out > out):
                out = usage.tokens_out
            joined = Response(
                current.ordinal,
                current.first_line,
                event.line,
                Usage(
                    usage.tokens_in,
                    out,
                    usage.tokens_cached,
                    _max(current.usage.tokens_cache_write, usage.tokens_cache_write),
                ),
                current.model,
                current.step if current.step is not None else event.step,
            )
            self._open[tid] = (joined, key)
            return ()
        ended: list[Response] = []
        if held is not None:
            ended.append(self._open.pop(tid)[0])
        elif len(self._open) >= self.THREADS:
            oldest = next(iter(self._open))
            ended.append(self._open.pop(oldest)[0])
        self._ordinal += 1
        self._open[tid] = (
            Response(self._ordinal, event.line, event.line, usage, self.model, event.step),
            key,
        )
        return tuple(ended)

    @property
    def current(self) -> Response | None:
        """The open response of the last line's thread."""
        held = self._open.get(self._last)
        return held[0] if held is not None else None

    def finish(self) -> tuple[Response, ...]:
        """The responses still open, in file order."""
        ended = sorted((held[0] for held in self._open.values()), key=lambda r: r.ordinal)
        self._open.clear()
        return tuple(ended)


def response_usage(events: Iterable[Event]) -> dict[int, Response]:
    """Each response line's response (line number -> :class:`Response`, with the
    response's final usage): what a converter writes per step."""
    responses = Responses()
    lines: dict[int, int] = {}
    done: dict[int, Response] = {}
    for event in events:
        for ended in responses.feed(event):
            done[ended.ordinal] = ended
        if responses.current is not None and line_usage(event) is not None:
            lines[event.line] = responses.current.ordinal
    for ended in responses.finish():
        done[ended.ordinal] = ended
    return {line: done[ordinal] for line, ordinal in lines.items()}


# -- estimated cost ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Estimate:
    """An estimated cost in USD (None when it cannot be estimated) and why not."""

    cost_usd: Decimal | None
    #: Why there is no estimate; None when there is one.
    note: str | None = None
    #: True when some usage named no cache writes (§13): the estimate is a lower bound.
    lower_bound: bool = False


_PRICES_MISSING = "genai-prices is not installed (pip install 'bbox-lark[prices]')"


class Pricer:
    """Adds up the estimated cost of model requests, one :meth:`add` per request (a
    response, or a step's ``# metrics``): price tables have tiers by a request's input size,
    so requests are priced one by one, never summed first. ``genai-prices`` is imported at
    the first request. No estimate when a request's model is unknown (not named, or not in
    the table): a partial sum would read as the whole."""

    __slots__ = ("_calc", "_usage_class", "lower_bound", "note", "total")

    def __init__(self) -> None:
        self.total: Decimal | None = None
        self.note: str | None = "no usage"
        #: True once a request named no cache writes (§13): its writes, if any, are priced
        #: as plain input, so the estimate is a lower bound.
        self.lower_bound = False
        self._calc: Any = None
        self._usage_class: Any = None

    def add(self, model: str | None, usage: Usage) -> None:
        if usage.empty or (self.note is not None and self.note != "no usage"):
            return
        if model is None:
            self.total, self.note = None, "no model named"
            return
        if self._calc is None:
            try:
                from genai_prices import Usage as PriceUsage
                from genai_prices import calc_price
            except ImportError:
                self.total, self.note = None, _PRICES_MISSING
                return
            self._calc, self._usage_class = calc_price, PriceUsage
        cached = usage.tokens_cached or 0
        if usage.tokens_cache_write is None:
            self.lower_bound = True
        model_price = _model_price(model)
        if model_price is None:
            self.total, self.note = None, f"no price for model {model}"
            return
        price = model_price.calc_price(
            self._usage_class(
                input_tokens=(usage.tokens_in or 0) + cached,
                cache_read_tokens=cached,
                cache_write_tokens=min(usage.tokens_cache_write or 0, usage.tokens_in or 0),
                output_tokens=usage.tokens_out or 0,
            )
        )
        self.total = (self.total or Decimal(0)) + Decimal(str(price["total_price"]))
        self.note = None

    @property
    def estimate(self) -> Estimate:
        return Estimate(self.total, self.note, self.lower_bound and self.total is not None)


def format_usd(value: Decimal) -> str:
    """A cost as every page and table shows it: dollars to a millionth (a price goes no
    finer), trailing zeros dropped (``$0.462381``, ``$12.5``). JSON keeps the exact value; a
    stated float's binary tail (``0.46238100000000004``) is not shown."""
    shown = value.quantize(Decimal("0.000001")) if value.as_tuple().exponent < -6 else value  # type: ignore[operator]
    text = f"{shown.normalize():f}"
    return f"${text}"


@cache
def _model_price(model: str) -> Any:
    """``genai-prices``' price of ``model`` today, or None when the table has none. Finding
    the model is most of ``calc_price``'s time (0.7 ms a request against 0.17 ms for the
    price's own arithmetic), so each model is looked up once; the price does not depend on
    the request (its tiers are applied by ``ModelPrice.calc_price``)."""
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    try:
        return calc_price(PriceUsage(input_tokens=0, output_tokens=0), model_ref=model).model_price
    except LookupError:
        return None


def estimate_cost(requests: Iterable[tuple[str | None, Usage]]) -> Estimate:
    """The cost of these requests (model, usage) at ``genai-prices``' list prices."""
    pricer = Pricer()
    for model, usage in requests:
        pricer.add(model, usage)
    return pricer.estimate


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


def _args_summary(event: Event) -> str:
    parts: list[str] = []
    for arg in event.args:
        parts.append("[" + ", ".join(str(a) for a in arg) + "]" if isinstance(arg, tuple) else str(arg))
    text = " ".join(parts)
    return text if len(text) <= ARGS_SUMMARY_CHARS else text[: ARGS_SUMMARY_CHARS - 1] + "…"


def _latency(start: Event, end: Event | None) -> int | None:
    if end is not None and (value := end.latency_ms) is not None:
        return value
    if (value := start.latency_ms) is not None:
        return value
    if end is None or end is start:
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


def _comment_model(event: Event) -> str | None:
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
    :func:`~bbox_lark.parser.iter_nodes`' events) in order; each call returns the
    :class:`CallRecord` of the calls this line decided; :meth:`finish` returns the calls
    still open (``pending``), the steps and the totals.

    ``header`` is the document's header fields (for the session id, the model and the
    stated totals); ``session_id`` overrides the header's ``id``."""

    def __init__(
        self, header: Mapping[str, Any] | None = None, *, session_id: str | None = None, estimate: bool = True
    ) -> None:
        fields = dict(header or {})
        header_id = fields.get("id")
        self.session_id = (
            session_id if session_id is not None else header_id if isinstance(header_id, str) else ""
        )
        self._response_prices = Pricer() if estimate else None
        self._metrics_prices = Pricer() if estimate else None
        self._header_totals = read_totals(fields, HEADER_TOTALS)
        self._pairer = Pairer()
        self._open: dict[int, tuple[Event, int | None]] = {}  # start line -> (start, response)
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
        self._open_keys: dict[Any, dict[int, None]] = {}
        self._ambiguous: set[int] = set()
        self._pairing = [0] * len(PAIRINGS)
        self._over_prompt = 0

    def _switch(self, model: str) -> None:
        self._responses.model = model
        self._models.setdefault(model, None)

    def _step(self, step: int, line: int) -> _Step:
        """The step's record (made at ``line`` when new); its lines are those of its events."""
        record = self._steps.get(step)
        if record is None:
            record = self._steps[step] = _Step(line, line)
        return record

    def _response_ended(self, response: Response) -> None:
        self._response_count += 1
        self._response_usage = self._response_usage + response.usage
        model = response.model
        self._response_by_model[model] = self._response_by_model.get(model, Usage()) + response.usage
        if self._response_prices is not None:
            self._response_prices.add(model, response.usage)
        if response.step is not None:
            record = self._step(response.step, response.first_line)
            record.usage = record.usage + response.usage

    def _record(self, start: Event, end: Event | None, response: int | None) -> CallRecord:
        key = call_key(start)
        family = FAMILIES[start.kind]
        outcome = call_outcome(start, end)
        index = OUTCOMES.index(outcome)
        self._outcomes[index] += 1
        tally = self._tools.setdefault((family, start.name or "(none)"), [0] * len(OUTCOMES))
        tally[index] += 1
        line = start.line
        if line in self._ambiguous:
            self._ambiguous.discard(line)
            pairing = "ambiguous"
        elif key is None and end is not None and end is not start:
            pairing = "order"
        else:
            pairing = "id"
        self._pairing[PAIRINGS.index(pairing)] += 1
        return CallRecord(
            session_id=self.session_id,
            key=key[1] if key is not None else None,
            key_field=key[0] if key is not None else None,
            tool=start.name,
            family=family,
            kind=start.kind,
            args=_args_summary(start),
            start_line=start.line,
            end_line=end.line if end is not None else None if is_start(start) else start.line,
            outcome=outcome,
            latency_ms=_latency(start, end),
            step=start.step,
            ts=start.ts,
            response=response,
            usage=line_usage(start),
            pairing=pairing,
        )

    def feed(self, event: Event) -> list[CallRecord]:
        """Take the next event; return the calls it decided (usually none or one)."""
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
                model_field = number_fields(event).get("model")
            if isinstance(model_field, str) and model_field:
                self._switch(model_field)
            if kind == "lifecycle" and event.name == "end":
                self._end = read_totals(event.fields)
        for ended in self._responses.feed(event):
            self._response_ended(ended)
        current = self._responses.current
        response = current.ordinal if current is not None and line_usage(event) is not None else None

        ts = event.ts
        if ts is not None:
            moment = parse_timestamp(ts)
            if moment is not None:
                try:
                    if self._first is None or moment < self._first[0]:
                        self._first = (moment, ts)
                    if self._last is None or moment >= self._last[0]:
                        self._last = (moment, ts)
                except TypeError:  # pragma: no cover - every accepted ts has a zone
                    pass

        step = event.step if kind not in ("comment", "unknown") else None
        if step is not None:
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
            if step is not None:
                self._steps[step].calls += 1
            if is_start(event):
                self._open[event.line] = (event, response)
                self._hold(event)
            else:
                decided.append(self._record(event, None, response))
        elif outcome == COMPLETION:
            opened = self._open.pop(self._pairer.completed, None)
            if opened is not None:
                pairing_key = _pairing_key(opened[0])
                held = self._open_keys.get(pairing_key)
                if held is not None:
                    held.pop(opened[0].line, None)
                    if not held:
                        del self._open_keys[pairing_key]
                decided.append(self._record(opened[0], event, opened[1]))
        return decided

    def _hold(self, start: Event) -> None:
        """Note an open start under its pairing key: when another is open under the same
        key, a result could belong to either (§13), so both are ``ambiguous``."""
        held = self._open_keys.setdefault(_pairing_key(start), {})
        if held:
            self._ambiguous.update(held)
            self._ambiguous.add(start.line)
        held[start.line] = None

    def _count_metrics(self, event: Event, metrics: Mapping[str, Any]) -> None:
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
        if step is not None:
            record = self._step(step, event.line)
            record.metrics = record.metrics + totals

    def finish(self) -> tuple[list[CallRecord], tuple[StepRecord, ...], SessionTotals]:
        """The calls nothing completed, the steps (by step value) and the totals."""
        for ended in self._responses.finish():
            self._response_ended(ended)
        pending = [self._record(start, None, response) for start, response in self._open.values()]
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


def _pairing_key(start: Event) -> Any:
    key = call_key(start)
    return key if key is not None else ("", start.name)


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
    :func:`bbox_lark.parser.iter_nodes`: text, bytes, a file object or lines), in bounded
    memory: no document is built, and with ``on_call`` no call record is kept either."""
    from bbox_lark.parser import Head, iter_nodes
    from bbox_lark.source import DEFAULT_MAX_LINE

    nodes = iter_nodes(source, max_line=max_line or DEFAULT_MAX_LINE)
    iterator: Iterator[Any] = iter(nodes)
    head = next(iterator)
    assert isinstance(head, Head)
    header = head.header_info.fields if head.header_info is not None else {}
    counter = SessionCounter(header, session_id=session_id, estimate=estimate)
    return _collect(counter, (node for node in iterator if isinstance(node, Event)), on_call)
