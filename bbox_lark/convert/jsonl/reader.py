"""JSON Lines → bbox: the header record, then a node per record as it is read (its source text
when it has one, else built from its values)."""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bbox_lark.convert.base import (
    Input,
    ReadContext,
    RefusedInputError,
    importer_header,
    json_type,
)
from bbox_lark.convert.jsonl.nodes import build_record, terse_node
from bbox_lark.convert.jsonl.tables import EOLS, RECORD_VERSION, STYLES, RecordError
from bbox_lark.convert.jsonl.writer import category
from bbox_lark.syntax import build
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Unknown
from bbox_lark.syntax.source import BOM, DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item
    from bbox_lark.syntax.nodes import Line
    from bbox_lark.syntax.parser import Head

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
        # The first start is the body's first line (``body_start``): ``at`` is never -1.
        at = bisect_right(self.starts, line) - 1
        return self.lines[at] + line - self.starts[at], 0


def read(source: Input, ctx: ReadContext) -> Iterator[Item]:
    """The document the records stand for: a head, then a node per body record (its
    continuation lines attached to their event, as :func:`bbox_lark.iter_nodes` does),
    checked on the way when ``ctx.check``."""
    from bbox_lark.api import checker_for
    from bbox_lark.syntax.parser import iter_attached

    records = _records(source, ctx)
    first = next(records, None)
    head, style, header_line, leftover = _read_head(first, ctx)
    origin = _Origin(header_line, head.body_start)
    ctx.report.origin = origin
    checker = (
        checker_for(source.path, None, None, None, allowed_secrets=ctx.allowed_secrets) if ctx.check else None
    )
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
    from bbox_lark.syntax.parser import Head

    return Head(False, (), None, 1)


def _head_from_record(record: dict[str, Any], number: int, ctx: ReadContext) -> Head:
    from bbox_lark.syntax.parser import Head, iter_nodes

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
            return build.head(fields, bom=bom)
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
    # A line that is not the header's is one of the body's: the header holds fewer lines.
    head = next(iter_nodes(texts, max_line=ctx.max_line or DEFAULT_MAX_LINE))
    if not isinstance(head, Head) or len(head.header_lines) != len(texts):
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
                node: Line = terse_node(record, number)
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
    from bbox_lark.syntax.parser import parse_line

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
