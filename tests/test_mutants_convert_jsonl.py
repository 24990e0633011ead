"""The JSON Lines reader and writer (``bbox_lark/convert/jsonl/reader.py``, ``writer.py``),
pinned down where mutation testing found nothing holding them: what a round trip keeps (text,
fields, numbers, line endings), where a report or a diagnostic puts a record (its JSONL
line), the message of each bad header or record, and what the terse style writes and reports
(docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from bbox_lark.convert import Fidelity, Input, ReadContext, WriteContext, convert, jsonl
from bbox_lark.convert.jsonl import writer
from bbox_lark.syntax.nodes import Event
from bbox_lark.syntax.parser import iter_nodes
from bbox_lark.syntax.source import encode

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
FIELDS = {"format": "bbox/1", "id": "s", "repo_sha": "215db51", "runner": "local"}
HEADER_RECORD = json.dumps({"record": "header", "bbox": "1", "fields": FIELDS}) + "\n"


def slug(value: object) -> str | None:
    """A test id of letters, digits and dashes: mutmut passes the ids back to pytest, which
    finds no test under an id holding brackets or quotes after its first collection."""
    return re.sub(r"[^A-Za-z0-9]+", "-", value).strip("-") or "empty" if isinstance(value, str) else None


def lines(*records: Any) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def read_back(text: str, **options: Any) -> Any:
    return convert(text, "jsonl", to="bbox", **options)


def skipped(result: Any) -> list[tuple[int, str]]:
    return [(s.line, s.message) for s in result.skipped]


def read_report(result: Any) -> dict[tuple[str, str], tuple[tuple[int, ...], int]]:
    return {(e.action, e.what): (e.lines, e.count) for e in result.fidelity.entries if e.stage == "read"}


def write_report(result: Any) -> dict[tuple[str, str], tuple[tuple[int, ...], int]]:
    return {(e.action, e.what): (e.lines, e.count) for e in result.fidelity.entries if e.stage == "write"}


def records(text: str, **options: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in convert(text, "bbox", to="jsonl", **options).text.splitlines()]


def body(text: str) -> str:
    return text.split("---\n", 2)[2]


# -- reading: lines, positions --------------------------------------------------------------


def test_a_byte_order_mark_is_read_only_before_the_first_record() -> None:
    result = read_back("\ufeff" + HEADER_RECORD + lines({"kind": "user", "source": "u: hi"}))
    assert not result.skipped and body(result.text) == "u: hi\n"
    later = read_back(HEADER_RECORD + "\ufeff" + lines({"kind": "user", "source": "u: hi"}))
    assert skipped(later) == [
        (2, "not a JSON value: Unexpected UTF-8 BOM (decode using utf-8-sig) at column 1")
    ]


def test_blank_lines_are_skipped_silently_and_later_records_keep_their_lines() -> None:
    result = read_back(HEADER_RECORD + "   \n\t\n" + lines({"kind": "user", "source": "u: hi"}))
    assert not result.skipped and body(result.text) == "u: hi\n"
    assert read_report(result)[("kept", "event lines")] == ((4,), 1)


def test_a_record_nested_too_deeply_is_skipped_with_its_reason() -> None:
    result = read_back(HEADER_RECORD + "[" * 100_000 + "\n" + lines({"kind": "user", "source": "u: hi"}))
    assert skipped(result) == [(2, "not a JSON value: nested too deeply")]
    assert body(result.text) == "u: hi\n"


def test_a_json_error_names_its_column() -> None:
    result = read_back(HEADER_RECORD + '{"kind": "user",}\n')
    assert skipped(result) == [
        (2, "not a JSON value: Expecting property name enclosed in double quotes at column 17")
    ]


def test_a_number_python_cannot_read_is_skipped_with_its_reason() -> None:
    result = read_back(HEADER_RECORD + '{"kind": "user", "n": ' + "1" * 5000 + "}\n")
    ((line, message),) = skipped(result)
    assert line == 2 and message.startswith("not a JSON value: Exceeds the limit (4300 digits) for integer")


def test_invalid_bytes_in_a_record_come_back_as_the_same_bytes() -> None:
    data = encode(HEADER_RECORD) + b'{"kind": "user", "source": "u: caf\xe9 \xff"}\n'
    result = convert(data, "jsonl", to="bbox")
    assert not result.skipped and encode(result.text).endswith(b"u: caf\xe9 \xff\n")


def test_a_record_that_is_not_an_object_names_what_it_is() -> None:
    result = read_back(HEADER_RECORD + "3\nnull\n")
    assert skipped(result) == [
        (2, "a record is a JSON object, not a number"),
        (3, "a record is a JSON object, not null"),
    ]


def test_diagnostics_and_report_lines_are_jsonl_lines() -> None:
    # Blank and skipped lines shift the JSONL lines against the document's: every place
    # reported is the record's own line.
    text = (
        HEADER_RECORD
        + "\n"
        + lines(
            {"kind": "user", "source": "u: hi"},
            "oops",
            {"kind": "unknown", "source": "zz: what"},
            {"kind": "unknown", "source": "yy: what"},
            "",
            {"kind": "unknown", "source": "xx: what"},
        )
    )
    result = read_back(text)
    assert body(result.text) == "u: hi\nzz: what\nyy: what\nxx: what\n"
    assert [(d.code, d.line, d.col) for d in result.diagnostics] == [
        ("W003", 5, 1),
        ("W003", 6, 1),
        ("W003", 8, 1),
    ]
    assert read_report(result)[("kept", "unknown lines")] == ((5, 6, 8), 3)
    assert skipped(result) == [(4, "not a JSON value: Expecting value at column 1")]


def test_header_diagnostics_are_at_the_header_record() -> None:
    header = json.dumps({"record": "header", "bbox": "1", "fields": {"format": "bbox/1", "id": "s"}})
    result = read_back("\n\n" + header + "\n" + lines({"kind": "unknown", "source": "zz: what"}))
    assert [(d.code, d.line, d.col) for d in result.diagnostics] == [
        ("E010", 3, 1),
        ("I004", 3, 1),
        ("W003", 4, 1),
    ]
    alone = read_back(header + "\n")
    assert [(d.code, d.line) for d in alone.diagnostics] == [("E010", 1), ("I004", 1)]


def test_a_header_from_its_lines_maps_every_header_line_to_the_header_record() -> None:
    text = convert(HEADER.replace("runner: local\n", "") + "zz: what\n", "bbox", to="jsonl").text
    result = read_back(text)
    assert [(d.code, d.line) for d in result.diagnostics] == [("I004", 1), ("W003", 2)]


def test_without_check_there_are_no_diagnostics() -> None:
    text = HEADER_RECORD + lines({"kind": "unknown", "source": "zz: what"})
    assert read_back(text).diagnostics
    assert not read_back(text, check=False).diagnostics


def test_nodes_are_numbered_in_the_document_whatever_was_skipped() -> None:
    text = HEADER_RECORD + lines(
        {"kind": "user", "source": "u: a"}, "oops", {"kind": "bogus"}, {"kind": "user", "source": "u: b"}
    )
    nodes = list(jsonl.read(Input(data=text), ReadContext(Fidelity(), {}, 0, check=False)))
    assert [(type(n).__name__, n.line) for n in nodes[1:]] == [("Message", 7), ("Message", 8)]


# -- reading: the header record ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ({"fields": []}, "header record: 'fields' must be an object or null"),
        ({"lines": [3]}, "header record: 'lines'[0] must be an object"),
        (
            {"lines": [{"source": "---"}, {"source": 3}]},
            "header record: 'lines'[1]: 'source' must be a string, got a number",
        ),
        (
            {"lines": [{"source": "---"}, {"source": "a: b", "eol": "\r"}]},
            "header record: 'lines'[1]: 'eol' must be one of",
        ),
        (
            {"lines": [{"source": "---", "eol": ""}, {"source": "format: bbox/1"}, {"source": "---"}]},
            "header record: only the last header line may lack a line ending",
        ),
        (
            {"lines": [{"source": "---"}, {"source": "format: bbox/1", "eol": ""}, {"source": "---"}]},
            "header record: only the last header line may lack a line ending",
        ),
        (
            {"lines": [{"source": "---"}, {"source": "format: bbox/1"}, {"source": "---"}, {"source": ""}]},
            "header record: its 'lines' do not read as a header block (a fence, YAML, a fence)",
        ),
        (
            {"lines": [{"source": "---"}, {"source": "---"}, {"source": "u: a"}]},
            "header record: its 'lines' do not read as a header block (a fence, YAML, a fence)",
        ),
        ({"style": "short"}, "unknown style 'short' (one of: full, terse); read as full"),
    ],
    ids=slug,
)
def test_a_bad_header_record_says_what_is_wrong(header: dict[str, Any], message: str) -> None:
    result = read_back(lines({"record": "header", "bbox": "1", **header}, {"kind": "user", "source": "u: a"}))
    assert [(line, text[: len(message)]) for line, text in skipped(result)] == [(1, message)]
    assert result.text.endswith("u: a\n")


def test_a_header_yaml_cannot_write_is_skipped_with_its_reason() -> None:
    # Deep enough for the YAML writer (several frames a level) to run out of stack, not
    # JSON's (one a level), whatever the process's recursion limit.
    value: list[Any] = []
    for _ in range(sys.getrecursionlimit() * 6 // 10):
        value = [value]
    result = read_back(lines({"record": "header", "bbox": "1", "fields": {"k": value}}))
    ((line, message),) = skipped(result)
    assert line == 1 and message.startswith(
        "header record: cannot build a header from 'fields': maximum recursion depth exceeded"
    )


def test_a_header_built_from_fields_keeps_its_byte_order_mark() -> None:
    result = read_back(lines({"record": "header", "bbox": "1", "bom": True, "fields": {"format": "bbox/1"}}))
    assert result.text == "\ufeff---\nformat: bbox/1\n---\n"


def test_a_header_line_may_not_end_in_a_carriage_return_before_a_newline() -> None:
    result = read_back(
        lines({"record": "header", "bbox": "1", "lines": [{"source": "---\r"}, {"source": "---"}]})
    )
    assert skipped(result) == [(1, "header record: 'lines'[0]: 'source' is one line (no line break)")]


def test_the_header_lines_are_kept_with_their_endings() -> None:
    header = {
        "record": "header",
        "bbox": "1",
        "bom": True,
        "lines": [
            {"source": "---", "eol": "\r\n"},
            {"source": "format: bbox/1", "eol": "\n"},
            {"source": "---"},
        ],
    }
    result = read_back(lines(header, {"kind": "user", "source": "u: a"}))
    assert result.text == "\ufeff---\r\nformat: bbox/1\n---\nu: a\n"
    assert read_report(result)[("kept", "header lines")] == ((1,), 3)
    last = dict(header, lines=[*header["lines"][:2], {"source": "---", "eol": ""}])
    assert read_back(lines(last)).text == "\ufeff---\r\nformat: bbox/1\n---"


def test_a_header_record_with_neither_lines_nor_fields_is_an_empty_header() -> None:
    result = read_back(
        lines({"record": "header", "bbox": "1", "bom": True}, {"kind": "user", "source": "u: a"})
    )
    assert result.text == "\ufeffu: a\n" and not result.skipped
    assert ("synthesized", "header text (built from the header record's fields)") not in read_report(result)
    plain = read_back(
        lines({"record": "header", "bbox": "1", "fields": None}, {"kind": "user", "source": "u: a"})
    )
    assert plain.text == "u: a\n" and not plain.skipped


def test_the_header_record_names_the_style_of_the_records_after_it() -> None:
    text = lines({"record": "header", "bbox": "1", "style": "terse", "fields": FIELDS}, {"t": "u", "c": "hi"})
    result = read_back(text)
    assert not result.skipped and body(result.text) == "u: hi\n"
    assert read_report(result)[("synthesized", "event lines (text built from terse values)")] == ((2,), 1)
    # The header record's style wins over the option.
    full = lines({"record": "header", "bbox": "1", "style": "full", "fields": FIELDS}, {"t": "u", "c": "hi"})
    assert skipped(read_back(full, style="terse")) == [(2, "a record needs a 'kind' (a string)")]


def test_records_without_a_header_record() -> None:
    # Terse records (by the option or by their "t") get a synthesized header; full ones none.
    by_key = read_back(lines({"t": "u", "c": "hi"}))
    assert body(by_key.text) == "u: hi\n" and not by_key.skipped
    assert read_report(by_key)[("synthesized", "header (the terse input has no header record)")] == ((1,), 1)
    by_option = read_back("\n" + lines({"n": "x"}, {"t": "u", "c": "hi"}), style="terse")
    assert read_report(by_option)[("synthesized", "header (the terse input has no header record)")] == (
        (2,),
        1,
    )
    assert body(by_option.text) == "u: hi\n"
    full = read_back("\n" + lines({"kind": "user", "source": "u: a"}))
    assert full.text == "u: a\n"
    assert skipped(full) == [(2, 'the first record is not a header record ({"record": "header", …})')]
    assert [(d.code, d.line) for d in full.diagnostics] == [("E004", 2)]  # no header: at its record


@pytest.mark.parametrize(
    "text",
    [
        "",
        lines({"kind": "user", "source": "u: a"}, {"kind": "user", "source": "u: b"}),
        lines({"record": "header", "bbox": "1", "lines": 3}, {"kind": "user", "source": "u: a"}),
    ],
    ids=slug,
)
def test_without_a_header_the_head_is_empty_and_the_body_starts_at_line_1(text: str) -> None:
    from bbox_lark.syntax.parser import Head

    head, *nodes = jsonl.read(Input(data=text), ReadContext(Fidelity(), {}, 0, check=False))
    assert head == Head(False, (), None, 1) and head.bom is False
    assert [n.line for n in nodes] == list(range(1, len(nodes) + 1))


def test_only_blank_lines_hold_no_records() -> None:
    result = read_back("\n \n")
    assert result.text == "" and skipped(result) == [(1, "no header record: the input holds no records")]
    assert [(d.code, d.line) for d in result.diagnostics] == [("E004", 1)]


# -- reading: body records --------------------------------------------------------------------


def test_a_source_may_end_in_a_carriage_return_only_before_another_ending() -> None:
    kept = read_back(
        HEADER_RECORD
        + lines(
            {"kind": "user", "source": "u: a\r", "eol": "\r\n"},
            {"kind": "user", "source": "u: b\r", "eol": ""},
        )
    )
    assert body(kept.text) == "u: a\r\r\nu: b\r" and not kept.skipped
    refused = read_back(HEADER_RECORD + lines({"kind": "user", "source": "u: a\r"}))
    assert skipped(refused) == [(2, "record: 'source' is one line (no line break)")]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"kind": 3}, "a record needs a 'kind' (a string)"),
        ({"kind": "user", "source": None}, "record: 'source' must be a string, got null"),
        (
            {"kind": "user", "source": "u: a", "eol": 1},
            'record: \'eol\' must be one of "\\n", "\\r\\n", "" (not 1)',
        ),
        ({"record": "header", "bbox": "1"}, "a header record is only allowed as the first record"),
        ({"record": None, "kind": "user", "source": "u: a"}, "unknown record type None"),
    ],
    ids=slug,
)
def test_a_bad_body_record_says_what_is_wrong(record: dict[str, Any], message: str) -> None:
    result = read_back(HEADER_RECORD + lines(record, {"kind": "user", "source": "u: b"}))
    assert skipped(result) == [(2, message)]
    assert body(result.text) == "u: b\n"


def test_blank_and_continuation_records_are_read() -> None:
    text = HEADER_RECORD + lines(
        {"kind": "user", "source": "u: a"},
        {"kind": "continuation", "source": "  more"},
        {"kind": "blank", "source": ""},
        {"kind": "continuation", "text": "built"},
    )
    result = read_back(text)
    assert body(result.text) == "u: a\n  more\n\n  built\n" and not result.skipped
    report = read_report(result)
    assert report[("kept", "continuation lines")] == ((3,), 1)
    assert report[("kept", "blank lines")] == ((4,), 1)
    assert report[("synthesized", "continuation lines (text built from values: no 'source')")] == ((5,), 1)


def test_a_line_over_the_limit_is_kept_unparsed_and_one_at_it_is_parsed() -> None:
    line = "t:read a → [ok]"
    text = HEADER_RECORD + lines({"kind": "tool", "source": line}, {"kind": "tool", "source": line + "x"})
    nodes = list(jsonl.read(Input(data=text), ReadContext(Fidelity(), {}, len(line), check=False)))
    assert [(n.kind, n.oversized) for n in nodes[1:]] == [("tool", False), ("unknown", True)]
    flagged = HEADER_RECORD + lines({"kind": "unknown", "source": line, "oversized": True})
    (node,) = list(jsonl.read(Input(data=flagged), ReadContext(Fidelity(), {}, 0, check=False)))[1:]
    assert (node.kind, node.oversized, node.raw) == ("unknown", True, line)
    not_flagged = HEADER_RECORD + lines({"kind": "tool", "source": line, "oversized": 1})
    (node,) = list(jsonl.read(Input(data=not_flagged), ReadContext(Fidelity(), {}, 0, check=False)))[1:]
    assert (node.kind, node.oversized) == ("tool", False)


def test_an_oversized_record_keeps_its_line_ending() -> None:
    text = HEADER_RECORD + lines({"kind": "unknown", "source": "u: long", "oversized": True, "eol": "\r\n"})
    assert body(read_back(text).text) == "u: long\r\n"


@pytest.mark.parametrize(
    ("record", "disagrees"),
    [
        ({"kind": "tool", "name": "read", "text": "a"}, False),
        ({"kind": "tool"}, False),
        ({"kind": "tool", "name": "write"}, True),
        ({"kind": "tool", "text": "b"}, True),
        ({"kind": "user"}, True),
    ],
    ids=slug,
)
def test_values_that_disagree_with_the_source_are_reported(record: dict[str, Any], disagrees: bool) -> None:
    result = read_back(HEADER_RECORD + lines({**record, "source": "t:read a"}))
    assert body(result.text) == "t:read a\n"
    what = ("dropped", "record values that disagree with their source (the source is read)")
    assert read_report(result).get(what) == (((2,), 1) if disagrees else None)
    assert read_report(result)[("kept", "event lines")] == ((2,), 1)


# -- writing: the full style ------------------------------------------------------------------


def test_dump_escapes_only_what_a_reader_could_take_for_a_line_break() -> None:
    assert jsonl.dump({"a": "é\u2028b\x85c\u2029\udcff", "n": [1, None]}) == (
        '{"a":"é\\u2028b\\u0085c\\u2029\\udcff","n":[1,null]}'
    )
    assert jsonl.dump("plain é") == '"plain é"'


def test_the_header_record_holds_each_header_line_and_the_header_faults() -> None:
    header, first = records("\ufeff---\r\nformat: bbox/1\nid: 5\nbad\n---\nu: hi\n")
    assert header == {
        "record": "header",
        "bbox": "1",
        "style": "full",
        "bom": True,
        "lines": [
            {"line": 1, "role": "fence", "source": "---", "eol": "\r\n"},
            {"line": 2, "role": "yaml", "source": "format: bbox/1", "eol": "\n"},
            {"line": 3, "role": "yaml", "source": "id: 5", "eol": "\n"},
            {"line": 4, "role": "yaml", "source": "bad", "eol": "\n"},
            {"line": 5, "role": "fence", "source": "---", "eol": "\n"},
        ],
        "fields": {},
        "closed": True,
        "faults": [
            {"code": "E006", "line": 4, "col": 4, "message": "header YAML: could not find expected ':'"}
        ],
    }
    assert first["session"] is None and first["line"] == 6


def test_a_document_without_a_header_has_an_empty_header_record() -> None:
    header, first = records("u: hi\n")
    assert header == {
        "record": "header",
        "bbox": "1",
        "style": "full",
        "bom": False,
        "lines": [],
        "fields": None,
    }
    assert first == {
        "session": None,
        "line": 1,
        "kind": "user",
        "prefix": "u",
        "text": "hi",
        "source": "u: hi",
        "eol": "\n",
    }


@pytest.mark.parametrize(
    ("value", "session"), [("s", "s"), ("'  '", None), ("5", "5"), ("[a]", None)], ids=slug
)
def test_the_session_is_the_header_id_when_it_is_a_name(value: str, session: str | None) -> None:
    text = f"---\nformat: bbox/1\nid: {value}\n---\nu: hi\n"
    assert [r["session"] for r in records(text)[1:]] == [session]
    assert [r["session"] for r in records(text, style="terse")[1:]] == [session]


def test_line_records_of_each_kind() -> None:
    got = records(HEADER + "u: hi\n  more\n\n# note k=v\n@phase design\nzz: what\n", max_line=1024)[1:]
    assert got == [
        {
            "session": "s",
            "line": 7,
            "kind": "user",
            "prefix": "u",
            "text": "hi",
            "source": "u: hi",
            "eol": "\n",
        },
        {
            "session": "s",
            "line": 8,
            "kind": "continuation",
            "owner": 7,
            "text": "more",
            "source": "  more",
            "eol": "\n",
        },
        {"session": "s", "line": 9, "kind": "blank", "source": "", "eol": "\n"},
        {
            "session": "s",
            "line": 10,
            "kind": "comment",
            "prefix": "#",
            "text": "note k=v",
            "fields": {"k": "v"},
            "source": "# note k=v",
            "eol": "\n",
        },
        {
            "session": "s",
            "line": 11,
            "kind": "lifecycle",
            "prefix": "@",
            "name": "phase",
            "text": "design",
            "args": ["design"],
            "source": "@phase design",
            "eol": "\n",
        },
        {
            "session": "s",
            "line": 12,
            "kind": "unknown",
            "text": "zz: what",
            "source": "zz: what",
            "eol": "\n",
        },
    ]


def test_fields_split_at_the_arrow_the_first_of_a_key_winning() -> None:
    (record,) = records(HEADER + "t:x k=1 k=2 → [ok] a=1 a=2\n")[1:]
    assert record["fields"] == {"k": "1"}
    assert record["result"]["fields"] == {"a": "1"}
    (after,) = records(HEADER + "t:x → k=v\n")[1:]
    assert "fields" not in after and after["result"]["fields"] == {"k": "v"}
    (before,) = records(HEADER + "t:x k=v → [ok] done\n")[1:]
    assert before["fields"] == {"k": "v"} and "fields" not in before["result"]
    (bare,) = records(HEADER + "t:x\n")[1:]
    assert "fields" not in bare and "result" not in bare


def test_a_list_value_is_a_list() -> None:
    event = next(n for n in iter_nodes(HEADER + "t:x k=[1, 2] → [ok] a=[3]\n") if isinstance(n, Event))
    record = jsonl.line_record(event, 7, "s")
    assert record["fields"] == {"k": ["1", "2"]} and record["result"]["fields"] == {"a": ["3"]}
    assert writer.terse_record(event)["a"] == {"k": ["1", "2"]}


def test_an_oversized_line_has_no_values() -> None:
    (record,) = records(HEADER + "t:read " + "a" * 30 + " → [ok]\n", max_line=20)[1:]
    assert record == {
        "session": "s",
        "line": 7,
        "kind": "unknown",
        "oversized": True,
        "source": "t:read " + "a" * 30 + " → [ok]",
        "eol": "\n",
    }


def test_the_writer_numbers_lines_from_the_body_and_reports_each_line() -> None:
    out = convert(HEADER + "u: hi\n  more\n\n# note\n@phase design\nzz: what\n", "bbox", to="jsonl")
    assert [json.loads(line).get("line") for line in out.text.splitlines()] == [None, 7, 8, 9, 10, 11, 12]
    assert write_report(out) == {
        ("kept", "header lines"): ((1,), 6),
        ("kept", "event lines"): ((7,), 1),
        ("kept", "continuation lines"): ((8,), 1),
        ("kept", "blank lines"): ((9,), 1),
        ("kept", "comment lines"): ((10,), 1),
        ("kept", "lifecycle lines"): ((11,), 1),
        ("kept", "unknown lines"): ((12,), 1),
    }
    bare = convert("u: hi\n", "bbox", to="jsonl")
    assert write_report(bare) == {("kept", "event lines"): ((1,), 1)}


def test_the_writer_takes_nodes_without_a_head() -> None:
    nodes = [n for n in iter_nodes(HEADER + "u: a\nu: b\n") if isinstance(n, Event)]
    out = io.StringIO()
    jsonl.write(nodes, out, WriteContext(Fidelity()))
    assert [(r["line"], r["session"]) for r in map(json.loads, out.getvalue().splitlines())] == [
        (1, None),
        (2, None),
    ]


# -- writing: the terse style -----------------------------------------------------------------

TERSE_CASES = [
    ('x:explore "ad tier" → found', {"t": "x", "n": "explore", "q": "ad tier", "r": "found"}),
    ("x:explore a b", {"t": "x", "n": "explore", "a": ["a", "b"]}),
    ("x:explore", {"t": "x", "n": "explore"}),
    ("x:explore k=v", {"t": "x", "n": "explore", "a": {"k": "v"}}),
    (
        "c:github.pr.create q=1 → [203 pr]",
        {"t": "c", "s": "github", "m": "pr.create", "a": {"q": "1"}, "r": {"pr": 203}},
    ),
    ("c:github", {"t": "c", "s": "github"}),
    ("m:auto", {"t": "m", "v": "auto"}),
    ("m:auto k=v", {"t": "m", "v": "auto", "a": {"k": "v"}}),
    ("t:grep a id=1 → [2 files]", {"t": "t", "n": "grep", "a": "a", "f": {"id": "1"}, "r": {"files": 2}}),
    ("t:grep [1, 2]", {"t": "t", "n": "grep", "a": [["1", "2"]]}),
    ("x:explore [a]", {"t": "x", "n": "explore", "a": [["a"]]}),
    ("t:grep a b → [3]", {"t": "t", "n": "grep", "a": ["a", "b"], "r": 3}),
    ("t:grep → [ok] done", {"t": "t", "n": "grep", "r": "[ok] done"}),
    ("t:grep → [ok]", {"t": "t", "n": "grep", "r": "ok"}),
    ("t:grep → [running]", {"t": "t", "n": "grep", "r": "running"}),
    ("t:grep → [running] still", {"t": "t", "n": "grep", "r": "[running] still"}),
    ("t:grep → [2 files] more", {"t": "t", "n": "grep", "r": "[2 files] more"}),
    ("t:grep → [error: denied]", {"t": "t", "n": "grep", "r": {"err": "denied"}}),
    ("t:grep → [error: denied] more", {"t": "t", "n": "grep", "r": "[error: denied] more"}),
    ("t:grep → [error]", {"t": "t", "n": "grep", "r": "[error]"}),
    ("t:grep → k=v a=1 k=w", {"t": "t", "n": "grep", "r": {"k": "v", "a": "1"}}),
    ("t:grep → plain text k=v", {"t": "t", "n": "grep", "r": "plain text k=v"}),
    ("t:grep k=v k=w → [2 files]", {"t": "t", "n": "grep", "a": {"k": "v"}, "r": {"files": 2}}),
    ("u: hello k=v", {"t": "u", "c": "hello k=v"}),
    ("a: → [ok]", {"t": "a", "c": "", "r": "ok"}),
    ("@phase design", {"t": "@", "n": "phase", "a": "design"}),
    ("@end → [ok]", {"t": "@", "n": "end", "r": "ok"}),
]


@pytest.mark.parametrize(("line", "record"), TERSE_CASES, ids=[slug(line) for line, _ in TERSE_CASES])
def test_terse_records(line: str, record: dict[str, Any]) -> None:
    assert records(HEADER + line + "\n", style="terse")[1:] == [{**record, "session": "s"}]


def test_the_terse_header_record_has_no_lines() -> None:
    (header,) = records("\ufeff" + HEADER, style="terse")
    assert header == {
        "record": "header",
        "bbox": "1",
        "style": "terse",
        "bom": True,
        "fields": FIELDS,
        "closed": True,
    }
    out = convert("u: hi\n", "bbox", to="jsonl", style="terse")
    assert json.loads(out.text.splitlines()[0]) == {
        "record": "header",
        "bbox": "1",
        "style": "terse",
        "bom": False,
        "fields": None,
    }
    assert not [what for what in write_report(out) if "header" in what[1]]


def test_the_terse_writer_reports_what_it_keeps_and_drops() -> None:
    text = (
        HEADER
        + (
            "t:x k=1 → plain a=1\n"  # 7
            "  cont\n"  # 8
            "\n"  # 9
            "# note\n"  # 10
            "# " + "z" * 40 + "\n"  # 11
            "@phase design\n"  # 12
            "zz: what\n"  # 13
            "u: " + "y" * 40 + "\n"  # 14
            "a: hi # metrics tokens_in=3\n"  # 15
            "t:x → ok=1\n"  # 16
        )
    )
    out = convert(text, "bbox", to="jsonl", style="terse", max_line=40)
    assert [r.get("t") for r in map(json.loads, out.text.splitlines()[1:])] == ["t", "@", "a", "t"]
    assert write_report(out) == {
        ("kept", "header fields (as a map)"): ((1,), 1),
        ("dropped", "header source text (layout, quoting, YAML comments)"): ((1,), 1),
        ("kept", "event lines"): ((7, 15, 16), 3),
        ("dropped", "line source text (spacing, quoting, line endings)"): ((7, 12, 15, 16), 4),
        ("kept", "fields after the arrow (in the result text)"): ((7,), 1),
        ("dropped", "continuation lines"): ((8,), 1),
        ("dropped", "blank lines"): ((9,), 1),
        ("dropped", "comment lines"): ((10,), 1),
        ("dropped", "oversized lines"): ((11, 14), 2),
        ("kept", "lifecycle lines"): ((12,), 1),
        ("dropped", "unknown lines"): ((13,), 1),
        ("dropped", "metrics comments"): ((15,), 1),
    }


# -- writing: long records, a part at a time ---------------------------------------------------


@pytest.mark.parametrize(
    "record",
    [
        {"a": "x\u2028y" * 5, "b": ["é\udcff" * 3, ("t", 1)], "c": {"d": None, "e": 2.5}},
        {"s": "abcdef", "m": {1: "one", "k": "v"}, "n": {2: [1]}},
        {"s": "abc", "t": "abcd", "l": [], "d": {}},
    ],
)
@pytest.mark.parametrize("piece", [1, 3, 4])
def test_a_long_record_written_in_pieces_is_its_dump(record: dict[str, Any], piece: int) -> None:
    out = io.StringIO()
    writer.write_record(out, record, long=True, piece=piece)
    assert out.getvalue() == jsonl.dump(record) + "\n"
    short = io.StringIO()
    writer.write_record(short, record)
    assert short.getvalue() == out.getvalue()


def test_the_terse_writer_called_on_an_oversized_line_drops_it() -> None:
    # The writer sends an oversized line (an Unknown) to record_unknown; record_event, public
    # too, drops one the same way.
    (node,) = [
        n for n in iter_nodes(HEADER + "t:read " + "a" * 30 + "\n", max_line=20) if isinstance(n, Event)
    ]
    fidelity = Fidelity()
    assert writer.TerseWriter(fidelity).record_event(node) is None
    assert [(e.action, e.what, e.lines) for e in fidelity.entries] == [("dropped", "oversized lines", (7,))]


def test_records_built_from_values_are_written_back_with_their_text_as_source() -> None:
    text = HEADER_RECORD + lines(
        {"kind": "tool", "name": "read", "args": ["a.rs"], "result": {"kind": "ok"}},
        {"kind": "continuation", "text": "more"},
    )
    out = convert(text, "jsonl", to="jsonl")
    assert not out.skipped
    got = [json.loads(line) for line in out.text.splitlines()[1:]]
    assert [(r["line"], r["kind"], r["source"]) for r in got] == [
        (7, "tool", "t:read a.rs → [ok]"),
        (8, "continuation", "  more"),
    ]


class Writes(io.StringIO):
    """A text sink that keeps the length of each write."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def write(self, text: str) -> int:
        self.sizes.append(len(text))
        return super().write(text)


@pytest.mark.parametrize("style", ["full", "terse"])
def test_a_line_over_a_mebibyte_is_written_a_piece_at_a_time(style: str) -> None:
    # The same record either way; a line over writer._PIECE characters is written in
    # pieces of writer._CHUNK (its record holds the line twice: a whole dump held both).
    size = writer._PIECE
    for length, pieces in ((size, False), (size + 1, True)):
        text = HEADER + "u: " + "x" * (length - 3) + "\n"
        items = list(iter_nodes(text, max_line=2 * size))
        out = Writes()
        jsonl.write(items, out, WriteContext(Fidelity(), {"style": style}))
        whole = io.StringIO()
        for item in items[1:]:
            record = writer.line_record(item, 7, "s") if style == "full" else writer.terse_record(item)
            record = record if style == "full" else {**record, "session": "s"}
            whole.write(jsonl.dump(record) + "\n")
        assert out.getvalue().splitlines()[1] + "\n" == whole.getvalue()
        # In pieces, the longest write is one piece of the line; whole, the record and its break.
        assert max(out.sizes) == (writer._CHUNK if pieces else len(whole.getvalue()))


def test_a_name_beside_a_line_that_has_none_disagrees_with_it() -> None:
    result = read_back(HEADER_RECORD + lines({"kind": "continuation", "source": "  more", "name": "x"}))
    assert body(result.text) == "  more\n"
    what = ("dropped", "record values that disagree with their source (the source is read)")
    assert read_report(result)[what] == ((2,), 1)


def test_records_after_a_gap_keep_their_lines_without_a_header() -> None:
    text = lines({"kind": "user", "source": "u: a"}, "", "", {"kind": "unknown", "source": "zz: b"})
    result = read_back(text)
    assert result.text == "u: a\nzz: b\n"
    assert [(d.code, d.line) for d in result.diagnostics] == [("E004", 1), ("W003", 4)]


def test_header_lines_are_read_with_the_line_limit() -> None:
    header = {
        "record": "header",
        "bbox": "1",
        "lines": [
            {"source": "---"},
            {"source": "format: bbox/1"},
            {"source": "id: a-long-name"},
            {"source": "---"},
        ],
    }
    for limit, fields in ((0, {"format": "bbox/1", "id": "a-long-name"}), (14, {"format": "bbox/1"})):
        head = next(
            iter(jsonl.read(Input(data=lines(header)), ReadContext(Fidelity(), {}, limit, check=False)))
        )
        assert head.header_info is not None and dict(head.header_info.fields) == fields


def test_the_check_finds_blobs_beside_the_jsonl_file(tmp_path: Path) -> None:
    (tmp_path / ".bbox-blobs").mkdir()
    sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    text = HEADER_RECORD + lines({"kind": "tool", "source": f"t:read a.rs → @blob sha256={sha} bytes=4"})
    assert not read_back(text).diagnostics  # no folder to look in
    missing = read_back(text, path=tmp_path / "s.jsonl")
    assert [(d.code, d.line) for d in missing.diagnostics] == [("E013", 2)]


def test_the_check_takes_the_allowed_secrets() -> None:
    token = "gh" + "p" + "_" + "FAKEfake0123456789notARealTokenABC12"
    text = HEADER_RECORD + lines({"kind": "user", "source": f"u: x {token}"})
    assert [(d.code, d.line) for d in read_back(text).diagnostics] == [("S001", 2)]
    assert not read_back(text, allowed_secrets=[token]).diagnostics


def test_read_without_a_style_option_reads_the_full_style() -> None:
    # convert passes the option's default; jsonl.read called without it reads full records.
    fidelity = Fidelity()
    text = HEADER_RECORD + lines({"kind": "user", "source": "u: a"})
    nodes = list(jsonl.read(Input(data=text), ReadContext(fidelity, {}, 0, check=False)))
    assert [n.raw for n in nodes[1:]] == ["u: a"] and not fidelity.skipped
