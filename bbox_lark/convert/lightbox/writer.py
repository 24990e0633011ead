"""bbox → Lightbox: each call an event, a completion the resolved event of its start (see the
package's docstring)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TextIO

from bbox_lark.convert.base import (
    ConvertError,
    WriteContext,
    collect,
)
from bbox_lark.convert.lightbox.tables import (
    EPOCH,
    HEADER_KEY,
    HEADER_TIMES,
    ID_KEY,
    INTEGER_FIELDS,
    LATENCY_KEY,
    MARKER,
    PREFIXED_KINDS,
    REDACTED,
    SECRET,
    TS_KEY,
)
from bbox_lark.convert.lightbox.values import json_object, parse_time, render_time

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item
    from bbox_lark.syntax.nodes import Event

# -- writing -----------------------------------------------------------------------------


def _restore(value: Any, key_path: str, redacted_bytes: dict[str, str]) -> Any:
    """A field value back to Lightbox: a redaction marker → the spec's redacted form."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, str):
        match = MARKER.match(value)
        if match:
            kind = match[1]
            if kind == SECRET:
                return REDACTED
            restored: dict[str, Any] = {"_redacted": True, "_reason": kind}
            size = redacted_bytes.get(key_path)
            if size is not None and size.isdigit():
                restored["_bytes"] = int(size)
            return restored
    return value


def _output_of(event: Event, error: bool) -> Any:
    """The output object of a call's result and continuation lines (see the mapping)."""
    result = event.result
    texts = [c.text for c in event.continuation]
    redacted_bytes = {
        f.key[len("redacted_bytes.") :]: f.value
        for f in event.field_nodes
        if f.key.startswith("redacted_bytes.") and isinstance(f.value, str)
    }
    if result is not None and not texts and not error:
        if result.kind == "fields":
            after = [f for f in event.field_nodes if f.after_arrow]
            output: dict[str, Any] = {}
            for f in after:
                output.setdefault(f.key, _restore(f.value, f"output.{f.key}", redacted_bytes))
            return output
        found = json_object(result.text) if result.kind == "text" else None
        if found is not None:
            return found
    if texts and (result is None or not result.text):
        found = json_object("\n".join(texts))
        if found is not None:
            return found
    made: dict[str, Any] = {}
    if result is not None and not (error and not result.rest):
        made["result"] = result.text
    if texts:
        made["text"] = "\n".join(texts)
    return made or None


class _Writer:
    """The session's events as they are placed: a method per node class (``place_call``,
    else :meth:`place_other`), and :meth:`completion` for a line that completes a start."""

    def __init__(self, ctx: WriteContext, header: dict[str, Any], taken: set[str]) -> None:
        self.report = ctx.report
        #: The ``id=`` values of the document's lines: a synthesized invocation id avoids them.
        self.taken = taken
        self.used: set[str] = set()
        self.counter = 0
        #: Renumbered line of a start -> its invocation id, and its tool name.
        self.by_index: dict[int, str] = {}
        self.tools: dict[int, str] = {}
        #: The Lightbox events, in order.
        self.written: list[dict[str, Any]] = []
        session = header.get("id")
        if not isinstance(session, str) or not session:
            session = "bbox-session"
            self.report.synthesized("session_id (the header has no id)", 0)
        self.session_id = session
        self.last_ts: str | None = None
        #: Invocation id -> attempt number, as the reader counts them from ``retry_of``.
        self.attempts: dict[str, int] = {}
        for key in HEADER_TIMES:
            value = header.get(key)
            if isinstance(value, str) and parse_time(value) is not None:
                self.last_ts = value
                break

    def implied_attempt(self, event: Event) -> str | None:
        """The ``attempt=`` the reader writes for ``event``'s ``retry_of=`` (None without)."""
        retry_of = event.fields.get("retry_of")
        if not isinstance(retry_of, str) or not retry_of:
            return None
        return str(self.attempts.get(retry_of, 1) + 1)

    def timestamp(self, event: Event) -> str:
        own = event.ts
        if own is not None:
            self.last_ts = own
            return own
        if self.last_ts is not None:
            self.report.synthesized("timestamps (the previous known ts=)", event.line)
            return self.last_ts
        self.report.synthesized(f"timestamps ({EPOCH}: no earlier ts= and none in the header)", event.line)
        return EPOCH

    def synthesize(self) -> str:
        while True:
            self.counter += 1
            made = f"inv_{self.counter:05d}"
            if made not in self.taken and made not in self.used:
                return made

    def completion(self, event: Event, started: int) -> None:
        """A line that completes the start on renumbered line ``started``: its resolved event."""
        invocation = self.by_index.get(started)
        if invocation is None:  # pragma: no cover - every start is registered
            return
        tool = self.tools[started]
        status = "error" if event.result is not None and event.result.kind == "error" else "complete"
        self.written.append(_event_values(event, self, invocation, tool, status, True))
        self.report.kept(f"{event.kind} lines completing a start (resolved events)", event.line)

    def place(self, event: Event, index: int) -> None:
        """Place a line that completes nothing (renumbered ``index``): the method named for
        its class (``place_call``), else :meth:`place_other`."""
        name = "place_" + type(event).__name__.lower()
        getattr(self, name if hasattr(self, name) else "place_other")(event, index)

    def place_call(self, event: Event, index: int) -> None:
        """A call of a paired family (not ``m:``): an event with its invocation id (``id=``
        when present and not taken by an earlier call, else ``inv_NNNNN``)."""
        from bbox_lark.syntax.correlate import FAMILIES

        if event.kind not in FAMILIES:
            self.place_other(event, index)
            return
        own = event.id
        if own and own not in self.used:
            invocation = own
        else:
            invocation = self.synthesize()
            why = "repeated" if own else "none"
            self.report.synthesized(f"invocation ids (id= {why}: inv_NNNNN)", event.line)
        self.used.add(invocation)
        self.by_index[index] = invocation
        tool = _tool_name(event)
        self.tools[index] = tool
        self.written.append(_event_values(event, self, invocation, tool, _status(event), False))
        self.report.kept(f"{event.kind} lines", event.line)

    def place_other(self, event: Event, index: int) -> None:
        """Any other line: Lightbox has no place for it (its ``ts=`` still carries on)."""
        if event.ts is not None:
            self.last_ts = event.ts
        what = "comment" if event.kind == "comment" else event.kind
        self.report.dropped(f"{what} lines (Lightbox has no place for them)", event.line)
        for c in event.continuation:
            self.report.dropped("their continuation lines", c.line)


_TOP_FIELDS = ("actor", "originating_actor", "parent_invocation", "retry_of")


def _event_values(
    event: Event, writer: _Writer, invocation: str, tool: str, status: str, resolved: bool
) -> dict[str, Any]:
    report = writer.report
    start = writer.timestamp(event)
    given: dict[str, Any] = {}
    redacted_bytes = {
        f.key[len("redacted_bytes.") :]: f.value
        for f in event.field_nodes
        if f.key.startswith("redacted_bytes.") and isinstance(f.value, str)
    }
    if event.args:
        given["args"] = [list(a) if isinstance(a, tuple) else a for a in event.args]
    values: dict[str, Any] = {
        "schema_version": "1",
        "session_id": writer.session_id,
        "invocation_id": invocation,
        "tool": tool,
        "status": status,
        "timestamp_start": start,
    }
    hashes: dict[str, str] = {}
    seen: set[str] = set()
    if event.metrics is not None:
        report.dropped("metrics comments of calls (Lightbox has no place for them)", event.line)
    for f in event.field_nodes:
        key, value = f.key, f.value
        if f.after_arrow:
            continue
        if key in seen:
            report.dropped("repeated field keys (the first one is written)", event.line)
            continue
        seen.add(key)
        if key in (ID_KEY, TS_KEY, LATENCY_KEY, "ts_end") or key.startswith("redacted_bytes."):
            continue
        if (key == "tool" and value == tool) or (key == "error" and status == "error"):
            continue  # the event's tool name; its error object
        if key == "session_id" and isinstance(value, str):
            values["session_id"] = value
        elif key in _TOP_FIELDS and isinstance(value, str):
            values[key] = value
        elif key == "attempt" and value == writer.implied_attempt(event):
            continue  # the reader gives it back from retry_of
        elif key in INTEGER_FIELDS and isinstance(value, str) and value.isdigit() and len(value) < 19:
            values[key] = int(value)
        elif key.startswith("content_hashes.") and isinstance(value, str):
            hashes[key[len("content_hashes.") :]] = value
        elif key == "input" and isinstance(value, str) and json_object(value) is not None:
            for inner, item in (json_object(value) or {}).items():
                given.setdefault(inner, item)
        elif key == "args" and event.args:
            report.dropped("args= fields beside positional arguments", event.line)
        else:
            given[key] = _restore(value, f"input.{key}", redacted_bytes)
    implied = writer.implied_attempt(event)
    if implied is not None:
        writer.attempts[invocation] = int(implied)
    if hashes:
        values["content_hashes"] = hashes
    values["input"] = given
    if status == "pending":
        values["output"] = None
        values["timestamp_end"] = None
        if event.result is not None and event.result.kind != "running":
            report.dropped("start results other than [running] (a pending event has no output)", event.line)
        return values
    error = status == "error"
    values["output"] = _output_of(event, error)
    if error:
        values["error"] = _error_object(event, writer)
    values["timestamp_end"] = _end_time(event, start, writer)
    del resolved
    return values


def _error_object(event: Event, writer: _Writer) -> dict[str, Any]:
    """The ``error`` of an error event: its ``error=`` JSON object, else its message."""
    raw = event.fields.get("error")
    found = json_object(raw) if isinstance(raw, str) else None
    message = event.result.message if event.result is not None else None
    if raw is not None and found is None:
        writer.report.dropped("error= values that are no JSON object (Lightbox's error is one)", event.line)
    return found if found is not None else ({"message": message} if message else {})


def _end_time(event: Event, start: str, writer: _Writer) -> str:
    """``timestamp_end``: ``ts_end=``, else ``start`` + ``latency_ms=``, else ``start``."""
    end = event.fields.get("ts_end")
    latency = event.latency_ms
    began = parse_time(start)
    if isinstance(end, str) and end:
        return end
    if latency is not None and began is not None:
        return render_time(began + timedelta(milliseconds=latency), start)
    writer.report.synthesized("timestamp_end (= timestamp_start: no latency_ms= or ts_end=)", event.line)
    return start


def _tool_name(event: Event) -> str:
    tool = event.fields.get("tool")
    if event.kind in ("tool", "tool_start") and isinstance(tool, str) and tool:
        return tool
    letter = PREFIXED_KINDS.get(event.kind)
    if letter is not None:
        return f"{letter}:{event.name or ''}"
    return event.name or "tool"


def _status(event: Event) -> str:
    from bbox_lark.syntax.correlate import is_start

    if is_start(event):
        return "pending"
    if event.result is not None and event.result.kind == "error":
        return "error"
    return "complete"


def write(items: Iterable[Item], out: TextIO, ctx: WriteContext) -> None:
    """The document's calls as a Lightbox session in ``ctx.path`` (see the mapping)."""
    from bbox_lark.convert.lightbox.chain import write_session
    from bbox_lark.syntax.correlate import COMPLETION, Pairer
    from bbox_lark.syntax.nodes import Continuation, Event

    del out
    if ctx.path is None:
        raise ConvertError("lightbox output is a folder: give -o DIR")
    report = ctx.report
    head, body = collect(items)
    header = dict(head.header_info.fields) if head.header_info is not None else {}
    events = [node for node in body if isinstance(node, Event)]
    owners = {id(c) for e in events for c in e.continuation}
    writer = _Writer(ctx, header, {e.id for e in events if e.id})
    pairer = Pairer()
    for index, event in enumerate(events, 1):
        if pairer.feed(replace(event, line=index)) == COMPLETION:
            writer.completion(event, pairer.completed)
        else:
            writer.place(event, index)
    written = writer.written
    for node in body:
        if isinstance(node, Continuation) and id(node) not in owners and node.owner is None:
            report.dropped("continuation lines without an event", node.line)
    meta: dict[str, Any] = {"session_id": writer.session_id}
    if header:
        meta[HEADER_KEY] = header
        report.extra("header keys (in meta.json's bbox_header)", 0, len(header))
    created = next((header[k] for k in HEADER_TIMES[:2] if isinstance(header.get(k), str)), None)
    if isinstance(created, str) and created:
        meta["created_at"] = created
    elif not written:
        meta["created_at"] = EPOCH
    try:
        write_session(ctx.path, written, meta, overwrite=True)
    except OSError as error:
        raise ConvertError(f"{ctx.path}: cannot write: {error.strerror or error}") from None
    except ValueError as error:  # pragma: no cover - the values are built to be valid
        raise ConvertError(f"{ctx.path}: cannot write the session: {error}") from None
