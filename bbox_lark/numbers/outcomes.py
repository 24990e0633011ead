"""How a call ended (docs/reference.md#outcomes): :func:`call_outcome`, one of :data:`OUTCOMES`,
from its start line and the line that completed it (:mod:`bbox_lark.syntax.correlate` pairs
them). The rules are in :mod:`bbox_lark.numbers.session`'s docstring, "Outcomes"."""

from __future__ import annotations

from bbox_lark.syntax.correlate import is_start
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Event

#: How a call can end (docs/reference.md#outcomes), in the order reports list them.
OUTCOMES = ("ok", "error", "pending", "skipped", "retry", "unknown")

#: How a call was paired (:attr:`CallRecord.pairing`), in the order ``stats`` lists them.
PAIRINGS = ("id", "order", "ambiguous")

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
