"""Rewriting bbox files: what ``bbox-lark fmt`` and ``bbox-lark fix`` do, as library calls.

Both read each input (:func:`bbox_lark.checks.workflow.read_inputs`), decide with the one write
policy (:func:`bbox_lark.files.writepolicy.write_verdict`) and write atomically
(:func:`bbox_lark.checks.workflow.write_file`). Each yields one result per input, in order, as it
is done; the command renders each (:mod:`bbox_lark.cli.commands`) and picks the exit code from
:attr:`exit_code`. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from bbox_lark._classes import dataclass
from bbox_lark.checks.workflow import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, read_inputs, write_file
from bbox_lark.files.discover import FoundInput
from bbox_lark.files.inputs import is_regular
from bbox_lark.files.runner import Job, Jobs, Progress, file_size, run_each
from bbox_lark.files.writepolicy import WriteVerdict, write_verdict
from bbox_lark.fix.framework import Fixer, FixOutcome
from bbox_lark.fix.stream import Streamed
from bbox_lark.syntax.nodes import Diagnostic, Line
from bbox_lark.syntax.parser import Head, NodeStream
from bbox_lark.syntax.printer import format_line
from bbox_lark.syntax.source import BOM, encode, shown_text


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

    #: The canonical form differs from the input.
    changed: bool = False
    #: The unified diff (``--diff`` only; "" when nothing changed).
    diff: str = ""
    #: The formatted bytes for standard output (an input read from standard input or a
    #: pipe), at their start; open until the next result is asked for.
    output: IO[bytes] | None = None

    @property
    def exit_code(self) -> int:
        """2 unreadable or not written, 1 refused (or a change, when only checking), else 0."""
        if self.failed:
            return EXIT_USAGE
        if self.refused or (self.verdict is None and self.changed):
            return EXIT_FINDINGS
        return EXIT_OK


def fmt_inputs(
    inputs: Iterable[FoundInput],
    *,
    check: bool = False,
    diff: bool = False,
    force: bool = False,
    jobs: Jobs | None = 1,
    progress: Progress | None = None,
) -> Iterator[Formatting]:
    """Format each input in canonical form (docs/fmt.md), one result each, in order.

    ``check`` or ``diff``: write nothing (``diff`` gives each change as a unified diff).
    Otherwise a file is rewritten in place when it changed and the write policy allows it
    (``force`` writes a refused one); the bytes of standard input, or of a pipe (a FIFO,
    ``<(…)``: it cannot be rewritten in place), are handed back in :attr:`Formatting.output`,
    for standard output.

    Every input is read as a stream, line by line (docs/design.md, "Memory per command"):
    ``check`` keeps nothing; a rewrite spools the formatted bytes (in memory up to 1 MiB, then in a
    temporary file) until the write policy has seen the whole file. Only ``diff`` holds the
    whole input and its canonical form (a diff needs both).

    Many files go through the one runner (:func:`bbox_lark.files.runner.run_each`): ``jobs``
    worker processes (``"auto"``/None: the cores) when the run is large enough, each file
    formatted and written by one of them; the results are the same whatever the number of
    jobs. Standard input and pipes are done here."""

    def far(item: FoundInput) -> Job | None:
        return (fmt_one, (item, check, diff, force)) if _far(item) else None

    def failed(item: FoundInput, error: BaseException) -> Formatting:
        return Formatting(item, read_error=_crashed(item, error))

    for done in run_each(
        inputs,
        far,
        lambda item, pool: fmt_one(item, check, diff, force),
        failed,
        jobs=jobs,
        size=lambda item: file_size(item.path),
        progress=progress,
    ):
        yield done
        if done.output is not None:
            done.output.close()


def _far(item: FoundInput) -> bool:
    """Whether a worker process may do ``item``: a regular file (never standard input or a
    pipe, read once and written to standard output here)."""
    return item.problem is None and not item.stdin and is_regular(item.path)


def _crashed(item: FoundInput, error: BaseException) -> str:
    """The message of an input whose worker process failed (the run goes on)."""
    return f"{shown_text(item.shown)}: {type(error).__name__}: {error}"


def fmt_one(item: FoundInput, check: bool, diff: bool, force: bool) -> Formatting:
    """:func:`fmt_inputs` of one input (a worker process's job)."""
    from bbox_lark.api import format_text
    from bbox_lark.fix.framework import unified_diff

    if item.problem is not None:
        return Formatting(item, read_error=item.problem)
    if diff:
        [read] = read_inputs([item])
        if read.error is not None:
            return Formatting(item, read_error=read.error)
        formatted = format_text(read.data, path=read.path, max_line=item.settings.max_line)
        shown = formatted.changed
        text = unified_diff(formatted.old, formatted.new, shown_text(item.shown)) if shown else ""
        return Formatting(item, changed=formatted.changed, diff=text)
    if check:
        return _fmt_one(item, None, force)
    # Handed back open when it is standard output's (fmt_inputs closes it after use).
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL)  # noqa: SIM115
    done = _fmt_one(item, spool, force)
    if done.output is not spool:
        spool.close()
    return done


#: Bytes of formatted output ``fmt`` holds in memory before it spools them to a temporary file.
SPOOL = 1 << 20


def _fmt_one(item: FoundInput, spool: IO[bytes] | None, force: bool) -> Formatting:
    """Format one input as it is read; with ``spool`` (not ``--check``), decide and write."""
    from bbox_lark.api import checker_for, run
    from bbox_lark.files.inputs import InputError, open_input, problem
    from bbox_lark.syntax.parser import iter_nodes

    try:
        file = open_input(item.path)
    except InputError as error:
        return Formatting(item, read_error=str(error))
    path = None if item.stdin else Path(item.path)
    stream = iter_nodes(file, max_line=item.settings.max_line)
    sink = FormatSink(stream, spool)
    try:
        if spool is None:  # --check: only whether a line changes; no finding is wanted
            for node in stream:
                if not isinstance(node, Head):
                    sink.append(node)
            diagnostics: tuple[Diagnostic, ...] = ()
        else:
            diagnostics = tuple(run(checker_for(path, None, None, None), stream, sink))
        sink.close()
    except OSError as error:
        return Formatting(item, read_error=problem(item.path, error))
    finally:
        if file is not sys.stdin.buffer:
            file.close()
    if spool is None:
        return Formatting(item, changed=sink.changed)
    spool.seek(0)
    verdict = write_verdict(diagnostics, settings=item.settings, path=path, force=force)
    if verdict.refused:
        return Formatting(item, changed=sink.changed, verdict=verdict)
    if item.stdin or not is_regular(item.path):  # a pipe cannot be rewritten in place
        return Formatting(item, changed=sink.changed, verdict=verdict, output=spool)
    if not sink.changed:
        return Formatting(item, verdict=verdict)
    problem_text = copy_atomic(item.path, spool)
    return Formatting(
        item, changed=True, verdict=verdict, wrote=problem_text is None, write_error=problem_text
    )


def copy_atomic(target: str | Path, source: IO[bytes]) -> str | None:
    """Copy ``source`` (from where it stands) to ``target`` atomically; the message to show
    when it cannot be written, else None (:func:`bbox_lark.checks.workflow.write_file` for a stream)."""
    from bbox_lark.checks.workflow import cannot_write
    from bbox_lark.files.atomic import AtomicWriter

    try:
        with AtomicWriter(target) as writer:
            shutil.copyfileobj(source, writer.stream, 1 << 20)
            writer.commit()
    except OSError as error:
        return cannot_write(target, error)
    return None


class FormatSink:
    """The keeper :func:`bbox_lark.api.run` hands each node to, for ``fmt``: each body line
    in canonical form (what :func:`bbox_lark.syntax.printer.format_document` writes for it), the
    BOM and header as read, written to ``out`` (when given) as the lines pass, and whether
    any line changed. :meth:`close` once the stream has ended."""

    #: Formatted lines gathered before one write.
    BATCH = 512

    def __init__(self, stream: NodeStream, out: IO[bytes] | None) -> None:
        self._stream = stream
        self._out = out
        self._parts: list[str] = []
        self._started = False
        self.changed = False

    def _start(self) -> None:
        self._started = True
        head = self._stream.head
        assert head is not None
        if head.bom:
            self._parts.append(BOM)
        self._parts.extend(line.raw + line.eol for line in head.header_lines)

    def append(self, node: Line, /) -> None:
        if not self._started:
            self._start()
        text = format_line(node)
        eol = node.eol
        if text != node.raw:
            self.changed = True
        if not text and not eol:
            return
        if self._out is not None:
            parts = self._parts
            parts.append(text + eol)
            if len(parts) >= self.BATCH:
                self._out.write(encode("".join(parts)))
                parts.clear()

    def close(self) -> None:
        if not self._started:
            self._start()
        if self._out is not None and self._parts:
            self._out.write(encode("".join(self._parts)))
        self._parts.clear()


@dataclass(frozen=True, slots=True)
class Fixing(Rewriting):
    """What ``fix`` did with one input."""

    #: A fixer failed on this input (a bbox-lark bug): nothing was written.
    fix_error: str | None = None
    #: What the fixers did, without the texts (None when the input could not be read or a
    #: fixer failed).
    outcome: Streamed | None = None
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
    jobs: Jobs | None = 1,
    progress: Progress | None = None,
) -> Iterator[Fixing]:
    """Apply ``fixers`` to each input (docs/fix.md), one result each, in order.

    A dry run by default (the outcome holds the diff); ``write`` rewrites each file in
    place when it changed, ``output`` writes the one input's result there (even unchanged);
    the write policy decides (``force`` writes a refused file). Writing streams the input
    (:mod:`bbox_lark.fix.stream`; a dry run holds it, a diff needs both texts). Many files
    go through the one runner, as for :func:`fmt_inputs` (``jobs``, ``progress``)."""
    chosen = list(fixers)

    def far(item: FoundInput) -> Job | None:
        return (fix_one, (item, chosen, write, output, force)) if _far(item) else None

    def failed(item: FoundInput, error: BaseException) -> Fixing:
        return Fixing(item, read_error=_crashed(item, error))

    yield from run_each(
        inputs,
        far,
        lambda item, pool: fix_one(item, chosen, write, output, force),
        failed,
        jobs=jobs,
        size=lambda item: file_size(item.path),
        progress=progress,
    )


def fix_one(item: FoundInput, fixers: list[Fixer], write: bool, output: Path | None, force: bool) -> Fixing:
    """:func:`fix_inputs` of one input (a worker process's job)."""
    from bbox_lark.fix import FixError, apply_fixes
    from bbox_lark.fix.stream import streams

    if streams(fixers) and (write or output is not None):
        into = Path(item.path) if write or output is None else output
        return _fix_streamed(item, fixers, into, write=write, force=force)
    [read] = read_inputs([item])
    if read.error is not None:
        return Fixing(item, read_error=read.error)
    path = read.path
    try:
        whole = apply_fixes(
            read.data,
            fixers,
            path=path,
            label=shown_text(item.shown),
            max_line=item.settings.max_line,
            allowed_secrets=item.settings.allowed_secrets,
        )
    except FixError as error:  # a fixer bug, never the input's fault: write nothing
        return Fixing(item, fix_error=str(error))
    outcome = Streamed.of(whole)
    verdict = _verdict(outcome, item, path, force)
    target = path if write else output
    if target is None or verdict.refused or (write and not outcome.changed):
        return Fixing(item, outcome=outcome, verdict=verdict, target=target)
    if write and not is_regular(target):
        problem: str | None = _NOT_IN_PLACE.format(target)
    else:
        problem = write_file(target, encode(whole.new_text))
    return Fixing(
        item, outcome=outcome, verdict=verdict, target=target, wrote=problem is None, write_error=problem
    )


_NOT_IN_PLACE = "{}: not a regular file (a pipe): cannot rewrite it in place; give --output"


def _verdict(
    outcome: FixOutcome | Streamed, item: FoundInput, path: Path | None, force: bool
) -> WriteVerdict:
    """The write policy on what the fixers left: what they repaired is not outstanding
    (refusing codes never are); a refused file is not written, so every finding of it
    still stands."""
    verdict = write_verdict(outcome.outstanding, settings=item.settings, path=path, force=force)
    if verdict.refused and outcome.resolved:
        verdict = write_verdict(outcome.diagnostics, settings=item.settings, path=path, force=force)
    return verdict


def _fix_streamed(item: FoundInput, fixers: list[Fixer], target: Path, *, write: bool, force: bool) -> Fixing:
    """``fix --write``/``--output`` of one input, as a stream (:mod:`bbox_lark.fix.stream`): the
    fixed body spooled (in memory up to :data:`SPOOL`, then a temporary file), written
    atomically once the write policy has seen every finding."""
    from bbox_lark.checks.workflow import cannot_write
    from bbox_lark.files.atomic import AtomicWriter
    from bbox_lark.files.inputs import InputError, problem, reading, spooled
    from bbox_lark.fix import FixError
    from bbox_lark.fix.stream import Body, fix_stream

    if item.problem is not None:
        return Fixing(item, read_error=item.problem)
    path = None if item.stdin else Path(item.path)
    surveys = any(getattr(fixer, "surveys", False) for fixer in fixers)
    try:
        with contextlib.ExitStack() as stack:
            # A fixer that surveys reads the input twice: a pipe is spooled first.
            name = stack.enter_context(spooled(item.path)) if surveys else item.path
            spool = stack.enter_context(tempfile.SpooledTemporaryFile(max_size=SPOOL))
            done, sink, _stream = fix_stream(
                lambda: reading(name),
                fixers,
                Body(spool),
                path=path,
                max_line=item.settings.max_line,
                allowed_secrets=item.settings.allowed_secrets,
            )
            verdict = _verdict(done, item, path, force)
            if verdict.refused or (write and not done.changed):
                return Fixing(item, outcome=done, verdict=verdict, target=target)
            if write and not is_regular(target):
                return Fixing(
                    item,
                    outcome=done,
                    verdict=verdict,
                    target=target,
                    write_error=_NOT_IN_PLACE.format(target),
                )
            try:
                with AtomicWriter(target) as writer:
                    sink.write(writer.stream)
                    writer.commit()
            except OSError as error:
                shown = cannot_write(target, error)
                return Fixing(item, outcome=done, verdict=verdict, target=target, write_error=shown)
            return Fixing(item, outcome=done, verdict=verdict, target=target, wrote=True)
    except InputError as error:
        return Fixing(item, read_error=str(error))
    except OSError as error:
        return Fixing(item, read_error=problem(item.path, error))
    except FixError as error:  # a fixer bug, never the input's fault: write nothing
        return Fixing(item, fix_error=str(error))


@dataclass(frozen=True, slots=True)
class Listing:
    """What ``redact --list`` found in one input: its lines
    (:func:`bbox_lark.secrets.redaction.iter_listing`)."""

    item: FoundInput
    lines: tuple[str, ...] = ()
    #: Why the input could not be read (the lines found before it are kept).
    read_error: str | None = None


def list_inputs(
    inputs: Iterable[FoundInput], *, jobs: Jobs | None = 1, progress: Progress | None = None
) -> Iterator[Listing]:
    """``redact --list`` of each input, in order, through the one runner (as :func:`fmt_inputs`)."""

    def far(item: FoundInput) -> Job | None:
        return (list_one, (item,)) if _far(item) else None

    def failed(item: FoundInput, error: BaseException) -> Listing:
        return Listing(item, read_error=_crashed(item, error))

    yield from run_each(
        inputs,
        far,
        lambda item, pool: list_one(item),
        failed,
        jobs=jobs,
        size=lambda item: file_size(item.path),
        progress=progress,
    )


def list_one(item: FoundInput) -> Listing:
    """:func:`list_inputs` of one input, read as a stream (a worker process's job)."""
    from bbox_lark.files.inputs import InputError, reading
    from bbox_lark.secrets.redaction import iter_listing

    if item.problem is not None:
        return Listing(item, read_error=item.problem)
    lines: list[str] = []
    try:
        with reading(item.path) as file:
            shown = shown_text(item.shown)
            lines.extend(iter_listing(file, shown, allowed=item.settings.allowed_secrets))
    except InputError as error:
        return Listing(item, tuple(lines), read_error=str(error))
    return Listing(item, tuple(lines))
