"""``bbox-lark query``: SQL over the four tables, with DuckDB embedded (``docs/analytics.md``).

The tables (:data:`bbox_lark.numbers.tables.TABLES`) are views named ``sessions``, ``events``,
``calls`` and ``diagnostics``. Where they come from depends on the paths:

* a folder that ``bbox-lark export`` wrote (it holds ``sessions.parquet``): its Parquet
  files, read by DuckDB as the query needs them (several such folders: all of them);
* session files, folders of them or globs: their rows are built (on every core) and held
  in memory as Arrow tables, when they add up to less than :data:`IN_MEMORY_MAX_BYTES`;
  above that they are exported to a temporary folder first and read as Parquet, so memory
  stays bounded whatever the input.

The two kinds cannot be mixed in one query (export the session files first).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bbox_lark._classes import dataclass
from bbox_lark.errors import QueryError as QueryError  # its home is bbox_lark.errors
from bbox_lark.files.said import Said, unreadable
from bbox_lark.numbers.tables import TABLE_NAMES, arrow_table, empty_columns, need

if TYPE_CHECKING:
    from bbox_lark.files.config import Jobs, Resolver
    from bbox_lark.files.discover import FoundInput as Input

#: Session files adding up to more than this are exported to Parquet before the query.
IN_MEMORY_MAX_BYTES = 256 << 20


@dataclass(frozen=True, slots=True)
class QueryResult:
    """The query's answer, and the inputs that could not be read or that bbox-lark failed
    on (their ``sessions`` rows say why; they are listed here so the command can say so)."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    unreadable: tuple[tuple[str, str], ...] = ()

    @property
    def exit_code(self) -> int:
        """``query``'s exit code: 2 when an input could not be read, else 0."""
        return 2 if self.unreadable else 0

    def said(self) -> tuple[Said, ...]:
        """What ``query`` says on standard error: each input that could not be read, and why."""
        return tuple(unreadable(path, why) for path, why in self.unreadable)

    def to_json(self) -> list[dict[str, Any]]:
        """The rows as JSON objects, column name to value (:func:`to_json_value`)."""
        return [
            {name: to_json_value(value) for name, value in zip(self.columns, row, strict=True)}
            for row in self.rows
        ]

    def to_csv(self) -> str:
        """The rows as CSV with a header line (times in ISO 8601, null as an empty field)."""
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow(["" if value is None else _csv_value(to_json_value(value)) for value in row])
        return buffer.getvalue()


def is_export(path: str | Path) -> bool:
    """True for a folder written by ``bbox-lark export`` (Parquet)."""
    from bbox_lark.files.inputs import is_regular

    return is_regular(Path(path) / "sessions.parquet")


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _parquet_views(con: Any, folders: list[str]) -> None:
    for name in TABLE_NAMES:
        files = ", ".join(_quoted(str(Path(folder) / f"{name}.parquet")) for folder in folders)
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{files}])")


def _memory_views(con: Any, inputs: list[Input], jobs: Jobs | None) -> list[tuple[str, str]]:
    from bbox_lark.numbers.export import iter_rows

    columns = {name: empty_columns(name) for name in TABLE_NAMES}
    unreadable = []
    for rows in iter_rows(inputs, jobs, secrets="keep"):
        for name in TABLE_NAMES:
            for column, values in rows.tables[name].items():
                columns[name][column].extend(values)
        if rows.unreadable or rows.crashed:
            unreadable.append((rows.path, rows.tables["sessions"]["problem"][0] or "cannot read"))
    for name in TABLE_NAMES:
        con.register(name, arrow_table(name, columns[name]))
    return unreadable


def run_sql(con: Any, sql: str) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    """Run ``sql`` on ``con``: its column names and rows; :class:`QueryError` with
    DuckDB's message when it fails."""
    duckdb = need("duckdb", "query")
    try:
        relation = con.sql(sql)
        if relation is None:  # a statement that returns no rows
            return (), []
        columns = tuple(str(name) for name in relation.columns)
        fetch = getattr(relation, "to_arrow_table", None) or relation.arrow  # duckdb 1.x: arrow()
        table = fetch()
    except duckdb.Error as error:
        raise QueryError(str(error).strip()) from None
    rows = [tuple(row.values()) for row in table.to_pylist(maps_as_pydicts="strict")]
    return columns, rows


def query_inputs(
    inputs: list[Input], sql: str, *, jobs: Jobs | None = None, memory_max: int = IN_MEMORY_MAX_BYTES
) -> QueryResult:
    """Run ``sql`` over the tables of ``inputs`` (see the module's notes). Raises
    :class:`QueryError` for bad SQL, :class:`~bbox_lark.numbers.tables.MissingExtra` without
    duckdb or pyarrow."""
    duckdb = need("duckdb", "query")
    need("pyarrow", "query")
    exports = [item.path for item in inputs if item.problem is None and is_export(item.path)]
    sessions = [item for item in inputs if item.path not in exports and item.counted_in is None]
    if exports and sessions:
        raise QueryError(
            "give either export folders or session files, not both (export the session files first)"
        )
    con = duckdb.connect(":memory:")
    try:
        if exports:
            _parquet_views(con, exports)
            columns, rows = run_sql(con, sql)
            return QueryResult(columns, rows)
        from bbox_lark.numbers.export import input_bytes

        if input_bytes(sessions) < memory_max:
            unreadable = _memory_views(con, sessions, jobs)
            columns, rows = run_sql(con, sql)
            return QueryResult(columns, rows, tuple(unreadable))
        from bbox_lark.numbers.export import export_inputs

        with tempfile.TemporaryDirectory(prefix="bbox-lark-query-") as folder:
            summary = export_inputs(sessions, Path(folder), jobs=jobs, secrets="keep")
            _parquet_views(con, [folder])
            columns, rows = run_sql(con, sql)
            con.close()  # before its files go
            return QueryResult(columns, rows, (*summary.unreadable, *summary.crashed))
    finally:
        con.close()


def query_tables(
    paths: Iterable[str],
    sql: str,
    *,
    jobs: Jobs | None = None,
    resolver: Resolver | None = None,
) -> QueryResult:
    """Run ``sql`` over the tables of ``paths``: export folders, or session files, folders
    and globs found as ``check`` finds them (:func:`query_inputs`)."""
    from bbox_lark.files.config import Resolver

    return query_inputs(find_inputs(paths, resolver or Resolver(isolated=True)), sql, jobs=jobs)


def _export_input(path: str, resolver: Resolver) -> Input:
    from bbox_lark.files.discover import FoundInput as Input

    return Input(path, resolver.for_path("-"))


def find_inputs(paths: Iterable[str], resolver: Resolver) -> list[Input]:
    """The inputs of ``query``: an export folder as itself, anything else found as
    ``check`` finds files."""
    from bbox_lark.convert.atif.lines import expand_sessions
    from bbox_lark.files.discover import discover

    listed = list(paths)
    inputs = [_export_input(path, resolver) for path in listed if is_export(path)]
    rest = [path for path in listed if not is_export(path)]
    return inputs + (expand_sessions(discover(rest, resolver, sessions=True)) if rest else [])


def to_json_value(value: Any) -> Any:
    """A query value as JSON: times in ISO 8601, decimals as numbers, bytes as text."""
    from datetime import date, datetime, time, timedelta
    from decimal import Decimal

    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list | tuple):
        return [to_json_value(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_json_value(item) for key, item in value.items()}
    return value


def _csv_value(value: Any) -> Any:
    if isinstance(value, list | dict):
        import json

        return json.dumps(value, ensure_ascii=False)
    return value
