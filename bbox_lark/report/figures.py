"""The numbers the report shows, in one place: a call's outcome, usage per model response and
the session's totals (DECISIONS §12 "Outcomes", "Usage").

Every figure here comes from :mod:`bbox_lark.numbers` when it is present (the one source of
numbers that ``stats``, the tables and ATIF share); until then a provisional reading of the
same rules stands in, so the page can be built and tested. Nothing else in the report
computes a number of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from bbox_lark.ast import Event

#: Result kinds whose call went well (a count, a selection, fields, text …).
_OK_KINDS = frozenset(
    {"ok", "count", "selected", "auto", "auto_choice", "fields", "text", "blob", "loaded", "redacted"}
)
_START_KINDS = frozenset({"running", "pending", "started", "launched"})


def outcome(event: Event) -> str:
    """``ok``, ``error``, ``pending``, ``skipped``, ``retry`` or ``unknown``."""
    result = event.result
    if result is None:
        return "unknown"
    kind = result.kind
    if kind == "error" or (kind == "text" and result.text.lower().startswith("error:")):
        return "error"
    if kind in _START_KINDS:
        return "pending"
    if kind == "skip":
        return "skipped"
    if kind == "retry":
        return "retry"
    if kind in _OK_KINDS:
        return "ok"
    return "unknown"


def _int(value: object) -> int | None:
    from bbox_lark.values import parse_int

    return parse_int(value)


class ResponseUsage:
    """Usage stated on event lines, once per model response: consecutive lines with equal
    ``tokens_in`` and ``tokens_cached`` and no ``u:``/``o:`` between them are one response,
    whose output is the largest ``tokens_out``. ``emit(line, input, output)`` is called for
    each response (input counts cache reads, as context size)."""

    def __init__(self, emit: Callable[[int, int, int], None]) -> None:
        self._emit = emit
        self._key: tuple[int, int] | None = None
        self._line = 0
        self._out = 0

    def _flush(self) -> None:
        if self._key is not None:
            self._emit(self._line, self._key[0] + self._key[1], self._out)
            self._key = None

    def add(self, event: Event) -> None:
        if event.kind in ("user", "observation"):
            self._flush()
            return
        fields = event.fields
        tokens_in = _int(fields.get("tokens_in"))
        if tokens_in is None:
            return
        key = (tokens_in, _int(fields.get("tokens_cached")) or 0)
        out = _int(fields.get("tokens_out")) or 0
        if key != self._key:
            self._flush()
            self._key, self._line, self._out = key, event.line, out
        else:
            self._out = max(self._out, out)

    def finish(self) -> None:
        self._flush()


class SessionTotals:
    """The session's usage and cost as the header card states them: label -> text."""

    def __init__(self) -> None:
        self._in = 0
        self._out = 0
        self._cached = 0
        self._responses = 0
        self._stated_cost: Decimal | None = None
        self._usage = ResponseUsage(self._count)

    def _count(self, line: int, tokens_in: int, tokens_out: int) -> None:
        self._responses += 1
        self._in += tokens_in
        self._out += tokens_out

    def add(self, event: Event) -> None:
        self._usage.add(event)
        fields = event.fields
        if event.fields.get("tokens_in") is not None:
            self._cached_line(fields)
        if event.kind == "lifecycle" and event.name == "end":
            self._stated_cost = _cost(fields.get("cost")) or self._stated_cost

    def _cached_line(self, fields: dict[str, Any]) -> None:
        pass

    def finish(self, header: dict[str, Any]) -> list[tuple[str, str]]:
        self._usage.finish()
        rows: list[tuple[str, str]] = []
        if self._responses:
            rows.append(("responses", f"{self._responses:,}"))
            rows.append(("input (with cache reads)", f"{self._in:,}"))
            rows.append(("output", f"{self._out:,}"))
        for key, label in (
            ("tokens_total_in", "stated input"),
            ("tokens_total_out", "stated output"),
            ("tokens_cached", "stated cached"),
        ):
            value = _int(header.get(key))
            if value is not None:
                rows.append((label, f"{value:,}"))
        stated = _cost(header.get("cost_usd")) or self._stated_cost
        if stated is not None:
            rows.append(("stated cost", f"${stated}"))
        return rows


def _cost(value: object) -> Decimal | None:
    if not isinstance(value, str):
        return None
    try:
        return Decimal(value.lstrip("$"))
    except InvalidOperation:
        return None
