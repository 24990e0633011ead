"""What every converter is made of (``bbox_lark/convert/base.py``), pinned down function by
function where mutation testing found the converters' own tests holding it only in part: the
errors' messages, options, JSON type and depth checks, the importer's header and its
overflow, the cleaning of loaded JSON, what a writer may write, and the input's streams."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from bbox_lark.convert.base import (
    HEADER_VALUE_MAX,
    REPO_SHA,
    Conversion,
    ConvertError,
    Format,
    Input,
    Option,
    ReadContext,
    RefusedInputError,
    UndetectableFormatError,
    UnknownFormatError,
    UnsupportedOptionError,
    WritableText,
    WriteContext,
    clean_json,
    collect,
    encode_text,
    flatten,
    header_safe,
    importer_header,
    load_json,
    long_number,
    nesting_depth,
    overflow_lines,
    type_problem,
    with_overflow,
    writable,
)
from bbox_lark.convert.fidelity import Fidelity
from bbox_lark.syntax import build
from bbox_lark.syntax.nodes import Diagnostic
from bbox_lark.syntax.parser import iter_nodes


def _ids(value: object) -> str:
    """A test id of letters, digits and dashes (mutmut gives pytest the ids back: a bracket,
    a space or a quote in one is not found again)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", ascii(value)).strip("-")[:40] or "empty"


# -- errors and options ---------------------------------------------------------------------


def test_the_errors_say_what_went_wrong() -> None:
    unknown = UnknownFormatError("xml", ["bbox", "atif"])
    assert str(unknown) == "unknown format 'xml'; known formats: bbox, atif"
    assert unknown.name == "xml" and unknown.known == ("bbox", "atif")
    undetectable = UndetectableFormatError("a.txt", iter(["bbox", "jsonl"]))
    assert str(undetectable) == (
        "a.txt: cannot tell the input format from its name or content; give --from (one of: bbox, jsonl)"
    )
    assert undetectable.known == ("bbox", "jsonl")
    assert str(UnsupportedOptionError("lossy", "atif", iter(["compact"]))) == (
        "option 'lossy' does not apply to atif; it applies to: compact"
    )
    assert str(UnsupportedOptionError("lossy", "atif", [])) == "option 'lossy' does not apply to atif"
    assert str(UnsupportedOptionError("x", "y", ["a", "b"])).endswith("it applies to: a, b")
    assert issubclass(RefusedInputError, ConvertError)


def test_an_option_s_flag_defaults_and_choices() -> None:
    option = Option("repo_sha_x", "help")
    assert option.flag == "--repo-sha-x"
    assert (option.default, option.choices, option.applies) == (False, (), "write")
    assert option.check("anything") == "anything"
    chosen = Option("style", "h", default="a", choices=("a", "b"))
    assert chosen.check("b") == "b"
    with pytest.raises(ConvertError) as raised:
        chosen.check("c")
    assert str(raised.value) == "--style: 'c' is not one of a, b"
    assert (REPO_SHA.name, REPO_SHA.default, REPO_SHA.applies) == ("repo_sha", None, "read")


def test_a_format_finds_its_option_by_name_and_side() -> None:
    read = Option("x", "h", applies="read")
    write = Option("x", "h")
    fmt = Format("f", "d", (".f",), lambda text: 0, None, None, "all", options=(read, write))
    assert fmt.option("x", "read") is read
    assert fmt.option("x", "write") is write
    assert fmt.option("y", "write") is None
    assert (fmt.lossless, fmt.output, fmt.reads_folders, fmt.keeps_source) == (True, "text", False, False)


# -- JSON values ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected", "problem"),
    [
        ("a", ("string",), None),
        ([], ("array",), None),
        ({}, ("object",), None),
        (True, ("boolean",), None),
        (None, ("null",), None),
        (1, ("integer",), None),
        (1, ("number",), None),
        (1.5, ("number",), None),
        (1.5, ("integer",), "`v` must be an integer, got a number"),
        (True, ("number",), "`v` must be a number, got a boolean"),
        (False, ("integer",), "`v` must be an integer, got a boolean"),
        ("1", ("number", "null"), "`v` must be a number or null, got a string"),
        (None, ("string",), "`v` must be a string, got null"),
        (1, ("array", "object"), "`v` must be an array or an object, got a number"),
        (1, ("boolean", "string"), "`v` must be a boolean or a string, got a number"),
        ([], ("integer", "string"), "`v` must be an integer or a string, got an array"),
        (1.0, ("string", "number"), None),
        ("s", ("integer", "string"), None),
        (True, ("number", "boolean"), None),
        ({}, ("array", "null", "object"), None),
    ],
    ids=_ids,
)
def test_type_problem(value: Any, expected: tuple[str, ...], problem: str | None) -> None:
    assert type_problem("v", value, *expected) == problem


@pytest.mark.parametrize(
    ("value", "depth"),
    [
        (1, 0),
        ("x", 0),
        ([], 1),
        ({}, 1),
        ([1, [2, [3]], []], 3),
        ({"a": {"b": [{}]}, "c": 1}, 4),
        ([[], [[[]]], []], 4),
    ],
    ids=_ids,
)
def test_nesting_depth(value: Any, depth: int) -> None:
    assert nesting_depth(value, 10) == depth


def test_nesting_depth_stops_just_past_the_limit() -> None:
    deep: Any = []
    for _ in range(50):
        deep = [deep]
    assert nesting_depth(deep, 5) == 6
    assert nesting_depth(deep, 51) == 51
    assert nesting_depth([[], [[1]]], 2) == 3
    assert nesting_depth([[], [[1]]], 3) == 3


def test_long_number_finds_the_first_number_too_long() -> None:
    limit = sys.get_int_max_str_digits()
    long = "7" * (limit + 1)
    assert long_number('{"a": ' + "7" * limit + "}") is None
    assert long_number('{"a": ' + long + "}") == (1, 7)
    assert long_number('{\n "b": 1,\n  "a": ' + long + "}") == (3, 8)
    assert long_number('{\n "b": 1,\n  "a": ' + long + ",\n\n" + long + "}") == (3, 8)
    assert long_number('\n[7, "x",\n ' + long + "\n]") == (3, 2)
    assert long_number("\n" + long) == (2, 1)
    assert long_number(long) == (1, 1)


def test_long_number_finds_none_without_a_limit() -> None:
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        assert long_number("1" * 10_000) is None
    finally:
        sys.set_int_max_str_digits(limit)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty file: a chat is a JSON object"),
        (" \n\t", "empty file: a chat is a JSON object"),
        ('{"a": "b', "not valid JSON at line 1, column 7: a string that never closes (cut short?)"),
        ('{"a": [1,\n 2', "not valid JSON at line 2, column 3: the JSON ends too early (cut short?)"),
        ('{"a": [1,\n 2  \n', "not valid JSON at line 3, column 1: the JSON ends too early (cut short?)"),
        ('{"a": }', "not valid JSON at line 1, column 7: Expecting value"),
        ('{"a": 1} x', "not valid JSON at line 1, column 10: Extra data"),
        ("[" * 100_000 + "]" * 100_000, "not readable JSON: nested too deeply"),
    ],
    ids=_ids,
)
def test_load_json_names_where_and_why(text: str, message: str) -> None:
    with pytest.raises(RefusedInputError) as raised:
        load_json(text, "a chat")
    assert str(raised.value) == message
    assert raised.value.__cause__ is None
    assert raised.value.__context__ is None or raised.value.__suppress_context__


def test_load_json_reads_a_document_and_names_a_number_too_long() -> None:
    assert load_json(' {"a": [1, "x"]} \n', "a chat") == {"a": [1, "x"]}
    long = "9" * (sys.get_int_max_str_digits() + 1)
    with pytest.raises(RefusedInputError) as raised:
        load_json('{\n  "a": ' + long + "}", "a chat")
    assert str(raised.value) == "not valid JSON at line 2, column 8: a number too long to read"
    assert raised.value.__suppress_context__


# -- the importer's header ------------------------------------------------------------------


def _header(head: Any) -> str:
    return "".join(line.raw + line.eol for line in head.header_lines)


def _entries(ctx: ReadContext) -> list[tuple[str, str]]:
    # Every row of the header's is at line 0: the header is no line of the source.
    assert all(e.lines == (0,) for e in ctx.report.entries), ctx.report.entries
    return [(e.action, e.what) for e in ctx.report.entries]


def test_the_importer_header_in_order_with_its_repo_sha() -> None:
    ctx = ReadContext(report=Fidelity(), options={"repo_sha": "215db51"})
    head = importer_header(ctx, "s-1", model="m", none=None, n=3)
    assert _header(head) == "---\nformat: bbox/1\nid: s-1\nrepo_sha: 215db51\nmodel: m\nn: 3\n---\n"
    assert _entries(ctx) == [] and ctx.overflow == []


def test_the_importer_header_synthesizes_what_the_source_lacks() -> None:
    ctx = ReadContext(report=Fidelity(), options={"repo_sha": ""})
    head = importer_header(ctx, None)
    text = _header(head)
    assert text.startswith("---\nformat: bbox/1\nid: imported-") and text.endswith(
        "\nrepo_sha: unknown\n---\n"
    )
    assert len(text.split("\n")[2]) == len("id: imported-") + 36
    assert _entries(ctx) == [
        ("synthesized", "session ids (the source has none)"),
        ("synthesized", "repo_sha: unknown (the source has none; give --repo-sha)"),
    ]
    assert _header(importer_header(ReadContext(report=Fidelity()), "")).startswith(
        "---\nformat: bbox/1\nid: imp"
    )


def test_a_header_value_that_cannot_stay_goes_to_a_notes_line() -> None:
    ctx = ReadContext(report=Fidelity(), options={"repo_sha": "abc"})
    head = importer_header(ctx, "two\nlines", model="a\u2028b", kept="ok")
    text = _header(head)
    assert "two" not in text and "model" not in text and "kept: ok" in text
    assert text.startswith("---\nformat: bbox/1\nid: imported-")
    assert [(n.raw, [c.raw for c in n.continuation]) for n in ctx.overflow] == [
        ("# notes: header id (a JSON string)", ['  "two\\nlines"']),
        ("# notes: header model (a JSON string)", ['  "a\\u2028b"']),
    ]
    assert _entries(ctx) == [
        ("extra", "header values too long or not one line (as # notes: header lines): id"),
        ("synthesized", "session ids (the source has none)"),
        ("extra", "header values too long or not one line (as # notes: header lines): model"),
    ]
    assert overflow_lines(ctx) == 4


def test_a_long_header_value_is_cut_in_pieces_of_4096() -> None:
    ctx = ReadContext(report=Fidelity())
    importer_header(ctx, "s", note="x" * 9000)
    (node,) = ctx.overflow
    pieces = [c.raw[2:] for c in node.continuation]
    assert [len(p) for p in pieces] == [4096, 4096, 810]
    assert json.loads("".join(pieces)) == "x" * 9000
    assert overflow_lines(ctx) == 4


@pytest.mark.parametrize(
    ("value", "safe"),
    [
        ("x" * HEADER_VALUE_MAX, True),
        ("x" * (HEADER_VALUE_MAX + 1), False),
        ("a b", True),
        (" a", False),
        ("a ", False),
        ("a\u00a0b", True),
        ("a\x00b", False),
        ("a\x1fb", False),
        ("a\x20b", True),
        ("a\x7eb", True),
        ("a\x7fb", False),
        ("a\x9fb", False),
        ("a\xa0b", True),
        ("a\u2028b", False),
        ("a\u2029b", False),
        ("a\ud800b", False),
        ("a\udfffb", False),
        ("a\ue000b", True),
        ("a\ufeffb", False),
    ],
    ids=_ids,
)
def test_header_safe(value: str, safe: bool) -> None:
    assert header_safe(value) is safe
    assert HEADER_VALUE_MAX == 1024


def test_the_moved_values_follow_the_head_only() -> None:
    ctx = ReadContext(report=Fidelity())
    ctx.overflow.extend(["n1", "n2"])
    assert list(with_overflow(iter(["head", "a", "b"]), ctx)) == ["head", "n1", "n2", "a", "b"]
    assert list(with_overflow(iter([]), ctx)) == []
    assert overflow_lines(ReadContext(report=Fidelity())) == 0


# -- loaded JSON and written text ----------------------------------------------------------


def test_clean_json_replaces_nul_and_lone_surrogates_everywhere() -> None:
    value = {"a\x00": ["x\ud800y", {"k": "\udfff\x00"}, 1, None, [["\x00"]]], "ok": "fine", "n": 2}
    cleaned, count = clean_json(value)
    assert cleaned == {
        "a\ufffd": ["x\ufffdy", {"k": "\ufffd\ufffd"}, 1, None, [["\ufffd"]]],
        "ok": "fine",
        "n": 2,
    }
    assert count == 5
    assert clean_json("a\x00\ud800") == ("a\ufffd\ufffd", 2)
    assert clean_json("plain") == ("plain", 0)
    assert clean_json(5) == (5, 0)
    assert clean_json(None) == (None, 0)
    assert clean_json(["a", {"b": "c"}]) == (["a", {"b": "c"}], 0)
    assert clean_json("\ud7ff\ue000\x01") == ("\ud7ff\ue000\x01", 0)


def test_clean_json_keeps_the_key_order() -> None:
    cleaned, count = clean_json({"a": 1, "b\x00": 2, "c": "\x00"})
    assert list(cleaned) == ["a", "c", "b\ufffd"] and count == 2
    assert cleaned["c"] == "\ufffd"


def test_encode_text_keeps_undecodable_bytes_and_refuses_other_surrogates() -> None:
    assert encode_text("aé\udc80\udcff") == b"a\xc3\xa9\x80\xff"
    with pytest.raises(RefusedInputError) as raised:
        encode_text("ab\ncd\ud83d\ude00 \udc80 \ud800\n\nx")
    assert str(raised.value) == (
        "<input>:2:3: the text holds U+D83D, a surrogate code point, which no UTF-8 file can hold"
        " (only U+DC80-U+DCFF, undecodable bytes, can be read); give the input as bytes, write such"
        " text as written text (\\u{...}), or join a surrogate pair with"
        " text.encode('utf-16', 'surrogatepass').decode('utf-16')"
    )
    assert raised.value.__suppress_context__
    with pytest.raises(RefusedInputError, match=r"^<input>:3:4: the text holds U\+D800"):
        encode_text("\nab\nxyz\ud800\n")
    with pytest.raises(RefusedInputError, match=r"^<input>:2:1: the text holds U\+DC7F"):
        encode_text("\n\udc7f")
    with pytest.raises(RefusedInputError, match=r"^<input>:1:1: the text holds U\+DFFF"):
        encode_text("\udfff")


@pytest.mark.parametrize(
    ("char", "kept"),
    [
        ("\ud800", False),
        ("\udc7f", False),
        ("\udc80", True),
        ("\udcff", True),
        ("\udd00", False),
        ("\udfff", False),
    ],
    ids=_ids,
)
def test_writable_keeps_only_the_surrogates_that_stand_for_a_byte(char: str, kept: bool) -> None:
    assert writable("a" + char + "b" + char) == (
        ("a" + char + "b" + char, 0) if kept else ("a\ufffdb\ufffd", 2)
    )


def test_writable_text_reports_what_it_replaced_and_passes_the_rest() -> None:
    out = io.StringIO()
    report = Fidelity()
    stream = WritableText(out, report)
    assert stream.write("ok") == 2
    assert not report
    assert stream.write("a\ud800\udfff") == 3
    assert out.getvalue() == "oka\ufffd\ufffd"
    assert [(e.action, e.what, e.count, e.lines) for e in report.entries] == [
        ("dropped", "lone surrogates UTF-8 cannot encode (written as U+FFFD)", 2, (0,))
    ]
    assert stream.getvalue() == out.getvalue()  # the stream's own methods, underneath


# -- the input -------------------------------------------------------------------------------


def test_an_input_in_memory() -> None:
    source = Input(data="a\nb\udc80")
    assert source.path is None and source.shown == "<stdin>"
    assert source.head(2) == b"a\n" and source.head() == b"a\nb\x80"
    assert list(source.chunks()) == [b"a\nb\x80"]
    assert list(source.lines()) == [b"a\n", b"b\x80"]
    assert source.read_bytes() == b"a\nb\x80"
    assert Input("-", data=b"x").path is None
    assert Input(None, data=b"x").read_bytes() == b"x"


def test_a_file_input_sniffed_then_read_gives_every_byte_once(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    data = b"".join(b"%06d\n" % n for n in range(40_000))  # 280,000 bytes: several chunks
    path.write_bytes(data)
    source = Input(path)
    assert source.path == path and source.shown == str(path)
    assert source.head() == data[: 1 << 16]
    assert source.head(10) == data[:10]
    chunks = list(source.chunks())
    assert b"".join(chunks) == data
    assert chunks[0] == data[: 1 << 16] and len(chunks[1]) == 1 << 16
    fresh = Input(str(path))
    assert fresh.read_bytes() == data
    assert len(list(Input(path).lines())) == 40_000


def test_a_file_input_is_closed_after_reading(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"abc")
    source = Input(path)
    source.head()
    stream = source._stream
    assert stream is not None and not stream.closed
    assert source.read_bytes() == b"abc"
    assert stream.closed


def test_a_stream_input_is_read_from_the_stream_and_left_open() -> None:
    stream = io.BytesIO(b"x" * 70_000 + b"\nend")
    source = Input(None, stream=stream)
    assert source.head(3) == b"xxx"
    assert source.read_bytes() == b"x" * 70_000 + b"\nend"
    assert not stream.closed


def test_a_folder_input_has_an_empty_head(tmp_path: Path) -> None:
    assert Input(tmp_path).head() == b""
    assert Input(tmp_path).shown == str(tmp_path)


def test_standard_input_is_read_when_no_path_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    class Stdin:
        buffer = io.BytesIO(b"from stdin\n")

    monkeypatch.setattr(sys, "stdin", Stdin)
    source = Input("-")
    assert source.head(4) == b"from"
    assert source.read_bytes() == b"from stdin\n"


# -- contexts, results and streams -----------------------------------------------------------


def test_the_contexts_defaults() -> None:
    read = ReadContext(report=Fidelity())
    assert (read.options, read.max_line, read.diagnostics, read.check) == ({}, 0, [], True)
    assert (read.allowed_secrets, read.overflow) == (frozenset(), [])
    assert ReadContext(report=Fidelity()).options is not read.options
    write = WriteContext(report=Fidelity())
    assert (write.options, write.foreign, write.path) == ({}, False, None)


def test_a_conversion_s_report_skipped_and_errors() -> None:
    fidelity = Fidelity()
    fidelity.kept("lines", 1)
    fidelity.dropped("comments", 2)
    fidelity.synthesized("ids", 3)
    fidelity.skip(4, "bad record")
    diagnostics = (
        Diagnostic("E004", "error", 1, 1, "x"),
        Diagnostic("W003", "warning", 2, 1, "y"),
        Diagnostic("E010", "error", 3, 1, "z"),
    )
    done = Conversion("text", fidelity, diagnostics, "bbox", "jsonl")
    assert [e.what for e in done.report] == ["comments", "ids"]
    assert [(s.line, s.message) for s in done.skipped] == [(4, "bad record")]
    assert isinstance(done.skipped, tuple)
    assert done.errors == 2
    assert (done.secrets, done.redacted, done.credentials) == ({}, False, ())


def test_collect_and_flatten() -> None:
    assert collect(iter(["head", 1, 2])) == ("head", [1, 2])
    assert collect(["head"]) == ("head", [])
    built = build.message("u", "hi", continuation=["more", "and more"])
    plain = build.message("u", "alone")
    items = list(flatten(["head", built, plain]))
    assert items[:2] == ["head", built] and items[4] is plain
    assert [c.raw for c in items[2:4]] == ["  more", "  and more"]
    assert len(items) == 5
    # A parsed stream yields the continuation lines itself: they are not given twice.
    parsed = list(iter_nodes("u: hi\n  more\n"))
    assert list(flatten(parsed)) == parsed
    assert [type(item).__name__ for item in parsed] == ["Head", "Message", "Continuation"]
