"""Claude Code's tool results (``bbox_lark/convert/claude_code/reader.py``,
``ClaudeCodeReader.tool_result``), pinned down where mutation testing found nothing holding
them: the call a result names, closed by it (a progress record after it is of no open call),
a result naming no call, a call id cleaned and reported with its line (docs/testing.md,
"Mutation testing"). Through ``convert``, as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from bbox_lark.convert import convert
from bbox_lark.convert.claude_code import reader


def tool_use(call_id: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "ls"}}
    return {
        "type": "assistant",
        "sessionId": "s",
        "message": {"id": "m1", "role": "assistant", "content": [block]},
    }


def tool_result(call_id: Any, text: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    return {"type": "user", "sessionId": "s", "message": {"role": "user", "content": [block]}}


def run(*records: dict[str, Any], **options: Any) -> Any:
    return convert("\n".join(json.dumps(r) for r in records).encode(), "claude-code", to="bbox", **options)


def body(result: Any) -> str:
    return result.text.split("---\n", 2)[2]


def rows(result: Any) -> dict[tuple[str, str], tuple[int, ...]]:
    return {(e.action, e.what): e.lines for e in result.fidelity.entries if e.stage == "read"}


def test_a_result_closes_its_call() -> None:
    progress = {"type": "progress", "sessionId": "s", "toolUseID": "toolu_1", "data": {"k": "v"}}
    result = run(tool_use("toolu_1"), tool_result("toolu_1", "done"), progress)
    assert body(result) == "t!:Bash id=toolu_1 command=ls → [running]\no: id=toolu_1 → [ok] done\n"
    found = rows(result)
    assert found[("kept", "tool_result blocks (o: id=<tool_use id>)")] == (2,)
    assert found[("dropped", "progress records of no open tool call")] == (3,)


def test_a_result_naming_no_call_has_no_id() -> None:
    result = run(tool_use("toolu_1"), tool_result(5, "x"), tool_result("", "y"))
    assert body(result) == "t!:Bash id=toolu_1 command=ls → [running]\no: → [ok] x\no: → [ok] y\n"
    assert rows(result)[("kept", "tool_result blocks without a tool_use_id (o: without id=)")] == (2, 3)


def test_a_call_id_a_line_cannot_hold_is_cleaned_and_reported() -> None:
    result = run(tool_result("a\x00b", "y"))
    assert body(result) == "o: id=a\ufffdb → [ok] y\n"
    assert rows(result)[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == (1,)


# -- tool calls (``ClaudeCodeReader.tool_use``) ------------------------------------------------

RUNNING = "[running] results of tool calls (the result follows on o:)"
CALLS = "tool_use blocks (t!:)"
INPUT_KEYS = "tool input keys (as fields; lists and objects as JSON)"


def report(result: Any) -> dict[tuple[str, str], tuple[tuple[int, ...], int]]:
    """The reader's fidelity rows: (fate, construct) -> (first lines, count); the header's
    ``repo_sha`` row left out."""
    return {
        (e.action, e.what): (e.lines, e.count)
        for e in result.fidelity.entries
        if e.stage == "read" and not e.what.startswith("repo_sha")
    }


def assistant(*blocks: dict[str, Any], **message: Any) -> dict[str, Any]:
    return {
        "type": "assistant",
        "sessionId": "s",
        "message": {"id": "m1", "role": "assistant", "content": list(blocks), **message},
    }


def call(name: Any = "Bash", tool_input: Any = None, **block: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": tool_input, **block}


def test_a_call_without_a_usable_id_gets_one_numbered_by_line_and_count() -> None:
    no_id = call(tool_input={"command": "ls"})
    result = run(assistant(no_id, {**no_id, "id": 5}, {**no_id, "id": "  "}), assistant(no_id))
    assert body(result) == (
        "t!:Bash id=claude-code-1-1 command=ls → [running]\n"
        "t!:Bash id=claude-code-1-2 command=ls → [running]\n"
        "t!:Bash id=claude-code-1-3 command=ls → [running]\n"
        "t!:Bash id=claude-code-2-4 command=ls → [running]\n"
    )
    assert report(result) == {
        ("synthesized", "tool call ids (the tool_use has none)"): ((1, 1, 1, 2), 4),
        ("kept", CALLS): ((1, 1, 1, 2), 4),
        ("synthesized", RUNNING): ((1, 1, 1, 2), 4),
        ("kept", INPUT_KEYS): ((1, 1, 1, 2), 4),
    }


def test_a_call_id_with_a_nul_is_cleaned_and_reported_with_its_line() -> None:
    result = run(tool_result("x", "y"), assistant(call(id="a\x00b")))
    assert body(result).endswith("t!:Bash id=a\ufffdb → [running]\n")
    assert report(result)[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((2,), 1)


def test_a_call_without_a_name_is_unnamed() -> None:
    result = run(assistant(call(None, id="a"), call(" ", id="b"), call(id="c")))
    assert body(result) == (
        "t!:unnamed id=a → [running]\nt!:unnamed id=b → [running]\nt!:Bash id=c → [running]\n"
    )
    assert report(result) == {
        ("synthesized", "tool names (the tool_use has none)"): ((1, 1), 2),
        ("kept", CALLS): ((1, 1, 1), 3),
        ("synthesized", RUNNING): ((1, 1, 1), 3),
    }


def test_a_todo_list_follows_its_call_on_a_todos_line() -> None:
    todos = {"todos": [{"status": "pending", "content": "A"}], "x": 1}
    result = run(tool_result("z", "y"), assistant(call("TodoWrite", todos, id="t1")))
    assert body(result).endswith("t!:TodoWrite id=t1 x=1 → [running]\ntd: [pending] A\n")
    found = report(result)
    assert found[("kept", "TodoWrite todo lists (td:)")] == ((2,), 1)
    assert found[("kept", INPUT_KEYS)] == ((2,), 1)


def test_todos_of_another_tool_or_not_a_list_stay_input_fields() -> None:
    result = run(
        assistant(
            call("Other", {"todos": [1]}, id="a"),
            call("TodoWrite", {"todos": "x"}, id="b"),
            call("TodoWrite", [1], id="c"),
        )
    )
    assert body(result) == (
        't!:Other id=a todos="[1]" → [running]\n'
        "t!:TodoWrite id=b todos=x → [running]\n"
        't!:TodoWrite id=c extra.input="[1]" → [running]\n'
    )


def test_an_mcp_call_names_its_server_and_method() -> None:
    result = run(
        tool_result("z", "y"),
        assistant(
            call("mcp__gh__list", {"q": "v"}, id="t1"),
            call("mcp__gh", {}, id="t2"),
            call("mcp__a__b__c", id="t3"),
            call("x__mcp__a__b", id="t4"),
        ),
    )
    assert body(result).split("\n", 1)[1] == (
        "c:gh.list id=t1 q=v → [running]\n"
        "t!:mcp__gh id=t2 → [running]\n"
        "c:a.b__c id=t3 → [running]\n"
        "t!:x__mcp__a__b id=t4 → [running]\n"
    )
    found = report(result)
    assert found[("kept", "MCP tool_use blocks (c:server.method)")] == ((2, 2), 2)
    assert found[("kept", CALLS)] == ((2, 2), 2)
    assert found[("synthesized", RUNNING)] == ((2, 2, 2, 2), 4)


def test_a_subagent_call_is_launched_under_its_type() -> None:
    result = run(
        tool_result("z", "y"),
        assistant(
            call("Task", {"prompt": "do", "subagent_type": "Explore"}, id="t1"),
            call("Agent", {"subagent_type": " "}, id="t2"),
            call("Task", [1], id="t3"),
            call("Task", {"subagent_type": 7}, id="t4"),
        ),
    )
    assert body(result).split("\n", 1)[1] == (
        "x:Explore id=t1 prompt=do subagent_type=Explore → [launched]\n"
        'x:task id=t2 subagent_type=" " → [launched]\n'
        'x:task id=t3 extra.input="[1]" → [launched]\n'
        "x:task id=t4 subagent_type=7 → [launched]\n"
    )
    found = report(result)
    assert found[("kept", "subagent tool_use blocks (x:)")] == ((2, 2, 2, 2), 4)
    assert found[("extra", "tool inputs that are not objects (extra.input=)")] == ((2,), 1)
    assert ("kept", CALLS) not in found


def test_a_subagent_call_is_no_open_tool_call_for_progress() -> None:
    progress = {"type": "progress", "sessionId": "s", "toolUseID": "t1", "data": {"k": "v"}}
    result = run(assistant(call("Task", {}, id="t1"), call("mcp__a__b", {}, id="t2")), progress)
    assert report(result)[("dropped", "progress records of no open tool call")] == ((2,), 1)
    progress = {**progress, "toolUseID": "t2"}
    result = run(assistant(call("mcp__a__b", {}, id="t2")), progress)
    assert report(result)[("dropped", "progress records of no open tool call")] == ((2,), 1)


def test_a_tool_name_a_word_cannot_hold_goes_to_extra_name() -> None:
    result = run(
        tool_result("z", "y"),
        assistant(call("my tool", [1, 2], id="t1"), call('a→b"c', {"ok": [1], "s": "v"}, id="t2")),
    )
    assert body(result).split("\n", 1)[1] == (
        't!:my_tool id=t1 extra.name="my tool" extra.input="[1,2]" → [running]\n'
        't!:a_b_c id=t2 extra.name="a→b\\"c" ok="[1]" s=v → [running]\n'
    )
    found = report(result)
    assert found[("extra", "tool names that are not one word (extra.name=)")] == ((2, 2), 2)
    assert found[("kept", INPUT_KEYS)] == ((2,), 2)


def test_a_tool_name_with_a_nul_is_cleaned_and_reported_once() -> None:
    """A name that is one word once cleaned needs no extra.name= (it repeated the cleaned name
    before, and the NUL was reported twice)."""
    result = run(tool_result("z", "y"), assistant(call("a\x00b", {}, id="t1"), call("c\x00 d", {}, id="t2")))
    assert body(result).split("\n", 1)[1] == (
        't!:a\ufffdb id=t1 → [running]\nt!:c\ufffd_d id=t2 extra.name="c\ufffd d" → [running]\n'
    )
    found = report(result)
    assert found[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((2, 2), 2)
    assert found[("extra", "tool names that are not one word (extra.name=)")] == ((2,), 1)


def test_input_keys_that_cannot_be_fields_go_to_extra_input() -> None:
    tool_input = {"ts": "x", "extra.k": 1, "9k": 2, "ok": "v\x00", "list": [1, "a"]}
    result = run(tool_result("z", "y"), assistant(call("T", tool_input, id="t1")))
    assert body(result).split("\n", 1)[1] == (
        't!:T id=t1 ok=v\ufffd list="[1,\\"a\\"]" extra.input={"ts":"x","extra.k":1,"9k":2} → [running]\n'
    )
    found = report(result)
    assert found[("kept", INPUT_KEYS)] == ((2,), 2)
    assert found[("extra", "tool input keys that cannot be field keys (extra.input= JSON)")] == ((2,), 3)
    assert found[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((2,), 1)


def test_an_input_of_keys_that_cannot_be_fields_only() -> None:
    result = run(tool_result("z", "y"), assistant(call("T", {"ts": "x"}, id="t1")))
    assert body(result).split("\n", 1)[1] == 't!:T id=t1 extra.input={"ts":"x"} → [running]\n'
    found = report(result)
    assert ("kept", INPUT_KEYS) not in found
    assert found[("extra", "tool input keys that cannot be field keys (extra.input= JSON)")] == ((2,), 1)


def test_an_input_that_is_no_object_is_cleaned_json_in_extra_input() -> None:
    # A lone surrogate (JSON's "\ud800"): the JSON text of the input holds it as it is.
    result = run(tool_result("z", "y"), assistant(call("T", "a\ud800", id="t1")))
    assert body(result).split("\n", 1)[1] == 't!:T id=t1 extra.input="\\"a\ufffd\\"" → [running]\n'
    found = report(result)
    assert found[("extra", "tool inputs that are not objects (extra.input=)")] == ((2,), 1)
    assert found[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((2,), 1)


USAGE = {"input_tokens": 5, "output_tokens": 4}


def test_the_usage_goes_after_the_arrow_and_an_input_key_named_like_it_goes_below() -> None:
    record = assistant(
        call("T", {"tokens_in": "9", "q": "v"}, id="t1"),
        call("T", {"tokens_out": "4"}, id="t2"),
        call("T", {"q": "v"}, id="t3"),
        usage=USAGE,
    )
    result = run(tool_result("z", "y"), {**record, "timestamp": "2030-01-01T00:00:00Z"})
    assert body(result).split("\n", 1)[1] == (
        "t!:T id=t1 ts=2030-01-01T00:00:00Z → [running] tokens_in=5 tokens_out=4\n"
        '  {"tokens_in":"9","q":"v"}\n'
        "t!:T id=t2 tokens_out=4 ts=2030-01-01T00:00:00Z → [running] tokens_in=5 tokens_out=4\n"
        "t!:T id=t3 q=v ts=2030-01-01T00:00:00Z → [running] tokens_in=5 tokens_out=4\n"
        "# tokens_in=5 tokens_out=4 tokens_cached=0\n"
    )
    found = report(result)
    assert found[("synthesized", "line breaks in tool inputs too long for one line")] == ((2,), 1)


def test_a_call_too_long_for_a_line_puts_its_input_below_as_json() -> None:
    long = {"q": "v" * 100}
    result = run(
        tool_result("z", "y"),
        assistant(call("T", long, id="t1"), call("Task", long, id="t2"), call("T", {"q": "v" * 40}, id="t3")),
        max_line=180,
    )
    assert body(result).split("\n", 1)[1] == (
        "t!:T id=t1 → [running]\n"
        '  {"q":"' + "v" * 100 + '"}\n'
        "x:task id=t2 → [launched]\n"
        '  {"q":"' + "v" * 100 + '"}\n'
        "t!:T id=t3 q=" + "v" * 40 + " → [running]\n"
    )
    found = report(result)
    assert found[("synthesized", "line breaks in tool inputs too long for one line")] == ((2, 2), 2)


def test_a_tool_inputs_json_longer_than_the_limit_is_cut_in_pieces() -> None:
    result = run(tool_result("z", "y"), assistant(call("T", {"q": "v" * 200}, id="t1")), max_line=180)
    json_text = '{"q":"' + "v" * 200 + '"}'
    assert body(result).split("\n", 1)[1] == (
        "t!:T id=t1 → [running]\n" + "".join(f"  {json_text[i : i + 116]}\n" for i in range(0, 208, 116))
    )
    assert report(result)[("synthesized", "line breaks in lines over the line limit")] == ((2,), 1)


def test_the_reader_remembers_only_the_most_recent_open_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """As many as ``REMEMBERED`` (4096; two here): a progress record of an older call is one
    of no open call."""
    monkeypatch.setattr(reader, "REMEMBERED", 2)

    def progress(call_id: str) -> dict[str, Any]:
        return {"type": "progress", "sessionId": "s", "toolUseID": call_id, "data": {"k": "v"}}

    calls = [call("T", {}, id=f"t{n}") for n in range(3)]
    result = run(assistant(*calls), progress("t0"), progress("t1"), progress("t2"))
    assert body(result).endswith("t~:T id=t1 k=v\nt~:T id=t2 k=v\n")
    assert report(result)[("dropped", "progress records of no open tool call")] == ((2,), 1)


@pytest.mark.parametrize(
    ("max_line", "longest"),
    [(200, 136), (100, 64), (129, 65)],
    ids=["max-line-less-64", "at-least-64", "just-over-the-floor"],
)
def test_a_call_line_as_long_as_the_limit_stays_one_line(max_line: int, longest: int) -> None:
    """The limit of a written line is ``--max-line`` less 64 (room for what a later tool
    adds), 64 at least."""

    def line(size: int) -> dict[str, Any]:
        # "t!:T id=t1 q=" and " → [running]" around the value: 25 characters.
        return call("T", {"q": "v" * (size - 25)}, id="t1")

    fits = run(tool_result("z", "y"), assistant(line(longest)), max_line=max_line)
    assert len(body(fits).split("\n")[1]) == longest
    over = run(tool_result("z", "y"), assistant(line(longest + 1)), max_line=max_line)
    assert body(over).split("\n")[1] == "t!:T id=t1 → [running]"


# -- assistant records (``ClaudeCodeReader.assistant``) ----------------------------------------


def skipped(result: Any) -> list[tuple[int, str]]:
    return [(s.line, s.message) for s in result.fidelity.skipped]


def text(value: Any) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_an_assistant_record_without_a_message_or_content_is_skipped_with_its_line() -> None:
    result = run(
        {"type": "assistant", "sessionId": "s", "message": "x"},
        {"type": "assistant", "sessionId": "s", "message": {"content": 5}},
        assistant("not a block", text("kept")),
    )
    assert skipped(result) == [
        (1, "assistant record: `message` is not an object"),
        (2, "assistant record: `message.content` is neither text nor a list of blocks"),
        (3, "assistant record: content block 1 is not an object"),
    ]
    assert body(result) == "a: kept\n"


def test_assistant_content_as_a_string_is_one_text_block() -> None:
    record = {"type": "assistant", "sessionId": "s", "message": {"id": "m", "content": "plain"}}
    result = run(record)
    assert body(result) == "a: plain\n"
    assert report(result) == {("kept", "assistant text blocks (a:)"): ((1,), 1)}


def test_the_first_model_is_the_headers_and_each_change_a_model_comment() -> None:
    result = run(
        assistant(text("a"), model=" m 1 "),
        assistant(text("b"), model="m2"),
        assistant(text("c"), model="m2"),
        assistant(text("d"), model="  "),
        assistant(text("e"), model=5),
        assistant(text("f"), model="m\x00"),
        assistant(text("g")),
    )
    assert result.text.split("---\n")[1].endswith("model: m 1\n")
    assert body(result) == "a: a\n# model: m2\na: b\na: c\na: d\na: e\n# model: m\ufffd\na: f\na: g\n"
    found = report(result)
    assert found[("kept", "model changes (# model:)")] == ((2, 6), 2)
    assert found[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((6,), 1)


def test_a_model_a_word_cannot_hold_is_quoted_on_its_comment() -> None:
    result = run(assistant(text("a"), model="m1"), assistant(text("b"), model="my model"))
    assert body(result) == 'a: a\n# model: "my model"\na: b\n'


def test_thinking_blocks_with_and_without_a_signature() -> None:
    result = run(
        assistant(
            {"type": "thinking", "thinking": "t", "signature": "sig"},
            {"type": "thinking"},
            {"type": "thinking", "thinking": 5},
            {"type": "thinking", "thinking": "u", "signature": ""},
            {"type": "redacted_thinking", "data": "zz"},
            {"type": "weird"},
            {"x": 1},
            text(5),
        )
    )
    assert body(result) == (
        "th: t\n"
        "th:\n"
        "# claude-code block thinking\n"
        '  {"type":"thinking","thinking":5}\n'
        "th: u\n"
        "th: [redacted:thinking]\n"
        "# claude-code block weird\n"
        '  {"type":"weird"}\n'
        "# claude-code block untyped\n"
        '  {"x":1}\n'
        "# claude-code block text\n"
        '  {"type":"text","text":5}\n'
    )
    assert report(result) == {
        ("kept", "thinking blocks (th:)"): ((1, 1, 1), 3),
        ("dropped", "thinking signatures"): ((1,), 1),
        ("kept", "content blocks of unknown types (as comments with their JSON)"): ((1, 1, 1, 1), 4),
        ("kept", "redacted thinking blocks (th: [redacted:thinking])"): ((1,), 1),
        ("dropped", "redacted thinking data"): ((1,), 1),
    }


def test_every_line_of_a_message_carries_its_time_thread_and_usage() -> None:
    usage = {"input_tokens": 5, "output_tokens": 4, "cache_read_input_tokens": 7}
    record = assistant(
        text("hi"),
        {"type": "thinking", "thinking": "t"},
        {"type": "redacted_thinking"},
        call("T", {"q": "v"}, id="c1"),
        usage=usage,
    )
    record.update(timestamp="2030-01-01T00:00:00Z", isSidechain=True, agentId="ag")
    result = run(record)
    fields = "ts=2030-01-01T00:00:00Z tid=ag"
    counts = "tokens_in=5 tokens_out=4 tokens_cached=7"
    assert body(result) == (
        f"a: hi {fields} {counts}\n"
        f"th: t {fields} {counts}\n"
        f"th: [redacted:thinking] {fields} {counts}\n"
        f"t!:T id=c1 q=v {fields} → [running] {counts}\n"
        f"# {counts}\n"
    )


def test_a_timestamp_that_is_no_iso_time_with_a_zone_is_dropped_and_reported() -> None:
    result = run(
        {**assistant(text("a")), "timestamp": "yesterday"},
        {**assistant(text("b")), "timestamp": 5},
        {**assistant(text("c")), "timestamp": "2030-01-01T00:00:00"},
        {**assistant(text("d")), "timestamp": None},
        {**assistant(text("e")), "timestamp": "2030-01-01T00:00:00+02:00"},
    )
    assert body(result) == "a: a\na: b\na: c\na: d\na: e ts=2030-01-01T00:00:00+02:00\n"
    assert report(result)[("dropped", "timestamps that are not ISO 8601 with a zone")] == ((1, 2, 3), 3)


# -- text that would read as fields (a bug found by mutation testing) -------------------------


def test_a_field_at_the_end_of_a_message_text_is_no_field_of_its_line() -> None:
    """A text ending in ``tokens_out=99999`` or ``ts=…`` goes on a continuation line: on the
    message's own line it would read as the line's field, a usage or a time the record never
    had, and ``stats`` would count 99,999 output tokens (it did)."""
    from bbox_lark.numbers.session import read_session

    user_text = {
        "type": "user",
        "sessionId": "s",
        "message": {"role": "user", "content": "at ts=2031-01-01T00:00:00Z"},
    }
    result = run(
        assistant(text("set tokens_out=99999"), {"type": "thinking", "thinking": "hm step=3"}),
        user_text,
        assistant(
            call("TodoWrite", {"todos": [{"status": "pending", "content": "fix tokens_in=5"}]}, id="t1")
        ),
    )
    assert body(result) == (
        "a:\n  set tokens_out=99999\n"
        "th:\n  hm step=3\n"
        "u:\n  at ts=2031-01-01T00:00:00Z\n"
        "t!:TodoWrite id=t1 → [running]\n"
        "td:\n  [pending] fix tokens_in=5\n"
    )
    totals = read_session(result.text, estimate=False).totals
    assert (totals.responses, totals.usage.tokens_in, totals.usage.tokens_out) == (0, None, None)


def test_a_field_in_a_tool_results_first_line_is_no_field_of_its_line() -> None:
    result = run(tool_result("t1", "step=4"), tool_result("t2", "tokens_out=5"), tool_result("t3", "ok [x]"))
    assert (
        body(result) == "o: id=t1 → [ok]\n  step=4\no: id=t2 → [ok]\n  tokens_out=5\no: id=t3 → [ok] ok [x]\n"
    )


# -- todo lists (``ClaudeCodeReader.todos``) --------------------------------------------------


def todo_write(*todos: Any) -> dict[str, Any]:
    return assistant(call("TodoWrite", {"todos": list(todos)}, id="t1"))


def test_each_todo_is_its_status_in_brackets_and_its_text_on_one_line() -> None:
    result = run(
        tool_result("z", "y"),
        todo_write(
            {"status": "in  progress", "content": "A  b\nc"},
            {"status": "", "content": 5},
            {"content": "x"},
            "plain  text",
            7,
            {"status": "done", "content": ""},
            "",
            {"status": "ok", "content": "z\x00"},
        ),
    )
    assert body(result).split("\n", 1)[1] == (
        "t!:TodoWrite id=t1 → [running]\n"
        "td: [in progress] A b c [?] 5 [?] x plain text 7 [done] [ok] z\ufffd\n"
    )
    found = report(result)
    assert found[("kept", "todo items that are not objects (as their text)")] == ((2, 2, 2), 3)
    assert found[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((2,), 1)


def test_an_empty_todo_list_is_an_empty_todos_line() -> None:
    assert body(run(todo_write())) == "t!:TodoWrite id=t1 → [running]\ntd:\n"


@pytest.mark.parametrize("size", [136, 137])
def test_a_todo_list_longer_than_the_limit_goes_one_todo_a_line(size: int) -> None:
    # "td: [p] " and the other todo's " [p] w": 14 characters around the first todo's text.
    result = run(
        todo_write({"status": "p", "content": "v" * (size - 14)}, {"status": "p", "content": "w"}),
        max_line=200,
    )
    todos = body(result).split("\n", 1)[1]
    if size <= 136:
        assert todos == "td: [p] " + "v" * (size - 14) + " [p] w\n"
    else:
        assert todos == "td:\n  [p] " + "v" * (size - 14) + "\n  [p] w\n"


# -- user records and tool results (``ClaudeCodeReader.user``, ``tool_result``) --------------


def user(content: Any, **record: Any) -> dict[str, Any]:
    return {"type": "user", "sessionId": "s", "message": {"role": "user", "content": content}, **record}


def result_block(call_id: Any, content: Any, **block: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, **block}


def test_a_user_record_without_a_message_or_content_is_skipped_with_its_line() -> None:
    image = {"type": "image", "source": {"media_type": "image/png", "data": "AAA"}}
    result = run(
        {"type": "user", "sessionId": "s", "message": 5},
        {"type": "user", "sessionId": "s", "message": {"content": 5}},
        user(["x", text("hi"), image, {"type": "odd"}, text(5)]),
        user("plain", timestamp="2030-01-01T00:00:00Z"),
    )
    assert skipped(result) == [
        (1, "user record: `message` is not an object"),
        (2, "user record: `message.content` is neither text nor a list of blocks"),
        (3, "user record: content block 1 is not an object"),
    ]
    assert body(result) == (
        "u: hi\n"
        "u: [image image/png]\n"
        "# claude-code block odd\n"
        '  {"type":"odd"}\n'
        "# claude-code block text\n"
        '  {"type":"text","text":5}\n'
        "u: plain ts=2030-01-01T00:00:00Z\n"
    )
    assert report(result) == {
        ("kept", "user messages (u:)"): ((3, 4), 2),
        ("dropped", "image data (a placeholder is written)"): ((3,), 1),
        ("kept", "content blocks of unknown types (as comments with their JSON)"): ((3, 3), 2),
    }


def test_a_user_image_carries_the_records_time_and_thread() -> None:
    image = {"type": "image", "source": {"media_type": "image/png"}}
    record = user([image], timestamp="2030-01-01T00:00:00Z", isSidechain=True)
    assert body(run(record)) == "u: [image image/png] ts=2030-01-01T00:00:00Z tid=sidechain\n"


def test_a_tool_results_content_in_each_form() -> None:
    blocks = [
        {"type": "text", "text": "one"},
        {"type": "image", "source": {"media_type": "image/png"}},
        "str",
        {"type": "x"},
        {"type": "text", "text": 5},
    ]
    result = run(
        user(
            [
                result_block("a", "s", is_error=True),
                result_block("b", None),
                result_block("c", blocks),
                result_block("d", {"k": 1}, is_error="true"),
                result_block("e", 5),
            ],
            toolUseResult={"interrupted": True},
        ),
        user([result_block("f", "x")], toolUseResult={"interrupted": "yes"}),
        user([result_block("g", "x")], toolUseResult=[1]),
    )
    assert body(result) == (
        "o: id=a interrupted=true → [error] s\n"
        "o: id=b interrupted=true → [ok]\n"
        "o: id=c interrupted=true → [ok] one\n"
        "  [image image/png]\n"
        "  str\n"
        '  {"type":"x"}\n'
        '  {"type":"text","text":5}\n'
        'o: id=d interrupted=true → [ok] {"k":1}\n'
        "o: id=e interrupted=true → [ok] 5\n"
        "o: id=f → [ok] x\n"
        "o: id=g → [ok] x\n"
    )
    assert report(result) == {
        ("kept", "tool_result blocks (o: id=<tool_use id>)"): ((1, 1, 1, 1, 1, 2, 3), 7),
        ("kept", "is_error tool results ([error])"): ((1,), 1),
        ("dropped", "image data (a placeholder is written)"): ((1,), 1),
        ("dropped", "`toolUseResult` record fields"): ((1, 2, 3), 3),
    }


def test_a_tool_results_first_line_stays_on_its_line_only_as_written() -> None:
    result = run(
        user(
            [
                result_block("a", "  lead"),
                result_block("b", "x" * 4097),
                result_block("c", "x" * 4096),
                result_block("d", "a → b"),
                result_block("e", "\n\nfirst\n\nsecond\n\n"),
                result_block("f", "bad\x00\r\nnext"),
            ]
        )
    )
    assert body(result) == (
        "o: id=a → [ok]\n    lead\n"
        "o: id=b → [ok]\n  " + "x" * 4097 + "\n"
        "o: id=c → [ok] " + "x" * 4096 + "\n"
        "o: id=d → [ok] a → b\n"
        "o: id=e → [ok] first\n\n  second\n"
        "o: id=f → [ok] bad\ufffd\n  next\n"
    )
    found = report(result)
    assert found[("dropped", "carriage returns (written as line breaks)")] == ((1,), 1)
    assert found[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((1,), 1)


def test_a_subagents_result_names_its_log_right_after_the_call_id() -> None:
    session = Path(__file__).parent / "fixtures" / "claude-code-subagents" / "sess-sub.jsonl"
    result = convert(session.read_bytes(), "claude-code", to="bbox", path=session)
    results = [line for line in body(result).splitlines() if line.startswith("o: id=toolu_task")]
    assert results == [
        "o: id=toolu_task_a session_id=a1 path=sess-sub/subagents/agent-a1.jsonl ts=2030-01-02T03:04:20Z"
        " → [ok] Tests are in tests/",
        "o: id=toolu_task_b session_id=b2 path=sess-sub/subagents/agent-b2.jsonl ts=2030-01-02T03:04:21Z"
        " → [ok] Docs are in docs/",
    ]


# -- input lines (``ClaudeCodeReader.line``, ``record``) --------------------------------------


def test_each_kind_of_unreadable_line_is_skipped_with_its_line_and_why() -> None:
    lines = [
        b"\xef\xbb\xbf" + json.dumps(user("a")).encode(),
        b"   ",
        b"",
        b"\xff\xfe",
        b'{"type": ',
        b'{"type":"a"',
        b'{"type": x}',
        b"[1]",
        b'{"a":1}',
        b'{"type":""}',
        b'{"type":5}',
        b"[" * 100_000,
        b'{"type":"x","n":' + b"1" * 5000 + b"}",
        json.dumps(user("b")).encode() + b"\r",
        b"\t\r",
    ]
    result = convert(b"\n".join(lines), "claude-code", to="bbox")
    assert body(result) == "u: a\nu: b\n"
    assert skipped(result)[:-1] == [
        (4, "not UTF-8 text"),
        (5, "not a JSON record (the record ends too early: cut short?)"),
        (6, "not a JSON record (the record ends too early: cut short?)"),
        (7, "not a JSON record (Expecting value at column 10)"),
        (8, "a JSON array, not a record (an object)"),
        (9, "a record without a `type`"),
        (10, "a record without a `type`"),
        (11, "a record without a `type`"),
        (12, "JSON nested too deeply"),
    ]
    # Python's own message (a ValueError that is no JSONDecodeError), cut to 120 characters.
    line, message = skipped(result)[-1]
    assert (line, message[:36], len(message)) == (13, "not a JSON record (Exceeds the limit", 140)
    assert report(result) == {
        ("kept", "user messages (u:)"): ((1, 14), 2),
        ("dropped", "whitespace-only lines"): ((2, 15), 2),
    }


def test_a_byte_order_mark_is_read_only_at_the_start_of_the_first_line() -> None:
    bom = b"\xef\xbb\xbf"
    result = convert(
        bom + b"\n" + json.dumps(user("a")).encode() + b"\n" + bom + b"\n", "claude-code", to="bbox"
    )
    assert body(result) == "u: a\n"
    assert skipped(result) == [(3, "not a JSON record (Expecting value at column 1)")]


# -- subagent calls remembered for their results ----------------------------------------------

SUBAGENTS = Path(__file__).parent / "fixtures" / "claude-code-subagents"


def subagent_session(tmp_path: Path) -> Path:
    shutil.copytree(SUBAGENTS, tmp_path / "s")
    return tmp_path / "s" / "sess-sub.jsonl"


def convert_path(path: Path) -> Any:
    return convert(path.read_bytes(), "claude-code", to="bbox", path=path)


def test_only_the_most_recent_subagent_calls_get_their_log_before_the_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As many as ``REMEMBERED`` (4096; one here): the result of an older Task call finds no
    call, and its log comes at the end."""
    monkeypatch.setattr(reader, "REMEMBERED", 1)
    result = convert_path(SUBAGENTS / "sess-sub.jsonl")
    lines = body(result).splitlines()
    first = next(n for n, line in enumerate(lines) if line.startswith("o: id=toolu_task_a"))
    second = next(n for n, line in enumerate(lines) if line.startswith("o: id=toolu_task_b"))
    note = lines.index("# notes: subagent session_id=a1 path=sess-sub/subagents/agent-a1.jsonl")
    assert "session_id=" not in lines[first] and "session_id=b2 " in lines[second]
    assert lines[second - 1].endswith("tid=b2 tokens_in=7 tokens_out=6 tokens_cached=520")
    assert first < second < note and lines[note + 1].startswith("u: Find the tests ")


def test_a_prompt_that_is_no_text_finds_no_subagent_log(tmp_path: Path) -> None:
    session = subagent_session(tmp_path)
    log = session.with_suffix("") / "subagents" / "agent-a1.jsonl"
    prompt = [{"type": "text", "text": "Find the tests"}]
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    records[0]["message"]["content"] = prompt
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    records = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]
    records[1]["message"]["content"][0]["input"]["prompt"] = prompt
    del records[3]["toolUseResult"]
    session.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    lines = body(convert_path(session)).splitlines()
    assert "# notes: subagent session_id=a1 path=sess-sub/subagents/agent-a1.jsonl" in lines


# -- per-record values (``tid``, ``context``, ``record``) -------------------------------------


def test_a_sidechain_records_thread_is_its_agent_id_when_one_word() -> None:
    records = [
        user("a", isSidechain=True, agentId="ag"),
        user("b", isSidechain=True, agentId=" "),
        user("c", isSidechain=True, agentId="a b"),
        user("d", isSidechain=True, agentId=5),
        user("e", isSidechain="true", agentId="ag"),
        user("f", isSidechain=True, agentId="a\x00"),
        user("g", isSidechain=True),
        user("h", isSidechain=True, agentId="a\tb"),
    ]
    result = run(*records)
    assert body(result) == (
        "u: a tid=ag\nu: b tid=sidechain\nu: c tid=sidechain\nu: d tid=sidechain\n"
        "u: e\nu: f tid=a\ufffd\nu: g tid=sidechain\nu: h tid=sidechain\n"
    )
    # The NUL is reported at the record's line (it was reported at line 0 before).
    assert report(result)[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((6,), 1)


def test_a_change_of_session_cwd_branch_version_or_slug_is_a_notes_line() -> None:
    result = run(
        user("a", cwd="/w", gitBranch="main", version="1.0", slug="sl"),
        user("b", sessionId="s2", cwd="/w2 x", gitBranch=" ", version=5, slug="sl"),
        user("c", sessionId="s", cwd=" /w2 x ", gitBranch="dev\x00"),
        user("d", version="1.1", slug="sl2"),
    )
    header = result.text.split("---\n")[1]
    assert header.endswith("client_version: '1.0'\nslug: sl\ncwd: /w\nbranch: main\n")
    assert body(result) == (
        "u: a\n"
        '# notes: changed session=s2 cwd="/w2 x"\n'
        "u: b\n"
        "# notes: changed session=s branch=dev\ufffd\n"
        "u: c\n"
        "# notes: changed client_version=1.1 slug=sl2\n"
        "u: d\n"
    )
    found = report(result)
    assert found[("kept", "changes of session id, cwd, branch or version (as # notes: lines)")] == (
        (2, 3, 4),
        3,
    )
    assert found[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((3,), 1)


def test_each_record_and_message_key_not_read_is_reported_by_name() -> None:
    record = user("d", uuid="u", parentUuid=None, extra={"x": 1}, **{"a" * 50: 1})
    message = {"id": "m", "content": "x", "role": "assistant", "stop_reason": "end", "5": 1}
    result = run(record, {"type": "assistant", "sessionId": "s", "message": message, "agentId": "x"})
    assert report(result) == {
        ("kept", "user messages (u:)"): ((1,), 1),
        ("dropped", "`uuid` record fields"): ((1,), 1),
        ("dropped", "`parentUuid` record fields"): ((1,), 1),
        ("dropped", "`extra` record fields"): ((1,), 1),
        ("dropped", "`" + "a" * 39 + "…` record fields"): ((1,), 1),
        ("dropped", "`stop_reason` message fields"): ((2,), 1),
        ("dropped", "`5` message fields"): ((2,), 1),
        ("kept", "assistant text blocks (a:)"): ((2,), 1),
    }


# -- text (``clean``, ``text_lines``, ``message``) and records of unknown types ---------------


def test_a_line_over_the_limit_is_cut_in_pieces_and_blank_lines_around_a_text_dropped() -> None:
    result = run(
        user("\n \n" + "a" * 64 + "\n" + "b" * 65 + "\n" + "c" * 129 + "\n\n"),
        user("x\r\ny\rz"),
        user("q\ud800"),
        max_line=100,
    )
    assert body(result) == (
        "u: " + "a" * 64 + "\n"
        "  " + "b" * 64 + "\n  b\n"
        "  " + "c" * 64 + "\n  " + "c" * 64 + "\n  c\n"
        "u: x\n  y\n  z\n"
        "u: q\ufffd\n"
    )
    assert report(result) == {
        ("kept", "user messages (u:)"): ((1, 2, 3), 3),
        ("synthesized", "line breaks in lines over the line limit"): ((1, 1), 2),
        ("dropped", "carriage returns (written as line breaks)"): ((2,), 1),
        ("dropped", "NUL characters and lone surrogates (written as U+FFFD)"): ((3,), 1),
    }


def test_a_message_text_stays_on_its_line_only_as_written() -> None:
    result = run(
        user("see ts=2030-01-01T00:00:00Z", timestamp="2031-01-01T00:00:00Z"),
        user("  lead\nnext"),
        user("x" * 4097),
        user("y" * 4096),
        user("a → b"),
        user(""),
        user("one\ntwo"),
    )
    assert body(result) == (
        "u: ts=2031-01-01T00:00:00Z\n  see ts=2030-01-01T00:00:00Z\n"
        "u:\n    lead\n  next\n"
        "u:\n  " + "x" * 4097 + "\n"
        "u: " + "y" * 4096 + "\n"
        "u:\n  a → b\n"
        "u:\n"
        "u: one\n  two\n"
    )


def test_a_record_of_an_unknown_type_is_a_comment_with_its_json() -> None:
    result = run(
        {"type": "weird-type x", "sessionId": "s", "k": "v" * 70},
        {"type": "a\x00b", "sessionId": "s"},
        max_line=100,
    )
    assert body(result) == (
        '# claude-code record "weird-type x"\n'
        '  {"type":"weird-type x","sessionId":"s","k":"vvvvvvvvvvvvvvvvvvvv\n'
        "  " + "v" * 50 + '"}\n'
        "# claude-code record a\ufffdb\n"
        '  {"type":"a\\u0000b","sessionId":"s"}\n'
    )
    assert report(result) == {
        ("kept", "records of unknown types (as comments with their JSON)"): ((1, 2), 2),
        ("synthesized", "line breaks in lines over the line limit"): ((1,), 1),
        ("dropped", "NUL characters and lone surrogates (written as U+FFFD)"): ((2,), 1),
        # A record of an unknown type is not read for its session id.
        ("synthesized", "session ids (the source has none)"): ((0,), 1),
    }


def test_a_block_of_an_unknown_type_is_a_comment_with_its_json() -> None:
    result = run(
        user([{"type": "odd x", "v": 1}, {"type": "a\x00"}, {"type": ""}, {"type": 5}]), max_line=100
    )
    assert body(result) == (
        '# claude-code block "odd x"\n  {"type":"odd x","v":1}\n'
        '# claude-code block a\ufffd\n  {"type":"a\\u0000"}\n'
        '# claude-code block untyped\n  {"type":""}\n'
        '# claude-code block untyped\n  {"type":5}\n'
    )
    assert report(result) == {
        ("dropped", "NUL characters and lone surrogates (written as U+FFFD)"): ((1,), 1),
        ("kept", "content blocks of unknown types (as comments with their JSON)"): ((1, 1, 1, 1), 4),
    }


# -- the end (``ClaudeCodeReader.finish``) ------------------------------------------------------


def test_a_subagent_log_no_result_names_comes_at_the_end_counted_in_the_summary(tmp_path: Path) -> None:
    session = subagent_session(tmp_path)
    records = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]
    del records[4]  # task b's result
    session.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = convert_path(session)
    lines = body(result).splitlines()
    note = lines.index("# notes: subagent session_id=b2 path=sess-sub/subagents/agent-b2.jsonl")
    assert [line.split(" ", 1)[0] for line in lines[note + 1 :]] == ["u:", "t!:Glob", "o:", "", "a:", "#"]
    # Each message once: the parent's 10+30 in, the subagents' 5+7 each, b2's read at the end.
    assert lines[-1] == "# tokens_in=64 tokens_out=80 tokens_cached=4140"
    found = report(result)
    assert found[("kept", "subagent logs no Task result names (at the end, tid= lines)")] == ((5,), 1)
    # Its lines are reported at the last line read; only a1's log is read before a result.
    assert found[("kept", "user messages (u:)")] == ((1, 4, 5), 3)
    assert found[("kept", "subagent logs beside the session (tid= lines before the Task result)")] == (
        (4,),
        1,
    )
    assert found[("synthesized", "closing token summary (# tokens_in=…, each message id once)")] == ((0,), 1)


def test_messages_held_on_several_threads_each_join_the_summary() -> None:
    usage = {"input_tokens": 5, "output_tokens": 4}
    result = run(
        assistant(text("a"), usage=usage),
        {**assistant(text("b"), usage=usage, id="m2"), "isSidechain": True, "agentId": "x"},
        {**assistant(text("c"), usage=usage, id="m3"), "isSidechain": True},
    )
    assert body(result).splitlines()[-1] == "# tokens_in=15 tokens_out=12 tokens_cached=0"


def test_what_an_assistant_text_or_thinking_loses_is_reported_at_its_line() -> None:
    result = run(user("u"), assistant(text("a\x00"), {"type": "thinking", "thinking": "b\r\nc"}))
    assert body(result) == "u: u\na: a\ufffd\nth: b\n  c\n"
    found = report(result)
    assert found[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((2,), 1)
    assert found[("dropped", "carriage returns (written as line breaks)")] == ((2,), 1)


def test_what_comes_before_a_malformed_record_is_still_written() -> None:
    """A record that cannot be read still ends the message held before it, and its change of
    session id is still a notes line."""
    result = run(
        assistant(text("a"), usage={"input_tokens": 5, "output_tokens": 1}),
        {"type": "user", "sessionId": "s2", "message": 5},
        user("b"),
    )
    assert body(result) == (
        "a: a tokens_in=5 tokens_out=1\n"
        "# notes: changed session=s2\n"
        "# notes: changed session=s\n"
        "u: b\n"
        "# tokens_in=5 tokens_out=1 tokens_cached=0\n"
    )
    assert skipped(result) == [(2, "user record: `message` is not an object")]
    assert report(result)[("kept", "changes of session id, cwd, branch or version (as # notes: lines)")] == (
        (2, 3),
        2,
    )


def test_a_blank_line_inside_a_text_is_an_empty_line() -> None:
    assert body(run(user("a\n   \nb"))) == "u: a\n\n  b\n"


def test_what_a_summarys_text_loses_is_reported_at_its_line() -> None:
    result = run(user("u"), {"type": "summary", "summary": "s\x00\r\nt", "leafUuid": "l"})
    assert body(result) == "u: u\n# notes: summary leaf=l\n  s\ufffd\n  t\n"
    found = report(result)
    assert found[("dropped", "carriage returns (written as line breaks)")] == ((2,), 1)
    assert found[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((2,), 1)


def test_a_sidechain_message_without_an_id_ends_only_its_own_thread() -> None:
    """It is counted at once (no later record can restate it); the main thread's message goes
    on, its usage merged over its records."""
    side = {
        "type": "assistant",
        "sessionId": "s",
        "isSidechain": True,
        "message": {"role": "assistant", "content": "side", "usage": {"input_tokens": 2, "output_tokens": 2}},
    }
    result = run(
        assistant(text("a"), usage={"input_tokens": 5, "output_tokens": 1}),
        side,
        assistant(text("b"), usage={"input_tokens": 5, "output_tokens": 3}),
    )
    assert body(result) == (
        "a: a tokens_in=5 tokens_out=1\n"
        "a: side tid=sidechain tokens_in=2 tokens_out=2\n"
        "a: b tokens_in=5 tokens_out=3\n"
        "# tokens_in=7 tokens_out=5 tokens_cached=0\n"
    )


def test_a_subagent_log_named_with_bytes_no_text_holds_is_read_and_reported(tmp_path: Path) -> None:
    """A file name that is not UTF-8 (``agent-a\\xff.jsonl``) gives an agent id with a lone
    surrogate: U+FFFD in the notes line and the thread, each reported at the last line read."""
    session = tmp_path / "sess.jsonl"
    session.write_text(json.dumps(user("hi")) + "\n", encoding="utf-8")
    (tmp_path / "sess" / "subagents").mkdir(parents=True)
    log = Path(os.fsdecode(os.fsencode(tmp_path / "sess" / "subagents") + b"/agent-a\xff.jsonl"))
    log.write_text(json.dumps(user("sub")) + "\n", encoding="utf-8")
    result = convert_path(session)
    assert body(result) == (
        "u: hi\n"
        '# notes: subagent session_id=a\ufffd path="sess/subagents/agent-a\\u{dcff}.jsonl"\n'
        "u: sub tid=a\ufffd\n"
    )
    assert report(result)[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == (
        (1, 1),
        2,
    )


def test_a_todo_list_that_goes_below_keeps_the_records_time_and_cuts_a_long_todo() -> None:
    record = {**todo_write({"status": "p", "content": "v" * 70}), "timestamp": "2030-01-01T00:00:00Z"}
    result = run(tool_result("z", "y"), record, max_line=100)
    assert (
        body(result).split("\n", 2)[2]
        == "td: ts=2030-01-01T00:00:00Z\n  [p] " + "v" * 60 + "\n  " + "v" * 10 + "\n"
    )
    assert report(result)[("synthesized", "line breaks in lines over the line limit")] == ((2,), 1)


def test_a_long_block_of_an_unknown_type_is_cut_at_its_line() -> None:
    result = run(user("u"), user([{"type": "odd", "v": "w" * 70}]), max_line=100)
    assert (
        body(result)
        == 'u: u\n# claude-code block odd\n  {"type":"odd","v":"' + "w" * 45 + "\n  " + "w" * 25 + '"}\n'
    )
    assert report(result)[("synthesized", "line breaks in lines over the line limit")] == ((2,), 1)


def test_input_keys_that_cannot_be_fields_are_cleaned_in_extra_input() -> None:
    result = run(tool_result("z", "y"), assistant(call("T", {"ts": "a\ud800"}, id="t1")))
    assert body(result).split("\n", 1)[1] == 't!:T id=t1 extra.input={"ts":"a\ufffd"} → [running]\n'
    assert report(result)[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((2,), 1)


def test_what_a_user_record_loses_is_reported_at_its_line() -> None:
    record = {"type": "user", "sessionId": "s", "timestamp": "noon", "message": {"content": "b", "x": 1}}
    result = run(user("a"), record)
    assert body(result) == "u: a\nu: b\n"
    found = report(result)
    assert found[("dropped", "`x` message fields")] == ((2,), 1)
    assert found[("dropped", "timestamps that are not ISO 8601 with a zone")] == ((2,), 1)


def test_what_a_user_text_block_loses_is_reported_at_its_line() -> None:
    result = run(user("a"), user([text("b\x00")]))
    assert body(result) == "u: a\nu: b\ufffd\n"
    assert report(result)[("dropped", "NUL characters and lone surrogates (written as U+FFFD)")] == ((2,), 1)


# -- the last untried functions (``line``, ``record``, ``__init__``, ``text_lines``, ...) -----


def test_a_record_cut_short_after_text_beyond_ascii_is_said_to_be_cut_short() -> None:
    """json counts the record's characters, not its bytes: a record cut after an ``é`` was
    reported as ``Expecting ',' delimiter at column 1`` (the column of its line end)."""
    cut = '{"type": "user", "x": "éé"'
    source = f"{cut}\n{cut}\n" + '{"type": "user"'
    result = convert(source.encode(), "claude-code", to="bbox")
    why = "not a JSON record (the record ends too early: cut short?)"
    # The last line has no line end: the cut is at its very last character.
    assert skipped(result) == [(1, why), (2, why), (3, why)]


def test_a_single_blank_line_before_a_text_is_dropped_and_the_text_kept() -> None:
    assert body(run(user("\nhello"), user(" \n\t\nbye\n"))) == "u: hello\nu: bye\n"


def test_a_long_message_key_not_read_is_reported_cut_at_forty_characters() -> None:
    message = {"content": "x", "role": "user", "k" * 41: 1, "m" * 40: 2}
    result = run({"type": "user", "sessionId": "s", "message": message})
    found = report(result)
    assert found[("dropped", "`" + "k" * 39 + "…` message fields")] == ((1,), 1)
    assert found[("dropped", "`" + "m" * 40 + "` message fields")] == ((1,), 1)


def test_a_progress_record_between_two_records_of_a_message_keeps_it_one_message() -> None:
    """Claude Code writes a message's parallel tool calls one record each; a progress record of
    the first call may come between them: the message goes on, its usage merged and counted
    once (a progress record ending it made the second record a message counted before)."""
    first = assistant(
        call(tool_input={"command": "a"}, id="t1"), usage={"input_tokens": 5, "output_tokens": 1}
    )
    second = assistant(
        call(tool_input={"command": "b"}, id="t2"), usage={"input_tokens": 5, "output_tokens": 3}
    )
    progress = {"type": "progress", "sessionId": "s", "toolUseID": "t1", "data": {"n": "1"}}
    result = run(first, progress, second)
    assert body(result) == (
        "t!:Bash id=t1 command=a → [running] tokens_in=5 tokens_out=1\n"
        "t~:Bash id=t1 n=1\n"
        "t!:Bash id=t2 command=b → [running] tokens_in=5 tokens_out=3\n"
        "# tokens_in=5 tokens_out=3 tokens_cached=0\n"
    )


def test_a_sidechain_record_ends_only_its_own_threads_message() -> None:
    """A sidechain user record between two records of a main-thread message ends the
    sidechain's message, not the main thread's: the main message stays one, counted once."""
    usage = {"input_tokens": 5, "output_tokens": 1}
    result = run(
        assistant(text("a"), usage=usage),
        user("side", isSidechain=True),
        assistant(text("b"), usage={**usage, "output_tokens": 3}),
    )
    assert body(result) == (
        "a: a tokens_in=5 tokens_out=1\n"
        "u: side tid=sidechain\n"
        "a: b tokens_in=5 tokens_out=3\n"
        "# tokens_in=5 tokens_out=3 tokens_cached=0\n"
    )


def test_a_subagent_log_beside_an_empty_session_is_reported_at_line_zero(tmp_path: Path) -> None:
    """No line of the session was read: the log at the end is reported at line 0, as the
    other rows no line of the input gave."""
    session = tmp_path / "sess.jsonl"
    session.write_bytes(b"")
    (tmp_path / "sess" / "subagents").mkdir(parents=True)
    log = tmp_path / "sess" / "subagents" / "agent-a1.jsonl"
    log.write_text(json.dumps({"type": "user", "message": {"content": "sub"}}) + "\n", encoding="utf-8")
    result = convert_path(session)
    assert (
        body(result) == "# notes: subagent session_id=a1 path=sess/subagents/agent-a1.jsonl\nu: sub tid=a1\n"
    )
    found = report(result)
    assert found[("kept", "subagent logs no Task result names (at the end, tid= lines)")] == ((0,), 1)
    assert found[("kept", "user messages (u:)")] == ((0,), 1)
