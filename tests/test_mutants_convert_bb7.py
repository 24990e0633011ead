"""BB-7 ``chat.json`` → bbox (``bbox_lark/convert/bb7/``), pinned down where mutation testing
found nothing holding it: a message's usage as metrics (each number as written, what is not a
number dropped and named), file references with their line ranges and ids, what a part or a
message that cannot be read says and where, the header's fields, the timestamp rules
(docs/testing.md, "Mutation testing"; docs/formats/bb7.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import bbox_lark
from bbox_lark.convert import Conversion, convert
from bbox_lark.convert.bb7 import load_chat, migrate_chat, sniff
from bbox_lark.syntax.nodes import Event


def to_bbox(data: str | bytes) -> Conversion:
    return convert(data, "bb7", to="bbox")


def chat(*messages: Any, **fields: Any) -> str:
    return json.dumps({"version": 2, "id": "c1", "model": "m", **fields, "messages": list(messages)})


def events(result: Conversion) -> list[Event]:
    return list(bbox_lark.parse(result.text).events)


def rows(result: Conversion) -> dict[tuple[str, str], tuple[int, tuple[int, ...]]]:
    return {(e.action, e.what): (e.count, e.lines) for e in result.fidelity.entries}


def body(result: Conversion) -> list[str]:
    """The document's lines after the header."""
    return result.text.split("---\n", 2)[2].splitlines()


def usage_of(usage: Any) -> Conversion:
    return to_bbox(chat({"role": "assistant", "parts": [{"type": "text", "content": "hi"}], "usage": usage}))


# -- usage: each number as written -----------------------------------------------------------


def test_usage_numbers_are_written_as_plain_decimals() -> None:
    result = usage_of(
        {
            "prompt_tokens": 1200.0,
            "completion_tokens": 7,
            "cost": 1e-07,
            "total_tokens": 1e20,
            "cached_tokens": 2.5,
            "duration": 0.25,
        }
    )
    (event,) = events(result)
    assert event.metrics == {
        "prompt_tokens": "1200",
        "completion_tokens": "7",
        "cost_usd": "0.0000001",
        "total_tokens": "100000000000000000000",
        "cached_tokens": "2.5",
        "latency_ms": "250",
    }
    assert rows(result)[("kept", "usage (inline # metrics on the message's first line)")] == (1, (1,))


def test_usage_values_that_are_no_numbers_are_dropped_and_named() -> None:
    text = chat(
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "hi"}],
            "usage": {"a": True, "b": "12", "c": None, "d": float("nan"), "e": float("inf"), "f": -1e999},
        }
    )
    assert "NaN" in text and "Infinity" in text  # Python's json writes and reads them
    result = to_bbox(text)
    (event,) = events(result)
    assert event.metrics is None
    report = rows(result)
    for key in "abcdef":
        assert report[("dropped", f"usage values that are not numbers ({key})")] == (1, (1,))
    assert ("kept", "usage (inline # metrics on the message's first line)") not in report


def test_usage_keys_of_no_known_name_are_extra_metrics() -> None:
    (event,) = events(usage_of({"weird key!": 3, "": 4, "ok.name-1_x": 5}))
    assert event.metrics == {"extra.weird_key_": "3", "extra._": "4", "extra.ok.name-1_x": "5"}


def test_usage_that_is_no_object_is_dropped() -> None:
    result = usage_of([1, 2])
    assert events(result)[0].metrics is None
    assert rows(result)[("dropped", "usage fields that are not objects")] == (1, (1,))


def test_usage_goes_on_the_first_line_only_whatever_its_part() -> None:
    result = to_bbox(
        chat(
            {
                "role": "assistant",
                "usage": {"prompt_tokens": 5},
                "output_files": ["a.go"],
                "reasoning_effort": "low",
                "parts": [{"type": "file", "path": "a.go"}, {"type": "text", "content": "done"}],
            }
        )
    )
    assert body(result) == [
        "t:write a.go output_files=[a.go] extra.reasoning_effort=low extra.part=file"
        " # metrics prompt_tokens=5",
        "a: done",
    ]


# -- file references -----------------------------------------------------------------------


def snapshot_of(refs: Any) -> Conversion:
    return to_bbox(
        chat({"role": "user", "parts": [{"type": "text", "content": "x"}], "context_snapshot": refs})
    )


def test_a_file_reference_has_its_range_only_when_both_ends_are_positive() -> None:
    refs = [
        {"path": "a", "start_line": 1, "end_line": 1, "file_id": "i1"},
        {"path": "b", "start_line": 0, "end_line": 5},
        {"path": "c", "start_line": 2, "end_line": 0},
        {"path": "d", "start_line": 2, "end_line": "9"},
        {"path": "e", "start_line": "2", "end_line": 9, "file_id": ""},
        {"path": "f", "file_id": 7},
    ]
    result = snapshot_of(refs)
    snapshot = events(result)[0]
    assert snapshot.fields["files"] == ("a:1-1@i1", "b", "c", "d", "e", "f")
    assert rows(result)[("kept", "context snapshots (# file-snapshot: files=[…])")] == (1, (1,))


def test_a_snapshot_with_a_reference_that_is_no_file_is_dropped_whole() -> None:
    for refs in ([{"path": "a"}, "b"], [{"path": 5}], [{"name": "a"}], {"path": "a"}):
        result = snapshot_of(refs)
        assert [e.kind for e in events(result)] == ["user"], refs
        assert rows(result)[("dropped", "context snapshots that are not lists of file references")] == (
            1,
            (1,),
        )


def test_an_empty_snapshot_is_no_comment() -> None:
    for refs in ([], None):
        result = snapshot_of(refs)
        assert [e.kind for e in events(result)] == ["user"]
        assert not any("snapshot" in what for _, what in rows(result))


def test_context_files_keep_ids_and_name_readonly_and_external_paths_without_them() -> None:
    files = [
        {"path": "a", "version": "v1", "readonly": True, "": "odd"},
        {"path": "b", "version": "v2", "external": True, "start_line": 3, "end_line": 4},
        {"path": "c", "readonly": "yes", "external": 1},
    ]
    result = to_bbox(chat(context_files=files))
    (comment,) = events(result)
    assert comment.text.startswith("file-snapshot: context")
    assert comment.fields["files"] == ("a@v1", "b:3-4@v2", "c")
    assert comment.fields["readonly"] == ("a",)
    assert comment.fields["external"] == ("b:3-4",)
    assert rows(result)[("kept", "chat context files (# file-snapshot: context, at the end)")] == (1, (1,))


def test_context_files_with_none_readonly_or_external_have_no_such_field() -> None:
    (comment,) = events(to_bbox(chat(context_files=[{"path": "a"}])))
    assert dict(comment.fields) == {"files": ("a",)}


def test_context_files_that_are_no_references_are_dropped() -> None:
    for files in ([{"path": "a"}, 3], "a", {"path": "a"}):
        result = to_bbox(chat(context_files=files))
        assert events(result) == []
        assert rows(result)[("dropped", "context_files that are not lists of file references")] == (1, (1,))
    assert events(to_bbox(chat(context_files=[]))) == []


# -- parts -----------------------------------------------------------------------------------


LAYOUT = '{"version": 2, "id": "c", "messages": [\n  {"role": "user", "parts": [\n    %s\n  ]}\n]}'


def one_part(part: Any) -> Conversion:
    return to_bbox(LAYOUT % json.dumps(part))


def test_a_file_part_without_a_path_is_skipped_at_its_place() -> None:
    for part in ({"type": "file"}, {"type": "file", "path": ""}):
        result = one_part(part)
        assert events(result) == [e for e in events(result) if e.kind == "user"]
        assert [(s.line, s.message) for s in result.skipped] == [
            (3, "message 0, part 0 (line 3, column 5): a file part needs a path")
        ]


def test_a_part_of_an_unknown_shape_is_skipped_with_its_reason() -> None:
    cases = [
        ("text", "message 0, part 0 (line 3, column 5): a part must be a JSON object, not a string"),
        ({"content": "x"}, "message 0, part 0 (line 3, column 5): unknown part type none (BB-7 writes"),
        ({"type": "image"}, 'message 0, part 0 (line 3, column 5): unknown part type "image" (BB-7'),
        ({"type": "text", "content": 5}, "message 0, part 0 (line 3, column 5): content must be a string,"),
        ({"type": "code", "language": []}, "message 0, part 0 (line 3, column 5): language must be"),
        ({"type": "file", "path": {}}, "message 0, part 0 (line 3, column 5): path must be a string, not an"),
        ({"type": "context_event", "action": 1}, "message 0, part 0 (line 3, column 5): action must be"),
        ({"type": "context_event", "path": "p", "version": 1}, "(line 3, column 5): version must be"),
        ({"type": "context_event", "path": "p", "prev_version": 1}, "(line 3, column 5): prev_version must"),
        (
            {"type": "context_event", "path": "p", "original_path": 1},
            "(line 3, column 5): original_path must",
        ),
        ({"type": "context_event"}, "part 0 (line 3, column 5): a context event needs an action or a path"),
        (
            {"type": "context_event", "path": "p", "start_line": "1"},
            "(line 3, column 5): start_line must be an integer, not a string",
        ),
        (
            {"type": "context_event", "path": "p", "end_line": True},
            "(line 3, column 5): end_line must be an integer, not a boolean",
        ),
    ]
    for part, message in cases:
        result = one_part(part)
        assert [s.line for s in result.skipped] == [3], part
        assert message in result.skipped[0].message, (part, result.skipped[0].message)
    assert (
        "BB-7 writes text, thinking, code, file, context_event, raw)"
        in one_part({"type": 1}).skipped[0].message
    )


def test_a_message_whose_parts_all_skip_is_an_empty_line_of_its_role() -> None:
    result = one_part({"type": "image"})
    assert body(result) == ["u:"]
    assert rows(result)[("kept", "messages with no part to show (an empty line of their role)")] == (1, (2,))


def test_fields_only_context_events_have_are_dropped_from_text_parts() -> None:
    result = one_part({"type": "text", "content": "x", "path": "p", "added": True, "language": "go"})
    assert body(result) == ["u: x"]
    report = rows(result)
    assert report[("dropped", "text part fields that only context events have (added)")] == (1, (3,))
    assert report[("dropped", "text part fields that only context events have (path)")] == (1, (3,))
    assert report[("dropped", "text part fields that only code parts have (language)")] == (1, (3,))
    assert report[("kept", "text parts")] == (1, (3,))


def test_a_code_part_keeps_its_language_and_a_raw_part_has_none() -> None:
    code = one_part({"type": "code", "content": "x = 1", "language": "py"})
    assert body(code) == ["u: extra.part=code extra.language=py", "  x = 1"]
    assert not any("only code parts" in what for _, what in rows(code))
    raw = one_part({"type": "raw", "content": "x = 1", "language": "py"})
    assert body(raw) == ["u: extra.part=raw", "  x = 1"]
    assert rows(raw)[("dropped", "raw part fields that only code parts have (language)")] == (1, (3,))
    assert body(one_part({"type": "code", "content": "y", "language": ""})) == ["u: extra.part=code", "  y"]


def test_a_part_with_no_text_is_dropped_and_named_by_its_type() -> None:
    for kind in ("text", "thinking", "code", "raw"):
        result = one_part({"type": kind, "content": " \n\t"})
        assert rows(result)[("dropped", f"{kind} parts with no text")] == (1, (3,))
        assert body(result) == ["u:"]


def test_a_thinking_part_is_a_thinking_line_whatever_the_role() -> None:
    result = one_part({"type": "thinking", "content": "hmm"})
    assert body(result) == ["th: hmm"]
    assert rows(result)[("kept", "thinking parts")] == (1, (3,))


def test_unknown_part_fields_are_named() -> None:
    result = one_part({"type": "text", "content": "x", "zz": 1, "aa": 2})
    report = rows(result)
    assert report[("dropped", "unknown part fields (aa)")] == (1, (3,))
    assert report[("dropped", "unknown part fields (zz)")] == (1, (3,))


# -- context events ----------------------------------------------------------------------------


def test_a_context_event_writes_its_values_in_order() -> None:
    result = one_part(
        {
            "type": "context_event",
            "action": "UserAddSection",
            "path": "p.go",
            "version": "v2",
            "prev_version": "v1",
            "original_path": "o.go",
            "start_line": 1,
            "end_line": 2,
            "readonly": False,
            "external": True,
            "added": False,
        }
    )
    assert body(result) == [
        "t:add-section p.go version=v2 prev_version=v1 original_path=o.go lines=1-2 readonly=false"
        " external=true by=user"
    ]
    assert rows(result)[("kept", "context events UserAddSection (t:add-section)")] == (1, (3,))


def test_a_context_event_range_needs_both_ends_positive() -> None:
    (event,) = events(one_part({"type": "context_event", "path": "p", "start_line": 1, "end_line": 1}))
    assert event.fields["lines"] == "1-1"
    for start, end in ((0, 2), (2, 0)):
        (event,) = events(
            one_part({"type": "context_event", "path": "p", "start_line": start, "end_line": end})
        )
        assert "lines" not in event.fields


def test_context_event_flags_that_are_no_booleans_are_dropped() -> None:
    result = one_part(
        {"type": "context_event", "action": "AssistantWriteFile", "path": "p", "readonly": 1, "added": "yes"}
    )
    assert body(result) == ["t:write p"]
    report = rows(result)
    assert report[("dropped", "context event readonly fields that are not booleans")] == (1, (3,))
    assert report[("dropped", "context event added fields that are not booleans")] == (1, (3,))
    assert report[("kept", "context events AssistantWriteFile (t:write)")] == (1, (3,))


def test_an_action_without_a_path_has_no_argument_and_an_unknown_one_is_named() -> None:
    result = one_part({"type": "context_event", "action": "Odd"})
    assert body(result) == ["t:context-event action=Odd"]
    key = ("kept", "context events of an action the spec does not list (t:context-event action=…)")
    assert rows(result)[key] == (1, (3,))


def test_a_fork_warning_is_a_notes_comment_with_its_values_and_time() -> None:
    text = chat(
        {
            "role": "user",
            "timestamp": "2025-01-01T00:00:00Z",
            "parts": [
                {"type": "context_event", "action": "ForkWarningDeleted", "path": "p", "version": "v"},
                {"type": "text", "content": "x"},
            ],
        }
    )
    result = to_bbox(text)
    assert body(result) == [
        "# notes: fork-warning deleted path=p version=v ts=2025-01-01T00:00:00Z",
        "u: x ts=2025-01-01T00:00:00Z",
    ]
    assert rows(result)[("kept", "context events ForkWarningDeleted (# notes: fork-warning)")] == (1, (1,))
    bare = chat(
        {"role": "user", "parts": [{"type": "context_event", "action": "ForkWarningModified", "path": "q"}]}
    )
    assert body(to_bbox(bare)) == ["# notes: fork-warning modified path=q"]


# -- messages ------------------------------------------------------------------------------------


MESSAGES = '{"version": 2, "id": "c", "messages": [\n  {"role": "user", "content": "a"},\n  %s\n]}'


def test_a_message_of_an_unknown_shape_is_skipped_with_its_reason() -> None:
    cases = [
        ("5", "message 1 (line 3, column 3): a message must be a JSON object, not a number"),
        ('{"parts": []}', "message 1 (line 3, column 3): unknown role none (BB-7 writes user, assistant"),
        ('{"role": "tool"}', 'message 1 (line 3, column 3): unknown role "tool" (BB-7 writes user, assist'),
        (
            '{"role": "user", "content": []}',
            "(line 3, column 3): legacy content must be a string, not an array",
        ),
        ('{"role": "user", "parts": {}}', "(line 3, column 3): parts must be a list, not an object"),
    ]
    for message, reason in cases:
        result = to_bbox(MESSAGES % message)
        assert [(s.line, reason in s.message) for s in result.skipped] == [(3, True)], (
            message,
            result.skipped,
        )
        assert body(result) == ["u: a"]


def test_a_long_unknown_role_is_shown_cut() -> None:
    result = to_bbox(MESSAGES % json.dumps({"role": "r" * 100}))
    assert f'unknown role "{"r" * 59} (BB-7' in result.skipped[0].message


def test_legacy_content_beside_parts_is_dropped_and_an_empty_one_is_nothing() -> None:
    result = to_bbox(chat({"role": "user", "content": "old", "parts": [{"type": "text", "content": "new"}]}))
    assert body(result) == ["u: new"]
    assert rows(result)[("dropped", "legacy content beside parts (BB-7 ignores it)")] == (1, (1,))
    empty = to_bbox(chat({"role": "user", "content": "", "parts": [{"type": "text", "content": "new"}]}))
    assert not any("legacy" in what for _, what in rows(empty))


def test_unknown_message_fields_are_named_and_messages_counted_by_role() -> None:
    result = to_bbox(chat({"role": "system", "parts": [{"type": "text", "content": "note"}], "zz": 1}))
    assert body(result) == ["@notify note"]
    report = rows(result)
    assert report[("dropped", "unknown message fields (zz)")] == (1, (1,))
    assert report[("kept", "system messages")] == (1, (1,))


def test_a_system_text_that_cannot_be_the_first_line_goes_on_continuation_lines() -> None:
    result = to_bbox(chat({"role": "system", "parts": [{"type": "text", "content": " indented\nnext"}]}))
    assert body(result) == ["@notify", "   indented", "  next"]


def test_a_field_at_the_end_of_a_text_is_no_field_of_its_line() -> None:
    """A text ending in ``tokens_out=99999`` on a message without usage gave its ``a:`` line
    that usage (``stats`` counted 99,999 output tokens never spent); ``ts=`` gave a line a
    time its message never had. The text now goes on a continuation line."""
    result = to_bbox(
        chat(
            {"role": "assistant", "parts": [{"type": "text", "content": "set tokens_out=99999"}]},
            {"role": "user", "timestamp": "2025-01-01T00:00:00Z", "content": "when ts=2020-01-01T00:00:00Z"},
            {"role": "user", "usage": {"prompt_tokens": 1}, "content": "say cost_usd=5"},
        )
    )
    assert body(result) == [
        "a:",
        "  set tokens_out=99999",
        "u: ts=2025-01-01T00:00:00Z",
        "  when ts=2020-01-01T00:00:00Z",
        "u: # metrics prompt_tokens=1",
        "  say cost_usd=5",
    ]
    assert [dict(e.fields) for e in events(result)] == [{}, {"ts": "2025-01-01T00:00:00Z"}, {}]
    assert rows(result)[("kept", "text first lines moved to a continuation line")] == (3, (1, 1, 1))


def test_a_model_switch_is_a_comment_once() -> None:
    result = to_bbox(
        chat(
            {"role": "user", "model": "m", "content": "a"},
            {"role": "assistant", "model": "n\nx", "content": "b"},
            {"role": "assistant", "model": "n x", "content": "c"},
            {"role": "assistant", "model": 5, "content": "d"},
        )
    )
    assert body(result) == ["u: a", "# model: n x", "a: b", "a: c", "a: d"]
    report = rows(result)
    assert report[("kept", "model switches (# model:)")] == (1, (1,))
    assert report[("dropped", "message model fields that are not strings")] == (1, (1,))


def test_output_files_and_reasoning_effort_of_a_message() -> None:
    result = to_bbox(
        chat(
            {"role": "assistant", "content": "a", "output_files": [], "reasoning_effort": ""},
            {"role": "assistant", "content": "b", "output_files": ["x", 1]},
            {"role": "assistant", "content": "c", "output_files": "x", "reasoning_effort": 3},
        )
    )
    assert body(result) == ["a: a", "a: b", "a: c"]
    report = rows(result)
    assert report[("dropped", "output_files that are not lists of strings")] == (2, (1, 1))
    assert report[("dropped", "message reasoning_effort fields that are not strings")] == (1, (1,))


# -- timestamps ----------------------------------------------------------------------------------


def test_a_timestamp_goes_on_every_line_of_its_message() -> None:
    ts = "2025-01-01T00:00:00Z"
    result = to_bbox(
        chat(
            {
                "role": "assistant",
                "timestamp": ts,
                "parts": [{"type": "text", "content": "a"}, {"type": "thinking", "content": "b"}],
            }
        )
    )
    assert body(result) == [f"a: a ts={ts}", f"th: b ts={ts}"]
    assert rows(result)[("kept", "timestamps (ts= on each line of the message)")] == (1, (1,))


def test_timestamps_that_are_no_time_are_dropped() -> None:
    for ts, what in (
        ("0001-01-01T00:00:00Z", "zero timestamps (Go's empty time, 0001-01-01)"),
        ("2025-01-01T00:00:00", "timestamps that are not ISO 8601 with a zone"),
        ("", None),
        (5, "message timestamp fields that are not strings"),
    ):
        result = to_bbox(chat({"role": "user", "content": "x", "timestamp": ts}))
        assert body(result) == ["u: x"], ts
        if what is not None:
            assert rows(result)[("dropped", what)] == (1, (1,))


# -- the header ----------------------------------------------------------------------------------


def test_the_header_fields_of_a_chat() -> None:
    result = to_bbox(
        json.dumps(
            {
                "version": 1,
                "id": "a\nb",
                "model": " m\n",
                "name": "t\ni",
                "created": "2025\n01",
                "reasoning_effort": "hi\tgh",
                "global": True,
                "messages": [],
                "odd": 1,
            }
        )
    )
    header = bbox_lark.parse(result.text).header
    assert (header["id"], header["model"], header["extra.title"]) == ("a b", "m", "t i")
    assert (header["extra.created"], header["extra.reasoning_effort"]) == ("2025 01", "hi gh")
    assert (header["extra.global"], header["extra.bb7_version"], header["agent"]) == ("true", "1", "bb7")
    report = rows(result)
    for what in (
        "chat ids (header id)",
        "chat models (header model)",
        "chat names (header extra.title)",
        "chat creation times (header extra.created)",
        "chat reasoning efforts (header extra.reasoning_effort)",
        "global chat flags (header extra.global)",
        "chat versions (header extra.bb7_version)",
    ):
        assert report[("kept", what)] == (1, (1,)), what
    assert report[("dropped", "line breaks and runs of whitespace in chat ids (one space each)")] == (1, (1,))
    assert report[("dropped", "unknown chat fields (odd)")] == (1, (1,))


def test_header_fields_that_are_absent_or_no_text() -> None:
    result = to_bbox(json.dumps({"id": "i", "model": 1, "name": "", "global": 1, "messages": []}))
    header = bbox_lark.parse(result.text).header
    assert "model" not in header and "extra.title" not in header and "extra.global" not in header
    assert rows(result)[("dropped", "chat model fields that are not strings")] == (1, (1,))
    assert ("dropped", "line breaks and runs of whitespace in chat ids (one space each)") not in rows(result)


def test_a_title_of_exactly_the_limit_is_whole() -> None:
    result = to_bbox(json.dumps({"name": "n" * 200, "messages": []}))
    assert bbox_lark.parse(result.text).header["extra.title"] == "n" * 200
    assert not any("beyond" in what for _, what in rows(result))


def test_a_draft_is_a_notes_comment_with_its_lines() -> None:
    result = to_bbox(chat(draft="one  \ntwo\n\n"))
    assert body(result) == ["# notes: draft (unsent input)", "  one", "  two"]
    assert rows(result)[("kept", "drafts (# notes: draft, its text on continuation lines)")] == (1, (1,))
    assert events(to_bbox(chat(draft=" \n "))) == []


# -- migration, loading, detection ------------------------------------------------------------------


def test_migrate_chat_leaves_messages_that_are_no_objects() -> None:
    migrated = migrate_chat({"version": 1, "messages": [1, "x", {"role": "user", "content": "c"}]})
    assert migrated["messages"] == [1, "x", {"role": "user", "parts": [{"type": "text", "content": "c"}]}]
    assert migrated["version"] == 2


def test_load_chat_counts_replaced_characters_and_keeps_positions() -> None:
    chat_, locator, replaced = load_chat('{"messages": [\n {"role": "user", "content": "a\\u0000b"}]}')
    assert replaced == 1 and chat_["messages"][0]["content"] == "a\ufffdb"
    assert locator.at(0) == (2, 2)
    assert locator.at(1) == (0, 0)


def test_sniff_scores() -> None:
    assert sniff('\ufeff {"messages": [], "context_files": []}') == 3
    assert sniff('{"messages": [{"role": "user", "parts": []}]}') == 2
    assert sniff('{"messages": [{"role": "user", "content": "x"}]}') == 2
    assert sniff('{"messages": [{"role": "user"}]}') == 0
    assert sniff('{"messages": [{"parts": []}]}') == 0
    assert sniff('{"messages": {}, "context_files": []}') == 0
    assert sniff('{"schema_version": "ATIF-v1", "messages": [], "context_files": []}') == 0
    assert sniff('x{"messages": [], "context_files": []}') == 0


def test_a_context_event_first_in_a_message_carries_its_usage() -> None:
    result = to_bbox(
        chat(
            {
                "role": "assistant",
                "usage": {"completion_tokens": 3},
                "parts": [
                    {"type": "context_event", "action": "AssistantWriteFile", "path": "p"},
                    {"type": "text", "content": "done"},
                ],
            }
        )
    )
    assert body(result) == ["t:write p # metrics completion_tokens=3", "a: done"]


def test_a_text_line_of_exactly_the_limit_is_not_broken() -> None:
    from bbox_lark.convert.bb7 import LINE_LIMIT

    result = one_part({"type": "text", "content": "x" * LINE_LIMIT})
    (event,) = events(result)
    assert [c.text for c in event.continuation] == ["x" * LINE_LIMIT]
    assert not any("line breaks" in what for _, what in rows(result))
    longer = one_part({"type": "text", "content": "x" * (LINE_LIMIT + 1)})
    assert rows(longer)[("synthesized", f"line breaks in text lines over {LINE_LIMIT:,} characters")] == (
        1,
        (3,),
    )


def test_a_system_message_keeps_its_usage_and_its_text_lines() -> None:
    usage = {"prompt_tokens": 2}
    result = to_bbox(chat({"role": "system", "usage": usage, "content": "first\nsecond\nthird"}))
    assert body(result) == ["@notify first # metrics prompt_tokens=2", "  second", "  third"]
    indented = to_bbox(chat({"role": "system", "usage": usage, "content": " first"}))
    assert body(indented) == ["@notify # metrics prompt_tokens=2", "   first"]


def test_a_code_part_keeps_the_usage_and_reports_at_its_line() -> None:
    result = to_bbox(
        LAYOUT.replace('"role": "user"', '"role": "assistant", "usage": {"cost": 1}')
        % json.dumps({"type": "code", "content": "x = 1  "})
    )
    assert body(result) == ["a: extra.part=code # metrics cost_usd=1", "  x = 1"]
    assert rows(result)[("dropped", "trailing whitespace of text lines")] == (1, (3,))


def test_a_message_with_usage_and_no_part_is_an_empty_line_with_its_usage() -> None:
    result = to_bbox(chat({"role": "assistant", "usage": {"completion_tokens": 4}, "parts": []}))
    assert body(result) == ["a: # metrics completion_tokens=4"]


def test_a_long_unknown_message_field_is_named_cut_at_60_characters() -> None:
    result = to_bbox(chat({"role": "user", "content": "x", "k" * 70: 1}))
    assert rows(result)[("dropped", f"unknown message fields ({'k' * 60})")] == (1, (1,))


def test_usage_keys_keep_their_capitals_and_a_long_one_is_named_cut() -> None:
    (event,) = events(usage_of({"Weird": 3}))
    assert event.metrics == {"extra.Weird": "3"}
    result = usage_of({"k" * 70: "x"})
    assert rows(result)[("dropped", f"usage values that are not numbers ({'k' * 60})")] == (1, (1,))


# -- convert/bb7/chat.py, directly: where a chat's problems and messages are ----------------------


def test_a_chat_that_is_not_utf8_says_where() -> None:
    from bbox_lark.convert.base import RefusedInputError
    from bbox_lark.convert.bb7.chat import load_chat

    data = b'{"messages": [\n  {"x": "caf\xe9"}]}'
    with pytest.raises(RefusedInputError) as raised:
        load_chat(data)
    at = data.index(b"\xe9")
    assert str(raised.value) == f"not UTF-8 text (byte {at}, line 2, column 13): a BB-7 chat is UTF-8 JSON"
    with pytest.raises(RefusedInputError) as raised:
        load_chat(b"\xe9\xe9")
    assert str(raised.value) == "not UTF-8 text (byte 0, line 1, column 1): a BB-7 chat is UTF-8 JSON"


def test_a_chat_that_is_no_chat_says_why() -> None:
    from bbox_lark.convert.base import RefusedInputError
    from bbox_lark.convert.bb7.chat import load_chat

    cases = {
        "{": "not valid JSON at line 1, column 2",
        "": "empty file: a BB-7 chat is a JSON object",
        "[]": "not a BB-7 chat: the JSON is an array, not an object",
        "{}": "not a BB-7 chat: the JSON object has no messages list",
        '{"messages": 3}': "not a BB-7 chat: the JSON object has messages that are not a list",
    }
    for text, message in cases.items():
        with pytest.raises(RefusedInputError) as raised:
            load_chat(text)
        assert message in str(raised.value), text
    chat, _, replaced = load_chat('{"messages": null}')  # null: read as no messages, as BB-7 does
    assert replaced == 0 and chat.get("messages") is None
    chat, _, _ = load_chat('\ufeff{"messages": []}'.encode())
    assert chat["messages"] == []


def _place(text: str, piece: str) -> tuple[int, int]:
    at = text.index(piece)
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def test_the_locator_places_each_message_and_part() -> None:
    from bbox_lark.convert.bb7.chat import Locator

    text = (
        '{"title": {"a": [1, "]"]}, "x": "}",\n'
        ' "messages" :  [ {"role": "user", "parts": [ {"t": 1} ,  {"t": [2]}]},\n'
        '  {}, {"parts": []},\n'
        '{"parts" :[{"u": 0}]}  ] , "after": {"messages": [9]}}'
    )
    locator = Locator(text)
    assert locator.at(0) == _place(text, '{"role"')
    assert locator.at(0, 0) == _place(text, '{"t": 1}')
    assert locator.at(0, 1) == _place(text, '{"t": [2]}')
    assert locator.at(1) == _place(text, '{}, {"parts": []}')
    assert locator.at(2) == _place(text, '{"parts": []}')
    assert locator.at(3) == _place(text, '{"parts" :[')
    assert locator.at(3, 0) == _place(text, '{"u": 0}')
    assert locator.at(4) == (0, 0) and locator.at(2, 0) == (0, 0)


def test_the_locator_of_text_it_cannot_walk_stops_without_raising() -> None:
    from bbox_lark.convert.bb7.chat import Locator

    for text in ('{"messages": [ {"a": }', '{"messages": [' + "[" * 100_000, '{"messages": [1, 2', "{"):
        assert Locator(text).at(5) == (0, 0)


def test_the_locator_on_the_first_line() -> None:
    from bbox_lark.convert.bb7.chat import Locator

    assert Locator('{"messages": [{}, {}]}').at(1) == (1, 19)


def test_a_chat_not_utf8_after_lines_says_its_line_and_column() -> None:
    from bbox_lark.convert.base import RefusedInputError
    from bbox_lark.convert.bb7.chat import load_chat

    for data, line, col in ((b'\n{"m":\n "a",\n "caf\xe9"}', 4, 6), (b"\n\n  \xe9", 3, 3), (b"\n\xe9", 2, 1)):
        with pytest.raises(RefusedInputError) as raised:
            load_chat(data)
        assert f"line {line}, column {col})" in str(raised.value), data


def test_the_locator_without_spaces() -> None:
    from bbox_lark.convert.bb7.chat import Locator

    text = '{"a":1,"messages":[{},{"parts":[{},{"b":2}]}],"tags":["x","y","z"]}'
    locator = Locator(text)
    assert locator.at(0) == _place(text, "{},{")
    assert locator.at(1) == _place(text, '{"parts"')
    assert locator.at(1, 1) == _place(text, '{"b"')
    assert locator.at(2) == (0, 0)  # a later top-level array is no messages


def test_bb7_sniff_reads_past_white_space_only() -> None:
    chat = '{"messages": [{"role": "user", "parts": []}]}'
    assert sniff(" \ufeff\n" + chat) == 2
    assert sniff("X" + chat) == 0
