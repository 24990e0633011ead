"""Converting files: what ``bbox-lark convert`` does, as library calls.

:func:`convert_file` converts one input (a file, a folder for folder formats, or standard
input) to a file, a folder or a stream, streaming; :func:`convert_files` converts many
inputs into one folder, one output per input, on several cores. Both follow the one write
policy (:func:`bbox_lark.files.writepolicy.write_verdict`: an input that cannot be read faithfully
is not written unless forced) and write atomically: a file through
:class:`~bbox_lark.files.atomic.AtomicWriter`, a folder through a staging folder beside it whose
files are moved in only when the input is not refused.

A usage problem (an unknown format, an input or output that cannot be used) raises
:class:`ConvertUsageError` (exit 2); everything else is in the result, which the command
renders (:mod:`bbox_lark.cli.commands`). Nothing here prints.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bbox_lark._classes import dataclass
from bbox_lark.checks.workflow import EXIT_FINDINGS, EXIT_USAGE, cannot_write
from bbox_lark.errors import ConversionError
from bbox_lark.files.discover import FoundInput
from bbox_lark.files.inputs import is_dir, is_regular, kind_of, why_not
from bbox_lark.files.writepolicy import WriteVerdict, write_verdict
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.convert.base import Input, Skipped
    from bbox_lark.files.config import Jobs
    from bbox_lark.files.runner import Job, Progress


#: Standard output is held back until the input is known to hold no credential: in memory up
#: to this many bytes, then in a temporary file.
HELD_IN_MEMORY = 8 << 20


class ConvertUsageError(ConversionError):
    """An input, output or option that cannot be used: the command exits 2."""


@dataclass(frozen=True, slots=True)
class Notes:
    """What a conversion has to say beside its output: the fidelity report's losses and
    skipped records, rendered (so a result can travel between processes)."""

    #: One line per loss (dropped or synthesized), without the input's name.
    losses: tuple[str, ...] = ()
    #: One line per skipped record, naming the input.
    skipped: tuple[str, ...] = ()
    #: The secrets the output carries over (none with ``--redact``), as one warning:
    #: ``2 secret(s) carried over (aws_access_key 1, github_token 1); --redact replaces them``.
    secrets: str = ""


@dataclass(frozen=True, slots=True)
class Converted:
    """What ``convert`` did with one input."""

    #: The input as given (``-`` is standard input).
    path: str
    #: Where the output went (None: the stream given).
    output: Path | None = None
    #: The source and target formats' names.
    source: str = ""
    target: str = ""
    verdict: WriteVerdict = WriteVerdict()
    notes: Notes = Notes()
    #: The whole fidelity report, rendered for ``--report`` (single inputs only).
    report: str = ""
    #: The fidelity report as JSON data (``--report-json``; single inputs only).
    report_data: dict[str, Any] | None = None
    #: The output was written (False when refused, or on a stream).
    written: bool = False
    #: Why the input could not be converted or written (exit 2): a many-file run goes on.
    error: str | None = None
    #: The provider credentials (S001) the input holds, one line each (``path:line:col: S001
    #: kind``, never the key); refused when neither ``redact`` nor ``keep_secrets`` was given.
    credentials: tuple[str, ...] = ()
    #: Nothing was written because the input holds a provider credential (docs/reference.md#secrets).
    secrets_refused: bool = False

    @property
    def shown(self) -> str:
        return "<stdin>" if self.path == "-" else self.path

    @property
    def exit_code(self) -> int:
        """2 when it could not be converted, 1 when refused or records were skipped, else 0."""
        if self.error is not None:
            return EXIT_USAGE
        if self.verdict.refused or self.notes.skipped or self.secrets_refused:
            return EXIT_FINDINGS
        return self.verdict.exit_code


def target_format(to: str | None, output: Path | None) -> str:
    """The name of the format to write: ``to``, else the one the output file's name ends
    with (a folder format is named by ``--to``). :class:`ConvertUsageError` otherwise."""
    from bbox_lark.convert import ConvertError, format_for_path, formats, get_format

    if to is None:
        named = [f for f in format_for_path(output) if f.write and f.output == "text"] if output else []
        if len(named) != 1:
            writable = ", ".join(f.name for f in formats() if f.write is not None)
            raise ConvertUsageError(f"give --to FORMAT (one of: {writable})")
        to = named[0].name
    try:
        return get_format(to).name
    except ConvertError as error:
        raise ConvertUsageError(str(error)) from None


def convert_file(
    file: str,
    *,
    to: str,
    from_: str | None = None,
    output: Path | None = None,
    force: bool = False,
    max_line: int = DEFAULT_MAX_LINE,
    report_json: Path | None = None,
    stdout: IO[Any] | None = None,
    options: dict[str, Any] | None = None,
) -> Converted:
    """Convert ``file`` (``-``: standard input; a folder for folder formats) to format
    ``to``, streaming, into ``output`` (atomically; a folder for folder formats) or, when
    ``output`` is None, into ``stdout`` (a text stream; its binary buffer is used when it
    has one, so the output is the converted bytes exactly).

    ``report_json`` (not ``-``) is where the fidelity report will be written: it is checked
    before converting, so that a report that cannot be written never costs the output;
    :func:`write_report` writes it. Raises :class:`ConvertUsageError` (exit 2)."""
    from bbox_lark.convert import ConvertError, Input, RefusedInputError, convert_stream, get_format
    from bbox_lark.convert.atif.lines import address_input
    from bbox_lark.files.atomic import AtomicWriter
    from bbox_lark.secrets.redaction import redact_file_settings

    target = get_format(to)
    refused = why_not(file) if not is_dir(file) else None
    addressed = address_input(file) if refused is not None else None
    if addressed is not None:
        from_ = from_ or "atif"  # a trajectory of an ATIF JSON Lines file (FILE#LINE)
    elif refused is not None:
        raise ConvertUsageError(refused)
    shown = "<stdin>" if file == "-" else file
    if report_json is not None and str(report_json) != "-":
        where = report_json.parent
        if report_json.is_dir() or not where.is_dir() or not os.access(where, os.W_OK):
            raise ConvertUsageError(f"{report_json}: cannot write the report there")
    folder_out = target.output == "folder"
    if folder_out and output is None:
        raise ConvertUsageError(f"{target.name} output is a folder: give -o DIR")
    writer: AtomicWriter | None = None
    if output is not None and not folder_out:
        try:
            writer = AtomicWriter(output)
        except OSError as error:
            raise ConvertUsageError(cannot_write(output, error)) from None
    staging = _staging(output) if folder_out and output is not None else None
    stdout = sys.stdout if stdout is None else stdout
    stdout.flush()
    options = dict(options or {})
    guarded = not options.get("redact") and not options.get("keep_secrets")
    held: IO[bytes] | None = None  # standard output held back until the input is known clean
    if guarded and output is None:
        held = tempfile.SpooledTemporaryFile(max_size=HELD_IN_MEMORY)  # noqa: SIM115 (closed in finally)
    binary = writer.stream if writer is not None else held or getattr(stdout, "buffer", None)
    text_out: Any
    if binary is not None:
        text_out = io.TextIOWrapper(binary, encoding="utf-8", errors="surrogateescape", newline="")
    else:  # a text-only stdout (tests capturing it)
        text_out = stdout
    try:
        try:
            result = convert_stream(
                addressed if addressed is not None else Input(file),
                None if folder_out else text_out,
                to=to,
                from_=from_,
                max_line=max_line,
                output_path=staging,
                allowed_secrets=redact_file_settings(None if file == "-" or addressed else Path(file)),
                **(options or {}),
            )
        except RefusedInputError as error:
            raise ConvertUsageError(f"{shown}: {error}") from None
        except ConvertError as error:
            raise ConvertUsageError(str(error)) from None
        except OSError as error:
            raise ConvertUsageError(f"{shown}: cannot read: {error.strerror or error}") from None
        finally:
            if text_out is not stdout:
                text_out.flush()
                text_out.detach()
        verdict = write_verdict(result.diagnostics, force=force)
        fidelity = result.fidelity
        converted = Converted(
            file,
            output,
            result.source,
            result.target,
            verdict,
            Notes(
                tuple(entry.render() for entry in fidelity.losses),
                tuple(skipped.render(shown) for skipped in fidelity.skipped),
                _secrets_warning(result.secrets, result.redacted),
            ),
            report=fidelity.render(shown),
            report_data={"source": result.source, "target": result.target, **fidelity.to_dict()},
            credentials=() if options.get("redact") else credential_lines(shown, result, verdict),
            secrets_refused=guarded and bool(result.credentials),
        )
        if converted.secrets_refused:
            return converted
        if held is not None:
            _release(held, stdout)
        if (writer is not None or staging is not None) and verdict.refused:
            return converted
        if writer is not None:
            try:
                writer.commit()
            except OSError as error:
                raise ConvertUsageError(cannot_write(output or "-", error)) from None
        if staging is not None and output is not None:
            _move_in(staging, output)
        return replace(converted, written=output is not None)
    finally:
        if held is not None:
            held.close()
        if writer is not None:
            writer.discard()
        if staging is not None:
            import shutil

            shutil.rmtree(staging, ignore_errors=True)


def credential_lines(shown: str, result: Any, verdict: WriteVerdict) -> tuple[str, ...]:
    """One line per provider credential of a conversion's ``result``: the file, the line and
    column (of the bbox form for a foreign input, which is what is scanned) and the kind,
    never the key; none for those the input's own findings (``verdict``) show already."""
    shown_already = {(d.line, d.col) for d in verdict.errors if d.code == "S001"}
    where = "" if result.source == "bbox" else f" (in its {result.source} → bbox form)"
    return tuple(
        f"{shown}:{line}:{col}: S001 {kind}{where}"
        for line, col, kind in result.credentials
        if (line, col) not in shown_already
    )


def _release(held: IO[bytes], stdout: IO[Any]) -> None:
    """Copy the held output to standard output (its binary buffer when it has one)."""
    import shutil

    held.seek(0)
    target = getattr(stdout, "buffer", None)
    if target is not None:
        shutil.copyfileobj(held, target)
        target.flush()
    else:
        stdout.write(held.read().decode("utf-8", "surrogateescape"))
        stdout.flush()


def _secrets_warning(secrets: dict[str, int], redacted: bool) -> str:
    """The warning for the secrets an output carries over (none when they were redacted)."""
    if not secrets or redacted:
        return ""
    kinds = ", ".join(f"{kind} {count}" for kind, count in secrets.items())
    return f"{sum(secrets.values())} secret(s) carried over ({kinds}); --redact replaces them"


def _staging(output: Path) -> Path:
    """A staging folder beside ``output`` (a folder format's files are written there and
    moved in only when the input is not refused)."""
    import tempfile

    try:
        if output.exists() and not output.is_dir():
            raise NotADirectoryError(20, "not a folder")
        return Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
    except OSError as error:
        raise ConvertUsageError(cannot_write(output, error)) from None


def _move_in(staging: Path, output: Path) -> None:
    try:
        output.mkdir(exist_ok=True)
        for made in sorted(staging.iterdir()):
            os.replace(made, output / made.name)
    except OSError as error:
        raise ConvertUsageError(cannot_write(output, error)) from None


def write_report(converted: Converted, report_json: Path) -> str | None:
    """Write ``converted``'s fidelity report as JSON to ``report_json``; the message to show
    when it cannot be written, else None."""
    import json

    data = json.dumps(converted.report_data, indent=2)
    try:
        report_json.write_text(data + "\n", encoding="utf-8")
    except OSError as error:
        return cannot_write(report_json, error)
    return None


# -- many inputs into one folder ------------------------------------------------------------


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
    """The inputs of ``convert PATH...``: a folder a folder format reads is one input; any
    other path is searched as ``check`` searches it (``sessions``: as ``stats`` searches it,
    every file ``convert`` reads, each session once: :func:`bbox_lark.files.discover.discover`). Raises
    :class:`~bbox_lark.files.config.ConfigError` for a bad configuration file met on the way."""
    from bbox_lark.checks.workflow import find_inputs
    from bbox_lark.files.config import Settings

    inputs: list[FoundInput] = []
    for path in paths:
        if reads_as_folder(path, from_):  # its converter reads no configuration
            inputs.append(FoundInput(path, Settings()))
        else:
            inputs.extend(find_inputs([path], sessions=sessions))
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
    except OSError as error:
        raise ConvertUsageError(cannot_write(out_dir, error)) from None
    if not out_dir.is_dir():
        raise ConvertUsageError(f"{out_dir}: is not a folder")
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


# -- reading any format as bbox (``report``, ``stats``, ``export``, ``query``) ----------------


def foreign_format(path: str | Path) -> str | None:
    """The format of the file ``path`` when its name or content says it is one that
    ``convert`` reads other than bbox (a Claude Code session, an ATIF trajectory …); None
    for bbox, a file no format recognises, a folder or one that cannot be read (those are
    read as bbox, and reported there)."""
    from bbox_lark.convert import Input, detect_format
    from bbox_lark.convert.atif.lines import session_address

    if session_address(str(path)) is not None:
        return "atif"  # FILE#LINE: a trajectory of an ATIF JSON Lines file
    if kind_of(path) != "file":
        return None  # a folder, standard input, a stream read once (spool it first: inputs.spooled)
    path = Path(path)
    try:
        fmt = detect_format(path, Input(path).head())
    except OSError:
        return None
    return None if fmt in (None, "bbox") else fmt


def _only_trajectory(path: Path) -> Input | None:
    """The one trajectory of an ATIF JSON Lines file; a file of several is a
    :class:`~bbox_lark.convert.ConvertError` that says how to name one."""
    from bbox_lark.convert import ConvertError, Input
    from bbox_lark.convert.atif.lines import is_lines_file, trajectory_lines

    if not is_lines_file(str(path)):
        return None
    found = [number for number, _ in trajectory_lines(Input(path))]
    if len(found) == 1:
        from bbox_lark.convert.atif.lines import line_input

        return line_input(str(path), found[0])
    raise ConvertError(
        f"holds {len(found)} ATIF trajectories (one per line): name one as {path}#{found[0] if found else 1}"
        " (stats, export and query read each)"
    )


@contextlib.contextmanager
def bbox_file(
    source: str | Path | bytes,
    *,
    from_: str | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    on_skipped: Callable[[Skipped], None] | None = None,
) -> Iterator[Path]:
    """A bbox file holding ``source`` (a path, ``-`` for standard input, or the input's
    bytes) in the format ``from_`` (detected as ``convert`` does when None): the file
    itself when it is bbox, else a temporary copy (standard input, bytes) or conversion
    (another format), removed afterwards. ``on_skipped`` is called with each record the
    conversion could not read. Raises :class:`bbox_lark.convert.ConvertError` when the
    format cannot be told or read."""
    from bbox_lark.convert import Input, convert_stream, detect_format, get_format

    given = None if isinstance(source, bytes) else str(source)
    path = Path(given) if given is not None and given != "-" else None
    from bbox_lark.convert.atif.lines import address_input

    addressed = address_input(given) if given is not None and path is not None and not path.exists() else None
    if addressed is None and path is not None and from_ in (None, "atif"):
        addressed = _only_trajectory(path)
    if addressed is not None:
        source_input, path, from_ = addressed, None, from_ or "atif"
    elif isinstance(source, bytes):
        source_input = Input(None, source)
    elif path is None:
        source_input = Input(None)
    else:
        source_input = Input(path)
    if from_ is not None:
        fmt = get_format(from_).name
    elif path is not None and is_dir(path):
        fmt = None  # a folder format: convert_stream tells which
    else:
        fmt = detect_format(path, source_input.head())
    if fmt == "bbox" and path is not None and is_regular(path):
        yield path  # read as often as needed; a stream (a FIFO, <(…)) is copied once below
        return
    handle, temporary = tempfile.mkstemp(suffix=".bbox", prefix="bbox-lark-")
    try:
        with os.fdopen(handle, "wb") as raw:
            if fmt == "bbox":
                for chunk in source_input.chunks():
                    raw.write(chunk)
            else:
                text = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="")
                # Every caller parses the file with every check (the secrets' too): the
                # conversion's own scan would only count them a second time.
                conversion = convert_stream(
                    source_input, text, to="bbox", from_=fmt, max_line=max_line, check=False, scan=False
                )
                text.flush()
                text.detach()
                if on_skipped is not None:
                    for skipped in conversion.skipped:
                        on_skipped(skipped)
        yield Path(temporary)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


__all__ = [
    "ConvertUsageError",
    "Converted",
    "Notes",
    "bbox_file",
    "convert_file",
    "convert_files",
    "foreign_format",
    "output_name",
    "target_format",
    "write_report",
]
