"""The parts a span is built from: the :class:`Span` record, the time of each line
(:class:`Clock`), ids, text cut to the attribute limit, the usage attributes and the cost
estimate. :mod:`bbox_lark.convert.otlp.spans` builds the spans of a session from them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

from bbox_lark.convert.otlp.tables import MAX_ATTRIBUTE_CHARS, STATUS_UNSET
from bbox_lark.numbers.usage import Usage
from bbox_lark.syntax.nodes import Event
from bbox_lark.syntax.values import parse_elapsed, parse_timestamp

#: Where the clock starts when a session states no time at all (2000-01-01T00:00:00Z), in ns.
SYNTHETIC_BASE_NS = 946_684_800 * 10**9
#: How far a line without a time is put after the line before it.
SYNTHETIC_STEP_NS = 1_000_000

AttributeValue = str | int | float | bool


@dataclass(slots=True)
class Span:
    """One span, ready to encode: ids are raw bytes (16 for the trace, 8 for a span)."""

    span_id: bytes
    parent_id: bytes
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    status: int = STATUS_UNSET
    status_message: str = ""
    #: The source line it came from (0 for the root).
    line: int = 0


def cut(text: str, limit: int = MAX_ATTRIBUTE_CHARS) -> str:
    """``text`` at most ``limit`` characters long: a longer one is cut and says how much."""
    if len(text) <= limit:
        return text
    marker = f"…[cut {len(text) - limit} chars]"
    return text[: max(0, limit - len(marker))] + marker


def trace_id_for(key: str) -> bytes:
    """The trace id of a session: the first 16 bytes of SHA-256 of its key."""
    return hashlib.sha256(b"bbox-lark/otlp trace\0" + key.encode("utf-8", "surrogatepass")).digest()[:16]


def _ns(moment: datetime) -> int:
    return int(moment.timestamp()) * 10**9 + moment.microsecond * 1000


class Clock:
    """The time of each line: its ``ts=``, a ``# t=`` mark after the first known time, else
    the last time plus :data:`SYNTHETIC_STEP_NS` (synthetic). Never goes back."""

    __slots__ = ("_anchor", "now", "synthetic_lines")

    def __init__(self) -> None:
        self.now: int | None = None
        self._anchor: int | None = None
        self.synthetic_lines = 0

    def at(self, event: Event) -> tuple[int, bool]:
        """The line's time in ns since the epoch and whether it is synthetic."""
        real: int | None = None
        ts = event.ts
        if ts is not None:
            moment = parse_timestamp(ts)
            if moment is not None:
                real = _ns(moment)
                if self._anchor is None:
                    self._anchor = real
        elif event.kind == "comment" and event.name == "elapsed":
            seconds = parse_elapsed(str(event.fields.get("t", "")))
            if seconds is not None and self._anchor is not None:
                real = self._anchor + seconds * 10**9
        if real is not None:
            self.now = real if self.now is None else max(real, self.now)
            return self.now, False
        self.now = (SYNTHETIC_BASE_NS if self.now is None else self.now) + SYNTHETIC_STEP_NS
        self.synthetic_lines += 1
        return self.now, True


@dataclass(slots=True)
class Open:
    """A span being built, with what it still needs."""

    span: Span
    synthetic: bool
    event: Event | None = None
    #: Thread of the lines it holds (None: the main agent).
    tid: str | None = None
    #: A chat: its usage key, its step, whether a ``u:``/``o:`` ended it, its usage.
    key: tuple[int | None, int | None] | None = None
    step: int | None = None
    ended: bool = False
    usage: Usage | None = None
    metrics: Any = None
    model: str | None = None
    #: The content gathered (``--content``): output text parts, input text.
    texts: list[str] = field(default_factory=list)
    input_text: str | None = None
    #: The ``invoke_agent`` span of an ``x:`` call when no thread takes its place.
    child: Open | None = None
    #: The thread (``tid=``) this call launched, once its lines are seen.
    thread: str | None = None


def usage_attributes(
    attributes: dict[str, AttributeValue],
    input_tokens: int | None,
    cached: int | None,
    output: int | None,
    cost: Decimal | None,
) -> None:
    """A response's usage and cost as span attributes (GenAI's and OpenInference's names)."""
    if input_tokens is not None:
        attributes["gen_ai.usage.input_tokens"] = input_tokens
        attributes["llm.token_count.prompt"] = input_tokens
    if cached is not None:
        attributes["gen_ai.usage.cache_read.input_tokens"] = cached
        attributes["llm.token_count.prompt_details.cache_read"] = cached
    if output is not None:
        attributes["gen_ai.usage.output_tokens"] = output
        attributes["llm.token_count.completion"] = output
    if input_tokens is not None or output is not None:
        attributes["llm.token_count.total"] = (input_tokens or 0) + (output or 0)
    if cost is not None:
        attributes["gen_ai.usage.cost"] = float(cost)
        attributes["llm.cost.total"] = float(cost)


@lru_cache(maxsize=4096)
def estimate(model: str, uncached: int | None, output: int | None, cached: int | None) -> Decimal | None:
    """The estimated cost of one request (the price table's lookups are slow: each request
    shape is priced once)."""
    from bbox_lark.numbers.prices import estimate_cost

    try:
        return estimate_cost([(model, Usage(uncached, output, cached))]).cost_usd
    except Exception:  # the price table is an optional extra; no estimate then
        return None


__all__ = ["AttributeValue", "Clock", "Open", "Span", "cut", "estimate", "trace_id_for", "usage_attributes"]
