"""Rewriting bbox files: what ``bbox-lark fmt`` and ``bbox-lark fix`` do, as library calls.

Both read each input (:func:`bbox_lark.checks.workflow.read_inputs`), decide with the one write
policy (:func:`bbox_lark.files.writepolicy.write_verdict`) and write atomically
(:func:`bbox_lark.checks.workflow.write_file`). Each yields one result per input, in order, as it
is done; the command renders each (:mod:`bbox_lark.cli.commands`) and picks the exit code from
:attr:`exit_code`. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from bbox_lark._classes import dataclass
from bbox_lark.api import Formatted
from bbox_lark.checks.workflow import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, read_inputs, write_file
from bbox_lark.files.discover import FoundInput
from bbox_lark.files.inputs import is_regular
from bbox_lark.files.writepolicy import WriteVerdict, write_verdict
from bbox_lark.fix.framework import Fixer, FixOutcome
from bbox_lark.syntax.source import encode, shown_text


@dataclass(frozen=True, slots=True)
class Rewriting:
    """What a rewriting command did with one input: what ``fmt`` and ``fix`` share."""

    item: FoundInput
    #: Why the input could not be read (nothing else is set then).
    read_error: str | None = None
    #: The write policy's verdict (None when nothing was to be written).
    verdict: WriteVerdict | None = None
    #: The file was written.
    wrote: bool = False
    #: Why the file could not be written.
    write_error: str | None = None

    @property
    def refused(self) -> bool:
        return self.verdict is not None and self.verdict.refused

    @property
    def failed(self) -> bool:
        """True when the input could not be read or its output not written (exit 2)."""
        return self.read_error is not None or self.write_error is not None


@dataclass(frozen=True, slots=True)
class Formatting(Rewriting):
    """What ``fmt`` did with one input (no verdict with ``--check``/``--diff``)."""

    #: The input formatted (None when it could not be read).
    formatted: Formatted | None = None
    #: The unified diff (``--diff`` only; "" when nothing changed).
    diff: str = ""
    #: The formatted text for standard output (an input read from standard input).
    output: str | None = None

    @property
    def changed(self) -> bool:
        return self.formatted is not None and self.formatted.changed

    @property
    def exit_code(self) -> int:
        """2 unreadable or not written, 1 refused (or a change, when only checking), else 0."""
        if self.failed:
            return EXIT_USAGE
        if self.refused or (self.verdict is None and self.changed):
            return EXIT_FINDINGS
        return EXIT_OK


def fmt_inputs(
    inputs: Iterable[FoundInput], *, check: bool = False, diff: bool = False, force: bool = False
) -> Iterator[Formatting]:
    """Format each input in canonical form (docs/fmt.md), one result each, in order.

    ``check`` or ``diff``: write nothing (``diff`` gives each change as a unified diff).
    Otherwise a file is rewritten in place when it changed and the write policy allows it
    (``force`` writes a refused one); the text of standard input, or of a pipe (a FIFO,
    ``<(…)``: it cannot be rewritten in place), is handed back in :attr:`Formatting.output`,
    for standard output."""
    from bbox_lark.api import format_text
    from bbox_lark.fix.framework import unified_diff

    for read in read_inputs(inputs):
        item = read.item
        if read.error is not None:
            yield Formatting(item, read_error=read.error)
            continue
        formatted = format_text(read.data, path=read.path, max_line=item.settings.max_line)
        if check or diff:
            shown = diff and formatted.changed
            text = unified_diff(formatted.old, formatted.new, shown_text(item.shown)) if shown else ""
            yield Formatting(item, formatted=formatted, diff=text)
            continue
        settings = item.settings
        verdict = write_verdict(
            formatted.document.diagnostics, settings=settings, path=read.path, force=force
        )
        if verdict.refused:
            yield Formatting(item, formatted=formatted, verdict=verdict)
        elif item.stdin or not is_regular(item.path):  # a pipe cannot be rewritten in place
            yield Formatting(item, formatted=formatted, verdict=verdict, output=formatted.new)
        elif formatted.changed:
            problem = write_file(item.path, encode(formatted.new))
            yield Formatting(
                item, formatted=formatted, verdict=verdict, wrote=problem is None, write_error=problem
            )
        else:
            yield Formatting(item, formatted=formatted, verdict=verdict)


@dataclass(frozen=True, slots=True)
class Fixing(Rewriting):
    """What ``fix`` did with one input."""

    #: A fixer failed on this input (a bbox-lark bug): nothing was written.
    fix_error: str | None = None
    #: The fixers' outcome (None when the input could not be read or a fixer failed).
    outcome: FixOutcome | None = None
    #: Where the fixed file goes (the input itself, ``--output``), None for a dry run.
    target: Path | None = None

    @property
    def exit_code(self) -> int:
        """2 unreadable or not written, 1 refused or a fixer failed, else 0."""
        if self.failed:
            return EXIT_USAGE
        if self.fix_error is not None or self.refused:
            return EXIT_FINDINGS
        return EXIT_OK


def fix_inputs(
    inputs: Iterable[FoundInput],
    fixers: Iterable[Fixer],
    *,
    write: bool = False,
    output: Path | None = None,
    force: bool = False,
) -> Iterator[Fixing]:
    """Apply ``fixers`` to each input (docs/fix.md), one result each, in order.

    A dry run by default (the outcome holds the diff); ``write`` rewrites each file in
    place when it changed, ``output`` writes the one input's result there (even unchanged);
    the write policy decides (``force`` writes a refused file)."""
    from bbox_lark.fix import FixError, apply_fixes

    chosen = list(fixers)
    for read in read_inputs(inputs):
        item = read.item
        if read.error is not None:
            yield Fixing(item, read_error=read.error)
            continue
        path = read.path
        try:
            outcome = apply_fixes(
                read.data,
                chosen,
                path=path,
                label=shown_text(item.shown),
                max_line=item.settings.max_line,
                allowed_secrets=item.settings.allowed_secrets,
            )
        except FixError as error:  # a fixer bug, never the input's fault: write nothing
            yield Fixing(item, fix_error=str(error))
            continue
        # What the fixers repaired is not outstanding (refusing codes never are); a refused
        # file is not written, so every finding of it still stands.
        verdict = write_verdict(outcome.outstanding, settings=item.settings, path=path, force=force)
        if verdict.refused and outcome.resolved:
            verdict = write_verdict(
                outcome.document.diagnostics, settings=item.settings, path=path, force=force
            )
        target = path if write else output
        if target is None or verdict.refused or (write and not outcome.changed):
            yield Fixing(item, outcome=outcome, verdict=verdict, target=target)
            continue
        if write and not is_regular(target):
            problem: str | None = (
                f"{target}: not a regular file (a pipe): cannot rewrite it in place; give --output"
            )
        else:
            problem = write_file(target, encode(outcome.new_text))
        yield Fixing(
            item, outcome=outcome, verdict=verdict, target=target, wrote=problem is None, write_error=problem
        )
