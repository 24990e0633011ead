"""``query`` (``bbox_lark/numbers/query.py``) pinned down where its mutants showed no test
looked: each value as JSON and CSV, the inputs that could not be read and what the command
says of them, export folders whose paths need quoting, several folders at once, statements
that return no rows, the inputs counted elsewhere and the way through Parquet above the
memory limit (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from bbox_lark.files.config import Resolver
from bbox_lark.files.discover import FoundInput
from bbox_lark.numbers import query
from bbox_lark.numbers.export import export_tables
from bbox_lark.numbers.query import (
    QueryError,
    QueryResult,
    find_inputs,
    is_export,
    query_inputs,
    query_tables,
    run_sql,
    to_json_value,
)

pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")

HEAD = "---\nformat: bbox/1\nid: {id}\nrepo_sha: abc1234\n---\n"
BODY = "u: hello\nt:bash id=c1 ls → [ok]\nt:read a.rs → [3 lines]\n"
KEY = "sk-ant-api03-FAKEfakeFAKEfake0123456789-notARealKeyJustForTests_0123456789AA"


def session(folder: Path, name: str, sid: str, body: str = BODY) -> Path:
    path = folder / name
    path.write_text(HEAD.format(id=sid) + body, encoding="utf-8")
    return path


def found(path: str | Path, **kwargs: Any) -> FoundInput:
    return FoundInput(str(path), Resolver(isolated=True).for_path(str(path)), **kwargs)


# -- values -----------------------------------------------------------------------------------


def test_each_kind_of_value_as_json() -> None:
    zone = timezone(timedelta(hours=2))
    assert to_json_value(datetime(2025, 1, 2, 3, 4, 5, tzinfo=zone)) == "2025-01-02T03:04:05+02:00"
    assert to_json_value(date(2025, 1, 2)) == "2025-01-02"
    assert to_json_value(time(3, 4, 5)) == "03:04:05"
    assert to_json_value(timedelta(minutes=1, milliseconds=500)) == 60.5
    assert to_json_value(Decimal("0.125")) == 0.125 and isinstance(to_json_value(Decimal("1")), float)
    assert to_json_value(b"caf\xc3\xa9 \xff") == "café \ufffd"
    assert to_json_value([Decimal("1.5"), (b"a", None)]) == [1.5, ["a", None]]
    assert to_json_value({1: Decimal("2"), "k": [date(2025, 1, 1)]}) == {"1": 2.0, "k": ["2025-01-01"]}
    assert to_json_value("text") == "text" and to_json_value(3) == 3 and to_json_value(None) is None


def test_each_kind_of_value_as_csv() -> None:
    result = QueryResult(
        ("a", "b", "c", "d", "e"),
        [
            (None, [1, "é"], {"k": Decimal("1.5")}, datetime(2025, 1, 1, tzinfo=UTC), "x,y"),
            ("", [], {}, 0, 'say "hi"'),
        ],
    )
    assert result.to_csv() == (
        'a,b,c,d,e\n,"[1, ""é""]","{""k"": 1.5}",2025-01-01T00:00:00+00:00,"x,y"\n,[],{},0,"say ""hi"""\n'
    )
    assert QueryResult(("n",), []).to_csv() == "n\n"


def test_rows_as_json_objects() -> None:
    result = QueryResult(("n", "when"), [(1, date(2025, 1, 1)), (None, None)])
    assert result.to_json() == [{"n": 1, "when": "2025-01-01"}, {"n": None, "when": None}]
    with pytest.raises(ValueError):
        QueryResult(("n",), [(1, 2)]).to_json()  # a row longer than the columns: never cut short


def test_the_result_says_each_input_that_could_not_be_read() -> None:
    result = QueryResult(("n",), [], (("a.bbox", "a.bbox: no such file"), ("b.bbox", "crashed")))
    assert result.exit_code == 2
    assert [(s.text, s.mark) for s in result.said()] == [
        ("a.bbox: no such file", "error"),
        ("b.bbox: crashed", "error"),
    ]
    assert QueryResult(("n",), []).exit_code == 0 and QueryResult(("n",), []).said() == ()


# -- SQL --------------------------------------------------------------------------------------


def test_run_sql_gives_columns_and_rows_of_each_type() -> None:
    con = duckdb.connect(":memory:")
    columns, rows = run_sql(
        con, "SELECT 1 AS n, 'x' AS s, [1, 2] AS l, MAP {'k': 1} AS m, NULL AS z, DATE '2025-01-02' AS d"
    )
    assert columns == ("n", "s", "l", "m", "z", "d")
    assert rows == [(1, "x", [1, 2], {"k": 1}, None, date(2025, 1, 2))]
    assert run_sql(con, "CREATE TABLE t (a INT)")[1] == []
    assert run_sql(con, "SELECT a FROM t") == (("a",), [])

    class NoRelation:  # duckdb versions that answer a statement with no relation
        def sql(self, text: str) -> None:
            return None

    assert run_sql(NoRelation(), "SET threads = 1") == ((), [])

    class OldRelation:  # duckdb 1.x: a relation's Arrow table is arrow(), not to_arrow_table()
        columns = ("n",)

        def arrow(self) -> Any:
            import pyarrow

            return pyarrow.table({"n": [1, 2]})

    class OldConnection:
        def sql(self, text: str) -> OldRelation:
            return OldRelation()

    assert run_sql(OldConnection(), "SELECT n") == (("n",), [(1,), (2,)])


def test_run_sql_without_duckdb_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.numbers.tables import MissingExtra

    _without(monkeypatch, "duckdb")
    with pytest.raises(MissingExtra, match=r"^query needs duckdb: pip install 'bbox-lark\[scale\]'$"):
        run_sql(None, "SELECT 1")


def test_bad_sql_is_duckdbs_message_stripped() -> None:
    con = duckdb.connect(":memory:")
    with pytest.raises(QueryError) as raised:
        run_sql(con, "SELECT nope")
    message = str(raised.value)
    assert message == message.strip() and "nope" in message and "Binder Error" in message
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


# -- inputs -----------------------------------------------------------------------------------


def test_an_export_folder_is_one_that_holds_sessions_parquet(tmp_path: Path) -> None:
    assert not is_export(tmp_path)
    (tmp_path / "sessions.parquet").mkdir()
    assert not is_export(tmp_path)  # a folder of that name is not the table
    (tmp_path / "sessions.parquet").rmdir()
    (tmp_path / "sessions.parquet").write_bytes(b"")
    assert is_export(tmp_path) and is_export(str(tmp_path))


def test_find_inputs_takes_export_folders_whole_and_finds_the_rest(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    session(logs, "a.bbox", "a")
    export_tables([str(logs)], tmp_path / "out", jobs=1)
    resolver = Resolver(isolated=True)
    inputs = find_inputs([str(tmp_path / "out"), str(logs)], resolver)
    assert [item.path for item in inputs] == [str(tmp_path / "out"), str(logs / "a.bbox")]
    assert inputs[0].settings == resolver.for_path("-") and inputs[0].problem is None
    assert [item.path for item in find_inputs([str(tmp_path / "out")], resolver)] == [str(tmp_path / "out")]


def test_several_export_folders_are_queried_as_one_and_quotes_in_paths_are_kept(tmp_path: Path) -> None:
    for number, folder in enumerate(["it's", "b"]):
        logs = tmp_path / f"logs-{number}"
        logs.mkdir()
        session(logs, "s.bbox", f"s{number}")
        export_tables([str(logs)], tmp_path / folder, jobs=1)
    sql = "SELECT session_id, count(*) AS n FROM calls GROUP BY ALL ORDER BY ALL"
    result = query_tables([str(tmp_path / "it's"), str(tmp_path / "b")], sql)
    assert result.columns == ("session_id", "n") and result.rows == [("s0", 2), ("s1", 2)]
    assert result.unreadable == ()
    folders = [str(tmp_path / "it's"), str(tmp_path / "b")]
    counts = "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM events)"
    assert query_tables(folders, counts).rows == [(2, 6)]


def test_session_files_in_memory_keep_every_table_and_say_what_could_not_be_read(tmp_path: Path) -> None:
    session(tmp_path, "a.bbox", "a")
    session(tmp_path, "k.bbox", "k", f"u: {KEY}\n")  # query keeps secrets: it writes no file
    inputs = [found(tmp_path / "a.bbox"), found(tmp_path / "k.bbox"), found(tmp_path / "gone.bbox")]
    counts = (
        "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM events), (SELECT count(*) FROM calls)"
    )
    result = query_inputs(inputs, counts, jobs=1)
    assert result.rows == [(3, 4, 2)]
    assert result.unreadable == (
        (str(tmp_path / "gone.bbox"), f"{tmp_path / 'gone.bbox'}: no such file or directory"),
    )
    assert result.exit_code == 2
    ids = query_inputs(inputs, "SELECT session_id, faithful FROM sessions ORDER BY path", jobs=1).rows
    assert ids == [("a", True), (str(tmp_path / "gone.bbox"), False), ("k", True)]


def test_a_crashed_file_is_listed_in_memory_and_through_parquet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bbox_lark.checks.workflow import internal_error
    from bbox_lark.numbers import export
    from bbox_lark.numbers.tables import unread_rows

    session(tmp_path, "a.bbox", "a")
    session(tmp_path, "b.bbox", "b")
    real = export._rows_of

    def crashes_on_b(path: str, *args: Any) -> Any:
        if path.endswith("b.bbox"):
            return unread_rows(path, "failed (E016)", [internal_error(RuntimeError("boom"))])
        return real(path, *args)

    monkeypatch.setattr(export, "_rows_of", crashes_on_b)
    inputs = [found(tmp_path / "a.bbox"), found(tmp_path / "b.bbox"), found(tmp_path / "gone.bbox")]
    memory = query_inputs(inputs, "SELECT count(*) FROM sessions", jobs=1)
    parquet = query_inputs(inputs, "SELECT count(*) FROM sessions", jobs=1, memory_max=0)
    assert memory.rows == parquet.rows == [(3,)]
    gone = (str(tmp_path / "gone.bbox"), f"{tmp_path / 'gone.bbox'}: no such file or directory")
    assert memory.unreadable == ((str(tmp_path / "b.bbox"), "failed (E016)"), gone)
    assert parquet.unreadable == (gone, (str(tmp_path / "b.bbox"), "failed (E016)"))


def test_an_unreadable_file_without_a_problem_is_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bbox_lark.numbers import export
    from bbox_lark.numbers.tables import unread_rows

    def unread(path: str, *args: Any) -> Any:
        rows = unread_rows(path, "x")
        rows.tables["sessions"]["problem"][0] = None
        return rows

    session(tmp_path, "a.bbox", "a")
    monkeypatch.setattr(export, "_rows_of", unread)
    result = query_inputs([found(tmp_path / "a.bbox")], "SELECT 1", jobs=1)
    assert result.unreadable == ((str(tmp_path / "a.bbox"), "cannot read"),)


def test_the_memory_limit_is_a_strict_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.numbers import export

    path = session(tmp_path, "a.bbox", "a")
    size = path.stat().st_size
    went: list[str] = []
    real_export, real_views = export.export_inputs, query._memory_views
    monkeypatch.setattr(
        export, "export_inputs", lambda *a, **k: went.append("parquet") or real_export(*a, **k)
    )
    monkeypatch.setattr(query, "_memory_views", lambda *a: went.append("memory") or real_views(*a))
    for limit in (size + 1, size):
        result = query_inputs([found(path)], "SELECT count(*) AS n FROM calls", jobs=1, memory_max=limit)
        assert (result.columns, result.rows) == (("n",), [(2,)])
    assert went == ["memory", "parquet"]
    assert query.IN_MEMORY_MAX_BYTES == 256 << 20


def test_through_parquet_the_export_keeps_secrets_and_the_temporary_folder_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    session(tmp_path, "k.bbox", "k", f"u: {KEY}\n")
    made: list[str] = []
    real = tempfile.TemporaryDirectory

    def spy(*args: Any, **kwargs: Any) -> Any:
        folder = real(*args, **kwargs)
        made.append(folder.name)
        return folder

    monkeypatch.setattr(tempfile, "TemporaryDirectory", spy)
    result = query_inputs([found(tmp_path / "k.bbox")], "SELECT count(*) FROM events", jobs=1, memory_max=0)
    assert result.rows == [(1,)] and result.unreadable == ()
    assert len(made) == 1 and Path(made[0]).name.startswith("bbox-lark-query-")
    assert not Path(made[0]).exists()


def test_inputs_counted_elsewhere_are_not_read_twice(tmp_path: Path) -> None:
    path = session(tmp_path, "a.bbox", "a")
    inputs = [found(path), found(path, counted_in=str(path))]
    assert query_inputs(inputs, "SELECT count(*) FROM sessions", jobs=1).rows == [(1,)]


def test_export_folders_and_session_files_together_are_refused_with_the_reason(tmp_path: Path) -> None:
    path = session(tmp_path, "a.bbox", "a")
    export_tables([str(path)], tmp_path / "out", jobs=1)
    with pytest.raises(QueryError, match=r"^give either export folders or session files, not both \(export"):
        query_inputs([found(tmp_path / "out"), found(path)], "SELECT 1")
    # an export folder with a problem, or a session counted elsewhere, is not a mix
    assert query_inputs([found(tmp_path / "out"), found(path, counted_in="x")], "SELECT 1").rows == [(1,)]
    # a folder named with a problem is not taken as an export: an input that cannot be read
    mixed = query_inputs(
        [found(tmp_path / "out", problem="no"), found(path)], "SELECT count(*) FROM sessions"
    )
    assert mixed.rows == [(2,)] and mixed.unreadable == ((str(tmp_path / "out"), "no"),)


def test_query_tables_reads_no_configuration_file(tmp_path: Path) -> None:
    session(tmp_path, "a.bbox", "a")
    (tmp_path / ".bbox-lark.toml").write_text("ignore = ['**']\n", encoding="utf-8")
    assert query_tables([str(tmp_path)], "SELECT count(*) FROM sessions").rows == [(1,)]


def _without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """An install without ``modules`` (as ``sys.modules[name] = None`` makes one)."""
    import sys

    for name in list(sys.modules):
        if name.startswith(tuple(f"{m}." for m in modules)):
            monkeypatch.setitem(sys.modules, name, None)
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("module", ["duckdb", "pyarrow"])
def test_a_query_without_an_extra_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    from bbox_lark.numbers.tables import MissingExtra

    path = session(tmp_path, "a.bbox", "a")
    _without(monkeypatch, module)
    with pytest.raises(MissingExtra) as raised:
        query_inputs([found(path)], "SELECT 1", jobs=1)
    assert str(raised.value) == f"query needs {module}: pip install 'bbox-lark[scale]'"


def test_the_jobs_asked_for_reach_the_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_mutants_numbers_export import _jobs_seen  # the export tests' spy on the runner

    session(tmp_path, "a.bbox", "a")
    seen = _jobs_seen(monkeypatch)
    query_tables([str(tmp_path)], "SELECT 1", jobs=1)
    query_inputs([found(tmp_path / "a.bbox")], "SELECT 1", jobs=3)
    query_inputs([found(tmp_path / "a.bbox")], "SELECT 1", jobs=2, memory_max=0)  # through Parquet
    assert seen == [1, 3, 2]


def test_a_file_given_twice_is_counted_once(tmp_path: Path) -> None:
    path = str(session(tmp_path, "a.bbox", "a"))
    inputs = find_inputs([path, path], Resolver(isolated=True))
    assert [(item.path, item.counted_in) for item in inputs] == [(path, None), (path, path)]
    assert query_tables([path, path], "SELECT count(*) FROM sessions").rows == [(1,)]
