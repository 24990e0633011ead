"""Usage of model responses and step metrics (§12, §13): the numbers a line states, the
responses they group into (:class:`Responses`), and the values and totals they add up to
(:class:`Usage`, :class:`Totals`). The rules are in :mod:`bbox_lark.numbers.session`'s
docstring, "Usage of a model response" and "Step metrics"."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Event
from bbox_lark.syntax.record import Record
from bbox_lark.syntax.values import MAX_INT

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
    """A token count: a whole number up to :data:`~bbox_lark.syntax.values.MAX_INT` (a longer one is
    malformed, as for every typed integer), else None."""
    if value is None:
        return None
    if isinstance(value, str):
        if len(value) > 40:
            return None
        if value.isdigit() and value.isascii():  # the usual count: no Decimal needed
            whole = int(value)
            return whole if whole <= MAX_INT else None
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


def number_fields(event: Event | Record) -> Mapping[str, Any]:
    """The fields a number (usage, model, cost) is read from (§13): every field of a line,
    but on a free-text line (``u a th td``) only its trailing run of fields, after the last
    word of text (and before a trailing ``# metrics``). A field followed by more text is
    prose (``a: Set tokens_out=9 in the fixture.``); :func:`fields_inside_text` lists them."""
    if not event.field_nodes or event.prefix not in _free_text():
        return event.fields
    _, trailing = _trailing_run(event)
    # Equal, not only as many keys: a key written in the text and again at the end has its
    # first (prose) value in ``event.fields``.
    return event.fields if trailing == event.fields else trailing


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


#: The keys numbers are read from (:func:`number_reads`): :data:`NUMBER_KEYS` and the
#: cache writes a usage may name.
_READ_KEYS = NUMBER_KEYS | {"tokens_cache_write"}


def number_reads(event: Event | Record) -> Mapping[str, Any]:
    """:func:`number_fields` for the keys numbers are read from (usage, model, cost): the
    same value for each of them. A record's field nodes are not built when each of those
    keys it has stands once at the end of its text, after the last word (the usual line:
    then the trailing run holds them, as :func:`fields_inside_text` reads it too)."""
    fields = event.fields
    if not fields or event.prefix not in _free_text():
        return fields
    if (
        type(event) is Record
        and event.arrow is None
        and _numbers_trail(event.text, _READ_KEYS.intersection(fields))
    ):
        return fields
    return number_fields(event)


def line_usage(event: Event | Record) -> Usage | None:
    """The usage an event line states (its ``tokens_in``/``tokens_out``/``tokens_cached``
    fields, from the trailing run of a free-text line: :func:`number_fields`), or None when
    it states none or is not a response line (comments, lifecycle lines and unknown lines
    never are)."""
    if event.kind in _NOT_RESPONSES:
        return None
    stated = event.fields
    if "tokens_in" not in stated and "tokens_out" not in stated and "tokens_cached" not in stated:
        return None
    fields = number_reads(event)
    usage = Usage(
        _count(fields.get("tokens_in")),
        _count(fields.get("tokens_out")),
        _count(fields.get("tokens_cached")),
        _count(fields.get("tokens_cache_write")),
    )
    return None if usage.empty else usage


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

    __slots__ = ("_last", "_open", "_ordinal", "model", "usage")

    THREADS = 1024

    def __init__(self) -> None:
        self._ordinal = 0
        #: Thread -> its open response and that response's (tokens_in, tokens_cached).
        self._open: dict[str | None, tuple[Response, tuple[int | None, int | None]]] = {}
        self._last: str | None = None
        #: The model in force (the caller switches it: header, ``# model:``, ``model=``).
        self.model: str | None = None
        #: The usage the last line fed states (:func:`line_usage`), None when it states none.
        self.usage: Usage | None = None

    def feed(self, event: Event | Record) -> tuple[Response, ...]:
        """Take the next line (a node or a record); return the responses it ended (usually none or one). After
        the call, :attr:`current` is the open response of this line's thread."""
        tid = event.tid
        self._last = tid
        if event.kind in _RESPONSE_BREAKS:
            self.usage = None
            held = self._open.pop(tid, None)
            return (held[0],) if held is not None else ()
        self.usage = usage = line_usage(event)
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
        if responses.current is not None and responses.usage is not None:
            lines[event.line] = responses.current.ordinal
    for ended in responses.finish():
        done[ended.ordinal] = ended
    return {line: done[ordinal] for line, ordinal in lines.items()}
