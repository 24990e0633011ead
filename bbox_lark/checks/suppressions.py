"""Suppression comments: ``# bbox-lark: ignore[CODES]`` and ``# bbox-lark: ignore-file[CODES]``
(``docs/configuration.md``, "Suppressions").

A suppression is an ordinary comment line of the body: every other reader of the format
sees a plain comment, and the printer keeps it byte for byte.

* ``# bbox-lark: ignore[W024,W002]`` silences those codes on the next line that is not a
  comment line (a blank line counts: put the comment right above the line it is about);
* ``# bbox-lark: ignore-file[W010]``, anywhere in the body, silences them in the whole file.

Codes may be given in any case, separated by commas, and may be prefixes (``W0``), as for
``--select``; text after the closing ``]`` is a free reason. The directive must open the
comment (``# bbox-lark: ...``). A suppression applies after ``select``/``ignore``: it can only
silence what would be reported.

Two infos keep suppressions honest (ruff's RUF100): **I010** for a code in a suppression
that silenced nothing (only for codes that are enabled: a suppression of a code left out
by ``--select`` is not "unused"), and **I011** for a suppression that cannot be read (no
``[codes]``, an empty list, an unknown code). Neither makes a run fail. ``ignore-file[I010]``
silences I010 in a file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import field

from bbox_lark._classes import dataclass
from bbox_lark.checks.base import REGISTRY, SUPPRESSION_MARKER, describe, example, printable
from bbox_lark.syntax.nodes import Diagnostic, Document, Event, Line
from bbox_lark.syntax.record import Record

FAMILY = "suppressions"

#: The marker that opens a suppression comment's text.
MARKER = SUPPRESSION_MARKER

describe(
    "I010",
    "unused-suppression",
    "info",
    "A code in a `# bbox-lark: ignore[...]` or `ignore-file[...]` comment silenced nothing.",
    "A suppression that silences nothing is stale: the line was fixed or moved, or the code is"
    " wrong. Left in place, it would hide the next real finding there. Only codes that are"
    " enabled are reported (a suppression of a code left out by --select is not unused).",
    example("# bbox-lark: ignore[W003]\na: hello\n"),
    example("# bbox-lark: ignore[W003] a writer's own line kind\nstatus: ok\n"),
    family=FAMILY,
    fix="Remove the code from the suppression comment (or the whole comment when nothing is left).",
)
describe(
    "I011",
    "invalid-suppression",
    "info",
    "A `# bbox-lark: ignore` comment cannot be read: no `[codes]`, an empty list, or an unknown code.",
    "A suppression that cannot be read silences nothing, and the finding it was meant for"
    " still shows up with no hint why. Write `# bbox-lark: ignore[CODE,...]` (or"
    " `ignore-file[...]`) with registered codes or code prefixes.",
    example("# bbox-lark: ignore[W999]\na: hello\n"),
    example("# bbox-lark: ignore[W003]\nstatus: ok\n"),
    family=FAMILY,
    fix="Write `# bbox-lark: ignore[CODE,...]` or `ignore-file[CODE,...]` with registered codes.",
)

_DIRECTIVE = re.compile(r"bbox-lark:\s*(?P<kind>ignore-file|ignore)(?![\w-])")
_CODES = re.compile(r"\s*\[(?P<codes>[^\]]*)\]")


@dataclass(slots=True)
class Suppression:
    """One suppression comment."""

    #: The comment's line.
    line: int
    #: True for ``ignore-file``.
    file_wide: bool
    #: The line it silences (None for ``ignore-file``, or when no line follows).
    target: int | None
    #: (code or prefix, its column) for each valid code.
    codes: list[tuple[str, int]] = field(default_factory=list)
    #: The codes that silenced something.
    used: set[str] = field(default_factory=set)


def _known(code: str) -> bool:
    return any(known.startswith(code) for known in REGISTRY)


def read_suppression(event: Event, target: int | None = None) -> tuple[Suppression | None, list[Diagnostic]]:
    """The suppression a comment holds (None when it holds none or cannot be read), and an
    I011 for a suppression that cannot be read (or for each unknown code in it)."""
    invalid: list[Diagnostic] = []
    info = REGISTRY["I011"]

    def bad(line: int, col: int, message: str) -> None:
        invalid.append(Diagnostic("I011", info.severity, line, col, printable(message), info.name))

    directive = _DIRECTIVE.match(event.text)
    if directive is None:
        return None, invalid  # `# bbox-lark: some note` is a plain comment
    kind = directive["kind"]
    listed = _CODES.match(event.text, directive.end())
    col = event.text_col + directive.start()
    if listed is None:
        bad(event.line, col, f"suppression without codes; write `# bbox-lark: {kind}[CODE,...]`")
        return None, invalid
    suppression = Suppression(event.line, kind == "ignore-file", None if kind == "ignore-file" else target)
    start = event.text_col + listed.start("codes")
    offset = 0
    for part in listed["codes"].split(","):
        stripped = part.strip()
        where = start + offset + (len(part) - len(part.lstrip()))
        offset += len(part) + 1
        if not stripped:
            continue
        code = stripped.upper()
        if _known(code):
            suppression.codes.append((code, where))
        else:
            bad(event.line, where, f"unknown code {stripped!r} in a suppression; it silences nothing")
    if not suppression.codes:
        if not invalid:
            bad(
                event.line,
                col,
                f"suppression with an empty list of codes; write `# bbox-lark: {kind}[CODE,...]`",
            )
        return None, invalid
    return suppression, invalid


class Suppressions:
    """The suppression comments of a document as it is read (:class:`~bbox_lark.checks.Checker`
    feeds it every node). It keeps the suppression comments only, so its memory is that of
    the comments, not of the file.

    Whole-file: :meth:`finish` takes every finding and gives back what is not silenced, plus
    I010 and I011. Streaming: :meth:`silence` filters the findings of the lines read so far
    (with the suppressions read so far: an ``ignore-file`` applies from its own line on)
    and adds the I011s of the comments read since; :meth:`finish` gives the I010s."""

    def __init__(self, enabled: Callable[[str], bool]) -> None:
        self.enabled = enabled
        self.found: list[Suppression] = []
        self.invalid: list[Diagnostic] = []
        self._waiting: list[Suppression] = []
        self._index = _Index()

    def node(self, node: Line | Record) -> None:
        if node.kind == "comment":
            # A comment's record holds its node (the LALR driver reads comments).
            event = node.event() if isinstance(node, Record) else node
            assert isinstance(event, Event)
            if event.text.startswith(MARKER):
                suppression, invalid = read_suppression(event)
                self.invalid += invalid
                if suppression is not None:
                    self.found.append(suppression)
                    if suppression.file_wide:
                        self._index.add(suppression)
                    else:
                        self._waiting.append(suppression)
        elif self._waiting:
            # the next body line that is not a comment (a blank line counts)
            for suppression in self._waiting:
                suppression.target = node.line
                self._index.add(suppression)
            self._waiting = []

    def silence(self, found: list[Diagnostic]) -> list[Diagnostic]:
        """Streaming: ``found`` without what is silenced, plus the new I011s."""
        kept = self._index.silence(found) if self.found else found
        if self.invalid:
            meta = [d for d in self.invalid if self.enabled(d.code)]
            self.invalid = []
            kept += self._index.silence(meta)
        return kept

    def finish(self, found: list[Diagnostic]) -> list[Diagnostic]:
        """``found`` without what is silenced, plus I010 for each enabled code that silenced
        nothing and I011 for each suppression that cannot be read (when those codes are
        enabled themselves)."""
        suppressions, invalid, enabled = self.found, self.invalid, self.enabled
        self.invalid = []
        if not suppressions and not invalid:
            return found
        kept = self._index.silence(found)
        meta = [d for d in invalid if enabled(d.code)]
        if not enabled("I010"):
            return kept + self._index.silence(meta)
        # A code that covers I010 itself (`ignore-file[I010]`) is judged last, once the other
        # I010s are known: it is used when it silences one of them.
        deferred = []
        for s in suppressions:
            for code, col in s.codes:
                if code in s.used or not any(enabled(known) for known in REGISTRY if known.startswith(code)):
                    continue
                if "I010".startswith(code):
                    deferred.append((s, code, col))
                else:
                    meta.append(_unused(s, code, col))
        meta = self._index.silence(meta)
        meta += [_unused(s, code, col) for s, code, col in deferred if code not in s.used]
        return kept + meta


class _Index:
    """The suppressions by what they silence: (target line, or None for file-wide; code or
    prefix). A finding looks up each prefix of its code on its line and file-wide, so that
    n suppressions and n findings cost n, not n² (10,000 `ignore-file` comments once took
    minutes); each group is marked used once per suppression, however often it matches."""

    def __init__(self) -> None:
        self.groups: dict[tuple[int | None, str], list[Suppression]] = {}
        #: How many suppressions of each group are marked used already.
        self.marked: dict[tuple[int | None, str], int] = {}

    def add(self, suppression: Suppression) -> None:
        line = None if suppression.file_wide else suppression.target
        if line is None and not suppression.file_wide:
            return  # no line follows it: it silences nothing
        for code, _ in suppression.codes:
            self.groups.setdefault((line, code), []).append(suppression)

    def silence(self, found: list[Diagnostic]) -> list[Diagnostic]:
        if not self.groups:
            return found
        kept = []
        hit: set[tuple[int | None, str]] = set()
        for diagnostic in found:
            silenced = False
            code = diagnostic.code
            for end in range(1, len(code) + 1):
                keys: tuple[tuple[int | None, str], ...] = ((None, code[:end]), (diagnostic.line, code[:end]))
                for key in keys:
                    if key in self.groups:
                        silenced = True
                        hit.add(key)
            if not silenced:
                kept.append(diagnostic)
        for key in hit:
            group = self.groups[key]
            for suppression in group[self.marked.get(key, 0) :]:
                suppression.used.add(key[1])
            self.marked[key] = len(group)
        return kept


def read_suppressions(
    document: Document, events: list[Event] | None = None
) -> tuple[list[Suppression], list[Diagnostic]]:
    """Every suppression comment of a parsed document's body (with its target), and an I011
    for each one that cannot be read (or for each unknown code in one)."""
    suppressions = Suppressions(lambda code: True)
    for node in document.lines:
        suppressions.node(node)
    return suppressions.found, suppressions.invalid


def apply_suppressions(
    document: Document,
    found: list[Diagnostic],
    enabled: Callable[[str], bool],
    events: list[Event] | None = None,
) -> list[Diagnostic]:
    """``found`` (the findings of a parsed ``document``) without what its suppression
    comments silence, plus I010 and I011 (see :meth:`Suppressions.finish`)."""
    suppressions = Suppressions(enabled)
    for node in document.lines:
        suppressions.node(node)
    return suppressions.finish(found)


def _unused(s: Suppression, code: str, col: int) -> Diagnostic:
    if s.file_wide:
        message = f"file-wide suppression of {code} silenced nothing"
    elif s.target is None:
        message = f"suppression of {code} silenced nothing: no line follows it"
    else:
        message = f"suppression of {code} silenced nothing on line {s.target}"
    info = REGISTRY["I010"]
    return Diagnostic("I010", info.severity, s.line, col, message, info.name)
