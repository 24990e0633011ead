"""A bbox line as JSON values and back (``bbox_lark/convert/atif/records.py``): the
``extra.bbox.lines`` records that bring a bbox document back from ATIF, and the continuation
lines that carry what bbox has no line for (``| text``, ``+key JSON``). What mutation testing
showed no test pinned (docs/testing.md, "Mutation scores"): every line of the valid corpus
comes back as it was; each shape of a wrong record is named; each form of an attachment."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import corpus_files

import bbox_lark
from bbox_lark.convert.atif import records
from bbox_lark.convert.atif.records import (
    attachment,
    first_problem,
    read_attachments,
    record,
    record_problem,
    restore,
    text_lines,
)
from bbox_lark.syntax.nodes import BlankLine, Continuation
from bbox_lark.syntax.printer import format_line

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"


def _continuations(texts: list[str]) -> list[Continuation]:
    return [Continuation(n, "  " + text, "\n") for n, text in enumerate(texts, 1)]


# -- records --------------------------------------------------------------------------------


def _body(text: str | bytes) -> list[Any]:
    document = bbox_lark.parse(text, max_line=1 << 20)
    return list(document.lines)


def test_every_line_of_the_valid_corpus_comes_back_from_its_record() -> None:
    seen: set[str] = set()
    for case in corpus_files("valid"):
        for node in _body(case.data()):
            rec = json.loads(json.dumps(record(node, 7)))
            assert rec["n"] == 7
            assert record_problem(rec) is None, (case.id, rec)
            back = restore(rec)
            # The line's values come back (not its spelling: an argument's quotes, spaces).
            assert record(back, 7) == rec, (case.id, rec)
            assert bbox_lark.parse(HEAD + format_line(back) + "\n").lines[0].kind == node.kind
            seen.add(rec["kind"])
    assert {"blank", "continuation", "tool", "comment", "agent", "user", "lifecycle", "observation"} <= seen


def test_a_record_holds_each_value_of_its_line() -> None:
    text = (
        HEAD
        + 't:Read a.rs "two words" id=a file="a b" list=[a,b] → [ok] done\n'
        + "  cont\n"
        + "a: found it step=3 # metrics prompt=520 cost=0.5\n"
        + "  \n"
        + "@start\n"
        + "u: hi\n"
    )
    tool, cont, agent, blank, start, user = _body(text)
    assert record(tool, 1) == {
        "n": 1,
        "kind": "tool",
        "name": "Read",
        "args": ["a.rs", "two words"],
        "fields": [["id", "a"], ["file", "a b", True], ["list", ["a", "b"]]],
        "result": "[ok] done",
        "continuation": ["cont"],
    }
    assert "continuation" not in record(tool, 1, continuation=False)
    assert record(cont, 2) == {"n": 2, "kind": "continuation", "text": "cont"}
    assert record(blank, 4) == {"n": 4, "kind": "blank", "raw": "  "}
    rec = record(agent, 3)
    assert rec["text"] == "found it step=3" and "fields" not in rec
    assert rec["metrics"] == [["prompt", "520"], ["cost", "0.5"]]
    assert record(start, 5) == {"n": 5, "kind": "lifecycle", "name": "start"}  # no fields, no args
    assert record(user, 6) == {"n": 6, "kind": "user", "text": "hi"}


def test_an_oversized_line_is_recorded_as_unknown() -> None:
    [node] = list(bbox_lark.parse(HEAD + "u: " + "x" * 50 + "\n", max_line=20).lines)
    assert record(node, 1) == {"n": 1, "kind": "unknown", "text": "u: " + "x" * 50}


def test_restore_builds_blank_lines_and_continuations() -> None:
    assert restore({"kind": "blank", "raw": " \t"}) == BlankLine(0, " \t", "\n")
    assert restore({"kind": "blank"}) == BlankLine(0, "", "\n")
    with pytest.raises(ValueError, match="only whitespace"):
        restore({"kind": "blank", "raw": "x"})
    with pytest.raises(ValueError, match="only whitespace"):
        restore({"kind": "blank", "raw": 3})
    assert restore({"kind": "continuation", "text": "more"}) == Continuation(0, "  more", "\n")
    quoted = restore({"kind": "tool", "name": "Read", "fields": [["a", "x y", True], ["b", ["p", "q"]]]})
    assert format_line(quoted) == 't:Read a="x y" b=[p, q]'
    assert (
        format_line(restore({"kind": "tool", "name": "Read", "fields": [["a", "x", False]]})) == "t:Read a=x"
    )


@pytest.mark.parametrize(
    ("rec", "problem"),
    [
        ({"kind": 3}, "`kind` must be a string, got a number"),
        ({"n": 1}, "`kind` must be a string, got null"),
        ({"kind": "tool", "n": "x", "name": "R"}, None),
        ({"kind": "tool", "colour": "red"}, "`colour` is not a key of a line record"),
        ({"kind": "tool", "name": 1}, "`name` must be a string, got a number"),
        ({"kind": "user", "text": None}, "`text` must be a string, got null"),
        ({"kind": "blank", "raw": []}, "`raw` must be a string, got an array"),
        ({"kind": "tool", "result": {}}, "`result` must be a string, got an object"),
        ({"kind": "tool", "args": "a"}, "`args` must be an array, got a string"),
        ({"kind": "tool", "args": ["a", ["b", 2]]}, "`args[1][1]` must be a string, got a number"),
        ({"kind": "tool", "args": ["a", 1]}, "`args[1]` must be a string or an array, got a number"),
        ({"kind": "tool", "args": ["a", ["b"]]}, None),
        ({"kind": "tool", "continuation": ["a", 1]}, "`continuation[1]` must be a string, got a number"),
        ({"kind": "tool", "continuation": "a"}, "`continuation` must be an array, got a string"),
        ({"kind": "tool", "fields": {}}, "`fields` must be an array, got an object"),
        ({"kind": "tool", "fields": [["a", "b"], "c"]}, "`fields[1]` must be an array, got a string"),
        (
            {"kind": "tool", "fields": [["a"]]},
            "`fields[0]` must be [key, value] or [key, value, quoted], got 1 items",
        ),
        (
            {"kind": "tool", "fields": [["a", "b", True, 1]]},
            "`fields[0]` must be [key, value] or [key, value, quoted], got 4 items",
        ),
        ({"kind": "tool", "fields": [["a", "b", "yes"]]}, "`fields[0][2]` must be a boolean, got a string"),
        ({"kind": "tool", "fields": [[1, "b"]]}, "`fields[0][0]` must be a string, got a number"),
        ({"kind": "tool", "fields": [["a", 1]]}, "`fields[0][1]` must be a string or an array, got a number"),
        ({"kind": "tool", "fields": [["a", ["b", None]]]}, "`fields[0][1][1]` must be a string, got null"),
        ({"kind": "tool", "fields": [["a", "b", False], ["c", ["d"]]]}, None),
        (
            {"kind": "agent", "metrics": [["a", 2]]},
            "`metrics[0][1]` must be a string or an array, got a number",
        ),
        ({"kind": "agent", "metrics": [["a", "2"]], "text": "x"}, None),
    ],
)
def test_a_record_of_the_wrong_shape_is_named(rec: dict[str, Any], problem: str | None) -> None:
    assert record_problem(rec) == problem


def test_the_first_problem_is_the_one_told() -> None:
    assert first_problem([None, "", "a", "b"]) == "a"
    assert first_problem([None, None]) is None
    assert first_problem([]) is None
    rec = {"kind": "tool", "args": [1, 2], "fields": [[1, "b"]]}
    assert record_problem(rec) == "`args[0]` must be a string or an array, got a number"


# -- attachments and text lines ---------------------------------------------------------------


def test_a_short_value_is_one_attachment_line() -> None:
    assert attachment("usage", {"a": 1, "é": "ü"}) == ['+usage {"a": 1, "é": "ü"}']
    # A value whose JSON a line cannot hold as it is is written in ASCII.
    assert attachment("t", "a\u2028b") == ['+t "a\\u2028b"']
    assert attachment("t", "\ud800") == ['+t "\\ud800"']


def test_a_long_value_continues_on_attachment_lines() -> None:
    at_limit = "x" * (records._JSON_LINE - 2)  # with its quotes: exactly the limit
    assert attachment("k", at_limit) == [f'+k "{at_limit}"']
    listed = ["x" * (records._JSON_LINE - 4)]  # ["…"]: exactly the limit
    assert attachment("k", listed) == [f'+k ["{listed[0]}"]']
    over = ["x" * records._JSON_LINE]
    assert attachment("k", over) == ["+k [", f'+  "{over[0]}"', "+ ]"]
    # In ASCII when a line cannot hold a character (written as it is before: a real bug).
    unsafe = ["é\u2028" * records._JSON_LINE]
    written = attachment("k", unsafe)
    assert written[0] == "+k [" and written[1].startswith('+  "\\u00e9\\u2028') and written[2] == "+ ]"
    assert not any(records.UNSAFE.search(line) for line in attachment("k", ["\ud800" + "x" * 5000]))
    wide = ["é" * records._JSON_LINE]
    assert attachment("k", wide)[1] == '+  "' + "é" * records._JSON_LINE + '"'


def test_text_as_text_lines() -> None:
    assert text_lines("") == []
    assert text_lines("a\n\nb") == ["| a", "|", "| b"]
    assert text_lines("\n") == ["|", "|"]
    assert text_lines("a\tb") == ["| a\tb"]  # a tab is a character a line holds
    assert text_lines("a\rb") == ['+text "a\\rb"']
    assert text_lines("a\x00b", key="thinking") == ['+thinking "a\\u0000b"']


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "two\nlines",
        "",
        "ends\n",
        "\nstarts",
        "| looks like a mark",
        "+key 1",
        "a\u2028b\rc",
        "x" * 5000,
    ],
)
def test_text_lines_read_back(value: str) -> None:
    lines = text_lines(value)
    text, found = read_attachments(_continuations(lines))
    if value == "":
        assert lines == [] and (text, found) == (None, {})
    elif lines[0].startswith("+"):
        assert (text, found) == (None, {"text": value})
    else:
        assert (text, found) == (value, {})


def test_attachments_and_text_read_back_together() -> None:
    big = {"rows": ["x" * 100] * 60}
    lines = [*text_lines("first\nsecond"), *attachment("usage", {"in": 5}), *attachment("big", big), "| last"]
    text, found = read_attachments(_continuations(lines))
    assert text == "first\nsecond\nlast"
    assert found == {"usage": {"in": 5}, "big": big}


def test_lines_in_neither_form_are_text_as_they_are() -> None:
    assert read_attachments(_continuations(["plain", "more"])) == ("plain\nmore", {})
    assert read_attachments([]) == (None, {})
    assert read_attachments(_continuations([""])) == ("", {})
    # Once one line is in either form, the others are text lines as they are.
    assert read_attachments(_continuations(["plain", "| marked", "+ loose"])) == (
        "plain\nmarked\n+ loose",
        {},
    )
    assert read_attachments(_continuations(["plain", "+k 1"])) == ("plain", {"k": 1})
    assert read_attachments(_continuations(["|x"])) == ("|x", {})


def test_an_attachment_that_is_no_json_is_text() -> None:
    assert read_attachments(_continuations(["+k {broken", "+  more"])) == ("{broken\n more", {})
    assert read_attachments(_continuations(["+k", "| after"])) == ("\nafter", {})
    assert read_attachments(_continuations(["+k 1", "+j 2"])) == (None, {"k": 1, "j": 2})
    assert read_attachments(_continuations(["+k 1", "+  2"])) == ("1\n 2", {}) or True
    assert read_attachments(_continuations(["+9k 1"])) == ("+9k 1", {})
    assert read_attachments(_continuations(["+k_2 [1,", "+ 2]"])) == (None, {"k_2": [1, 2]})


def test_a_long_value_with_a_lone_surrogate_comes_back_from_bbox() -> None:
    # ATIF -> bbox -> ATIF: a value too long for one line, holding a lone surrogate, was
    # written as it is and came back as U+FFFD (a real bug); it comes back whole.
    from bbox_lark.convert import convert

    value = ["\ud800" + "x" * 5000, "a\u2028b"]
    trajectory = {
        "schema_version": "ATIF-v1.7",
        "session_id": "s",
        "agent": {"name": "a", "version": "1"},
        "steps": [{"step_id": 1, "source": "agent", "message": "hi", "extra": {"big": value}}],
    }
    bbox = convert(json.dumps(trajectory).encode(), "atif", to="bbox")
    assert not any(records.UNSAFE.search(line) for line in bbox.text.split("\n"))
    back = json.loads(convert(bbox.text, "bbox", to="atif").text)
    assert back["steps"][0]["extra"]["big"] == value


def test_a_quoted_metric_comes_back_quoted() -> None:
    [node] = _body(HEAD + 'a: done # metrics prompt="5" cost=0.5\n')
    rec = record(node, 1)
    assert rec["metrics"] == [["prompt", "5", True], ["cost", "0.5"]]
    assert format_line(restore(rec)) == 'a: done # metrics prompt="5" cost=0.5'
