"""bbox/1 itself: reading is :func:`bbox_lark.parse`, writing is the lossless printer, so
``bbox → bbox`` gives back the input byte for byte (docs/reference.md#round-trip). A document read from
another format is written in canonical form (:func:`bbox_lark.syntax.printer.format_document`, what
``bbox-lark fmt`` writes): ``compact → bbox`` gives the usual spacing back, ``u: text`` and
``t:read a.rs → [3 lines]``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, TextIO

from bbox_lark.convert.base import Format, Input, MappingRow, Option, ReadContext, WriteContext, flatten
from bbox_lark.syntax.nodes import BlankLine, Comment, Event, Unknown
from bbox_lark.syntax.parser import Head
from bbox_lark.syntax.printer import emit_line, format_line
from bbox_lark.syntax.source import BOM, DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item

#: File name endings of bbox files (``.rlog`` is the format's later name).
EXTENSIONS = (".bbox", ".blackbox", ".rlog")
_SNIFF_LINES = 50


def sniff(text: str) -> int:
    """2 when the first non-blank line is a header fence, 1 when one of the first lines is
    an event or lifecycle line, else 0."""
    from bbox_lark.syntax.parser import parse_line
    from bbox_lark.syntax.scan import patterns

    seen = 0
    for raw in text.removeprefix(BOM).split("\n", 2_000)[:2_000]:
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        if seen == 0 and patterns().fence.fullmatch(line):
            return 2
        seen += 1
        if len(line) <= 10_000:
            node = parse_line(line)
            if isinstance(node, Event) and not isinstance(node, (Comment, Unknown)):
                return 1
        if seen >= _SNIFF_LINES:
            break
    return 0


def read(source: Input, ctx: ReadContext) -> Iterator[Item]:
    """The nodes of :func:`bbox_lark.iter_nodes` (continuations attached), checked on the
    way: the input's findings go to ``ctx.diagnostics``."""
    from bbox_lark.api import checker_for
    from bbox_lark.syntax.parser import iter_nodes

    stream = iter_nodes(source.lines(), max_line=ctx.max_line or DEFAULT_MAX_LINE)
    checker = (
        checker_for(source.path, None, None, None, allowed_secrets=ctx.allowed_secrets) if ctx.check else None
    )
    head = next(stream)
    if checker is not None:
        checker.start(head)  # type: ignore[arg-type]
    yield head
    faults = stream.faults
    for node in stream:
        if checker is not None:
            for fault in faults:
                checker.fault(fault)
            checker.node(node)  # type: ignore[arg-type]
        faults.clear()
        yield node
    if checker is not None:
        for fault in faults:
            checker.fault(fault)
        ctx.diagnostics.extend(checker.finish())


def write(items: Iterable[Item], out: TextIO, ctx: WriteContext) -> None:
    """Each node as written (its source); with ``canonical`` (the default for a document
    read from another format) in canonical form, as ``fmt`` writes it. A node built from
    values is printed from its values (:func:`~bbox_lark.emit`)."""
    canonical = ctx.options.get("canonical") or ctx.foreign
    kept = ctx.report.kept
    # From another format the reader's report says what each line came from.
    count = not ctx.foreign
    for item in flatten(items):
        if count and not isinstance(item, Head):
            kept(f"{item.kind} lines", item.line)
        if isinstance(item, Head):
            if item.bom:
                out.write(BOM)
            for line in item.header_lines:
                out.write(line.raw + line.eol)
            continue
        if isinstance(item, Event) and item.source is None:
            out.write(emit_line(item) + item.eol)
            continue
        if not canonical:
            out.write(item.raw + item.eol)
            continue
        if isinstance(item, BlankLine) and not item.eol:
            continue  # a whitespace-only last line without an ending is dropped, as fmt drops it
        out.write(format_line(item) + item.eol)


FORMAT = Format(
    name="bbox",
    description="bbox/1 as written (the lossless printer)",
    extensions=EXTENSIONS,
    sniff=sniff,
    read=read,
    write=write,
    fidelity="lossless: byte for byte; from another format, in canonical (fmt) form",
    lossless=True,
    export_mapping=(
        MappingRow("every line (header, events, comments, blank, unknown, continuations)", "as written"),
        MappingRow("a document read from another format", "canonical form, as `fmt` writes it"),
    ),
    import_mapping=(MappingRow("bbox/1 text", "its nodes (`bbox_lark.iter_nodes`), checked on the way"),),
    options=(
        Option("canonical", "bbox output: write canonical (fmt) form; the default from another format."),
    ),
)
