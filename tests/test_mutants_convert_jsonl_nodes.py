"""Nodes built from a JSON Lines record's values (``bbox_lark/convert/jsonl/nodes.py``), pinned
down where mutation testing found nothing holding them: each kind of line in the full style and
the terse one, the values each takes (fields, typed values, arguments, results, metrics), and the
message of each bad record (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from typing import Any

import pytest

from bbox_lark.convert.jsonl.nodes import build_record, terse_node
from bbox_lark.convert.jsonl.tables import RecordError


def full(record: dict[str, Any], kind: str) -> tuple[str, int, str, str, str | None]:
    node = build_record(record, kind, 3, "\r\n")
    return type(node).__name__, node.line, node.raw, node.eol, getattr(node, "source", None)


def terse(record: dict[str, Any]) -> str:
    node = terse_node(record, 4)
    assert (node.line, node.eol, node.source) == (4, "\n", node.raw)
    return node.raw


def test_blank_and_continuation_records() -> None:
    assert full({}, "blank") == ("BlankLine", 3, "", "\r\n", None)
    assert full({"text": "more"}, "continuation") == ("Continuation", 3, "  more", "\r\n", None)


@pytest.mark.parametrize(
    ("record", "kind", "raw"),
    [
        ({"text": "hello"}, "agent", "a: hello"),
        ({"text": "hello", "fields": {"step": 1}}, "agent", "a: hello step=1"),
        ({"text": "hello step=1", "fields": {"step": "1"}}, "agent", "a: hello step=1"),
        (
            {"text": "hi", "metrics": {"tokens_in": 5}, "result": {"text": "ok"}},
            "agent",
            "a: hi → ok # metrics tokens_in=5",
        ),
        ({"text": "note", "fields": {"k": "v"}}, "comment", "# note k=v"),
        ({"text": "note k=v", "fields": {"k": "v"}}, "comment", "# note k=v"),
        ({"text": "zz: what"}, "unknown", "zz: what"),
        (
            {"args": ["x"], "fields": {"k": [1, 2.5, True, None]}},
            "observation",
            "o: x k=[1, 2.5, true, null]",
        ),
        ({"name": "phase", "args": ["design"]}, "lifecycle", "@phase design"),
        (
            {"name": "read", "args": ["src/a.py"], "result": {"kind": "count", "number": 3, "unit": "lines"}},
            "tool",
            "t:read src/a.py → [3 lines]",
        ),
        (
            {
                "name": "read",
                "typed": {"attempt": {"number": 1, "of": 3}, "step": 2, "k": "v"},
                "fields": {"k": "w"},
            },
            "tool",
            "t:read k=w attempt=1/3 step=2",
        ),
        ({"name": "read", "typed": {"attempt": {"number": 2}}}, "tool", "t:read attempt=2"),
        ({"name": "read", "result": {"kind": "fields", "fields": {"a": "b"}}}, "tool", "t:read → a=b"),
        ({"name": "read", "result": {"text": "done"}}, "tool", "t:read → done"),
        ({"name": "read", "result": {}}, "tool", 't:read → ""'),
        (
            {
                "name": "read",
                "result": {"kind": "blob", "blob": {"sha256": "ab" * 32, "bytes": 10, "mime": "text/plain"}},
            },
            "tool",
            "t:read → @blob sha256=" + "ab" * 32 + " bytes=10 mime=text/plain",
        ),
        ({"name": "read", "result": {"kind": "error", "message": "boom"}}, "tool", "t:read → [err: boom]"),
        (
            {"name": "read", "result": {"kind": "count", "number": 3, "rest": "more"}},
            "tool",
            "t:read → [3] more",
        ),
        ({"name": "read", "metrics": {"tokens_in": 5}}, "tool", "t:read # metrics tokens_in=5"),
        (
            {"name": "read", "result": {"kind": "retry", "number": 2, "total": 3}},
            "tool",
            "t:read → [retry 2/3]",
        ),
        (
            {"name": "pick", "result": {"kind": "selected", "choices": ["a", "b"]}},
            "tool",
            "t:pick → [selected: a, b]",
        ),
        (
            {"name": "pick", "result": {"kind": "auto_choice", "choices": ["a"], "message": "why"}},
            "tool",
            't:pick → [auto: a, reason="why"]',
        ),
    ],
)
def test_a_full_record_is_built_from_its_values(record: dict[str, Any], kind: str, raw: str) -> None:
    built = full(record, kind)
    assert built[1:] == (3, raw, "\r\n", raw)


@pytest.mark.parametrize(
    ("record", "kind", "message"),
    [
        ({"text": " "}, "continuation", "a continuation record needs 'text' on one line"),
        ({"text": "a\nb"}, "continuation", "a continuation record needs 'text' on one line"),
        ({"text": "a\r"}, "continuation", "a continuation record needs 'text' on one line"),
        ({}, "continuation", "'text' must be a string"),
        ({"text": 5}, "agent", "'text' must be a string"),
        (
            {"args": ["design"]},
            "lifecycle",
            "cannot build a lifecycle line from its values: '' is not a lifecycle primitive's name",
        ),
        ({"name": 5}, "tool", "'name' must be a string"),
        ({"name": "read", "fields": [1]}, "tool", "'fields' must be an object"),
        (
            {"name": "read", "fields": {"k": {}}},
            "tool",
            "'fields.k' must be a string, a number or a list of them",
        ),
        (
            {"name": "read", "fields": {"k": [{}]}},
            "tool",
            "'fields.k' must be a string, a number or a list of them",
        ),
        ({"name": "read", "args": "x"}, "tool", "'args' must be a list"),
        ({"name": "read", "typed": [1]}, "tool", "'typed' must be an object"),
        (
            {"name": "read", "typed": {"attempt": {"number": {}}}},
            "tool",
            "'typed.attempt' must be a string, a number or a list of them",
        ),
        (
            {"name": "read", "typed": {"step": {}}},
            "tool",
            "'typed.step' must be a string, a number or a list of them",
        ),
        ({"name": "read", "result": 5}, "tool", "'result' must be an object"),
        ({"name": "read", "result": {"kind": 1}}, "tool", "'result': 'kind' and 'text' must be strings"),
        ({"name": "read", "result": {"text": 1}}, "tool", "'result': 'kind' and 'text' must be strings"),
        ({"name": "read", "result": {"blob": 5}}, "tool", "'result.blob' must be an object"),
        ({"name": "read", "result": {"choices": [1]}}, "tool", "'result.choices' must be a list of strings"),
        ({"name": "read", "result": {"choices": "ab"}}, "tool", "'result.choices' must be a list of strings"),
        (
            {"name": "read", "result": {"kind": "count", "number": True}},
            "tool",
            "'result': True is not a whole number",
        ),
        (
            {"name": "read", "result": {"kind": "count", "number": "3"}},
            "tool",
            "'result': '3' is not a whole number",
        ),
        ({"name": "read", "result": {"kind": "error", "message": 5}}, "tool", "'result': 5 is not a string"),
        ({"name": "read", "result": {"kind": "nope"}}, "tool", "'result': unknown result kind 'nope'"),
        ({"name": "read", "metrics": [1]}, "tool", "'metrics' must be an object"),
        (
            {"name": "bad name!"},
            "tool",
            "cannot build a tool line from its values: 'bad name!' is not a name for a tool line",
        ),
    ],
)
def test_a_bad_full_record_says_what_is_wrong(record: dict[str, Any], kind: str, message: str) -> None:
    with pytest.raises(RecordError) as raised:
        build_record(record, kind, 3, "\n")
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("record", "raw"),
    [
        ({"t": "u", "c": "hello"}, "u: hello"),
        ({"t": "u"}, "u:"),
        ({"t": "u", "c": "hello", "a": {"k": "v"}}, "u: hello k=v"),
        ({"t": "t", "n": "read", "a": ["src/a.py"], "r": {"lines": 186}}, "t:read src/a.py → [186 lines]"),
        ({"t": "t", "n": "read", "a": "src/a.py", "r": "ok"}, "t:read src/a.py → [ok]"),
        ({"t": "t", "n": "grep", "q": "TODO", "a": "src", "r": 186}, "t:grep TODO src → [186]"),
        ({"t": "t", "n": "read", "r": {"err": "boom"}}, "t:read → [err: boom]"),
        ({"t": "t", "n": "read", "r": {"error": "boom"}}, "t:read → [err: boom]"),
        ({"t": "t", "n": "read", "r": {"a": "b", "c": "d"}}, "t:read → a=b c=d"),
        ({"t": "t", "n": "read", "r": {"k": "v"}}, "t:read → k=v"),
        ({"t": "t", "n": "read", "r": {"lines": True}}, "t:read → lines=true"),
        ({"t": "t", "n": "read", "r": "[3 lines]"}, "t:read → [3 lines]"),
        ({"t": "t", "n": "read", "r": "  done  "}, "t:read → done"),
        ({"t": "@", "n": "phase", "a": ["design"]}, "@phase design"),
        ({"t": "c", "s": "github", "m": "issues"}, "c:github.issues"),
        ({"t": "c", "s": "github"}, "c:github"),
        ({"t": "m", "v": "auto"}, "m:auto"),
        ({"t": "p", "a": ["create", "x"]}, "p:create x"),
        ({"t": "p", "a": "create"}, "p:create"),
        ({"t": "p", "n": "create", "a": ["x"]}, "p:create x"),
        ({"t": "o", "a": ["x"]}, "o: x"),
        ({"t": "t", "n": 5}, "t:5"),
        ({"t": "t", "n": "read", "title": "T", "f": {"k": "v"}}, "t:read k=v title=T"),
        ({"t": "t", "n": "read", "f": {"title": "F"}, "title": "T"}, "t:read title=F"),
        ({"t": "t", "n": "read", "a": {"k": [1, 2]}}, "t:read k=[1, 2]"),
    ],
)
def test_a_terse_record_is_built_from_its_values(record: dict[str, Any], raw: str) -> None:
    assert terse(record) == raw


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({}, 'a terse record needs \'t\' (a prefix such as "u" or "t")'),
        ({"t": 5}, 'a terse record needs \'t\' (a prefix such as "u" or "t")'),
        ({"t": "zz"}, "unknown terse type 't': 'zz'"),
        ({"t": "t", "n": "read", "r": [1]}, "'r' must be a string, a number or an object, not an array"),
        ({"t": "t", "n": "read", "r": True}, "'r' must be a string, a number or an object, not a boolean"),
        ({"t": "@", "a": ["design"]}, "cannot build a @: line from its values: 'n' must be a string"),
        ({"t": "u", "c": 5}, "cannot build a u: line from its values: 'c' must be a string"),
        (
            {"t": "t", "n": "bad name!"},
            "cannot build a t: line from its values: 'bad name!' is not a name for a tool line",
        ),
        ({"t": "t", "q": {}}, "'q' must be a string, a number or a list of them"),
        ({"t": "t", "a": {}, "f": [1]}, "'f' must be an object"),
        (
            {"t": "c", "s": {}},
            "cannot build a c: line from its values: 's' must be a string, a number or a list of them",
        ),
        (
            {"t": "c", "s": "x", "m": {}},
            "cannot build a c: line from its values: 'm' must be a string, a number or a list of them",
        ),
        (
            {"t": "m", "v": {}},
            "cannot build a m: line from its values: 'v' must be a string, a number or a list of them",
        ),
        (
            {"t": "t", "n": {}},
            "cannot build a t: line from its values: 'n' must be a string, a number or a list of them",
        ),
        ({"t": "t", "a": {}, "title": {}}, "'title' must be a string, a number or a list of them"),
    ],
)
def test_a_bad_terse_record_says_what_is_wrong(record: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError) as raised:
        terse_node(record, 4)
    assert str(raised.value) == message


RESULT = {"kind": "count", "number": 3, "unit": "lines"}


@pytest.mark.parametrize(
    ("record", "kind", "raw"),
    [
        (
            {
                "name": "phase",
                "args": ["design"],
                "fields": {"k": "v"},
                "result": RESULT,
                "metrics": {"tokens_in": 5},
            },
            "lifecycle",
            "@phase design k=v → [3 lines] # metrics tokens_in=5",
        ),
        (
            {"args": ["x"], "fields": {"k": "v"}, "result": RESULT, "metrics": {"tokens_in": 5}},
            "observation",
            "o: x k=v → [3 lines] # metrics tokens_in=5",
        ),
        (
            {
                "text": "hi step=1",
                "fields": {"step": "1", "k": "v"},
                "result": RESULT,
                "metrics": {"tokens_in": 5},
            },
            "agent",
            "a: hi step=1 k=v → [3 lines] # metrics tokens_in=5",
        ),
    ],
)
def test_every_value_of_a_full_record_is_kept(record: dict[str, Any], kind: str, raw: str) -> None:
    assert full(record, kind)[2] == raw


@pytest.mark.parametrize(
    ("record", "raw"),
    [
        ({"t": "@", "n": "phase", "a": ["design"], "f": {"k": "v"}, "r": "ok"}, "@phase design k=v → [ok]"),
        ({"t": "o", "a": ["x"], "f": {"k": "v"}, "r": "ok"}, "o: x k=v → [ok]"),
        ({"t": "u", "c": "hi", "r": "ok"}, "u: hi → [ok]"),
        ({"t": "m", "n": "auto"}, "m:auto"),
    ],
)
def test_every_value_of_a_terse_record_is_kept(record: dict[str, Any], raw: str) -> None:
    assert terse(record) == raw


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"name": "read", "args": [{}]}, "'args' must be a string, a number or a list of them"),
        (
            {"name": "read", "result": {"kind": "fields", "fields": {"a": {}}}},
            "'result': 'result.fields.a' must be a string, a number or a list of them",
        ),
        (
            {"name": "read", "typed": {"attempt": {"number": 1, "of": {}}}},
            "'typed.attempt' must be a string, a number or a list of them",
        ),
    ],
)
def test_a_bad_nested_value_names_its_place(record: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError) as raised:
        build_record(record, "tool", 3, "\n")
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"t": "t", "n": "read", "r": {"a": {}}}, "'r': 'r.a' must be a string, a number or a list of them"),
        ({"t": "t", "a": {"k": {}}}, "'a.k' must be a string, a number or a list of them"),
        ({"t": "t", "a": [{}]}, "'args' must be a string, a number or a list of them"),
    ],
)
def test_a_bad_nested_terse_value_names_its_place(record: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError) as raised:
        terse_node(record, 4)
    assert str(raised.value) == message


def test_a_server_names_only_an_mcp_line_and_a_missing_text_is_empty() -> None:
    assert terse({"t": "t", "s": "x", "n": "read"}) == "t:read"
    assert full({}, "agent")[2] == "a:"


def test_a_typed_value_given_as_a_field_too_skips_only_itself() -> None:
    record = {"name": "read", "typed": {"k": "1", "step": 2}, "fields": {"k": "w"}}
    assert full(record, "tool")[2] == "t:read k=w step=2"


def test_a_terse_tool_line_with_arguments_needs_a_name() -> None:
    with pytest.raises(RecordError, match="a tool line with arguments or fields needs a name"):
        terse_node({"t": "t", "a": ["x"]}, 4)
