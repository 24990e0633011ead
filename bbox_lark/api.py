"""The public functions behind ``bbox_lark``'s facade.

Everything is built on :func:`bbox_lark.syntax.parser.iter_nodes`: :func:`parse` collects the
nodes it yields; :func:`check` and :func:`iter_check` read
:func:`bbox_lark.syntax.record.iter_records` (the values the checks read, no node built unless
a check asks for one).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, cast

from bbox_lark._classes import dataclass
from bbox_lark._renamed import renamed
from bbox_lark.checks import Checker
from bbox_lark.syntax.nodes import Diagnostic, Document, Event, Line
from bbox_lark.syntax.parser import Head, NodeStream, iter_nodes
from bbox_lark.syntax.printer import format_document
from bbox_lark.syntax.record import Record, RecordStream, iter_records
from bbox_lark.syntax.source import DEFAULT_MAX_LINE, Source, decode


def checker_for(
    path: str | Path | None,
    blobs: str | Path | None,
    select: Iterable[str] | None,
    ignore: Iterable[str] | None,
    stream: bool = False,
    allowed_secrets: Iterable[str] = (),
) -> Checker:
    return Checker(
        path=Path(path) if path is not None else None,
        blobs=Path(blobs) if blobs is not None else None,
        select=select,
        ignore=ignore,
        stream=stream,
        allowed_secrets=allowed_secrets,
    )


@renamed(text="source")
def parse(
    source: Source,
    *,
    path: str | Path | None = None,
    blobs: str | Path | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    allowed_secrets: Iterable[str] = (),
) -> Document:
    """Parse a bbox/1 document. Never raises on bad input: the returned document carries
    its diagnostics in ``Document.diagnostics``.

    ``source`` may be bytes (decoded as UTF-8 with ``surrogateescape``, so invalid bytes are
    reported and still print back), or anything :func:`~bbox_lark.iter_nodes` reads (a file
    object, an iterable of lines). ``path`` locates the ``.bbox-blobs/`` folder beside the
    file; ``blobs`` names a blob folder explicitly and turns blob checking on.
    ``allowed_secrets`` (the ``allowed-secrets`` setting) are values the ``S`` checks keep quiet on.
    """
    checker = checker_for(path, blobs, select, ignore, allowed_secrets=allowed_secrets)
    stream = iter_nodes(source, max_line=max_line)
    nodes: list[Line] = []
    found = list(run(checker, stream, nodes))
    head = stream.head
    assert head is not None
    return Document(
        bom=head.bom,
        header_lines=head.header_lines,
        header_info=head.header_info,
        lines=tuple(nodes),
        source_faults=tuple(stream.faults),
        diagnostics=tuple(found),
    )


def build_document(header: dict[str, Any] | None, lines: Iterable[Line], *, bom: bool = False) -> Document:
    """A document from values: a header (keys in order; None for no header) and body nodes
    built with ``build.message``, ``build.call`` … (their continuation lines included).
    ``dumps`` prints it in canonical form; ``parse(dumps(doc))`` reads the same values back.
    Each event's continuation lines come from its ``continuation``; line numbers are given
    in order, from the first body line."""
    from dataclasses import replace as _replace

    from bbox_lark.syntax import build

    head = build.head(header, bom=bom) if header is not None else Head(bom, (), None, 1)
    body: list[Line] = []
    number = head.body_start
    for node in lines:
        if isinstance(node, Event):
            owner = number
            continuation = tuple(
                _replace(c, line=owner + n, owner=owner) for n, c in enumerate(node.continuation, 1)
            )
            body.append(_replace(node, line=owner, continuation=continuation))
            body.extend(continuation)
            number += 1 + len(continuation)
        else:
            body.append(_replace(node, line=number))
            number += 1
    return Document(bom, head.header_lines, head.header_info, tuple(body))


class Keeper(Protocol):
    """What :func:`run` hands every node to: a list, or a reader that appends (the export's
    rows, :mod:`bbox_lark.numbers.tables`)."""

    def append(self, node: Line, /) -> None: ...


class RecordKeeper(Protocol):
    """What :func:`run` hands every record to, with a stream of records (``stats`` counts
    them: :class:`bbox_lark.numbers.stats.StatsCounter`), once the checker has read it."""

    def append(self, record: Record, /) -> None: ...


def run(
    checker: Checker, stream: NodeStream | RecordStream, keep: Keeper | RecordKeeper | None = None
) -> Iterator[Diagnostic]:
    """Feed ``stream`` to ``checker``; yield its findings: all at the end, sorted, or with
    ``checker.stream`` as soon as they are known. ``stream`` yields records
    (:func:`~bbox_lark.syntax.record.iter_records`: ``check`` builds no node) or nodes (each then read
    through its record); ``keep`` (when given) receives every node, or every record after
    the checker (a :class:`RecordKeeper`), and the stream's ``faults`` are then left in place."""
    head = next(stream)
    assert isinstance(head, Head)
    checker.start(head)
    streaming = checker.stream
    if streaming:
        yield from checker.take()
    faults = stream.faults
    given = 0
    for node in stream:
        if len(faults) > given:
            for fault in faults[given:]:
                checker.fault(fault)
            if keep is None:
                faults.clear()
            else:
                given = len(faults)
        if type(node) is Record:
            checker.record(node)
            if keep is not None:
                cast(RecordKeeper, keep).append(node)
        else:
            if keep is not None:
                cast(Keeper, keep).append(cast(Line, node))
            checker.record(Record.of(cast(Line, node)))
        if streaming:
            found = checker.take()
            if found:
                yield from found
    for fault in faults[given:]:
        checker.fault(fault)
    yield from checker.finish()


def iter_check(
    source: Source,
    *,
    path: str | Path | None = None,
    blobs: str | Path | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    allowed_secrets: Iterable[str] = (),
) -> Iterator[Diagnostic]:
    """Check a document as it is read, yielding each finding as soon as it is known: a
    line's findings once that line has arrived (in column and code order), then at the end
    what only the whole file shows (a call never completed, ``@start`` without ``@end``,
    counts, unused suppressions). An ``ignore-file[...]`` suppression applies from its
    own line on. Nothing proportional to the document is kept but the findings' state
    (see :class:`~bbox_lark.checks.Rule`). The options are :func:`parse`'s."""
    checker = checker_for(path, blobs, select, ignore, stream=True, allowed_secrets=allowed_secrets)
    return run(checker, iter_records(source, max_line=max_line))


@renamed(text="source")
def check(
    source: Source,
    *,
    path: str | Path | None = None,
    blobs: str | Path | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    allowed_secrets: Iterable[str] = (),
) -> list[Diagnostic]:
    """Every diagnostic for a bbox/1 document, sorted by line, column and code. The
    document is read as a stream (``source`` may be a file object or an iterable of lines)
    and no node is built unless a check asks for one. The options are :func:`parse`'s:
    ``check(x)`` gives ``parse(x).diagnostics``."""
    checker = checker_for(path, blobs, select, ignore, allowed_secrets=allowed_secrets)
    return list(run(checker, iter_records(source, max_line=max_line)))


@dataclass(frozen=True, slots=True)
class Formatted:
    """One text before and after :func:`format_document`, with the input's diagnostics."""

    #: The input, parsed and checked.
    document: Document
    old: str
    new: str

    @property
    def changed(self) -> bool:
        return self.old != self.new

    @property
    def errors(self) -> list[Diagnostic]:
        """The input's error diagnostics (``fmt`` does not rewrite a file that has any,
        unless forced)."""
        return [d for d in self.document.diagnostics if d.severity == "error"]


def format_text(
    data: str | bytes, *, path: str | Path | None = None, max_line: int = DEFAULT_MAX_LINE
) -> Formatted:
    """Parse and check ``data`` (``path`` locates its blob folder) and format it."""
    document = parse(data, path=path, max_line=max_line)
    return Formatted(document, decode(data), format_document(document))
