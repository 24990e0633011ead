"""Sessions as rows of four tables: ``sessions``, ``events``, ``calls`` and ``diagnostics``
(``bbox-lark export``, ``bbox-lark query``, :func:`bbox_lark.dask.read_bbox`;
``docs/analytics.md``).

The tables' columns and types are data (:data:`TABLES`), written once: the Parquet and CSV
writers, the DuckDB views, the Dask ``meta`` and the docs page all read them from here, and
``tests/test_tables.py`` checks that they agree.

One file gives rows in every table (:func:`session_rows`), as plain Python values in
columns; nothing here imports pyarrow, so a worker process sends its rows back cheaply and
the light install can still build them. Usage, cost and each call's outcome come from
:mod:`bbox_lark.numbers.session` (docs/reference.md#usage), the one place that decides them.

A file that cannot be read faithfully (undecodable text, a NUL, a line over the limit, an
unterminated quote in a call part, a header that cannot be loaded: the errors that make
``fmt`` and ``convert`` refuse it, :mod:`bbox_lark.files.writepolicy`) still gives its
``sessions`` row, with ``faithful`` false and the refusing codes in ``problem``, its
``diagnostics``, and the rows of whatever the parser read. A file that cannot be read at
all, or that bbox-lark fails on, gives its ``sessions`` row with ``problem`` set (and, for
a failure, its internal-error diagnostic), so no input silently disappears from a table.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.errors import MissingExtraError
from bbox_lark.numbers.outcomes import PAIRINGS
from bbox_lark.numbers.session import CallRecord, SessionCounter, SessionTotals
from bbox_lark.numbers.stats import Distinct
from bbox_lark.syntax.nodes import Diagnostic
from bbox_lark.syntax.record import Record
from bbox_lark.syntax.source import DEFAULT_MAX_LINE


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table: its name, its type and what it holds."""

    name: str
    #: ``string``, ``int64``, ``float64``, ``bool`` or ``timestamp`` (microseconds, UTC).
    type: str
    doc: str


def _columns(*specs: tuple[str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*spec) for spec in specs)


#: Header keys that get a column of their own in ``sessions`` (``header_`` + key), when
#: the header gives them as plain values.
HEADER_COLUMNS = (
    "format",
    "id",
    "agent",
    "model",
    "version",
    "client_version",
    "runner",
    "mode",
    "repo",
    "repo_sha",
    "branch",
    "cwd",
)

_SESSION_KEY = ("session_id", "string", "The header's `id`; the file's path when the header has none.")

#: Every table's columns, in order: the one definition of the tables' schema.
TABLES: dict[str, tuple[Column, ...]] = {
    "sessions": _columns(
        _SESSION_KEY,
        ("path", "string", "The file, as given or found (an fsspec URL for `read_bbox`)."),
        *((f"header_{key}", "string", f"The header's `{key}`.") for key in HEADER_COLUMNS),
        ("faithful", "bool", "False when the file cannot be read faithfully (see `problem`)."),
        ("problem", "string", "Why the file was not read, or not read faithfully (null when it was)."),
        ("lines", "int64", "Physical lines (header and body)."),
        ("events", "int64", "Body lines that are not blank or continuations (comments included)."),
        ("user_messages", "int64", "`u:` lines."),
        ("calls", "int64", "Calls: a start and its completion count once (rows of `calls`)."),
        ("calls_error", "int64", "Calls whose outcome is `error`."),
        ("calls_pending", "int64", "Calls that were started and never completed."),
        ("steps", "int64", "Distinct `step=` values on event lines."),
        ("responses", "int64", "Model responses that state usage (once each)."),
        ("models", "string", "Every model named (header, `# model:`, `model=`), comma-separated."),
        ("tokens_in", "int64", "Input tokens, without cache reads (each model response once, §12)."),
        ("tokens_out", "int64", "Output tokens."),
        ("tokens_cached", "int64", "Cache-read tokens (not included in `tokens_in`)."),
        ("usage_source", "string", "Where the usage was counted: `metrics` (`# metrics`) or `responses`."),
        (
            "cost_usd",
            "float64",
            "Stated cost (`@end`, closing comment, `# metrics`); never an estimate.",
        ),
        ("estimated_cost_usd", "float64", "Cost estimated from the usage with the genai-prices table."),
        ("estimate_note", "string", "Why there is no estimate (no model named, no price, ...)."),
        (
            "estimate_lower_bound",
            "bool",
            "True when the estimate is a lower bound: some usage names no cache writes (§13).",
        ),
        (
            "tokens_cache_write",
            "int64",
            "Cache-write tokens, where the source names them (part of `tokens_in`).",
        ),
        ("calls_ambiguous", "int64", "Calls paired by a guess (`pairing` `ambiguous` in `calls`)."),
        ("first_ts", "timestamp", "The earliest valid `ts=`."),
        ("last_ts", "timestamp", "The latest valid `ts=`."),
        ("duration_s", "float64", "`last_ts - first_ts` in seconds."),
        ("errors", "int64", "Error findings (rows of `diagnostics` with severity `error`)."),
        ("warnings", "int64", "Warning findings."),
    ),
    "events": _columns(
        _SESSION_KEY,
        ("path", "string", "The file."),
        ("line", "int64", "1-based line number in the file."),
        ("kind", "string", "The line's kind (`user`, `tool`, `observation`, `comment`, `lifecycle`, ...)."),
        ("name", "string", "Tool, skill, subagent type, `server.method`, mode, primitive or comment kind."),
        ("step", "int64", "`step=`."),
        ("ts", "timestamp", "`ts=` (null when missing or invalid)."),
        ("tid", "string", "`tid=`."),
        ("span", "string", "`span=`."),
        ("id", "string", "`id=`."),
        ("text", "string", "The message, call part or comment text."),
        ("result_kind", "string", "The result's form (`ok`, `error`, `count`, ...), null without a result."),
        ("result", "string", "The text after the result arrow."),
    ),
    "calls": _columns(
        _SESSION_KEY,
        ("path", "string", "The file."),
        ("key", "string", "The call's `id=` (or `span=`) value; null when it has neither."),
        ("tool", "string", "The name: tool, skill, plan action, subagent type, `server.method`."),
        ("family", "string", "`tool`, `mcp`, `subagent`, `question`, `skill` or `plan`."),
        ("kind", "string", "The start line's kind (`tool_start`, `tool`, `mcp`, ...)."),
        ("args", "string", "The positional arguments, space-separated, shortened to 200 characters."),
        ("start_line", "int64", "The line that starts (or is) the call."),
        ("end_line", "int64", "The completing line; the start for a one-line call; null when pending."),
        (
            "outcome",
            "string",
            "`ok`, `error`, `pending`, `skipped`, `retry` or `unknown`.",
        ),
        (
            "latency_ms",
            "int64",
            "`latency_ms=` of the completion or call, else the time between `ts=`s.",
        ),
        ("step", "int64", "The start line's `step=`."),
        ("ts", "timestamp", "The start line's `ts=`."),
        ("response", "int64", "The model response that made the call (1, 2, ... in the file), if known."),
        ("tokens_in", "int64", "Usage of that response: shared by its calls (see below)."),
        ("tokens_out", "int64", "Output tokens of that response."),
        ("tokens_cached", "int64", "Cache-read tokens of that response."),
        (
            "pairing",
            "string",
            "How the call was paired: `id` (nothing guessed), `order` (a start without a key and the"
            " next line of its tool), `ambiguous` (its result could be another open call's).",
        ),
    ),
    "diagnostics": _columns(
        _SESSION_KEY,
        ("path", "string", "The file."),
        ("line", "int64", "1-based line."),
        ("col", "int64", "1-based column."),
        ("code", "string", "The finding's code (`docs/checks.md`)."),
        ("severity", "string", "`error`, `warning` or `info`."),
        ("message", "string", "The message."),
    ),
}

TABLE_NAMES = tuple(TABLES)

Columns = dict[str, list[Any]]


def empty_columns(table: str) -> Columns:
    return {column.name: [] for column in TABLES[table]}


@dataclass(slots=True)
class SessionRows:
    """One file's rows, by table, as columns of plain values (:data:`TABLES`' order)."""

    path: str
    tables: dict[str, Columns]
    #: True when the file was read, and read faithfully.
    ok: bool = True
    #: True when the file could not be read at all (missing, unreadable).
    unreadable: bool = False
    #: True when bbox-lark failed on the file (an ``E016`` finding; a bug to report).
    crashed: bool = False
    #: The provider credentials that made ``export`` refuse the file (``line:col: S001 kind``).
    credentials: tuple[str, ...] = ()
    #: The provider credentials the rows' own check found (the secrets rule's ``S001``
    #: findings before selection and suppressions), as ``(line, col, kind)`` in line and
    #: column order; None when that rule did not run (``S001`` and ``S002`` not selected)
    #: or the rows are not a whole read (``export`` then scans the file itself).
    provider_credentials: tuple[tuple[int, int, str], ...] | None = None

    def count(self, table: str) -> int:
        columns = self.tables[table]
        return len(columns["session_id"])


def _text(value: object) -> str | None:
    """A string a table can hold: None stays None, lone surrogates (undecodable bytes kept
    by ``surrogateescape``) become U+FFFD."""
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes back to bytes, each U+FFFD, as any other surrogate
        text = text.translate(_SURROGATES).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def _string(value: object) -> str | None:
    return _text(value) if isinstance(value, str) else None


def _utc(ts: str | None) -> datetime | None:
    from bbox_lark.syntax.values import parse_timestamp

    if ts is None:
        return None
    moment = parse_timestamp(ts)
    return moment.astimezone(UTC) if moment is not None else None


def _append(columns: Columns, row: Mapping[str, Any]) -> None:
    for name, values in columns.items():
        values.append(row.get(name))


def session_id(header: Mapping[str, Any], path: str) -> str:
    """The session's id in every table: the header's ``id``, else the path."""
    value = header.get("id")
    return value if isinstance(value, str) and value.strip() else path


def unread_rows(path: str, problem: str, diagnostics: Iterable[Diagnostic] = ()) -> SessionRows:
    """The rows of a file that could not be read (or that bbox-lark failed on): its
    ``sessions`` row with ``problem``, and ``diagnostics`` (an internal error) if any."""
    tables = {name: empty_columns(name) for name in TABLE_NAMES}
    found = list(diagnostics)
    _append(
        tables["sessions"],
        {
            "session_id": _text(path),
            "path": _text(path),
            "faithful": False,
            "problem": _text(problem),
            "errors": sum(1 for d in found if d.severity == "error"),
            "warnings": sum(1 for d in found if d.severity == "warning"),
        },
    )
    _add_diagnostics(tables["diagnostics"], _text(path) or "", _text(path) or "", found)
    return SessionRows(path, tables, ok=False, unreadable=not found, crashed=bool(found))


def _add_diagnostics(columns: Columns, sid: str, path: str, diagnostics: Iterable[Diagnostic]) -> None:
    for d in diagnostics:
        _append(
            columns,
            {
                "session_id": sid,
                "path": path,
                "line": d.line,
                "col": d.col,
                "code": d.code,
                "severity": d.severity,
                "message": _text(d.message),
            },
        )


#: Rows of ``events`` and ``calls`` a streamed file holds before it hands them on.
CHUNK_ROWS = 20_000
#: Lone surrogates that are no undecodable byte's escape (:func:`_text`).
_SURROGATES = dict.fromkeys([*range(0xD800, 0xDC80), *range(0xDD00, 0xE000)], "\ufffd")


def session_rows(
    path: str,
    data: bytes | str,
    *,
    max_line: int = DEFAULT_MAX_LINE,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    allowed_secrets: Iterable[str] = (),
) -> SessionRows:
    """Every table's rows for the file at ``path`` whose contents are ``data``, together.
    Never raises on bad input; a failure inside bbox-lark gives the file's rows with an
    internal-error finding (``E016``) instead."""
    tables = {name: empty_columns(name) for name in TABLE_NAMES}

    def take(chunk: dict[str, Columns]) -> None:
        for name, columns in chunk.items():
            for column, values in columns.items():
                tables[name][column].extend(values)

    last = stream_session_rows(
        path, data, take, max_line=max_line, select=select, ignore=ignore, allowed_secrets=allowed_secrets
    )
    take(last.tables)
    last.tables = tables
    return last


def stream_session_rows(
    path: str,
    source: Any,
    emit: Callable[[dict[str, Columns]], None],
    *,
    max_line: int = DEFAULT_MAX_LINE,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    chunk_rows: int | None = None,
    allowed_secrets: Iterable[str] = (),
) -> SessionRows:
    """The rows of one file read as a stream (``source``: bytes, text, a binary file or
    lines, as for :func:`bbox_lark.syntax.parser.iter_nodes`), in bounded memory: ``events`` and
    ``calls`` rows go to ``emit`` in chunks of about ``chunk_rows`` (default
    :data:`CHUNK_ROWS`) as they are read (calls
    in the order their outcome is decided: at their completion, pending ones at the end);
    the rows returned are the rest: the last chunk, the ``diagnostics`` and the ``sessions``
    row. Never raises on bad input; a failure inside bbox-lark ends the file's rows with an
    ``E016`` finding (what was emitted stays)."""
    from bbox_lark.checks.workflow import internal_error

    reader = _SessionReader(path, emit, chunk_rows or CHUNK_ROWS)
    try:
        return reader.read(source, max_line, select, ignore, allowed_secrets)
    except Exception as error:  # a bug in bbox-lark: this file's rows say so, the batch goes on
        rows = unread_rows(path, "bbox-lark failed on this file (E016)", [internal_error(error)])
        rows.tables["events"], rows.tables["calls"] = reader.events, reader.calls
        return rows


class _SessionReader:
    """Rows of one file, made record by record as the checker reads it (:func:`bbox_lark.api.run`
    hands each record to :meth:`append`, after the checker: a line's node is built only when
    its row needs what the record does not hold, its result's text or its call's arguments)."""

    def __init__(self, path: str, emit: Callable[[dict[str, Columns]], None], chunk_rows: int) -> None:
        self.path = path
        self.shown = _text(path) or ""
        self.sid = self.shown
        self.emit = emit
        self.chunk_rows = chunk_rows
        self.events = empty_columns("events")
        self.calls = empty_columns("calls")
        self.held = 0
        self.body_lines = 0
        self.user_messages = 0
        self.counter: SessionCounter | None = None
        self.steps = Distinct()  # step= values (the counter keeps no record per step: design.md)

    def read(
        self,
        source: Any,
        max_line: int,
        select: Iterable[str] | None,
        ignore: Iterable[str] | None,
        allowed_secrets: Iterable[str] = (),
    ) -> SessionRows:
        from bbox_lark.api import checker_for, run
        from bbox_lark.files.writepolicy import write_verdict
        from bbox_lark.syntax.record import iter_records

        self.stream = iter_records(source, max_line=max_line)
        checker = checker_for(None, None, select, ignore, allowed_secrets=allowed_secrets)
        diagnostics = list(run(checker, self.stream, self))
        found = _provider_credentials(checker)
        head = self.stream.head
        counter = self._counter()
        pending, _, totals = counter.finish()
        for record in pending:
            self._call(record)
        tables = {name: empty_columns(name) for name in TABLE_NAMES}
        tables["events"], tables["calls"] = self.events, self.calls
        _add_diagnostics(tables["diagnostics"], self.sid, self.shown, diagnostics)
        refusing = write_verdict(diagnostics).refusing
        problem = None
        if refusing:
            codes = ", ".join(sorted({d.code for d in refusing}))
            problem = f"not read faithfully ({codes}); the rows hold what could be read"
        header = head.header_info.fields if head is not None and head.header_info is not None else {}
        row: dict[str, Any] = {
            "session_id": self.sid,
            "path": self.shown,
            **{f"header_{key}": _string(header.get(key)) for key in HEADER_COLUMNS},
            "faithful": not refusing,
            "problem": problem,
            "lines": (len(head.header_lines) if head is not None else 0) + self.body_lines,
            "user_messages": self.user_messages,
            "errors": sum(1 for d in diagnostics if d.severity == "error"),
            "warnings": sum(1 for d in diagnostics if d.severity == "warning"),
            **_totals_row(totals),
            "steps": self.steps.count(),
        }
        _append(tables["sessions"], row)
        return SessionRows(self.path, tables, ok=not refusing, provider_credentials=found)

    def _counter(self) -> SessionCounter:
        if self.counter is None:
            head = self.stream.head
            header = head.header_info.fields if head is not None and head.header_info is not None else {}
            self.sid = _text(session_id(header, self.path)) or self.shown
            self.counter = SessionCounter(header, session_id=self.sid, steps=False)
        return self.counter

    def append(self, node: Record) -> None:
        """One body line's record, as the checker reads it."""
        self.body_lines += 1
        if not node.is_event:
            return
        counter = self._counter()
        if node.kind == "user":
            self.user_messages += 1
        result = node.result if node.result_kind is not None else None  # no node built without one
        _append(
            self.events,
            {
                "session_id": self.sid,
                "path": self.shown,
                "line": node.line,
                "kind": node.kind,
                "name": _text(node.name),
                "step": node.step,
                "ts": _utc(node.ts),
                "tid": _string(node.tid),
                "span": _string(node.span),
                "id": _string(node.id),
                "text": _text(node.text),
                "result_kind": result.kind if result is not None else None,
                "result": _text(result.text) if result is not None else None,
            },
        )
        self.held += 1
        for record in counter.feed(node):
            self._call(record)
        if counter.line_step is not None:
            self.steps.add(str(counter.line_step))
        if self.held >= self.chunk_rows:
            self.emit({"events": self.events, "calls": self.calls})
            self.events, self.calls = empty_columns("events"), empty_columns("calls")
            self.held = 0

    def _call(self, record: CallRecord) -> None:
        _append(self.calls, {"session_id": self.sid, "path": self.shown, **_call_row(record)})
        self.held += 1


def _provider_credentials(checker: Any) -> tuple[tuple[int, int, str], ...] | None:
    """The secrets rule's ``S001`` findings in ``checker`` after a whole-file run, before
    selection and suppressions (a finding's message starts with the kind), sorted by line
    and column; None when the rule did not run (no rule that reports ``S001`` was)."""
    if checker.context is None or not any("S001" in rule.codes for rule in checker.rules):
        return None
    found = [(d.line, d.col, d.message.split(" ", 1)[0]) for d in checker.context.found if d.code == "S001"]
    return tuple(sorted(found, key=lambda f: (f[0], f[1])))


# -- the numbers (bbox_lark.numbers.session) ------------------------------------------------------


def _call_row(record: CallRecord) -> dict[str, Any]:
    """A call's ``calls`` columns after ``session_id`` and ``path``."""
    usage = record.usage
    return {
        "key": _text(record.key),
        "tool": _text(record.tool),
        "family": record.family,
        "kind": record.kind,
        "args": _text(record.args),
        "start_line": record.start_line,
        "end_line": record.end_line,
        "outcome": record.outcome,
        "latency_ms": record.latency_ms,
        "step": record.step,
        "ts": _utc(record.ts),
        "response": record.response,
        "tokens_in": usage.tokens_in if usage is not None else None,
        "tokens_out": usage.tokens_out if usage is not None else None,
        "tokens_cached": usage.tokens_cached if usage is not None else None,
        "pairing": record.pairing,
    }


def _totals_row(totals: SessionTotals) -> dict[str, Any]:
    """The ``sessions`` columns that :mod:`bbox_lark.numbers.session` decides."""
    usage = totals.usage
    duration = totals.duration_ms
    return {
        "events": totals.events,
        "calls": totals.calls,
        "calls_error": totals.outcome_count("error"),
        "calls_pending": totals.outcome_count("pending"),
        "steps": totals.steps,
        "responses": totals.responses,
        "models": _text(", ".join(totals.models)) if totals.models else None,
        "tokens_in": usage.tokens_in,
        "tokens_out": usage.tokens_out,
        "tokens_cached": usage.tokens_cached,
        "usage_source": totals.usage_source,
        "cost_usd": float(totals.stated_cost_usd) if totals.stated_cost_usd is not None else None,
        "estimated_cost_usd": (
            float(totals.estimated_cost_usd) if totals.estimated_cost_usd is not None else None
        ),
        "estimate_note": _text(totals.estimate_note),
        "estimate_lower_bound": totals.estimate_lower_bound,
        "tokens_cache_write": usage.tokens_cache_write,
        "calls_ambiguous": totals.pairing[PAIRINGS.index("ambiguous")],
        "first_ts": _utc(totals.first_ts),
        "last_ts": _utc(totals.last_ts),
        "duration_s": duration / 1000 if duration is not None else None,
    }


# -- Arrow ----------------------------------------------------------------------------------


class MissingExtra(MissingExtraError):
    """A feature needs a package of the ``scale`` extra that is not installed; the message
    is one line that says which and how to install it."""


def need(module: str, feature: str) -> Any:
    """Import ``module`` for ``feature`` (``export``, ``query``, ``read_bbox``), or raise
    :class:`MissingExtra` with the hint to install the ``scale`` extra."""
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise MissingExtra(f"{feature} needs {package}: pip install 'bbox-lark[scale]'") from None


def arrow_type(name: str) -> Any:
    """The Arrow type of a column type name (:attr:`Column.type`)."""
    pa = need("pyarrow", "the tables")
    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    return types[name]


def arrow_schema(table: str) -> Any:
    """The ``pyarrow.Schema`` of ``table``."""
    pa = need("pyarrow", "the tables")
    return pa.schema([pa.field(c.name, arrow_type(c.type)) for c in TABLES[table]])


def arrow_table(table: str, columns: Columns) -> Any:
    """``columns`` (of :class:`SessionRows`) as a ``pyarrow.Table`` of ``table``'s schema."""
    pa = need("pyarrow", "the tables")
    with _pandas_not_asked():
        return pa.Table.from_pydict(columns, schema=arrow_schema(table))


class _NoPandas(importlib.abc.MetaPathFinder):
    """Says ``pandas`` cannot be imported (:func:`_pandas_not_asked`)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


@contextlib.contextmanager
def _pandas_not_asked() -> Iterator[None]:
    """pyarrow imports pandas where it is installed the first time it converts Python values
    (any list: ~0.5 s, most of ``export``'s start-up), only to tell pandas' own values apart;
    the rows hold plain values. While this is open, and pandas is not imported yet, its
    import fails: pyarrow then converts without it, and imports it later when it needs it
    (``to_pandas``, :mod:`bbox_lark.dask`), as it tries again then."""
    if "pandas" in sys.modules:
        yield
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
