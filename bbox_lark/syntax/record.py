"""Records: what ``check`` reads of each body line, without building its node (issue
"Core v4", point 3).

:func:`iter_records` is :func:`bbox_lark.syntax.parser.iter_nodes` with ``attach=False`` yielding a
:class:`Record` a line instead of a node: the one anchored scan's spans
(:func:`bbox_lark.syntax.scan.line_scanner`) give the kind, the names, the arrow, the fields' and
metrics' values, the unclosed quotes and the result's kind, and the node is built from the
same spans only when a check asks for more (:meth:`Record.node`). Lines the scan declines go
through the parser and are read from their node (:meth:`Record.of`).
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Generator, Iterator, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, cast

from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import (
    BlankLine,
    Continuation,
    Event,
    Field,
    Head,
    Line,
    QuoteFault,
    Result,
    SourceFault,
    Unknown,
)
from bbox_lark.syntax.parser import GC_BATCH, HeadParts, parse_line, read_head
from bbox_lark.syntax.scan import LINE_SCAN_MAX, item_loop, line_scanner, patterns, typed_result, word_fields
from bbox_lark.syntax.shape import event_node
from bbox_lark.syntax.source import DEFAULT_MAX_LINE, LineReader, Source
from bbox_lark.syntax.values import parse_int, parse_timestamp


class Record:
    """What the checks read of one body line: its kind, number, text and ending, the head's
    names and columns, the arrow, the fields' and the metrics' values (dicts, the first
    occurrence of a key winning, as in a node), the unclosed quotes and the result's kind.
    ``check`` makes one a line from the one anchored scan's spans (:func:`record_line`) and
    makes no node; everything else a node holds (``field_nodes``, ``args``, ``metric_nodes``,
    ``result``, ``text``) is read from :meth:`node`, built from the same spans on first
    access and kept. A line the scan declines (comments, unknown lines), and a few shapes
    the record does not take itself (a spaced or quoted name, ``m:``, a blob pointer after the
    arrow), is made into its node first and the record read from it (:meth:`of`), so every
    attribute is the node's (``tests/test_records.py`` compares them on every line of the
    corpus, the external logs, the generated session and the fuzzer's inputs).

    Records are not values: a checker reads them once, in file order. ``owner`` (the line of
    a continuation's event) is set by the stream that yields them."""

    __slots__ = (
        "_head",
        "_lifecycle",
        "_metrics_start",
        "_node",
        "_result_end",
        "_result_start",
        "_text_end",
        "_text_start",
        "arrow",
        "arrow_col",
        "col",
        "eol",
        "fields",
        "kind",
        "line",
        "metrics",
        "name",
        "name_col",
        "oversized",
        "owner",
        "prefix",
        "quote_faults",
        "raw",
        "result_kind",
        "spaced_name",
    )

    kind: str
    line: int
    raw: str
    eol: str
    col: int
    prefix: str
    name: str | None
    name_col: int | None
    spaced_name: bool
    arrow: str | None
    arrow_col: int | None
    fields: Mapping[str, Any]
    metrics: Mapping[str, Any] | None
    quote_faults: tuple[QuoteFault, ...]
    #: The result's kind (``ok``, ``running``, ``text``, ...; ``Result.kind``), None without one.
    result_kind: str | None
    oversized: bool
    owner: int | None
    _node: Line | None
    _head: str
    _lifecycle: bool
    _text_start: int
    _text_end: int
    _result_start: int
    _result_end: int
    _metrics_start: int

    def __init__(self, kind: str, line: int, raw: str, eol: str) -> None:
        """A blank line's or a continuation's record (:meth:`of` and :func:`record_line`
        fill in an event's)."""
        self.kind = kind
        self.line = line
        self.raw = raw
        self.eol = eol
        self.col = 1
        self.prefix = ""
        self.name = None
        self.name_col = None
        self.spaced_name = False
        self.arrow = None
        self.arrow_col = None
        self.fields = _NO_FIELDS
        self.metrics = None
        self.quote_faults = ()
        self.result_kind = None
        self.oversized = False
        self.owner = None
        self._node = None
        self._head = ""
        self._lifecycle = False
        self._text_start = self._text_end = self._result_start = self._result_end = -1
        self._metrics_start = -1

    @staticmethod
    def of(node: Line) -> Record:
        """The record of a node (the node kept: :meth:`node` gives it back)."""
        if isinstance(node, Event):
            record = Record(node.kind, node.line, node.raw, node.eol)
            record.col = node.col
            record.prefix = node.prefix
            record.name = node.name
            record.name_col = node.name_col
            record.spaced_name = node.spaced_name
            record.arrow = node.arrow
            record.arrow_col = node.arrow_col
            record.fields = node.fields
            record.metrics = node.metrics
            record.quote_faults = node.quote_faults
            result = node.result
            record.result_kind = result.kind if result is not None else None
            record.oversized = node.oversized
        elif isinstance(node, Continuation):
            record = Record("continuation", node.line, node.raw, node.eol)
            record.owner = node.owner
        else:
            record = Record("blank", node.line, node.raw, node.eol)
        record._node = node
        return record

    def node(self) -> Line:
        """The line's node, as :func:`iter_nodes` gives it with ``attach=False`` (built from
        the scan's spans on the first call, then kept)."""
        node = self._node
        if node is None:
            kind = self.kind
            if kind == "continuation":
                node = Continuation(self.line, self.raw, self.eol, self.owner)
            elif kind == "blank":
                node = BlankLine(self.line, self.raw, self.eol)
            else:
                node = event_node(
                    kind,
                    self._lifecycle,
                    self._head,
                    self.raw,
                    self._text_start,
                    self._text_end,
                    self._result_start,
                    self._result_end,
                    self._metrics_start,
                    self.line,
                    self.eol,
                )
            self._node = node
        return node

    def event(self) -> Event:
        """:meth:`node` of an event's record (comments, lifecycle and unknown lines included)."""
        node = self.node()
        assert isinstance(node, Event)
        return node

    @property
    def is_event(self) -> bool:
        """True for an event, comment, lifecycle or unknown line (not a blank line or a
        continuation)."""
        return self.kind != "continuation" and self.kind != "blank"

    @property
    def source(self) -> str:
        return self.raw

    @property
    def text(self) -> str:
        """The call part (message, comment text), stripped: ``Event.text``."""
        if self._node is not None or self._head == "":
            node = self.node()
            return node.text if isinstance(node, Event) else ""
        start, end = self._text_start, self._text_end
        return self.raw[start:end].strip() if start >= 0 else ""

    @property
    def text_col(self) -> int:
        """``Event.text_col``."""
        if self._node is not None or self._head == "":
            node = self.node()
            return node.text_col if isinstance(node, Event) else 1
        start, end = self._text_start, self._text_end
        raw = self.raw
        if start < 0:
            return len(raw) + 1
        call = raw[start:end]
        stripped = call.lstrip()
        return start + 1 + len(call) - len(stripped) if stripped.rstrip() else len(raw) + 1

    # -- typed accessors: ``Event``'s (docs/reference.md#api-values), read from ``fields`` --------

    def _get(self, key: str) -> str | None:
        value = self.fields.get(key)
        return value if isinstance(value, str) else None

    @property
    def step(self) -> int | None:
        """``Event.step``: ``step=`` as a number, None when absent or malformed."""
        value = self.fields.get("step")
        return parse_int(value) if isinstance(value, str) else None

    @property
    def latency_ms(self) -> int | None:
        """``Event.latency_ms``."""
        value = self.fields.get("latency_ms")
        return parse_int(value) if isinstance(value, str) else None

    @property
    def ts(self) -> str | None:
        """``Event.ts``: a valid ``ts=`` value, else None."""
        value = self._get("ts")
        return value if value is not None and parse_timestamp(value) is not None else None

    @property
    def id(self) -> str | None:
        """``Event.id``."""
        return self._get("id")

    @property
    def span(self) -> str | None:
        """``Event.span``."""
        return self._get("span")

    @property
    def tid(self) -> str | None:
        """``Event.tid``."""
        return self._get("tid")

    @property
    def field_nodes(self) -> tuple[Field, ...]:
        return self.event().field_nodes if self.is_event else ()

    @property
    def metric_nodes(self) -> tuple[Field, ...]:
        return self.event().metric_nodes if self.is_event else ()

    @property
    def args(self) -> tuple[Any, ...]:
        return self.event().args if self.is_event else ()

    @property
    def result(self) -> Result | None:
        return self.event().result if self.is_event else None

    def __repr__(self) -> str:
        return f"Record({self.kind} line {self.line}: {self.raw[:40]!r})"


_NO_FIELDS: Mapping[str, Any] = MappingProxyType({})


def record_line(raw: str, line: int, eol: str) -> Record:
    """The record of one body line (``raw`` without its ending): from the one anchored scan
    when it takes the line, else from the line's node."""
    record = scanned_record(raw, line, eol)
    if record is not None:
        return record
    return Record.of(parse_line(raw, line, eol))


def scanned_record(raw: str, line: int, eol: str) -> Record | None:
    """The record of ``raw`` from the one anchored scan's spans, or None when the scan does
    not take the line or the record would need the node's own reading (:class:`Record`)."""
    if len(raw) > LINE_SCAN_MAX:
        return None
    scanner = _SCANNER or _scanner()
    match = scanner.match(raw)
    if match is None:
        return None
    # Every group's span at once (``Match.regs``), by the groups' numbers.
    spans = match.regs
    at = spans[scanner.call]
    if at[0] < 0:
        at = spans[scanner.free]
        if at[0] < 0:
            kind = "blank" if spans[scanner.blank][0] >= 0 else "continuation"
            return Record(kind, line, raw, eol)
    head = raw[at[0] : at[1]]
    text_start, text_end = spans[scanner.text]
    call = raw[text_start:text_end] if text_start >= 0 else ""
    lifecycle = head[0] == "@"
    if lifecycle:
        kind, prefix, name, name_col = "lifecycle", "@", head[1:], 2
        free = False
    else:
        prefix, _, name = head.partition(":")
        kind = scanner.kinds[prefix]
        if kind == "mode" or (name == "" and prefix in scanner.named and call.strip()):
            return None  # a mode word or a spaced name: the node reads them
        name_col = len(prefix) + 2
        free = prefix in scanner.free_text
    fields: dict[str, Any] = {}
    faults: list[QuoteFault] = []
    if "=" in call or (not free and ('"' in call or "[" in call)):
        if '"' in call or "[" in call:
            faults = item_loop(call, text_start + 1, False, free, False, fields)[2]
        else:
            word_fields(call, fields)
    result_start, result_end = spans[scanner.result]
    arrow: str | None = None
    arrow_col: int | None = None
    result_kind: str | None = None
    if result_start >= 0:
        arrow = "→" if raw[result_start] == "→" else "->"
        arrow_col = result_start + 1
        after = result_start + len(arrow)
        result_kind = _record_result(raw[after:result_end], arrow_col + len(arrow), line, fields, faults)
        if result_kind is None:
            return None  # a blob pointer: its attributes are not fields (the node reads them)
    metrics: dict[str, Any] | None = None
    metrics_start = spans[scanner.metrics][0]
    if metrics_start >= 0:
        metrics = {}
        offset = raw.index("metrics", metrics_start) + len("metrics")
        tail = raw[offset:]
        if '"' in tail or "[" in tail:
            item_loop(tail, offset + 1, False, True, False, metrics)
        else:
            word_fields(tail, metrics)
    record = Record(kind, line, raw, eol)
    record.prefix = prefix
    if name or lifecycle:
        record.name = name
        record.name_col = name_col
    record.arrow = arrow
    record.arrow_col = arrow_col
    if fields:
        record.fields = _tupled(fields) if "[" in raw else fields
    record.metrics = _tupled(metrics) if metrics and "[" in raw else metrics
    if faults:
        record.quote_faults = tuple(faults)
    record.result_kind = result_kind
    record._head = head
    record._lifecycle = lifecycle
    record._text_start = text_start
    record._text_end = text_end
    record._result_start = result_start
    record._result_end = result_end
    record._metrics_start = metrics_start
    return record


def _record_result(
    raw: str, col: int, line: int, fields: dict[str, Any], faults: list[QuoteFault]
) -> str | None:
    """The kind of the result ``raw`` (the text after the arrow, at column ``col``), its
    fields added to ``fields`` (a key not there yet) and its unclosed quotes to ``faults``:
    what :func:`bbox_lark.syntax.shape.read_result_into` gives, without the :class:`Result`. None for
    a blob pointer."""
    pats = patterns()
    match = pats.result_head.match(raw)
    if "=" in raw:
        text, at = raw, col
        if match is not None:
            head = match[match.lastgroup or 0]
            if head[0] == "[" and '"' not in head and "[" not in head[1:]:
                end = match.end()
                text, at = raw[end:], col + end
        if '"' in text or "[" in text:
            faults.extend(item_loop(text, at, True, True, False, fields)[2])
        else:
            word_fields(text, fields)
    if match is not None:
        kind = pats.head_kinds[match.lastgroup or ""]
        return None if kind == "blob" else kind
    if not raw.strip():
        return "empty"
    if fields and "=" in raw:
        return typed_result(raw, col, line, fields, None).kind  # "fields" or "text"
    return "text"


def _tupled(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with each list value a tuple, as a node holds them (the item loop writes a
    ``[a, b]`` value as a list)."""
    for key, value in values.items():
        if type(value) is list:
            values[key] = tuple(value)
    return values


class _Scanner:
    """The one scan (:func:`bbox_lark.syntax.scan.line_scanner`) as :func:`scanned_record` reads it:
    its ``match``, the numbers of its groups and the vocabulary's prefix tables."""

    __slots__ = ("blank", "call", "free", "free_text", "kinds", "match", "metrics", "named", "result", "text")

    def __init__(self) -> None:
        pattern = line_scanner()
        self.match = pattern.match
        groups = pattern.groupindex
        self.blank = groups["blank"]
        self.call = groups["call"]
        self.free = groups["free"]
        self.text = groups["text"]
        self.result = groups["result"]
        self.metrics = groups["metrics"]
        vocab = vocabulary()
        self.kinds: dict[str, str] = vocab.prefix_kinds
        self.named: frozenset[str] = vocab.named_prefixes
        self.free_text: frozenset[str] = vocab.free_text_prefixes


_SCANNER: _Scanner | None = None


def _scanner() -> _Scanner:
    global _SCANNER
    _SCANNER = _Scanner()
    return _SCANNER


def iter_records(
    source: Source,
    *,
    max_line: int = DEFAULT_MAX_LINE,
    first_line: int = 1,
    header: bool = True,
) -> RecordStream:
    """:func:`iter_nodes` with ``attach=False``, yielding each body line's :class:`Record`
    instead of its node (the :class:`Head` first, as there): what ``check`` reads. A
    continuation's record has its ``owner``; the byte-level faults are in ``faults``."""
    return RecordStream(source, max_line=max_line, first_line=first_line, header=header)


class RecordStream(Iterator[Head | Record]):
    """The iterator :func:`iter_records` returns: :class:`NodeStream`'s, with records."""

    def __init__(
        self, source: Source, *, max_line: int = DEFAULT_MAX_LINE, first_line: int = 1, header: bool = True
    ) -> None:
        self._reader = LineReader(max_line, first_line)
        self.faults: list[SourceFault] = self._reader.faults
        self.head: Head | None = None
        self._header = header
        self._records = self._generate(source)

    def __iter__(self) -> RecordStream:
        return self

    def __next__(self) -> Head | Record:
        return next(self._records)

    def close(self) -> None:
        self._records.close()

    @property
    def lines_read(self) -> int:
        return self._reader.lines_read

    def _generate(self, source: Source) -> Generator[Head | Record, None, None]:
        lines = self._reader.lines(source)
        if self._header:
            buffered, head = read_head(lines)
        else:
            buffered, head = [], HeadParts((), None, self._reader.first_line)
        self.head = Head(self._reader.bom, head.header_lines, head.header_info, head.body_start)
        yield self.head
        yield from _record_body(buffered, lines, head.body_start)


def _record_body(
    buffered: list[tuple[str, str, bool]], rest: Iterator[tuple[str, str, bool]], number: int
) -> Iterator[Record]:
    """:func:`_parse_body` and :func:`_own` for records: each line's record as it comes, a
    continuation's with the line of the event before it, the cyclic garbage collector paused
    as there."""
    enabled = gc.isenabled()
    gc.disable()
    owner: int | None = None
    try:
        countdown = GC_BATCH
        for raw, eol, oversized in itertools.chain(buffered, rest):
            if oversized:
                record = Record.of(Unknown("unknown", number, raw, eol, oversized=True))
            else:
                record = scanned_record(raw, number, eol) or Record.of(parse_line(raw, number, eol))
            kind = record.kind
            if kind == "continuation":
                if owner is not None:
                    record.owner = owner
                    if record._node is not None:
                        record._node = replace(cast(Continuation, record._node), owner=owner)
            elif kind != "blank":
                owner = number
            yield record
            number += 1
            countdown -= 1
            if not countdown:
                countdown = GC_BATCH
                if enabled:
                    gc.collect(0)
    finally:
        if enabled:
            gc.enable()
