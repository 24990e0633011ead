"""Converting files: what ``bbox-lark convert`` does, as library calls.

:func:`convert_file` converts one input (a file, a folder for folder formats, or standard
input) to a file, a folder or a stream, streaming; :func:`bbox_lark.convert.many.convert_files`
converts many inputs into one folder, one output per input, on several cores, and
:func:`bbox_lark.convert.many.convert_paths` is the whole command, one input or many. Both
follow the one write policy (:func:`bbox_lark.files.writepolicy.write_verdict`: an input that
cannot be read faithfully is not written unless forced) and write atomically: a file through
:class:`~bbox_lark.files.atomic.AtomicWriter`, a folder through a staging folder beside it whose
files are moved in only when the input is not refused.

A usage problem (an unknown format, an input or output that cannot be used) raises
:class:`ConvertUsageError` (exit 2); everything else is in the result, and :func:`said_for`
says what the command shows for it (:class:`~bbox_lark.files.said.Said` lines, rendered by
:mod:`bbox_lark.cli.commands`). Nothing here prints.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bbox_lark._classes import dataclass
from bbox_lark.checks.workflow import EXIT_FINDINGS, EXIT_USAGE, cannot_write
from bbox_lark.convert.asbbox import bbox_file, foreign_format
from bbox_lark.errors import ConversionError
from bbox_lark.files.inputs import is_dir, why_not
from bbox_lark.files.said import Said, credentials_refused
from bbox_lark.files.writepolicy import WriteVerdict, write_verdict
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.convert.base import Input


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
    #: Why the fidelity report could not be written where ``--report-json`` asked (exit 2).
    report_error: str | None = None

    @property
    def shown(self) -> str:
        return "<stdin>" if self.path == "-" else self.path

    @property
    def refused(self) -> bool:
        """Nothing was written: the write policy or a provider credential refused the input."""
        return (self.output is not None and self.verdict.refused) or self.secrets_refused

    @property
    def exit_code(self) -> int:
        """2 when it could not be converted (or its report written), 1 when refused or records
        were skipped, else 0."""
        if self.error is not None or self.report_error is not None:
            return EXIT_USAGE
        if self.verdict.refused or self.notes.skipped or self.secrets_refused:
            return EXIT_FINDINGS
        return self.verdict.exit_code


def target_format(to: str | None, output: Path | None) -> str:
    """The name of the format to write: ``to``, else the one the output file's name ends
    with (a folder format is named by ``--to``). :class:`ConvertUsageError` otherwise."""
    from bbox_lark.convert import ConvertError, format_for_path, get_format

    if to is None:
        named = [f for f in format_for_path(output) if f.write and f.output == "text"] if output else []
        if len(named) != 1:
            raise ConvertUsageError(f"give --to FORMAT (one of: {writable_names()})")
        to = named[0].name
    try:
        return get_format(to).name
    except ConvertError as error:
        raise ConvertUsageError(str(error)) from None


def writable_names() -> str:
    """The names ``--to`` takes: every format that writes, comma-separated."""
    from bbox_lark.convert import formats

    return ", ".join(f.name for f in formats() if f.write is not None)


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
    from bbox_lark.convert import get_format
    from bbox_lark.files.atomic import AtomicWriter

    target = get_format(to)
    addressed, from_ = _addressed(file, from_)
    _check_report_path(report_json)
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
        held = _HeldOutput(HELD_IN_MEMORY)
    binary = writer.stream if writer is not None else held or getattr(stdout, "buffer", None)
    try:
        result = _convert(
            file, addressed, None if folder_out else (binary, stdout), to, from_, max_line, staging, options
        )
        converted = _converted(
            file, output, result, force=force, guarded=guarded, redact=bool(options.get("redact"))
        )
        if converted.secrets_refused:
            return converted
        if held is not None:
            _release(held, stdout)
        if (writer is not None or staging is not None) and converted.verdict.refused:
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
        _clean_up(held, writer, staging)


def _addressed(file: str, from_: str | None) -> tuple[Input | None, str | None]:
    """``file`` as a trajectory of an ATIF JSON Lines file (``FILE#LINE``) when it names one
    (and the format then, ``atif`` unless given); :class:`ConvertUsageError` when the input
    cannot be used."""
    from bbox_lark.convert.atif.lines import address_input

    refused = why_not(file) if not is_dir(file) else None
    if refused is None:
        return None, from_
    addressed = address_input(file)
    if addressed is None:
        raise ConvertUsageError(refused)
    return addressed, from_ or "atif"


def _check_report_path(report_json: Path | None) -> None:
    """:class:`ConvertUsageError` when the fidelity report could not be written there."""
    if report_json is not None and str(report_json) != "-":
        where = report_json.parent
        if report_json.is_dir() or not where.is_dir() or not os.access(where, os.W_OK):
            raise ConvertUsageError(f"{report_json}: cannot write the report there")


def _convert(
    file: str,
    addressed: Input | None,
    streams: tuple[IO[bytes] | None, IO[Any]] | None,
    to: str,
    from_: str | None,
    max_line: int,
    staging: Path | None,
    options: dict[str, Any],
) -> Any:
    """The conversion itself (:func:`bbox_lark.convert.convert_stream`) into ``streams``:
    the binary stream to write (None: the text stream's own, tests capturing standard output)
    and the text stream; None for a folder format. A problem with the input is a
    :class:`ConvertUsageError`."""
    from bbox_lark.convert import ConvertError, Input, RefusedInputError, convert_stream
    from bbox_lark.secrets.redaction import redact_file_settings

    shown = "<stdin>" if file == "-" else file
    text_out: Any = None
    if streams is not None:
        binary, stdout = streams
        text_out = stdout
        if binary is not None:
            text_out = io.TextIOWrapper(binary, encoding="utf-8", errors="surrogateescape", newline="")
    try:
        return convert_stream(
            addressed if addressed is not None else Input(file),
            text_out,
            to=to,
            from_=from_,
            max_line=max_line,
            output_path=staging,
            # A trajectory FILE#LINE reads the configuration of FILE's folder, as FILE does.
            allowed_secrets=redact_file_settings(None if file == "-" else Path(file)),
            **options,
        )
    except RefusedInputError as error:
        raise ConvertUsageError(f"{shown}: {error}") from None
    except ConvertError as error:
        raise ConvertUsageError(str(error)) from None
    except OSError as error:
        raise ConvertUsageError(f"{shown}: cannot read: {error.strerror or error}") from None
    finally:
        if streams is not None and text_out is not streams[1]:
            text_out.flush()
            text_out.detach()


def _converted(
    file: str, output: Path | None, result: Any, *, force: bool, guarded: bool, redact: bool
) -> Converted:
    """What a conversion's ``result`` comes to: its verdict, notes, reports and credentials."""
    shown = "<stdin>" if file == "-" else file
    verdict = write_verdict(result.diagnostics, force=force)
    fidelity = result.fidelity
    return Converted(
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
        credentials=() if redact else credential_lines(shown, result, verdict),
        # The input's own S001 findings refuse it too: a key the line-by-line scan of the
        # stream does not take whole (a private key's BEGIN line cut over a continuation).
        secrets_refused=guarded
        and (bool(result.credentials) or any(d.code == "S001" for d in result.diagnostics)),
    )


def _clean_up(held: IO[bytes] | None, writer: Any, staging: Path | None) -> None:
    """Close what held standard output back; drop an output not committed and the staging folder."""
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


def said_for(
    done: Converted,
    *,
    force: bool = False,
    quiet: bool = False,
    report: bool = False,
    report_json: Path | None = None,
    alone: bool = True,
) -> tuple[Said, ...]:
    """What ``convert`` says on standard error about one result, in order, after the input's
    findings (which the command shows as ``check`` does): why nothing was written, the
    provider credentials (never the key), the whole fidelity report (``report``) or its
    losses and skipped records (unless ``quiet``), the report as JSON (``report_json`` ``-``),
    where the output went (``alone``: a conversion of one input), and the warnings ``quiet``
    never silences: errors it was written despite, records skipped, secrets carried over."""
    shown, verdict = done.shown, done.verdict
    if done.error is not None:
        return (Said(done.error, "error"),)
    if done.output is not None and verdict.refused:
        return (verdict.said(shown),)
    kept = "" if done.secrets_refused else " (kept: --keep-secrets)"
    said = [Said(line + kept) for line in done.credentials]
    if done.secrets_refused:
        return (*said, credentials_refused(shown))
    if report:
        said.extend([Said(done.report[:-1])] if done.report else [])
    elif not quiet:
        said.extend(Said(f"{shown}: {loss}") for loss in done.notes.losses)
        said.extend(Said(skipped) for skipped in done.notes.skipped)
    if done.report_error is not None:
        return (*said, Said(done.report_error, "error"))
    if report_json is not None and str(report_json) == "-":
        said.append(Said(json.dumps(done.report_data, indent=2)))
    if alone and done.output is not None:
        said.append(Said(f"wrote {done.output} ({done.source} → {done.target})"))
    if verdict.refusing:
        what = "written anyway (--force)" if force else "converted anyway; it cannot be read faithfully"
        said.append(Said(f"{shown}: {len(verdict.refusing)} error(s); {what}", "!"))
    if done.notes.skipped:
        said.append(Said(f"{shown}: {len(done.notes.skipped)} record(s) skipped", "!"))
    if done.notes.secrets:  # a secret must not leave unnoticed
        said.append(Said(f"{shown}: {done.notes.secrets}", "!"))
    return tuple(said)


__all__ = [
    "ConvertUsageError",
    "Converted",
    "Notes",
    "bbox_file",
    "convert_file",
    "foreign_format",
    "said_for",
    "target_format",
    "write_report",
]


class _HeldOutput(tempfile.SpooledTemporaryFile):  # type: ignore[type-arg]
    """Standard output held back: in memory up to ``max_size`` bytes, then in a temporary file.
    A write that would pass the limit moves what is held to the file first (the library's own
    rollover copies the memory buffer after the write is in it: a long record three times)."""

    def __init__(self, max_size: int) -> None:
        super().__init__(max_size=max_size)
        self._limit = max_size
        self._written = 0

    def write(self, s: Any) -> int:
        self._written += len(s)
        if self._written > self._limit:
            self.rollover()  # (nothing once rolled over)
        return int(super().write(s))
