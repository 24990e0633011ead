"""JSON Lines: one JSON record per physical line of a bbox/1 file (``docs/formats/jsonl.md``,
schema ``docs/schema/bbox-jsonl.schema.json``).

The **full** style (the default) is lossless: the first record is the header (byte order
mark, the header's lines with their source text and line endings, its key → value map,
its faults), then one record per body line, continuation and blank lines included, each
with its values (kind, name, fields, typed values, arguments, result, metrics) *and* its
``source`` text and line ending. Reading a record that has ``source`` reads that text (line
by line, as :func:`bbox_lark.iter_nodes` does), so ``bbox → jsonl → bbox`` is byte for byte
the input; a record without ``source`` (written by hand or by a data tool) is built from its
values with the node builders (``Call.build`` …) and reported as synthesized text.

Invalid UTF-8 (decoded with ``surrogateescape``, docs/reference.md#api-values) becomes lone surrogates
U+DC80–U+DCFF; they are written as JSON escapes (``"\\udcff"``), which keeps the JSONL file
valid UTF-8 and reads back (with Python's ``json``) to the same string, hence the same bytes.

The **terse** style (``--style terse``) is the spec's "JSONL ALTERNATIVE" (keys ``t c n a r
s m v q``): lossy, and its writer reports what it drops.

Both directions stream: the reader yields a node per record as it reads, the writer writes
a record per node as it gets it.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TextIO

from bbox_lark.ast import (
    BlankLine,
    Call,
    Comment,
    Continuation,
    Event,
    Lifecycle,
    Message,
    Observation,
    Result,
    Unknown,
)
from bbox_lark.convert.base import (
    REPO_SHA,
    Format,
    Input,
    MappingRow,
    Option,
    ReadContext,
    RefusedInputError,
    WriteContext,
    build_head,
    flatten,
    importer_header,
    json_type,
)
from bbox_lark.grammar import vocabulary
from bbox_lark.jsonout import event_to_json
from bbox_lark.source import BOM, DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.ast import Line
    from bbox_lark.convert.base import Item
    from bbox_lark.parser import Head

#: The version of the record shape (the header record's ``"bbox"``).
RECORD_VERSION = "1"
#: File name ending of a JSON Lines file.
EXTENSION = ".jsonl"
#: The line endings a record's ``eol`` may hold.
EOLS = ("\n", "\r\n", "")
STYLES = ("full", "terse")
#: The start of every header record this module writes (what the sniffer looks for first).
MARKER = '{"record":"header","bbox":"' + RECORD_VERSION + '"'
#: Written as ``\uXXXX`` escapes: lone surrogates (not UTF-8), and the characters other
#: than ``\n`` that some readers take for a line break (``str.splitlines``, JavaScript).
_ESCAPED = re.compile("[\ud800-\udfff\x85\u2028\u2029]")
#: Keys of the terse style (bbox-format-full.md "JSONL ALTERNATIVE") plus ``f`` (fields
#: beside positional arguments), this module's addition.
TERSE_KEYS = frozenset({"t", "c", "n", "a", "r", "s", "m", "v", "q", "f", "session"})


class RecordError(ValueError):
    """A record that cannot be read (its line is skipped with this message)."""


# -- writing ---------------------------------------------------------------------------


def dump(record: dict[str, Any]) -> str:
    """One record as a JSON line (without its ending): UTF-8 text as is, lone surrogates
    (invalid bytes of the source) as ``\\udcXX`` escapes, and U+0085, U+2028, U+2029
    escaped too, so that ``\\n`` is the only line break in the file for any reader."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return _ESCAPED.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


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
    """The values ``parse --json`` gives an event (:func:`~bbox_lark.jsonout.event_to_json`),
    with the fields split at the arrow: those before it in ``fields``, those after it in
    ``result.fields``; an oversized line has only its prefix and name."""
    if event.oversized:
        if event.prefix:
            record["prefix"] = event.prefix
        if event.name is not None:
            record["name"] = event.name
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
    from bbox_lark.parser import Head

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
                out.write(dump(terse.header(item)) + "\n")
                continue
            out.write(dump(header_record(item)) + "\n")
            if item.header_lines:
                report.kept("header lines", item.header_lines[0].line, len(item.header_lines))
            continue
        if terse is not None:
            record = terse.record(item)
            if record is not None:
                out.write(dump({**record, "session": session}) + "\n")
        else:
            out.write(dump(line_record(item, number, session)) + "\n")
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
        report = self.report
        if isinstance(node, BlankLine):
            report.dropped("blank lines", node.line)
            return None
        if isinstance(node, Continuation):
            report.dropped("continuation lines", node.line)
            return None
        assert isinstance(node, Event)
        if node.kind in ("comment", "unknown") or node.oversized:
            report.dropped(category(node) if not node.oversized else "oversized lines", node.line)
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


# -- reading ---------------------------------------------------------------------------


def _records(source: Input, ctx: ReadContext) -> Iterator[tuple[int, Any]]:
    """(line number, JSON value) per non-blank line; lines that are not JSON are skipped."""
    for number, data in enumerate(source.lines(), 1):
        text = data.decode("utf-8", "surrogateescape")
        if number == 1:
            text = text.removeprefix(BOM)
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as error:
            ctx.report.skip(number, f"not a JSON value: {_reason(error)}")
            continue
        if not isinstance(value, dict):
            ctx.report.skip(number, f"a record is a JSON object, not {json_type(value, article=True)}")
            continue
        yield number, value


def _reason(error: BaseException) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at column {error.colno}"
    if isinstance(error, RecursionError):
        return "nested too deeply"
    return str(error)


class _Origin:
    """Document line → JSONL line, remembered only where the two stop running in step."""

    def __init__(self, header_line: int, body_start: int) -> None:
        self.header_line = header_line
        self.body_start = body_start
        self.starts: list[int] = []
        self.lines: list[int] = []

    def add(self, document_line: int, jsonl_line: int) -> None:
        if self.starts and jsonl_line - document_line == self.lines[-1] - self.starts[-1]:
            return
        self.starts.append(document_line)
        self.lines.append(jsonl_line)

    def __call__(self, line: int) -> tuple[int, int]:
        if line < self.body_start or not self.starts:
            return self.header_line, 0
        at = bisect_right(self.starts, line) - 1
        if at < 0:
            return self.header_line, 0
        return self.lines[at] + line - self.starts[at], 0


def read(source: Input, ctx: ReadContext) -> Iterator[Item]:
    """The document the records stand for: a head, then a node per body record (its
    continuation lines attached to their event, as :func:`bbox_lark.iter_nodes` does),
    checked on the way when ``ctx.check``."""
    from bbox_lark.api import checker_for
    from bbox_lark.parser import iter_attached

    records = _records(source, ctx)
    first = next(records, None)
    head, style, header_line, leftover = _read_head(first, ctx)
    origin = _Origin(header_line, head.body_start)
    ctx.report.origin = origin
    checker = checker_for(source.path, None, None, None) if ctx.check else None
    if checker is not None:
        checker.start(head)
    yield head
    pending = [leftover] if leftover is not None else []
    stream = _body(_chain(pending, records), head.body_start, style, ctx, origin)
    for node in iter_attached(stream):
        if checker is not None:
            checker.node(node)
        yield node
    if checker is not None:
        ctx.diagnostics.extend(checker.finish())


def _chain(first: list[tuple[int, Any]], rest: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    yield from first
    yield from rest


def _read_head(
    first: tuple[int, Any] | None, ctx: ReadContext
) -> tuple[Head, str, int, tuple[int, Any] | None]:
    """(head, style, its JSONL line, the first record when it is not a header record)."""
    style = ctx.options.get("style") or "full"
    if first is None:
        ctx.report.skip(1, "no header record: the input holds no records")
        return _empty_head(), style, 1, None
    number, record = first
    if record.get("record") != "header":
        if style == "terse" or "t" in record:
            ctx.report.synthesized("header (the terse input has no header record)", number)
            return importer_header(ctx, None), "terse", number, first
        ctx.report.skip(number, 'the first record is not a header record ({"record": "header", …})')
        return _empty_head(), style, number, first
    version = record.get("bbox")
    if version != RECORD_VERSION:
        raise RefusedInputError(
            f"line {number}: header record of version {version!r}; this reader reads bbox {RECORD_VERSION!r}"
        )
    style = record.get("style", style)
    if style not in STYLES:
        ctx.report.skip(number, f"unknown style {style!r} (one of: {', '.join(STYLES)}); read as full")
        style = "full"
    try:
        return _head_from_record(record, number, ctx), style, number, None
    except RecordError as error:
        ctx.report.skip(number, f"header record: {error}")
        return _empty_head(), style, number, None


def _empty_head() -> Head:
    from bbox_lark.parser import Head

    return Head(False, (), None, 1)


def _head_from_record(record: dict[str, Any], number: int, ctx: ReadContext) -> Head:
    from bbox_lark.parser import Head, iter_nodes

    bom = record.get("bom", False)
    if not isinstance(bom, bool):
        raise RecordError("'bom' must be true or false")
    lines = record.get("lines")
    fields = record.get("fields")
    if lines is None:
        if fields is None:
            return replace(_empty_head(), bom=bom)
        if not isinstance(fields, dict):
            raise RecordError("'fields' must be an object or null")
        ctx.report.synthesized("header text (built from the header record's fields)", number)
        try:
            return build_head(fields, bom=bom)
        except Exception as error:  # YAML cannot write every value
            raise RecordError(f"cannot build a header from 'fields': {error}") from None
    if not isinstance(lines, list):
        raise RecordError("'lines' must be a list")
    texts = []
    for index, line in enumerate(lines):
        if not isinstance(line, dict):
            raise RecordError(f"'lines'[{index}] must be an object")
        eol = _eol(line, f"'lines'[{index}]")
        texts.append(_source(line, eol, f"'lines'[{index}]") + eol)
    if any(not text.endswith("\n") for text in texts[:-1]):
        raise RecordError("only the last header line may lack a line ending")
    stream = iter_nodes(texts, max_line=ctx.max_line or DEFAULT_MAX_LINE)
    head = next(stream)
    extra = sum(1 for _ in stream)
    if not isinstance(head, Head) or extra or len(head.header_lines) != len(texts):
        raise RecordError("its 'lines' do not read as a header block (a fence, YAML, a fence)")
    ctx.report.kept("header lines", number, len(texts))
    return replace(head, bom=bom)


def _source(record: dict[str, Any], eol: str, what: str = "record") -> str:
    """A record's ``source``: one line. It may end in a carriage return when its ending is
    not ``\\n`` (``a\\r`` + ``\\r\\n``, or a last line ``a\\r`` without one); before ``\\n`` the
    two would read as a CRLF, another line."""
    text = record.get("source")
    if not isinstance(text, str):
        raise RecordError(f"{what}: 'source' must be a string, got {json_type(text, article=True)}")
    if "\n" in text or (text.endswith("\r") and eol == "\n"):
        raise RecordError(f"{what}: 'source' is one line (no line break)")
    return text


def _eol(record: dict[str, Any], what: str = "record") -> str:
    eol = record.get("eol", "\n")
    if eol not in EOLS:
        raise RecordError(f'{what}: \'eol\' must be one of "\\n", "\\r\\n", "" (not {eol!r})')
    return str(eol)


def _body(
    records: Iterator[tuple[int, Any]], number: int, style: str, ctx: ReadContext, origin: _Origin
) -> Iterator[Line]:
    """A node per body record, numbered from ``number``; bad records are skipped."""
    report = ctx.report
    max_line = ctx.max_line or DEFAULT_MAX_LINE
    for jsonl_line, record in records:
        try:
            if record.get("record") == "header":
                raise RecordError("a header record is only allowed as the first record")
            if "record" in record:
                raise RecordError(f"unknown record type {record['record']!r}")
            if style == "terse":
                node: Line = _terse_node(record, number)
                report.synthesized(f"{category(node)} (text built from terse values)", jsonl_line)
            else:
                node = _full_node(record, number, max_line, report, jsonl_line)
        except RecordError as error:
            report.skip(jsonl_line, str(error))
            continue
        origin.add(number, jsonl_line)
        yield node
        number += 1


def _kind(record: dict[str, Any]) -> str:
    kind = record.get("kind")
    if not isinstance(kind, str):
        raise RecordError("a record needs a 'kind' (a string)")
    if kind not in vocabulary().event_kinds and kind not in ("blank", "continuation"):
        raise RecordError(f"unknown kind {kind!r}")
    return kind


def _full_node(record: dict[str, Any], number: int, max_line: int, report: Any, jsonl_line: int) -> Line:
    from bbox_lark.parser import parse_line

    kind = _kind(record)
    eol = _eol(record)
    if "source" in record:
        text = _source(record, eol)
        node: Line
        if record.get("oversized") is True or len(text) > max_line:
            node = Unknown("unknown", number, text, eol, oversized=True)
        else:
            node = parse_line(text, number, eol)
        report.kept(category(node), jsonl_line)
        if node.kind != kind or any(
            key in record and record[key] != getattr(node, key, None) for key in ("name", "text")
        ):
            report.dropped("record values that disagree with their source (the source is read)", jsonl_line)
        return node
    node = build_record(record, kind, number, eol)
    report.synthesized(f"{category(node)} (text built from values: no 'source')", jsonl_line)
    return node


# -- building nodes from values ------------------------------------------------------------


def build_record(record: dict[str, Any], kind: str, number: int, eol: str) -> Line:
    """The node of a full-style record without ``source``, built from its values."""
    if kind == "blank":
        return BlankLine(number, "", eol)
    if kind == "continuation":
        text = _string(record, "text")
        if not text.strip() or "\n" in text or text.endswith("\r"):
            raise RecordError("a continuation record needs 'text' on one line")
        return Continuation(number, "  " + text, eol)
    from bbox_lark.transform import node_class

    cls = node_class(kind)
    text = _string(record, "text", "")
    name = record.get("name")
    if name is not None and not isinstance(name, str):
        raise RecordError("'name' must be a string")
    fields = _fields(record.get("fields"), "fields")
    fields = _with_typed(fields, record.get("typed"))
    args = _args(record.get("args"))
    result = _result(record.get("result")) if record.get("result") is not None else None
    metrics = _fields(record.get("metrics"), "metrics") if record.get("metrics") is not None else None
    try:
        node: Event
        if cls is Message:
            node = Message.build(kind, text, result=result, metrics=metrics)
            missing = {k: v for k, v in fields.items() if k not in node.fields}
            if missing:
                node = Message.build(kind, text, fields=missing, result=result, metrics=metrics)
        elif cls is Comment:
            node = Comment.build(text)
            missing = {k: v for k, v in fields.items() if k not in node.fields}
            if missing:
                node = Comment.build(text, fields=missing)
        elif cls is Unknown:
            node = Unknown.build(text)
        elif cls is Observation:
            node = Observation.build(args, fields=fields, result=result, metrics=metrics)
        elif cls is Lifecycle:
            node = Lifecycle.build(name or "", args, fields=fields, result=result, metrics=metrics)
        else:
            node = Call.build(kind, name, args, fields=fields, result=result, metrics=metrics)
    except (ValueError, TypeError) as error:
        raise RecordError(f"cannot build a {kind} line from its values: {error}") from None
    return _placed(node, number, eol)


def _placed(node: Event, number: int, eol: str) -> Event:
    """A built node at its line, its emitted text taken as its source (so it is written and
    given its continuation lines like a parsed one)."""
    return replace(node, line=number, eol=eol, source=node.raw)


def _string(record: dict[str, Any], key: str, default: str | None = None) -> str:
    value = record.get(key, default)
    if not isinstance(value, str):
        raise RecordError(f"'{key}' must be a string")
    return value


def _fields(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError(f"'{what}' must be an object")
    found: dict[str, Any] = {}
    for key, item in value.items():
        found[key] = _field_value(item, f"{what}.{key}")
    return found


def _field_value(value: Any, what: str) -> str | list[str]:
    if isinstance(value, list):
        return [_scalar(item, what) for item in value]
    return _scalar(value, what)


def _scalar(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return json.dumps(value)
    raise RecordError(f"'{what}' must be a string, a number or a list of them")


def _with_typed(fields: dict[str, Any], typed: Any) -> dict[str, Any]:
    """Typed values a record gives without their source string, as fields."""
    if typed is None:
        return fields
    if not isinstance(typed, dict):
        raise RecordError("'typed' must be an object")
    fields = dict(fields)
    for key, value in typed.items():
        if key in fields:
            continue
        if key == "attempt" and isinstance(value, dict):
            number, of = value.get("number"), value.get("of")
            fields[key] = f"{_scalar(number, 'typed.attempt')}" + (
                f"/{_scalar(of, 'typed.attempt')}" if of is not None else ""
            )
        else:
            fields[key] = _scalar(value, f"typed.{key}")
    return fields


def _args(value: Any) -> list[str | list[str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError("'args' must be a list")
    return [_field_value(item, "args") for item in value]


def _result(value: Any) -> Result:
    """A result from its values (full style)."""
    if not isinstance(value, dict):
        raise RecordError("'result' must be an object")
    kind = value.get("kind", "text")
    text = value.get("text", "")
    if not isinstance(kind, str) or not isinstance(text, str):
        raise RecordError("'result': 'kind' and 'text' must be strings")
    blob = value.get("blob") or {}
    if not isinstance(blob, dict):
        raise RecordError("'result.blob' must be an object")
    choices = value.get("choices", [])
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise RecordError("'result.choices' must be a list of strings")
    try:
        if kind == "fields":
            return Result.build("fields", fields=_fields(value.get("fields"), "result.fields"))
        if kind == "text":
            return Result.build("text", text=text)
        return Result.build(
            kind,
            number=_int(value.get("number")),
            unit=_opt_str(value.get("unit")),
            total=_int(value.get("total")),
            message=_opt_str(value.get("message")),
            choices=choices,
            sha256=_opt_str(blob.get("sha256")),
            size=_int(blob.get("bytes")),
            mime=_opt_str(blob.get("mime")),
            rest=_opt_str(value.get("rest")) or "",
        )
    except (ValueError, TypeError) as error:
        raise RecordError(f"'result': {error}") from None


def _int(value: Any) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise RecordError(f"{value!r} is not a whole number")


def _opt_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise RecordError(f"{value!r} is not a string")


# -- reading the terse style ---------------------------------------------------------------


def _terse_node(record: dict[str, Any], number: int) -> Event:
    """The node of a terse record, built from its values."""
    vocab = vocabulary()
    prefix = record.get("t")
    if not isinstance(prefix, str):
        raise RecordError('a terse record needs \'t\' (a prefix such as "u" or "t")')
    if prefix != "@" and prefix not in vocab.prefix_kinds:
        raise RecordError(f"unknown terse type 't': {prefix!r}")
    args: list[Any] = []
    fields: dict[str, Any] = {}
    value = record.get("a")
    if isinstance(value, dict):
        fields.update(_fields(value, "a"))
    elif isinstance(value, list):
        args.extend(_args(value))
    elif value is not None:
        args.append(_scalar(value, "a"))
    if record.get("q") is not None:
        args.insert(0, _scalar(record["q"], "q"))
    fields.update(_fields(record.get("f"), "f"))
    for key, item in record.items():  # other keys (`"title": …` in the spec's example)
        if key not in TERSE_KEYS:
            fields.setdefault(key, _field_value(item, key))
    result = _terse_result(record["r"]) if record.get("r") is not None else None
    try:
        if prefix == "@":
            primitive = _string(record, "n")
            return _placed(
                Lifecycle.build(primitive, args, fields=fields or None, result=result), number, "\n"
            )
        kind = vocab.prefix_kinds[prefix]
        if prefix in vocab.free_text_prefixes:
            text = _string(record, "c", "")
            node: Event = Message.build(kind, text, fields=fields or None, result=result)
            return _placed(node, number, "\n")
        if kind == "observation":
            return _placed(Observation.build(args, fields=fields or None, result=result), number, "\n")
        name = _terse_name(record, kind, args)
        return _placed(Call.build(kind, name, args, fields=fields or None, result=result), number, "\n")
    except (ValueError, TypeError) as error:
        raise RecordError(f"cannot build a {prefix}: line from its values: {error}") from None


def _terse_name(record: dict[str, Any], kind: str, args: list[Any]) -> str | None:
    if kind == "mcp" and record.get("s") is not None:
        server = _scalar(record["s"], "s")
        method = record.get("m")
        return f"{server}.{_scalar(method, 'm')}" if method is not None else server
    if kind == "mode" and record.get("v") is not None:
        return _scalar(record["v"], "v")
    name = record.get("n")
    if name is None and kind == "plan" and args and isinstance(args[0], str):
        return str(args.pop(0))  # the spec's `{"t":"p","a":"create",…}`: the action is the name
    return None if name is None else _scalar(name, "n")


def _terse_result(value: Any) -> Result:
    """``"ok"``, ``{"lines": 186}``, ``186``, ``{"err": "msg"}``, a map (fields) or text."""
    from bbox_lark.transform import read_result

    vocab = vocabulary()
    try:
        if isinstance(value, str):
            if value in vocab.start_statuses or value in vocab.final_statuses:
                return Result.build(value)
            return read_result(value.strip(), 1, 0)[0]
        if isinstance(value, int) and not isinstance(value, bool):
            return Result.build("count", number=value)
        if isinstance(value, dict):
            if len(value) == 1:
                ((key, item),) = value.items()
                if key in ("err", "error") and isinstance(item, str):
                    return Result.build("error", message=item)
                if isinstance(item, int) and not isinstance(item, bool):
                    return Result.build("count", number=item, unit=key)
            return Result.build("fields", fields=_fields(value, "r"))
    except ValueError as error:
        raise RecordError(f"'r': {error}") from None
    raise RecordError(f"'r' must be a string, a number or an object, not {json_type(value, article=True)}")


# -- the format ------------------------------------------------------------------------


def sniff(text: str) -> int:
    """10 when the first line is this module's header record (``{"record": "header",
    "bbox": "1", …}``), else 0: other JSON Lines files (Claude Code sessions, the terse
    style without its header) are never claimed."""
    first = text.removeprefix(BOM).lstrip(" \t\r\n").split("\n", 1)[0]
    if first.startswith(MARKER):
        return 10
    if not first.startswith("{"):
        return 0
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        return 0
    if isinstance(value, dict) and value.get("record") == "header" and value.get("bbox") == RECORD_VERSION:
        return 10
    return 0


_STYLE_HELP = (
    "jsonl: full (lossless, one record per line with its source) or terse (the spec's"
    " JSONL ALTERNATIVE: lossy, reports what it drops)."
)

EXPORT_MAPPING = (
    MappingRow("byte order mark", 'header record `"bom": true`'),
    MappingRow(
        "header lines (leading blanks, fences, YAML)", "header record `lines`: role, source, eol each"
    ),
    MappingRow("header keys and values", "header record `fields` (source text of each scalar)"),
    MappingRow("header faults (no closing fence …)", "header record `faults`"),
    MappingRow(
        "event line",
        "a record: `kind`, `prefix`, `name`, `text`, `fields`, `typed`, `args`, `arrow`,"
        " `result`, `metrics`, `source`, `eol`",
    ),
    MappingRow("fields after the arrow", "`result.fields`"),
    MappingRow("typed values (step, ts, attempt, latency_ms, level)", "`typed` (numbers, objects)"),
    MappingRow("comment, lifecycle, unknown line", "a record of that `kind`"),
    MappingRow("oversized line", '`"kind": "unknown", "oversized": true` and its `source`'),
    MappingRow("continuation line", '`"kind": "continuation"`, `owner`, `text`, `source`'),
    MappingRow("blank line", '`"kind": "blank"`, `source`'),
    MappingRow("line ending (LF, CRLF, none)", "`eol`"),
    MappingRow("invalid UTF-8 bytes", "lone surrogates, written as `\\udcXX` JSON escapes"),
    MappingRow("--style terse: comment, blank, continuation, unknown lines", "nothing", "dropped"),
    MappingRow("--style terse: metrics, source text, line endings", "nothing", "dropped"),
)

IMPORT_MAPPING = (
    MappingRow("record with `source`", "that line, byte for byte (values are not read)"),
    MappingRow("record without `source`", "a line built from its values (`Call.build` …)", "synthesized"),
    MappingRow("header record with `lines`", "those header lines, byte for byte"),
    MappingRow("header record with only `fields`", "a header written from them", "synthesized"),
    MappingRow("`typed` value without its field", "the field, written from the value", "synthesized"),
    MappingRow("terse record", "a line built from `t c n a f r s m v q`", "synthesized"),
    MappingRow("terse input without a header record", "`format`, `id`, `repo_sha: unknown`", "synthesized"),
    MappingRow("malformed JSON, a record of the wrong shape, an unknown kind", "skipped (exit 1)", "dropped"),
)

FORMAT = Format(
    name="jsonl",
    description="JSON Lines: a record per line, lossless (docs/formats/jsonl.md); --style terse: the spec's",
    extensions=(EXTENSION,),
    sniff=sniff,
    read=read,
    write=write,
    fidelity=(
        "lossless: byte for byte (every record carries its line's source); --style terse is the"
        " spec's JSONL ALTERNATIVE, lossy, and reports what it drops"
    ),
    lossless=True,
    options=(
        Option("style", _STYLE_HELP, default="full", choices=STYLES, applies="read"),
        Option("style", _STYLE_HELP, default="full", choices=STYLES, applies="write"),
        REPO_SHA,
    ),
    export_mapping=EXPORT_MAPPING,
    import_mapping=IMPORT_MAPPING,
    keeps_source=True,
)
