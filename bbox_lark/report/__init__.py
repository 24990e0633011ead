"""A self-contained HTML report of one session (``bbox-lark report``; docs/report.md).

:func:`render` writes the page to a text stream. The page has everything inline (style,
script, the usage chart as SVG), loads nothing, opens from disk and prints. Any format
``convert`` reads is reported through its bbox form (a Claude Code session, an ATIF
trajectory …), so the line numbers are those of that form.

The input is parsed once into the line scan's records: the survey
(:mod:`bbox_lark.report.survey`) reads them first, as ``check`` does, and the page
(:mod:`bbox_lark.report.page`) is then written from the same records. A file larger than
:data:`ONE_PARSE_MAX_BYTES` is read twice instead (the survey, then the page as the second
pass reads), so that memory holds small per-line facts (a call's outcome, a far
observation's preview, the diagnostics), never that document or the page.

May import everything below the CLI: :mod:`bbox_lark.syntax`, :mod:`bbox_lark.files`,
:mod:`bbox_lark.secrets`, :mod:`bbox_lark.checks`, :mod:`bbox_lark.convert` and
:mod:`bbox_lark.numbers` (``tools/layers.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bbox_lark.convert.files import bbox_file
from bbox_lark.errors import WriteError
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.convert.base import Skipped
    from bbox_lark.files.config import Settings
    from bbox_lark.numbers.review import ReviewOptions
    from bbox_lark.report.survey import Survey

__all__ = ["OutputError", "default_output", "render", "write_report"]

#: The largest file whose records the survey keeps for the page (one parse); a larger one is
#: read a second time for the page instead of being held.
ONE_PARSE_MAX_BYTES = 1 << 20


class OutputError(WriteError):
    """The report cannot be written where it was asked to go (the message says why)."""


def render(
    source: str | Path | bytes,
    out: TextIO,
    *,
    from_: str | None = None,
    name: str | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    on_skipped: Callable[[Skipped], None] | None = None,
    live: bool = False,
    review: ReviewOptions | None = None,
    keep_secrets: bool = False,
) -> Survey:
    """Write the HTML report of ``source`` to ``out``; returns what the first pass learnt
    (:class:`~bbox_lark.report.survey.Survey`: the index and the live page read it).

    Every secret is masked on the page (starred out but for its prefix and last
    characters), and a banner at the top names each; ``keep_secrets`` shows them as the log
    has them (:mod:`bbox_lark.report.masking`).

    ``source`` is a path (``-`` for standard input) or the input's bytes. ``from_`` names
    its format (detected like ``convert`` does when None); a format other than bbox is
    converted to bbox first, into a temporary file. ``name`` titles the page when the
    header has no ``id``. ``on_skipped`` is called with each record the conversion could not
    read (it is not on the page, so the caller says so). Raises
    :class:`bbox_lark.convert.ConvertError` when the format cannot be told or read, and
    :class:`OSError` when the input cannot be read. The findings on the page follow the
    configuration that applies to ``source`` as ``check`` finds it (``select``, ``ignore``,
    ``per-file-ignores``, ``allowed-secrets``; the current folder's for standard input or
    bytes); :class:`bbox_lark.files.config.ConfigError` when it cannot be read. ``live``: the
    page of ``report --watch`` (it may ask its server for updates). ``review``: the
    thresholds of the "what went wrong" card (:class:`bbox_lark.numbers.review.ReviewOptions`)."""
    from bbox_lark.files.config import Resolver

    given = "-" if isinstance(source, bytes) else str(source)
    settings = Resolver().for_path(given)
    from bbox_lark.report.masking import Banner, masked_copy

    with contextlib.ExitStack() as stack:
        path = stack.enter_context(bbox_file(source, from_=from_, max_line=max_line, on_skipped=on_skipped))
        title = name or (str(source) if isinstance(source, (str, Path)) else "session")
        if not keep_secrets:
            path, notes = stack.enter_context(masked_copy(path, settings.allowed_secrets))
            if notes:
                out = Banner(out, notes)  # type: ignore[assignment]
        found = write_page(
            path,
            out,
            title=title,
            max_line=max_line,
            settings=settings,
            shown=given,
            live=live,
            review=review,
        )
        out.flush()
        return found


def default_output(source: str) -> Path | None:
    """Where ``bbox-lark report FILE`` writes without ``-o``: FILE's name with ``.html``, in
    the current folder; None (standard output) for standard input."""
    if source == "-":
        return None
    return Path(Path(source).name).with_suffix(".html")


def write_report(
    source: str,
    output: Path | None,
    *,
    from_: str | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    on_skipped: Callable[[Skipped], None] | None = None,
    on_survey: Callable[[Survey], None] | None = None,
    review: ReviewOptions | None = None,
    keep_secrets: bool = False,
) -> Path | None:
    """Write the report of ``source`` (a path, ``-`` for standard input) to ``output``,
    atomically (nothing is left behind when reading fails), or to standard output when
    ``output`` is None. Returns the path written; raises :class:`OutputError` when the
    output cannot be written, and what :func:`render` raises when the input cannot be read.
    ``on_survey`` is given what the first pass learnt."""
    import io
    import sys

    from bbox_lark.files.atomic import AtomicWriter

    if output is None:
        found = render(
            source,
            sys.stdout,
            from_=from_,
            max_line=max_line,
            on_skipped=on_skipped,
            review=review,
            keep_secrets=keep_secrets,
        )
        if on_survey is not None:
            on_survey(found)
        return None
    try:
        writer = AtomicWriter(output)
    except OSError as error:
        raise OutputError(f"{output}: cannot write: {error.strerror or error}") from None
    with writer:
        text = io.TextIOWrapper(writer.stream, encoding="utf-8", newline="\n")
        try:
            found = render(
                source,
                text,
                from_=from_,
                max_line=max_line,
                on_skipped=on_skipped,
                review=review,
                keep_secrets=keep_secrets,
            )
            text.flush()
        finally:
            text.detach()
        try:
            writer.commit()
        except OSError as error:
            raise OutputError(f"{output}: cannot write: {error.strerror or error}") from None
    if on_survey is not None:
        on_survey(found)
    return output


def write_page(
    path: Path,
    out: TextIO,
    *,
    title: str,
    max_line: int = DEFAULT_MAX_LINE,
    settings: Settings | None = None,
    shown: str | None = None,
    live: bool = False,
    review: ReviewOptions | None = None,
) -> Survey:
    """The survey and the page of a bbox file, from one parse (the survey keeps the records
    for the page) or, above :data:`ONE_PARSE_MAX_BYTES`, two; ``settings`` choose the checks
    (for the file ``shown``, the one the user named, when ``path`` is its conversion)."""
    from bbox_lark.report.page import Page
    from bbox_lark.report.survey import survey
    from bbox_lark.syntax.parser import Head
    from bbox_lark.syntax.record import Record, iter_records

    rules: tuple[Any, Any, Any] = (None, None, ())
    if settings is not None:
        named = None if shown in (None, "-") else shown
        rules = (settings.select, settings.ignore_for(named), settings.allowed_secrets)
    kept: list[Head | Record] | None = [] if path.stat().st_size <= ONE_PARSE_MAX_BYTES else None
    with path.open("rb") as first:
        found = survey(
            iter_records(first, max_line=max_line), path=path, rules=rules, options=review, keep=kept
        )
    page = Page(out, found, title, live=live)
    if kept is not None:
        page.write(_drained(kept))
        return found
    with path.open("rb") as second:
        page.write(iter_records(second, max_line=max_line))
    return found


def _drained(items: list[Any]) -> Iterator[Any]:
    """``items`` in order, each let go of once it is given (a line's node, built for the page,
    is not held to the end)."""
    items.reverse()
    while items:
        yield items.pop()
