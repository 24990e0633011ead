"""Many sessions at once (``bbox-lark report PATH... -o DIR``): one page per session and an
``index.html`` that lists them (docs/report.md#many-sessions).

Each session's page is written by a worker process (:func:`bbox_lark.files.runner.job_count`
workers, at most a few sessions in flight, as ``stats`` and ``check`` spread files); a worker
sends back one small :class:`SessionRow`, read from the same first pass that drew the page,
so the index says what the pages say. The parent keeps only the rows, so memory grows by a
row per session, never by a page.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bbox_lark.numbers.review import ReviewOptions, session_costs
from bbox_lark.report.page import duration_text, esc
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.files.discover import FoundInput
    from bbox_lark.files.runner import Job
    from bbox_lark.report.survey import Survey

__all__ = ["INDEX", "SessionRow", "page_names", "row_of", "write_index", "write_many"]

#: The index's file name in the output folder.
INDEX = "index.html"


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One session of the index (None: not known)."""

    source: str
    page: str | None
    session: str | None = None
    date: str | None = None
    model: str | None = None
    agent: str | None = None
    lines: int = 0
    calls: int = 0
    failures: int = 0
    pending: int = 0
    loops: int = 0
    stated_usd: str | None = None
    estimated_usd: str | None = None
    duration: float | None = None
    #: Why there is no page (the input could not be read), or records skipped.
    problem: str | None = None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def row_of(found: Survey, source: str, page: str | None) -> SessionRow:
    """The index row of a session, from its page's first pass."""
    header = found.header
    totals = found.totals
    costs = session_costs(totals)
    date = totals.first_ts if totals is not None else None
    model = _text(header.get("model")) or (totals.models[0] if totals is not None and totals.models else None)
    review = found.review
    return SessionRow(
        source=source,
        page=page,
        session=_text(header.get("id")),
        date=date,
        model=model,
        agent=_text(header.get("agent")),
        lines=found.lines,
        calls=found.calls,
        failures=found.errors,
        pending=found.pending,
        loops=len(review.loops) if review is not None else 0,
        stated_usd=None if costs.stated_usd is None else str(costs.stated_usd),
        estimated_usd=None if costs.estimated_usd is None else f"{costs.estimated_usd:.4f}",
        duration=found.duration,
    )


def page_names(sources: list[str]) -> list[str]:
    """Each source's page name in the output folder: its file name with ``.html``, made
    unique (``name-2.html``) when two sources share a name; never ``index.html``."""
    taken: set[str] = {INDEX}
    names: list[str] = []
    for source in sources:
        stem = Path(source.rstrip("/")).name or "session"
        base = Path(stem).stem if Path(stem).suffix else stem
        name, n = f"{base}.html", 1
        while name in taken:
            n += 1
            name = f"{base}-{n}.html"
        taken.add(name)
        names.append(name)
    return names


def _one(
    source: str,
    target: str,
    from_: str | None,
    max_line: int,
    review: ReviewOptions | None = None,
    keep_secrets: bool = False,
) -> SessionRow:
    """One session's page, in a worker process; its row."""
    from bbox_lark.convert import ConvertError
    from bbox_lark.convert.base import Skipped
    from bbox_lark.files.config import ConfigError
    from bbox_lark.report import OutputError, write_report

    skipped: list[Skipped] = []
    found: list[Survey] = []
    page = Path(target).name
    try:
        write_report(
            source,
            Path(target),
            from_=from_,
            max_line=max_line,
            on_skipped=skipped.append,
            on_survey=found.append,
            keep_secrets=keep_secrets,
        )
    except (ConvertError, OutputError, ConfigError) as error:
        return SessionRow(source, None, problem=str(error))
    except OSError as error:
        return SessionRow(source, None, problem=f"{source}: cannot read: {error.strerror or error}")
    row = row_of(found[0], source, page)
    if skipped:
        from dataclasses import replace

        row = replace(row, problem=f"{len(skipped)} record(s) skipped (not on the page)")
    return row


def write_many(
    inputs: list[FoundInput],
    out_dir: Path,
    *,
    from_: str | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    jobs: Any = None,
    on_row: Callable[[SessionRow], None] | None = None,
    review: ReviewOptions | None = None,
    keep_secrets: bool = False,
) -> list[SessionRow]:
    """Write each input's page into ``out_dir`` and then ``index.html``; returns the rows in
    the inputs' order. Pages are written by :func:`bbox_lark.files.runner.job_count` workers
    (``jobs``: a number, or ``auto``/None: every core). Raises :class:`OSError` when
    ``out_dir`` cannot be made."""
    out_dir.mkdir(parents=True, exist_ok=True)
    names = page_names([item.path for item in inputs])
    rows: list[SessionRow] = []
    for row in _rows(inputs, names, out_dir, from_, max_line, jobs, review, keep_secrets):
        rows.append(row)
        if on_row is not None:
            on_row(row)
    from bbox_lark.files.atomic import AtomicWriter

    with AtomicWriter(out_dir / INDEX) as writer:
        import io

        text = io.TextIOWrapper(writer.stream, encoding="utf-8", newline="\n")
        try:
            write_index(rows, text)
            text.flush()
        finally:
            text.detach()
        writer.commit()
    return rows


def _rows(
    inputs: list[FoundInput],
    names: list[str],
    out_dir: Path,
    from_: str | None,
    max_line: int,
    jobs: Any,
    review: ReviewOptions | None,
    keep_secrets: bool = False,
) -> Iterator[SessionRow]:
    from bbox_lark.files.runner import file_size, run_each

    def far(item: FoundInput) -> Job | None:
        if item.problem is not None or item.stdin:
            return None
        return _one, (item.path, str(out_dir / names[index[id(item)]]), from_, max_line, review, keep_secrets)

    def here(item: FoundInput, pool: object) -> SessionRow:
        plan = far(item)
        return _unusable(item) if plan is None else _one(*plan[1])

    def failed(item: FoundInput, error: BaseException) -> SessionRow:
        # a worker died: this session's row says so
        return SessionRow(item.path, None, problem=f"{type(error).__name__}: {error}")

    index = {id(item): position for position, item in enumerate(inputs)}
    yield from run_each(inputs, far, here, failed, jobs=jobs, size=lambda item: file_size(item.path))


def _unusable(item: FoundInput) -> SessionRow:
    why = item.problem or "-: standard input is one session; report it alone"
    return SessionRow(item.path, None, problem=why)


_COLUMNS = (
    ("session", False),
    ("date", False),
    ("model", False),
    ("agent", False),
    ("lines", True),
    ("calls", True),
    ("failed", True),
    ("never finished", True),
    ("loops", True),
    ("cost (stated)", True),
    ("cost (estimated)", True),
    ("duration", True),
)


def write_index(rows: list[SessionRow], out: TextIO) -> None:
    """The index page: a sortable, filterable table of ``rows``, with totals and links."""
    from bbox_lark.report.assets import CSP_INDEX, INDEX_SCRIPT, INDEX_STYLE

    w = out.write
    w("<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n")
    w(f'<meta http-equiv="Content-Security-Policy" content="{CSP_INDEX}">\n')
    w('<meta name=viewport content="width=device-width, initial-scale=1">\n')
    w('<meta name=referrer content="no-referrer">\n<link rel=icon href="data:,">\n')
    w(f"<title>bbox report · {len(rows):,} sessions</title>\n<style>{INDEX_STYLE}</style>\n</head>\n<body>\n")
    w(
        f"<header class=bar><b>bbox report</b> <span>{len(rows):,} sessions</span>\n"
        '<input id=filter type=search placeholder="Filter sessions (any text in a row)" '
        "aria-label=Filter autocomplete=off>\n<span id=shown aria-live=polite></span>\n</header>\n<main>\n"
    )
    stated = sum((float(r.stated_usd) for r in rows if r.stated_usd is not None), 0.0)
    estimated = sum((float(r.estimated_usd) for r in rows if r.estimated_usd is not None), 0.0)
    seconds = sum(r.duration or 0.0 for r in rows)
    totals = (
        ("sessions", f"{len(rows):,}"),
        ("lines", f"{sum(r.lines for r in rows):,}"),
        ("calls", f"{sum(r.calls for r in rows):,}"),
        ("failed", f"{sum(r.failures for r in rows):,}"),
        ("never finished", f"{sum(r.pending for r in rows):,}"),
        ("sessions with loops", f"{sum(1 for r in rows if r.loops):,}"),
        ("cost (stated)", f"${stated:.2f} in {sum(1 for r in rows if r.stated_usd is not None):,} sessions"),
        ("cost (estimated)", f"${estimated:.2f} in {sum(1 for r in rows if r.estimated_usd):,} sessions"),
        ("duration", duration_text(seconds) if any(r.duration for r in rows) else "–"),
        ("not reported", f"{sum(1 for r in rows if r.page is None):,}"),
    )
    w("<p class=totals id=totals>")
    w(" ".join(f"<span>{esc(label)} <b>{esc(value)}</b></span>" for label, value in totals))
    w("</p>\n<table id=sessions>\n<thead><tr>")
    for label, numeric in _COLUMNS:
        w(f"<th{' data-num' if numeric else ''} title='sort'>{esc(label)}</th>")
    w("</tr></thead>\n<tbody>\n")
    for row in rows:
        _row(w, row)
    w("</tbody>\n</table>\n</main>\n")
    w(f"<script>{INDEX_SCRIPT}</script>\n</body>\n</html>\n")


def _row(w: Callable[[str], Any], row: SessionRow) -> None:
    name = row.session or os.path.basename(row.source)
    w("<tr class=problem>" if row.problem else "<tr>")
    if row.page is not None:
        w(f'<td class=s><a href="{esc(_href(row.page))}">{esc(name)}</a>')
    else:
        w(f"<td class=s>{esc(name)}")
    w(f"<br><small title='{esc(row.source)}'>{esc(os.path.basename(row.source.rstrip('/')))}</small>")
    if row.problem:
        w(f"<br><small>{esc(row.problem)}</small>")
    w("</td>")
    date = row.date or ""
    w(f"<td class=d data-v='{esc(date)}'>{esc(date[:16].replace('T', ' '))}</td>")
    for value in (row.model, row.agent):
        w(f"<td class=t>{esc(value or '')}</td>")
    for count, bad in (
        (row.lines, ""),
        (row.calls, ""),
        (row.failures, " bad" if row.failures else ""),
        (row.pending, " bad" if row.pending else ""),
        (row.loops, " loop" if row.loops else ""),
    ):
        w(f"<td class='n{bad}'>{count:,}</td>")
    for money in (row.stated_usd, row.estimated_usd):
        shown = f"${money}" if money is not None else "–"
        w(f"<td class=n data-v='{esc(money or '')}'>{esc(shown)}</td>")
    seconds = row.duration
    took = duration_text(seconds) if seconds is not None else "–"
    w(f"<td class=n data-v='{'' if seconds is None else seconds}'>{took}</td>")
    w("</tr>\n")


def _href(page: str) -> str:
    """A page's link relative to the index: its name, percent-encoded (never a scheme)."""
    from urllib.parse import quote

    return "./" + quote(page)
