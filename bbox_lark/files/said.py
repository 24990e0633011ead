"""What a command says beside its output: the lines for standard error, each with its mark.

A workflow of the library (converting, counting, sending, writing pages) decides what is said
about its result and returns it as :class:`Said` lines with the exit code; the command line
only renders them (``bbox_lark.cli.console.say``): the mark picks the colour and the prefix,
the text is never markup. So a message is written once, in the library, and the same words
reach a Python caller.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, Protocol

from bbox_lark._classes import dataclass

if TYPE_CHECKING:
    from bbox_lark.syntax.nodes import Diagnostic

#: How a line is shown: ``""`` as it is; ``"!"`` a warning (``! text``), never silenced by
#: ``--quiet``; ``"error"`` a usage or input problem (``error: text``, exit 2); ``"refused"``
#: a red ``✗``; ``"done"`` a green ``✓``; ``"note"`` ``note: text``.
Mark = Literal["", "!", "error", "refused", "done", "note"]


@dataclass(frozen=True, slots=True)
class Said:
    """One line a command says on standard error."""

    #: The words, without the mark (never markup; a path in them is shown as given).
    text: str
    mark: Mark = ""


class Located(Protocol):
    """A fixer's note: something at a line and column of an input."""

    @property
    def line(self) -> int: ...
    @property
    def col(self) -> int: ...
    @property
    def message(self) -> str: ...


class Finding(Located, Protocol):
    """A finding of an input (a :class:`~bbox_lark.syntax.nodes.Diagnostic`), as a command shows it."""

    @property
    def code(self) -> str: ...
    @property
    def severity(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Told:
    """What a rewriting command (``fmt``, ``fix``, ``redact``) shows of one input, in this
    order: ``before`` (said), the unified ``diff`` (standard output), the fixers' ``notes`` and
    the input's ``findings`` (``path:line:col:`` lines, as ``check`` shows findings), then
    ``said``. The command line renders it (``bbox_lark.cli.console.tell``)."""

    #: The input as shown in the notes and findings.
    shown: str
    said: tuple[Said, ...] = ()
    diff: str = ""
    notes: tuple[Located, ...] = ()
    findings: tuple[Finding, ...] = ()
    before: tuple[Said, ...] = ()


def errors_note(diagnostics: Iterable[Diagnostic], shown: str) -> tuple[Said, ...]:
    """The note of a command that reads a file without listing its findings (``parse``,
    ``stats``): how many errors it has, and that ``check`` lists them (the command exits 1)."""
    errors = sum(1 for d in diagnostics if d.severity == "error")
    if not errors:
        return ()
    return (Said(f"{shown}: {errors} error(s); `bbox-lark check` lists them", "refused"),)


def credentials_refused(shown: str, done: str = "written", does: str = "writes") -> Said:
    """The line for an input refused because it holds a provider credential (S001; §13),
    as ``convert`` (nothing ``done``: written) and ``export`` (exported) say it."""
    why = f"--redact replaces them, --keep-secrets {does} them as they are"
    return Said(f"{shown}: holds provider credentials (S001); not {done} ({why})", "refused")


def unreadable(path: str, why: str) -> Said:
    """The line for an input that could not be read: why, naming the path unless it does."""
    return Said(why if why.startswith(path) else f"{path}: {why}", "error")


__all__ = ["Finding", "Located", "Mark", "Said", "Told", "credentials_refused", "errors_note", "unreadable"]
