"""What every converter is made of: a :class:`Format` (name, extensions, content sniffer,
reader, writer, fidelity statement) and the :class:`Report` it fills in.

A reader takes text and returns a :class:`~bbox_lark.ast.Document`; a writer takes a document
and returns text. Both record in a :class:`Report` whatever they drop or have to synthesize,
with the source line of each, and a reader records where each line of the document it builds
came from (:attr:`Report.origin`), so that findings and losses can be shown at the input's
own line numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.ast import Diagnostic, Document

#: What a report entry says happened: something of the source is not in the output, or
#: something of the output was not in the source.
ACTIONS = ("dropped", "synthesized")


class ConvertError(ValueError):
    """A conversion that cannot be done as asked (a usage problem, never a bad input line)."""


class UnknownFormatError(ConvertError):
    """A format name no converter is registered for."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        self.known = tuple(known)
        super().__init__(f"unknown format {name!r}; known formats: {', '.join(self.known)}")


class UndetectableFormatError(ConvertError):
    """Neither the file name nor the content tells the input's format."""

    def __init__(self, shown: str, known: Iterable[str]) -> None:
        self.known = tuple(known)
        super().__init__(
            f"{shown}: cannot tell the input format from its name or content;"
            f" give --from (one of: {', '.join(self.known)})"
        )


class UnsupportedOptionError(ConvertError):
    """An option the target format's writer does not take (``lossy`` for bbox output)."""

    def __init__(self, option: str, target: str, supported_by: Iterable[str]) -> None:
        by = tuple(supported_by)
        where = f"; it applies to: {', '.join(by)}" if by else ""
        super().__init__(f"option {option!r} does not apply to {target} output{where}")


@dataclass(frozen=True, slots=True)
class ReportEntry:
    """One kind of thing a converter dropped or synthesized, and where."""

    #: ``dropped`` or ``synthesized``.
    action: str
    #: What, as a plural noun phrase: ``comment lines``, ``id= fields``, ``count units``.
    what: str
    #: Source lines (1-based, in the converter's input), in order; one per occurrence.
    lines: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.lines)

    def render(self, limit: int = 5) -> str:
        """``dropped comment lines: 9 (lines 14, 29, 32, 35, 36, …)``."""
        shown = ", ".join(str(n) for n in self.lines[:limit])
        more = ", …" if self.count > limit else ""
        label = "line" if self.count == 1 else "lines"
        return f"{self.action} {self.what}: {self.count} ({label} {shown}{more})"


@dataclass(slots=True)
class Report:
    """The fidelity report of one conversion step (mutable while a converter fills it in)."""

    #: (action, what) -> source lines, in insertion order.
    found: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    #: A reader's map from each line of the document it built to the input line it came
    #: from and the column shift (``document col + shift = input col``); empty means "the
    #: same lines and columns" (a bbox input).
    origin: dict[int, tuple[int, int]] = field(default_factory=dict)

    def drop(self, what: str, line: int) -> None:
        self.found.setdefault(("dropped", what), []).append(line)

    def synthesize(self, what: str, line: int) -> None:
        self.found.setdefault(("synthesized", what), []).append(line)

    def source_line(self, line: int) -> int:
        """The input line a document line came from."""
        return self.origin.get(line, (line, 0))[0]

    @property
    def entries(self) -> tuple[ReportEntry, ...]:
        return tuple(ReportEntry(action, what, tuple(lines)) for (action, what), lines in self.found.items())

    def __bool__(self) -> bool:
        return bool(self.found)


#: ``read(text, *, report, max_line, path) -> Document`` (``path`` locates blobs; may be None)
Reader = Callable[..., Document]
#: ``write(document, *, report, **options) -> str``
Writer = Callable[..., str]


@dataclass(frozen=True, slots=True)
class Format:
    """A format ``bbox-lark convert`` reads and writes."""

    name: str
    #: One line for ``--help`` and the docs.
    description: str
    #: File name endings that mean this format (lower case, with the dot).
    extensions: tuple[str, ...]
    #: How sure the content looks like this format: 0 no, higher is surer.
    sniff: Callable[[str], int]
    read: Reader
    write: Writer
    #: What survives ``bbox → this format → bbox`` (DECISIONS §7), as documented.
    fidelity: str
    #: True when ``bbox → this format → bbox`` gives an equal document.
    lossless: bool = True
    #: Options the writer takes (``lossy`` for compact).
    write_options: frozenset[str] = frozenset()
    #: Options the writer gets when the document was read from another format (bbox output
    #: is then canonical); options given explicitly win.
    foreign_options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Conversion:
    """The result of :func:`bbox_lark.convert.convert`."""

    #: The output text (write it with :func:`bbox_lark.source.encode` to get bytes back).
    text: str
    #: What was dropped or synthesized, at the input's line numbers.
    report: tuple[ReportEntry, ...]
    #: The document the input was read into (its diagnostics are at the document's lines).
    document: Document
    #: The input's findings, at the input's own line numbers.
    diagnostics: tuple[Diagnostic, ...]
    source: str
    target: str

    @property
    def errors(self) -> int:
        """How many of the input's findings are errors."""
        return sum(1 for d in self.diagnostics if d.severity == "error")
