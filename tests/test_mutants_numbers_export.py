"""``export`` (``bbox_lark/numbers/export.py``) pinned down where its mutants showed no test
looked: the run's one-line summary and exit code, the table writers' batches and their
``.partial`` files, each kind of input that gives no rows or a row saying why, the streamed
and the redacted reads, and the inputs counted elsewhere (docs/testing.md, "Mutation
testing"). Everything runs in this process (one job), where mutmut sees it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from bbox_lark.files.config import Resolver
from bbox_lark.files.discover import FoundInput
from bbox_lark.numbers import export
from bbox_lark.numbers.export import (
    ExportSummary,
    TableWriter,
    export_inputs,
    export_tables,
    input_bytes,
    iter_rows,
)
from bbox_lark.numbers.tables import TABLE_NAMES, empty_columns, session_rows

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = ROOT / "tests" / "fixtures" / "claude-code" / "tool-ids.jsonl"
KEY = "sk-ant-api03-FAKEfakeFAKEfake0123456789-notARealKeyJustForTests_0123456789AA"
HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc\n---\n"
SESSION = HEAD + "u: hello\nt:bash id=c1 ls → [ok]\nt:read a.rs → [3 lines]\n"
ALL_ROWS = {"sessions": 1, "events": 2, "calls": 3, "diagnostics": 4}


def found(path: str | Path, **kwargs: Any) -> FoundInput:
    return FoundInput(str(path), Resolver(isolated=True).for_path(str(path)), **kwargs)


def rows_of(table: str, count: int) -> dict[str, list[Any]]:
    columns = empty_columns(table)
    for values in columns.values():
        values.extend([None] * count)
    columns["session_id"] = [f"s{i}" for i in range(count)]
    columns["path"] = [f"p{i}" for i in range(count)]
    return columns


# -- the summary ------------------------------------------------------------------------------


def test_the_summary_line_names_every_table_but_sessions_and_every_problem() -> None:
    summary = ExportSummary(
        out=Path("out"),
        format="csv",
        files=7,
        rows=ALL_ROWS,
        unreadable=(("a", "x"), ("b", "y")),
        failed=(("c", "z"),),
        crashed=(("d", "w"), ("e", "v"), ("f", "u")),
        refused=(("g", ("1:1: S001 k",)),),
        counted_in=(("h", "g"), ("i", "g")),
    )
    assert summary.line() == (
        "7 session(s) → out/ (csv: 2 events, 3 calls, 4 diagnostics); 1 not read faithfully"
        "; 2 unreadable; 3 failed inside bbox-lark (E016); 1 not exported (provider credentials)"
        "; 2 counted once, in another input (the same file, or a subagent log)"
    )
    clean = ExportSummary(out=Path("o"), format="parquet", files=1, rows=ALL_ROWS)
    assert clean.line() == "1 session(s) → o/ (parquet: 2 events, 3 calls, 4 diagnostics)"


@pytest.mark.parametrize(
    ("problems", "code"),
    [
        ({}, 0),
        ({"failed": (("a", "x"),)}, 1),
        ({"refused": (("a", ("1:1: S001 k",)),)}, 1),
        ({"counted_in": (("a", "b"),)}, 0),
        ({"unreadable": (("a", "x"),)}, 2),
        ({"crashed": (("a", "x"),)}, 2),
        ({"crashed": (("a", "x"),), "failed": (("b", "y"),)}, 2),
    ],
)
def test_the_exit_code_is_2_for_unreadable_or_crashed_1_for_unfaithful_or_refused(
    problems: dict[str, Any], code: int
) -> None:
    assert ExportSummary(out=Path("o"), format="csv", files=1, rows=ALL_ROWS, **problems).exit_code == code


# -- the table writers ------------------------------------------------------------------------


def test_a_parquet_writer_writes_a_row_group_each_time_it_holds_a_batch(tmp_path: Path) -> None:
    path = tmp_path / "calls.parquet"
    writer = TableWriter("calls", path, "parquet", batch_rows=3)
    assert writer.partial == tmp_path / "calls.parquet.partial" and writer.partial.exists()
    writer.add(rows_of("calls", 2))
    assert (writer.held, writer.rows) == (2, 2)  # under a batch: held
    writer.add(rows_of("calls", 1))
    assert (writer.held, writer.rows) == (0, 3)  # a whole batch: written
    assert writer.columns == empty_columns("calls")
    writer.add(rows_of("calls", 2))
    writer.flush()
    writer.flush()  # nothing held: no empty row group
    writer.add(rows_of("calls", 1))
    assert not path.exists()
    writer.close()
    assert path.exists() and not writer.partial.exists()
    file = pq.ParquetFile(path)
    assert [file.metadata.row_group(i).num_rows for i in range(file.num_row_groups)] == [3, 2, 1]
    assert file.read().column("session_id").to_pylist() == ["s0", "s1", "s0", "s0", "s1", "s0"]
    assert file.schema_arrow.names == list(empty_columns("calls"))
    assert {file.metadata.row_group(0).column(i).compression for i in range(file.metadata.num_columns)} == {
        "ZSTD"
    }


def test_the_default_batch_is_batch_rows(tmp_path: Path) -> None:
    writer = TableWriter("events", tmp_path / "events.parquet", "parquet")
    assert writer.batch_rows == export.BATCH_ROWS == 20_000
    writer.add(rows_of("events", 5))
    assert writer.held == 5
    writer.close(keep=False)


@pytest.mark.parametrize("format", ["parquet", "csv"])
def test_a_writer_closed_without_keep_leaves_no_file(tmp_path: Path, format: Any) -> None:
    path = tmp_path / f"sessions.{format}"
    writer = TableWriter("sessions", path, format, batch_rows=1)
    writer.add(rows_of("sessions", 3))
    writer.close(keep=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("format", ["parquet", "csv"])
def test_a_writer_closed_without_keep_before_any_row_leaves_no_file(tmp_path: Path, format: Any) -> None:
    writer = TableWriter("events", tmp_path / f"events.{format}", format)
    writer.close(keep=False)
    assert list(tmp_path.iterdir()) == []


def test_a_csv_writer_writes_rows_as_they_come(tmp_path: Path) -> None:
    path = tmp_path / "calls.csv"
    writer = TableWriter("calls", path, "csv")
    assert writer.csv is not None and writer.writer is writer.csv
    writer.add(rows_of("calls", 2))
    writer.add(rows_of("calls", 3))
    assert (writer.rows, writer.held) == (5, 0)
    writer.close()
    assert not writer.partial.exists()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 and lines[0].startswith('"session_id","path"')
    assert [line.split(",")[0] for line in lines[1:]] == ['"s0"', '"s1"', '"s0"', '"s1"', '"s2"']


# -- one file's rows --------------------------------------------------------------------------


def _options(secrets: Any = "refuse", emit: Any = None) -> tuple[Any, ...]:
    return (1 << 20, None, None, (), secrets, emit)


def test_a_missing_file_is_a_row_saying_so(tmp_path: Path) -> None:
    path = str(tmp_path / "gone.bbox")
    rows = export._rows_of(path, *_options())
    assert rows.unreadable and not rows.ok
    assert rows.tables["sessions"]["problem"] == [f"{path}: no such file or directory"]


def test_a_file_that_cannot_be_opened_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "a.bbox"
    folder.mkdir()
    rows = export._bbox_rows("shown.bbox", str(folder), *_options())
    assert rows.unreadable
    assert rows.tables["sessions"]["problem"] == ["shown.bbox: cannot read: Is a directory"]
    streamed = export._bbox_rows("shown.bbox", str(folder), *_options(emit=lambda chunk: None))
    assert streamed.tables["sessions"]["problem"] == ["shown.bbox: cannot read: Is a directory"]


def test_a_file_read_through_a_fifo_gives_the_rows_of_its_bytes(tmp_path: Path) -> None:
    import threading

    fifo = tmp_path / "pipe.bbox"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w", encoding="utf-8") as out:
            out.write(SESSION)

    thread = threading.Thread(target=feed)
    thread.start()
    rows = export._rows_of(str(fifo), *_options())
    thread.join()
    assert rows.ok and rows.tables["sessions"]["path"] == [str(fifo)]
    assert rows.tables == session_rows(str(fifo), SESSION).tables


def test_a_file_with_a_credential_is_refused_with_no_row(tmp_path: Path) -> None:
    source = tmp_path / "s.bbox"
    source.write_text(HEAD + f"u: hello\nu: {KEY}\n", encoding="utf-8")
    for emit in (None, lambda chunk: None):  # read whole, or streamed (the file's own scan)
        rows = export._bbox_rows(str(source), str(source), *_options("refuse", emit))
        assert rows.credentials == ("7:4: S001 anthropic_key",)
        assert not rows.ok and not rows.unreadable
        assert all(rows.count(name) == 0 for name in TABLE_NAMES)


def test_a_credential_on_a_later_line_of_a_streamed_file_is_counted_from_the_first(tmp_path: Path) -> None:
    assert export._credentials([b"u: a\n", b"u: b\n", f"u: x {KEY}\n".encode()], ()) == (
        "3:6: S001 anthropic_key",
    )
    assert export._credentials([f"u: a\nu: {KEY} {KEY}\n"], ()) == (
        "2:4: S001 anthropic_key",
        f"2:{5 + len(KEY)}: S001 anthropic_key",
    )
    assert export._credentials(["u: nothing here\n"], ()) == ()
    assert export._credentials([f"u: {KEY}\n".encode(), b"u: b\n", f"u: {KEY}\n".encode()], ()) == (
        "1:4: S001 anthropic_key",
        "3:4: S001 anthropic_key",
    )


def test_an_allowed_credential_is_not_refused(tmp_path: Path) -> None:
    source = tmp_path / "s.bbox"
    source.write_text(HEAD + f"u: {KEY}\n", encoding="utf-8")
    for emit in (None, lambda chunk: None):
        rows = export._bbox_rows(str(source), str(source), 1 << 20, None, None, [KEY], "refuse", emit)
        assert rows.credentials == () and rows.count("events") == 1


def test_a_streamed_file_sends_its_events_and_calls_to_emit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bbox_lark.numbers import tables

    monkeypatch.setattr(tables, "CHUNK_ROWS", 1)
    source = tmp_path / "s.bbox"
    source.write_text(SESSION, encoding="utf-8")
    chunks: list[dict[str, Any]] = []
    last = export._bbox_rows(str(source), str(source), *_options("keep", chunks.append))
    streamed = [v for c in [*chunks, last.tables] for v in c.get("calls", {}).get("start_line", [])]
    assert streamed == session_rows(str(source), SESSION).tables["calls"]["start_line"] == [7, 8]
    assert chunks  # not held whole


def test_redact_writes_the_rows_of_the_redacted_text_even_when_streaming(tmp_path: Path) -> None:
    source = tmp_path / "s.bbox"
    source.write_text(HEAD + f"u: the key {KEY}\nt:bash id=c1 ls → [ok]\n", encoding="utf-8")
    chunks: list[dict[str, Any]] = []
    rows = export._bbox_rows(str(source), str(source), *_options("redact", chunks.append))
    assert chunks == []  # redacting reads the file whole
    assert rows.ok and rows.credentials == () and rows.count("calls") == 1
    assert KEY not in str(rows.tables)
    assert rows.tables["events"]["text"] == ["redactions=1", "the key [redacted:anthropic_key]", "id=c1 ls"]
    kept = export._bbox_rows(str(source), str(source), *_options("keep"))
    assert kept.credentials == () and kept.count("events") == 2


def test_redact_leaves_a_clean_file_as_it_is(tmp_path: Path) -> None:
    source = tmp_path / "s.bbox"
    source.write_text(SESSION, encoding="utf-8")
    rows = export._bbox_rows(str(source), str(source), *_options("redact"))
    assert rows.tables == session_rows(str(source), SESSION).tables


def test_a_claude_code_session_whose_records_were_skipped_is_not_faithful(tmp_path: Path) -> None:
    source = tmp_path / "cut.jsonl"
    source.write_bytes(CLAUDE.read_bytes().rstrip(b"\n") + b'\n{"type": "user", "message": \n{"a": \n')
    rows = export._rows_of(str(source), *_options())
    sessions = rows.tables["sessions"]
    assert not rows.ok and sessions["faithful"] == [False] and not rows.unreadable
    (problem,) = sessions["problem"]
    assert problem.startswith("2 record(s) the claude-code reader skipped (line ")
    assert problem.endswith(")") and "; " not in problem
    clean = export._rows_of(str(CLAUDE), *_options())
    assert clean.ok and clean.tables["sessions"]["problem"] == [None]


def test_a_skipped_record_is_added_to_the_problem_already_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "cut.jsonl"
    source.write_bytes(CLAUDE.read_bytes().rstrip(b"\n") + b'\n{"type": "user", "message": \n')
    real = export._bbox_rows

    def with_a_problem(*args: Any) -> Any:
        rows = real(*args)
        rows.tables["sessions"]["problem"][0] = "first"
        return rows

    monkeypatch.setattr(export, "_bbox_rows", with_a_problem)
    (problem,) = export._rows_of(str(source), *_options()).tables["sessions"]["problem"]
    assert problem.startswith("first; 1 record(s) the claude-code reader skipped (line ")


def test_a_foreign_file_that_cannot_be_converted_is_a_row_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextlib import contextmanager

    import bbox_lark.convert.files
    from bbox_lark.convert import ConvertError

    @contextmanager
    def fails(*args: Any, **kwargs: Any) -> Any:
        raise ConvertError("it broke")
        yield

    monkeypatch.setattr(bbox_lark.convert.files, "bbox_file", fails)
    rows = export._rows_of(str(CLAUDE), *_options())
    assert rows.unreadable and rows.tables["sessions"]["problem"] == [f"{CLAUDE}: it broke"]
    assert rows.path == str(CLAUDE) and rows.tables["sessions"]["path"] == [str(CLAUDE)]


# -- the inputs -------------------------------------------------------------------------------


def test_sizes_count_only_the_files_that_can_be_read(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    size = len(SESSION.encode())
    inputs = [
        found(tmp_path / "a.bbox"),
        found(tmp_path / "a.bbox", problem="no"),
        found("-"),
        found(tmp_path / "gone.bbox"),
    ]
    assert [export._size(item) for item in inputs] == [size, 0, 0, 0]
    assert input_bytes(inputs) == size
    assert input_bytes([found(tmp_path / "a.bbox"), found(tmp_path / "a.bbox")]) == 2 * size


def test_a_job_carries_each_files_settings(tmp_path: Path) -> None:
    item = found(tmp_path / "a.bbox")
    settings = item.settings
    assert export._job(item, "keep") == (
        str(tmp_path / "a.bbox"),
        settings.max_line,
        settings.select,
        settings.ignore_for(str(tmp_path / "a.bbox")),
        settings.allowed_secrets,
        "keep",
    )


def test_iter_rows_gives_each_input_its_row_in_order(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    inputs = [
        found("-"),
        found(tmp_path / "a.bbox"),
        found(tmp_path / "nothing", problem="nothing here"),
        found(tmp_path / "again.bbox", counted_in=str(tmp_path / "a.bbox")),
    ]
    got = list(iter_rows(inputs, jobs=1))
    assert [r.path for r in got] == ["-", str(tmp_path / "a.bbox"), str(tmp_path / "nothing")]
    assert [r.tables["sessions"]["problem"][0] for r in got] == [
        "-: export reads files, not standard input",
        None,
        "nothing here",
    ]
    assert [r.unreadable for r in got] == [True, False, True]


def test_iter_rows_streams_a_large_file_here_and_only_with_emit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bbox_lark.numbers import tables

    monkeypatch.setattr(tables, "CHUNK_ROWS", 1)
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    size = len(SESSION.encode())
    chunks: list[dict[str, Any]] = []
    monkeypatch.setattr(export, "STREAM_MIN_BYTES", size + 1)
    (whole,) = iter_rows([found(tmp_path / "a.bbox")], jobs=1, emit=chunks.append)
    assert chunks == [] and whole.count("calls") == 2
    monkeypatch.setattr(export, "STREAM_MIN_BYTES", size)  # exactly the limit: streamed
    (last,) = iter_rows([found(tmp_path / "a.bbox")], jobs=1, emit=chunks.append)
    assert chunks and last.count("calls") + sum(len(c["calls"]["key"]) for c in chunks) == 2
    assert last.count("sessions") == 1
    chunks.clear()
    (kept,) = iter_rows([found(tmp_path / "a.bbox")], jobs=1)  # no emit: never streamed
    assert kept.count("calls") == 2 and chunks == []


def test_iter_rows_passes_the_secrets_choice_on(tmp_path: Path) -> None:
    (tmp_path / "k.bbox").write_text(HEAD + f"u: {KEY}\n", encoding="utf-8")
    (refused,) = iter_rows([found(tmp_path / "k.bbox")], jobs=1)
    assert refused.credentials
    (kept,) = iter_rows([found(tmp_path / "k.bbox")], jobs=1, secrets="keep")
    assert not kept.credentials and kept.count("events") == 1


def test_iter_rows_reports_progress(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    told: list[tuple[int, int]] = []
    list(
        iter_rows([found(tmp_path / "a.bbox"), found("-")], jobs=1, progress=lambda d, t: told.append((d, t)))
    )
    assert told == [(1, 2), (2, 2)]


# -- the run ----------------------------------------------------------------------------------


def test_an_unknown_format_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^format must be one of parquet, csv, not 'xlsx'$"):
        export_inputs([], tmp_path / "out", format="xlsx")  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists()


def test_export_counts_each_kind_of_input_where_it_belongs(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.bbox").write_text(SESSION, encoding="utf-8")
    (logs / "k.bbox").write_text(HEAD + f"u: {KEY}\n", encoding="utf-8")
    (logs / "bad.bbox").write_bytes(HEAD.encode() + b"u: \xff\n")
    inputs = [
        found(logs / "a.bbox"),
        found(logs / "k.bbox"),
        found(logs / "bad.bbox"),
        found(logs / "gone.bbox"),
        found(logs / "again.bbox", counted_in=str(logs / "a.bbox")),
    ]
    told: list[tuple[int, int]] = []
    summary = export_inputs(
        inputs, tmp_path / "out" / "deep", format="csv", jobs=1, progress=lambda d, t: told.append((d, t))
    )
    assert told[-1] == (4, 4)
    assert summary.out == tmp_path / "out" / "deep" and summary.format == "csv"
    assert summary.files == 4
    assert summary.refused == ((str(logs / "k.bbox"), ("6:4: S001 anthropic_key",)),)
    assert [path for path, _ in summary.failed] == [str(logs / "bad.bbox")]
    assert summary.unreadable == (
        (str(logs / "gone.bbox"), f"{logs / 'gone.bbox'}: no such file or directory"),
    )
    assert summary.crashed == ()
    assert summary.counted_in == ((str(logs / "again.bbox"), str(logs / "a.bbox")),)
    sessions = (tmp_path / "out" / "deep" / "sessions.csv").read_text(encoding="utf-8").splitlines()
    assert len(sessions) == 1 + 3  # the refused file has no row
    assert summary.rows == {
        "sessions": 3,
        "events": 4,
        "calls": 2,
        "diagnostics": summary.rows["diagnostics"],
    }
    assert sorted(p.name for p in (tmp_path / "out" / "deep").iterdir()) == sorted(
        f"{name}.csv" for name in TABLE_NAMES
    )


def test_a_file_not_read_faithfully_without_a_problem_is_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    real = export._rows_of

    def unfaithful(*args: Any) -> Any:
        rows = real(*args)
        rows.ok = False
        return rows

    monkeypatch.setattr(export, "_rows_of", unfaithful)
    summary = export_inputs([found(tmp_path / "a.bbox")], tmp_path / "out", format="csv", jobs=1)
    assert summary.failed == ((str(tmp_path / "a.bbox"), "not read faithfully"),)


def test_a_crash_is_counted_as_crashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.checks.workflow import internal_error
    from bbox_lark.numbers.tables import unread_rows

    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")

    def crashed(path: str, *args: Any) -> Any:
        return unread_rows(path, "it failed (E016)", [internal_error(RuntimeError("boom"))])

    monkeypatch.setattr(export, "_rows_of", crashed)
    summary = export_inputs([found(tmp_path / "a.bbox")], tmp_path / "out", format="csv", jobs=1)
    assert summary.crashed == ((str(tmp_path / "a.bbox"), "it failed (E016)"),)
    assert summary.unreadable == () and summary.exit_code == 2


def test_a_worker_that_failed_gives_the_files_row_saying_e016(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bbox_lark.files import runner

    captured: dict[str, Any] = {}
    real = runner.run_each

    def spy(items: Any, far: Any, here: Any, failed: Any, **kwargs: Any) -> Any:
        captured["failed"] = failed
        return real(items, far, here, failed, **kwargs)

    monkeypatch.setattr(runner, "run_each", spy)
    list(iter_rows([found("-")], jobs=1))
    rows = captured["failed"](found(tmp_path / "a.bbox"), RuntimeError("boom"))
    assert rows.crashed and rows.path == str(tmp_path / "a.bbox")
    assert rows.tables["sessions"]["problem"] == ["bbox-lark failed on this file (E016)"]
    assert rows.tables["diagnostics"]["code"] == ["E016"]


def test_a_large_file_is_never_sent_to_a_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.files import runner

    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    plans: list[Any] = []
    real = runner.run_each

    def spy(items: Any, far: Any, here: Any, failed: Any, **kwargs: Any) -> Any:
        plans.extend(far(item) for item in items)
        assert kwargs["in_flight_per_worker"] == export.IN_FLIGHT_PER_WORKER == 2
        assert kwargs["size"] is export._size
        return real(items, far, here, failed, **kwargs)

    monkeypatch.setattr(runner, "run_each", spy)
    item = found(tmp_path / "a.bbox")
    list(iter_rows([item, found("-"), found(tmp_path / "x", problem="no")], jobs=1, secrets="keep"))
    assert plans == [(export._rows_of, export._job(item, "keep")), None, None]
    plans.clear()
    monkeypatch.setattr(export, "STREAM_MIN_BYTES", 1)
    list(iter_rows([item], jobs=1, emit=lambda chunk: None))
    assert plans == [None]
    plans.clear()
    list(iter_rows([item], jobs=1))  # no emit: sent whatever its size
    assert plans == [(export._rows_of, export._job(item, "refuse"))]


def test_export_tables_reads_no_configuration_unless_given_a_resolver(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(HEAD + f"u: {KEY}\n", encoding="utf-8")
    (tmp_path / ".bbox-lark.toml").write_text(f'allowed_secrets = ["{KEY}"]\n', encoding="utf-8")
    summary = export_tables([str(tmp_path / "a.bbox")], tmp_path / "out", format="csv", jobs=1)
    assert summary.refused and summary.files == 1
    kept = export_tables([str(tmp_path / "a.bbox")], tmp_path / "out2", format="csv", secrets="keep")
    assert kept.refused == () and kept.rows["events"] == 1
    redacted = export_tables(
        [str(tmp_path / "a.bbox")], str(tmp_path / "out3"), format="csv", secrets="redact"
    )
    assert redacted.refused == () and KEY not in (tmp_path / "out3" / "events.csv").read_text(
        encoding="utf-8"
    )


def test_export_tables_counts_a_file_given_twice_once(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    path = str(tmp_path / "a.bbox")
    summary = export_tables([path, path], tmp_path / "out", format="csv", jobs=1)
    assert summary.files == 1 and summary.counted_in == ((path, path),)
    assert summary.rows["sessions"] == 1


# -- the extras, the jobs, the stream: what a run is given reaches where it is used ------------


def _without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """An install without ``modules`` (as ``sys.modules[name] = None`` makes one)."""
    import sys

    for name in list(sys.modules):
        if name in modules or name.startswith(tuple(f"{m}." for m in modules)):
            monkeypatch.setitem(sys.modules, name, None)
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def test_a_parquet_export_without_pyarrow_says_so_before_making_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bbox_lark.numbers.tables import MissingExtra

    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    _without(monkeypatch, "pyarrow")
    with pytest.raises(MissingExtra) as raised:
        export_inputs([found(tmp_path / "a.bbox")], tmp_path / "out", jobs=1)
    assert str(raised.value) == "export needs pyarrow: pip install 'bbox-lark[scale]'"
    assert not (tmp_path / "out").exists()
    summary = export_inputs([found(tmp_path / "a.bbox")], tmp_path / "csv", format="csv", jobs=1)
    assert summary.rows["calls"] == 2  # CSV needs no extra


def test_a_parquet_writer_without_pyarrows_parquet_module_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bbox_lark.numbers.tables import MissingExtra

    _without(monkeypatch, "pyarrow.parquet")
    with pytest.raises(MissingExtra) as raised:
        TableWriter("calls", tmp_path / "calls.parquet", "parquet")
    assert str(raised.value) == "export needs pyarrow: pip install 'bbox-lark[scale]'"


def _jobs_seen(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    from bbox_lark.files import runner

    seen: list[Any] = []
    real = runner.run_each

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["jobs"])
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_each", spy)
    return seen


def test_the_jobs_asked_for_reach_the_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    seen = _jobs_seen(monkeypatch)
    export_inputs([found(tmp_path / "a.bbox")], tmp_path / "one", format="csv", jobs=1)
    export_tables([str(tmp_path / "a.bbox")], tmp_path / "two", format="csv", jobs=3)
    assert seen == [1, 3]


def test_export_tables_reports_progress(tmp_path: Path) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    (tmp_path / "b.bbox").write_text(SESSION, encoding="utf-8")
    told: list[tuple[int, int]] = []
    export_tables(
        [str(tmp_path)], tmp_path / "out", format="csv", jobs=1, progress=lambda d, t: told.append((d, t))
    )
    assert told == [(1, 2), (2, 2)]


def test_export_streams_a_large_file_rather_than_holding_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.bbox").write_text(SESSION, encoding="utf-8")
    streamed: list[bool] = []
    real = export._bbox_rows

    def spy(*args: Any) -> Any:
        streamed.append(args[-1] is not None)  # an emit: the rows go out in chunks
        return real(*args)

    monkeypatch.setattr(export, "_bbox_rows", spy)
    monkeypatch.setattr(export, "STREAM_MIN_BYTES", 1)
    summary = export_inputs([found(tmp_path / "a.bbox")], tmp_path / "out", format="csv", jobs=1)
    assert streamed == [True] and summary.rows["calls"] == 2


def test_the_selection_reaches_the_check_that_makes_the_rows(tmp_path: Path) -> None:
    source = tmp_path / "s.bbox"
    source.write_text(SESSION, encoding="utf-8")  # no runner (I004), a short repo_sha (W009)
    codes = [
        export._rows_of(str(source), 1 << 20, select, ignore, (), "refuse", None).tables["diagnostics"][
            "code"
        ]
        for select, ignore in ((None, None), (["E"], None), (None, ["W"]))
    ]
    assert codes == [["I004", "W009"], [], ["I004"]]


def test_the_longest_line_reaches_the_conversion_of_a_foreign_file() -> None:
    rows = export._rows_of(str(CLAUDE), 40, None, None, (), "refuse", None)
    assert not rows.ok and rows.count("events") == 7
    assert rows.tables["diagnostics"]["code"] == ["I004", "W009", *["E003"] * 7]


def test_a_partial_file_already_gone_is_no_error_when_the_run_is_dropped(tmp_path: Path) -> None:
    for format in ("parquet", "csv"):
        writer = TableWriter("calls", tmp_path / f"calls.{format}", format)  # type: ignore[arg-type]
        writer.partial.unlink()
        writer.close(keep=False)
    assert list(tmp_path.iterdir()) == []


def test_a_file_with_a_credential_is_refused_unless_told_otherwise(tmp_path: Path) -> None:
    source = tmp_path / "s.bbox"
    source.write_text(HEAD + f"u: {KEY}\n", encoding="utf-8")
    assert export._rows_of(str(source), 1 << 20, None, None).credentials == ("6:4: S001 anthropic_key",)


def test_a_foreign_file_is_read_with_the_selection_the_secrets_choice_and_the_emit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    picked = export._rows_of(str(CLAUDE), 1 << 20, ["E"], None, (), "refuse", None)
    assert picked.tables["diagnostics"]["code"] == []
    ignored = export._rows_of(str(CLAUDE), 1 << 20, None, ["W"], (), "refuse", None)
    assert ignored.tables["diagnostics"]["code"] == ["I004"]
    lines = CLAUDE.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    keyed = tmp_path / "key.jsonl"
    keyed.write_text(
        "\n".join([*lines, json.dumps({**record, "uuid": "k", "message": {"role": "user", "content": KEY}})])
        + "\n",
        encoding="utf-8",
    )
    refused = export._rows_of(str(keyed), 1 << 20, None, None, (), "refuse", None)
    assert refused.credentials and all(refused.count(name) == 0 for name in TABLE_NAMES)
    streamed: list[bool] = []
    real = export._bbox_rows

    def spy(*args: Any) -> Any:
        streamed.append(args[-1] is not None)
        return real(*args)

    monkeypatch.setattr(export, "_bbox_rows", spy)
    export._rows_of(str(CLAUDE), 1 << 20, None, None, (), "keep", lambda chunk: None)
    assert streamed == [True]
