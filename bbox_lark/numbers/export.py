"""``bbox-lark export``: many sessions as Parquet (or CSV) tables, on every core, in bounded
memory (``docs/analytics.md``).

Files are found as ``check`` finds them (:mod:`bbox_lark.files.discover`). Each file's rows are
built in a worker process (:func:`bbox_lark.numbers.tables.session_rows`) and sent back as plain
columns; the parent takes them in the inputs' order, at most a few files in flight, and
appends them to one writer per table, which writes a row group each time it holds
:data:`BATCH_ROWS` rows. Memory therefore depends on the largest file and the batch size,
not on how many files there are. Each table is written to a ``.partial`` file that takes
its name once the run ends, so an interrupted run never leaves a table that looks whole.

A file that cannot be read, or that bbox-lark fails on, never stops the run: it gets its
``sessions`` row (and its findings) and the run's summary counts it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from bbox_lark._classes import dataclass
from bbox_lark.numbers.csvtable import CsvTable
from bbox_lark.numbers.tables import (
    TABLE_NAMES,
    Columns,
    SessionRows,
    arrow_schema,
    arrow_table,
    empty_columns,
    need,
)

if TYPE_CHECKING:
    from bbox_lark.files.config import Jobs, Resolver
    from bbox_lark.files.discover import FoundInput as Input
    from bbox_lark.files.runner import Job, Progress

Format = Literal["parquet", "csv"]
FORMATS: tuple[Format, ...] = ("parquet", "csv")

#: Rows a table's writer holds before it writes them out (one Parquet row group).
BATCH_ROWS = 20_000
#: Files of at least this many bytes are read as a stream, in the parent, when their turn
#: comes (as ``check`` does with the files it splits): their rows never travel whole.
STREAM_MIN_BYTES = 8 << 20
#: Files in flight per worker process: enough to keep the workers busy, few enough that the
#: rows waiting for their turn stay small (fewer than the runner's default: a file's rows are
#: larger than other commands' results).
IN_FLIGHT_PER_WORKER = 2


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What an export wrote."""

    #: The folder written to.
    out: Path
    format: str
    #: Files read (sessions rows), including those read with problems.
    files: int
    #: Rows written, by table.
    rows: dict[str, int]
    #: Files that could not be read at all, as (path, why).
    unreadable: tuple[tuple[str, str], ...] = ()
    #: Files read, but not faithfully, as (path, why).
    failed: tuple[tuple[str, str], ...] = ()
    #: Files bbox-lark failed on (an ``E016`` finding: a bug to report), as (path, why).
    crashed: tuple[tuple[str, str], ...] = ()
    #: Files not exported because they hold a provider credential (S001; docs/reference.md#secrets), as
    #: (path, one ``line:col: S001 kind`` per credential, never the key).
    refused: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Inputs counted in another, not read again (each session once): as (path, the input
    #: it is counted in).
    counted_in: tuple[tuple[str, str], ...] = ()

    @property
    def exit_code(self) -> int:
        """2 when an input could not be read or bbox-lark failed on one (as ``check``), 1
        when a file was not read faithfully, else 0."""
        if self.unreadable or self.crashed:
            return 2
        return 1 if self.failed or self.refused else 0

    def line(self) -> str:
        """The one-line summary."""
        tables = ", ".join(f"{self.rows[name]} {name}" for name in TABLE_NAMES if name != "sessions")
        problems = ""
        if self.failed:
            problems += f"; {len(self.failed)} not read faithfully"
        if self.unreadable:
            problems += f"; {len(self.unreadable)} unreadable"
        if self.crashed:
            problems += f"; {len(self.crashed)} failed inside bbox-lark (E016)"
        if self.refused:
            problems += f"; {len(self.refused)} not exported (provider credentials)"
        if self.counted_in:
            problems += (
                f"; {len(self.counted_in)} counted once, in another input (the same file, or a subagent log)"
            )
        return f"{self.files} session(s) → {self.out}/ ({self.format}: {tables}){problems}"


class TableWriter:
    """Rows of one table appended in batches to a Parquet file, or written as they come to a
    CSV file (:class:`~bbox_lark.numbers.csvtable.CsvTable`: the standard library, no
    pyarrow, the bytes pyarrow's CSV writer writes)."""

    def __init__(self, table: str, path: Path, format: Format, batch_rows: int = BATCH_ROWS) -> None:
        self.table = table
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        self.batch_rows = batch_rows
        self.columns: Columns = empty_columns(table)
        self.held = 0
        self.rows = 0
        self.csv: CsvTable | None = None
        if format == "parquet":
            parquet = need("pyarrow.parquet", "export")
            self.writer: Any = parquet.ParquetWriter(self.partial, arrow_schema(table), compression="zstd")
        else:
            self.writer = self.csv = CsvTable(table, self.partial)

    def add(self, columns: Columns) -> None:
        if self.csv is not None:
            self.csv.write(columns)
            self.rows += len(columns["session_id"])
            return
        for name, values in columns.items():
            self.columns[name].extend(values)
        added = len(columns["session_id"])
        self.held += added
        self.rows += added
        if self.held >= self.batch_rows:
            self.flush()

    def flush(self) -> None:
        if self.held:
            self.writer.write_table(arrow_table(self.table, self.columns))
            self.columns = empty_columns(self.table)
            self.held = 0

    def close(self, keep: bool = True) -> None:
        """Write what is held and give the file its name; without ``keep`` (the run was
        interrupted), drop it instead."""
        if keep:
            self.flush()
        self.writer.close()
        if keep:
            os.replace(self.partial, self.path)
        else:
            self.partial.unlink(missing_ok=True)


#: Where a streamed file's chunks of rows go (:func:`~bbox_lark.numbers.tables.stream_session_rows`).
Emit = Callable[[dict[str, Columns]], None]


#: What export does with a file that holds a provider credential (S001): refuse it (no row
#: written for it), redact every secret first (``--redact``), or keep it (``--keep-secrets``).
Secrets = Literal["refuse", "redact", "keep"]


def _rows_of(
    path: str,
    max_line: int,
    select: Any,
    ignore: Any,
    allowed: Any = (),
    secrets: Secrets = "refuse",
    emit: Emit | None = None,
) -> SessionRows:
    """One file's rows (in a worker process, or here); never raises. With ``emit``, the file
    is read as a stream and its ``events`` and ``calls`` rows go there in chunks. A file in
    another format ``convert`` reads (a Claude Code session …) is read through its bbox
    form (:func:`bbox_lark.convert.files.bbox_file`), its rows keeping the file's own path.
    A FIFO or ``<(…)`` is read once, into a temporary file (:func:`bbox_lark.files.inputs.spooled`)."""
    from bbox_lark.convert.atif.lines import session_address
    from bbox_lark.files.inputs import InputError, spooled, why_not
    from bbox_lark.numbers.tables import unread_rows

    if session_address(path) is not None:  # FILE#LINE: one trajectory of an ATIF JSON Lines file
        return _rows_of_file(path, path, max_line, select, ignore, allowed, secrets, emit)
    refused = why_not(path)
    if refused is not None:
        return unread_rows(path, refused)
    try:
        with spooled(path) as source:
            return _rows_of_file(path, source, max_line, select, ignore, allowed, secrets, emit)
    except InputError as error:
        return unread_rows(path, str(error))


def _rows_of_file(
    path: str,
    source: str,
    max_line: int,
    select: Any,
    ignore: Any,
    allowed: Any,
    secrets: Secrets,
    emit: Emit | None,
) -> SessionRows:
    """:func:`_rows_of` of ``path``, whose bytes ``source`` (a regular file) holds."""
    from bbox_lark.convert import ConvertError
    from bbox_lark.convert.base import Skipped
    from bbox_lark.convert.files import bbox_file, foreign_format
    from bbox_lark.numbers.tables import unread_rows

    read_as = foreign_format(source)
    if read_as is None:
        return _bbox_rows(path, source, max_line, select, ignore, allowed, secrets, emit)
    skipped: list[Skipped] = []
    try:
        with bbox_file(source, from_=read_as, max_line=max_line, on_skipped=skipped.append) as converted:
            rows = _bbox_rows(path, str(converted), max_line, select, ignore, allowed, secrets, emit)
    except ConvertError as error:
        return unread_rows(path, f"{path}: {error}")
    if skipped and not rows.unreadable and not rows.credentials:
        # Not read faithfully: the records the reader skipped are in no table; say so.
        first = skipped[0]
        lost = f"{len(skipped)} record(s) the {read_as} reader skipped (line {first.line}: {first.message})"
        sessions = rows.tables["sessions"]
        old = sessions["problem"][0]
        sessions["problem"][0] = lost if old is None else f"{old}; {lost}"
        sessions["faithful"][0] = False
        rows.ok = False
    return rows


def _bbox_rows(
    path: str,
    source: str,
    max_line: int,
    select: Any,
    ignore: Any,
    allowed: Any,
    secrets: Secrets,
    emit: Emit | None,
) -> SessionRows:
    from bbox_lark.numbers.tables import session_rows, stream_session_rows, unread_rows

    try:
        with open(source, "rb") as file:
            if emit is not None and secrets != "redact":
                if secrets == "refuse":
                    found = _credentials(file, allowed)
                    if found:
                        return _refused(path, found)
                    file.seek(0)
                return stream_session_rows(
                    path, file, emit, max_line=max_line, select=select, ignore=ignore, allowed_secrets=allowed
                )
            data = file.read()
    except OSError as error:
        why = "no such file or directory" if isinstance(error, FileNotFoundError) else error.strerror
        return unread_rows(path, f"{path}: cannot read: {why or error}")
    if secrets == "redact":
        from bbox_lark.secrets.redaction import redact
        from bbox_lark.syntax.source import decode

        done = redact(decode(data), allowed_secrets=allowed)
        if done.changed:
            data = done.text.encode("utf-8", "surrogateescape")
    rows = session_rows(path, data, max_line=max_line, select=select, ignore=ignore, allowed_secrets=allowed)
    if secrets == "refuse":
        # The credentials are judged by the pass that made the rows (its secrets rule, before
        # selection and suppressions); the file is scanned again only when that rule did not
        # run or the read failed.
        judged = rows.provider_credentials
        if judged is None:
            from bbox_lark.syntax.source import decode

            found = _credentials([decode(data)], allowed)
        else:
            found = tuple(f"{line}:{col}: S001 {kind}" for line, col, kind in judged)
        if found:
            return _refused(path, found)
    return rows


def _credentials(chunks: Iterable[bytes | str], allowed: Any) -> tuple[str, ...]:
    """Each provider credential in ``chunks`` (a whole text, or a file's lines) as
    ``line:col: S001 kind``."""
    from bbox_lark.secrets.redaction import locate
    from bbox_lark.secrets.scanner import ERROR, find_secrets, might_hold_secrets

    found: list[str] = []
    for number, chunk in enumerate(chunks):
        text = chunk if isinstance(chunk, str) else chunk.decode("utf-8", "surrogateescape")
        if might_hold_secrets(text):
            secrets = [s for s in find_secrets(text, allowed_secrets=allowed) if s.severity == ERROR]
            found += [f"{number + line}:{col}: S001 {s.kind}" for line, col, s in locate(text, secrets)]
    return tuple(found)


def _refused(path: str, found: tuple[str, ...]) -> SessionRows:
    """No row at all for a file that holds a provider credential."""
    from bbox_lark.numbers.tables import empty_columns

    tables = {name: empty_columns(name) for name in TABLE_NAMES}
    return SessionRows(path, tables, ok=False, credentials=found)


def _size(item: Input) -> int:
    if item.problem is not None or item.stdin:
        return 0
    try:
        return os.stat(item.path).st_size
    except OSError:
        return 0


def input_bytes(inputs: Iterable[Input]) -> int:
    """The size of the usable files among ``inputs``, in bytes."""
    return sum(_size(item) for item in inputs)


def _job(item: Input, secrets: Secrets) -> tuple[str, int, Any, Any, Any, Secrets]:
    settings = item.settings
    path = item.path
    return (
        path,
        settings.max_line,
        settings.select,
        settings.ignore_for(path),
        settings.allowed_secrets,
        secrets,
    )


def iter_rows(
    inputs: Iterable[Input],
    jobs: Jobs | None = None,
    emit: Emit | None = None,
    secrets: Secrets = "refuse",
    progress: Progress | None = None,
) -> Iterator[SessionRows]:
    """Each input's rows, in the inputs' order; files spread over ``jobs`` worker processes
    (None or ``"auto"``: every core) with at most a few in flight. Standard input is not a
    session file here: it is reported unreadable.

    With ``emit``, a file of :data:`STREAM_MIN_BYTES` or more is read here, when its turn
    comes, as a stream: its ``events`` and ``calls`` rows go to ``emit`` in chunks as they
    are read, and only the rest is yielded, so no whole large file is ever held."""
    from bbox_lark.checks.workflow import internal_error
    from bbox_lark.files.runner import run_each
    from bbox_lark.numbers.tables import unread_rows

    items = [item for item in inputs if item.counted_in is None]  # each session once

    def far(item: Input) -> Job | None:
        large = emit is not None and _size(item) >= STREAM_MIN_BYTES  # read here, streamed
        if item.problem is not None or item.stdin or large:
            return None
        return _rows_of, _job(item, secrets)

    def here(item: Input, pool: object) -> SessionRows:
        if item.problem is not None:
            return unread_rows(item.path, item.problem)
        if item.stdin:
            return unread_rows(item.path, "-: export reads files, not standard input")
        return _rows_of(*_job(item, secrets), emit if _size(item) >= STREAM_MIN_BYTES else None)

    def failed(item: Input, error: BaseException) -> SessionRows:
        # its worker died: this file's rows say so, the run goes on
        return unread_rows(item.path, "bbox-lark failed on this file (E016)", [internal_error(error)])

    yield from run_each(
        items,
        far,
        here,
        failed,
        jobs=jobs,
        size=_size,
        in_flight_per_worker=IN_FLIGHT_PER_WORKER,
        progress=progress,
    )


def export_inputs(
    inputs: Iterable[Input],
    out: Path,
    *,
    format: Format = "parquet",
    jobs: Jobs | None = None,
    batch_rows: int = BATCH_ROWS,
    secrets: Secrets = "refuse",
    progress: Progress | None = None,
) -> ExportSummary:
    """Write the four tables of ``inputs`` to ``out/<table>.<format>`` (the folder is made
    if needed); ``progress`` is told after each file
    (:data:`bbox_lark.files.runner.Progress`). Raises
    :class:`~bbox_lark.numbers.tables.MissingExtra` without pyarrow (Parquet; CSV needs no
    extra), and ``OSError`` when ``out`` cannot be written; a bad input file never raises."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    if format == "parquet":
        need("pyarrow", "export")
    listed = list(inputs)
    inputs = listed
    out.mkdir(parents=True, exist_ok=True)
    writers: dict[str, TableWriter] = {}
    done = False
    files = 0
    unreadable: list[tuple[str, str]] = []
    failed: list[tuple[str, str]] = []
    crashed: list[tuple[str, str]] = []
    refused: list[tuple[str, tuple[str, ...]]] = []
    try:
        for name in TABLE_NAMES:
            writers[name] = TableWriter(name, out / f"{name}.{format}", format, batch_rows)

        def emit(chunk: dict[str, Columns]) -> None:
            for name, columns in chunk.items():
                writers[name].add(columns)

        for rows in iter_rows(inputs, jobs, emit, secrets, progress):
            files += 1
            if rows.credentials:
                refused.append((rows.path, rows.credentials))
                continue
            for name in TABLE_NAMES:
                writers[name].add(rows.tables[name])
            if not rows.ok:
                why = rows.tables["sessions"]["problem"][0] or "not read faithfully"
                (unreadable if rows.unreadable else crashed if rows.crashed else failed).append(
                    (rows.path, why)
                )
        done = True
    finally:
        for writer in writers.values():
            writer.close(keep=done)
    return ExportSummary(
        out=out,
        format=format,
        files=files,
        rows={name: writer.rows for name, writer in writers.items()},
        unreadable=tuple(unreadable),
        failed=tuple(failed),
        crashed=tuple(crashed),
        refused=tuple(refused),
        counted_in=tuple((item.path, item.counted_in) for item in listed if item.counted_in is not None),
    )


def export_tables(
    paths: Iterable[str],
    out: str | Path,
    *,
    format: Format = "parquet",
    jobs: Jobs | None = None,
    resolver: Resolver | None = None,
    secrets: Secrets = "refuse",
    progress: Progress | None = None,
) -> ExportSummary:
    """Export the sessions named by ``paths`` (files, folders searched as ``check`` searches
    them, globs) to ``out``: see :func:`export_inputs`. ``resolver`` gives each file its
    settings (default: no configuration file read). ``secrets``: a file that holds a
    provider credential is refused (no row for it; exit 1), redacted first, or kept."""
    from bbox_lark.convert.atif.lines import expand_sessions
    from bbox_lark.files.config import Resolver
    from bbox_lark.files.discover import discover

    inputs = expand_sessions(discover(list(paths), resolver or Resolver(isolated=True), sessions=True))
    return export_inputs(inputs, Path(out), format=format, jobs=jobs, secrets=secrets, progress=progress)
