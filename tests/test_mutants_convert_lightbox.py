"""Lightbox → bbox and back: behaviour that surviving mutants of ``convert/lightbox/`` showed no
test pinned down (docs/testing.md, "Mutation scores"). Each test reads or writes a small
session in memory or in ``tmp_path``; the events are chained here, so a chain problem is
never the reason a test sees what it sees."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import bbox_lark
from bbox_lark.convert import convert
from bbox_lark.convert.lightbox.chain import chain
from bbox_lark.syntax.nodes import Event

START = "2025-01-01T00:00:00.000+00:00"
END = "2025-01-01T00:00:01.000+00:00"


def event(**over: Any) -> dict[str, Any]:
    """A complete Lightbox event, with ``over`` replacing or adding fields (None removes)."""
    base: dict[str, Any] = {
        "schema_version": "1",
        "session_id": "s",
        "invocation_id": "inv_1",
        "tool": "read",
        "input": {},
        "output": None,
        "status": "complete",
        "timestamp_start": START,
        "timestamp_end": END,
    }
    base.update(over)
    return base


def lightbox_bytes(*events: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in chain(events))


def read(*events: dict[str, Any]) -> Any:
    """The conversion result of a chained session of ``events``."""
    return convert(lightbox_bytes(*events), "lightbox", to="bbox")


def calls(*events: dict[str, Any]) -> list[Event]:
    result = read(*events)
    return list(bbox_lark.parse(result.text).events)


def one(**over: Any) -> Event:
    (found,) = calls(event(**over))
    return found


# -- errors ------------------------------------------------------------------------------


def test_an_error_without_a_message_is_named_by_its_type_then_its_code() -> None:
    typed = one(status="error", error={"type": "Timeout", "code": "E1"})
    assert typed.result is not None and typed.result.message == "Timeout"
    coded = one(status="error", error={"type": " ", "code": "E42"})
    assert coded.result is not None and coded.result.message == "E42"


def test_brackets_of_an_error_message_become_parentheses() -> None:
    found = one(status="error", error={"message": "bad [x] value"})
    assert found.result is not None and found.result.message == "bad (x) value"
    text = one(status="error", error="broken ] here [")
    assert text.result is not None and text.result.message == "broken ) here ("


def test_an_error_of_other_keys_is_its_json_with_parentheses_for_brackets() -> None:
    found = one(status="error", error={"where": ["a", "b"]})
    assert found.result is not None and found.result.message == '{"where":("a","b")}'
    assert json.loads(found.fields["error"]) == {"where": ["a", "b"]}


def test_an_error_that_is_neither_text_nor_object_gives_a_bare_err() -> None:
    found = one(status="error", error=5)
    assert found.result is not None and found.result.kind == "error" and not found.result.message
    assert found.fields["error"] == "5"
    blank = one(status="error", error="   ")
    assert blank.result is not None and not blank.result.message


def rows(result: Any) -> dict[tuple[str, str], tuple[int, tuple[int, ...]]]:
    """The fidelity report's rows: (fate, construct) -> (count, lines)."""
    return {(e.action, e.what): (e.count, e.lines) for e in result.fidelity.entries}


# -- detection ---------------------------------------------------------------------------


def sniff(text: str) -> int:
    from bbox_lark.convert.lightbox.reader import sniff as lightbox_sniff

    return lightbox_sniff(text)


def test_sniff_reads_the_first_line_with_text() -> None:
    line = json.dumps(event(prev_hash=None, hash="0" * 64))
    assert sniff(line) == 3
    assert sniff("\ufeff\n  \n" + line + "\n{oops") == 3
    assert sniff("  " + line) == 3
    assert sniff("x" + line) == 0
    assert sniff("") == 0
    assert sniff("\n\n") == 0


def test_sniff_wants_the_three_keys_of_an_event() -> None:
    for key in ("invocation_id", "tool", "prev_hash"):
        partial = {"invocation_id": "i", "tool": "t", "prev_hash": None}
        del partial[key]
        assert sniff(json.dumps(partial)) == 0, key
    assert sniff(json.dumps({"invocation_id": "i", "tool": "t", "prev_hash": None})) == 3
    assert sniff('["invocation_id", "tool", "prev_hash"]') == 0


def test_sniff_gives_two_to_a_cut_line_with_an_invocation_and_a_link() -> None:
    assert sniff('{"invocation_id": "i", "prev_hash": "ab') == 2
    assert sniff('{"invocation_id": "i", "tool": "ab') == 0
    assert sniff('{"prev_hash": "i", "tool": "ab') == 0
    assert sniff("{" + "[" * 100_000) == 0  # nested too deep for the parser: no traceback


def test_sniff_of_a_folder_looks_for_its_events_file(tmp_path: Path) -> None:
    assert sniff(f"folder:{tmp_path}") == 0
    (tmp_path / "events.jsonl").write_text("")
    assert sniff(f"folder:{tmp_path}") == 3
    assert sniff(f"folder:{tmp_path / 'events.jsonl'}") == 0


# -- redacted values ---------------------------------------------------------------------


def test_redacted_input_values_become_markers_with_their_sizes() -> None:
    result = read(
        event(
            input={
                "key": "[REDACTED]",
                "body": {"_redacted": True, "_reason": "size limit!", "_bytes": 10},
                "bare": {"_redacted": True},
                "empty": {"_redacted": True, "_reason": ""},
                "odd": {"_redacted": True, "_reason": 5, "_bytes": None},
            }
        )
    )
    (found,) = bbox_lark.parse(result.text).events
    assert found.fields["key"] == "[redacted:secret]"
    assert found.fields["body"] == "[redacted:size_limit_]"
    assert found.fields["redacted_bytes.input.body"] == "10"
    assert (found.fields["bare"], found.fields["empty"]) == ("[redacted:redacted]", "[redacted:redacted]")
    assert found.fields["odd"] == "[redacted:redacted]"
    assert "redacted_bytes.input.odd" not in found.fields
    assert "input" not in found.fields
    assert rows(result)[("kept", "redacted input values")] == (5, (1, 1, 1, 1, 1))


def test_what_only_looks_redacted_stays_json() -> None:
    odd = {
        "text_size": {"_redacted": True, "_bytes": "10"},
        "bool_size": {"_redacted": True, "_bytes": True},
        "more": {"_redacted": True, "_reason": "r", "other": 1},
        "one": {"_redacted": 1},
        "false": {"_redacted": False},
    }
    found = one(input=odd)
    assert json.loads(found.fields["input"]) == odd
    assert not any(key.startswith("redacted_bytes") for key in found.fields)


def test_a_redacted_value_under_a_key_the_converter_writes_stays_json() -> None:
    found = one(input={"id": "[REDACTED]", "content_hashes.x": {"_redacted": True}})
    assert json.loads(found.fields["input"]) == {"id": "[REDACTED]", "content_hashes.x": {"_redacted": True}}
    assert found.id == "inv_1"


# -- input entries -----------------------------------------------------------------------


def test_input_entries_become_fields_and_the_rest_input_json() -> None:
    given = {
        "args": ["a", ["b", "c"]],
        "n": 3,
        "t": True,
        "z": None,
        "e": "",
        "w": "  ",
        "l": ["x", "y"],
        "id": "k",
        "1bad": "x",
        "ok": [1],
        "content_hashes.p": "h",
        "redacted_bytes.p": "1",
    }
    found = one(input=given)
    assert found.args == ("a", ("b", "c"))
    assert (found.fields["n"], found.fields["t"], found.fields["z"], found.fields["e"]) == (
        "3",
        "true",
        "null",
        "",
    )
    assert found.fields["l"] == ("x", "y")
    assert json.loads(found.fields["input"]) == {
        "w": "  ",
        "id": "k",
        "1bad": "x",
        "ok": [1],
        "content_hashes.p": "h",
        "redacted_bytes.p": "1",
    }
    assert found.id == "inv_1"


def test_args_that_are_no_list_of_strings_stay_json() -> None:
    found = one(input={"args": [1]})
    assert found.args == ()
    assert json.loads(found.fields["input"]) == {"args": [1]}


def test_an_input_that_is_no_object_skips_the_event() -> None:
    result = read(event(input=[1]), event(invocation_id="inv_2"))
    assert [(s.line, s.message) for s in result.skipped] == [
        (1, "cannot be written as a bbox line: input is a JSON array, not an object")
    ]
    assert [e.id for e in bbox_lark.parse(result.text).events] == ["inv_2"]


def test_the_input_json_entry_is_reported_kept() -> None:
    result = read(event(input={"nested": {"a": 1}}))
    assert rows(result)[
        ("kept", "input entries as input= JSON (nested values, keys that are no field keys)")
    ] == (1, (1,))


# -- output ------------------------------------------------------------------------------


def test_a_flat_output_is_a_fields_result() -> None:
    found = one(output={"a": "1", "b": 2, "c": None, "d": ["x"], "e": "", "f": True})
    assert found.result is not None and found.result.kind == "fields"
    after = {f.key: f.value for f in found.field_nodes if f.after_arrow}
    assert after == {"a": "1", "b": "2", "c": "null", "d": ("x",), "e": "", "f": "true"}


def test_an_output_that_cannot_be_fields_is_its_json() -> None:
    for output in (
        {"a": "x\ny"},
        {"a": "x\ry"},
        {"a": "  "},
        {"content_hashes.a": "x"},
        {"redacted_bytes.a": "x"},
        {"a b": "x"},
        {"a": {"b": 1}},
        {"a": "1", "b": {"c": 1}},
        {"a": {"b": 1}, "c": "1"},
    ):
        found = one(output=output)
        assert found.result is not None and found.result.kind == "text", output
        assert json.loads(found.result.text) == output


def test_redacted_output_values_become_markers_with_their_sizes() -> None:
    found = one(output={"a": "[REDACTED]", "b": {"_redacted": True, "_reason": "big", "_bytes": 5}})
    after = {f.key: f.value for f in found.field_nodes if f.after_arrow}
    assert after == {"a": "[redacted:secret]", "b": "[redacted:big]"}
    assert found.fields["redacted_bytes.output.b"] == "5"
    bare = one(output={"b": {"_redacted": True, "_reason": "big"}})
    assert not any(key.startswith("redacted_bytes") for key in bare.fields)


def test_a_long_flat_output_goes_on_continuation_lines_without_its_sizes() -> None:
    output = {"a": "y" * 200, "b": {"_redacted": True, "_reason": "big", "_bytes": 5}}
    found = one(output=output)
    assert found.result is not None and found.result.kind == "empty"
    assert json.loads("\n".join(c.text for c in found.continuation)) == output
    assert "redacted_bytes.output.b" not in found.fields


def test_an_output_of_exactly_the_inline_limit_stays_on_the_line() -> None:
    from bbox_lark.convert.lightbox.tables import INLINE_LIMIT

    pad = INLINE_LIMIT - len('{"a":"","b":{"c":1}}')
    fits = {"a": "y" * pad, "b": {"c": 1}}
    found = one(output=fits)
    assert found.result is not None and found.result.kind == "text"
    assert len(found.result.text) == INLINE_LIMIT
    longer = {"a": "y" * (pad + 1), "b": {"c": 1}}
    assert one(output=longer).result.kind == "empty"  # type: ignore[union-attr]
    fields = {"a": "y" * (INLINE_LIMIT - 2)}
    flat = one(output=fields)
    assert flat.result is not None and flat.result.kind == "fields" and len(flat.result.text) == INLINE_LIMIT
    over = one(output={"a": "y" * (INLINE_LIMIT - 1)})
    assert over.result is not None and over.result.kind == "empty"


def test_other_outputs_are_indented_json_lines() -> None:
    for output in ([1, 2], "plain", 5, True):
        found = one(output=output)
        assert found.result is not None and found.result.kind == "empty"
        assert json.loads("\n".join(c.text for c in found.continuation)) == output
    empty = one(output={})
    assert empty.result is not None and (empty.result.kind, empty.result.text) == ("text", "{}")


def test_the_writers_result_and_text_come_back_as_result_and_lines() -> None:
    found = one(output={"result": "[ok] done", "text": "l1\nl2"})
    assert found.result is not None and (found.result.kind, found.result.text) == ("ok", "[ok] done")
    assert [c.text for c in found.continuation] == ["l1", "l2"]
    alone = one(output={"result": "[ok]"})
    assert alone.result is not None and alone.result.kind == "ok" and alone.continuation == ()
    lines = one(output={"text": "l1"})
    assert lines.result is not None and lines.result.kind == "empty"
    assert [c.text for c in lines.continuation] == ["l1"]


def test_what_would_not_read_back_the_same_is_not_the_writers_form() -> None:
    for output in (
        {"result": " x"},
        {"result": "x "},
        {"result": "a\nb"},
        {"result": "a\rb"},
        {"result": '{"a": 1}'},
        {"text": '{"a": 1}'},
        {"result": "", "text": '{"a": 1}'},
        {"text": "a\n\nb"},
        {"text": "a\n \nb"},
        {"text": "a\rb"},
        {"result": 1},
        {"text": ["a"]},
        {"result": None, "text": None},
        {"result": "[ok]", "other": "x"},
    ):
        found = one(output=output)
        assert found.continuation == (), output
        assert found.result is not None and found.result.kind in ("fields", "text"), output
        assert {f.key: f.value for f in found.field_nodes if f.after_arrow} or json.loads(
            found.result.text
        ) == output, output
    kept = one(output={"result": "[ok]", "text": '{"a": 1}'})
    assert [c.text for c in kept.continuation] == ['{"a": 1}']


def test_an_error_keeps_the_error_result_the_writer_made() -> None:
    found = one(status="error", output={"result": "[err: boom] more"}, error={"message": "m"})
    assert found.result is not None and (found.result.message, found.result.rest) == ("boom", "more")


def test_an_errors_lines_come_back_as_its_lines(tmp_path: Path) -> None:
    """A real bug a mutant showed: the branch that gives an error's continuation lines back
    never ran (it asked for a result the writer's form always has), so they came back as
    the JSON of the output object."""
    found = one(status="error", output={"text": "line one\nline two"}, error={"message": "boom"})
    assert found.result is not None and found.result.message == "boom"
    assert [c.text for c in found.continuation] == ["line one", "line two"]
    text = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\n---\nt:read id=a → [err: boom]\n  l1\n  l2\n"
    convert(text, "bbox", to="lightbox", output_path=tmp_path / "s")
    again = convert(b"", "lightbox", to="bbox", path=tmp_path / "s").text
    assert again.endswith("→ [err: boom]\n  l1\n  l2\n")


def test_an_errors_other_output_is_its_json_on_lines() -> None:
    found = one(status="error", output={"k": 1}, error={"message": "m"})
    assert found.result is not None and found.result.message == "m"
    assert json.loads("\n".join(c.text for c in found.continuation)) == {"k": 1}
    ok = one(status="error", output={"result": "[ok]", "text": "l"}, error={"message": "m"})
    assert ok.result is not None and ok.result.kind == "error"
    assert json.loads("\n".join(c.text for c in ok.continuation)) == {"result": "[ok]", "text": "l"}
    bare = one(status="error", output=None, error={"message": "m"})
    assert bare.continuation == ()


def test_a_pending_event_is_a_running_start_whatever_its_output() -> None:
    found = one(status="pending", output={"k": 1}, timestamp_end=None)
    assert (found.kind, found.result.kind if found.result else None) == ("tool_start", "running")
    assert found.continuation == ()


# -- the call line of an event -----------------------------------------------------------


def test_a_prefixed_tool_name_gives_its_kind_of_line() -> None:
    found = calls(
        event(tool="x:explore"),
        event(tool="c:github.issues"),
        event(tool="zz:foo"),
        event(tool="a b/c"),
        event(tool="x:a b"),
        event(tool="t:read"),
        event(tool="!!!"),
    )
    assert [(e.kind, e.name, e.fields.get("tool")) for e in found] == [
        ("subagent", "explore", None),
        ("mcp", "github.issues", None),
        ("tool", "zz:foo", None),
        ("tool", "a_b_c", "a b/c"),
        ("tool", "x_a_b", "x:a b"),
        ("tool", "t:read", None),
        ("tool", "!!!", None),
    ]


def test_a_tool_name_of_no_safe_character_is_tool() -> None:
    from bbox_lark.convert.lightbox.reader import _kind_and_name

    assert _kind_and_name("  ") == ("tool", "tool")
    assert _kind_and_name("-a b-") == ("tool", "a_b")
    assert _kind_and_name("x:") == ("tool", "x:")
    assert _kind_and_name("x:a b") == ("tool", "x_a_b")
    assert _kind_and_name("x:a:b") == ("subagent", "a:b")  # the prefix ends at the first colon


def test_the_end_time_is_a_latency_when_it_reads_back_else_ts_end() -> None:
    found = calls(
        event(),
        event(invocation_id="i2", timestamp_start="", timestamp_end=END),
        event(invocation_id="i3", timestamp_end=START),
        event(invocation_id="i4", timestamp_end="2025-01-01T00:00:01.0005+00:00"),
        event(invocation_id="i5", timestamp_start=5, timestamp_end=""),
    )
    assert [(e.ts, e.latency_ms, e.fields.get("ts_end")) for e in found] == [
        (START, 1000, None),
        (None, None, END),
        (START, None, None),
        (START, None, "2025-01-01T00:00:01.0005+00:00"),
        (None, None, None),
    ]


def test_a_retry_counts_its_attempt_unless_the_input_gives_it() -> None:
    result = read(
        event(),
        event(invocation_id="inv_2", retry_of="inv_1"),
        event(invocation_id="inv_3", retry_of="inv_2"),
        event(invocation_id="inv_4", retry_of="inv_2", input={"attempt": "9"}),
        event(invocation_id="inv_5", retry_of=""),
    )
    found = bbox_lark.parse(result.text).events
    assert [(e.fields.get("retry_of"), e.fields.get("attempt")) for e in found] == [
        (None, None),
        ("inv_1", "2"),
        ("inv_2", "3"),
        ("inv_2", "9"),
        (None, None),
    ]
    assert rows(result)[("synthesized", "attempt= fields (from retry_of)")] == (2, (2, 3))


def test_the_plain_event_fields_and_those_of_the_wrong_type() -> None:
    result = read(
        event(actor="me", chunk_count=3, total_bytes=True, parent_invocation="a\nb", originating_actor=5),
        event(invocation_id="i2", chunk_count="4", total_bytes=0, parent_invocation="", actor=None),
    )
    first, second = bbox_lark.parse(result.text).events
    assert (first.fields["actor"], first.fields["chunk_count"]) == ("me", "3")
    assert not {"total_bytes", "parent_invocation", "originating_actor"} & set(first.fields)
    assert (second.fields["chunk_count"], second.fields["total_bytes"]) == ("4", "0")
    assert not {"actor", "parent_invocation"} & set(second.fields)
    found = rows(result)
    wrong = {what: seen for (_, what), seen in found.items() if "wrong type" in what}
    assert wrong == {
        "event fields of the wrong type (originating_actor)": (1, (1,)),
        "event fields of the wrong type (parent_invocation)": (2, (1, 2)),  # a line break; empty
        "event fields of the wrong type (total_bytes)": (1, (1,)),
    }


def test_an_event_of_another_session_names_it() -> None:
    found = calls(
        event(), event(invocation_id="i2", session_id="other"), event(invocation_id="i3", session_id=5)
    )
    assert [e.fields.get("session_id") for e in found] == [None, "other", None]


def test_content_hashes_become_fields_or_skip_the_event() -> None:
    result = read(
        event(content_hashes={"a.txt": "h1", "b": "h2"}),
        event(invocation_id="i2", content_hashes={"a b": "h"}),
        event(invocation_id="i3", content_hashes=[1]),
        event(invocation_id="i4", content_hashes={"a": " "}),
        event(invocation_id="i5", content_hashes={"a": "x\ny"}),
        event(invocation_id="i6", content_hashes={"a": 5}),
    )
    (found,) = bbox_lark.parse(result.text).events
    assert (found.fields["content_hashes.a.txt"], found.fields["content_hashes.b"]) == ("h1", "h2")
    assert [(s.line, s.message) for s in result.skipped] == [
        (2, "cannot be written as a bbox line: content_hashes entry 'a b' cannot be a field"),
        (3, "cannot be written as a bbox line: content_hashes is not an object"),
        (4, "cannot be written as a bbox line: content_hashes entry 'a' cannot be a field"),
        (5, "cannot be written as a bbox line: content_hashes entry 'a' cannot be a field"),
        (6, "cannot be written as a bbox line: content_hashes entry 'a' cannot be a field"),
    ]


def test_unknown_event_fields_are_dropped_and_reported_each() -> None:
    result = read(event(extra_key=1, zzz=2), event(invocation_id="i2", zzz=3))
    found = rows(result)
    assert found[("dropped", "event fields unknown to Lightbox v1 (extra_key)")] == (1, (1,))
    assert found[("dropped", "event fields unknown to Lightbox v1 (zzz)")] == (2, (1, 2))
    assert found[("dropped", "prev_hash and hash (verified, not written)")] == (2, (1, 2))
    assert found[("kept", "events")] == (2, (1, 2))


def test_an_event_without_tool_invocation_or_status_is_skipped() -> None:
    result = read(
        event(tool=5),
        event(tool=""),
        event(invocation_id=""),
        event(invocation_id=7),
        event(status=None),
        event(status="x" * 60),
        event(invocation_id="ok"),
    )
    assert [(s.line, s.message) for s in result.skipped] == [
        (1, "no tool name (`tool` missing or not a string)"),
        (2, "no tool name (`tool` missing or not a string)"),
        (3, "no invocation_id"),
        (4, "no invocation_id"),
        (5, "unknown status null (expected pending, complete or error)"),
        (6, f'unknown status "{"x" * 39} (expected pending, complete or error)'),
    ]
    assert [e.id for e in bbox_lark.parse(result.text).events] == ["ok"]


def test_a_schema_version_not_one_is_reported_once() -> None:
    result = read(
        event(schema_version="2"), event(invocation_id="i2", schema_version="3"), event(invocation_id="i3")
    )
    assert [(s.line, s.message) for s in result.skipped] == [
        (1, 'schema_version "2" is not 1; converted as version 1')
    ]
    assert len(bbox_lark.parse(result.text).events) == 3
    long = read(event(schema_version="v" * 40))
    assert long.skipped[0].message == f'schema_version "{"v" * 19} is not 1; converted as version 1'


def test_a_start_left_pending_is_noted_and_a_resolved_one_is_not() -> None:
    result = read(
        event(status="pending", timestamp_end=None),
        event(invocation_id="inv_2", status="pending", timestamp_end=None),
        event(invocation_id="inv_2"),
        event(invocation_id="inv_3", status="pending", timestamp_end=None),
        event(invocation_id="inv_3", status="error", error={"message": "m"}),
    )
    found = rows(result)
    assert found[("kept", "pending events never resolved (inv_1)")] == (1, (0,))
    assert not any("(inv_2)" in what or "(inv_3)" in what for _, what in found)
    kinds = [e.kind for e in bbox_lark.parse(result.text).events]
    assert kinds == ["tool_start", "tool_start", "tool", "tool_start", "tool"]


# -- the session's files and header ------------------------------------------------------


def session(folder: Path, *events: dict[str, Any], meta: dict[str, Any] | None = None) -> Path:
    from bbox_lark.convert.lightbox.chain import write_session

    write_session(folder, events, meta)
    return folder


def from_folder(folder: Path, **options: Any) -> Any:
    return convert(b"", "lightbox", to="bbox", path=folder, **options)


def test_the_saved_bbox_header_comes_back_with_the_sessions_id(tmp_path: Path) -> None:
    saved = {
        "format": "bbox/1",
        "id": "h",
        "repo_sha": "abc1234",
        "title": "T",
        "tags": ["a"],
        "m": {"k": "v"},
    }
    result = from_folder(session(tmp_path / "a", event(), meta={"bbox_header": saved}))
    header = bbox_lark.parse(result.text).header
    assert header == {**saved, "id": "s"}
    assert rows(result)[("kept", "header keys (from meta.json's bbox_header)")] == (6, (0,))
    sha = from_folder(tmp_path / "a", repo_sha="fff0000")
    assert bbox_lark.parse(sha.text).header["repo_sha"] == "fff0000"


def test_a_saved_header_keeps_only_what_a_header_holds(tmp_path: Path) -> None:
    saved = {
        "format": "bbox/1",
        "id": "h",
        "repo_sha": "abc1234",
        "n": 5,
        "l": ["a", 1],
        "d": {"k": 1},
        "e": [["a"], {"k": ["b", 2]}],
    }
    header = bbox_lark.parse(
        from_folder(session(tmp_path / "a", event(), meta={"bbox_header": saved})).text
    ).header
    assert header == {"format": "bbox/1", "id": "s", "repo_sha": "abc1234"}


def test_a_saved_header_that_is_no_header_gives_the_importers(tmp_path: Path) -> None:
    meta_values: list[Any] = [
        {"format": "bbox/1", "id": "h"},  # no repo_sha
        {"id": "h", "repo_sha": "abc1234"},  # no format
        {"format": "bbox/1", "id": "h", "repo_sha": "abc1234", "bad key": "x"},
        {"format": "bbox/1", "id": "h", "repo_sha": ""},
        [],
        {},
    ]
    for index, saved in enumerate(meta_values):
        folder = session(tmp_path / str(index), event(), meta={"bbox_header": saved})
        result = from_folder(folder)
        header = bbox_lark.parse(result.text).header
        assert (header["id"], header["repo_sha"]) == ("s", "unknown"), saved
        assert not any("bbox_header" in what for _, what in rows(result)), saved


def test_a_saved_header_without_a_session_keeps_its_own_id(tmp_path: Path) -> None:
    saved = {"format": "bbox/1", "id": "h", "repo_sha": "abc1234"}
    folder = session(tmp_path / "a", event(session_id=5), meta={"session_id": "x"})
    (folder / "meta.json").write_text(json.dumps({"bbox_header": saved, "session_id": ""}))
    assert bbox_lark.parse(from_folder(folder).text).header["id"] == "h"


def test_meta_gives_the_session_id_created_at_and_version(tmp_path: Path) -> None:
    meta = {"session_id": "m", "created_at": "2025-01-01T00:00:00Z", "lightbox_version": "0.1.0"}
    header = bbox_lark.parse(from_folder(session(tmp_path / "a", event(), meta=meta)).text).header
    assert header["id"] == "m"
    assert header["extra.lightbox_created_at"] == "2025-01-01T00:00:00Z"
    assert header["extra.lightbox_version"] == "0.1.0"
    odd = {"created_at": "a\nb", "lightbox_version": "", "session_id": 5}
    folder = session(tmp_path / "b", event())
    (folder / "meta.json").write_text(json.dumps(odd))
    header = bbox_lark.parse(from_folder(folder).text).header
    assert header["id"] == "s"  # the first event's
    assert "extra.lightbox_created_at" not in header and "extra.lightbox_version" not in header


def test_the_session_id_is_the_first_events_that_has_one() -> None:
    result = read(event(session_id=5), event(invocation_id="i2", session_id="second"))
    assert bbox_lark.parse(result.text).header["id"] == "second"


def test_a_named_events_file_reads_its_named_meta(tmp_path: Path) -> None:
    data = lightbox_bytes(event())
    (tmp_path / "x.events.jsonl").write_bytes(data)
    (tmp_path / "x.meta.json").write_text('{"session_id": "m", "nul": "a\\u0000b"}')
    result = convert(data, "lightbox", to="bbox", path=tmp_path / "x.events.jsonl")
    assert bbox_lark.parse(result.text).header["id"] == "m"
    assert rows(result)[
        ("dropped", "NUL characters and lone surrogates in JSON strings (written as U+FFFD)")
    ] == (
        1,
        (0,),
    )


def test_a_meta_that_is_no_json_object_is_ignored(tmp_path: Path) -> None:
    for index, text in enumerate((b"[1]", b"{oops", b"\xff", b'"s"')):
        folder = session(tmp_path / str(index), event(), meta={"session_id": "m"})
        (folder / "meta.json").write_bytes(text)
        result = from_folder(folder)
        assert bbox_lark.parse(result.text).header["id"] == "s"
        assert result.skipped == ()


def test_the_anchor_in_meta_is_checked_while_reading(tmp_path: Path) -> None:
    folder = session(tmp_path / "a", event(), event(invocation_id="i2"), event(invocation_id="i3"))
    lines = (folder / "events.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "events.jsonl").write_bytes(b"".join(lines[:2]))
    result = from_folder(folder)
    assert [s.message.split(":")[0] for s in result.skipped] == ["hash chain TRUNCATED"]
    assert result.skipped[0].line == 2  # the anchor names no line: the last one read
    assert result.skipped[0].message.endswith(" (the events were converted as they stand)")
    meta = json.loads((folder / "meta.json").read_text())
    for anchor in ({"head": 5, "events": 3}, {"head": None, "events": True}, {"head": None}, "x"):
        meta["bbox_lark_anchor"] = anchor
        (folder / "meta.json").write_text(json.dumps(meta))
        assert from_folder(folder).skipped == (), anchor
    meta["bbox_lark_anchor"] = {"events": 3}
    (folder / "meta.json").write_text(json.dumps(meta))
    assert [s.message.split(":")[0] for s in from_folder(folder).skipped] == ["hash chain TRUNCATED"]


def test_a_folder_without_events_is_refused_with_why(tmp_path: Path) -> None:
    import pytest

    from bbox_lark.convert import RefusedInputError

    with pytest.raises(RefusedInputError) as refused:
        from_folder(tmp_path)
    assert str(refused.value) == "no events.jsonl in this folder"
    assert str(tmp_path) not in str(refused.value)


# -- lines -------------------------------------------------------------------------------


def test_lines_that_are_no_event_are_skipped_with_why() -> None:
    good = lightbox_bytes(event(), event(invocation_id="i2"))
    first, second = good.splitlines(keepends=True)
    data = first + b"\n\r\n" + b"{oops\n" + b"\xff\xfe\n" + b"[1]\n" + b"[" * 100_000 + b"\n" + second
    result = convert(data, "lightbox", to="bbox")
    assert [(s.line, s.message) for s in result.skipped] == [
        (4, "not JSON: Expecting property name enclosed in double quotes (column 2)"),
        (5, "not valid UTF-8 (byte 1)"),
        (6, "a JSON array, not an event object"),
        (7, "not JSON (a number too long or nesting too deep)"),
    ]
    assert rows(result)[("kept", "events")] == (2, (1, 8))


def test_only_a_last_line_without_an_ending_is_called_cut() -> None:
    good = lightbox_bytes(event())
    cut = convert(good + b'{"tool": "x', "lightbox", to="bbox")
    assert [(s.line, s.message) for s in cut.skipped] == [
        (2, "last line cut while it was written? not JSON: Unterminated string starting at (column 10)")
    ]
    ended = convert(good + b'{"tool": "x\n', "lightbox", to="bbox")
    assert ended.skipped[0].message.startswith("not JSON: ")
    crlf = convert(good + b'{"tool": "x\r', "lightbox", to="bbox")
    assert crlf.skipped[0].message.startswith("not JSON: ")
    complete = convert(good.rstrip(b"\n"), "lightbox", to="bbox")
    assert complete.skipped == () and len(bbox_lark.parse(complete.text).events) == 1


def test_a_broken_chain_on_a_skipped_line_is_reported_once() -> None:
    first, second = lightbox_bytes(event(), event(invocation_id="i2")).splitlines(keepends=True)
    changed = json.loads(second)
    changed["status"] = "odd"
    data = first + json.dumps(changed).encode() + b"\n"
    result = convert(data, "lightbox", to="bbox")
    assert [s.message for s in result.skipped] == [
        'unknown status "odd" (expected pending, complete or error)'
    ]
    changed["status"] = "error"
    broken = convert(first + json.dumps(changed).encode() + b"\n", "lightbox", to="bbox")
    assert [(s.line, s.message.split(":")[0]) for s in broken.skipped] == [(2, "hash chain TAMPERED")]


def test_each_output_line_maps_to_its_event_line() -> None:
    data = lightbox_bytes(event(output=[1, 2]), event(invocation_id="i2"))
    data = b"\n" + data.replace(b"\n", b"\n\n", 1)
    result = convert(data, "lightbox", to="bbox")
    doc = bbox_lark.parse(result.text)
    first, second = doc.events
    assert [result.fidelity.source_line(first.line + n) for n in range(5)] == [2, 2, 2, 2, 2]
    assert result.fidelity.source_line(second.line) == 4
    assert second.line == first.line + 5


# -- writing -----------------------------------------------------------------------------

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\n---\n"


def write(tmp_path: Path, body: str, head: str = HEAD) -> tuple[list[dict[str, Any]], dict[str, Any], Any]:
    """The events (without their hashes and schema version) and meta.json ``head`` + ``body``
    converts to, and the conversion."""
    out = tmp_path / "written"
    result = convert(head + body, "bbox", to="lightbox", output_path=out)
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    for written in events:
        del written["hash"], written["prev_hash"], written["schema_version"]
    return events, json.loads((out / "meta.json").read_text()), result


def written_rows(result: Any) -> dict[tuple[str, str], tuple[int, tuple[int, ...]]]:
    return {(e.action, e.what): (e.count, e.lines) for e in result.fidelity.entries if e.stage == "write"}


def test_a_call_becomes_one_event_with_its_arguments_fields_and_result(tmp_path: Path) -> None:
    body = (
        "t:read a [b, c] id=x ts=2025-01-01T00:00:00Z latency_ms=5 k=v n=1 step=3"
        " → a=1 b=[redacted:secret] c=[redacted:big]\n"
    )
    (written,), _, result = write(tmp_path, body)
    assert written == {
        "input": {"args": ["a", ["b", "c"]], "k": "v", "n": "1", "step": "3"},
        "invocation_id": "x",
        "output": {"a": "1", "b": "[REDACTED]", "c": {"_reason": "big", "_redacted": True}},
        "session_id": "s",
        "status": "complete",
        "timestamp_end": "2025-01-01T00:00:00.005Z",
        "timestamp_start": "2025-01-01T00:00:00Z",
        "tool": "read",
    }
    assert written_rows(result)[("kept", "tool lines")] == (1, (6,))


def test_redaction_sizes_go_back_into_their_values(tmp_path: Path) -> None:
    body = (
        "t:read k=[redacted:big] j=[redacted:big] redacted_bytes.input.k=12 redacted_bytes.input.j=x"
        " redacted_bytes.output.b=7 → b=[redacted:big] c=[redacted:big]\n"
    )
    (written,), _, _ = write(tmp_path, body)
    assert written["input"] == {
        "k": {"_bytes": 12, "_reason": "big", "_redacted": True},
        "j": {"_reason": "big", "_redacted": True},
    }
    assert written["output"] == {
        "b": {"_bytes": 7, "_reason": "big", "_redacted": True},
        "c": {"_reason": "big", "_redacted": True},
    }


def test_a_marker_that_is_not_the_whole_value_stays_text(tmp_path: Path) -> None:
    (written,), _, _ = write(tmp_path, 't:read k="a [redacted:big]" j=[redacted:secret]\n')
    assert written["input"] == {"k": "a [redacted:big]", "j": "[REDACTED]"}


def test_each_result_form_gives_its_output(tmp_path: Path) -> None:
    body = (
        "t:read id=a → [ok] done\n  l1\n  l2\n"
        't:read id=b → {"a": 1}\n'
        't:read id=c →\n  {"a": 1}\n'
        "t:read id=d → [ok]\n"
        "t:read id=e →\n  l1\n"
        "t:read id=f\n"
        't:read id=g → [ok]\n  {"a": 1}\n'
        "t:read id=h → [err: boom] more\n  l1\n"
        't:read id=i → "text"\n'
        "t:read id=j → [1, 2]\n"
    )
    events, _, _ = write(tmp_path, body)
    assert [e["output"] for e in events] == [
        {"result": "[ok] done", "text": "l1\nl2"},
        {"a": 1},
        {"a": 1},
        {"result": "[ok]"},
        {"result": "", "text": "l1"},
        None,
        {"result": "[ok]", "text": '{"a": 1}'},
        {"result": "[err: boom] more", "text": "l1"},
        {"result": '"text"'},
        {"result": "[1, 2]"},
    ]


def test_an_error_gives_its_message_or_its_error_json(tmp_path: Path) -> None:
    body = (
        "t:read id=a → [err: boom]\n"
        't:read id=b error={"code":5} → [err: boom]\n'
        "t:read id=c error=text → [err: boom]\n"
        "t:read id=d → [err]\n"
        "t:read id=e → [err: boom]\n  l1\n"
    )
    events, _, result = write(tmp_path, body)
    assert [(e["status"], e.get("error"), e["output"]) for e in events] == [
        ("error", {"message": "boom"}, None),
        ("error", {"code": 5}, None),
        ("error", {"message": "boom"}, None),
        ("error", {}, None),
        ("error", {"message": "boom"}, {"text": "l1"}),
    ]
    assert "error" not in events[2]["input"]
    assert written_rows(result)[
        ("dropped", "error= values that are no JSON object (Lightbox's error is one)")
    ] == (1, (8,))


def test_a_start_is_pending_and_its_completion_the_resolved_event(tmp_path: Path) -> None:
    body = (
        "t!:read id=a ts=2025-01-01T00:00:00Z → [pending]\n"
        "t:read id=a latency_ms=2 → [ok]\n"
        "t:read id=b → [running]\n"
        "o: id=b → [err: x]\n"
    )
    events, _, result = write(tmp_path, body)
    assert [
        (e["invocation_id"], e["tool"], e["status"], e["output"], e["timestamp_end"]) for e in events
    ] == [
        ("a", "read", "pending", None, None),
        ("a", "read", "complete", {"result": "[ok]"}, "2025-01-01T00:00:00.002Z"),
        ("b", "read", "pending", None, None),
        ("b", "read", "error", None, "2025-01-01T00:00:00Z"),
    ]
    found = written_rows(result)
    assert found[("kept", "tool_start lines")] == (1, (6,))
    assert found[("kept", "tool lines completing a start (resolved events)")] == (1, (7,))
    assert found[("kept", "observation lines completing a start (resolved events)")] == (1, (9,))
    assert found[("dropped", "start results other than [running] (a pending event has no output)")] == (
        1,
        (6,),
    )


def test_each_family_keeps_its_prefix_in_the_tool_name(tmp_path: Path) -> None:
    body = 'x:explore "find"\nc:github.issues\ns:skill\np:plan\nq:ask\nt:read tool=other\nt!:run tool=\n'
    events, _, result = write(tmp_path, body)
    assert [e["tool"] for e in events] == [
        "x:explore",
        "c:github.issues",
        "s:skill",
        "p:plan",
        "q:",
        "other",
        "run",
    ]
    assert events[0]["input"] == {"args": ["find"]}
    assert written_rows(result)[("kept", "subagent lines")] == (1, (6,))


def test_the_tool_name_of_a_line_without_one() -> None:
    from bbox_lark.convert.lightbox.writer import _tool_name
    from bbox_lark.syntax import build

    assert _tool_name(build.call("subagent")) == "x:"
    assert _tool_name(build.call("subagent", "a", fields={"tool": "t"})) == "x:a"


def test_retries_drop_only_the_attempt_the_reader_gives_back(tmp_path: Path) -> None:
    body = (
        "t:read id=a\n"
        "t:read id=b retry_of=a attempt=2\n"
        "t:read id=c retry_of=b attempt=3\n"
        "t:read id=d retry_of=a attempt=5\n"
        "t:read id=e attempt=1\n"
    )
    events, _, _ = write(tmp_path, body)
    assert [(e.get("retry_of"), e["input"]) for e in events] == [
        (None, {}),
        ("a", {}),
        ("b", {}),
        ("a", {"attempt": "5"}),
        (None, {"attempt": "1"}),
    ]


def test_event_fields_content_hashes_and_input_json(tmp_path: Path) -> None:
    body = (
        "t:read chunk_count=12 total_bytes=x actor=me originating_actor=o parent_invocation=p"
        ' content_hashes.a=h session_id=other input={"q":1} k=3 k=4\n'
        "t:read chunk_count=1234567890123456789 total_bytes=123456789012345678 input=x retry_of=r\n"
    )
    first, second = write(tmp_path, body)[0]
    assert {k: first[k] for k in ("actor", "originating_actor", "parent_invocation", "chunk_count")} == {
        "actor": "me",
        "originating_actor": "o",
        "parent_invocation": "p",
        "chunk_count": 12,
    }
    assert first["content_hashes"] == {"a": "h"}
    assert first["session_id"] == "other"
    assert first["input"] == {"total_bytes": "x", "q": 1, "k": "3"}
    assert "content_hashes" not in second
    assert second["total_bytes"] == 123456789012345678
    assert second["input"] == {"chunk_count": "1234567890123456789", "input": "x"}
    assert second["session_id"] == "s" and second["retry_of"] == "r"


def test_args_beside_positional_arguments_are_dropped(tmp_path: Path) -> None:
    events, _, result = write(tmp_path, "t:read a args=x\nt:read args=y\n")
    assert [e["input"] for e in events] == [{"args": ["a"]}, {"args": "y"}]
    assert written_rows(result)[("dropped", "args= fields beside positional arguments")] == (1, (6,))


def test_lines_lightbox_has_no_place_for_are_dropped_by_kind(tmp_path: Path) -> None:
    body = "u: hi\n# c\n@start\nm: auto ts=2025-01-01T00:00:00Z\n  more\nt:read\n"
    events, _, result = write(tmp_path, body)
    assert events[0]["timestamp_start"] == "2025-01-01T00:00:00Z"  # the m: line's ts= carries on
    found = written_rows(result)
    assert found[("dropped", "user lines (Lightbox has no place for them)")] == (1, (6,))
    assert found[("dropped", "comment lines (Lightbox has no place for them)")] == (1, (7,))
    assert found[("dropped", "lifecycle lines (Lightbox has no place for them)")] == (1, (8,))
    assert found[("dropped", "mode lines (Lightbox has no place for them)")] == (1, (9,))
    assert found[("dropped", "their continuation lines")] == (1, (10,))


def test_timestamps_fall_back_to_the_header_then_the_epoch(tmp_path: Path) -> None:
    for key in ("extra.lightbox_created_at", "created_at", "started_at", "started", "ts"):
        head = f"---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\n{key}: '2025-02-02T00:00:00Z'\n---\n"
        (written,), meta, result = write(tmp_path, "t:read\n", head)
        assert written["timestamp_start"] == "2025-02-02T00:00:00Z", key
        assert written_rows(result)[("synthesized", "timestamps (the previous known ts=)")] == (1, (7,))
        assert meta["created_at"] == "2025-02-02T00:00:00Z"
        unread = f"---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\n{key}: nope\n---\n"
        (written,), meta, result = write(tmp_path, "t:read\n", unread)
        assert written["timestamp_start"] == "1970-01-01T00:00:00.000+00:00"
        created = "nope" if key in ("extra.lightbox_created_at", "created_at") else written["timestamp_start"]
        assert meta["created_at"] == created, key
    epoch = "timestamps (1970-01-01T00:00:00.000+00:00: no earlier ts= and none in the header)"
    assert written_rows(result)[("synthesized", epoch)] == (1, (7,))


def test_meta_records_the_session_and_its_header(tmp_path: Path) -> None:
    events, meta, result = write(tmp_path, "u: hi\n")
    assert events == []
    assert meta["session_id"] == "s" and meta["created_at"] == "1970-01-01T00:00:00.000+00:00"
    assert meta["bbox_header"] == {"format": "bbox/1", "id": "s", "repo_sha": "abc1234"}
    assert written_rows(result)[("extra", "header keys (in meta.json's bbox_header)")] == (3, (0,))
    (written,), meta, result = write(tmp_path, "t:read\n", "---\nformat: bbox/1\nrepo_sha: abc1234\n---\n")
    assert written["session_id"] == meta["session_id"] == "bbox-session"
    assert written_rows(result)[("synthesized", "session_id (the header has no id)")] == (1, (0,))


def test_ids_are_kept_once_and_synthesized_around_the_taken_ones(tmp_path: Path) -> None:
    body = "t:read\nt:read id=inv_00001\nt:read id=inv_00001\nt:read id=inv_00003\nt:read\n"
    events, _, result = write(tmp_path, body)
    assert [e["invocation_id"] for e in events] == [
        "inv_00002",
        "inv_00001",
        "inv_00004",
        "inv_00003",
        "inv_00005",
    ]
    found = written_rows(result)
    assert found[("synthesized", "invocation ids (id= none: inv_NNNNN)")] == (2, (6, 10))
    assert found[("synthesized", "invocation ids (id= repeated: inv_NNNNN)")] == (1, (8,))


def test_a_continuation_line_without_its_event_is_dropped(tmp_path: Path) -> None:
    _, _, result = write(tmp_path, "  stray\nt:read\n")
    assert written_rows(result)[("dropped", "continuation lines without an event")] == (1, (6,))


def test_a_folder_that_cannot_be_written_is_a_convert_error(tmp_path: Path) -> None:
    import pytest

    from bbox_lark.convert import ConvertError

    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConvertError, match=r"cannot write: "):
        convert(HEAD + "t:read\n", "bbox", to="lightbox", output_path=blocker / "s")


# -- the chain ---------------------------------------------------------------------------


def verified(data: bytes, anchor: Any = None) -> Any:
    from bbox_lark.convert.lightbox.chain import verify_bytes

    return verify_bytes(data, anchor=anchor)


def test_a_valid_chain_says_its_count_and_head() -> None:
    from bbox_lark.convert.lightbox.chain import Anchor

    good = lightbox_bytes(event(), event(invocation_id="i2"))
    first = good.splitlines(keepends=True)[0]
    two = verified(good)
    assert two.summary() == f"VALID: 2 events, head {two.head[:12]}…"
    assert verified(first).summary().startswith("VALID: 1 event, head ")
    assert verified(b"").summary() == "VALID: 0 events, no head"
    assert verified(b"").to_json() == {
        "path": "<bytes>",
        "status": "VALID",
        "exit_code": 0,
        "events": 0,
        "head": None,
        "line": None,
        "invocation_id": None,
        "reason": None,
        "expected": None,
        "actual": None,
        "anchor": None,
        "notes": [],
    }
    anchored = verified(good, Anchor(json.loads(first)["hash"], 1))
    assert anchored.to_json()["anchor"] == {"head": json.loads(first)["hash"], "events": 1}
    assert anchored.notes == (
        "meta.json's bbox_lark_anchor covers the first 1 of 2 events"
        " (events were appended after it was written)",
    )
    assert verified(good, Anchor(None, 0)).valid


def test_a_chain_shorter_than_its_anchor_is_truncated() -> None:
    from bbox_lark.convert.lightbox.chain import Anchor, Status

    first = lightbox_bytes(event()).rstrip(b"\n") + b"\n"
    one_missing = verified(first, Anchor("0" * 64, 2))
    assert one_missing.status is Status.TRUNCATED and one_missing.exit_code == 2
    assert one_missing.summary() == (
        "TRUNCATED: the chain ends after 1 event but meta.json's bbox_lark_anchor records 2:"
        " the last event is missing"
    )
    assert (one_missing.expected, one_missing.actual) == ("0" * 64, one_missing.head)
    two_missing = verified(first, Anchor("0" * 64, 3))
    assert two_missing.reason.endswith("records 3: the last 2 events are missing")
    none = verified(b"", Anchor("0" * 64, 2))
    assert none.reason.startswith("the chain ends after 0 events but")


def test_a_rewritten_chain_contradicts_its_anchor_at_its_line() -> None:
    from bbox_lark.convert.lightbox.chain import Anchor, Status

    good = lightbox_bytes(event(), event(invocation_id="i2"))
    found = verified(good, Anchor("0" * 64, 2))
    assert (found.status, found.line, found.expected) == (Status.TAMPERED, 2, "0" * 64)
    assert found.actual == verified(good).head
    assert found.summary() == (
        "TAMPERED: line 2: event 2's hash differs from the head meta.json's bbox_lark_anchor records"
        " (the chain was rewritten)"
    )
    empty = verified(b"", Anchor(None, 0))
    assert empty.valid


RULE = ": floats are prohibited (canonicalization rule 4), so it has no hash"


def test_each_kind_of_bad_line_says_why() -> None:
    first = lightbox_bytes(event())
    cases = {
        b"\xff\xfe\n": "not valid UTF-8 (byte 0xff at byte 1)",
        b"abc\xff\n": "not valid UTF-8 (byte 0xff at byte 4)",
        b'{"a":1,"a":2}\n': "duplicate key 'a': readers disagree on which value counts",
        b"1" * 5000 + b"\n": "invalid JSON: a number with more digits than Python reads (4300)",
        b"[" * 100_000 + b"\n": "invalid JSON: nested too deeply",
        b'{"x": [1, {"y": 1.5}]}\n': "float 1.5 at x[1].y" + RULE,
        b"1.5\n": ("float 1.5 at (the line)" + RULE),
        b'{"x": NaN}\n': "float NaN at x" + RULE,
        b'{"x": [{"a": 1}, 1e5]}\n': "float 1e5 at x[1]" + RULE,
        b"[1]\n": "a JSON array, not an object",
        b"{oops\n": "invalid JSON: Expecting property name enclosed in double quotes (column 2)",
    }
    for line, reason in cases.items():
        found = verified(first + line)
        assert (found.status.name, found.line, found.reason, found.events) == ("PARSE_ERROR", 2, reason, 1), (
            line
        )
        assert found.summary() == f"PARSE_ERROR: line 2: {reason}"


def test_a_bad_line_names_its_invocation_when_it_can() -> None:
    first = lightbox_bytes(event())
    missing = verified(first + b'{"invocation_id": "q"}\n')
    assert missing.invocation_id == "q"
    assert missing.summary().startswith(
        "PARSE_ERROR: line 2 (invocation q): missing required field(s): schema_version,"
    )
    floats = verified(first + b'{"invocation_id": "q", "x": 1.5}\n')
    assert floats.invocation_id == "q"
    duplicate = verified(first + b'{"invocation_id": "q", "x": 1, "x": 2}\n')
    assert duplicate.invocation_id == "q"
    odd = verified(first + b'{"invocation_id": 5, "x": 1.5}\n')
    assert odd.invocation_id is None
    surrogate = json.loads(first)
    surrogate["tool"] = "\ud800"
    line = json.dumps(surrogate).encode() + b"\n"
    found = verified(line)
    assert found.reason == "a string holds a lone surrogate (\\udXXX escape), which UTF-8 cannot encode"
    assert found.invocation_id == "inv_1"


def test_only_a_cut_at_the_end_is_truncated() -> None:
    first = lightbox_bytes(event())
    cut_char = verified(first + b"abc\xe2\x82")
    assert cut_char.status.name == "TRUNCATED" and cut_char.line == 2
    assert (
        cut_char.reason
        == "last line is incomplete (cut while writing?): not valid UTF-8 (byte 0xe2 at byte 4)"
    )
    assert cut_char.summary().startswith("TRUNCATED: line 2: last line is incomplete")
    inner = verified(first + b"a\xffbc")
    assert inner.status.name == "PARSE_ERROR"
    cut_json = verified(first + b'{"invocation_id": "q"}')
    assert cut_json.status.name == "TRUNCATED" and cut_json.invocation_id is None
    array = verified(first + b"[1]")
    assert array.status.name == "PARSE_ERROR"
    floats = verified(first + b'{"x": 1.5}')
    assert floats.status.name == "PARSE_ERROR"


def test_a_broken_link_names_both_hashes() -> None:
    good = lightbox_bytes(event(), event(invocation_id="i2"))
    first, second = good.splitlines(keepends=True)
    alone = verified(second)
    assert alone.reason == "first event's prev_hash is not null (the events before it are missing)"
    assert (alone.line, alone.invocation_id, alone.expected, alone.actual) == (
        1,
        "i2",
        None,
        json.loads(second)["prev_hash"],
    )
    swapped = verified(second + first)
    assert swapped.line == 1
    third = lightbox_bytes(event(), event(invocation_id="i2"), event(invocation_id="i3")).splitlines(
        keepends=True
    )
    skipped = verified(third[0] + third[2])
    assert skipped.reason == (
        "prev_hash does not match the previous event's hash"
        " (an event was removed, moved or inserted before it)"
    )
    assert (skipped.expected, skipped.actual) == (
        json.loads(first)["hash"],
        json.loads(third[2])["prev_hash"],
    )
    changed = verified(first + second.replace(b'"i2"', b'"i9"'))
    assert changed.reason == "hash does not match its content (a field was changed, added or removed)"
    assert changed.actual == json.loads(second)["hash"]
    assert changed.expected != changed.actual and len(changed.expected) == 64
    numbered = json.loads(second)
    numbered["hash"] = 5
    assert verified(first + json.dumps(numbered).encode() + b"\n").actual == "5"


def test_only_the_first_problem_is_reported_and_events_still_counted() -> None:
    good = lightbox_bytes(event(), event(invocation_id="i2"), event(invocation_id="i3"))
    lines = good.splitlines(keepends=True)
    both = verified(lines[0] + b"{oops\n" + lines[2].replace(b'"i3"', b'"i9"') + b"[1]\n")
    assert (both.status.name, both.line, both.events) == ("PARSE_ERROR", 2, 2)
    chained = verified(lines[0] + lines[2] + lines[1])
    assert (chained.line, chained.events) == (2, 3)


def test_a_last_line_without_its_ending_is_noted() -> None:
    good = lightbox_bytes(event())
    assert verified(good.rstrip(b"\n")).notes == (
        "line 1: the last line has no line ending (it is complete)",
    )
    assert verified(good.rstrip(b"\n") + b"\r").notes == ()
    assert verified(good + b"\n\n").notes == ()


def test_lone_carriage_returns_end_lines_as_the_reference_reads_them(tmp_path: Path) -> None:
    from bbox_lark.convert.lightbox.chain import verify

    good = lightbox_bytes(event(), event(invocation_id="i2"), event(invocation_id="i3"))
    (tmp_path / "events.jsonl").write_bytes(good.replace(b"\n", b"\r", 1))
    found = verify(tmp_path)
    assert (found.status.name, found.events) == ("VALID", 3)


# -- a session's files -------------------------------------------------------------------


def test_verify_reads_the_anchor_beside_the_events(tmp_path: Path) -> None:
    from bbox_lark.convert.lightbox.chain import Status, verify

    folder = session(tmp_path / "a", event(), event(invocation_id="i2"))
    assert verify(folder).anchor is not None
    meta = json.loads((folder / "meta.json").read_text())
    for bad in (
        "x",
        {"head": None, "events": -1},
        {"head": None, "events": True},
        {"head": None, "events": "2"},
        {"head": "a" * 64, "events": 0},
        {"head": "a" * 63, "events": 2},
        {"head": "A" * 64, "events": 2},
        {"head": None, "events": 2},
    ):
        meta["bbox_lark_anchor"] = bad
        (folder / "meta.json").write_text(json.dumps(meta))
        found = verify(folder)
        assert found.status is Status.PARSE_ERROR, bad
        assert found.reason == (
            'meta.json: bbox_lark_anchor must be {"head": <64 hex digits or null>, "events": <count>}'
        )
        assert (found.events, found.line) == (2, None)
    meta["bbox_lark_anchor"] = {"head": None, "events": 0}
    (folder / "meta.json").write_text(json.dumps(meta))
    assert verify(folder).valid
    (folder / "meta.json").write_bytes(b"\xff")
    unread = verify(folder)
    assert unread.valid and unread.notes == ("meta.json: not read (UnicodeDecodeError); no anchor checked",)
    (folder / "meta.json").write_text("[1]")
    assert verify(folder).notes == ()


def test_a_bad_anchor_does_not_hide_a_cut_line(tmp_path: Path) -> None:
    from bbox_lark.convert.lightbox.chain import Status, verify

    folder = session(tmp_path / "a", event(), event(invocation_id="i2"))
    (folder / "meta.json").write_text(json.dumps({"bbox_lark_anchor": "x"}))
    with (folder / "events.jsonl").open("ab") as stream:
        stream.write(b'{"tool": "x')
    assert verify(folder).status is Status.TRUNCATED
    lines = (folder / "events.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "events.jsonl").write_bytes(lines[0] + lines[1].replace(b'"i2"', b'"i9"'))
    assert verify(folder).status is Status.PARSE_ERROR  # the anchor we wrote, malformed, wins


def test_verify_names_what_is_missing(tmp_path: Path) -> None:
    from bbox_lark.convert.lightbox.chain import verify

    assert verify(tmp_path / "nope").reason == f"{tmp_path / 'nope'}: no such file or folder"
    assert verify(tmp_path).reason == f"{tmp_path}: no events.jsonl in this folder"
    for name in ("d.events.jsonl", "a.events.jsonl", "c.events.jsonl", "b.events.jsonl"):
        (tmp_path / name).write_text("")
    assert verify(tmp_path).reason == (
        f"{tmp_path}: no events.jsonl in this folder"
        " (found a.events.jsonl, b.events.jsonl, c.events.jsonl: give the file)"
    )
    (tmp_path / "events.jsonl").mkdir()
    assert verify(tmp_path).reason == f"{tmp_path / 'events.jsonl'}: is not a file"
    assert verify(tmp_path / "a.events.jsonl").valid


def test_the_meta_file_of_an_events_file() -> None:
    from bbox_lark.convert.lightbox.session import meta_file

    assert meta_file(Path("x/events.jsonl")) == Path("x/meta.json")
    assert meta_file(Path("x/demo.events.jsonl")) == Path("x/demo.meta.json")
    assert meta_file(Path("x/demoevents.jsonl")) is None
    assert meta_file(Path("x/other.jsonl")) is None


def test_what_has_no_canonical_form_is_named_with_its_place() -> None:
    import pytest

    from bbox_lark.convert.lightbox.session import CanonicalizationError, canonical_json, chain

    cases: list[tuple[Any, str]] = [
        (1.5, "the value: float 1.5: floats are prohibited; write decimals as strings"),
        ({"a": {"b": [1, 2.0]}}, "at a.b[1]: float 2.0: floats are prohibited; write decimals as strings"),
        ({"a": {3: "x"}}, "at a: key 3 is not a string"),
        ({1: "x"}, "the value: key 1 is not a string"),
        ([b"x"], "at [0]: bytes is not a JSON value"),
        ((1, {"k": {1}}), "at [1].k: set is not a JSON value"),
    ]
    for value, message in cases:
        with pytest.raises(CanonicalizationError) as refused:
            canonical_json(value)
        assert str(refused.value) == message
    assert canonical_json((1, "é")) == '[1,"é"]'
    with pytest.raises(CanonicalizationError) as surrogate:
        chain([event(), event(tool="a\udc80")])
    assert str(surrogate.value) == "event 1: text holds U+DC80, a lone surrogate, which UTF-8 cannot encode"


def test_chain_replaces_the_hashes_it_is_given() -> None:
    from bbox_lark.convert.lightbox.session import chain, event_hash

    given = [event(prev_hash="x", hash="y"), event(invocation_id="i2", hash="z")]
    first, second = chain(given)
    assert first["prev_hash"] is None and second["prev_hash"] == first["hash"]
    assert first["hash"] == event_hash(event(), None)
    assert "hash" in given[0] and given[0]["prev_hash"] == "x"  # the events given are not changed


def test_write_session_fills_the_schema_version_and_meta(tmp_path: Path) -> None:
    import pytest

    from bbox_lark.convert.lightbox.session import write_session

    plain = {key: value for key, value in event().items() if key != "schema_version"}
    (written,) = write_session(tmp_path / "a", [plain])
    assert written["schema_version"] == "1"
    meta = json.loads((tmp_path / "a" / "meta.json").read_text())
    assert {k: meta[k] for k in ("session_id", "schema_version", "lightbox_version", "created_at")} == {
        "session_id": "s",
        "schema_version": "1",
        "lightbox_version": "0.1.0",
        "created_at": START,
    }
    assert (tmp_path / "a" / "meta.json").read_text().startswith('{\n  "session_id": "s",\n')
    write_session(tmp_path / "b", [], {"session_id": "e"})
    empty = json.loads((tmp_path / "b" / "meta.json").read_text())
    assert empty["bbox_lark_anchor"] == {"head": None, "events": 0}
    assert empty["created_at"].endswith("+00:00") and len(empty["created_at"]) == 29
    with pytest.raises(ValueError, match=r"^event 0: not a mapping but list$"):
        write_session(tmp_path / "c", [[1]])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"^event 0: missing required field\(s\): tool, input$"):
        write_session(tmp_path / "c", [{k: v for k, v in event().items() if k not in ("tool", "input")}])
    with pytest.raises(ValueError, match="no session_id"):
        write_session(tmp_path / "c", [event()], {"session_id": ""})
    with pytest.raises(FileExistsError, match="already exists"):
        write_session(tmp_path / "a", [event()])


# -- values ------------------------------------------------------------------------------


def test_a_latency_is_given_only_when_it_writes_the_end_back() -> None:
    from bbox_lark.convert.lightbox.values import latency_between, render_time

    assert latency_between(START, END) == 1000
    assert latency_between("2025-01-01T00:00:00Z", "2025-01-01T00:00:00.250Z") == 250
    assert latency_between("2025-01-01T00:00:00Z", "2025-01-01T00:00:00.250+00:00") is None
    assert latency_between(START, START) == 0
    assert latency_between(END, START) is None
    assert latency_between("x", END) is None and latency_between(START, 5) is None
    from datetime import datetime

    moment = datetime.fromisoformat("2025-01-01T10:00:00+02:00")
    assert render_time(moment, "2025-01-01T10:00:00Z") == "2025-01-01T10:00:00.000+02:00"


# -- the package -------------------------------------------------------------------------


def test_the_package_answers_its_names_lazily() -> None:
    import importlib

    import pytest

    package = importlib.import_module("bbox_lark.convert.lightbox")
    from bbox_lark.convert.lightbox import reader, tables, writer

    assert package.read is reader.read and package.sniff is reader.sniff and package.write is writer.write
    assert package.INLINE_LIMIT == tables.INLINE_LIMIT and package.EPOCH == tables.EPOCH
    with pytest.raises(
        AttributeError, match=r"^module 'bbox_lark.convert.lightbox' has no attribute 'nope'$"
    ):
        package.nope  # noqa: B018


def test_the_format_as_the_registry_sees_it() -> None:
    import importlib

    from bbox_lark.convert.base import REPO_SHA
    from bbox_lark.convert.lightbox import reader, tables, writer

    found = importlib.import_module("bbox_lark.convert.lightbox")._format()
    assert (found.name, found.extensions, found.output, found.lossless, found.reads_folders) == (
        "lightbox",
        (".jsonl",),
        "folder",
        False,
        True,
    )
    assert found.description == "Lightbox sessions: hash-chained events.jsonl + meta.json (a folder)"
    assert found.fidelity.startswith("calls only (names, ids, arguments, fields, results, timing);")
    assert found.fidelity.endswith("lifecycle lines are dropped and reported")
    assert (found.sniff, found.read, found.write) == (reader.sniff, reader.read, writer.write)
    assert found.options == (REPO_SHA,)
    assert (found.export_mapping, found.import_mapping) == (tables.EXPORT_MAPPING, tables.IMPORT_MAPPING)


def test_a_calls_metrics_and_repeated_keys_are_reported_dropped(tmp_path: Path) -> None:
    """A real bug found reading the writer for its mutants: a call's trailing ``# metrics``
    (its tokens and cost) and a field key repeated on a line were left out of the session
    with no word in the report."""
    body = "t:read id=a → [ok] # metrics tokens_in=500 tokens_out=20 cost_usd=0.01\nt:read k=1 k=2\nt:read\n"
    events, _, result = write(tmp_path, body)
    assert events[1]["input"] == {"k": "1"}
    found = written_rows(result)
    assert found[("dropped", "metrics comments of calls (Lightbox has no place for them)")] == (1, (6,))
    assert found[("dropped", "repeated field keys (the first one is written)")] == (1, (7,))


def test_an_error_or_tool_field_the_event_does_not_use_stays_input(tmp_path: Path) -> None:
    """Found with the metrics above: ``error=`` on a call that is no error, and ``tool=`` on a
    line whose tool name it is not, were left out with no word in the report."""
    body = "t:read error=x → [ok]\nx:explore tool=foo\nt:read tool=a\n"
    events, _, result = write(tmp_path, body)
    assert [(e["tool"], e["input"], e.get("error")) for e in events] == [
        ("read", {"error": "x"}, None),
        ("x:explore", {"tool": "foo"}, None),
        ("a", {}, None),
    ]
    assert not any(fate == "dropped" for fate, _ in written_rows(result))


def test_a_call_without_a_name_comes_back_as_a_tool_line(tmp_path: Path) -> None:
    """A real bug a mutant's test showed: a name-less call (``x:``, ``s:``, ``p:``, ``c:``),
    written as the tool ``x:``, was skipped on reading (``a subagent line with arguments or
    fields needs a name``: every event's line has an ``id=``); it is a ``t:x:`` line now,
    whose tool name goes back to Lightbox as ``x:``."""
    found = calls(event(tool="x:"), event(invocation_id="i2", tool="p:", input={"args": ["a"]}))
    assert [(e.kind, e.name, e.args) for e in found] == [("tool", "x:", ()), ("tool", "p:", ("a",))]
    events, _, _ = write(tmp_path, "x:\ns:\n")
    assert [e["tool"] for e in events] == ["x:", "s:"]
    back = convert(b"", "lightbox", to="bbox", path=tmp_path / "written")
    assert back.skipped == ()
    assert [e.name for e in bbox_lark.parse(back.text).events] == ["x:", "s:"]


# -- convert/lightbox/values.py, directly ----------------------------------------------------------


def test_lightbox_compact_json() -> None:
    from datetime import datetime

    from bbox_lark.convert.lightbox.values import compact_json

    value = {"z": "é ✓", "a": [1, None], "when": datetime(2026, 1, 2, 3, 4, 5)}
    assert compact_json(value) == '{"z":"é ✓","a":[1,null],"when":"2026-01-02 03:04:05"}'  # keys in order
    assert compact_json(value, ascii_only=True) == (
        '{"z":"\\u00e9 \\u2713","a":[1,null],"when":"2026-01-02 03:04:05"}'
    )


def test_lightbox_json_lines_are_ascii_indented_by_two() -> None:
    from datetime import datetime

    from bbox_lark.convert.lightbox.values import json_lines

    assert json_lines({"text": "two words é", "at": datetime(2026, 1, 2)}) == [
        "{",
        '  "text": "two words \\u00e9",',
        '  "at": "2026-01-02 00:00:00"',
        "}",
    ]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1, "b": [true, null, "x"]}', {"a": 1, "b": [True, None, "x"]}),
        ('{"a": 1.5}', None),  # a float: refused
        ('{"a": NaN}', None),
        ('{"a": Infinity}', None),
        ("[1]", None),
        ("not json", None),
        ("[" * 100_000, None),
    ],
)
def test_lightbox_json_object(text: str, value: object) -> None:
    from bbox_lark.convert.lightbox.values import json_object

    assert json_object(text) == value


@pytest.mark.parametrize(
    ("value", "text"),
    [(True, "true"), (False, "false"), (None, "null"), (7, "7"), ("s", "s"), (1.5, None), ([1], None)],
)
def test_lightbox_scalar_text(value: object, text: str | None) -> None:
    from bbox_lark.convert.lightbox.values import scalar_text

    assert scalar_text(value) == text


def test_lightbox_s_lazy_names_are_kept_once_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import bbox_lark.convert.lightbox as lightbox

    for name in ("FORMAT", "write"):
        monkeypatch.delitem(vars(lightbox), name, raising=False)  # not loaded yet (restored after)
    first = lightbox.FORMAT
    assert lightbox.FORMAT is first and vars(lightbox)["FORMAT"] is first
    writer = lightbox.write
    assert vars(lightbox)["write"] is writer


def test_write_session_writes_sorted_lines_into_new_folders(tmp_path: Path) -> None:
    from bbox_lark.convert.lightbox.session import canonical_text, write_session

    folder = tmp_path / "x" / "y" / "session"  # parents made too
    chained = write_session(folder, [event(), event(invocation_id="i2")])
    lines = (folder / "events.jsonl").read_text(encoding="ascii").splitlines()
    assert lines == [json.dumps(e, sort_keys=True, separators=(",", ":")) for e in chained]
    assert lines[0].startswith('{"hash":')
    with pytest.raises(ValueError, match=r"^event 0: missing required field\(s\): timestamp_end$"):
        write_session(tmp_path / "d", [{k: v for k, v in event().items() if k != "timestamp_end"}])
    with pytest.raises(ValueError, match=r"^no session_id: give it in meta"):
        write_session(tmp_path / "e", [], {})
    with pytest.raises(ValueError):
        canonical_text({"a": float("nan")})  # no NaN in canonical JSON


def test_lightbox_events_file_of_a_fifo_and_a_socket(tmp_path: Path) -> None:
    import os
    import socket

    from bbox_lark.convert.lightbox.session import events_file

    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    assert events_file(fifo) == (fifo, None)  # a stream is read once, as a file
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        assert events_file(path) == (None, f"{path}: cannot read: a socket, not a file")
