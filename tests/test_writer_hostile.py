"""The Writer never loses or changes what it was given (issue 26 point 1, DECISIONS §12, §13).

Each find of the hostile campaign is a case here; a property test runs every Writer method
with every argument position drawn from a hostile alphabet and reads everything back
exactly, with ``check --strict`` clean and ``fmt`` changing nothing. Durability (issue 32):
after each call, a second handle on the file sees the line, for every target kind. A writer
killed in the middle of a line leaves a file that reads.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from printer_support import fuzz_settings
from test_any_text import texts

from bbox_lark import Writer, build, check, compute_stats, parse, text_of
from bbox_lark.syntax.nodes import Event
from bbox_lark.syntax.printer import format_document
from bbox_lark.write.writer import WriterWarning

HEADER = {"id": "sess_h", "repo_sha": "215db51", "runner": "tests"}
SECRET = "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0" * 4 + "AA"  # made up, in the scanner's shape


def _strict(text: str, **options: Any) -> list[str]:
    return [d.format() for d in check(text, **options) if d.severity != "info"]


def _body(text: str) -> list[Event]:
    return [e for e in parse(text).events if not (e.kind == "lifecycle" and e.name in ("start", "end"))]


def _write(make: Callable[[Writer], None], **options: Any) -> str:
    out = io.StringIO()
    with Writer(out, HEADER, **{"redact": False, **options}) as log:
        make(log)
    return out.getvalue()


# -- the finds ------------------------------------------------------------------------------

CALL_KINDS = ["call", "mcp", "subagent", "skill", "plan"]


@pytest.mark.parametrize("value", ["[a]b", "[ok]y", "[a", "[redacted:x]", "[a, b]", "[]"])
@pytest.mark.parametrize(
    "method", [*CALL_KINDS, "question", "lifecycle", "user", "agent", "thinking", "metrics"]
)
def test_a_field_value_reads_back_on_every_line_kind(method: str, value: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", WriterWarning)  # nothing is dropped or rewritten

        def make(log: Writer) -> None:
            if method in CALL_KINDS:
                getattr(log, method)("name", "arg", k=value).finish("done")
            elif method == "question":
                log.question("arg", k=value).finish("done")
            elif method == "lifecycle":
                log.lifecycle("checkpoint", "arg", k=value)
            elif method == "metrics":
                log.metrics(k=value)
            else:
                getattr(log, method)("hello", k=value)

        text = _write(make)
    (event,) = [e for e in _body(text) if "k" in e.fields]
    assert event.fields["k"] == value
    if method in ("user", "agent", "thinking"):
        assert text_of(event) == "hello"
    elif method != "metrics":
        assert event.args == ("arg",)
    assert _strict(text) == []


def test_build_call_takes_any_field_value() -> None:
    node = build.call("tool", "read", ["a"], fields={"k": "[a]b", "j": "[ok]y"})
    again = parse(node.raw).events[0]
    assert again.fields == {"k": "[a]b", "j": "[ok]y"}


@pytest.mark.parametrize(
    "text", ['"a\nb"', '""', '"', "metrics cost_usd=5", "redactions=3", "t=00:01:00", "model: x", "", " x "]
)
def test_a_comment_reads_back_and_never_changes_the_line_kind(text: str) -> None:
    document = _write(lambda log: log.comment(text), redact=True)
    (comment,) = [e for e in parse(document).events if e.kind == "comment" and e.name != "redactions"]
    assert comment.name is None
    assert text_of(comment) == text
    assert _strict(document) == []
    assert compute_stats(parse(document)).metrics.seen == 0


def test_a_metrics_comment_is_not_counted_by_stats() -> None:
    plain = compute_stats(parse(_write(lambda log: log.comment("metrics cost_usd=5 prompt_tokens=9"))))
    real = compute_stats(parse(_write(lambda log: log.metrics(cost_usd=5, prompt_tokens=9))))
    assert real.metrics.seen == 1 and real.cost.stated == 5
    assert plain.metrics.seen == 0 and plain.cost.stated is None


@pytest.mark.parametrize(
    "method", ["user", "agent", "thinking", "comment", "todos", "error", "result", "arg"]
)
def test_text_too_long_for_a_line_goes_to_the_blob_store(tmp_path: Path, method: str) -> None:
    path = tmp_path / "big.bbox"
    text = "a line of text → with [brackets] and key=value\n" * 32_000  # 1.5 MB
    with Writer(path, HEADER, redact=False) as log:
        if method == "comment":
            log.comment(text)
        elif method == "error":
            log.call("bash").finish(RuntimeError(text))
        elif method == "result":
            log.call("bash").finish(text)
        elif method == "arg":
            log.call("bash", text).finish()
        else:
            getattr(log, method)(text)
    document = path.read_text()
    assert max(len(line) for line in document.splitlines()) < 2000
    assert _strict(document, path=path) == []
    (event,) = _body(document)
    blobs = tmp_path / ".bbox-blobs"
    if method in ("error", "result"):
        assert event.result is not None
        assert text_of(event.result, blobs=blobs) == (f"RuntimeError: {text}" if method == "error" else text)
    elif method == "arg":
        assert text_of(event.args[0], blobs=blobs) == text
    else:
        assert text_of(event, blobs=blobs) == text


@pytest.mark.parametrize(
    "text", ["a\ud800b" * 3000, "\udfff" * 5000, "x\ud83c\udf89" * 2500, "\udc80é" * 3000]
)
def test_a_surrogate_in_text_stored_as_a_blob_reads_back(tmp_path: Path, text: str) -> None:
    path = tmp_path / "s.bbox"
    with Writer(path, HEADER, redact=False) as log:
        log.call("bash", text, k=text).finish(text)
    (event,) = _body(path.read_text())
    blobs = tmp_path / ".bbox-blobs"
    assert event.result is not None and event.result.kind == "blob"
    assert text_of(event.result, blobs=blobs) == text
    assert text_of(event.args[0], blobs=blobs) == text
    assert text_of(event.fields["k"], blobs=blobs) == text
    assert _strict(path.read_text(), path=path) == []


@pytest.mark.parametrize("value", ["a\x85b", "a\u2028b", "a\u2029b", "\x85", "x\ud800\x85", "  a \t"])
def test_a_header_value_reads_back(value: str) -> None:
    header = {**HEADER, "note": value, "extra": {"list": [value], "map": {"k": value}}}
    out = io.StringIO()
    Writer(out, header, redact=False).close()
    parsed = parse(out.getvalue()).header
    assert parsed["note"] == value
    assert parsed["extra"] == {"list": [value], "map": {"k": value}}
    assert _strict(out.getvalue()) == []


def test_a_header_over_64_kib_is_refused_at_the_call(tmp_path: Path) -> None:
    path = tmp_path / "h.bbox"
    with pytest.raises(ValueError, match="over bbox/1's limit of 65536"):
        Writer(path, {**HEADER, "note": "n" * 70_000})
    assert not path.exists() or path.read_text() == ""


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda log: log.agent(None), "agent() text"),
        (lambda log: log.user(b"bytes"), "user() text"),
        (lambda log: log.comment(3), "comment() text"),
        (lambda log: log.call(None), "call() tool"),
        (lambda log: log.call("read", object()), "call() argument 1"),
        (lambda log: log.call("read", "a", k=object()), "call() field 'k'"),
        (lambda log: log.call("read", ["a", object()]), "call() argument 1 item 2"),
        (lambda log: log.call("read").finish(object()), "finish() result"),
        (lambda log: log.call("read").finish({"a": object()}), "finish() result"),
        (lambda log: log.metrics(step="3"), "metrics() step"),
        (lambda log: log.lifecycle(None), "lifecycle() name"),
        (lambda log: log.todos(3), "todos() items"),
        (lambda log: log.todos([("a",)]), "todos() item 1"),
        (lambda log: log.call("read").progress(None), "progress() text"),
        (lambda log: log.blob(3), "blob() data"),
    ],
)
def test_a_wrong_type_is_a_type_error_naming_the_argument(call: Callable[[Writer], None], named: str) -> None:
    out = io.StringIO()
    log = Writer(out, HEADER)
    with pytest.raises(TypeError, match=re.escape(named)):
        call(log)
    log.close()
    # Nothing of the refused call was written (a call whose finish() was refused stays open).
    assert [d.code for d in check(out.getvalue()) if d.severity == "error"] == []


def test_a_wrong_header_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="header\\['when'\\]"):
        Writer(io.StringIO(), {**HEADER, "when": object()})
    with pytest.raises(TypeError, match="header must be a mapping"):
        Writer(io.StringIO(), [("id", "x")])  # type: ignore[arg-type]


def test_finish_of_a_mapping_or_a_list_writes_json() -> None:
    value = {"a": [1, "→ x"], "b": None, "c": "[ok]"}
    text = _write(lambda log: (log.call("x").finish(value), log.call("y").finish([1, 2])))
    first, second = _body(text)
    assert first.result is not None and json.loads(text_of(first.result)) == value
    assert second.result is not None and text_of(second.result) == "[1, 2]"


def test_the_first_elapsed_mark_follows_start() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    text = _write(lambda log: log.user("hi"), clock=lambda: now)
    body = text.split("---\n")[-1].splitlines()
    assert body[0].startswith("@start") and body[1] == "# t=00:00:00"
    assert _strict(text) == []


def test_end_then_close_writes_one_end() -> None:
    text = _write(lambda log: (log.user("hi"), log.lifecycle("end", cost="0.5")), redact=True)
    assert text.count("@end") == 1
    assert text.splitlines()[-2:] == ["# redactions=0", "@end cost=0.5"]
    assert _strict(text) == []


def test_appending_to_a_crashed_session_continues_it(tmp_path: Path) -> None:
    path = tmp_path / "crashed.bbox"
    log = Writer(path, HEADER, auto_step=True, clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))
    log.user(f"key {SECRET}")
    log.call("read", "a.rs").finish("ok")
    log._file.write(b"t:read b.rs id=call_9 \xe2\x86")  # the crash: a line cut in the middle
    log._file.close()
    later = iter(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=s) for s in range(100, 10_000, 100))
    with Writer(path, HEADER, auto_step=True, clock=lambda: next(later)) as log:
        log.agent("resumed")
        log.call("read", "c.rs").finish("ok")
    data = path.read_bytes()
    assert data.count(b"@start") == 1 and data.count(b"---\n") == 2
    document = parse(data)
    events = [e for e in document.events if e.kind in ("user", "agent", "tool")]
    assert [(e.kind, e.step) for e in events] == [
        ("user", 1),
        ("tool", 2),
        ("tool", None),
        ("agent", 3),
        ("tool", 4),
    ]
    assert [e.id for e in events if e.kind == "tool"] == ["call_1", "call_9", "call_2"]
    codes = {d.code for d in document.diagnostics} | {d.code for d in check(data)}
    assert "W018" not in codes and "W020" not in codes  # the count covers the whole body
    marks = [e.text for e in document.events if e.kind == "comment" and e.name == "elapsed"]
    assert marks == sorted(marks) and len(marks) >= 2


# -- every method, every argument position ---------------------------------------------------

HOSTILE = [
    "[a]b", "[ok]y", "[ok]", "[a", "a]", "[x, y]", "→", "->", " -> ", '"', '""', '"a\nb"', "key=value",
    "a=b c=d", " # metrics ", "# metrics cost_usd=5", "metrics cost_usd=5", "redactions=3",
    "t=00:01:00", "model: x", "\x00", "\r", "\r\n", "\x1b[31m", "\ud800", "\udfff", "\ud83c\udf89",
    "\udc80", "\x85", "\u2028", "\u2029", "[redacted:x]", "[redacted:a\nb]", "[redacted:a\tb]",
    "[redacted:", "@blob", "\\u{41}", "\\", "\t", " ", "", "#", "---", "ünï 🎉", "\u00a0", "x" * 300,
]  # fmt: skip
hostile = st.one_of(
    st.lists(st.sampled_from(HOSTILE) | st.text(max_size=4), max_size=5).map("".join),
    texts,
)
KEYS = st.sampled_from(["k", "note", "path", "cmd", "q", "x.y", "a-b", "_u", "extra.v"])
scalar = st.one_of(hostile, st.integers(-(10**20), 10**20), st.booleans(), st.floats(allow_nan=False))
field_values = st.one_of(scalar, st.lists(hostile, max_size=3))
fields = st.dictionaries(KEYS, field_values, max_size=3)
args = st.lists(st.one_of(hostile, st.lists(hostile, max_size=3)), max_size=3)
results = st.one_of(
    hostile,
    st.none(),
    hostile.map(lambda t: RuntimeError(t)),
    st.binary(max_size=40),
    st.dictionaries(st.text(max_size=5), hostile, max_size=2),
    st.integers(),
)
names = st.lists(st.sampled_from(HOSTILE) | st.text(max_size=4), min_size=1, max_size=3).map("".join)
PRIMITIVES = ["checkpoint", "pause", "resume", "assess", "notify", "wait", "escalate", "batch", "snapshot"]
ops = st.one_of(
    st.tuples(st.just("message"), st.sampled_from(["user", "agent", "thinking"]), hostile, fields),
    st.tuples(
        st.just("todos"), st.lists(st.tuples(st.sampled_from(["pending", "done"]), hostile), max_size=3)
    ),
    st.tuples(st.just("call"), st.sampled_from([*CALL_KINDS, "question"]), names, args, fields, results),
    st.tuples(st.just("later"), st.sampled_from([*CALL_KINDS, "question"]), names, args, hostile, results),
    st.tuples(st.just("metrics"), fields),
    st.tuples(st.just("lifecycle"), st.sampled_from(PRIMITIVES), args, fields),
    st.tuples(st.just("comment"), hostile),
)
THRESHOLD = 200
_NAME_UNSAFE = re.compile(r"[\s→\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]|@(?=blob)")
_KINDS = {
    "call": "tool",
    "mcp": "mcp",
    "subagent": "subagent",
    "skill": "skill",
    "plan": "plan",
    "question": "question",
}


def _field_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return [_field_text(v) for v in value]
    return value


def _read(value: Any, blobs: Path) -> Any:
    return (
        [_read(v, blobs) for v in value] if isinstance(value, list | tuple) else text_of(value, blobs=blobs)
    )


def _check_fields(event: Event, given: dict[str, Any], blobs: Path, *, skip: tuple[str, ...] = ()) -> None:
    got = {k: _read(v, blobs) for k, v in event.fields.items() if k not in skip}
    assert got == {k: _field_text(v) for k, v in given.items()}


def _check_args(event: Event, given: list[Any], blobs: Path) -> None:
    assert [_read(list(a) if isinstance(a, tuple) else a, blobs) for a in event.args] == given


def _check_result(event: Event, given: Any, blobs: Path) -> None:
    result = event.result
    assert result is not None
    if given is None:
        assert result.kind == "ok"
    elif isinstance(given, BaseException):
        assert text_of(result, blobs=blobs) == (f"RuntimeError: {given}" if str(given) else "RuntimeError")
    elif isinstance(given, bytes):
        assert result.kind == "blob"
        assert text_of(result, blobs=blobs).encode("utf-8", "surrogateescape") == given
    elif isinstance(given, dict):
        assert json.loads(text_of(result, blobs=blobs)) == given
    else:
        assert text_of(result, blobs=blobs) == str(given)


def _run(log: Writer, op: tuple[Any, ...]) -> list[Callable[[Event], None]]:
    """Do ``op``; return a check for each event it writes, in order."""
    blobs = log.blobs.folder if log.blobs is not None else Path(".")
    what = op[0]
    if what == "message":
        _, kind, text, given = op
        getattr(log, kind)(text, **given)

        def message(e: Event) -> None:
            assert e.kind == kind and text_of(e, blobs=blobs) == text
            _check_fields(e, given, blobs)

        return [message]
    if what == "todos":
        _, items = op
        log.todos(items)
        expected = " ".join(f"[{s}] {t}" for s, t in items)

        def todos(e: Event) -> None:
            assert e.kind == "todos" and text_of(e, blobs=blobs) == expected

        return [todos]
    if what in ("call", "later"):
        _, method, name, given_args, extra, result = op
        kind = _KINDS[method]
        given = extra if what == "call" else {}
        if method == "question":
            handle = log.question(*given_args, **given)
        else:
            handle = getattr(log, method)(name, *given_args, **given)

        def call_line(e: Event) -> None:
            assert e.kind == kind and e.id == handle.id
            if method != "question":
                assert e.name == (_NAME_UNSAFE.sub("_", name) or "_")
            _check_args(e, given_args, blobs)
            _check_fields(e, given, blobs, skip=("id",))

        if what == "call":
            handle.finish(result)

            def inline(e: Event) -> None:
                call_line(e)
                _check_result(e, result, blobs)

            return [inline]
        handle.progress(extra)

        def progress(e: Event) -> None:
            assert e.id == handle.id
            assert [_read(a, blobs) for a in e.args] == ([extra] if extra else [])

        def observed(e: Event) -> None:
            assert e.kind == "observation" and e.id == handle.id
            _check_result(e, result, blobs)

        handle.finish(result)
        return [call_line, progress, observed]
    if what == "metrics":
        _, given = op
        log.metrics(**given)

        def metrics(e: Event) -> None:
            assert e.kind == "comment" and e.name == "metrics"
            _check_fields(e, given, blobs)

        return [metrics]
    if what == "lifecycle":
        _, primitive, given_args, given = op
        log.lifecycle(primitive, *given_args, **given)

        def lifecycle(e: Event) -> None:
            assert e.kind == "lifecycle" and e.name == primitive
            _check_args(e, given_args, blobs)
            _check_fields(e, given, blobs)

        return [lifecycle]
    _, text = op
    log.comment(text)

    def comment(e: Event) -> None:
        assert e.kind == "comment" and e.name is None and text_of(e, blobs=blobs) == text

    return [comment]


@fuzz_settings(120)
@given(st.lists(ops, min_size=1, max_size=6), hostile)
def test_every_method_and_argument_reads_back_exactly(sequence: list[tuple[Any, ...]], note: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.bbox"
        checks: list[Callable[[Event], None]] = []
        header = {**HEADER, "note": note, "extra": {"list": [note]}}
        with warnings.catch_warnings():
            warnings.simplefilter("error", WriterWarning)
            with Writer(path, header, redact=False, blob_threshold=THRESHOLD) as log:
                for op in sequence:
                    checks += _run(log, op)
        text = path.read_text(encoding="utf-8")
        document = parse(text)
        assert document.header["note"] == note and document.header["extra"] == {"list": [note]}
        events = _body(text)
        # Each call's `id=` from the Writer, each text as given.
        assert len(events) == len(checks), [e.raw[:80] for e in events]
        for event, expect in zip(events, checks, strict=True):
            expect(event)
        assert _strict(text, path=path) == []
        assert format_document(document) == text


@fuzz_settings(60)
@given(st.lists(ops, min_size=1, max_size=5))
def test_redacting_writes_a_true_count_and_a_clean_log(sequence: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.bbox"
        with Writer(path, HEADER, blob_threshold=THRESHOLD) as log:
            log.user(f"token {SECRET}", api_key=SECRET)
            for op in sequence:
                _run(log, op)
        text = path.read_text(encoding="utf-8")
        assert SECRET not in text
        assert _strict(text, path=path) == []


# -- secrets in field values and arguments (DECISIONS §13) ------------------------------------

GENERIC = "Xk9mQ2vL7pR4tZ8wN3bY6cF1"  # random-looking: a secret next to a secret-ish name


@pytest.mark.parametrize(
    "make",
    [
        lambda log: log.call("curl", "-H", "Authorization:", "Bearer", GENERIC).finish(),
        lambda log: log.call("login", password=GENERIC).finish(),
        lambda log: log.call("env", api_key=[GENERIC]).finish(),
        lambda log: log.agent("using it", api_key=GENERIC),
        lambda log: log.metrics(secret_token=GENERIC),
        lambda log: log.lifecycle("checkpoint", password=GENERIC),
        lambda log: log.call("read").finish(ValueError(f"password={GENERIC}")),
        lambda log: log.call("x", SECRET).finish(),
        lambda log: log.call("x", k=f"key:{SECRET}").finish(),
        lambda log: log.call(SECRET).finish(),
        lambda log: log.lifecycle(SECRET),
        lambda log: log.call("x", **{SECRET: 1}).finish(),
    ],
)
def test_field_values_and_arguments_are_scanned_with_their_context(make: Callable[[Writer], None]) -> None:
    out = io.StringIO()
    with Writer(out, HEADER) as log:
        make(log)
    text = out.getvalue()
    assert GENERIC not in text and SECRET not in text
    assert "W018" not in {d.code for d in check(text)}
    assert [d.code for d in check(text) if d.code.startswith("S")] == []


# -- durability: a second handle sees every line ----------------------------------------------


def _targets(tmp_path: Path) -> dict[str, Callable[[], tuple[Any, Callable[[], bytes], Callable[[], None]]]]:
    path = tmp_path / "d.bbox"

    def reader() -> bytes:
        return path.read_bytes()

    def as_path() -> tuple[Any, Callable[[], bytes], Callable[[], None]]:
        return path, reader, lambda: None

    def text_file() -> tuple[Any, Callable[[], bytes], Callable[[], None]]:
        stream = open(path, "w", encoding="utf-8")  # noqa: SIM115 (buffered: only flush shows a line)
        return stream, reader, stream.close

    def binary_file() -> tuple[Any, Callable[[], bytes], Callable[[], None]]:
        stream = open(path, "wb")  # noqa: SIM115
        return stream, reader, stream.close

    def pipe() -> tuple[Any, Callable[[], bytes], Callable[[], None]]:
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        stream = os.fdopen(write_end, "w", encoding="utf-8")
        got = bytearray()

        def drain() -> bytes:
            while True:
                try:
                    chunk = os.read(read_end, 1 << 16)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                got.extend(chunk)
            return bytes(got)

        def done() -> None:
            stream.close()
            os.close(read_end)

        return stream, drain, done

    def fifo() -> tuple[Any, Callable[[], bytes], Callable[[], None]]:
        name = tmp_path / "fifo"
        os.mkfifo(name)
        read_end = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
        got = bytearray()

        def drain() -> bytes:
            while True:
                try:
                    chunk = os.read(read_end, 1 << 16)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                got.extend(chunk)
            return bytes(got)

        return name, drain, lambda: os.close(read_end)

    return {"path": as_path, "text-file": text_file, "binary-file": binary_file, "pipe": pipe, "fifo": fifo}


@pytest.mark.parametrize("kind", ["path", "text-file", "binary-file", "pipe", "fifo"])
def test_every_line_is_on_the_target_after_each_call(tmp_path: Path, kind: str) -> None:
    target, read, done = _targets(tmp_path)[kind]()
    try:
        log = Writer(target, HEADER, blobs=tmp_path / "blobs")
        assert read().endswith(b"@start id=sess_h\n")
        steps: list[tuple[Callable[[], Any], bytes]] = [
            (lambda: log.user("one"), b"u: one\n"),
            (
                lambda: log.call("read", "a.rs").finish("3 lines"),
                b"t:read a.rs id=call_1 \xe2\x86\x92 3 lines\n",
            ),
            (lambda: log.comment("note"), b"# note\n"),
            (lambda: log.metrics(prompt_tokens=3), b"# metrics prompt_tokens=3\n"),
            (lambda: log.lifecycle("checkpoint"), b"@checkpoint\n"),
        ]
        for action, line in steps:
            action()
            assert read().endswith(line), (kind, line)
        log.close()
        assert read().endswith(b"# redactions=0\n@end\n")
        assert _strict(read().decode()) == []
    finally:
        done()


# -- a writer killed in the middle of a line --------------------------------------------------

_CHILD = r"""
import sys, time
from bbox_lark import Writer

class Slow:
    '''A file whose writes are short (as a raw write may be), one small piece at a time.'''
    def __init__(self, file):
        self.file = file
    def write(self, data):
        piece = bytes(data[:4096])
        self.file.write(piece)
        if len(data) > 100_000:
            time.sleep(0.002)
        return len(piece)
    def fileno(self):
        return self.file.fileno()
    def close(self):
        self.file.close()

log = Writer(sys.argv[1], {"id": "crash", "repo_sha": "215db51"}, redact=False)
for n in range(20):
    log.agent(f"line {n}", step=n)
log._file = Slow(log._file)
print("ready", flush=True)
log.agent("huge " + "word " * 150_000)   # 750 kB in one line: killed half way
print("finished", flush=True)
"""


def test_a_writer_killed_in_the_middle_of_a_line_leaves_a_readable_file(tmp_path: Path) -> None:
    path = tmp_path / "crash.bbox"
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        complete = path.stat().st_size
        deadline = time.monotonic() + 300
        while path.stat().st_size < complete + 100_000 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    data = path.read_bytes()
    assert complete + 100_000 <= len(data) < complete + 750_000  # cut inside the huge line
    assert not data.endswith(b"\n")
    whole = parse(data)  # never raises
    agents = [e for e in whole.events if e.kind == "agent"]
    assert [text_of(e) for e in agents[:20]] == [f"line {n}" for n in range(20)]
    assert [e.step for e in agents[:20]] == list(range(20))
    assert parse(data[: data.rindex(b"\n") + 1]).diagnostics == parse(data[:complete]).diagnostics
    # Appending continues the session on a line of its own.
    with Writer(path, {"id": "crash", "repo_sha": "215db51"}) as log:
        log.agent("after the crash")
    again = parse(path.read_bytes())
    assert text_of([e for e in again.events if e.kind == "agent"][-1]) == "after the crash"
    assert path.read_bytes().count(b"@start") == 1


def test_lines_from_threads_are_never_interleaved(tmp_path: Path) -> None:
    path = tmp_path / "t.bbox"
    log = Writer(path, HEADER, redact=False)

    def worker(n: int) -> None:
        for i in range(30):
            log.call("bash", f"{n}.{i} [a]b", k=f"[x]{n}").finish(f"→ {n}.{i}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log.close()
    text = path.read_text()
    assert len([e for e in parse(text).events if e.kind == "tool"]) == 120
    assert _strict(text) == []


POINTER = "@blob sha256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 bytes=4"


@pytest.mark.parametrize("method", ["arg", "field", "list", "result", "user", "comment", "error"])
def test_text_that_is_exactly_a_blob_pointer_reads_back(tmp_path: Path, method: str) -> None:
    # Written as is, it would point at a blob that is not there (E013): it is stored instead.
    path = tmp_path / "p.bbox"
    with Writer(path, HEADER, redact=False) as log:
        if method == "arg":
            log.call("x", POINTER).finish()
        elif method == "field":
            log.call("x", k=POINTER).finish()
        elif method == "list":
            log.call("x", ["a", POINTER], k=[POINTER]).finish()
        elif method == "result":
            log.call("x").finish(POINTER)
        elif method == "error":
            log.call("x").finish(RuntimeError(POINTER))
        else:
            getattr(log, method)(POINTER)
    text = path.read_text()
    assert _strict(text, path=path) == []
    (event,) = _body(text)
    blobs = tmp_path / ".bbox-blobs"
    if method == "arg":
        assert text_of(event.args[0], blobs=blobs) == POINTER
    elif method == "field":
        assert text_of(event.fields["k"], blobs=blobs) == POINTER
    elif method == "list":
        assert [text_of(a, blobs=blobs) for a in event.args[0]] == ["a", POINTER]
        assert [text_of(a, blobs=blobs) for a in event.fields["k"]] == [POINTER]
    elif method in ("result", "error"):
        assert event.result is not None
        assert text_of(event.result, blobs=blobs) == (
            POINTER if method == "result" else f"RuntimeError: {POINTER}"
        )
    else:
        assert text_of(event, blobs=blobs) == POINTER
