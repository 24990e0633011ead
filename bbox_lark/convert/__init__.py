"""Format converters: the one entry point (``bbox-lark convert``, :func:`convert`) that every
format plugs into.

A format is a :class:`~bbox_lark.convert.base.Format`: a name, its file name endings, a
content sniffer, ``read(text) -> Document``, ``write(Document) -> str`` and a statement of
what survives the trip. Readers and writers fill in a :class:`Report` of what they dropped or
synthesized, with the source line of each. Adding a format is one module with a ``FORMAT``
and one line in :data:`_BUILTIN` (or a call to :func:`register_format`).

Formats now: ``bbox`` (the lossless printer) and ``compact`` (docs/compact.md).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from bbox_lark.ast import Diagnostic
from bbox_lark.convert import bbox as _bbox
from bbox_lark.convert import compact as _compact
from bbox_lark.convert.base import (
    Conversion,
    ConvertError,
    Format,
    Report,
    ReportEntry,
    UndetectableFormatError,
    UnknownFormatError,
    UnsupportedOptionError,
)
from bbox_lark.source import DEFAULT_MAX_LINE, decode

__all__ = [
    "Conversion",
    "ConvertError",
    "Format",
    "Report",
    "ReportEntry",
    "UndetectableFormatError",
    "UnknownFormatError",
    "UnsupportedOptionError",
    "convert",
    "detect_format",
    "formats",
    "get_format",
    "register_format",
]

_BUILTIN = (_bbox.FORMAT, _compact.FORMAT)
_REGISTRY: dict[str, Format] = {f.name: f for f in _BUILTIN}


def register_format(format_: Format) -> None:
    """Add (or replace) a format."""
    _REGISTRY[format_.name] = format_


def formats() -> tuple[Format, ...]:
    """Every registered format, in registration order."""
    return tuple(_REGISTRY.values())


def get_format(name: str) -> Format:
    """The format called ``name`` (case-insensitive); :class:`UnknownFormatError` otherwise."""
    found = _REGISTRY.get(name.lower())
    if found is None:
        raise UnknownFormatError(name, _REGISTRY)
    return found


def format_for_path(path: str | Path) -> list[Format]:
    """The formats whose file name endings match ``path`` (longest ending first)."""
    name = Path(path).name.lower()
    matches = [(len(ext), f) for f in _REGISTRY.values() for ext in f.extensions if name.endswith(ext)]
    return [f for _, f in sorted(matches, key=lambda pair: -pair[0])]


def detect_format(path: str | Path | None, data: bytes | str) -> str | None:
    """The name of the format of ``data``: from the file name ending when it names exactly
    one format, else from the content (the surest sniffer wins; ties go to the format
    registered first). None when neither tells."""
    candidates = format_for_path(path) if path is not None and str(path) != "-" else []
    if len(candidates) == 1:
        return candidates[0].name
    text = decode(data)
    pool = candidates or list(_REGISTRY.values())
    best, best_score = None, 0
    for candidate in pool:
        score = candidate.sniff(text)
        if score > best_score:
            best, best_score = candidate, score
    if best is None and candidates:
        return candidates[0].name
    return best.name if best is not None else None


def convert(
    data: bytes | str,
    from_: str | None = None,
    *,
    to: str,
    path: str | Path | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    **options: Any,
) -> Conversion:
    """Convert ``data`` from format ``from_`` (detected from ``path`` and the content when
    None) to format ``to``. ``options`` go to the writer (``lossy=True`` for compact).

    Raises :class:`ConvertError` for a usage problem only (unknown format, undetectable
    input, an option the writer does not take); a broken input is converted as far as it
    goes, and its findings are in :attr:`Conversion.diagnostics`, at the input's lines.
    """
    target = get_format(to)
    for option, value in options.items():
        if value and option not in target.write_options:
            supported = [f.name for f in _REGISTRY.values() if option in f.write_options]
            raise UnsupportedOptionError(option, target.name, supported)
    if from_ is not None:
        source = get_format(from_)
    else:
        name = detect_format(path, data)
        if name is None:
            shown = "<stdin>" if path is None or str(path) == "-" else str(path)
            raise UndetectableFormatError(shown, _REGISTRY)
        source = _REGISTRY[name]
    text = decode(data)
    blob_path = None if path is None or str(path) == "-" else path
    read_report = Report()
    document = source.read(text, report=read_report, max_line=max_line, path=blob_path)
    write_report = Report()
    chosen = dict(target.foreign_options) if source.name != target.name else {}
    chosen.update((key, value) for key, value in options.items() if key in target.write_options)
    output = target.write(document, report=write_report, **chosen)
    # The writer saw the document's lines; show them at the input's lines.
    merged = Report(found={key: list(lines) for key, lines in read_report.found.items()})
    for (action, what), lines in write_report.found.items():
        merged.found.setdefault((action, what), []).extend(read_report.source_line(n) for n in lines)
    return Conversion(
        text=output,
        report=merged.entries,
        document=document,
        diagnostics=tuple(_at_source(d, read_report) for d in document.diagnostics),
        source=source.name,
        target=target.name,
    )


def _at_source(diagnostic: Diagnostic, report: Report) -> Diagnostic:
    if not report.origin:
        return diagnostic
    line, shift = report.origin.get(diagnostic.line, (diagnostic.line, 0))
    return replace(diagnostic, line=line, col=diagnostic.col + shift)
