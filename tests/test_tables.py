"""The analytics tables: ``export``, ``query`` and the schema (``docs/analytics.md``).

Real components: pyarrow writes and reads the files, DuckDB runs the queries. The schema is
data (``bbox_lark.numbers.tables.TABLES``); the docs page, the Parquet files and the Dask meta must
all say the same (the Dask side is in ``tests/test_dask.py``).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import CORPUS_MAX_LINE
from hypothesis import given
from printer_support import EXTERNAL, documents, fuzz_settings
from typer.testing import CliRunner

from bbox_lark.cli import app
from bbox_lark.numbers.export import export_tables
from bbox_lark.numbers.prices import format_usd
from bbox_lark.numbers.query import QueryError, query_tables
from bbox_lark.numbers.tables import TABLE_NAMES, TABLES, arrow_schema, session_rows

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("duckdb")

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "corpus" / "valid"
INVALID = ROOT / "corpus" / "invalid"
DOC = ROOT / "docs" / "analytics.md"

runner = CliRunner()

SESSION = """---
format: bbox/1
id: sess-1
repo_sha: 215db51
model: claude-sonnet-4-5
---
@start id=sess-1 ts=2025-12-20T14:44:58Z
u: deploy to staging, not prod
th: checking the manifest tokens_in=10 tokens_out=5 tokens_cached=1000
t:bash "kubectl apply -f prod.yaml" id=c1 tokens_in=10 tokens_out=12 tokens_cached=1000 → [running]
o: id=c1 → [err: forbidden] latency_ms=120
t:read src/main.rs → [186 lines]
t!:test id=c2 ts=2025-12-20T14:45:10Z
@end ts=2025-12-20T14:46:00Z cost_usd=0.05
"""


def corpus_copy(tmp_path: Path) -> Path:
    """A few valid corpus files, one that cannot be read faithfully and one session."""
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in ("spec-full-call-ids-steps-metrics.bbox", "correlation-families.bbox", "long-session.bbox"):
        shutil.copy(VALID / name, folder / name)
    shutil.copy(INVALID / "E001-invalid-utf8.bbox", folder / "z-invalid-utf8.bbox")
    (folder / "session.bbox").write_text(SESSION, encoding="utf-8")
    return folder


def read(folder: Path, table: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = pq.read_table(folder / f"{table}.parquet").to_pylist()
    return rows


# -- the schema -----------------------------------------------------------------------------


def documented_tables() -> dict[str, list[tuple[str, str]]]:
    """Each table's (column, type) rows as ``docs/analytics.md`` lists them, under a heading
    ``### `name` ``."""
    found: dict[str, list[tuple[str, str]]] = {}
    current: str | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"### `(\w+)`.*", line)
        if heading:
            current = heading[1] if heading[1] in TABLES else None
            continue
        row = re.fullmatch(r"\| `(\w+)` \| `(\w+)` \|.*\|", line)
        if current is not None and row:
            found.setdefault(current, []).append((row[1], row[2]))
    return found


def test_the_docs_list_every_column_with_its_type() -> None:
    expected = {name: [(c.name, c.type) for c in columns] for name, columns in TABLES.items()}
    assert documented_tables() == expected


def test_the_parquet_files_have_the_schema(tmp_path: Path) -> None:
    out = tmp_path / "out"
    export_tables([str(corpus_copy(tmp_path))], out, jobs=1)
    for name in TABLE_NAMES:
        schema = pq.read_schema(out / f"{name}.parquet")
        assert schema.remove_metadata() == arrow_schema(name)
        assert [c.name for c in TABLES[name]] == schema.names


# -- rows -------------------------------------------------------------------------------------


def test_a_session_gives_rows_in_every_table() -> None:
    rows = session_rows("s.bbox", SESSION)
    session = {k: v[0] for k, v in rows.tables["sessions"].items()}
    assert session["session_id"] == "sess-1" and session["path"] == "s.bbox"
    assert session["header_model"] == "claude-sonnet-4-5" and session["faithful"] is True
    assert session["calls"] == 3 and session["user_messages"] == 1
    assert session["calls_error"] == 1 and session["calls_pending"] == 1
    assert session["duration_s"] == 62.0 and session["responses"] == 1
    assert (session["tokens_in"], session["tokens_out"], session["tokens_cached"]) == (10, 12, 1000)
    assert session["cost_usd"] == 0.05 and session["usage_source"] == "responses"
    calls = rows.tables["calls"]
    assert calls["tool"] == ["bash", "read", "test"]
    assert calls["outcome"] == ["error", "ok", "pending"]
    assert calls["start_line"] == [10, 12, 13] and calls["end_line"] == [11, 12, None]
    assert calls["latency_ms"] == [120, None, None] and calls["key"] == ["c1", None, "c2"]
    assert calls["args"][0] == "kubectl apply -f prod.yaml"
    assert calls["response"] == [1, None, None] and calls["tokens_out"] == [12, None, None]
    events = rows.tables["events"]
    assert events["line"] == list(range(7, 15)) and set(events["session_id"]) == {"sess-1"}
    assert [rows.count(name) for name in TABLE_NAMES] == [1, 8, 3, len(rows.tables["diagnostics"]["code"])]


def test_the_tables_take_their_numbers_from_the_numbers_module() -> None:
    from bbox_lark.api import parse
    from bbox_lark.numbers.session import document_numbers

    for path in sorted(VALID.glob("*.bbox")):
        data = path.read_bytes()
        rows = session_rows(path.name, data, max_line=CORPUS_MAX_LINE)
        numbers = document_numbers(parse(data, max_line=CORPUS_MAX_LINE))
        totals = numbers.totals
        session = {k: v[0] for k, v in rows.tables["sessions"].items()}
        usage = (totals.usage.tokens_in, totals.usage.tokens_out, totals.usage.tokens_cached)
        assert (session["tokens_in"], session["tokens_out"], session["tokens_cached"]) == usage, path.name
        assert session["calls"] == totals.calls == rows.count("calls"), path.name
        assert rows.tables["calls"]["outcome"] == [c.outcome for c in numbers.calls], path.name
        stated = totals.stated_cost_usd
        assert session["cost_usd"] == (float(stated) if stated is not None else None), path.name


def test_a_session_without_an_id_is_named_by_its_path() -> None:
    rows = session_rows("logs/a.bbox", SESSION.replace("id: sess-1", "id:"))
    assert rows.tables["sessions"]["session_id"] == ["logs/a.bbox"]
    assert "E010" in rows.tables["diagnostics"]["code"] or rows.tables["sessions"]["errors"][0] >= 1


@pytest.mark.parametrize("name", sorted(p.name for p in INVALID.glob("E00[123]-*.bbox")))
def test_a_file_that_cannot_be_read_faithfully_keeps_its_rows(name: str) -> None:
    data = (INVALID / name).read_bytes()
    rows = session_rows(name, data, max_line=CORPUS_MAX_LINE)
    session = {k: v[0] for k, v in rows.tables["sessions"].items()}
    assert session["faithful"] is False and not rows.ok
    assert name[:4] in session["problem"] and session["errors"] >= 1
    assert name[:4] in rows.tables["diagnostics"]["code"]
    for table in TABLE_NAMES:  # what could be read is there, as text Arrow can hold
        pa.Table.from_pydict(rows.tables[table], schema=arrow_schema(table))


def test_a_failure_inside_bbox_lark_is_the_files_row_not_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    import bbox_lark.numbers.tables as tables

    def broken(*args: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(tables._SessionReader, "read", broken)
    rows = session_rows("x.bbox", SESSION)
    assert rows.tables["sessions"]["problem"] == ["bbox-lark failed on this file (E016)"]
    assert rows.tables["diagnostics"]["code"] == ["E016"]


@fuzz_settings(60)
@given(documents())
def test_any_document_gives_rows_arrow_can_hold(text: str) -> None:
    """Whatever the parser accepts (it accepts everything), the rows fit the schema, every
    line of the body is an event row or a blank/continuation, and each table names one
    session."""
    rows = session_rows("any.bbox", text.encode("utf-8", "surrogateescape"))
    assert rows.count("sessions") == 1
    for table in TABLE_NAMES:
        arrow = pa.Table.from_pydict(rows.tables[table], schema=arrow_schema(table))
        assert set(arrow.column("session_id").to_pylist()) <= set(rows.tables["sessions"]["session_id"])
    session = {k: v[0] for k, v in rows.tables["sessions"].items()}
    assert session["events"] == rows.count("events") and session["calls"] == rows.count("calls")
    assert session["errors"] == rows.tables["diagnostics"]["severity"].count("error")


@pytest.mark.skipif(not (EXTERNAL / "rlog-real").is_dir(), reason="the external corpus is not here")
def test_the_real_logs_export_and_agree_with_stats(tmp_path: Path) -> None:
    from bbox_lark.api import parse
    from bbox_lark.numbers.session import document_numbers

    folder = EXTERNAL / "rlog-real"
    summary = export_tables([str(folder)], tmp_path / "out")
    sessions = {s["path"]: s for s in read(tmp_path / "out", "sessions")}
    assert summary.files == len(sessions) == len(list(folder.glob("*.rlog")))
    for path in sorted(folder.glob("*.rlog"))[:20]:
        totals = document_numbers(parse(path.read_bytes())).totals
        row = sessions[str(path)]
        assert (row["tokens_in"], row["tokens_out"], row["calls"]) == (
            totals.usage.tokens_in,
            totals.usage.tokens_out,
            totals.calls,
        )


@pytest.mark.skipif(not (EXTERNAL / "rlog-real").is_dir(), reason="the external corpus is not here")
def test_stats_export_and_report_give_the_same_numbers_for_the_real_logs(tmp_path: Path) -> None:
    """One source of numbers, checked end to end through each command's own output (not
    against ``bbox_lark.numbers.session``, which all three call): ``stats --json``, the exported
    ``sessions`` rows and the report's header card agree for every real log."""
    from bbox_lark.report import render

    folder = EXTERNAL / "rlog-real"
    result = CliRunner().invoke(app, ["stats", str(folder), "--json"])
    assert result.exit_code in (0, 1), result.output
    files = json.loads(result.stdout)["files"]
    export_tables([str(folder)], tmp_path / "out")
    rows = {s["path"]: s for s in read(tmp_path / "out", "sessions")}
    assert len(files) == len(rows) == len(list(folder.glob("*.rlog")))
    for stats in files:
        row = rows[stats["path"]]
        families = stats["calls"].values()
        usage = stats["usage"]
        assert (
            sum(f["total"] for f in families),
            sum(f["outcomes"]["error"] for f in families),
            sum(f["outcomes"]["pending"] for f in families),
            usage["tokens_in"],
            usage["tokens_out"],
            usage["tokens_cached"],
            usage["responses"],
            stats["cost_usd"],
            stats["estimated_cost_usd"],
            stats["lines"]["total"],
        ) == (
            row["calls"],
            row["calls_error"],
            row["calls_pending"],
            row["tokens_in"],
            row["tokens_out"],
            row["tokens_cached"],
            row["responses"],
            row["cost_usd"],
            row["estimated_cost_usd"],
            row["lines"],
        ), stats["path"]
    biggest = sorted(rows.values(), key=lambda r: int(str(r["lines"])))[-3:]
    for row in biggest:
        out = io.StringIO()
        render(str(row["path"]), out)
        card = dict(re.findall(r"<dt>([^<]*)</dt><dd>([^<]*)</dd>", out.getvalue()))
        assert card["lines"] == f"{row['lines']:,}"
        assert card["calls"].split(" ")[0] == f"{row['calls']:,}"
        assert (f"{row['calls_error']} failed" in card["calls"]) == bool(row["calls_error"])
        source = row["usage_source"]
        for column in ("tokens_in", "tokens_out", "tokens_cached"):
            if row[column] is not None:
                assert card[f"{column} ({source})"] == f"{row[column]:,}", (row["path"], column)
        # One way to show a cost on every page (numbers.format_usd), from the table's value.
        if row["cost_usd"] is not None:
            assert card["cost (stated)"] == format_usd(Decimal(str(row["cost_usd"])))
        if row["estimated_cost_usd"] is not None:
            assert card["cost (estimated)"] == format_usd(Decimal(str(row["estimated_cost_usd"])))


# -- export -----------------------------------------------------------------------------------


def test_export_writes_every_file_and_says_what_failed(tmp_path: Path) -> None:
    folder = corpus_copy(tmp_path)
    out = tmp_path / "out"
    summary = export_tables([str(folder), str(tmp_path / "missing.bbox")], out, jobs=1)
    sessions = read(out, "sessions")
    assert summary.files == len(sessions) == 6
    assert summary.exit_code == 2  # a missing file
    assert [path for path, _ in summary.failed] == [str(folder / "z-invalid-utf8.bbox")]
    missing = next(s for s in sessions if str(s["path"]).endswith("missing.bbox"))
    assert missing["faithful"] is False and "no such file" in str(missing["problem"])
    assert summary.rows == {name: len(read(out, name)) for name in TABLE_NAMES}
    assert not list(out.glob("*.partial"))
    assert "6 session(s)" in summary.line() and "1 unreadable" in summary.line()


def test_export_in_small_batches_writes_the_same_rows(tmp_path: Path) -> None:
    from bbox_lark.files.discover import discover
    from bbox_lark.numbers.export import export_inputs

    folder = corpus_copy(tmp_path)
    export_tables([str(folder)], tmp_path / "one", jobs=1)
    export_inputs(discover([str(folder)]), tmp_path / "small", jobs=1, batch_rows=7)
    assert pq.ParquetFile(tmp_path / "small" / "events.parquet").num_row_groups > 3
    for name in TABLE_NAMES:
        assert read(tmp_path / "one", name) == read(tmp_path / "small", name)


def test_export_on_two_processes_writes_what_one_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bbox_lark.checks.workflow
    import bbox_lark.files.runner

    folder = corpus_copy(tmp_path)
    export_tables([str(folder)], tmp_path / "one", jobs=1)
    monkeypatch.setattr(bbox_lark.files.runner, "PARALLEL_MIN_BYTES", 0)
    export_tables([str(folder)], tmp_path / "two", jobs=2)
    for name in TABLE_NAMES:
        assert read(tmp_path / "one", name) == read(tmp_path / "two", name)


def test_export_csv(tmp_path: Path) -> None:
    folder = corpus_copy(tmp_path)
    result = runner.invoke(app, ["export", str(folder), "-o", str(tmp_path / "csv"), "--format", "csv"])
    assert result.exit_code == 1  # the file that cannot be read faithfully
    assert "5 session(s)" in result.stderr and "not read faithfully" in result.stderr
    import csv

    with open(tmp_path / "csv" / "calls.csv", newline="", encoding="utf-8") as file:
        header = next(csv.reader(file))
    assert header == [c.name for c in TABLES["calls"]]


def test_export_command_exits_0_on_clean_files(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    result = runner.invoke(app, ["export", str(tmp_path / "a.bbox"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("1 session(s) →")


@pytest.mark.parametrize(("named", "pool"), [(None, "system"), ("mimalloc", "mimalloc")])
def test_export_gives_arrow_the_system_allocator(tmp_path: Path, named: str | None, pool: str) -> None:
    # Arrow's default allocator (mimalloc) kept about 20 MiB more resident at every size
    # (design.md, "Memory per command"); one the environment names is kept.
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    args = ["export", str(tmp_path / "a.bbox"), "-o", str(tmp_path / "out")]
    code = (
        "from typer.testing import CliRunner\nfrom bbox_lark.cli import app\n"
        f"result = CliRunner().invoke(app, {args!r})\n"
        "import pyarrow\nprint(result.exit_code, pyarrow.default_memory_pool().backend_name)\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "ARROW_DEFAULT_MEMORY_POOL"}
    if named is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = named
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.stdout.split() == ["0", pool], done.stderr


# -- query ------------------------------------------------------------------------------------


def test_query_in_memory_and_over_an_export_agree(tmp_path: Path) -> None:
    folder = corpus_copy(tmp_path)
    export_tables([str(folder)], tmp_path / "out", jobs=1)
    sql = "SELECT path, tool, count(*) AS n FROM calls GROUP BY ALL ORDER BY ALL"
    memory = query_tables([str(folder)], sql, jobs=1)
    parquet = query_tables([str(tmp_path / "out")], sql)
    assert memory.columns == parquet.columns == ("path", "tool", "n")
    assert memory.rows == parquet.rows and memory.rows


def test_query_above_the_memory_limit_goes_through_parquet(tmp_path: Path) -> None:
    from bbox_lark.numbers.query import find_inputs, query_inputs

    folder = corpus_copy(tmp_path)
    from bbox_lark.files.config import Resolver

    inputs = find_inputs([str(folder)], Resolver(isolated=True))
    sql = "SELECT count(*) FROM events"
    assert query_inputs(inputs, sql, jobs=1, memory_max=0).rows == query_inputs(inputs, sql, jobs=1).rows


def test_query_finds_the_sessions_that_touched_production(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    sql = "SELECT DISTINCT session_id FROM calls WHERE args ILIKE '%prod%'"
    assert query_tables([str(tmp_path)], sql).rows == [("sess-1",)]


@pytest.mark.parametrize("sql", ["SELEC 1", "SELECT nope FROM calls", "SELECT * FROM no_such_table"])
def test_bad_sql_is_duckdbs_message_and_exit_2(tmp_path: Path, sql: str) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    with pytest.raises(QueryError):
        query_tables([str(tmp_path)], sql)
    result = runner.invoke(app, ["query", str(tmp_path), "--sql", sql])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "Error" in result.stderr
    assert ("Traceback" not in result.output and result.exception is None) or isinstance(
        result.exception, SystemExit
    )


def test_query_formats(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    sql = "SELECT tool, outcome IS NULL AS unknown, end_line FROM calls ORDER BY start_line"
    as_json = runner.invoke(app, ["query", str(tmp_path), "--sql", sql, "--format", "json"])
    assert as_json.exit_code == 0
    assert (
        json.loads(as_json.stdout)[2]["tool"] == "test" and json.loads(as_json.stdout)[2]["end_line"] is None
    )
    as_csv = runner.invoke(
        app, ["query", str(tmp_path), "--sql", "SELECT first_ts FROM sessions", "--format", "csv"]
    )
    assert as_csv.stdout == "first_ts\n2025-12-20T14:44:58+00:00\n"
    table = runner.invoke(app, ["query", str(tmp_path), "--sql", "SELECT tool FROM calls"])
    assert table.exit_code == 0 and "bash" in table.stdout and "┃ tool" in table.stdout


def test_query_of_export_folders_and_session_files_together_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    export_tables([str(tmp_path / "a.bbox")], tmp_path / "out")
    result = runner.invoke(
        app, ["query", str(tmp_path / "out"), str(tmp_path / "a.bbox"), "--sql", "SELECT 1"]
    )
    assert result.exit_code == 2 and "not both" in result.stderr


# -- a missing extra ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "module"),
    [
        (["export", "{file}", "-o", "{out}"], "pyarrow"),
        (["query", "{file}", "--sql", "SELECT 1"], "duckdb"),
        (["query", "{file}", "--sql", "SELECT 1"], "pyarrow"),
    ],
)
def test_a_missing_extra_is_a_one_line_hint(tmp_path: Path, command: list[str], module: str) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    args = [a.format(file=tmp_path / "a.bbox", out=tmp_path / "out") for a in command]
    code = (
        f"import sys\nsys.modules[{module!r}] = None\n"  # what an install without it looks like
        "from bbox_lark.cli import main\n"
        f"sys.argv = ['bbox-lark', *{args!r}]\nmain()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr == f"error: {command[0]} needs {module}: pip install 'bbox-lark[scale]'\n"


@pytest.mark.skipif(
    __import__("multiprocessing").get_start_method() != "fork", reason="the worker must inherit the patch"
)
def test_a_worker_that_dies_never_stops_the_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import bbox_lark.checks.workflow
    import bbox_lark.files.runner
    import bbox_lark.numbers.export

    folder = tmp_path / "logs"
    folder.mkdir()
    for number in range(6):
        (folder / f"{number}.bbox").write_text(SESSION, encoding="utf-8")
    real = bbox_lark.numbers.export._rows_of

    def dies_on_file_2(path: str, *args: object) -> object:
        if path.endswith("2.bbox"):
            os._exit(3)  # what a crash in a worker looks like to the parent
        return real(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(bbox_lark.numbers.export, "_rows_of", dies_on_file_2)
    monkeypatch.setattr(bbox_lark.files.runner, "PARALLEL_MIN_BYTES", 0)
    summary = export_tables([str(folder)], tmp_path / "out", jobs=2)
    sessions = read(tmp_path / "out", "sessions")
    assert summary.files == len(sessions) == 6  # every file has its row
    failed = [s for s in sessions if s["problem"] is not None]
    assert str(folder / "2.bbox") in {s["path"] for s in failed}
    assert all("E016" in str(s["problem"]) for s in failed) and summary.exit_code == 2
    assert {d["code"] for d in read(tmp_path / "out", "diagnostics") if d["severity"] == "error"} == {"E016"}


def test_an_interrupted_export_leaves_no_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bbox_lark.numbers.export

    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")

    def interrupted(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(bbox_lark.numbers.export, "iter_rows", interrupted)
    with pytest.raises(KeyboardInterrupt):
        export_tables([str(tmp_path / "a.bbox")], tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_read_bbox_without_dask_says_what_to_install(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    code = (
        "import sys\nsys.modules['dask'] = None\nsys.modules['dask.dataframe'] = None\n"
        "from bbox_lark.dask import read_bbox\nfrom bbox_lark.numbers.tables import MissingExtra\n"
        f"try:\n    read_bbox({str(tmp_path / 'a.bbox')!r})\n"
        "except MissingExtra as error:\n    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout == "read_bbox needs dask: pip install 'bbox-lark[scale]'\n", done.stderr


def test_a_large_file_is_streamed_into_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bbox_lark.numbers.export
    import bbox_lark.numbers.tables
    from bbox_lark.numbers.tables import stream_session_rows

    text = (VALID / "long-session.bbox").read_text(encoding="utf-8")
    chunks: list[dict[str, list[object]]] = []
    last = stream_session_rows("x.bbox", text, lambda chunk: chunks.append(chunk), chunk_rows=5)
    assert len(chunks) > 3 and all(len(c["events"]["line"]) + len(c["calls"]["key"]) >= 5 for c in chunks)
    whole = session_rows("x.bbox", text)
    for table, column in (("events", "line"), ("calls", "start_line")):
        streamed = [value for chunk in [*chunks, last.tables] for value in chunk[table][column]]
        assert streamed == whole.tables[table][column]
    assert last.tables["sessions"] == whole.tables["sessions"]

    folder = corpus_copy(tmp_path)
    export_tables([str(folder)], tmp_path / "whole", jobs=1)
    monkeypatch.setattr(bbox_lark.numbers.export, "STREAM_MIN_BYTES", 0)  # every file streamed
    monkeypatch.setattr(bbox_lark.numbers.tables, "CHUNK_ROWS", 3)
    export_tables([str(folder)], tmp_path / "streamed", jobs=1)
    for name in TABLE_NAMES:
        assert read(tmp_path / "whole", name) == read(tmp_path / "streamed", name)


def test_a_claude_code_session_gives_the_rows_of_its_bbox_form(tmp_path: Path) -> None:
    """``query`` (and ``export``) read a session in another format through its bbox form,
    as ``report`` and ``stats`` do; the rows keep the file's own path."""
    source = ROOT / "tests" / "fixtures" / "claude-code" / "tool-ids.jsonl"
    converted = tmp_path / "tool-ids.bbox"
    assert runner.invoke(app, ["convert", str(source), "--to", "bbox", "-o", str(converted)]).exit_code == 0
    sql = "select tool, outcome, start_line from calls order by start_line"
    direct, via = query_tables([str(source)], sql), query_tables([str(converted)], sql)
    assert direct.rows == via.rows and len(direct.rows) == 2
    paths = query_tables([str(source)], "select path, faithful, problem from sessions").rows
    assert paths == [(str(source), True, None)]


def test_records_a_conversion_skipped_make_the_session_unfaithful(tmp_path: Path) -> None:
    good = (ROOT / "tests" / "fixtures" / "claude-code" / "tool-ids.jsonl").read_bytes()
    source = tmp_path / "cut.jsonl"
    source.write_bytes(good.rstrip(b"\n") + b'\n{"type": "user", "message": \n')
    rows = query_tables([str(source)], "select faithful, problem from sessions").rows
    assert rows[0][0] is False and "1 record(s) the claude-code reader skipped" in rows[0][1]


# -- export judges provider credentials from the pass that builds the rows ---------------------

_KEY = "sk-ant-api03-FAKEfakeFAKEfake0123456789-notARealKeyJustForTests_0123456789AA"
_HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc\n---\n"


def _judged(data: bytes, **options: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A file's refusal as export makes it (from the rows' pass), and as the file's own
    scan makes it (numbers.export._credentials, the second pass it replaced)."""
    from bbox_lark.numbers.export import _credentials
    from bbox_lark.syntax.source import decode

    rows = session_rows("f.bbox", data, **options)  # type: ignore[arg-type]
    assert rows.provider_credentials is not None
    judged = tuple(f"{line}:{col}: S001 {kind}" for line, col, kind in rows.provider_credentials)
    return judged, _credentials([decode(data)], options.get("allowed_secrets", ()))  # type: ignore[arg-type]


def test_the_rows_pass_finds_the_credentials_the_file_scan_finds() -> None:
    from printer_support import external_files, golden_files, on_each_file

    files = golden_files() + external_files()

    def same(data: bytes) -> None:
        judged, scanned = _judged(data, max_line=CORPUS_MAX_LINE)
        assert judged == scanned

    assert on_each_file(files, same) >= 100
    header_key = _HEAD.replace("repo_sha: abc\n", f"repo_sha: abc\nnote: {_KEY}\n")
    for text in [
        _HEAD + f"u: {_KEY}\n",
        header_key + f"# bbox-lark: ignore[S001]\nu: use {_KEY} twice {_KEY}\n",
        _HEAD + "t:read id_rsa → -----BEGIN OPENSSH PRIVATE KEY-----\n  b3BlbnNz\n  -----END OPENSSH",
    ]:
        judged, scanned = _judged(text.encode())
        assert judged == scanned and judged


@pytest.mark.parametrize(
    ("text", "options"),
    [
        (_HEAD + f"# bbox-lark: ignore[S001]\nu: {_KEY}\n", {}),  # a suppression does not export it
        (_HEAD + f"u: {_KEY}\n", {"ignore": ["S"]}),  # nor does deselecting the rule (scanned again)
        (_HEAD + f"u: {_KEY}\n", {"select": ["W"]}),
    ],
)
def test_export_refuses_a_credential_whatever_the_selection(
    text: str, options: dict[str, list[str]], tmp_path: Path
) -> None:
    from bbox_lark.numbers.export import _bbox_rows

    source = tmp_path / "s.bbox"
    source.write_text(text, encoding="utf-8")
    rows = _bbox_rows(
        str(source),
        str(source),
        CORPUS_MAX_LINE,
        options.get("select"),
        options.get("ignore"),
        (),
        "refuse",
        None,
    )
    line = text.count("\n")  # the key's line is the last
    assert rows.credentials == (f"{line}:4: S001 anthropic_key",) and rows.count("events") == 0
    kept = _bbox_rows(
        str(source),
        str(source),
        CORPUS_MAX_LINE,
        options.get("select"),
        options.get("ignore"),
        (),
        "keep",
        None,
    )
    assert kept.credentials == () and kept.count("events") >= 1
