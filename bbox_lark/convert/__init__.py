"""Format converters: the one entry point (``bbox-lark convert``, :func:`convert`,
:func:`convert_stream`) that every format plugs into.

A format is a module with a ``FORMAT`` (:class:`~bbox_lark.convert.base.Format`): a reader
that yields a document stream, a writer that writes one, its options and its mapping tables
(see :mod:`bbox_lark.convert.base`). Adding a format is one module and one line in
:data:`BUILTIN` (or a call to :func:`register_format`). Modules are imported when the
registry is first used, so ``bbox-lark check`` never pays for them.

A conversion streams: the reader's items go to the writer as they are read, so memory does
not grow with the input (unless a format needs the whole document, as compact and ATIF do).

Every conversion, whatever the formats, passes the items through the secret scanner
(:class:`bbox_lark.secrets.redaction.StreamScan`, docs/reference.md#secrets) on their way to the writer: the
secrets carried over are counted per kind (:attr:`Conversion.secrets`, a fidelity report
row), and with the shared option ``redact`` (:data:`SHARED_OPTIONS`) each is replaced by
``[redacted:KIND]`` before any writer sees it, so a writer that hashes what it writes
(Lightbox) chains the redacted events.

May import :mod:`bbox_lark.syntax`, :mod:`bbox_lark.files`, :mod:`bbox_lark.secrets`,
:mod:`bbox_lark.checks` and :mod:`bbox_lark.api`, and the rules of :mod:`bbox_lark.numbers`
(``usage``, ``session``, ``outcomes``, ``prices``: a converter writes the numbers ``stats``
counts; listed exceptions in ``tools/layers.py``), never the report or the CLI.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from bbox_lark._renamed import renamed
from bbox_lark.convert.base import (
    FATES,
    Conversion,
    ConvertError,
    Fidelity,
    Format,
    Input,
    MappingRow,
    Option,
    ReadContext,
    RefusedInputError,
    Report,
    ReportEntry,
    Skipped,
    UndetectableFormatError,
    UnknownFormatError,
    UnsupportedOptionError,
    WritableText,
    WriteContext,
    collect,
    flatten,
    with_overflow,
)
from bbox_lark.files.inputs import is_dir
from bbox_lark.syntax.nodes import Diagnostic
from bbox_lark.syntax.source import DEFAULT_MAX_LINE, decode

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item

__all__ = [
    "FATES",
    "SHARED_OPTIONS",
    "Conversion",
    "ConvertError",
    "Fidelity",
    "Format",
    "Input",
    "MappingRow",
    "Option",
    "ReadContext",
    "RefusedInputError",
    "Report",
    "ReportEntry",
    "Skipped",
    "UndetectableFormatError",
    "UnknownFormatError",
    "UnsupportedOptionError",
    "WriteContext",
    "collect",
    "convert",
    "convert_stream",
    "detect_folder_format",
    "detect_format",
    "flatten",
    "formats",
    "get_format",
    "register_format",
]

#: The modules of the built-in formats (``bbox_lark.convert.<name>``, each with a ``FORMAT``),
#: in the order ``--help`` lists them.
BUILTIN = ("bbox", "compact", "atif", "lightbox", "claude_code", "jsonl", "bb7", "otlp")

#: The options of every conversion, whatever the formats (``convert --redact``).
SHARED_OPTIONS = (
    Option(
        "redact",
        "Replace each secret (the S codes) with a redacted:KIND marker in the output; without"
        " it, the secrets carried over are counted on stderr.",
        default=False,
    ),
    Option(
        "keep_secrets",
        "Write a file that holds a provider's credential (S001) as it is, each named on stderr;"
        " without it or --redact, such a file is refused (exit 1, nothing written).",
        default=False,
    ),
)

_REGISTRY: dict[str, Format] = {}
_LOADED = False


def _registry() -> dict[str, Format]:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        builtin = {}
        for module in BUILTIN:
            found: Format = import_module(f"bbox_lark.convert.{module}").FORMAT
            builtin[found.name] = found
        # Formats registered before the first use come after the built-in ones.
        builtin.update(_REGISTRY)
        _REGISTRY.clear()
        _REGISTRY.update(builtin)
    return _REGISTRY


def register_format(format_: Format) -> None:
    """Add (or replace) a format."""
    _registry()[format_.name] = format_


def formats() -> tuple[Format, ...]:
    """Every registered format, in registration order."""
    return tuple(_registry().values())


def get_format(name: str) -> Format:
    """The format called ``name`` (case-insensitive; ``-`` and ``_`` alike); raises
    :class:`UnknownFormatError` otherwise."""
    registry = _registry()
    found = registry.get(name.lower()) or registry.get(name.lower().replace("_", "-"))
    if found is None:
        raise UnknownFormatError(name, registry)
    return found


def format_for_path(path: str | Path) -> list[Format]:
    """The formats whose file name endings match ``path`` (longest ending first)."""
    name = Path(path).name.lower()
    matches = [(len(ext), f) for f in _registry().values() for ext in f.extensions if name.endswith(ext)]
    return [f for _, f in sorted(matches, key=lambda pair: -pair[0])]


def detect_format(path: str | Path | None, data: bytes | str) -> str | None:
    """The name of the format of ``data`` (its first 64 KiB are enough): from the file name
    ending when it names exactly one format, else from the content (the surest sniffer
    wins; ties go to the format registered first). None when neither tells."""
    candidates = format_for_path(path) if path is not None and str(path) != "-" else []
    if len(candidates) == 1:
        return candidates[0].name
    text = decode(data)
    pool = candidates or list(_registry().values())
    best, best_score = None, 0
    for candidate in pool:
        if candidate.read is None:
            continue
        score = candidate.sniff(text)
        if score > best_score:
            best, best_score = candidate, score
    if best is None and candidates:
        # No format the name suggests claims the content: one that does (ATIF JSON Lines in a
        # .jsonl file), else the name's first.
        others = (f for f in _registry().values() if f not in candidates and f.read is not None)
        claimed = max(others, key=lambda f: f.sniff(text), default=None)
        if claimed is not None and claimed.sniff(text) > 0:
            return claimed.name
        return candidates[0].name
    return best.name if best is not None else None


def detect_folder_format(path: Path) -> str | None:
    """The name of the format that reads the folder ``path``: the one format that reads
    folders and recognises it; None when none does."""
    for candidate in _registry().values():
        if candidate.reads_folders and candidate.sniff(f"folder:{path}"):
            return candidate.name
    return None


def split_options(
    source: Format, target: Format, options: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reader's and the writer's options, each with its defaults; an option given
    (not None and not its default) that neither takes is :class:`UnsupportedOptionError`."""
    read: dict[str, Any] = {o.name: o.default for o in source.options if o.applies == "read"}
    write: dict[str, Any] = {o.name: o.default for o in target.options if o.applies == "write"}
    for name, value in options.items():
        if value is None:
            continue
        taken = False
        for fmt, applies, chosen in ((source, "read", read), (target, "write", write)):
            option = fmt.option(name, applies)
            if option is not None:
                chosen[name] = option.check(value)
                taken = True
        if not taken and value is not False:
            supported = sorted({f.name for f in _registry().values() for o in f.options if o.name == name})
            where = f"{source.name} input or {target.name} output"
            raise UnsupportedOptionError(name, where, supported)
    return read, write


def _resolve(source_input: Input, from_: str | None) -> Format:
    if from_ is not None:
        return get_format(from_)
    path = source_input.path
    if path is not None and is_dir(path):
        name = detect_folder_format(path)
        if name is None:
            raise ConvertError(f"{path}: is a folder that no format reads; give one file")
        return _registry()[name]
    name = detect_format(path, source_input.head())
    if name is None:
        raise UndetectableFormatError(source_input.shown, _registry())
    return _registry()[name]


def convert_stream(
    source_input: Input,
    out: TextIO | None,
    *,
    to: str,
    from_: str | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    output_path: Path | None = None,
    check: bool = True,
    scan: bool = True,
    **options: Any,
) -> Conversion:
    """Convert ``source_input`` to format ``to``, writing to ``out`` as it reads (a folder
    format writes to ``output_path`` instead). The returned conversion's ``text`` is empty.
    ``scan=False`` leaves out the secret scanner (no ``redact``, no secrets counted): only
    for a bbox form made to be parsed, with every check, right after
    (:func:`bbox_lark.convert.files.bbox_file`: ``stats``, ``report`` and ``export`` of a
    foreign file).

    Raises :class:`ConvertError` for a usage problem (unknown format, undetectable input,
    an option that does not apply) and :class:`RefusedInputError` for an input refused as a
    whole; a broken input is otherwise converted as far as it goes, with its findings in
    :attr:`Conversion.diagnostics` and unreadable records in :attr:`Conversion.skipped`."""
    target = get_format(to)
    source = _resolve(source_input, from_)
    if source.read is None:
        raise ConvertError(f"{source.name} cannot be read, only written")
    if target.write is None:
        raise ConvertError(f"{target.name} cannot be written, only read")
    if target.output == "folder" and output_path is None:
        raise ConvertError(f"{target.name} output is a folder: give -o DIR")
    redact = bool(options.pop("redact", False))
    options.pop("keep_secrets", None)  # the policy of the caller (bbox_lark.convert.files)
    allowed = tuple(options.pop("allowed_secrets", ()) or ())
    read_options, write_options = split_options(source, target, options)
    fidelity = Fidelity()
    if source.name == "atif" and source_input.path is not None and source_input.path.is_file():
        from bbox_lark.convert.atif.lines import merge_chain

        merged = merge_chain(source_input)  # continued_trajectory_ref: one session
        if merged is not None:
            source_input = Input(source_input.path, merged)
            fidelity.stage = "read"
            fidelity.kept("ATIF continuations (continued_trajectory_ref) read as one trajectory")
    read_ctx = ReadContext(fidelity, read_options, max_line, check=check, allowed_secrets=frozenset(allowed))
    foreign = source.name != target.name and not source.keeps_source
    write_ctx = WriteContext(fidelity, write_options, foreign=foreign, path=output_path)
    from bbox_lark.secrets.redaction import StreamScan
    from bbox_lark.syntax.transform import refusing_text

    keep_count = target.name in ("bbox", "compact")  # outputs that state # redactions=N
    if redact and not scan:
        raise ConvertError("redact needs the secret scanner (scan=True)")
    scanner = StreamScan(fidelity, redact=redact, allowed=allowed, keep_count=keep_count)
    staged = _staged(with_overflow(source.read(source_input, read_ctx), read_ctx), fidelity)
    items = scanner.items(staged) if scan else staged
    sink = cast(TextIO, WritableText(out, fidelity)) if out is not None else cast(TextIO, _Null())
    try:
        with refusing_text():  # the importers' own fallbacks for awkward text (transform)
            target.write(items, sink, write_ctx)
    finally:
        for stream in (items, staged):
            close = getattr(stream, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()
    fidelity.stage = "write"
    diagnostics = tuple(_at_source(d, fidelity) for d in read_ctx.diagnostics)
    credentials = tuple(
        (line, col, secret.kind) for line, col, secret in scanner.located if secret.severity == "error"
    )
    return Conversion("", fidelity, diagnostics, source.name, target.name, scanner.kinds, redact, credentials)


def _staged(items: Iterator[Item], fidelity: Fidelity) -> Iterator[Item]:
    """The reader's items, with the report's stage set to ``read`` while the reader runs."""
    while True:
        fidelity.stage = "read"
        try:
            item = next(items)
        except StopIteration:
            fidelity.stage = "write"
            return
        fidelity.stage = "write"
        yield item


class _Null:
    """A text sink for folder writers that write nothing to the stream."""

    def write(self, text: str) -> int:
        return len(text)


@renamed(data="source")
def convert(
    source: bytes | str,
    from_: str | None = None,
    *,
    to: str,
    path: str | Path | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    output_path: str | Path | None = None,
    **options: Any,
) -> Conversion:
    """Convert ``source`` (the input's bytes or text; ``path`` names it, for format detection
    and blob lookup) from format ``from_`` (detected when None) to format ``to``, in memory.
    ``options`` are the readers' and writers' options (``lossy=True`` for compact …).

    A ``str`` ``source`` is read as the UTF-8 bytes it stands for (U+DC80–U+DCFF as the
    undecodable bytes ``surrogateescape`` made them); one holding any other surrogate code
    point (a lone ``"\\udfff"``, or an emoji as two UTF-16 code units) has no such bytes and
    no round trip could give it back, so it is refused with a :class:`RefusedInputError`
    naming the code point, its line and column (:func:`~bbox_lark.convert.base.encode_text`).
    Text that must hold one is written as written text (``\\u{dfff}``; the Writer and the
    node builders do), which every lossless conversion keeps.

    Raises :class:`ConvertError` for a usage problem only; see :func:`convert_stream`."""
    import io

    buffer = io.StringIO(newline="")
    source_input = Input(path, source if source is not None else b"")
    if path is not None and is_dir(path):
        source_input = Input(path)
    result = convert_stream(
        source_input,
        buffer,
        to=to,
        from_=from_,
        max_line=max_line,
        output_path=Path(output_path) if output_path is not None else None,
        **options,
    )
    return replace(result, text=buffer.getvalue())


def _at_source(diagnostic: Diagnostic, fidelity: Fidelity) -> Diagnostic:
    if fidelity.origin is None:
        return diagnostic
    line, shift = fidelity.origin(diagnostic.line)
    return replace(diagnostic, line=line, col=diagnostic.col + shift)
