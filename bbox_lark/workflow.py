"""Whole-run workflows over files: what ``bbox-lark check`` does, as a library call.

The CLI parses its arguments, calls :func:`check_paths` and renders the reports; the same
run is available from Python. Files are found by :func:`bbox_lark.discover.discover`, and
each is checked with the settings that apply to it (:mod:`bbox_lark.config`).

Each file is checked on its own: a file that cannot be read is reported as unreadable, and
a failure inside bbox-lark while checking one file becomes an ``E016`` finding on that file
(with a request for a bug report) instead of ending the run, so the other files still get
their report (exit code 2 for such a run).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bbox_lark.ast import Diagnostic
from bbox_lark.source import DEFAULT_MAX_LINE, decode

if TYPE_CHECKING:
    from bbox_lark.config import Resolver, Settings
    from bbox_lark.discover import Input

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

#: The code of an internal error (``bbox_lark/checks/runner.py``).
INTERNAL_ERROR = "E016"


def internal_error(error: BaseException, line: int = 1, col: int = 1) -> Diagnostic:
    """The finding for an unexpected exception raised while handling one file."""
    where = ""
    frames = traceback.extract_tb(error.__traceback__)
    if frames:
        last = frames[-1]
        where = f" at {Path(last.filename).name}:{last.lineno}"
    detail = f"{type(error).__name__}{where}: {str(error)[:200]}".rstrip(": ")
    message = f"internal error ({detail}); the file was not fully checked."
    message += " Please report this bug with the file"
    return Diagnostic(INTERNAL_ERROR, "error", line, col, message, "internal-error")


def fails(diagnostics: Iterable[Diagnostic], strict: bool) -> bool:
    """True when a finding fails the run: errors always, warnings with ``strict``."""
    failing = ("error", "warning") if strict else ("error",)
    return any(d.severity in failing for d in diagnostics)


@dataclass(frozen=True, slots=True)
class FileReport:
    """The outcome of checking one input."""

    #: The input as given: a file path, or ``-`` for standard input.
    path: str
    #: Every finding, sorted by line, column and code.
    diagnostics: tuple[Diagnostic, ...] = ()
    #: Why the input could not be read (missing, unreadable, a folder without bbox files).
    error: str | None = None
    #: The input's text (decoded with ``surrogateescape``), for showing source lines.
    text: str | None = None
    #: Whether warnings fail for this file (``strict`` from its settings).
    strict: bool = False

    @property
    def shown(self) -> str:
        """The name to show: the path, or ``<stdin>``."""
        return "<stdin>" if self.path == "-" else self.path

    @property
    def readable(self) -> bool:
        return self.error is None

    @property
    def crashed(self) -> bool:
        """True when bbox-lark failed on this file (an ``E016`` finding)."""
        return any(d.code == INTERNAL_ERROR for d in self.diagnostics)

    def exit_code(self, strict: bool | None = None) -> int:
        """2 for an unreadable input or an internal error, 1 for failing findings, else 0.
        ``strict`` None: the file's own :attr:`strict`."""
        if self.error is not None or self.crashed:
            return EXIT_USAGE
        return (
            EXIT_FINDINGS if fails(self.diagnostics, self.strict if strict is None else strict) else EXIT_OK
        )


def check_input(
    item: str,
    *,
    blobs: Path | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    settings: Settings | None = None,
) -> FileReport:
    """Read and check one input (``-`` is standard input); never raises on bad input.
    ``settings`` (when given) replaces ``select``, ``ignore`` and ``max_line``: its
    ``per-file-ignores`` apply to ``item``."""
    from bbox_lark.api import parse
    from bbox_lark.inputs import InputError, read_input

    strict = False
    if settings is not None:
        select, ignore = settings.select, settings.ignore_for(item)
        max_line, strict = settings.max_line, settings.strict
    try:
        data = read_input(item)
    except InputError as error:
        return FileReport(item, error=str(error), strict=strict)
    text = decode(data)
    try:
        document = parse(
            data,
            path=None if item == "-" else Path(item),
            blobs=blobs,
            max_line=max_line,
            select=select,
            ignore=ignore,
        )
    except Exception as error:  # a bug in bbox-lark: this file's report says so, the run goes on
        return FileReport(item, (internal_error(error),), text=text, strict=strict)
    return FileReport(item, document.diagnostics, text=text, strict=strict)


def check_inputs(inputs: Iterable[Input], *, blobs: Path | None = None) -> Iterator[FileReport]:
    """Check discovered inputs, each with its own settings, one report each, in order."""
    for item in inputs:
        if item.problem is not None:
            yield FileReport(item.path, error=item.problem, strict=item.settings.strict)
        else:
            yield check_input(item.path, blobs=blobs, settings=item.settings)


def check_paths(
    paths: Iterable[str],
    *,
    blobs: Path | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    max_line: int | None = None,
    settings: Resolver | None = None,
) -> Iterator[FileReport]:
    """Check every file named by ``paths`` (a folder means every bbox file below it; ``-``
    is standard input), one report per input, in order.

    ``settings`` gives each file its settings (configuration files, command-line
    overrides); without it no configuration file is read and ``select``, ``ignore`` and
    ``max_line`` apply to every file. Files are found before this returns, so a bad
    configuration raises :class:`~bbox_lark.config.ConfigError` here, before any report."""
    from bbox_lark.config import Overrides, Resolver, split_option
    from bbox_lark.discover import discover

    if settings is None:
        selected, ignored = split_option(select), split_option(ignore)
        overrides = Overrides(
            select=tuple(code.upper() for code in selected) if selected is not None else None,
            ignore=tuple(code.upper() for code in ignored) if ignored is not None else None,
            max_line=max_line,
        )
        settings = Resolver(overrides, isolated=True)
    return check_inputs(discover(list(paths), settings), blobs=blobs)


def run_exit_code(reports: Iterable[FileReport], strict: bool | None = None) -> int:
    """The run's exit code: the highest over its files (DECISIONS §10)."""
    return max((report.exit_code(strict) for report in reports), default=EXIT_OK)
