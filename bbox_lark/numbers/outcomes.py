"""How a call ended (docs/reference.md#outcomes): :func:`call_outcome`, one of :data:`OUTCOMES`,
from its start line and the line that completed it (:mod:`bbox_lark.syntax.correlate` pairs
them). The rules are in :mod:`bbox_lark.numbers.session`'s docstring, "Outcomes"."""

from __future__ import annotations

import re

from bbox_lark.syntax.correlate import FAMILIES, result_kind
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Event
from bbox_lark.syntax.record import Record

#: How a call can end (docs/reference.md#outcomes), in the order reports list them.
OUTCOMES = ("ok", "error", "pending", "skipped", "retry", "unknown")

#: How a call was paired (:attr:`CallRecord.pairing`), in the order ``stats`` lists them.
PAIRINGS = ("id", "order", "ambiguous")

# -- outcomes ---------------------------------------------------------------------------


#: ``error:`` anywhere in a line, any case: a line without it has no text result that
#: starts with it (so a record's result need not be built to tell).
_ERROR = re.compile("error:", re.IGNORECASE)


def starts_call(line: Event | Record) -> bool:
    """:func:`bbox_lark.syntax.correlate.is_start` of a node or a record (a record's result
    kind is read without building its result)."""
    kind = line.kind
    if kind == "tool_start":
        return True
    if kind not in FAMILIES:
        return False
    result = result_kind(line)
    return result is not None and result in vocabulary().start_statuses


def call_outcome(start: Event | Record, completion: Event | Record | None = None) -> str:
    """How a call ended (one of :data:`OUTCOMES`): from the result of the line that
    completed it when there is one, else from its own line's (a start that nothing
    completed is ``pending``). A record's result is built only for a text result on a line
    that holds ``error:``."""
    if completion is None and starts_call(start):
        return "pending"
    deciding = completion if completion is not None else start
    kind = result_kind(deciding)
    if kind is None:
        return "unknown"
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
    if kind == "text" and (type(deciding) is not Record or _ERROR.search(deciding.raw) is not None):
        result = deciding.result
        if result is not None and result.text[:6].lower() == "error:":
            return "error"
    return "ok"
