"""Whole-run workflows over files: what ``bbox-lark check`` does, as a library call.

The CLI parses its arguments, calls :func:`check_paths` and renders the reports; the same
run is available from Python. Files are found by :func:`bbox_lark.files.discover.discover`, and
each is checked with the settings that apply to it (:mod:`bbox_lark.files.config`).

Each file is checked on its own: a file that cannot be read is reported as unreadable, and
a failure inside bbox-lark while checking one file becomes an ``E016`` finding on that file
(with a request for a bug report) instead of ending the run, so the other files still get
their report (exit code 2 for such a run).
"""

from __future__ import annotations

import io
import sys
import tempfile
import traceback
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bbox_lark._classes import dataclass
from bbox_lark.files.discover import FoundInput
from bbox_lark.files.inputs import InputError, open_input
from bbox_lark.files.said import Said, errors_note
from bbox_lark.syntax.nodes import Diagnostic, Document
from bbox_lark.syntax.source import BOM, DEFAULT_MAX_LINE, decode

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from bbox_lark.files.config import Resolver, Settings
    from bbox_lark.files.runner import Job, Jobs, Progress

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
    #: The input's whole text, when a caller has it (decoded with ``surrogateescape``); the
    #: check run leaves it None and keeps only :attr:`lines`, or nothing for a file.
    text: str | None = None
    #: Whether warnings fail for this file (``strict`` from its settings).
    strict: bool = False
    #: The source lines that have findings, by line number (standard input only: a file's
    #: lines are read again when they are shown, see :meth:`source`).
    lines: Mapping[int, str] | None = None
    #: True for one finding of an input still being read (:func:`stream_input`): the whole
    #: report follows once the input has been read.
    partial: bool = False

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

    def source(self, wanted: Iterable[int]) -> dict[int, str]:
        """The text of the ``wanted`` physical lines (as the parser numbers them, without
        BOM or ending) that can be found: from :attr:`text`, :attr:`lines`, or by reading
        the file again (only those lines are kept)."""
        wanted = set(wanted)
        if self.text is not None:
            found = _pick_lines(io.StringIO(self.text, newline="\n"), wanted)
        elif self.lines is not None:
            found = {n: self.lines[n] for n in wanted if n in self.lines}
        elif self.path != "-" and wanted:
            try:
                with open(self.path, "rb") as file:
                    found = _pick_lines(file, wanted)
            except OSError:
                found = {}
        else:
            found = {}
        return found

    def exit_code(self, strict: bool | None = None) -> int:
        """2 for an unreadable input or an internal error, 1 for failing findings, else 0.
        ``strict`` None: the file's own :attr:`strict`."""
        if self.error is not None or self.crashed:
            return EXIT_USAGE
        return (
            EXIT_FINDINGS if fails(self.diagnostics, self.strict if strict is None else strict) else EXIT_OK
        )


def _pick_lines(lines: Iterable[str | bytes], wanted: set[int]) -> dict[int, str]:
    """The ``wanted`` lines of a file given line by line (``\n`` endings kept)."""
    found: dict[int, str] = {}
    if not wanted:
        return found
    last = max(wanted)
    for number, chunk in enumerate(lines, 1):
        if number > last:
            break
        if number in wanted:
            found[number] = _line_text(
                chunk.encode("utf-8", "surrogateescape") if isinstance(chunk, str) else chunk, number
            )
    return found


def stdin_streams() -> bool:
    """True when standard input is a pipe or a terminal (not a file or a buffer): ``check -``
    then reports each finding as soon as its line has arrived."""
    try:
        return not sys.stdin.buffer.seekable()
    except (AttributeError, OSError, ValueError):
        return False


def _settings_of(
    settings: Settings | None,
    item: str,
    select: Iterable[str] | None,
    ignore: Iterable[str] | None,
    max_line: int,
) -> tuple[Iterable[str] | None, Iterable[str] | None, int, bool]:
    if settings is None:
        return select, ignore, max_line, False
    return settings.select, settings.ignore_for(item), settings.max_line, settings.strict


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
    ``per-file-ignores`` apply to ``item``. The input is read as a stream: only the
    findings are kept (and, for standard input, the lines that have findings)."""
    reports = stream_input(
        item, blobs=blobs, select=select, ignore=ignore, max_line=max_line, settings=settings, stream=False
    )
    return list(reports)[-1]


def stream_input(
    item: str,
    *,
    blobs: Path | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    settings: Settings | None = None,
    stream: bool = True,
) -> Iterator[FileReport]:
    """Check one input as it is read. With ``stream``, first yield one partial report per
    finding (with its source line) as soon as it is known, in the order they become known
    (:func:`bbox_lark.iter_check`), then the whole report (every finding, sorted) last;
    without ``stream``, only the whole report. Meant for standard input: a file's partial
    reports would read the file again to show their line."""
    from bbox_lark.api import checker_for, run
    from bbox_lark.syntax.record import iter_records

    select, ignore, max_line, strict = _settings_of(settings, item, select, ignore, max_line)
    try:
        file = open_input(item)
    except InputError as error:
        yield FileReport(item, error=str(error), strict=strict)
        return
    tee = _Tee(file) if item == "-" else None
    found: list[Diagnostic] = []
    try:
        lines: Iterable[bytes] = file if tee is None else tee
        checker = checker_for(
            path=None if item == "-" else Path(item),
            blobs=blobs,
            select=select,
            ignore=ignore,
            stream=stream,
            allowed_secrets=settings.allowed_secrets if settings is not None else (),
        )
        try:
            diagnostics = run(checker, iter_records(lines, max_line=max_line))
            if not stream:
                found = list(diagnostics)
            else:
                held: list[Diagnostic] = []  # waiting for the end to find their line
                for diagnostic in diagnostics:
                    found.append(diagnostic)
                    text = tee.line(diagnostic.line) if tee is not None else None
                    if text is None or held:
                        held.append(diagnostic)
                    else:
                        yield FileReport(
                            item, (diagnostic,), strict=strict, lines={diagnostic.line: text}, partial=True
                        )
                if held:
                    shown = tee.lines({d.line for d in held}) if tee is not None else None
                    for diagnostic in held:
                        yield FileReport(item, (diagnostic,), strict=strict, lines=shown, partial=True)
                found.sort(key=lambda d: (d.line, d.col, d.code))
        except OSError as error:
            yield FileReport(item, error=f"{item}: cannot read: {error.strerror or error}", strict=strict)
            return
        except Exception as error:  # a bug in bbox-lark: this file's report says so, the run goes on
            found = [internal_error(error)]
        shown = tee.lines({d.line for d in found}) if tee is not None and found else None
        yield FileReport(item, tuple(found), strict=strict, lines=shown)
    finally:
        if tee is not None:
            tee.close()
        if file is not sys.stdin.buffer:
            file.close()


class _Tee:
    """Standard input line by line, copied to a spool file (memory up to 1 MiB, then a
    temporary file) so that the lines with findings can be shown at the end, and the most
    recent lines (up to 1 MiB of them) at hand for findings reported as their line comes."""

    BUDGET = 1 << 20

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.spool = tempfile.SpooledTemporaryFile(max_size=self.BUDGET)  # noqa: SIM115 (close())
        #: The most recent lines' bytes (decoded when shown: a long line is not held twice).
        self.recent: dict[int, bytes] = {}
        self._sizes: deque[tuple[int, int]] = deque()
        self._held = 0

    def __iter__(self) -> Iterator[bytes]:
        recent, sizes = self.recent, self._sizes
        number = 0
        for chunk in _lines_of(self.file):
            number += 1  # noqa: SIM113 (enumerate() holds the last line in its tuple)
            self.spool.write(chunk)
            recent[number] = chunk
            sizes.append((number, len(chunk)))
            self._held += len(chunk)
            while self._held > self.BUDGET and len(sizes) > 1:
                old, size = sizes.popleft()
                del recent[old]
                self._held -= size
            yield chunk

    def line(self, number: int) -> str | None:
        """Line ``number``'s text, if it is among the most recent lines."""
        chunk = self.recent.get(number)
        return None if chunk is None else _line_text(chunk, number)

    def lines(self, wanted: set[int]) -> dict[int, str]:
        self.spool.seek(0)
        found = _pick_lines(self.spool, wanted)
        self.spool.seek(0, io.SEEK_END)
        return found

    def close(self) -> None:
        self.spool.close()


def _lines_of(file: IO[bytes]) -> Iterator[bytes]:
    """A binary stream's lines, each as soon as its ``\n`` has arrived (on a pipe,
    ``readline`` returns what one read gave once it holds a line break)."""
    return iter(file.readline, b"")


def _line_text(chunk: bytes, number: int) -> str:
    text = decode(chunk)
    if number == 1:
        text = text.removeprefix(BOM)
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


def _check_file(path: str, blobs: Path | None, settings: Settings) -> FileReport:
    """One file, in a worker process."""
    return check_input(path, blobs=blobs, settings=settings)


def check_inputs(
    inputs: Iterable[FoundInput],
    *,
    blobs: Path | None = None,
    jobs: Jobs | None = 1,
    progress: Progress | None = None,
) -> Iterator[FileReport]:
    """Check discovered inputs, each with its own settings, one report each, in order.

    ``jobs`` > 1 (``"auto"``/None: the cores) spreads the files over that many worker
    processes when the run is large enough (:func:`bbox_lark.files.runner.run_each`); a file of
    :data:`~bbox_lark.checks.parallel.SPLIT_MIN_BYTES` or more is checked here, in parts spread
    over the same workers. The reports come in the inputs' order whatever finishes first, so
    the output is the same as with one."""
    from bbox_lark.checks.parallel import SPLIT_MIN_BYTES
    from bbox_lark.files.runner import file_size, job_count, run_each

    items = list(inputs)
    workers = job_count(jobs)
    sizes = {item.path: file_size(item.path) for item in items if _is_file(item)}

    def far(item: FoundInput) -> Job | None:
        if not _is_file(item) or sizes[item.path] >= SPLIT_MIN_BYTES:
            return None  # here, in turn: standard input, unusable paths, large files
        return _check_file, (item.path, blobs, item.settings)

    def here(item: FoundInput, pool: Executor | None) -> FileReport:
        if pool is not None and _is_file(item) and sizes[item.path] >= SPLIT_MIN_BYTES:
            return _check_large(item, blobs, pool, workers)
        return _check_item(item, blobs)

    def failed(item: FoundInput, error: BaseException) -> FileReport:
        return FileReport(item.path, (internal_error(error),), strict=item.settings.strict)

    large = any(size >= SPLIT_MIN_BYTES for size in sizes.values())
    yield from run_each(
        items,
        far,
        here,
        failed,
        jobs=jobs,
        size=lambda item: sizes.get(item.path, 0),
        needs_pool=large,
        progress=progress,
    )


def _is_file(item: FoundInput) -> bool:
    return item.problem is None and item.path != "-"


def _check_item(item: FoundInput, blobs: Path | None) -> FileReport:
    if item.problem is not None:
        return FileReport(item.path, error=item.problem, strict=item.settings.strict)
    return check_input(item.path, blobs=blobs, settings=item.settings)


def _check_large(item: FoundInput, blobs: Path | None, pool: Executor, workers: int) -> FileReport:
    """A large file, its parts checked in parallel: the findings of one pass."""
    from bbox_lark.checks.parallel import Options, check_split, plan

    settings = item.settings
    options = Options(
        blobs,
        settings.select,
        settings.ignore_for(item.path),
        settings.max_line,
        allowed_secrets=frozenset(settings.allowed_secrets),
    )
    try:
        planned = plan(item.path, settings.max_line)
        if planned is None:
            return _check_item(item, blobs)
        found = check_split(item.path, options, pool, workers + 1, planned)
    except OSError as error:
        return FileReport(item.path, error=f"{item.path}: cannot read: {error.strerror or error}")
    except Exception as error:  # a bug in bbox-lark: this file's report says so, the run goes on
        return FileReport(item.path, (internal_error(error),), strict=settings.strict)
    return FileReport(item.path, tuple(found), strict=settings.strict)


def check_paths(
    paths: Iterable[str],
    *,
    blobs: Path | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    max_line: int | None = None,
    settings: Resolver | None = None,
    jobs: Jobs | None = None,
) -> Iterator[FileReport]:
    """Check every file named by ``paths`` (a folder means every bbox file below it; ``-``
    is standard input), one report per input, in order.

    ``settings`` gives each file its settings (configuration files, command-line
    overrides); without it no configuration file is read and ``select``, ``ignore`` and
    ``max_line`` apply to every file. ``jobs``: worker processes (see :func:`check_inputs`;
    None: the ``jobs`` setting of the current folder's configuration, else the number of
    cores). Files are found before this returns, so a bad
    configuration raises :class:`~bbox_lark.files.config.ConfigError` here, before any report."""
    from bbox_lark.files.config import Overrides, Resolver, split_option
    from bbox_lark.files.discover import discover

    if settings is None:
        selected, ignored = split_option(select), split_option(ignore)
        overrides = Overrides(
            select=tuple(code.upper() for code in selected) if selected is not None else None,
            ignore=tuple(code.upper() for code in ignored) if ignored is not None else None,
            max_line=max_line,
        )
        settings = Resolver(overrides, isolated=True)
    if jobs is None:
        jobs = settings.for_path("-").jobs
    return check_inputs(discover(list(paths), settings), blobs=blobs, jobs=jobs)


def run_exit_code(reports: Iterable[FileReport], strict: bool | None = None) -> int:
    """The run's exit code: the highest over its files (docs/reference.md#exit-codes)."""
    return max((report.exit_code(strict) for report in reports), default=EXIT_OK)


# -- the loop every writing command shares (fmt, fix, convert, and new ones) -------------


def find_inputs(paths: Iterable[str], *, sessions: bool = False, **options: Any) -> list[FoundInput]:
    """The inputs of a command that searches folders (as ``check`` does), each with its
    settings: configuration files, then the command line's ``options`` (those of
    :func:`bbox_lark.files.config.resolver_from_options`: ``config``, ``isolated``, ``exclude``,
    ``extend_exclude``, ``max_line``, ...). Raises :class:`~bbox_lark.files.config.ConfigError`
    for a bad option value or configuration file."""
    from bbox_lark.files.config import resolver_from_options
    from bbox_lark.files.discover import discover

    return discover(list(paths), resolver_from_options(**options), sessions=sessions)


@dataclass(frozen=True, slots=True)
class InputRead:
    """One input of a command, read whole: its bytes, or why it could not be read."""

    item: FoundInput
    data: bytes = b""
    #: Why the input could not be used (exit 2); None when :attr:`data` holds it.
    error: str | None = None

    @property
    def path(self) -> Path | None:
        """The file's path (None for standard input)."""
        return None if self.item.stdin else Path(self.item.path)


def read_inputs(inputs: Iterable[FoundInput]) -> Iterator[InputRead]:
    """Each input's bytes, one at a time, in order: the one loop over inputs of the
    commands that read files whole. An input that cannot be used (a problem found by
    discovery, a missing or unreadable file) comes with its :attr:`InputRead.error`."""
    from bbox_lark.files.inputs import read_input

    for item in inputs:
        if item.problem is not None:
            yield InputRead(item, error=item.problem)
            continue
        try:
            yield InputRead(item, read_input(item.path))
        except InputError as error:
            yield InputRead(item, error=str(error))


def write_file(target: str | Path, data: bytes) -> str | None:
    """Write ``data`` to ``target`` atomically (:func:`bbox_lark.files.atomic.write_atomic`); the
    message to show when it cannot be (``PATH: cannot write: why``), else None."""
    from bbox_lark.files.atomic import write_atomic

    try:
        write_atomic(target, data)
    except OSError as error:
        return cannot_write(target, error)
    return None


def cannot_write(target: str | Path, error: OSError) -> str:
    """The message for a path that cannot be written."""
    return f"{target}: cannot write: {error.strerror or error}"


# -- parse: one file as the command shows it ---------------------------------------------


def in_header(document: Document, diagnostic: Diagnostic) -> bool:
    """True when a finding is about the header: on a header line, or a header check's
    finding when there is no header at all (E004 at line 1)."""
    if diagnostic.line <= len(document.header_lines):
        return True
    if document.header_lines:
        return False
    from bbox_lark.checks import registry

    info = registry().get(diagnostic.code)
    return info is not None and info.family == "header"


@dataclass(frozen=True, slots=True)
class Parsed:
    """What ``bbox-lark parse`` shows of one file (:func:`parse_path`)."""

    #: The input as shown (``<stdin>`` for ``-``).
    shown: str
    document: Document
    #: Show the header, the body.
    header: bool = True
    body: bool = True

    def json(self) -> dict[str, Any]:
        """``parse --json`` (docs/schema/parse.schema.json): the parts shown, and the
        findings about them."""
        from bbox_lark.syntax.jsonout import diagnostic_to_json, document_to_json

        document = self.document
        value = document_to_json(document, header=self.header, body=self.body, diagnostics=False)
        value["diagnostics"] = [
            diagnostic_to_json(d)
            for d in document.diagnostics
            if (self.header if in_header(document, d) else self.body)  # findings about the part shown
        ]
        return {"path": self.shown, **value}

    @property
    def said(self) -> tuple[Said, ...]:
        """How many errors the file has (``check`` lists them), when it has any."""
        return errors_note(self.document.diagnostics, self.shown)

    @property
    def exit_code(self) -> int:
        """1 when the file has errors, else 0."""
        return EXIT_FINDINGS if self.said else EXIT_OK


def parse_path(
    file: str, *, header_only: bool = False, body_only: bool = False, max_line: int | None = None
) -> Parsed:
    """``bbox-lark parse`` of ``file`` (``-``: standard input): the whole file, or only its
    header or its body. :class:`~bbox_lark.errors.ConfigError` for both ``header_only`` and
    ``body_only`` or a ``max_line`` below 1; :class:`InputError` when ``file`` cannot be read
    (a folder among them)."""
    from bbox_lark.api import parse
    from bbox_lark.errors import ConfigError
    from bbox_lark.files.config import check_max_line
    from bbox_lark.files.inputs import is_dir, read_input
    from bbox_lark.syntax.source import shown_text

    if header_only and body_only:
        raise ConfigError("--header and --body exclude each other; give one or neither")
    limit = DEFAULT_MAX_LINE if max_line is None else check_max_line(max_line, "--max-line")
    if is_dir(file):
        raise InputError(f"{file}: is a directory; give one file (or - for stdin)")
    data = read_input(file)
    document = parse(data, path=None if file == "-" else Path(file), max_line=limit)
    shown = "<stdin>" if file == "-" else shown_text(file)
    return Parsed(shown, document, header=not body_only, body=not header_only)
