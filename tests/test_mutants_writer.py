"""The Writer (``bbox_lark/write/writer.py``), pinned down where mutation testing found nothing
holding it: the elapsed marks (every ``mark_every`` seconds, at the boundary, hours and
minutes), the clock's zone, ``blob``'s argument errors, ``fsync`` on a stream, and where a
write failure's warning points: at the caller, from every method (a mutant of the fixed
``stacklevel`` survived because it pointed inside the Writer for most of them; fixed)
(docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import bbox_lark
from bbox_lark import BlobPointer, Writer, build
from bbox_lark.write.writer import WriterWarning

HEADER = {"id": "s", "repo_sha": "abc1234"}
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_mark_every_minute_at_the_boundary_in_hours_minutes_and_seconds() -> None:
    now = [T0]
    out = io.StringIO()
    with Writer(out, HEADER, clock=lambda: now[0], redact=False) as log:
        for seconds in (30, 60, 70, 120, 3600, 3721):
            now[0] = T0 + timedelta(seconds=seconds)
            log.user(f"at {seconds}")
    marks = [line for line in out.getvalue().splitlines() if line.startswith("# t=") or line.startswith("u:")]
    assert [line.split(" ts=")[0] for line in marks] == [
        "# t=00:00:00",
        "u: at 30",
        "# t=00:01:00",
        "u: at 60",
        "u: at 70",
        "# t=00:02:00",
        "u: at 120",
        "# t=01:00:00",
        "u: at 3600",
        "# t=01:02:01",
        "u: at 3721",
    ]


def test_the_writers_own_clock_stamps_utc() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, clock=True) as log:
        log.user("hi")
    (user,) = [e for e in bbox_lark.parse(out.getvalue()).events if e.kind == "user"]
    assert user.ts is not None and user.ts.endswith("Z")


def test_blob_refuses_data_and_mime_of_other_types(tmp_path: Path) -> None:
    log = Writer(io.StringIO(), HEADER, blobs=tmp_path)
    with pytest.raises(TypeError, match=r"^blob\(\) data must be bytes or a str, not int$"):
        log.blob(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^blob\(\) mime must be a str, not int$"):
        log.blob(b"x", mime=5)  # type: ignore[arg-type]
    pointer = log.blob(b"x")
    assert pointer is not None and pointer.mime == "application/octet-stream"


def test_fsync_on_a_stream_syncs_without_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with path.open("w", encoding="utf-8") as stream, Writer(stream, HEADER, fsync=True) as log:
            log.user("hi")
            assert log.error is None
    assert "u: hi" in path.read_text(encoding="utf-8")


class _Full(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError("disk full")


def _full_after_start() -> Writer:
    stream = io.StringIO()
    log = Writer(stream, HEADER)
    stream.write = _Full().write  # type: ignore[method-assign]
    return log


@pytest.mark.parametrize(
    "fail",
    [
        lambda: Writer(_Full(), HEADER),
        lambda: _full_after_start().user("hi"),
        lambda: _full_after_start().call("read", "a.rs").finish("ok"),
        lambda: _full_after_start().comment("note"),
        lambda: _full_after_start().close(),
    ],
)
def test_a_write_failure_warns_at_the_callers_line(fail: Callable[[], object]) -> None:
    with pytest.warns(WriterWarning, match="cannot write <stream>: disk full") as caught:
        fail()
    assert (caught[0].filename, caught[0].lineno) == (__file__, fail.__code__.co_firstlineno)


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ("call", "call() tool"),
        ("mcp", "mcp() method"),
        ("subagent", "subagent() kind"),
        ("skill", "skill() name"),
        ("plan", "plan() action"),
    ],
)
def test_each_call_refuses_a_name_that_is_not_a_string(method: str, message: str) -> None:
    log = Writer(io.StringIO(), HEADER)
    with pytest.raises(TypeError) as raised:
        getattr(log, method)(5)
    assert str(raised.value) == f"{message} must be a str, not int"


SHA_TEXT = "982d9e3eb996f559e633f4d194def3761d909f5a3b647d1a851fead67c32c9d1"  # sha256("text")
SHA_X = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"  # sha256("x")


@pytest.mark.parametrize(
    ("data", "mime", "pointer"),
    [
        (
            "text",
            None,
            BlobPointer(
                f"@blob sha256={SHA_TEXT} bytes=4 mime=text/plain", 0, 0, SHA_TEXT, "4", "text/plain"
            ),
        ),
        (
            "text",
            "text/markdown",
            BlobPointer(
                f"@blob sha256={SHA_TEXT} bytes=4 mime=text/markdown", 0, 0, SHA_TEXT, "4", "text/markdown"
            ),
        ),
        (
            b"x",
            None,
            BlobPointer(
                f"@blob sha256={SHA_X} bytes=1 mime=application/octet-stream",
                0,
                0,
                SHA_X,
                "1",
                "application/octet-stream",
            ),
        ),
        (
            bytearray(b"x"),
            None,
            BlobPointer(
                f"@blob sha256={SHA_X} bytes=1 mime=application/octet-stream",
                0,
                0,
                SHA_X,
                "1",
                "application/octet-stream",
            ),
        ),
        (
            memoryview(b"x"),
            None,
            BlobPointer(
                f"@blob sha256={SHA_X} bytes=1 mime=application/octet-stream",
                0,
                0,
                SHA_X,
                "1",
                "application/octet-stream",
            ),
        ),
    ],
)
def test_blob_gives_the_pointer_of_what_it_stored(
    tmp_path: Path, data: bytes | str, mime: str | None, pointer: BlobPointer
) -> None:
    log = Writer(io.StringIO(), HEADER, blobs=tmp_path)
    assert log.blob(data, mime) == pointer
    assert (tmp_path / pointer.sha256).is_file() or (tmp_path / pointer.sha256[:2] / pointer.sha256).is_file()


# -- what decides the bytes written ------------------------------------------------------------


def _body(out: io.StringIO) -> list[str]:
    """The lines after the header."""
    lines = out.getvalue().splitlines()
    return lines[lines.index("---", 1) + 1 :]


def test_todos_from_pairs_or_a_mapping_write_status_then_text() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        log.todos({"Read auth": "pending", "Fix": "done"})
        log.todos([("pending", "Read auth"), ("done", "Fix")])
        log.todos(pair for pair in [("done", "one")])
        log.todos("[x] as given")
    assert _body(out)[1:-1] == [
        "td: [pending] Read auth [done] Fix",
        "td: [pending] Read auth [done] Fix",
        "td: [done] one",
        "td: [x] as given",
    ]


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (5, "todos() items must be a str, pairs or a mapping, not int"),
        (b"x", "todos() items must be a str, pairs or a mapping, not bytes"),
        ([("a", "b", "c")], "todos() item 1 must be a (status, text) pair of str, not ('a', 'b', 'c')"),
        ([("a", "b"), ("a", 2)], "todos() item 2 must be a (status, text) pair of str, not ('a', 2)"),
        ([["a", "b"]], "todos() item 1 must be a (status, text) pair of str, not ['a', 'b']"),
    ],
)
def test_todos_refuse_items_that_are_not_pairs_of_str(items: object, message: str) -> None:
    log = Writer(io.StringIO(), HEADER)
    with pytest.raises(TypeError) as raised:
        log.todos(items)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_metrics_take_the_current_auto_step_or_the_step_given() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False, auto_step=True) as log:
        log.metrics(prompt_tokens=1)  # no step yet: none written
        log.user("go")
        log.metrics(prompt_tokens=3)
        log.metrics(step=7, prompt_tokens=4)
    assert _body(out)[1:-1] == [
        "# metrics prompt_tokens=1",
        "u: go step=1",
        "# metrics step=1 prompt_tokens=3",
        "# metrics step=7 prompt_tokens=4",
    ]


def test_metrics_without_auto_step_write_no_step_of_their_own() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        log.user("go", step=3)
        log.metrics(prompt_tokens=3)
        log.metrics(step=2, prompt_tokens=4)
    assert _body(out)[1:-1] == [
        "u: go step=3",
        "# metrics prompt_tokens=3",
        "# metrics step=2 prompt_tokens=4",
    ]


@pytest.mark.parametrize(("step", "name"), [("2", "str"), (True, "bool"), (1.0, "float")])
def test_metrics_refuse_a_step_that_is_not_an_int(step: object, name: str) -> None:
    log = Writer(io.StringIO(), HEADER)
    with pytest.raises(TypeError) as raised:
        log.metrics(step=step)  # type: ignore[arg-type]
    assert str(raised.value) == f"metrics() step must be an int or None, not {name}"


_BAD = object()
_NOT_SCALAR = "must be a str, a number, a bool or a path, not object"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda log: log.user("x", k=_BAD), f"user() field 'k' {_NOT_SCALAR}"),
        (lambda log: log.agent("x", k=_BAD), f"agent() field 'k' {_NOT_SCALAR}"),
        (lambda log: log.thinking("x", k=_BAD), f"thinking() field 'k' {_NOT_SCALAR}"),
        (lambda log: log.todos("x", k=_BAD), f"todos() field 'k' {_NOT_SCALAR}"),
        (lambda log: log.call("read", _BAD), f"call() argument 1 {_NOT_SCALAR}"),
        (lambda log: log.call("read", "a", _BAD), f"call() argument 2 {_NOT_SCALAR}"),
        (lambda log: log.call("read", ["a", _BAD]), f"call() argument 1 item 2 {_NOT_SCALAR}"),
        (lambda log: log.call("read", k=[_BAD]), f"call() field 'k' item 1 {_NOT_SCALAR}"),
        (lambda log: log.call("read", id=_BAD), f"call() id {_NOT_SCALAR}"),
        (lambda log: log.mcp("gh.issues", k=_BAD), f"mcp() field 'k' {_NOT_SCALAR}"),
        (lambda log: log.subagent("explore", _BAD), f"subagent() argument 1 {_NOT_SCALAR}"),
        (lambda log: log.skill("pdf", _BAD), f"skill() argument 1 {_NOT_SCALAR}"),
        (lambda log: log.plan("update", _BAD), f"plan() argument 1 {_NOT_SCALAR}"),
        (lambda log: log.question(_BAD), f"question() argument 1 {_NOT_SCALAR}"),
        (lambda log: log.metrics(k=_BAD), f"metrics() field 'k' {_NOT_SCALAR}"),
        (lambda log: log.lifecycle("phase", _BAD), f"lifecycle() argument 1 {_NOT_SCALAR}"),
        (lambda log: log.lifecycle("phase", k=_BAD), f"lifecycle() field 'k' {_NOT_SCALAR}"),
        (lambda log: log.lifecycle("end", k=_BAD), f"lifecycle() field 'k' {_NOT_SCALAR}"),
        (lambda log: log.call("read").progress("x", k=_BAD), f"progress() field 'k' {_NOT_SCALAR}"),
        (lambda log: log.call("read").finish("x", k=_BAD), f"finish() field 'k' {_NOT_SCALAR}"),
        (lambda log: log.call("read").finish(_BAD), f"finish() result {_NOT_SCALAR}"),
        (lambda log: log.call("read", k={"a": _BAD}), "call() field 'k': a dict JSON cannot write"),
        (lambda log: log.call("read").finish([_BAD]), "finish() result: a list JSON cannot write"),
        (lambda log: log.lifecycle(5), "lifecycle() name must be a str, not int"),
        (lambda log: log.comment(5), "comment() text must be a str, not int"),
        (lambda log: log.call("read").progress(5), "progress() text must be a str, not int"),
        (lambda log: log.user(5), "user() text must be a str, not int"),
        (lambda log: log.agent(5), "agent() text must be a str, not int"),
        (lambda log: log.thinking(5), "thinking() text must be a str, not int"),
        (lambda log: log.blob(b"x", 5), "blob() mime must be a str, not int"),
    ],
)
def test_a_wrong_type_is_named_exactly(call: Callable[[Writer], object], message: str) -> None:
    log = Writer(io.StringIO(), HEADER)
    with pytest.raises(TypeError) as raised:
        call(log)
    assert str(raised.value).split(" (")[0] == message


def test_progress_with_empty_text_writes_no_argument() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        call = log.call("bash", "make")
        call.progress("")
        call.progress("half", pct=50)
        sub = log.subagent("explore")
        sub.progress("")
    assert _body(out)[1:-1] == [
        "t:bash make id=call_1 → [running]",
        "t~:bash id=call_1",
        "t~:bash half id=call_1 pct=50",
        "x:explore id=call_2 → [launched]",
        "o: id=call_2 → [running]",
    ]


# -- warnings and failure paths ----------------------------------------------------------------


def _no_store(tmp_path: Path) -> Path:
    """A blob folder that cannot be made (a file is in its place)."""
    (tmp_path / "taken").write_text("x")
    return tmp_path / "taken"


_LONG = "y" * (1024 * 1024)


@pytest.mark.parametrize(
    "fail",
    [
        lambda log: log.call("shot").finish(b"\x89PNG"),
        lambda log: log.call("write", b"\x89PNG"),
        lambda log: log.call("write", "y" * 5000),
        lambda log: log.comment(_LONG),
        lambda log: log.blob(b"x"),
    ],
)
def test_a_blob_store_that_cannot_be_written_is_reported_once_and_the_data_stays_inline(
    tmp_path: Path, fail: Callable[[Writer], object]
) -> None:
    out = io.StringIO()
    folder = _no_store(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = Writer(out, HEADER, blobs=folder, redact=False)
        fail(log)
        log.call("again").finish(b"\x00")  # a second failure: no second warning
        log.close()
    messages = [str(w.message) for w in caught if w.category is WriterWarning]
    assert messages[0].startswith(f"bbox_lark.Writer: cannot write to the blob store {folder}: [Errno ")
    assert messages[0].endswith("; the data stays inline")
    assert len([m for m in messages if "cannot write to the blob store" in m]) == 1
    assert log.error is None
    assert "t:again id=" in out.getvalue() and "@blob" not in out.getvalue()


def test_a_line_over_the_limit_without_a_blob_store_is_reported_once() -> None:
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = Writer(out, HEADER, redact=False)
        log.call("write", _LONG).finish("ok")
        log.call("write", _LONG).finish("ok")
        log.comment(_LONG)
        log.close()
    assert [str(w.message) for w in caught] == [
        f"bbox_lark.Writer: a line of {len(_LONG) + 23} characters, over the line limit of 1048576,"
        " in <stream> (no blob store to move its long values to)"
    ]
    assert out.getvalue().count(_LONG) == 3


def test_a_line_just_at_the_limit_is_not_reported() -> None:
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log = Writer(out, HEADER, redact=False)
        log.call("write", "y" * (1024 * 1024 - 23)).finish("ok")
        log.close()
    assert max(len(line) for line in out.getvalue().splitlines()) == 1024 * 1024


@pytest.mark.parametrize(
    "fail",
    [
        lambda log, _: log.call("shot").finish(b"\x89PNG"),
        lambda log, _: log.call("write", b"\x89PNG"),
        lambda log, _: log.comment(_LONG),
        lambda log, _: log.blob(b"x"),
        lambda log, _: log.user("x", k="y" * 5000),
        lambda log, _: log.lifecycle("end", b"\x89PNG"),
        lambda _, out: Writer(out, HEADER, redact=False).comment("y" * 1024 * 1024),
        lambda _, out: Writer(out, HEADER, redact=False).lifecycle("end", "y" * 1024 * 1024),
        lambda _, out: Writer(out, HEADER, redact=False).call("x", "y" * 1024 * 1024).finish(),
    ],
)
def test_every_warning_points_at_the_callers_line(
    tmp_path: Path, fail: Callable[[Writer, io.StringIO], object]
) -> None:
    log = Writer(io.StringIO(), HEADER, blobs=_no_store(tmp_path))
    with pytest.warns(WriterWarning) as caught:
        fail(log, io.StringIO())
    assert (caught[0].filename, caught[0].lineno) == (__file__, fail.__code__.co_firstlineno)


# -- redaction: a value that is exactly a secret, and the count ------------------------------

SECRET = "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0" * 4 + "AA"  # the scanner's shape, not a real key
M = "[redacted:anthropic_key]"


def test_a_value_that_is_exactly_a_secret_is_redacted_everywhere_and_counted() -> None:
    """Each value scanned on its own (no key or text before it) is still judged as a secret:
    the scan starts at the value, not after some context."""
    out = io.StringIO()
    header = {**HEADER, "slug": SECRET, "tags": [SECRET, 3], "meta": {"k": SECRET, "n": 2}}
    with Writer(out, header) as log:
        log.user(SECRET)
        log.agent(SECRET, note=SECRET)
        log.thinking(SECRET)
        log.todos([("pending", SECRET)])
        log.comment(SECRET)
        log.comment("[redacted:api_key] already")
        call = log.call(SECRET, SECRET, [SECRET, "b"], k=SECRET)
        call.progress(SECRET)
        call.finish(SECRET, k=SECRET)
        log.mcp("gh.x", SECRET).finish(RuntimeError(SECRET))
        log.subagent("explore", SECRET).progress(SECRET)
        log.lifecycle("phase", SECRET, k=SECRET)
        log.lifecycle(SECRET)
        log.metrics(k=SECRET)
        log.call("x").finish(SECRET.encode())
    text = out.getvalue()
    assert SECRET not in text
    head = text.split("---\n")[1]
    assert head.splitlines()[3:] == [
        f"slug: '{M}'",
        "tags:",
        f"- '{M}'",
        "- 3",
        "meta:",
        f"  k: '{M}'",
        "  n: 2",
    ]
    assert _body(out) == [
        "@start id=s",
        f"u: {M}",
        f"a: {M} note={M}",
        f"th: {M}",
        f"td: [pending] {M}",
        f"# {M}",
        "# [redacted:api_key] already",
        f't:{M} "{M}" ["{M}", b] id=call_1 k={M} → [running]',
        f't~:{M} "{M}" id=call_1',
        f'o: id=call_1 k={M} → "{M}"',
        f'c:gh.x "{M}" id=call_2 → [error] "RuntimeError: {M}"',
        f'x:explore "{M}" id=call_3 → [launched]',
        f'o: "{M}" id=call_3 → [running]',
        f'@phase "{M}" k={M}',
        "@x-redacted-anthropic_key-",
        f"# metrics k={M}",
        f't:x id=call_4 → "{M}"',
        "# redactions=23",
        "@end",
    ]


def test_a_comment_stored_as_a_blob_puts_no_marker_on_the_line(tmp_path: Path) -> None:
    out = io.StringIO()
    with Writer(out, HEADER, blobs=tmp_path) as log:
        log.comment("x " * 500_000 + SECRET)
        log.comment("[redacted:api_key] " * 60_000)
    body = _body(out)
    assert body[1].startswith('# "@blob sha256=') and body[2].startswith('# "@blob sha256=')
    assert body[3] == "# redactions=0"


def test_progress_of_a_call_whose_name_held_a_secret_counts_the_name_again() -> None:
    out = io.StringIO()
    with Writer(out, HEADER) as log:
        call = log.call(f"x/{SECRET}")
        call.progress("half way")
        call.progress(SECRET)
    assert _body(out)[1:] == [
        f"t:x/{M} id=call_1 → [running]",
        f't~:x/{M} "half way" id=call_1',
        f't~:x/{M} "{M}" id=call_1',
        "# redactions=4",
        "@end",
    ]


# -- results, arguments and fields as written ------------------------------------------------

SHA_A = "a" * 64


def test_each_kind_of_result_as_written() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        log.call("a").finish(
            BlobPointer(f"@blob sha256={SHA_A} bytes=12 mime=image/png", 0, 0, SHA_A, "12", "image/png")
        )
        log.call("a").finish(BlobPointer(f"@blob sha256={SHA_A}", 0, 0, SHA_A, None, None))
        log.call("a").finish(BlobPointer(f"@blob sha256={SHA_A} bytes=x", 0, 0, SHA_A, "x", None))
        log.call("a").finish((1, "b"))
        log.call("a").finish({"k": "→"})
        log.call("a").finish(3)
        log.call("a").finish(2.5)
        log.call("a").finish(True)
        log.call("a").finish(None)
        log.call("a").finish(build.result("text", text="[redacted:api_key] hi"))
        log.call("a").finish(b"\xff ok")
    assert [line.split(" → ", 1)[1] for line in _body(out)[1:-1]] == [
        f"@blob sha256={SHA_A} bytes=12 mime=image/png",
        f"@blob sha256={SHA_A}",
        f"@blob sha256={SHA_A}",
        '[1, "b"]',
        '{"k": "→"}',
        "3",
        "2.5",
        "true",
        "[ok]",
        '"[redacted:api_key] hi"',
        '"\\u{dcff} ok"',
    ]


def test_a_result_stated_with_a_marker_is_counted() -> None:
    out = io.StringIO()
    with Writer(out, HEADER) as log:
        log.call("a").finish(build.result("text", text="[redacted:api_key] and [redacted:api_key]"))
        log.call("b").finish("[redacted:api_key] as text")
    assert _body(out)[-2] == "# redactions=3"


def test_results_and_arguments_over_the_threshold_go_to_the_store_and_not_at_it(tmp_path: Path) -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False, blobs=tmp_path, blob_threshold=10) as log:
        log.call("a", "x" * 10, k="w" * 10).finish("y" * 10)
        log.call("b", "x" * 11, ["z" * 11, "z"], k="w" * 11, n=b"\x00").finish("y" * 11)
        log.call("c").finish(RuntimeError("e" * 30))
    first, second, third = _body(out)[1:-1]
    assert first == "t:a xxxxxxxxxx id=call_1 k=wwwwwwwwww → yyyyyyyyyy"
    assert second.startswith('t:b "@blob sha256=') and '" ["' not in second
    assert "[zzzzzzzzzzz, z]" in second  # a list's items stay inline whatever their length
    document = bbox_lark.parse(out.getvalue())
    call = [e for e in document.events if e.kind == "tool"][1]
    assert bbox_lark.text_of(str(call.args[0]), blobs=tmp_path) == "x" * 11
    assert bbox_lark.text_of(call.fields["k"], blobs=tmp_path) == "w" * 11
    assert str(call.fields["n"]).endswith("mime=application/octet-stream")
    assert call.result is not None and call.result.kind == "blob"
    assert bbox_lark.text_of(call.result, blobs=tmp_path) == "y" * 11
    assert third.endswith("→ [err: RuntimeError: " + "e" * 30 + "]")  # a message is not a result


def test_a_field_of_none_is_left_out_and_keys_made_safe_stay_distinct() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        log.user("u", k=None, j="1")
        log.user("u", **{"a b": 1, "a_b": 2, "a?b": 3, "9": 4})
    assert _body(out)[1:3] == ["u: u j=1", "u: u a_b=1 a_b_2=2 a_b_3=3 _9=4"]


def test_auto_step_counts_on_from_the_highest_step_given() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False, auto_step=True) as log:
        for text, fields in [
            ("a", {}),
            ("b", {"step": 5}),
            ("c", {"step": True}),
            ("d", {}),
            ("e", {"step": 2}),
        ]:
            log.user(text, **fields)
        log.user("f")
        log.call("g").finish()
    assert _body(out)[1:-1] == [
        "u: a step=1",
        "u: b step=5",
        "u: c step=true",
        "u: d step=6",
        "u: e step=2",
        "u: f step=7",
        "t:g id=call_1 step=8 → [ok]",
    ]


def test_a_step_given_without_auto_step_is_written_and_none_added() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        log.user("a")
        log.user("b", step=4)
        log.call("c").finish()
    assert _body(out)[1:-1] == ["u: a", "u: b step=4", "t:c id=call_1 → [ok]"]


def test_a_ts_given_is_kept_and_the_clock_stamps_the_others() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False, clock=lambda: T0 + timedelta(seconds=1.5)) as log:
        log.user("a", ts="2020-01-01T00:00:00Z")
        log.user("b")
    assert _body(out)[2:4] == ["u: a ts=2020-01-01T00:00:00Z", "u: b ts=2026-01-01T00:00:01.500000Z"]


# -- the order of call lines, and a second finish ----------------------------------------------


def test_a_call_finished_first_writes_the_earlier_ones_open_and_the_later_ones_wait() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        a, b, c = log.call("a"), log.call("b"), log.call("c")
        b.finish("B")
        b.finish("again")
        c.finish("C")
        a.finish("A")
        a.finish("again")
        with log.call("d") as d:
            d.finish("D")
    assert _body(out)[1:-1] == [
        "t:a id=call_1 → [running]",
        "t:b id=call_2 → B",
        "t:c id=call_3 → C",
        "o: id=call_1 → A",
        "t:d id=call_4 → D",
    ]


# -- the constructor: header, target, options --------------------------------------------------


@pytest.mark.parametrize(
    ("header", "error", "message"),
    [
        ([("id", "x")], TypeError, "header must be a mapping, not list"),
        ({5: "x"}, TypeError, "a header key must be a str, not int"),
        ({"id": "  ", "repo_sha": "a"}, ValueError, "a bbox header needs a non-empty 'id' (got '  ')"),
        ({"id": "s"}, ValueError, "a bbox header needs a non-empty 'repo_sha' (got None)"),
        ({"id": "s", "repo_sha": ""}, ValueError, "a bbox header needs a non-empty 'repo_sha' (got '')"),
        (
            {"id": "s", "repo_sha": "a", "w": object()},
            TypeError,
            "header['w'] must be a str, a number, a bool, None, a list or a mapping, not object",
        ),
    ],
)
def test_a_header_refused_says_why_exactly(header: object, error: type[Exception], message: str) -> None:
    out = io.StringIO()
    with pytest.raises(error) as raised:
        Writer(out, header)  # type: ignore[arg-type]
    assert str(raised.value) == message
    assert out.getvalue() == ""


def test_format_comes_first_and_the_options_shape_the_lines() -> None:
    out = io.StringIO()
    log = Writer(out, {"repo_sha": "a", "id": 0, "format": "bbox/1"}, id_prefix="step_", end=False)
    log.call("x").finish()
    log.close()
    assert (
        out.getvalue()
        == "---\nformat: bbox/1\nrepo_sha: a\nid: 0\n---\n@start id=0\nt:x id=step_1 → [ok]\n# redactions=0\n"
    )


def test_a_binary_stream_gets_utf_8_and_start_false_writes_no_start() -> None:
    out = io.BytesIO()
    with Writer(out, HEADER, start=False, redact=False) as log:
        log.user("ü x")
    assert out.getvalue() == "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\n---\nu: ü x\n@end\n".encode()


def test_a_path_that_cannot_be_opened_is_reported_and_nothing_raises(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "s.bbox"
    with pytest.warns(WriterWarning) as caught:
        log = Writer(path, HEADER)
        log.user("x")
        log.close()
    assert [str(w.message) for w in caught] == [
        f"bbox_lark.Writer: cannot write {path}: [Errno 2] No such file or directory: '{path}';"
        " lines from here on are dropped"
    ]
    assert isinstance(log.error, FileNotFoundError) and log.name == str(path) and log.path == path
    assert not path.exists()


def test_an_empty_file_gets_a_header_and_a_path_target_its_blob_folder_beside_it(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    path.write_text("")
    with Writer(path, HEADER, redact=False) as log:
        log.call("shot").finish(b"\x89PNG")
        assert log.blobs is not None and log.blobs.folder == tmp_path / ".bbox-blobs"
    text = path.read_text()
    assert text.startswith("---\nformat: bbox/1\n") and text.count("@start id=s") == 1
    assert len(list((tmp_path / ".bbox-blobs").rglob("*"))) >= 1


def test_a_stream_target_is_named_by_its_name_and_has_no_blob_store(tmp_path: Path) -> None:
    class Named(io.StringIO):
        name = "my.log"

    stream = Named()
    log = Writer(stream, HEADER, redact=False)
    assert log.blobs is None and log.path is None and log.name == "my.log"
    stream.close()
    with pytest.warns(WriterWarning, match=r"^bbox_lark\.Writer: cannot write my\.log: "):
        log.user("x")
    with_blobs = Writer(io.StringIO(), HEADER, blobs=tmp_path / "b")
    assert with_blobs.blobs is not None and with_blobs.blobs.folder == tmp_path / "b"


def test_a_target_that_cannot_be_written_is_a_type_error() -> None:
    with pytest.raises(TypeError) as raised:
        Writer(5, HEADER)  # type: ignore[arg-type]
    assert str(raised.value) == "target must be a path or a writable stream, not int"
    with pytest.raises(TypeError):
        Writer(object(), HEADER)  # type: ignore[arg-type]


def test_the_clock_off_writes_no_time_and_on_stamps_every_event() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        log.user("x")
    assert "ts=" not in out.getvalue() and "# t=" not in out.getvalue()


# -- the lifecycle ---------------------------------------------------------------------------


def test_a_lifecycle_name_as_written() -> None:
    out = io.StringIO()
    log = Writer(out, HEADER, redact=False)
    for name in ["@phase", "Xray", "", "@", "9x", "a b", "_x", "a→b", SECRET, "x" * 1024]:
        log.lifecycle(name)
    with pytest.raises(ValueError) as raised:
        log.lifecycle("x" * 1025)
    assert str(raised.value) == "lifecycle() name is 1025 characters long; a name is at most 1024"
    log.close()
    assert _body(out)[1:-1] == [
        "@phase",
        "@Xray",
        "@notify",
        "@notify",
        "@x9x",
        "@a-b",
        "@x_x",
        "@a-b",
        f"@{SECRET}",  # redact=False: as given
        "@" + "x" * 1024,
    ]


def test_lifecycle_end_writes_the_open_calls_the_count_and_one_end() -> None:
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = Writer(out, HEADER)
        log.call("open")
        log.lifecycle("@end", cost="0.5")
        log.close()
        log.close()
        log.user("late")
    assert _body(out) == ["@start id=s", "t:open id=call_1 → [running]", "# redactions=0", "@end cost=0.5"]
    assert [str(w.message) for w in caught] == [
        "bbox_lark.Writer: cannot write a line after close() of <stream>: the Writer is closed;"
        " lines from here on are dropped"
    ]
    assert log.closed and isinstance(log.error, RuntimeError)


def test_end_false_writes_the_open_calls_and_the_count_but_no_end() -> None:
    out = io.StringIO()
    log = Writer(out, HEADER, end=False)
    log.call("open")
    log.close()
    log.close()
    assert _body(out) == ["@start id=s", "t:open id=call_1 → [running]", "# redactions=0"]
    out = io.StringIO()
    Writer(out, HEADER, end=False, redact=False).close()
    assert _body(out) == ["@start id=s"]


def test_close_closes_a_path_target_and_leaves_a_stream_open(tmp_path: Path) -> None:
    log = Writer(tmp_path / "s.bbox", HEADER)
    file = log._file
    log.close()
    assert file.closed
    stream = io.StringIO()
    Writer(stream, HEADER).close()
    assert not stream.closed


def test_fsync_syncs_every_line_of_a_path_and_none_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    monkeypatch.setattr("bbox_lark.write.writer.os.fsync", synced.append)
    with Writer(tmp_path / "a.bbox", HEADER, fsync=True) as log:
        log.user("x")
        number = log._file.fileno()
    assert synced == [number] * 5  # the header, @start, u:, # redactions, @end
    synced.clear()
    with Writer(tmp_path / "b.bbox", HEADER) as log:
        log.user("x")
    assert synced == []
    with (tmp_path / "c.bbox").open("w") as stream, Writer(stream, HEADER, fsync=True) as log:
        log.user("x")
        assert synced == [stream.fileno()] * 3


# -- an exception as a result ----------------------------------------------------------------

GITHUB_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # the scanner's shape, not a real token


def test_an_exception_type_named_like_a_token_is_redacted_from_the_line_start() -> None:
    error = type(GITHUB_TOKEN, (Exception,), {})("boom")
    out = io.StringIO()
    with Writer(out, HEADER) as log:
        log.call("a").finish(error)
    assert _body(out)[1:-1] == ['t:a id=call_1 → [error] "[redacted:github_token]: boom"', "# redactions=1"]


def test_an_exception_holding_a_marker_is_counted_and_one_stored_as_a_blob_is_not(tmp_path: Path) -> None:
    out = io.StringIO()
    with Writer(out, HEADER, blobs=tmp_path) as log:
        log.call("a").finish(RuntimeError("[redacted:api_key] already"))
        log.call("b").finish(RuntimeError(SECRET + " " + "x" * 1_000_000))
        log.call("c").finish(b"\x89PNG")
    body = _body(out)
    assert body[1] == 't:a id=call_1 → [error] "RuntimeError: [redacted:api_key] already"'
    assert body[2].startswith('t:b id=call_2 → [error] "@blob sha256=') and SECRET not in body[2]
    assert body[3].startswith("t:c id=call_3 → @blob sha256=")
    assert body[3].endswith(" bytes=4 mime=application/octet-stream")
    assert body[4] == "# redactions=1"


# -- call names and ids --------------------------------------------------------------------------


def test_call_names_ids_and_kinds_as_written() -> None:
    out = io.StringIO()
    with Writer(out, HEADER) as log:
        log.call("a b").finish()
        log.call("").finish()
        log.call("x", id=5).finish()
        log.call("@blob").finish()
        log.call("[redacted:a b]").finish()
        log.call(f"[redacted:x]/{SECRET}").finish()
        log.mcp("gh.x").finish()
        log.skill("pdf").finish()
        log.plan("update").finish()
        log.question("ok?").finish("yes")
    assert _body(out)[1:] == [
        "t:a_b id=call_1 → [ok]",
        "t:_ id=call_2 → [ok]",
        "t:x id=5 → [ok]",
        "t:_blob id=call_3 → [ok]",
        "t:[redacted:a_b] id=call_4 → [ok]",
        f"t:[redacted:x]/{M} id=call_5 → [ok]",
        "c:gh.x id=call_6 → [ok]",
        "s:pdf id=call_7 → [ok]",
        "p:update id=call_8 → [ok]",
        "q: ok? id=call_9 → yes",
        "# redactions=3",
        "@end",
    ]


@pytest.mark.parametrize("method", ["call", "mcp", "subagent", "skill", "plan"])
def test_a_call_name_over_1024_characters_is_refused(method: str) -> None:
    log = Writer(io.StringIO(), HEADER)
    getattr(log, method)("x" * 1024)
    with pytest.raises(ValueError) as raised:
        getattr(log, method)("x" * 1025)
    assert str(raised.value) == f"{method}() name is 1025 characters long; a name is at most 1024"


def test_a_message_just_within_the_line_room_stays_on_the_line(tmp_path: Path) -> None:
    """The room is for the text as quoted (two quotes more), whether or not the line quotes it."""
    from bbox_lark.write.values import LINE_ROOM

    fits = LINE_ROOM - 2
    out = io.StringIO()
    with Writer(out, HEADER, blobs=tmp_path, redact=False) as log:
        log.user("x" * fits)
        log.user("x" * (fits + 1))
        log.comment("y" * fits)
        log.comment("y" * (fits + 1))
    body = _body(out)
    assert body[1] == "u: " + "x" * fits and body[3] == "# " + "y" * fits
    assert body[2].startswith('u: "@blob sha256=') and body[4].startswith('# "@blob sha256=')
    assert body[2].endswith(' mime=text/plain"') and body[4].endswith(' mime=text/plain"')


def test_a_message_of_an_eighth_of_the_room_stays_on_the_line_however_it_quotes(tmp_path: Path) -> None:
    """A character is written in at most eight (``\\u{2028}``): text of an eighth of the room
    or less is never measured and stays on the line; a character more is measured."""
    from bbox_lark.write.values import LINE_ROOM

    out = io.StringIO()
    with Writer(out, HEADER, blobs=tmp_path, redact=False) as log:
        log.user("\u2028" * (LINE_ROOM // 8))
        log.user("\u2028" * (LINE_ROOM // 8 + 1))
    body = _body(out)
    assert body[1] == 'u: "' + "\\u{2028}" * (LINE_ROOM // 8) + '"'
    assert body[2].startswith('u: "@blob sha256=')


def test_the_header_limit_counts_utf_8_bytes_between_the_fences() -> None:
    room = 65536 - len("format: bbox/1\nid: s\nrepo_sha: abc1234\nnote: \n")
    out = io.StringIO()
    Writer(out, {**HEADER, "note": "n" * room}, start=False)
    assert out.getvalue().count("n" * room) == 1
    with pytest.raises(ValueError) as raised:
        Writer(io.StringIO(), {**HEADER, "note": "n" * (room + 1)})
    assert str(raised.value) == (
        "the header is 65537 bytes of YAML, over bbox/1's limit of 65536 (E009): keep large values"
        " out of the header (a body line, a comment or a blob)"
    )
    with pytest.raises(ValueError, match="over bbox/1's limit"):
        Writer(io.StringIO(), {**HEADER, "note": "é" * (room // 2 + 1)})  # fewer characters, more bytes


def test_a_handle_states_the_markers_its_line_and_name_hold() -> None:
    log = Writer(io.StringIO(), HEADER)
    question = log.question(SECRET)
    assert (question.name, question.markers, question.name_markers) == (None, 1, 0)
    call = log.call(f"x/{SECRET}", SECRET, k="plain")
    assert (call.name, call.markers, call.name_markers) == (f"x/{M}", 2, 1)
    assert call.args == (M,) and call.fields == {"id": "call_2", "k": "plain"} and call.id == "call_2"
    assert (call.kind, question.kind, call.written, call.finished) == ("tool", "question", False, False)
    call.finish()
    assert (call.written, call.finished) == (True, True)


def test_each_kind_of_call_written_open_says_so_by_its_kind() -> None:
    out = io.StringIO()
    with Writer(out, HEADER, redact=False) as log:
        handles = [
            log.question("Keep it?"),
            log.subagent("explore"),
            log.mcp("gh.x"),
            log.skill("pdf"),
            log.plan("update"),
            log.call("read"),
        ]
        log.user("meanwhile")
        handles[0].finish("yes")
    assert _body(out)[1:-1] == [
        'q: "Keep it?" id=call_1 → [pending]',
        "x:explore id=call_2 → [launched]",
        "c:gh.x id=call_3 → [running]",
        "s:pdf id=call_4 → [running]",
        "p:update id=call_5 → [running]",
        "t:read id=call_6 → [running]",
        "u: meanwhile",
        "o: id=call_1 → yes",
    ]


def test_marks_of_an_appended_session_go_on_from_its_last_mark(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    path.write_text("---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\n---\n@start id=s\n# t=00:01:30\nu: hi\n")
    now = [T0]
    with Writer(path, HEADER, clock=lambda: now[0], redact=False) as log:
        for seconds, text in [(0, "a"), (30, "b"), (60, "c"), (3661, "d")]:
            now[0] = T0 + timedelta(seconds=seconds)
            log.user(text)
    lines = path.read_text().splitlines()[8:]
    assert [line.split(" ts=")[0] for line in lines] == [
        "# t=00:01:30",
        "u: a",
        "u: b",
        "# t=00:02:30",
        "u: c",
        "# t=01:02:31",
        "u: d",
        "@end",
    ]


def test_a_clock_going_back_never_writes_a_mark_before_the_last() -> None:
    now = [T0 + timedelta(seconds=100)]
    out = io.StringIO()
    with Writer(out, HEADER, clock=lambda: now[0], redact=False, mark_every=0) as log:
        now[0] = T0
        log.user("earlier")
    marks = [line for line in _body(out) if line.startswith("# t=")]
    assert marks == ["# t=00:00:00"] * 3  # @start, the line, @end: each at elapsed 0, none negative


def test_a_line_that_cannot_be_built_is_a_comment_and_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never expected (any text has a written form); if a builder refuses, the session goes on."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise ValueError("no")

    out = io.StringIO()
    log = Writer(out, HEADER)
    monkeypatch.setattr("bbox_lark.write.writer.build.message", refuse)
    with pytest.warns(WriterWarning) as caught:
        log.user(SECRET)
    log.close()
    assert [str(w.message) for w in caught] == [
        "bbox_lark.Writer: a line could not be built (no); please report this bug"
    ]
    assert _body(out) == [
        "@start id=s",
        "# writer: a line could not be built: ValueError",
        "# redactions=0",
        "@end",
    ]


def test_a_blob_pointer_given_as_an_argument_or_field_is_written_as_given(tmp_path: Path) -> None:
    out = io.StringIO()
    with Writer(out, HEADER, blobs=tmp_path) as log:
        pointer = log.blob(b"raw")
        assert pointer is not None
        log.call("upload", pointer, src=pointer).finish(pointer)
    assert _body(out)[1] == f't:upload "{pointer.raw}" id=call_1 src="{pointer.raw}" → {pointer.raw}'


def test_values_after_a_blob_pointer_keep_their_own_text(tmp_path: Path) -> None:
    """A pointer is written as given and not scanned: the values after it keep their places."""
    out = io.StringIO()
    with Writer(out, HEADER, blobs=tmp_path) as log:
        pointer = log.blob(b"raw")
        assert pointer is not None
        log.call("x", pointer, "after", k=pointer, j="later").finish()
    assert _body(out)[1] == f't:x "{pointer.raw}" after id=call_1 k="{pointer.raw}" j=later → [ok]'


def test_a_list_item_that_is_exactly_a_pointer_is_stored_and_points_at_its_own_text(tmp_path: Path) -> None:
    given = f"@blob sha256={SHA_A} bytes=1 mime=text/plain"
    out = io.StringIO()
    with Writer(out, HEADER, blobs=tmp_path, redact=False) as log:
        log.call("x", ["a", given, "y" * 5000]).finish()
    (call,) = [e for e in bbox_lark.parse(out.getvalue()).events if e.kind == "tool"]
    first, item, long = call.args[0]
    assert (first, long) == ("a", "y" * 5000)  # items stay inline whatever their length
    assert item != given and str(item).startswith("@blob sha256=")
    assert bbox_lark.text_of(str(item), blobs=tmp_path) == given


def test_without_redact_nothing_is_counted() -> None:
    log = Writer(io.StringIO(), HEADER, redact=False)
    log.user("as given", k="v")
    log.call("x", "a").finish("b")
    assert log.redactions == 0


def test_the_count_line_adds_no_marker_of_its_own() -> None:
    log = Writer(io.StringIO(), HEADER)
    log.user(SECRET)
    log.close()
    assert log.redactions == 1


def test_a_handle_made_directly_holds_no_markers() -> None:
    from bbox_lark.write.writer import CallHandle

    handle = CallHandle(Writer(io.StringIO(), HEADER), "tool", "x", (), {"id": "a"})
    assert (handle.markers, handle.name_markers, handle.id) == (0, 0, "a")


class _FailsOnClose:
    """A file whose close reports a deferred write error (as NFS may)."""

    def __init__(self, file: object) -> None:
        self.file = file

    def write(self, data: memoryview) -> int:
        return self.file.write(data)  # type: ignore[attr-defined, no-any-return]

    def close(self) -> None:
        self.file.close()  # type: ignore[attr-defined]
        raise OSError("deferred write error")


def test_a_close_that_fails_is_reported_with_its_error(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    log = Writer(path, HEADER)
    log._file = _FailsOnClose(log._file)
    with pytest.warns(WriterWarning) as caught:
        log.close()
    assert [str(w.message) for w in caught] == [
        f"bbox_lark.Writer: cannot write {path}: deferred write error; lines from here on are dropped"
    ]
    assert isinstance(log.error, OSError) and path.read_text().endswith("@end\n")


def test_a_file_of_one_byte_is_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    path.write_text("x")
    with Writer(path, HEADER, redact=False, start=False):
        pass
    assert path.read_text() == "x\n@end\n"
