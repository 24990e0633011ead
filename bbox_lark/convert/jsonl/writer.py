"""bbox → JSON Lines: a record per line, in the full style (lossless, with its source) or the
terse one (the spec's JSONL ALTERNATIVE, reporting what it drops)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

from bbox_lark.convert.base import (
    WriteContext,
    flatten,
)
from bbox_lark.convert.jsonl.tables import RECORD_VERSION
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.jsonout import event_to_json
from bbox_lark.syntax.nodes import (
    BlankLine,
    Continuation,
    Event,
    Result,
)

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item
    from bbox_lark.syntax.nodes import Line
    from bbox_lark.syntax.parser import Head

#: Written as ``\uXXXX`` escapes: lone surrogates (not UTF-8), and the characters other
#: than ``\n`` that some readers take for a line break (``str.splitlines``, JavaScript).
_ESCAPED = re.compile("[\ud800-\udfff\x85\u2028\u2029]")
#: Their escapes, for ``str.translate`` (``re.sub`` with a function held an object per
#: match until its join: a line of U+2028 took 45 bytes a character).
_ESCAPES = {code: f"\\u{code:04x}" for code in (*range(0xD800, 0xE000), 0x85, 0x2028, 0x2029)}


# -- writing ---------------------------------------------------------------------------


def dump(record: Any) -> str:
    """One record (or any JSON value) as a JSON line (without its ending): UTF-8 text as
    is, lone surrogates (invalid bytes of the source) as ``\\udcXX`` escapes, and U+0085,
    U+2028, U+2029 escaped too, so that ``\\n`` is the only line break in the file for any
    reader."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return text if _ESCAPED.search(text) is None else text.translate(_ESCAPES)


def header_record(head: Head, style: str = "full") -> dict[str, Any]:
    """The first record: the header block (its lines with their source in the full style)."""
    info = head.header_info
    record: dict[str, Any] = {"record": "header", "bbox": RECORD_VERSION, "style": style, "bom": head.bom}
    if style == "full":
        record["lines"] = [
            {"line": h.line, "role": h.role, "source": h.raw, "eol": h.eol} for h in head.header_lines
        ]
    record["fields"] = None if info is None else info.fields
    if info is not None:
        record["closed"] = info.close_line is not None
    if info is not None and info.faults:
        record["faults"] = [
            {"code": code, "line": line, "col": col, "message": message}
            for code, line, col, message in info.faults
        ]
    return record


def _value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _field_map(nodes: Iterable[Any]) -> dict[str, Any]:
    """Key → value, the first occurrence of a key winning (as ``Event.fields``)."""
    found: dict[str, Any] = {}
    for node in nodes:
        found.setdefault(node.key, _value(node.value))
    return found


def session_of(head: Head) -> str | None:
    """The session a document's records name: its header's ``id``, or None when the header
    has none (an empty ``id:`` included)."""
    value = head.header_info.fields.get("id") if head.header_info is not None else None
    return value if isinstance(value, str) and value.strip() else None


def line_record(node: Line, number: int, session: str | None = None) -> dict[str, Any]:
    """The record of one body line (``number``: its line in the bbox document) of the
    session ``session`` (:func:`session_of`)."""
    record: dict[str, Any] = {"session": session, "line": number, "kind": node.kind}
    if isinstance(node, Continuation):
        record["owner"] = node.owner
        record["text"] = node.text
    elif isinstance(node, Event):
        _event_values(node, record)
    record["source"] = node.raw
    record["eol"] = node.eol
    return record


def _event_values(event: Event, record: dict[str, Any]) -> None:
    """The values ``parse --json`` gives an event (:func:`~bbox_lark.syntax.jsonout.event_to_json`),
    with the fields split at the arrow: those before it in ``fields``, those after it in
    ``result.fields``; an oversized line (never parsed: it has no prefix, no name) has only
    its flag."""
    if event.oversized:
        record["oversized"] = True
        return
    before = [f for f in event.field_nodes if not f.after_arrow]
    after = [f for f in event.field_nodes if f.after_arrow]
    for key, value in event_to_json(event).items():
        if key == "fields":
            if before:
                record["fields"] = _field_map(before)
        elif key not in ("line", "kind", "continuation", "raw"):
            record[key] = value
    if after and "result" in record:
        record["result"]["fields"] = _field_map(after)


def category(node: Line) -> str:
    """The construct a record stands for in the report: ``event lines``, ``comment lines`` …"""
    if isinstance(node, Event) and node.is_event:
        return "event lines"
    return f"{node.kind} lines"


def write(items: Iterable[Item], out: TextIO, ctx: WriteContext) -> None:
    """A record per item, written as it comes."""
    from bbox_lark.syntax.parser import Head

    style = ctx.options.get("style") or "full"
    report = ctx.report
    number = 1
    session: str | None = None
    terse = TerseWriter(report) if style == "terse" else None
    for item in flatten(items):
        if isinstance(item, Head):
            number = item.body_start
            session = session_of(item)
            if terse is not None:
                write_record(out, terse.header(item))
                continue
            write_record(out, header_record(item))
            if item.header_lines:
                report.kept("header lines", item.header_lines[0].line, len(item.header_lines))
            continue
        long = _is_long(item)
        if terse is not None:
            record = terse.record(item)
            if record is not None:
                write_record(out, {**record, "session": session}, long=long)
        else:
            write_record(out, line_record(item, number, session), long=long)
            report.kept(category(item), item.line)
        number += 1


# -- the terse style ---------------------------------------------------------------------


class TerseWriter:
    """Nodes as the spec's terse records; what they cannot hold goes to the report."""

    def __init__(self, report: Any) -> None:
        self.report = report

    def header(self, head: Head) -> dict[str, Any]:
        record = header_record(head, "terse")
        if head.header_lines:
            self.report.kept("header fields (as a map)", head.header_lines[0].line)
            self.report.dropped(
                "header source text (layout, quoting, YAML comments)", head.header_lines[0].line
            )
        return record

    def record(self, node: Line) -> dict[str, Any] | None:
        """The record of ``node``, or None when terse has no place for it: the method named
        for its class (``record_blankline``, ``record_comment``, ...), else
        :meth:`record_event`."""
        name = "record_" + type(node).__name__.lower()
        record: dict[str, Any] | None = getattr(self, name if hasattr(self, name) else "record_event")(node)
        return record

    def record_blankline(self, node: BlankLine) -> None:
        self.report.dropped("blank lines", node.line)

    def record_continuation(self, node: Continuation) -> None:
        self.report.dropped("continuation lines", node.line)

    def record_comment(self, node: Event) -> None:
        self.report.dropped("oversized lines" if node.oversized else category(node), node.line)

    record_unknown = record_comment

    def record_event(self, node: Event) -> dict[str, Any] | None:
        report = self.report
        if node.oversized:
            report.dropped("oversized lines", node.line)
            return None
        record = terse_record(node)
        report.kept(category(node), node.line)
        report.dropped("line source text (spacing, quoting, line endings)", node.line)
        if node.metrics is not None:
            report.dropped("metrics comments", node.line)
        if (
            node.result is not None
            and node.result.kind != "fields"
            and any(f.after_arrow for f in node.field_nodes)
        ):
            report.note("kept", "fields after the arrow (in the result text)", node.line)
        return record


def terse_record(event: Event) -> dict[str, Any]:
    """The terse record of an event or lifecycle line."""
    vocab = vocabulary()
    record: dict[str, Any] = {"t": "@" if event.kind == "lifecycle" else event.prefix}
    args = [_value(arg) for arg in event.args]
    fields = _field_map(f for f in event.field_nodes if not f.after_arrow)
    if event.prefix in vocab.free_text_prefixes:
        record["c"] = event.text
        fields = {}
    elif event.kind == "mcp" and event.name is not None:
        server, _, method = event.name.partition(".")
        record["s"] = server
        if method:
            record["m"] = method
    elif event.kind == "mode" and event.name is not None:
        record["v"] = event.name
    elif event.name is not None:
        record["n"] = event.name
    if event.kind == "subagent" and len(args) == 1 and isinstance(args[0], str):
        record["q"] = args.pop()
    if args:
        record["a"] = args[0] if len(args) == 1 and isinstance(args[0], str) else args
        if fields:
            record["f"] = fields
    elif fields:
        record["a"] = fields
    if event.result is not None:
        record["r"] = terse_result(event.result, event)
    return record


def terse_result(result: Result, event: Event) -> Any:
    """``"ok"`` for a status, ``{"lines": 186}`` for a count with a unit, ``186`` without
    one, ``{"err": "msg"}`` for an error, a map of strings for fields, else the text."""
    vocab = vocabulary()
    plain = not result.rest
    if result.kind in vocab.start_statuses or result.kind in vocab.final_statuses:
        return result.kind if plain else result.text
    if result.kind == "count" and plain and result.number is not None:
        return {result.unit: result.number} if result.unit else result.number
    if result.kind == "error" and plain and result.message:
        return {"err": result.message}
    if result.kind == "fields":
        return _field_map(f for f in event.field_nodes if f.after_arrow)
    return result.text


def write_record(out: TextIO, record: dict[str, Any], *, long: bool = False, piece: int = 0) -> None:
    """``record`` as a JSON line (:func:`dump`) and its line break, written to ``out``. A
    record of a ``long`` line (over :data:`_PIECE` characters) is written a part at a time
    (:func:`_write_value`, strings in pieces of ``piece`` characters, :data:`_CHUNK` by
    default), the same characters: it holds the line's text twice (``text`` and ``source``),
    and encoding it whole held both encoded copies and their join beside them (a
    16,000,000-character line peaked at 10.3 times the line)."""
    if not long:
        out.write(dump(record) + "\n")  # (one write a record)
        return
    _write_value(out, record, piece or _CHUNK)
    out.write("\n")


def _is_long(node: Line) -> bool:
    """True for a line read from a source over :data:`_PIECE` characters (a node built from
    values has no source to measure, and its ``raw`` may refuse)."""
    source = node.source if isinstance(node, Event) else node.raw
    return source is not None and len(source) > _PIECE


def _write_value(out: TextIO, value: Any, piece: int) -> None:
    """``value`` as :func:`dump` writes it, a part at a time: a long string in escaped pieces
    of ``piece`` characters (JSON escapes one character at a time, so the pieces join to the
    whole's escape), a map or list an item at a time, anything else whole."""
    if isinstance(value, str):
        if len(value) <= piece:
            out.write(dump(value))
            return
        out.write('"')
        for start in range(0, len(value), piece):
            out.write(dump(value[start : start + piece])[1:-1])
        out.write('"')
    elif isinstance(value, dict) and all(isinstance(key, str) for key in value):
        out.write("{")
        for n, (key, item) in enumerate(value.items()):
            out.write(("," if n else "") + dump(key) + ":")
            _write_value(out, item, piece)
        out.write("}")
    elif isinstance(value, list | tuple):
        out.write("[")
        for n, item in enumerate(value):
            if n:
                out.write(",")
            _write_value(out, item, piece)
        out.write("]")
    else:
        out.write(dump(value))


_PIECE = 1 << 20
"""A line over this many characters is a long one: its record is written a part at a time."""
_CHUNK = 1 << 16
"""The characters of a long string encoded at a time."""
