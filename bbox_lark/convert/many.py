"""Converting many inputs into one folder (``convert PATH... -o DIR``), and the whole
``convert`` command as one call (:func:`convert_paths`: one input or many).

Split from :mod:`bbox_lark.convert.files` (one input), which still answers to these names.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bbox_lark.checks.workflow import EXIT_OK, cannot_write
from bbox_lark.convert.files import (
    Converted,
    ConvertUsageError,
    convert_file,
    said_for,
    target_format,
    writable_names,
    write_report,
)
from bbox_lark.files.discover import FoundInput
from bbox_lark.files.inputs import is_dir
from bbox_lark.files.said import Said
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.files.config import Jobs
    from bbox_lark.files.runner import Job, Progress


def convert_paths(
    paths: list[str],
    *,
    to: str | None = None,
    from_: str | None = None,
    output: Path | None = None,
    force: bool = False,
    quiet: bool = False,
    report: bool = False,
    report_json: Path | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    jobs: int | str | None = None,
    options: dict[str, Any] | None = None,
) -> ConvertRun:
    """``bbox-lark convert PATH...``: one input into ``output`` (None or ``-``: standard
    output) with its fidelity report (``report``: the whole report said; ``report_json``: a
    file, or ``-`` said), or many inputs (several paths, a folder no folder format reads, an
    ATIF JSON Lines file) into the folder ``output``, one output per input. The run is lazy:
    iterate it for each result and what is said about it. Raises :class:`ConvertUsageError`
    (exit 2) for a usage problem, at once or (many inputs: the folder) on the first step."""
    if output is not None and str(output) == "-":
        output = None  # `-o -` is standard output
    said = {"force": force, "quiet": quiet, "report": report, "report_json": report_json}
    if converts_many(paths, from_):
        if report or report_json is not None:
            raise ConvertUsageError("--report and --report-json describe one conversion; give one input")
        if output is None:
            raise ConvertUsageError("several inputs convert into a folder: give -o DIR")
        if to is None:
            raise ConvertUsageError(f"give --to FORMAT (one of: {writable_names()})")
        inputs = convert_inputs(paths, from_)
        found = convert_files(
            inputs, output, to=to, from_=from_, force=force, max_line=max_line, jobs=jobs, options=options
        )
        return ConvertRun(found, said, into=(output, to))
    done = convert_file(
        paths[0],
        to=target_format(to, output),
        from_=from_,
        output=output,
        force=force,
        max_line=max_line,
        report_json=report_json,
        options=options,
    )
    if report_json is not None and str(report_json) != "-" and not done.refused:
        done = replace(done, report_error=write_report(done, report_json))
    return ConvertRun([done], said)


class ConvertRun:
    """A ``convert`` run: iterating it gives each input's result and what is said about it
    (:func:`~bbox_lark.convert.files.said_for`), in the inputs' order; then :meth:`summary`
    (many inputs) and :attr:`exit_code` (the highest of the results')."""

    def __init__(
        self, results: Iterable[Converted], said: dict[str, Any], into: tuple[Path, str] | None = None
    ) -> None:
        self._results = results
        self._said = said
        #: Many inputs: the folder and the format they are converted into.
        self.into = into
        self.exit_code = EXIT_OK
        self.counts = {"written": 0, "refused": 0, "failed": 0}

    def __iter__(self) -> Iterator[tuple[Converted, tuple[Said, ...]]]:
        for done in self._results:
            self.exit_code = max(self.exit_code, done.exit_code)
            self.counts["failed" if done.error is not None else "refused" if done.refused else "written"] += 1
            yield done, said_for(done, alone=self.into is None, **self._said)

    def summary(self) -> tuple[Said, ...]:
        """Many inputs: one line of what was written where, and what was not."""
        if self.into is None:
            return ()
        output, to = self.into
        counts = self.counts
        line = f"{counts['written']} file(s) converted to {output} ({to})"
        if counts["refused"]:
            line += f", {counts['refused']} not written (errors)"
        if counts["failed"]:
            line += f", {counts['failed']} could not be converted"
        return (Said(line),)


def reads_as_folder(path: str, from_: str | None) -> bool:
    """True when ``path`` is a folder a folder format reads (a Lightbox session): one input."""
    if not is_dir(path):
        return False
    from bbox_lark.convert import ConvertError, detect_folder_format, get_format

    if from_ is not None:
        try:
            return get_format(from_).reads_folders
        except ConvertError:
            return False
    return detect_folder_format(Path(path)) is not None


def converts_many(paths: list[str], from_: str | None) -> bool:
    """True for several inputs, or one folder that no folder format reads."""
    from bbox_lark.convert.atif.lines import is_lines_file

    if len(paths) == 1 and from_ in (None, "atif") and is_lines_file(paths[0]):
        return True  # ATIF JSON Lines: one output per trajectory
    return len(paths) != 1 or (is_dir(paths[0]) and not reads_as_folder(paths[0], from_))


def convert_inputs(paths: list[str], from_: str | None, *, sessions: bool = False) -> list[FoundInput]:
    """The inputs of ``convert PATH...``: a folder a folder format reads is one input; the
    other paths are searched together as ``check`` searches them, so a file named twice is
    one input (``sessions``: as ``stats`` searches them, every file ``convert`` reads, each
    session once: a file named twice, or a subagent log named beside its parent, is kept
    with :attr:`~bbox_lark.files.discover.FoundInput.counted_in`;
    :func:`bbox_lark.files.discover.discover`). The searched paths' inputs come where the
    first of them is named. Raises :class:`~bbox_lark.files.config.ConfigError` for a bad
    configuration file met on the way."""
    from bbox_lark.checks.workflow import find_inputs
    from bbox_lark.files.config import Settings

    folders = {path for path in paths if reads_as_folder(path, from_)}
    searched = [path for path in paths if path not in folders]
    # One search, not one per path: each path alone would not see the others (the same file
    # named twice, a subagent log beside its parent), and a session would be counted twice.
    found = find_inputs(searched, sessions=sessions) if searched else []
    inputs: list[FoundInput] = []
    for path in paths:
        if path in folders:  # its converter reads no configuration
            inputs.append(FoundInput(path, Settings()))
        else:
            inputs.extend(found)
            found = []
    if from_ in (None, "atif"):
        from bbox_lark.convert.atif.lines import expand_sessions

        inputs = expand_sessions(inputs)  # ATIF JSON Lines: each trajectory, FILE#LINE
    return inputs


def output_name(path: str, to: str) -> str:
    """The output's name for input ``path`` in format ``to``: the input's stem and the
    format's first extension (a folder format: the stem alone)."""
    from bbox_lark.convert import formats, get_format

    target = get_format(to)
    path, hash_, line = (
        path.rpartition("#") if "#" in path and path.rpartition("#")[2].isdigit() else (path, "", "")
    )
    stem = Path(path).name
    for suffix in sorted({s for f in formats() for s in f.extensions}, key=len, reverse=True):
        if stem.lower().endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
            break
    else:
        stem = Path(path).stem or stem
    if hash_:
        stem = f"{stem}-{line}"  # a trajectory of an ATIF JSON Lines file, by its line
    if target.output == "folder" or not target.extensions:
        return stem
    return stem + target.extensions[0]


def _convert_one(
    path: str, target: Path, to: str, from_: str | None, force: bool, max_line: int, options: dict[str, Any]
) -> Converted:
    """One input of a many-file run (in a worker process, or here): converted to ``target``;
    a usage problem or a bug is this input's error, never the run's end."""
    from bbox_lark.checks.workflow import internal_error

    try:
        return convert_file(
            path,
            to=to,
            from_=from_,
            output=target,
            force=force,
            max_line=max_line,
            stdout=io.StringIO(),
            options=options,
        )
    except ConvertUsageError as error:
        return Converted(path, target, error=str(error))
    except Exception as error:  # a bug in bbox-lark: this input's result says so, the run goes on
        return Converted(path, target, error=f"{path}: {internal_error(error).message}")


def convert_files(
    inputs: list[FoundInput],
    out_dir: Path,
    *,
    to: str,
    from_: str | None = None,
    force: bool = False,
    max_line: int = DEFAULT_MAX_LINE,
    jobs: int | str | None = None,
    options: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> Iterator[Converted]:
    """Convert each input into ``out_dir`` (made when missing), one output per input named
    by :func:`output_name`, on ``jobs`` processes (a number, or ``auto``/None: every core),
    one result per input in the inputs' order whatever finishes first: the outputs and
    results are those of converting each input alone.

    ``inputs`` are found as ``check`` finds them (:func:`bbox_lark.checks.workflow.find_inputs`);
    each is read by its converter, streaming. An input that cannot be used, or whose output
    name another input already took, gets its error and the run goes on. Raises
    :class:`ConvertUsageError` when ``out_dir`` cannot be made."""
    chosen = dict(options or {})
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file where the folder should be too (FileExistsError)
        raise ConvertUsageError(cannot_write(out_dir, error)) from None
    planned: list[Converted | tuple[str, Path]] = []
    taken: dict[str, str] = {}
    for item in inputs:
        path = item.path
        if item.problem is not None or item.stdin:
            planned.append(
                Converted(path, error=item.problem or "-: standard input is one input; convert it alone")
            )
            continue
        name = output_name(path, to)
        if name in taken:
            message = f"{path}: its output {out_dir / name} is {taken[name]}'s already; not converted"
            planned.append(Converted(path, error=message))
            continue
        taken[name] = path
        planned.append((path, out_dir / name))
    from bbox_lark.files.runner import file_size, run_each

    def far(entry: Converted | tuple[str, Path]) -> Job | None:
        if isinstance(entry, Converted):
            return None
        return _convert_one, (entry[0], entry[1], to, from_, force, max_line, chosen)

    def here(entry: Converted | tuple[str, Path], pool: object) -> Converted:
        if isinstance(entry, Converted):
            return entry
        return _convert_one(entry[0], entry[1], to, from_, force, max_line, chosen)

    def failed(entry: Converted | tuple[str, Path], error: BaseException) -> Converted:
        from bbox_lark.checks.workflow import internal_error

        assert isinstance(entry, tuple)
        return Converted(entry[0], entry[1], error=f"{entry[0]}: {internal_error(error).message}")

    yield from run_each(
        planned,
        far,
        here,
        failed,
        jobs=_jobs(jobs),
        size=lambda entry: 0 if isinstance(entry, Converted) else file_size(entry[0]),
        progress=progress,
    )


def _jobs(jobs: int | str | None) -> Jobs | None:
    """``--jobs`` as a number, or ``auto``; :class:`ConvertUsageError` for anything else."""
    if jobs is None:
        return None
    from bbox_lark.files.config import ConfigError, check_jobs
    from bbox_lark.syntax.values import parse_int

    number = parse_int(jobs) if isinstance(jobs, str) else jobs
    try:
        return check_jobs(number if number is not None else jobs, "--jobs")
    except ConfigError as error:
        raise ConvertUsageError(str(error)) from None


__all__ = [
    "ConvertRun",
    "convert_files",
    "convert_inputs",
    "convert_paths",
    "converts_many",
    "output_name",
    "reads_as_folder",
]
