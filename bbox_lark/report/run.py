"""``bbox-lark report`` as library calls: one page, a folder of pages with an index, or the
live page (``--watch``), each deciding what is said (:class:`~bbox_lark.files.said.Said`,
handed to ``on_said`` as it happens) and the exit code. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bbox_lark._classes import dataclass
from bbox_lark.errors import ConfigError, InputError, WriteError
from bbox_lark.files.inputs import is_dir, why_not
from bbox_lark.files.said import Said
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.numbers.review import ReviewOptions

#: Where what a run says goes, line by line, as it happens.
OnSaid = Callable[[Said], None]


@dataclass(frozen=True, slots=True)
class Reported:
    """What ``report`` did: the page (or the index of many) written, None on standard
    output, and the exit code (1: records skipped, or sessions without a page)."""

    written: Path | None
    exit_code: int


def report_paths(
    files: list[str],
    on_said: OnSaid,
    *,
    output: Path | None = None,
    from_: str | None = None,
    jobs: str | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    review: ReviewOptions | None = None,
    keep_secrets: bool = False,
    open_: bool = False,
) -> Reported:
    """The page of one session (``output``: the HTML file; None: FILE's name with ``.html``
    here; ``-``: standard output), or, for several paths or a folder, a page per session and
    an index in the folder ``output``. ``open_``: the page will be opened, so it needs a file.
    Raises an error of the spine (exit 2) for a usage problem or an input that cannot be read."""
    if len(files) > 1 or is_dir(files[0]):
        return _report_many(files, on_said, output, from_, jobs, max_line, review, keep_secrets)
    from bbox_lark.convert.atif.lines import session_address
    from bbox_lark.convert.base import Skipped
    from bbox_lark.report import default_output, write_report

    file = files[0]
    refused = why_not(file)
    if refused is not None and session_address(file) is None:  # FILE#LINE: one ATIF trajectory
        raise InputError(refused)
    target = default_output(file) if output is None else None if str(output) == "-" else output
    if open_ and target is None:
        raise ConfigError("--open needs a file: give -o OUT.html")
    skipped: list[Skipped] = []
    try:
        written = write_report(
            file,
            target,
            from_=from_,
            max_line=max_line,
            on_skipped=skipped.append,
            review=review,
            keep_secrets=keep_secrets,
        )
    except OSError as error:
        raise InputError(f"{file}: cannot read: {error.strerror or error}") from None
    if written is not None:
        on_said(Said(f"wrote {written}"))
    if skipped:  # as convert says it: records the importer could not read are not on the page
        shown = file if file != "-" else "<stdin>"
        for record in skipped:
            on_said(Said(record.render(shown)))
        on_said(Said(f"{shown}: {len(skipped)} record(s) skipped (not on the page)", "!"))
    return Reported(written, 1 if skipped else 0)


def _report_many(
    files: list[str],
    on_said: OnSaid,
    output: Path | None,
    from_: str | None,
    jobs: str | None,
    max_line: int,
    review: ReviewOptions | None,
    keep_secrets: bool,
) -> Reported:
    """``report PATH... -o DIR``: a page per session and an index (docs/report.md#many-sessions)."""
    from bbox_lark.convert.many import convert_inputs
    from bbox_lark.report.many import INDEX, write_many

    if output is None or str(output) == "-":
        shown = files[0] if len(files) == 1 else f"{files[0]} and {len(files) - 1:,} more"
        raise ConfigError(f"{shown}: many sessions need an output folder: give -o DIR")
    try:
        inputs = []
        for item in convert_inputs(files, from_, sessions=True):
            if item.counted_in is not None:  # each session once (a subagent log is on its parent's page)
                on_said(Said(f"{item.path}: on the page of {item.counted_in} ({item.counted_why})"))
                continue
            inputs.append(item)
        rows = write_many(
            inputs,
            output,
            from_=from_,
            max_line=max_line,
            jobs=_jobs(jobs),
            review=review,
            keep_secrets=keep_secrets,
        )
    except OSError as error:
        raise WriteError(f"{output}: cannot write: {error.strerror or error}") from None
    problems = [row for row in rows if row.problem]
    for row in problems:
        on_said(Said(f"{row.source}: {row.problem or ''}", "!"))
    pages = len(rows) - sum(1 for r in rows if r.page is None)
    on_said(Said(f"wrote {pages:,} page(s) and {output / INDEX}"))
    return Reported(output / INDEX, 1 if problems else 0)


def _jobs(jobs: str | None) -> int | str | None:
    """``--jobs``: a number of processes, or ``auto`` (None: every core)."""
    if jobs is None or jobs == "auto":
        return None
    if not jobs.isdigit() or int(jobs) < 1:
        raise ConfigError(f"--jobs {jobs}: give a number of processes, or auto")
    return int(jobs)


def watch_session(
    files: list[str],
    on_said: OnSaid,
    *,
    port: int = 8765,
    from_: str | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    review: ReviewOptions | None = None,
    keep_secrets: bool = False,
    on_ready: Callable[[str], object] | None = None,
) -> Reported:
    """``report FILE --watch``: serve the live page of one file (docs/report.md#live) until
    Ctrl-C; ``on_ready`` is given the page's address once it is served."""
    from bbox_lark.report.live import serve

    if len(files) != 1 or files[0] == "-" or is_dir(files[0]):
        raise ConfigError("--watch follows one file: give its path")
    refused = why_not(files[0])
    if refused is not None:
        raise InputError(refused)
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port}: give 0 to 65535")

    def ready(url: str) -> None:
        on_said(Said(f"serving {files[0]} at {url} (Ctrl-C stops)"))
        if on_ready is not None:
            on_ready(url)

    try:
        serve(
            files[0],
            port=port,
            from_=from_,
            max_line=max_line,
            on_ready=ready,
            review=review,
            keep_secrets=keep_secrets,
        )
    except OSError as error:
        raise ConfigError(f"--port {port}: cannot listen on 127.0.0.1: {error.strerror or error}") from None
    on_said(Said("stopped"))
    return Reported(None, 0)


__all__ = ["Reported", "report_paths", "watch_session"]
