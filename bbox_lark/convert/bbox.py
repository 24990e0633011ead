"""bbox/1 itself: reading is :func:`bbox_lark.parse`, writing is the lossless printer, so
``bbox → bbox`` gives back the input byte for byte (DECISIONS §7). A document read from
another format is written in canonical form (:func:`bbox_lark.printer.format_document`, what
``bbox-lark fmt`` writes): ``compact → bbox`` gives the usual spacing back, ``u: text`` and
``t:read a.rs → [3 lines]``."""

from __future__ import annotations

from pathlib import Path

from bbox_lark.api import parse
from bbox_lark.ast import Document, Event
from bbox_lark.convert.base import Format, Report
from bbox_lark.printer import dumps, format_document
from bbox_lark.source import BOM, DEFAULT_MAX_LINE

#: File name endings of bbox files (``.rlog`` is the format's later name).
EXTENSIONS = (".bbox", ".blackbox", ".rlog")
_SNIFF_LINES = 50


def sniff(text: str) -> int:
    """2 when the first non-blank line is a header fence, 1 when one of the first lines is
    an event or lifecycle line, else 0."""
    from bbox_lark.parser import parse_line
    from bbox_lark.scan import patterns

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
            if isinstance(node, Event) and node.kind not in ("comment", "unknown"):
                return 1
        if seen >= _SNIFF_LINES:
            break
    return 0


def read(
    text: str, *, report: Report, max_line: int = DEFAULT_MAX_LINE, path: str | Path | None = None
) -> Document:
    return parse(text, path=path, max_line=max_line)


def write(document: Document, *, report: Report, canonical: bool = False) -> str:
    return format_document(document) if canonical else dumps(document)


FORMAT = Format(
    name="bbox",
    description="bbox/1 as written (the lossless printer)",
    extensions=EXTENSIONS,
    sniff=sniff,
    read=read,
    write=write,
    fidelity="lossless: byte for byte; from another format, in canonical (fmt) form",
    lossless=True,
    write_options=frozenset({"canonical"}),
    foreign_options={"canonical": True},
)
