"""The tables' rows (``bbox_lark/numbers/tables.py``), pinned down column by column for one
small session that has most of what a row can hold (a call completed by an observation, a
pending one, a call without a key, a time in another zone, usage, an ``@end`` cost, an
unknown line), plus a file not read faithfully, a blank ``id``, undecodable bytes, a file
that could not be read and the chunks a stream hands on (docs/testing.md, "Mutation
testing")."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bbox_lark.numbers import tables
from bbox_lark.numbers.tables import (
    Columns,
    MissingExtra,
    SessionRows,
    arrow_schema,
    arrow_table,
    arrow_type,
    empty_columns,
    need,
    session_rows,
    stream_session_rows,
    unread_rows,
)
from bbox_lark.syntax.nodes import Diagnostic

HEAD = "---\nformat: bbox/1\nid: s1\nrepo_sha: 215db51\nrunner: local\n---\n"
FULL_HEAD = HEAD.replace("runner: local\n", "runner: local\nmodel: claude-opus-4-6\nagent: claude-code\n")
BODY = (
    "u: fix the bug ts=2025-01-01T00:00:00Z\n"
    "a: looking tokens_in=100 tokens_out=20 tokens_cached=5 step=1 tid=main\n"
    "t!:bash id=c1 span=s1 make test → [running] ts=2025-01-01T00:00:01+01:00\n"
    "o: id=c1 → [error] latency_ms=30\n"
    "t:read a.rs → [ok]\n"
    "t!:bash id=c2 → [running]\n"
    "bogus\n"
    "@end cost_usd=0.5 ts=2025-01-01T00:00:09Z\n"
)


def rows(columns: Columns) -> list[dict[str, Any]]:
    count = len(columns["session_id"])
    return [{name: values[i] for name, values in columns.items()} for i in range(count)]


def at(hour: int, minute: int, second: int, day: int = 1) -> datetime:
    return datetime(2025 if day == 1 else 2024, 1 if day == 1 else 12, day, hour, minute, second, tzinfo=UTC)


def test_the_sessions_row() -> None:
    (row,) = rows(session_rows("dir/s.bbox", FULL_HEAD + BODY).tables["sessions"])
    assert row == {
        "session_id": "s1",
        "path": "dir/s.bbox",
        "header_format": "bbox/1",
        "header_id": "s1",
        "header_agent": "claude-code",
        "header_model": "claude-opus-4-6",
        "header_version": None,
        "header_client_version": None,
        "header_runner": "local",
        "header_mode": None,
        "header_repo": None,
        "header_repo_sha": "215db51",
        "header_branch": None,
        "header_cwd": None,
        "faithful": True,
        "problem": None,
        "lines": 16,
        "events": 8,
        "user_messages": 1,
        "calls": 3,
        "calls_error": 1,
        "calls_pending": 1,
        "steps": 1,
        "responses": 1,
        "models": "claude-opus-4-6",
        "tokens_in": 100,
        "tokens_out": 20,
        "tokens_cached": 5,
        "usage_source": "responses",
        "cost_usd": 0.5,
        "estimated_cost_usd": row["estimated_cost_usd"],  # genai-prices' table decides it
        "estimate_note": None,
        "estimate_lower_bound": True,
        "tokens_cache_write": None,
        "calls_ambiguous": 0,
        "first_ts": at(23, 0, 1, day=31),
        "last_ts": at(0, 0, 9),
        "duration_s": 3608.0,
        "errors": 0,
        "warnings": 2,
    }
    assert isinstance(row["estimated_cost_usd"], float) and row["estimated_cost_usd"] > 0


def test_the_events_rows() -> None:
    events = rows(session_rows("dir/s.bbox", HEAD + BODY).tables["events"])
    common = {"session_id": "s1", "path": "dir/s.bbox"}
    none = dict.fromkeys(["name", "step", "ts", "tid", "span", "id", "result_kind", "result"])
    assert events[0] == {
        **common,
        **none,
        "line": 7,
        "kind": "user",
        "ts": at(0, 0, 0),
        "text": "fix the bug ts=2025-01-01T00:00:00Z",
    }
    assert events[1] == {
        **common,
        **none,
        "line": 8,
        "kind": "agent",
        "step": 1,
        "tid": "main",
        "text": "looking tokens_in=100 tokens_out=20 tokens_cached=5 step=1 tid=main",
    }
    assert events[2] == {
        **common,
        "line": 9,
        "kind": "tool_start",
        "name": "bash",
        "step": None,
        "ts": at(23, 0, 1, day=31),
        "tid": None,
        "span": "s1",
        "id": "c1",
        "text": "id=c1 span=s1 make test",
        "result_kind": "running",
        "result": "[running] ts=2025-01-01T00:00:01+01:00",
    }
    assert events[3] == {
        **common,
        **none,
        "line": 10,
        "kind": "observation",
        "id": "c1",
        "text": "id=c1",
        "result_kind": "error",
        "result": "[error] latency_ms=30",
    }
    assert [(e["line"], e["kind"], e["name"], e["text"]) for e in events[4:]] == [
        (11, "tool", "read", "a.rs"),
        (12, "tool_start", "bash", "id=c2"),
        (13, "unknown", None, "bogus"),
        (14, "lifecycle", "end", "cost_usd=0.5 ts=2025-01-01T00:00:09Z"),
    ]


def test_the_calls_rows() -> None:
    calls = rows(session_rows("dir/s.bbox", HEAD + BODY).tables["calls"])
    common = {"session_id": "s1", "path": "dir/s.bbox", "family": "tool", "step": None, "response": None}
    no_usage = {"tokens_in": None, "tokens_out": None, "tokens_cached": None, "pairing": "id"}
    assert calls == [
        {
            **common,
            **no_usage,
            "key": "c1",
            "tool": "bash",
            "kind": "tool_start",
            "args": "make test",
            "start_line": 9,
            "end_line": 10,
            "outcome": "error",
            "latency_ms": 30,
            "ts": at(23, 0, 1, day=31),
        },
        {
            **common,
            **no_usage,
            "key": None,
            "tool": "read",
            "kind": "tool",
            "args": "a.rs",
            "start_line": 11,
            "end_line": 11,
            "outcome": "ok",
            "latency_ms": None,
            "ts": None,
        },
        {
            **common,
            **no_usage,
            "key": "c2",
            "tool": "bash",
            "kind": "tool_start",
            "args": "",
            "start_line": 12,
            "end_line": None,
            "outcome": "pending",
            "latency_ms": None,
            "ts": None,
        },
    ]


def test_a_calls_usage_goes_into_its_row() -> None:
    (call,) = rows(
        session_rows("s.bbox", HEAD + "t:bash tokens_in=5 tokens_out=2 tokens_cached=1 → [ok]\n").tables[
            "calls"
        ]
    )
    assert (call["tokens_in"], call["tokens_out"], call["tokens_cached"], call["response"]) == (5, 2, 1, 1)


def test_the_diagnostics_rows() -> None:
    assert rows(session_rows("dir/s.bbox", HEAD + BODY).tables["diagnostics"]) == [
        {
            "session_id": "s1",
            "path": "dir/s.bbox",
            "line": 12,
            "col": 1,
            "code": "W007",
            "severity": "warning",
            "message": "tool start `t!:bash` is never completed",
        },
        {
            "session_id": "s1",
            "path": "dir/s.bbox",
            "line": 13,
            "col": 1,
            "code": "W003",
            "severity": "warning",
            "message": "unknown line kind (kept verbatim)",
        },
    ]


def test_a_file_not_read_faithfully_says_why() -> None:
    done = session_rows("p.bbox", HEAD + 't:grep "open → [ok]\nu: hi\n')
    (row,) = rows(done.tables["sessions"])
    assert (row["faithful"], row["errors"], row["warnings"], done.ok) == (False, 1, 0, False)
    assert row["problem"] == "not read faithfully (E012); the rows hold what could be read"


def test_a_blank_id_names_the_session_by_its_path() -> None:
    tables = session_rows("p.bbox", HEAD.replace("id: s1", "id: '  '") + "u: hi\n").tables
    assert tables["sessions"]["session_id"] == tables["events"]["session_id"] == ["p.bbox"]


def test_undecodable_bytes_become_replacement_characters() -> None:
    tables = session_rows("p\udcff.bbox", HEAD + "u: caf\udce9\n").tables
    assert tables["sessions"]["path"] == tables["events"]["path"] == ["p\ufffd.bbox"]
    assert tables["events"]["text"] == ["caf\ufffd"]


def test_a_file_that_could_not_be_read_has_its_sessions_row_only() -> None:
    done = unread_rows("gone.bbox", "no such file")
    (row,) = rows(done.tables["sessions"])
    assert {k: v for k, v in row.items() if v is not None} == {
        "session_id": "gone.bbox",
        "path": "gone.bbox",
        "faithful": False,
        "problem": "no such file",
        "errors": 0,
        "warnings": 0,
    }
    assert (done.ok, done.unreadable, done.crashed) == (False, True, False)
    assert all(done.count(name) == 0 for name in done.tables if name != "sessions")


def test_a_stream_hands_on_its_rows_in_chunks() -> None:
    chunks: list[dict[str, Columns]] = []
    text = HEAD + "u: a\nu: b\nu: c\nt:x → [ok]\nu: d\n"
    last = stream_session_rows("p.bbox", text, chunks.append, chunk_rows=2)
    assert [(len(c["events"]["line"]), len(c["calls"]["start_line"])) for c in chunks] == [(2, 0), (2, 1)]
    assert [c["events"]["line"] for c in chunks] == [[7, 8], [9, 10]]
    assert last.tables["events"]["line"] == [11] and last.count("calls") == 0


@pytest.mark.parametrize("path", ["crashed.bbox", ""])
def test_a_file_bbox_lark_failed_on_keeps_its_findings(path: str) -> None:
    found = [
        Diagnostic("E016", "error", 3, 1, "internal error: boom", "internal-error"),
        Diagnostic("W003", "warning", 4, 1, "unknown line kind", "unknown-line"),
        Diagnostic("I001", "info", 5, 1, "long", "long-session"),
    ]
    done = unread_rows(path, "bbox-lark failed on this file (E016)", found)
    (row,) = rows(done.tables["sessions"])
    assert (row["session_id"], row["path"], row["errors"], row["warnings"]) == (path, path, 1, 1)
    assert (done.path, done.ok, done.unreadable, done.crashed) == (path, False, False, True)
    diagnostics = rows(done.tables["diagnostics"])
    assert [(d["session_id"], d["path"], d["line"], d["code"], d["severity"]) for d in diagnostics] == [
        (path, path, 3, "E016", "error"),
        (path, path, 4, "W003", "warning"),
        (path, path, 5, "I001", "info"),
    ]


@pytest.mark.parametrize(
    "call",
    [
        lambda: arrow_table("events", empty_columns("events")),
        lambda: arrow_schema("events"),
        lambda: arrow_type("string"),
        lambda: need("pyarrow.parquet", "the tables"),
    ],
)
def test_the_arrow_tables_without_pyarrow_say_what_to_install(
    monkeypatch: pytest.MonkeyPatch, call: Callable[[], object]
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingExtra) as raised:
        call()
    assert str(raised.value) == "the tables needs pyarrow: pip install 'bbox-lark[scale]'"


def test_every_chunk_of_a_long_file_comes_back_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "CHUNK_ROWS", 3)  # read when the file is, as its default
    done = session_rows("dir/s.bbox", HEAD + BODY)
    assert done.count("events") == 8 and done.count("calls") == 3 and done.ok
    assert done.tables["events"]["line"] == list(range(7, 15))


GH = "gh" + "p" + "_" + "FAKEfake0123456789notARealTokenABC12"


@pytest.mark.parametrize(
    ("options", "codes"),
    [
        ({}, ["S001", "W007", "W003"]),
        ({"select": ["W007"]}, ["W007"]),
        ({"ignore": ["W"]}, ["S001"]),
        ({"allowed_secrets": [GH]}, ["W007", "W003"]),
    ],
)
def test_the_diagnostics_follow_the_checks_options(options: dict[str, Any], codes: list[str]) -> None:
    done = session_rows("s.bbox", HEAD + f"u: {GH}\n" + BODY, **options)
    assert done.tables["diagnostics"]["code"] == codes


def sessions_row(done: SessionRows) -> dict[str, Any]:
    (row,) = rows(done.tables["sessions"])
    return row


def test_a_file_without_a_header_is_named_by_its_path() -> None:
    done = session_rows("dir/s.bbox", "u: hi\n")
    row = sessions_row(done)
    assert (row["session_id"], row["path"], row["header_id"], row["header_format"]) == (
        "dir/s.bbox",
        "dir/s.bbox",
        None,
        None,
    )
    assert done.path == "dir/s.bbox" and done.tables["diagnostics"]["code"] == ["E004"]
    assert row["lines"] == 1


def test_a_file_with_an_empty_path_keeps_it_empty() -> None:
    done = session_rows("", "u: hi\n")
    assert sessions_row(done)["path"] == "" and done.tables["events"]["path"] == [""]


def test_a_header_value_that_is_not_a_string_fills_no_column() -> None:
    row = sessions_row(
        session_rows("s.bbox", HEAD.replace("runner: local\n", "runner: local\nbranch:\n  - a\n"))
    )
    assert row["header_branch"] is None and row["header_runner"] == "local"


def test_the_line_limit_reaches_the_reader_and_every_refusing_code_is_named() -> None:
    long_line = "u: " + "x" * 50 + "\n"
    row = sessions_row(session_rows("s.bbox", HEAD + 't:grep "open → [ok]\n' + long_line, max_line=20))
    assert row["problem"] == "not read faithfully (E003, E012); the rows hold what could be read"
    assert sessions_row(session_rows("s.bbox", HEAD + long_line))["faithful"] is True


def test_a_calls_step_and_a_bad_time() -> None:
    done = session_rows("s.bbox", HEAD + "u: hi ts=yesterday\nt:bash step=3 → [ok]\n")
    assert done.tables["events"]["ts"] == [None, None] and done.tables["calls"]["step"] == [3]


def test_times_are_in_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        done = session_rows("s.bbox", HEAD + "u: hi ts=2025-01-01T09:00:00+09:00\n")
    finally:
        monkeypatch.undo()
        time.tzset()
    (moment,) = done.tables["events"]["ts"]
    assert moment == at(0, 0, 0) and moment.utcoffset() == timedelta(0) and moment.tzinfo is UTC


def test_a_failure_inside_bbox_lark_ends_the_rows_with_e016() -> None:
    def fail(chunk: dict[str, Columns]) -> None:
        raise RuntimeError("the consumer broke")

    done = stream_session_rows("p.bbox", HEAD + "u: a\nt:x → [ok]\nu: c\n", fail, chunk_rows=2)
    row = sessions_row(done)
    assert (done.path, row["session_id"], row["path"]) == ("p.bbox", "p.bbox", "p.bbox")
    assert (row["problem"], row["errors"], done.crashed, done.unreadable) == (
        "bbox-lark failed on this file (E016)",
        1,
        True,
        False,
    )
    assert done.tables["diagnostics"]["code"] == ["E016"]
    assert done.tables["events"]["line"] == [7, 8] and done.tables["calls"]["start_line"] == [8]


def test_two_models_an_estimate_note_and_cache_writes() -> None:
    body = (
        "u: a\nu: b\n# model: m-one\na: x tokens_in=5 tokens_out=1 tokens_cache_write=2\n"
        "# model: m-two\na: y tokens_in=7 tokens_out=1\n"
    )
    row = sessions_row(session_rows("s.bbox", HEAD + body))
    assert (row["user_messages"], row["models"], row["tokens_cache_write"]) == (2, "m-one, m-two", 2)
    assert row["estimate_note"] == "no price for model m-one"
    plain = sessions_row(session_rows("s.bbox", HEAD + "u: a\n"))
    assert (plain["models"], plain["estimate_note"]) == (None, "no usage")


# -- the provider credentials the rows' own check found (export's refusal) ------------------

_KEY = "sk-ant-api03-FAKEfakeFAKEfake0123456789-notARealKeyJustForTests_0123456789AA"


@pytest.mark.parametrize(
    ("options", "found"),
    [
        ({}, True),
        ({"select": ["S002"]}, True),  # the rule runs for either of its codes
        ({"ignore": ["S001"]}, True),  # found before selection: export refuses all the same
        ({"select": ["W"]}, False),  # the rule did not run: export scans the file itself
        ({"ignore": ["S"]}, False),
    ],
)
def test_the_rows_name_the_provider_credentials_their_check_found(
    options: dict[str, list[str]], found: bool
) -> None:
    head = HEAD.replace("runner: local\n", f"runner: local\nnote: {_KEY}\n")
    body = (
        f"u: a {_KEY} and {_KEY}\n"
        "# bbox-lark: ignore[S001]\n"  # found before suppressions too
        f"u: {_KEY}\n"
        "u: password=hunter2hunter2\n"  # an S002 only: no provider credential
        f"u: token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 then {_KEY}\n"  # two kinds, by column
        "t:read id_rsa → -----BEGIN OPENSSH PRIVATE KEY-----\n"
        "  b3BlbnNz\n  -----END OPENSSH PRIVATE KEY-----\n"
    )
    credentials = session_rows("s.bbox", head + body, **options).provider_credentials  # type: ignore[arg-type]
    expected = (
        (6, 7, "anthropic_key"),
        (8, 6, "anthropic_key"),
        (8, 87, "anthropic_key"),
        (10, 4, "anthropic_key"),
        (12, 10, "github_token"),
        (12, 56, "anthropic_key"),
        (13, 17, "private_key"),  # its message's secret holds spaces: the kind is the first word
    )
    assert credentials == (expected if found else None)
    assert session_rows("s.bbox", HEAD + "u: hi\n", **options).provider_credentials == (  # type: ignore[arg-type]
        () if found else None
    )


# -- pandas is not imported to convert the rows ---------------------------------------------


def test_pandas_cannot_be_imported_while_the_rows_convert(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    finder = tables._NoPandas()
    for name in ("pandas", "pandas.core.frame"):
        with pytest.raises(ModuleNotFoundError, match=f"^No module named '{name}'$") as raised:
            finder.find_spec(name)
        assert raised.value.name == name
    assert finder.find_spec("pandasx") is None and finder.find_spec("json") is None
    before = list(sys.meta_path)
    monkeypatch.delitem(sys.modules, "pandas", raising=False)  # as in a process that never used it
    with tables._pandas_not_asked():
        assert isinstance(sys.meta_path[0], tables._NoPandas)
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("pandas")
    assert sys.meta_path == before
    with pytest.raises(RuntimeError), tables._pandas_not_asked():
        raise RuntimeError("the conversion failed")
    assert sys.meta_path == before  # taken out whatever happens inside
    monkeypatch.setitem(sys.modules, "pandas", sys)  # imported already: nothing is put in the way
    with tables._pandas_not_asked():
        assert sys.meta_path == before
    monkeypatch.delitem(sys.modules, "pandas")
    table = arrow_table("events", empty_columns("events"))
    assert table.num_rows == 0 and "pandas" not in sys.modules and sys.meta_path == before


def test_the_sessions_steps_are_the_distinct_step_values() -> None:
    body = "u: a\na: b step=1\nt:read x step=2 → [ok]\na: c step=2\n# metrics step=3 prompt=1\nu: d\n"
    assert sessions_row(session_rows("s.bbox", HEAD + body))["steps"] == 2  # a comment's is no step
    assert sessions_row(session_rows("s.bbox", HEAD + "u: a\nu: b\n"))["steps"] == 0


def test_a_lone_surrogate_given_in_a_string_is_u_fffd_in_every_table() -> None:
    # Undecodable bytes read with surrogateescape (U+DC80..U+DCFF) became U+FFFD; any other
    # lone surrogate (a str handed to the library) made the rows fail: an E016 for the file's
    # text, and an exception out of session_rows (which never raises) for its path.
    done = session_rows("a\ud800.bbox", HEAD + "u: x\ud800y \udc00 \udcff\n")
    assert not done.crashed and "E016" not in done.tables["diagnostics"]["code"]
    assert done.tables["events"]["text"] == ["x\ufffdy \ufffd \ufffd"]
    assert sessions_row(done)["path"] == "a\ufffd.bbox"
    assert done.tables["events"]["path"] == ["a\ufffd.bbox"]
