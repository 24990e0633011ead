"""The shared machinery of every fixer: edits, results, applying them, the diff.

A fixer looks at a parsed :class:`~bbox_lark.syntax.nodes.Document` and proposes :class:`Edit` s:
replace the characters ``col_start .. col_end - 1`` of one body line with new text (columns
1-based and counted in code points, as everywhere in bbox-lark; the end is exclusive). It
never writes text itself. :func:`apply_fixes` parses the input once, asks each fixer in turn,
refuses edits that overlap, and edits only the edited lines' nodes, through
:func:`~bbox_lark.syntax.parser.reparse` (the spliced text, its values read again, so no
field of an edited node is stale): line endings, the header, the BOM, continuation lines and
every other line are printed back exactly as they were read (the lossless printer,
:func:`bbox_lark.syntax.printer.dumps`).

A :class:`TextFixer` is the exception for a repair that cannot be said as edits inside body
lines (``redact``: a private key block over continuation lines becomes one marker, a header
value is redacted, a ``# redactions=N`` line is inserted). It rewrites the whole text, after
the edit fixers, and checks itself that every line keeps its kind.

Every diff shows secrets starred out (:func:`bbox_lark.secrets.scanner.hide_secrets`): a secret is
never printed whole (docs/reference.md#secrets). Such a diff no longer applies with ``patch`` on the lines
that hold one; ``--write`` does.
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Sequence
from dataclasses import field, replace
from pathlib import Path

from bbox_lark._classes import dataclass
from bbox_lark.errors import WriteError
from bbox_lark.syntax.nodes import Diagnostic, Document, Event, Line
from bbox_lark.syntax.parser import reparse


class FixError(WriteError, ValueError):
    """A fixer proposed edits that cannot be applied (a bug in the fixer, not in the input)."""


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace columns ``col_start`` up to (not including) ``col_end`` of body line ``line``.

    ``col_start == col_end`` inserts. Columns are 1-based and count code points.
    """

    line: int
    col_start: int
    col_end: int
    replacement: str


@dataclass(frozen=True, slots=True)
class Note:
    """Something a fixer saw and deliberately left alone (a dangling reference, a value it
    cannot read), reported to the user with its position."""

    line: int
    col: int
    message: str
    #: The fixer that made the note.
    fixer: str = ""

    def format(self, path: str = "<stdin>") -> str:
        return f"{path}:{self.line}:{self.col}: {self.message}"


@dataclass(frozen=True, slots=True)
class FixResult:
    """What one fixer proposes for one document."""

    edits: tuple[Edit, ...] = ()
    #: How many things the fixer changed, in its own unit (step references, arrows).
    changed: int = 0
    notes: tuple[Note, ...] = ()


class Fixer(ABC):
    """One fix: a kebab-case ``name`` (also its command-line flag, ``--name``), a one-line
    ``description`` (the flag's help) and :meth:`edits`. Register it in
    :data:`bbox_lark.fix.FIXERS`."""

    #: The flag name, kebab-case: ``renumber-steps`` is ``fix --renumber-steps``.
    name: str = ""
    #: One sentence; the help text of the flag.
    description: str = ""
    #: The finding codes this fixer repairs: a finding with one of them at the position of
    #: one of its notes is what the fixer fixed, not an outstanding error
    #: (:attr:`FixOutcome.outstanding`).
    resolves: frozenset[str] = frozenset()

    @abstractmethod
    def edits(self, document: Document) -> FixResult:
        """The edits this fixer makes to ``document`` (a parsed input; never modified)."""

    def summary(self, changed: int) -> str:
        """One line for the user: what was done, with the count."""
        return f"{self.name}: {changed} change(s)"


class LineFixer(Fixer):
    """A fixer whose edits of an event line depend only on that line and on what
    :meth:`survey` gathered from every event first (when :attr:`surveys`): ``fix`` then
    streams a file instead of holding it (:mod:`bbox_lark.fix.stream`). :meth:`edits` is
    the same rule over a whole document."""

    #: Whether :meth:`survey` must see every event before the first is edited (a first
    #: pass over the input).
    surveys: bool = False

    def survey(self, events: Iterable[Event]) -> object:
        """What :meth:`edit` needs to know about the whole input (only with :attr:`surveys`)."""
        return None

    @abstractmethod
    def edit(self, event: Event, survey: object) -> FixResult:
        """The edits of ``event``'s own line, given what :meth:`survey` returned."""

    def edits(self, document: Document) -> FixResult:
        events = document.events
        survey = self.survey(events) if self.surveys else None
        edits: list[Edit] = []
        notes: list[Note] = []
        changed = 0
        for event in events:
            result = self.edit(event, survey)
            edits.extend(result.edits)
            notes.extend(result.notes)
            changed += result.changed
        return FixResult(tuple(edits), changed, tuple(notes))


class TextFixer(Fixer):
    """A fixer that rewrites the whole text (see the module's notes); it runs after the edit
    fixers, on their result. :meth:`edits` proposes nothing."""

    def edits(self, document: Document) -> FixResult:
        return FixResult()

    @abstractmethod
    def rewrite(
        self, text: str, path: Path | None, *, allowed_secrets: Collection[str] = ()
    ) -> tuple[str, FixResult]:
        """``text`` rewritten, with the count and notes (``edits`` stays empty). ``path`` is
        where the input came from (None: standard input); ``allowed_secrets`` are the values
        the ``allowed-secrets`` setting keeps."""


def plural(count: int, singular: str, several: str | None = None) -> str:
    """``1 arrow``, ``2 arrows``."""
    return f"{count} {singular if count == 1 else (several or singular + 's')}"


@dataclass(frozen=True, slots=True)
class FixOutcome:
    """The result of :func:`apply_fixes`."""

    #: The parsed input, with its diagnostics (``check``'s findings).
    document: Document
    #: The input text (bytes decoded with ``surrogateescape``).
    old_text: str
    #: The fixed text; encode it with :func:`bbox_lark.syntax.source.encode` to get bytes back.
    new_text: str
    #: Each fixer's name mapped to how many things it changed, in the order the fixers ran.
    changes: dict[str, int] = field(default_factory=dict)
    notes: tuple[Note, ...] = ()
    #: A unified diff from ``a/LABEL`` to ``b/LABEL`` ("" when nothing changed).
    diff: str = ""
    #: The input's findings the fixers repaired (see :attr:`Fixer.resolves`).
    resolved: tuple[Diagnostic, ...] = ()

    @property
    def outstanding(self) -> tuple[Diagnostic, ...]:
        """The input's findings the fixed text still has (every one but :attr:`resolved`)."""
        if not self.resolved:
            return self.document.diagnostics
        fixed = set(map(id, self.resolved))
        return tuple(d for d in self.document.diagnostics if id(d) not in fixed)

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """The input's findings (``check``'s)."""
        return self.document.diagnostics

    @property
    def changed(self) -> bool:
        """True when the fixed text differs from the input."""
        return self.new_text != self.old_text

    @property
    def total(self) -> int:
        return sum(self.changes.values())

    @property
    def errors(self) -> int:
        """How many error diagnostics the input has (writes refuse those without force)."""
        return sum(1 for d in self.document.diagnostics if d.severity == "error")


def resolved_findings(
    diagnostics: Iterable[Diagnostic], fixers: list[Fixer], notes: list[Note]
) -> tuple[Diagnostic, ...]:
    """The findings a fixer repaired: one of its :attr:`Fixer.resolves` codes at one of its
    notes' positions (``redact``: a secret's finding where it noted the secret redacted)."""
    resolves = {fixer.name: fixer.resolves for fixer in fixers if fixer.resolves}
    if not resolves:
        return ()
    at = {(note.line, note.col, code) for note in notes for code in resolves.get(note.fixer, ())}
    return tuple(d for d in diagnostics if (d.line, d.col, d.code) in at)


def apply_edits(document: Document, edits: Sequence[Edit]) -> Document:
    """``document`` with ``edits`` applied to its body lines' ``raw`` text. Line endings,
    the header, the BOM and every line without an edit are kept as they are."""
    by_line: dict[int, list[Edit]] = {}
    for edit in edits:
        by_line.setdefault(edit.line, []).append(edit)
    if not by_line:
        return document
    lines: list[Line] = list(document.lines)
    index = {node.line: position for position, node in enumerate(lines)}
    for number, line_edits in by_line.items():
        position = index.get(number, -1)
        node = lines[position] if position >= 0 else None
        if not isinstance(node, Event):
            raise FixError(
                f"line {number}: edits apply only to body lines (not the header, blank or continuation lines)"
            )
        text = splice(node.raw, number, line_edits)
        try:
            edited = reparse(node, text)
        except ValueError as error:  # no longer an event, comment or lifecycle line
            raise FixError(f"line {number}: the edits would change what kind of line it is") from error
        check_kind_kept(node, edited)
        lines[position] = edited
    return replace(document, lines=tuple(lines))


def check_kind_kept(before: Event, after: Event) -> None:
    """A fixer changes values, never what a line is: the edited line must read as the same
    kind and name (a safety net against fixer bugs)."""
    if (after.kind, after.name) != (before.kind, before.name):
        raise FixError(f"line {before.line}: the edits would change what kind of line it is")


def splice(raw: str, number: int, edits: list[Edit]) -> str:
    ordered = sorted(edits, key=lambda e: (e.col_start, e.col_end))
    previous: Edit | None = None
    for edit in ordered:
        if not 1 <= edit.col_start <= edit.col_end <= len(raw) + 1:
            raise FixError(f"line {number}: edit columns {edit.col_start}..{edit.col_end} out of range")
        if previous is not None and (
            edit.col_start < previous.col_end or edit.col_start == previous.col_start
        ):
            raise FixError(
                f"line {number}: edits at columns {previous.col_start}..{previous.col_end} and"
                f" {edit.col_start}..{edit.col_end} overlap"
            )
        previous = edit
    text = raw
    for edit in reversed(ordered):
        text = text[: edit.col_start - 1] + edit.replacement + text[edit.col_end - 1 :]
    return text


def split_keepends(text: str) -> list[str]:
    """Physical lines with their endings. Only ``"\\n"`` ends a line (a lone ``"\\r"``, a form
    feed or U+2028 is line content, as in :mod:`bbox_lark.syntax.source`)."""
    parts = text.split("\n")
    last = parts.pop()
    lines = [part + "\n" for part in parts]
    if last:
        lines.append(last)
    return lines


_NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(old: str, new: str, label: str) -> str:
    """A unified diff (``a/LABEL``, ``b/LABEL``, three lines of context) that ``patch`` and
    ``git apply`` accept: line endings are kept as they are, and a last line without one is
    marked ``\\ No newline at end of file``."""
    if old == new:
        return ""
    from bbox_lark.secrets.scanner import hide_secrets

    old, new = hide_secrets(old), hide_secrets(new)  # whole texts: a key block spans lines
    parts: list[str] = []
    for line in difflib.unified_diff(
        split_keepends(old), split_keepends(new), fromfile=f"a/{label}", tofile=f"b/{label}"
    ):
        parts.append(line)
        if not line.endswith("\n"):
            parts.append("\n" + _NO_NEWLINE)
    return "".join(parts)
