"""The public functions behind ``bbox_lark``'s facade."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from bbox_lark.ast import Diagnostic, Document
from bbox_lark.checks import run_checks
from bbox_lark.parser import parse_document
from bbox_lark.source import DEFAULT_MAX_LINE


def parse(
    text: str | bytes,
    *,
    path: str | Path | None = None,
    blobs: str | Path | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
) -> Document:
    """Parse a bbox/1 document. Never raises on bad input: the returned document carries
    its diagnostics in ``Document.diagnostics``.

    ``text`` may be bytes (decoded as UTF-8 with ``surrogateescape``, so invalid bytes are
    reported and still print back). ``path`` locates the ``.bbox-blobs/`` folder beside the
    file; ``blobs`` names a blob folder explicitly and turns blob checking on.
    """
    document = parse_document(text, max_line=max_line)
    found = run_checks(
        document,
        path=Path(path) if path is not None else None,
        blobs=Path(blobs) if blobs is not None else None,
        select=select,
        ignore=ignore,
    )
    return replace(document, diagnostics=tuple(found))


def check(
    text: str | bytes,
    *,
    path: str | Path | None = None,
    blobs: str | Path | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
) -> list[Diagnostic]:
    """Every diagnostic for a bbox/1 document, sorted by line, column and code."""
    return list(
        parse(text, path=path, blobs=blobs, max_line=max_line, select=select, ignore=ignore).diagnostics
    )
