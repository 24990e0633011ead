"""bbox_lark.Writer (issue 18): any text, crash-safe, thread-safe, redacted, blobs offloaded."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from printer_support import fuzz_settings
from test_any_text import HARD, texts

from bbox_lark import Writer, build, check, parse, text_of
from bbox_lark.syntax.nodes import Event
from bbox_lark.syntax.printer import format_document
from bbox_lark.write.writer import DEFAULT_BLOB_THRESHOLD, WriterWarning

HEADER = {"id": "sess_1", "repo_sha": "215db51", "runner": "tests"}
#: A fake Anthropic key in the shape the scanner finds (never a real one).
SECRET = "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0" * 4 + "AA"


def _problems(text: str, **options: object) -> list[str]:
    """Errors and warnings (what fails ``check --strict``)."""
    return [d.format() for d in check(text, **options) if d.severity != "info"]  # type: ignore[arg-type]


def _events(text: str) -> list[Event]:
    return [e for e in parse(text).events if e.kind not in ("lifecycle", "comment")]


# -- any text -------------------------------------------------------------------------------


@fuzz_settings(150)
@given(texts, st.sampled_from(HARD))
def test_any_text_reads_back_exactly(text: str, other: str) -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False, blobs=None, auto_step=True) as log:
        log.user(text)
        log.agent(text, note=other)
        log.thinking(other)
        first = log.call("bash", text, other, cmd=text)
        second = log.call("read", other)
        second.finish(other)
        first.finish(text)
        failing = log.call("grep", text)
        failing.finish(RuntimeError(text))
    document = out.getvalue()
    user, agent, thinking, call, read, _, failed = _events(document)
    assert text_of(user) == text and text_of(agent) == text and text_of(thinking) == other
    assert agent.fields["note"] == other
    assert call.args == (text, other) and call.fields["cmd"] == text and call.result is not None
    assert call.result.kind == "running"
    assert read.result is not None and text_of(read.result) == other
    observed = [e for e in parse(document).events if e.kind == "observation"]
    assert [o.id for o in observed] == ["call_1", "call_3"] or [o.id for o in observed] == ["call_1"]
    assert observed[0].result is not None and text_of(observed[0].result) == text
    assert failed.result is not None
    # An exception's text is kept exactly (only an empty one leaves the type alone).
    assert text_of(failed.result) == (f"RuntimeError: {text}" if text else "RuntimeError")
    assert _problems(document) == []
    assert format_document(parse(document)) == document


def test_a_session_reads_like_the_seeds() -> None:
    out = io.StringIO()
    with Writer(out, HEADER) as log:
        log.user("Fix the login bug.", step=1)
        log.agent("Looking now.", step=2)
        log.call("read", "src/auth.rs", id="call_1", step=3).finish("186 lines")
    assert out.getvalue().splitlines()[6:] == [
        "@start id=sess_1",
        "u: Fix the login bug. step=1",
        "a: Looking now. step=2",
        "t:read src/auth.rs id=call_1 step=3 → 186 lines",
        "# redactions=0",
        "@end",
    ]


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("header", [{"repo_sha": "215db51"}, {"id": "", "repo_sha": "x"}, {"id": "s"}])
def test_a_header_without_id_or_repo_sha_is_refused_before_anything_is_written(
    tmp_path: Path, header: dict[str, str]
) -> None:
    path = tmp_path / "s.bbox"
    with pytest.raises(ValueError, match="non-empty"):
        Writer(path, header)
    assert not path.exists()


def test_writing_after_close_is_reported_once(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    log = Writer(path, HEADER)
    log.agent("done")
    log.close()
    before = path.read_text()
    with pytest.warns(WriterWarning, match="after close"):
        log.agent("too late")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reported once: a second write warns no more
        log.agent("later still")
    assert path.read_text() == before
    assert isinstance(log.error, RuntimeError)


def test_a_full_disk_is_reported_once_with_the_path() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    with pytest.warns(WriterWarning, match="/dev/full") as caught:
        log = Writer("/dev/full", HEADER)
        log.agent("lost")
        log.close()
    assert len([w for w in caught if issubclass(w.category, WriterWarning)]) == 1
    assert isinstance(log.error, OSError)


def test_a_closed_stream_keeps_what_was_written() -> None:
    out = io.StringIO()
    log = Writer(out, HEADER, redact=False)
    log.agent("kept")
    written = out.getvalue()
    out.close()
    with pytest.warns(WriterWarning, match="<stream>") as caught:
        log.agent("lost")
        log.agent("lost too")
        log.close()
    assert len(caught) == 1
    assert "a: kept" in written


# -- crash safety ---------------------------------------------------------------------------

_CHILD = """
import sys
from bbox_lark import Writer
log = Writer(sys.argv[1], {"id": "crash", "repo_sha": "215db51"}, redact=False, blobs=None)
n = 0
print("ready", flush=True)
while True:
    n += 1
    log.agent(("line %d " % n) + "x\\n" * 20000)
    log.call("bash", "echo %d" % n).finish("y" * 30000 + "\\n")
"""


def test_a_killed_writer_leaves_every_complete_line_readable(tmp_path: Path) -> None:
    path = tmp_path / "crash.bbox"
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 120
        while (not path.exists() or path.stat().st_size < 2_000_000) and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    data = path.read_bytes()
    complete, _, cut = data.rpartition(b"\n")
    document = parse(complete + b"\n")
    assert document.header.get("id") == "crash"
    events = document.events
    assert len(events) > 10
    assert all(e.kind in ("lifecycle", "agent", "tool") for e in events)
    assert all(text_of(e).startswith("line ") for e in events if e.kind == "agent")
    assert [d for d in document.diagnostics if d.severity != "info"] == []
    # The cut line, if any, is at worst one line: everything before it reads as above.
    whole = parse(data)
    assert [e.raw for e in whole.events[:-1]] == [e.raw for e in events[: len(whole.events) - 1]]
    print(f"{len(events)} complete events, {len(cut)} bytes cut")


# -- threads --------------------------------------------------------------------------------


def test_parallel_tool_calls_from_threads(tmp_path: Path) -> None:
    path = tmp_path / "threads.bbox"
    log = Writer(path, HEADER, auto_step=True)

    def worker(n: int) -> None:
        for i in range(40):
            call = log.call("bash", f"job {n}.{i}", tid=f"t{n}")
            if i % 3 == 0:
                call.progress(f"{n}.{i} half way")
            call.finish(f"done {n}.{i}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log.close()
    text = path.read_text()
    assert _problems(text) == []
    document = parse(text)
    results: dict[str, str] = {}
    calls: dict[str, str] = {}
    for event in document.events:
        if event.kind == "tool":
            calls[event.id or ""] = str(event.args[0])
        if event.result is not None and event.result.kind == "text":
            results[event.id or ""] = text_of(event.result)
    assert len(calls) == 240 and len(set(calls)) == 240
    assert {calls[i].replace("job", "done") for i in calls} == set(results.values())
    assert all(results[i] == calls[i].replace("job", "done") for i in calls)


# -- redaction ------------------------------------------------------------------------------


def test_secrets_are_redacted_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    with Writer(path, {**HEADER, "slug": f"key {SECRET}"}) as log:
        log.user(f"my key is {SECRET}")
        log.call("bash", f"export KEY={SECRET}", env=SECRET).finish(f"ANTHROPIC_API_KEY={SECRET}")
        log.call("bash", "env").finish(RuntimeError(f"bad key {SECRET}"))
        log.comment(f"note {SECRET}")
    text = path.read_text()
    assert SECRET not in text
    assert text.count("[redacted:anthropic_key]") == 7
    assert "# redactions=6" in text  # the header's marker is not a body line
    assert _problems(text) == []
    assert [d.code for d in check(text) if d.code == "W018"] == []


def test_redact_false_writes_text_as_given() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        log.agent(f"key {SECRET}")
    assert SECRET in out.getvalue() and "# redactions" not in out.getvalue()


# -- blobs ----------------------------------------------------------------------------------


def test_big_results_arguments_and_bytes_go_to_the_blob_store(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    big = "line\n" * DEFAULT_BLOB_THRESHOLD
    with Writer(path, HEADER) as log:
        log.call("write", big, content=big).finish(big)
        log.call("screenshot").finish(b"\x89PNG\r\n\x1a\n")
        pointer = log.blob(b"raw", mime="application/octet-stream")
        assert pointer is not None
        log.call("upload", pointer).finish(pointer)
    folder = tmp_path / ".bbox-blobs"
    text = path.read_text()
    assert big not in text
    assert _problems(text, path=path) == []
    write, shot, upload = _events(text)
    assert write.result is not None and write.result.kind == "blob"
    assert text_of(write.result, blobs=folder) == big
    assert write.args[0] == write.fields["content"] == write.result.text  # the same blob
    assert str(write.args[0]).startswith("@blob sha256=")
    assert text_of(str(write.args[0]), blobs=folder) == text_of(write.fields["content"], blobs=folder) == big
    # The argument's pointer is a pointer on the line: check verifies it too.
    (folder / (write.result.blob.sha256 or "")).write_text("changed")  # type: ignore[union-attr]
    assert [d.line for d in check(text, path=path) if d.code == "E014"] == [write.line] * 3
    (folder / (write.result.blob.sha256 or "")).write_text(big)  # type: ignore[union-attr]
    assert shot.result is not None and shot.result.blob is not None
    assert (folder / (shot.result.blob.sha256 or "")).read_bytes() == b"\x89PNG\r\n\x1a\n"
    assert upload.result is not None and upload.result.blob is not None
    assert upload.result.blob.mime == "application/octet-stream"
    # A blob that changes is caught by check.
    (folder / (shot.result.blob.sha256 or "")).write_bytes(b"changed")
    assert "E014" in {d.code for d in check(text, path=path)}


# -- steps, time, lifecycle, appending ------------------------------------------------------


def test_auto_step_and_clock(tmp_path: Path) -> None:
    now = [datetime(2025, 1, 1, tzinfo=UTC)]

    def clock() -> datetime:
        now[0] += timedelta(seconds=40)
        return now[0]

    out = io.StringIO()
    with Writer(out, HEADER, auto_step=True, clock=clock, redact=False) as log:
        log.user("go")
        log.agent("ok")
        log.call("read", "a").finish("x")
        log.metrics(prompt_tokens=10)
    text = out.getvalue()
    assert _problems(text) == []
    events = _events(text)
    assert [e.step for e in events] == [1, 2, 3]
    assert all(e.ts is not None for e in events)
    marks = [e for e in parse(text).events if e.kind == "comment" and e.name == "elapsed"]
    assert len(marks) >= 2


def test_appending_after_rotate_writes_no_second_header(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    with Writer(path, HEADER, end=False) as log:
        log.agent("part one")
        log.lifecycle("rotate")
    with Writer(path, HEADER, start=False) as log:
        log.agent("part two")
    text = path.read_text()
    assert text.count("---\n") == 2
    assert [text_of(e) for e in _events(text)] == ["part one", "part two"]


def test_appending_keeps_ids_unique_and_steps_going_on(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    with Writer(path, HEADER, auto_step=True, end=False) as log:
        log.call("read", "a.rs").finish()
        log.call("read", "b.rs", id="call_2").finish()
        log.lifecycle("rotate")
    with Writer(path, HEADER, auto_step=True, start=False) as log:
        log.call("read", "c.rs").finish()
        log.agent("done")
    events = [e for e in _events(path.read_text()) if e.kind in ("tool", "agent")]
    ids = [e.id for e in events if e.kind == "tool"]
    assert ids == ["call_1", "call_2", "call_3"]
    assert [e.step for e in events] == [1, 2, 3, 4]


def test_bytes_and_exceptions_without_a_blob_store_read_back_exactly() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        log.call("read", "x").finish(b"\xff\xfe ok")
        log.call("run").finish(RuntimeError("bad:  "))
        log.call("run").finish(ValueError())
    results = [e.result for e in _events(out.getvalue()) if e.kind == "tool"]
    assert text_of(results[0]).encode("utf-8", "surrogateescape") == b"\xff\xfe ok"
    assert text_of(results[1]) == "RuntimeError: bad:  "
    assert text_of(results[2]) == "ValueError"


def test_call_ids_are_unique_even_when_some_are_given() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        log.call("a", id="call_2").finish()
        log.call("b").finish()
        log.call("c").finish()
    ids = [e.id for e in _events(out.getvalue())]
    assert ids == ["call_2", "call_1", "call_3"]


def test_other_call_kinds_and_progress() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        sub = log.subagent("explore", "where is auth?")
        log.agent("waiting")
        sub.finish("auth is in src/auth.rs")
        question = log.question("Keep the old API?")
        question.finish(build.result("selected", choices=["yes"]))
        log.mcp("github.issues", q="login bug").finish("2 issues")
        long = log.call("test", "cargo test")
        long.progress("64/128 passed")
        long.finish("[ok] is text here")
    text = out.getvalue()
    assert _problems(text) == []
    lines = text.splitlines()
    assert any(line.startswith("x:explore") and line.endswith("[launched]") for line in lines)
    assert any(line.startswith("c:github.issues") for line in lines)


def test_a_file_cut_anywhere_keeps_every_complete_line(tmp_path: Path) -> None:
    """What a kill can leave: the file cut at any byte. Every line before the cut reads as
    it did in the whole file; only the cut line differs."""
    path = tmp_path / "s.bbox"
    with Writer(path, HEADER, redact=False) as log:
        log.user("Fix it.\nPlease.")
        call = log.call("read", "src/a.rs")
        log.agent("map a → b")
        call.finish("186 lines")
    data = path.read_bytes()
    whole = parse(data).lines
    for cut in range(data.index(b"@start"), len(data), 7):
        lines = parse(data[:cut]).lines
        complete = data[:cut].count(b"\n") - len(parse(data).header_lines)
        assert [n.raw for n in lines[:complete]] == [n.raw for n in whole[:complete]]


def test_progress_of_a_subagent_is_an_open_observation() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        sub = log.subagent("explore", "where is auth?")
        sub.progress("read 3 files")
        sub.finish("auth is in src/auth.rs")
        with log.call("bash", "make") as call:
            call.progress("compiling")
        try:
            with log.call("bash", "make test"):
                raise ValueError("2 tests failed")
        except ValueError:
            pass
    text = out.getvalue()
    assert _problems(text) == []
    assert text.splitlines()[7:-1] == [
        'x:explore "where is auth?" id=call_1 → [launched]',
        'o: "read 3 files" id=call_1 → [running]',
        "o: id=call_1 → auth is in src/auth.rs",
        "t:bash make id=call_2 → [running]",
        "t~:bash compiling id=call_2",
        "o: id=call_2 → [ok]",
        't:bash "make test" id=call_3 → [err: ValueError: 2 tests failed]',
    ]


# -- redactions counted from the scan's matches (issue "Core v4", point 2) ---------------------

_PIECES = st.sampled_from(
    [
        SECRET,
        "Xk9mQ2vL7pR4tZ8wN3bY6cF1",
        "token=",
        "password ",
        "Bearer ",
        "[redacted:api_key]",
        "[redacted:",
        "[redacted:a b]",
        "[redacted:x\x01y]",
        "]",
        "[",
        " ",
        "\n",
        "→",
        "word",
    ]
)
_VALUES = st.lists(_PIECES, max_size=6).map("".join)


@fuzz_settings(200)
@given(st.lists(st.tuples(st.sampled_from(["", "api_key=", "token="]), _VALUES), min_size=1, max_size=4))
def test_markers_counted_from_the_scan_equal_the_markers_written(parts: list[tuple[str, str]]) -> None:
    """markers_of (the scan's own count, plus the caller's markers) equals counting the
    markers in each value as written, a name's replaced characters included."""
    from bbox_lark.write.values import NAME_UNSAFE, count_markers, markers_of, scan_counted, scanned

    written, put = scan_counted(parts)
    assert written == scanned(parts)
    for (_, given_text), text, n in zip(parts, written, put, strict=True):
        assert markers_of(given_text, n, text) == count_markers(text)
        name = NAME_UNSAFE.sub("_", text) or "_"
        counted = markers_of(given_text, n, text) if "[redacted:" not in given_text else count_markers(name)
        assert counted == count_markers(name)


def test_every_secret_kind_makes_one_whole_marker() -> None:
    """markers_of counts one marker a match: each kind's marker is read back as one marker."""
    from bbox_lark.secrets.scanner import PATTERNS, marker
    from bbox_lark.write.values import count_markers

    for row in PATTERNS:
        assert count_markers(marker(row.kind)) == 1
        assert count_markers(f"a{marker(row.kind)}{marker(row.kind)}]b") == 2
