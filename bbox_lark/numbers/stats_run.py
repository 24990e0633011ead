"""``stats`` over many files, on all cores: each input read, parsed and counted
(:func:`bbox_lark.numbers.stats.compute_stats`) in input order, in worker processes when the run is
large enough, through the one runner (:func:`bbox_lark.files.runner.run_each`);
:func:`stats_paths` is the whole command (what it shows, its JSON and its exit code)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.files.discover import FoundInput
from bbox_lark.files.runner import Job, Jobs, Progress, file_size, run_each
from bbox_lark.files.said import Said, errors_note
from bbox_lark.numbers.stats import Stats, StatsCounter
from bbox_lark.syntax.nodes import Diagnostic
from bbox_lark.syntax.parser import Head
from bbox_lark.syntax.record import Record, RecordStream


@dataclass(frozen=True, slots=True)
class FileStats:
    """One input's statistics (``stats``), or why it could not be read."""

    #: The input's path as given or found (``-``: standard input).
    path: str
    stats: Stats | None = None
    #: The file's error diagnostics (``stats`` exits 1 when there are any).
    errors: tuple[Diagnostic, ...] = ()
    #: Why the input could not be read (then ``stats`` is None).
    problem: str | None = None
    #: The format the input was converted from to be counted (``claude_code`` …), or None
    #: for a bbox file (:func:`bbox_lark.convert.files.foreign_format`).
    read_as: str | None = None
    #: The records that conversion could not read (``FILE:LINE: skipped: …``; exit 1).
    skipped: tuple[str, ...] = ()
    #: The input this one is counted in (the same file named before, or the Claude Code
    #: session a subagent log belongs to): then it is not counted again (``stats`` says so).
    counted_in: str | None = None
    counted_why: str | None = None

    @property
    def exit_code(self) -> int:
        """``stats``'s exit code for this input (docs/reference.md#exit-codes): 2 unreadable,
        1 records skipped or errors found (as ``check`` would), else 0 (an input counted in
        another included)."""
        if self.counted_in is not None:
            return 0
        if self.stats is None:
            return 2
        if self.skipped or any(d.severity == "error" for d in self.errors):
            return 1
        return 0


def file_stats(item: FoundInput) -> FileStats:
    """Read, parse and count one input (in a worker process with ``--jobs``). A file in
    another format ``convert`` reads (a Claude Code session …) is counted through its bbox
    form, as ``report`` shows it. A FIFO or ``<(…)`` is read once
    (:func:`bbox_lark.files.inputs.spooled`)."""
    from bbox_lark.convert.atif.lines import session_address
    from bbox_lark.files.inputs import InputError, spooled

    if item.problem is not None:
        return FileStats(item.path, problem=item.problem)
    if item.counted_in is not None:
        return FileStats(item.path, counted_in=item.counted_in, counted_why=item.counted_why)
    if item.stdin:
        return _counted(item, item.path)
    if session_address(item.path) is not None:  # FILE#LINE: one trajectory of an ATIF JSON Lines file
        return _file_stats(item, item.path)
    try:
        with spooled(item.path) as source:  # a FIFO or <(…) is read once, into a temporary file
            return _file_stats(item, source)
    except InputError as error:
        return FileStats(item.path, problem=str(error))


def _file_stats(item: FoundInput, source: str) -> FileStats:
    """:func:`file_stats` of ``item``, whose bytes ``source`` (a regular file) holds."""
    from bbox_lark.convert import ConvertError
    from bbox_lark.convert.base import Skipped
    from bbox_lark.convert.files import bbox_file, foreign_format

    read_as = foreign_format(source)
    if read_as is None:
        return _counted(item, source)
    skipped: list[Skipped] = []
    try:
        with bbox_file(
            source, from_=read_as, max_line=item.settings.max_line, on_skipped=skipped.append
        ) as path:
            counted = _counted(item, str(path))
    except ConvertError as error:
        return FileStats(item.path, problem=f"{item.path}: {error}")
    except OSError as error:
        return FileStats(item.path, problem=f"{item.path}: cannot read: {error.strerror or error}")
    return replace(counted, read_as=read_as, skipped=tuple(record.render(item.path) for record in skipped))


def _counted(item: FoundInput, source: str) -> FileStats:
    """Check and count ``source`` (a bbox file, ``-``) in one pass as it is read: no document
    is built, so memory is bounded by the longest line and what the counts keep
    (:class:`~bbox_lark.numbers.stats.StatsCounter`), not by the file."""
    from bbox_lark.api import checker_for, run
    from bbox_lark.files.inputs import InputError, open_input, problem
    from bbox_lark.syntax.record import iter_records

    try:
        file = open_input(source)
    except InputError as error:
        return FileStats(item.path, problem=str(error))
    path = None if item.stdin else Path(item.path)
    settings = item.settings
    checker = checker_for(
        path,
        None,
        settings.select,
        settings.ignore_for(path),
        allowed_secrets=settings.allowed_secrets,
    )
    stream = iter_records(file, max_line=settings.max_line)  # what check reads: no node built
    counting = _Counting(stream)
    try:
        errors = tuple(d for d in run(checker, stream, counting) if d.severity == "error")
    except OSError as error:
        return FileStats(item.path, problem=problem(item.path, error))
    finally:
        if file is not sys.stdin.buffer:
            file.close()
    head = stream.head
    assert head is not None
    return FileStats(item.path, counting.counter(head).finish(head.header_lines), errors)


class _Counting:
    """The keeper :func:`bbox_lark.api.run` hands each record to: a
    :class:`~bbox_lark.numbers.stats.StatsCounter`, made once the stream's header is known."""

    def __init__(self, stream: RecordStream) -> None:
        self._stream = stream
        self._counter: StatsCounter | None = None
        self.append: Callable[[Record], None] = self._first

    def _first(self, node: Record, /) -> None:
        head = self._stream.head
        assert head is not None
        self.counter(head).append(node)

    def counter(self, head: Head) -> StatsCounter:
        if self._counter is None:
            self._counter = StatsCounter(head.header_info.fields if head.header_info is not None else {})
            self.append = self._counter.append
        return self._counter


def stats_inputs(
    inputs: Iterable[FoundInput], *, jobs: Jobs | None = 1, progress: Progress | None = None
) -> Iterator[FileStats]:
    """Each input's :class:`FileStats`, in the inputs' order. ``jobs`` > 1 (``"auto"``/None:
    the cores) counts the files in that many worker processes when the run is large enough
    (:func:`bbox_lark.files.runner.run_each`); the results are the same whatever the number of
    jobs. Standard input, and an input counted in another, are done here."""

    def far(item: FoundInput) -> Job | None:
        if item.problem is None and item.counted_in is None and not item.stdin:
            return file_stats, (item,)
        return None

    def failed(item: FoundInput, error: BaseException) -> FileStats:
        # a worker died: this file says so, the run goes on
        return FileStats(item.path, problem=f"{type(error).__name__}: {error}")

    yield from run_each(
        inputs,
        far,
        lambda item, pool: file_stats(item),
        failed,
        jobs=jobs,
        size=lambda item: file_size(item.path),
        progress=progress,
    )


# -- the command: stats PATH... ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shown:
    """One input of a ``stats`` run as the command shows it: what is said before its table,
    the table's statistics (None: not counted), what is said after it."""

    #: The input as shown (``<stdin>`` for standard input; undecodable bytes escaped).
    path: str
    stats: Stats | None = None
    before: tuple[Said, ...] = ()
    after: tuple[Said, ...] = ()


@dataclass(frozen=True, slots=True)
class StatsRun:
    """What ``stats`` shows: each input (:class:`Shown`, in order), the totals over several
    files (None for one file named, or none counted), the JSON (``--json``; None when the
    run stopped at an input that could not be read) and the exit code."""

    shown: tuple[Shown, ...]
    total: Stats | None
    json: dict[str, Any] | None
    exit_code: int


def stats_paths(
    paths: list[str], *, jobs: str | int | None = None, progress: Progress | None = None, **options: Any
) -> StatsRun:
    """``bbox-lark stats PATH...``: the inputs found as ``stats`` finds them (every file
    ``convert`` reads, each session once; ``options`` as :func:`bbox_lark.checks.workflow.find_inputs`
    takes them), counted on ``jobs`` processes (None: the configuration's ``jobs``). One file
    named that cannot be read ends the run (exit 2); over several, the others are counted.
    Raises :class:`~bbox_lark.files.config.ConfigError` for a bad option or configuration."""
    from bbox_lark.checks.workflow import find_inputs
    from bbox_lark.convert.atif.lines import expand_sessions
    from bbox_lark.files.config import cli_overrides
    from bbox_lark.files.discover import names_one_file
    from bbox_lark.numbers.stats import combine_stats, stats_run_json
    from bbox_lark.syntax.source import shown_text

    inputs = expand_sessions(find_inputs(paths, sessions=True, **options))  # a session per trajectory
    chosen = cli_overrides(jobs=jobs).jobs
    if chosen is None and inputs:  # the configuration's `jobs`, as `check` reads it
        chosen = inputs[0].settings.jobs
    one_file = names_one_file(paths)
    code, shown = 0, []
    counted: list[tuple[str, Stats]] = []
    unreadable: list[dict[str, str]] = []
    merged: list[dict[str, str]] = []
    for item in list(stats_inputs(inputs, jobs=chosen, progress=progress)):
        path = shown_text("<stdin>" if item.path == "-" else item.path)
        if item.counted_in is not None:  # each session once, and said so
            into, why = shown_text(item.counted_in), item.counted_why or ""
            shown.append(Shown(path, before=(Said(f"{path}: counted once, in {into} ({item.counted_why})"),)))
            merged.append({"path": path, "counted_in": into, "why": why})
            continue
        code = max(code, item.exit_code)
        if item.stats is None:
            problem = item.problem or "unreadable"
            shown.append(Shown(path, before=(Said(problem, "error"),)))
            if one_file:
                return StatsRun(tuple(shown), None, None, 2)
            unreadable.append({"path": path, "error": shown_text(problem)})
            continue
        counted.append((path, item.stats))
        shown.append(Shown(path, item.stats, _notes(item, path), errors_note(item.errors, path)))
    total = combine_stats([stats for _, stats in counted]) if counted and not one_file else None
    return StatsRun(tuple(shown), total, stats_run_json(counted, unreadable, merged), code)


def _notes(item: FileStats, path: str) -> tuple[Said, ...]:
    """What ``stats`` says before an input's table: the format it was read as, the records
    its conversion skipped (not counted)."""
    said = [Said(f"{path}: read as {item.read_as} (converted to bbox first)")] if item.read_as else []
    said.extend(Said(record) for record in item.skipped)
    if item.skipped:
        said.append(Said(f"{path}: {len(item.skipped)} record(s) skipped (not counted)", "!"))
    return tuple(said)
