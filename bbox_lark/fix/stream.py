"""``fix`` and ``redact`` as a stream: a file is read line by line, checked and fixed in the one
pass of :func:`bbox_lark.api.run`, and its fixed body spooled (:class:`Body`) until the write
policy has seen every finding (docs/design.md, "Memory per command").

What is held: the line being read, the event being fixed with the continuation and blank
lines after it (the part the secrets are found in, :func:`bbox_lark.secrets.redaction.text_parts`),
the header, each fixer's survey (``renumber-steps``: the distinct step values, from a first
pass), the findings and notes, and the place of every comment that states ``# redactions=N``
(its value is set when the count is known, as the body is copied out). The fixers are those
of :class:`~bbox_lark.fix.framework.LineFixer` and ``redact``; :func:`apply_fixes` runs every
document through here too, so the library and the command write the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import IO

from bbox_lark._classes import dataclass
from bbox_lark.fix.framework import (
    Edit,
    Fixer,
    FixError,
    FixOutcome,
    LineFixer,
    Note,
    check_kind_kept,
    resolved_findings,
    splice,
)
from bbox_lark.syntax.nodes import Continuation, Diagnostic, Event, Line
from bbox_lark.syntax.parser import Head, NodeStream, iter_nodes, reparse
from bbox_lark.syntax.source import BOM, DEFAULT_MAX_LINE, Source, encode

#: Opens the input once more (a context, so a file is closed after each pass).
Opener = Callable[[], AbstractContextManager[Source]]


def streams(fixers: Iterable[Fixer]) -> bool:
    """Whether every one of ``fixers`` can run as a stream (a line fixer, or ``redact``)."""
    from bbox_lark.fix.redact import Redact

    return all(isinstance(fixer, (LineFixer, Redact)) for fixer in fixers)


class Body:
    """Where the fixed body goes until it is written: text (:meth:`text`) or, with a
    ``spool``, its bytes; a patch replaces a stated count once the count is known."""

    #: Parts gathered before one write to the spool.
    BATCH = 512
    #: A text this long is written on its own (not copied into a batch).
    LONG = 1 << 16

    def __init__(self, spool: IO[bytes] | None = None) -> None:
        self._spool = spool
        self._parts: list[str] = []
        self._size = 0  # in the spool's units: bytes (spool) or code points (text)
        self.empty = True

    def write(self, text: str) -> None:
        if not text:
            return
        self.empty = False
        if self._spool is not None and len(text) >= self.LONG:  # a long line: no copy joined
            self._flush()
            data = encode(text)
            self._spool.write(data)
            self._size += len(data)
            return
        self._parts.append(text)
        if self._spool is not None and len(self._parts) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._spool is not None and self._parts:
            data = encode("".join(self._parts))
            self._spool.write(data)
            self._size += len(data)
            self._parts.clear()

    def _measure(self, text: str) -> int:
        return len(encode(text)) if self._spool is not None else len(text)

    def here(self, prefix: str) -> int:
        """Where the body is after ``prefix`` is written next (the start of a patch)."""
        if self._spool is not None:
            self._flush()
            return self._size + self._measure(prefix)
        return sum(map(len, self._parts)) + len(prefix)

    def text(self, patches: list[tuple[int, str, str]]) -> str:
        """The body as text, each patch ``(at, old, new)`` applied (a text body only)."""
        body = "".join(self._parts)
        for at, old, new in reversed(patches):
            body = body[:at] + new + body[at + len(old) :]
        return body

    def copy(self, out: IO[bytes], patches: list[tuple[int, str, str]]) -> None:
        """Copy the spooled body to ``out``, each patch applied (a spooled body only)."""
        assert self._spool is not None
        self._flush()
        spool = self._spool
        spool.seek(0)
        at = 0
        for start, old, new in patches:
            _copy(spool, out, start - at)
            out.write(encode(new))
            size = len(encode(old))
            spool.seek(size, io.SEEK_CUR)
            at = start + size
        _copy(spool, out, -1)


def _copy(source: IO[bytes], out: IO[bytes], size: int) -> None:
    """Copy ``size`` bytes (all that is left when negative) from ``source`` to ``out``."""
    while size != 0:
        chunk = source.read(1 << 20 if size < 0 else min(size, 1 << 20))
        if not chunk:
            return
        out.write(chunk)
        if size > 0:
            size -= len(chunk)


class FixSink:
    """The keeper :func:`bbox_lark.api.run` hands each node to for ``fix``: each event's line
    edited by the line fixers, each part redacted (``redact``), the result written to
    ``body``, the counts and notes kept. :meth:`close` once the stream has ended."""

    def __init__(
        self,
        stream: NodeStream,
        fixers: list[Fixer],
        surveys: dict[str, object],
        body: Body,
        *,
        allowed: frozenset[str],
        max_line: int,
        keep: list[Line] | None = None,
    ) -> None:
        from bbox_lark.fix.redact import Redact
        from bbox_lark.secrets.redaction import PartRedactor

        self._stream = stream
        self._line_fixers = [fixer for fixer in fixers if isinstance(fixer, LineFixer)]
        self._surveys = surveys
        redact = next((fixer for fixer in fixers if isinstance(fixer, Redact)), None)
        self._redact_name = redact.name if redact is not None else ""
        self._redactor = PartRedactor(allowed) if redact is not None else None
        self._body = body
        self._max_line = max_line
        self._keep = keep
        self._group: list[Line] = []
        self._started = False
        self.changes = {fixer.name: 0 for fixer in fixers}
        self.notes: list[Note] = []
        self.changed = False
        self.header = ""
        #: Secrets were replaced somewhere (the stated counts are then set).
        self.redacted = False
        self._markers = 0
        self._patches: list[tuple[int, str]] = []  # where a stated count's value starts, its text
        self._first = ""  # the output's first line, for the line ending of an inserted count

    def _start(self) -> None:
        from bbox_lark.secrets.redaction import TextPart

        self._started = True
        head = self._stream.head
        assert head is not None
        text = (BOM if head.bom else "") + "".join(line.raw + line.eol for line in head.header_lines)
        self.header = self._first = text
        if self._redactor is not None:
            self.header = self._first = self._redacted(TextPart(text, 1, True))

    def append(self, node: Line, /) -> None:
        if not self._started:
            self._start()
        if self._keep is not None:
            self._keep.append(node)
        if isinstance(node, Event):
            if self._group:
                self._flush()
            if self._line_fixers:
                node = self._edit(node)
        self._group.append(node)

    def close(self) -> None:
        if not self._started:
            self._start()
        if self._group:
            self._flush()

    def _edit(self, event: Event) -> Event:
        edits: list[Edit] = []
        for fixer in self._line_fixers:
            result = fixer.edit(event, self._surveys.get(fixer.name))
            if result.edits:
                edits.extend(result.edits)
            if result.changed:
                self.changes[fixer.name] += result.changed
            if result.notes:
                self.notes.extend(replace(note, fixer=note.fixer or fixer.name) for note in result.notes)
        if not edits:
            return event
        for edit in edits:
            if edit.line != event.line:
                raise FixError(f"line {edit.line}: a line fixer edits only the line it is given")
        text = splice(event.raw, event.line, edits)
        try:
            edited = reparse(event, text)
        except ValueError as error:  # no longer an event, comment or lifecycle line
            raise FixError(f"line {event.line}: the edits would change what kind of line it is") from error
        check_kind_kept(event, edited)
        if edited.raw != event.raw:
            self.changed = True
        return edited

    def _flush(self) -> None:
        from bbox_lark.secrets.redaction import TextPart

        group, self._group = self._group, []
        if self._redactor is None:
            for line in group:  # each piece as it is: a long line is not copied to be joined
                self._body.write(line.raw)
                self._body.write(line.eol)
            return
        text = "".join(line.raw + line.eol for line in group)
        new = self._redacted(TextPart(text, group[0].line), group)  # written there
        if "\n" not in self._first:
            self._first += new

    def _redacted(self, part: object, group: list[Line] | None = None) -> str:
        """``part`` (a :class:`~bbox_lark.secrets.redaction.TextPart`) redacted: its secrets
        noted and counted, its markers counted, its text written (a body part)."""
        from bbox_lark.secrets.redaction import TextPart, locate

        assert isinstance(part, TextPart) and self._redactor is not None
        new, found = self._redactor.part(part)
        for line, col, secret in locate(part.text, found):
            note = f"redacted {secret.kind} {secret.masked}"
            self.notes.append(Note(part.line + line - 1, col, note, self._redact_name))
        if found:
            self.changes[self._redact_name] += len(found)
            self.redacted = self.changed = True
        if part.header:
            return new
        assert group is not None
        lines = group if not found else self._reread(new, part.line, group)
        self._count(new, lines)
        return new

    def _reread(self, text: str, first: int, group: list[Line]) -> list[Line]:
        """The nodes of a redacted part (each line once); a line must keep its kind."""
        from bbox_lark.secrets import redaction

        stream = iter_nodes(text, max_line=self._max_line, attach=False, first_line=first, header=False)
        next(stream)
        lines = [node for node in stream if not isinstance(node, Head)]
        if redaction.part_kinds(lines) != redaction.part_kinds(group):
            raise FixError("redacting would change what kind of line one is")
        return lines

    def _count(self, text: str, lines: list[Line]) -> None:
        """Count ``lines``' markers, note where a stated count is, and write ``text``."""
        from bbox_lark.secrets.redaction import states_count
        from bbox_lark.syntax.scan import line_redactions

        at = 0
        for node in lines:
            if isinstance(node, (Event, Continuation)) and "[redacted:" in node.raw:
                self._markers += sum(1 for _ in line_redactions(node))
            if isinstance(node, Event) and "redactions" in node.raw:
                field = states_count(node)
                if field is not None:
                    start = at + field.value_col - 1
                    self._patches.append((self._body.here(text[:start]), field.raw_value))
            at += len(node.raw) + len(node.eol)
        self._body.write(text)

    def _count_line(self) -> tuple[str, list[tuple[int, str, str]]]:
        """What goes before the body (the header, and a ``# redactions=N`` line when no
        comment states the count) and the patches of the stated counts."""
        if not self.redacted:
            return self.header, []
        count = str(self._markers)
        if self._patches:
            return self.header, [(at, old, count) for at, old in self._patches]
        first = self._first[: self._first.find("\n") + 1]
        eol = "\r\n" if "\r\n" in first else "\n"
        line = f"# redactions={count}{eol}"
        if self._body.empty and self.header and not self.header.endswith("\n"):
            return f"{self.header}{eol}{line}", []
        return self.header + line, []

    def text(self) -> str:
        """The fixed text (a text body)."""
        head, patches = self._count_line()
        return head + self._body.text(patches)

    def write(self, out: IO[bytes]) -> None:
        """Write the fixed file's bytes to ``out`` (a spooled body)."""
        head, patches = self._count_line()
        out.write(encode(head))
        self._body.copy(out, patches)


@dataclass(frozen=True, slots=True)
class Streamed:
    """What the fixers found and did, without the texts (what ``fix`` shows of a file, and
    what a worker process hands back): :func:`fix_stream`'s result, or :meth:`of` a whole
    :class:`~bbox_lark.fix.framework.FixOutcome`."""

    #: The input's findings (``check``'s).
    diagnostics: tuple[Diagnostic, ...]
    #: Each fixer's name mapped to how many things it changed, in the order the fixers ran.
    changes: dict[str, int]
    #: Sorted by position.
    notes: tuple[Note, ...]
    #: The findings the fixers repaired.
    resolved: tuple[Diagnostic, ...]
    #: The fixed file differs from the input.
    changed: bool
    #: The unified diff (a dry run's; none is made from a stream).
    diff: str = ""

    @classmethod
    def of(cls, outcome: FixOutcome) -> Streamed:
        """``outcome`` without its document and texts."""
        return cls(
            outcome.diagnostics,
            outcome.changes,
            outcome.notes,
            outcome.resolved,
            outcome.changed,
            outcome.diff,
        )

    @property
    def outstanding(self) -> tuple[Diagnostic, ...]:
        if not self.resolved:
            return self.diagnostics
        fixed = set(map(id, self.resolved))
        return tuple(d for d in self.diagnostics if id(d) not in fixed)


def fix_stream(
    opener: Opener,
    fixers: Iterable[Fixer],
    body: Body,
    *,
    path: str | Path | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    allowed_secrets: Iterable[str] = (),
    keep: list[Line] | None = None,
) -> tuple[Streamed, FixSink, NodeStream]:
    """Run ``fixers`` (:func:`streams` must hold) over the input ``opener`` opens, checked as
    it is read, the fixed body going to ``body``; a fixer that surveys gets a first pass.
    ``keep`` receives every node read (the document, for :func:`apply_fixes`). Gives what
    was done, the sink that writes the fixed file (:meth:`FixSink.write`, :meth:`FixSink.text`)
    and the stream read (its head and faults). Raises
    :class:`FixError` on a fixer bug, and what reading raises (``OSError``)."""
    from bbox_lark.api import checker_for, run

    chosen = list(fixers)
    allowed = frozenset(allowed_secrets)
    surveys: dict[str, object] = {}
    surveying = [f for f in chosen if isinstance(f, LineFixer) and f.surveys]
    for fixer in surveying:  # a pass each: a survey is small, the input may be large
        with opener() as source:
            surveys[fixer.name] = fixer.survey(_events(iter_nodes(source, max_line=max_line, attach=False)))
    with opener() as source:
        stream = iter_nodes(source, max_line=max_line)
        sink = FixSink(stream, chosen, surveys, body, allowed=allowed, max_line=max_line, keep=keep)
        checker = checker_for(path, None, None, None, allowed_secrets=allowed)
        diagnostics = tuple(run(checker, stream, sink))
        sink.close()
    notes = sorted(sink.notes, key=lambda n: (n.line, n.col))
    done = Streamed(
        diagnostics=diagnostics,
        changes=sink.changes,
        notes=tuple(notes),
        resolved=resolved_findings(diagnostics, chosen, notes),
        changed=sink.changed,
    )
    return done, sink, stream


def in_memory(source: Source) -> Opener:
    """An :data:`Opener` of a text or bytes already read."""
    return lambda: nullcontext(source)


def _events(stream: Iterator[object]) -> Iterator[Event]:
    return (node for node in stream if isinstance(node, Event))
