"""Claude Code's other record types (``bbox_lark/convert/claude_code/records.py``: summaries,
system records, file-history snapshots, queue operations, progress) and the subagent logs
beside a session (``subagents.py``), pinned down where mutation testing found nothing holding
them: each record's whole line, the report rows with their lines, why a record is skipped,
which log a Task result finds (docs/testing.md, "Mutation testing"). Through ``convert``, as a
user runs it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from test_mutants_convert_claude_code_reader import report  # the reader's fidelity rows

import bbox_lark.convert.claude_code as claude_code
from bbox_lark.convert import convert

NUL = "NUL characters and lone surrogates (written as U+FFFD)"
NO_ISO_TIME = "timestamps that are not ISO 8601 with a zone"
USER = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "u"}}


def run(*records: dict[str, Any], **options: Any) -> Any:
    return convert("\n".join(json.dumps(r) for r in records).encode(), "claude-code", to="bbox", **options)


def body(result: Any) -> str:
    return result.text.split("---\n", 2)[2]


def skipped(result: Any) -> list[tuple[int, str]]:
    return [(s.line, s.message) for s in result.fidelity.skipped]


# -- records.py ---------------------------------------------------------------------------------


def test_a_summary_is_a_notes_line_with_its_leaf_and_text_below() -> None:
    result = run(
        USER,
        {"type": "summary", "summary": 5},
        {"type": "summary", "summary": "t", "leafUuid": 5},
        {"type": "summary", "summary": "t", "leafUuid": "l\x00"},
        {"type": "summary", "summary": "", "leafUuid": ""},
    )
    assert body(result) == (
        "u: u\n# notes: summary\n  t\n# notes: summary leaf=l\ufffd\n  t\n# notes: summary\n"
    )
    assert skipped(result) == [(2, "summary record: `summary` is not text")]
    assert report(result) == {
        ("kept", "user messages (u:)"): ((1,), 1),
        ("kept", "summary records (# notes: summary)"): ((3, 4, 5), 3),
        ("dropped", NUL): ((4,), 1),
    }


def test_a_system_record_is_a_notes_line_and_a_compact_boundary_a_compact_line() -> None:
    result = run(
        USER,
        {
            "type": "system",
            "content": {"a": 1},
            "subtype": 5,
            "level": 5,
            "timestamp": "noon",
            "isSidechain": True,
        },
        {"type": "system", "content": None, "subtype": "s\x00", "level": "warn"},
        {"type": "system", "content": "x\x00", "level": "loud\x00"},
        {
            "type": "system",
            "subtype": "compact_boundary",
            "content": "a\x00\nb",
            "compactMetadata": {"trigger": "auto\x00", "preTokens": 5},
            "timestamp": "noon",
            "isSidechain": True,
        },
        {
            "type": "system",
            "subtype": "compact_boundary",
            "compactMetadata": {"trigger": 5, "preTokens": True},
        },
        {"type": "system", "subtype": "compact_boundary", "content": {"k": 1}, "compactMetadata": 5},
    )
    assert body(result) == (
        "u: u\n"
        "# notes: system tid=sidechain\n"
        '  {"a":1}\n'
        "# notes: system subtype=s\ufffd level=warn\n"
        "# notes: system extra.level=loud\ufffd\n"
        "  x\ufffd\n"
        "@compact reason=auto\ufffd tokens_before=5 tid=sidechain\n"
        "  a\ufffd\n"
        "  b\n"
        "@compact\n"
        "@compact\n"
        '  {"k":1}\n'
    )
    assert report(result) == {
        ("kept", "user messages (u:)"): ((1,), 1),
        ("dropped", NO_ISO_TIME): ((2, 5), 2),
        ("kept", "system records (# notes: system)"): ((2, 3, 4), 3),
        ("dropped", NUL): ((3, 4, 4, 5, 5), 5),
        ("kept", "compact boundaries (@compact)"): ((5, 6, 7), 3),
    }


SNAPSHOT = "file-history-snapshot"


def test_a_file_history_snapshot_is_a_comment_with_its_message_count_and_time() -> None:
    """The record's ``messageId`` before the snapshot's, the snapshot's time before the
    record's; the backups are counted, not kept."""
    result = run(
        USER,
        {"type": SNAPSHOT, "snapshot": 5},
        {
            "type": SNAPSHOT,
            "messageId": "m\x00",
            "snapshot": {
                "messageId": "x",
                "trackedFileBackups": {"a": 1, "b": 2},
                "timestamp": "2030-01-01T00:00:00Z",
            },
            "isSnapshotUpdate": True,
            "timestamp": "2031-01-01T00:00:00Z",
            "isSidechain": True,
        },
        {
            "type": SNAPSHOT,
            "snapshot": {"messageId": "m2", "trackedFileBackups": [], "timestamp": "noon"},
            "isSnapshotUpdate": "true",
            "timestamp": "2031-01-01T00:00:00Z",
        },
        {
            "type": SNAPSHOT,
            "snapshot": {"trackedFileBackups": 5},
            "messageId": 5,
            "timestamp": "2031-01-01T00:00:00Z",
        },
        {"type": SNAPSHOT, "snapshot": {"messageId": ""}},
    )
    assert body(result) == (
        "u: u\n"
        "# file-snapshot: m\ufffd files=2 update=true ts=2030-01-01T00:00:00Z tid=sidechain\n"
        "# file-snapshot: m2 files=0\n"
        "# file-snapshot: ts=2031-01-01T00:00:00Z\n"
        "# file-snapshot:\n"
    )
    assert skipped(result) == [(2, "file-history-snapshot record: `snapshot` is not an object")]
    assert report(result) == {
        ("kept", "user messages (u:)"): ((1,), 1),
        ("dropped", NUL): ((3,), 1),
        ("dropped", "file backup details of file-history snapshots (their count is kept)"): ((3, 5), 2),
        ("kept", "file-history snapshots (# file-snapshot:)"): ((3, 4, 5, 6), 4),
        ("dropped", NO_ISO_TIME): ((4,), 1),
    }


QUEUE = "queue-operation"


def test_a_queue_operation_is_a_comment_with_its_one_line_text_or_the_text_below() -> None:
    result = run(
        USER,
        {"type": QUEUE, "operation": 5},
        {"type": QUEUE, "operation": ""},
        {
            "type": QUEUE,
            "operation": "enqueue\x00",
            "content": "c\x00",
            "timestamp": "noon",
            "isSidechain": True,
        },
        {"type": QUEUE, "operation": "e", "content": {"k": [1]}},
        {"type": QUEUE, "operation": "e", "content": "x" * 4096},
        {"type": QUEUE, "operation": "e", "content": "y" * 4097},
        {"type": QUEUE, "operation": "e", "content": "a\nb"},
        {"type": QUEUE, "operation": "e"},
    )
    assert body(result) == (
        "u: u\n"
        "# queue: enqueue\ufffd c\ufffd tid=sidechain\n"
        '# queue: e "{\\"k\\":[1]}"\n'
        "# queue: e " + "x" * 4096 + "\n"
        "# queue: e\n  " + "y" * 4097 + "\n"
        "# queue: e\n  a\n  b\n"
        "# queue: e\n"
    )
    why = "queue-operation record: `operation` is not text"
    assert skipped(result) == [(2, why), (3, why)]
    assert report(result) == {
        ("kept", "user messages (u:)"): ((1,), 1),
        ("dropped", NUL): ((4, 4), 2),
        ("dropped", NO_ISO_TIME): ((4,), 1),
        ("kept", "queue operations (# queue:)"): ((4, 5, 6, 7, 8, 9), 6),
    }


def bash_call(call_id: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": "Bash", "input": {}}
    return {
        "type": "assistant",
        "sessionId": "s",
        "message": {"id": "m1", "role": "assistant", "content": [block]},
    }


def progress(call_id: Any, data: Any, **record: Any) -> dict[str, Any]:
    return {"type": "progress", "sessionId": "s", "toolUseID": call_id, "data": data, **record}


def test_a_progress_record_of_an_open_call_is_a_progress_line_with_its_data_as_fields() -> None:
    result = run(
        bash_call("t1"),
        progress(["t1"], {"k": "v"}),
        progress("t1", "text"),
        progress("t1", {"k": "v"}, timestamp="noon", isSidechain=True, agentId="ag"),
        progress("t1", [1]),
    )
    assert body(result) == (
        "t!:Bash id=t1 → [running]\nt~:Bash id=t1\nt~:Bash id=t1 k=v tid=ag\nt~:Bash id=t1\n"
    )
    assert report(result) == {
        ("kept", "tool_use blocks (t!:)"): ((1,), 1),
        ("synthesized", "[running] results of tool calls (the result follows on o:)"): ((1,), 1),
        ("dropped", "progress records of no open tool call"): ((2,), 1),
        ("kept", "progress records (t~:)"): ((3, 4, 5), 3),
        ("kept", "tool input keys (as fields; lists and objects as JSON)"): ((4,), 1),
        ("dropped", NO_ISO_TIME): ((4,), 1),
    }


def long_progress(size: int) -> Any:
    record = progress("t1", {"k": "v" * size}, timestamp="noon", isSidechain=True, agentId="ag")
    return run(bash_call("t1"), record, max_line=128)


def test_a_progress_line_as_long_as_the_limit_stays_whole() -> None:
    """The line limit is the reader's (``--max-line`` less 64: 64 here):
    ``t~:Bash id=t1 k=`` and 41 characters and `` tid=ag`` are 64."""
    result = long_progress(41)
    assert body(result).splitlines()[1] == "t~:Bash id=t1 k=" + "v" * 41 + " tid=ag"
    found = report(result)
    assert found[("kept", "progress records (t~:)")] == ((2,), 1)
    assert found[("dropped", NO_ISO_TIME)] == ((2,), 1)
    assert ("dropped", "progress data too long for one line") not in found


def test_progress_data_too_long_for_one_line_is_dropped_the_id_and_thread_kept() -> None:
    result = long_progress(42)
    assert body(result).splitlines()[1] == "t~:Bash id=t1 tid=ag"
    found = report(result)
    assert found[("kept", "progress records (t~:)")] == ((2,), 1)
    assert found[("kept", "tool input keys (as fields; lists and objects as JSON)")] == ((2,), 1)
    # The time is read again for the short line (each reading reports it).
    assert found[("dropped", NO_ISO_TIME)] == ((2, 2), 2)
    assert found[("dropped", "progress data too long for one line")] == ((2,), 1)


def test_a_short_progress_line_keeps_the_records_time() -> None:
    record = progress("t1", {"k": "v" * 60}, timestamp="2030-01-01T00:00:00Z")
    result = run(bash_call("t1"), record, max_line=128)
    assert body(result).splitlines()[1] == "t~:Bash id=t1 ts=2030-01-01T00:00:00Z"


# -- subagents.py -------------------------------------------------------------------------------


def task(call_id: str, prompt: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": "Task", "input": {"prompt": prompt}}
    message = {"id": "m" + call_id, "role": "assistant", "content": [block]}
    return {"type": "assistant", "sessionId": "s", "message": message}


def task_result(call_id: Any, agent: str | None = None) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": "done"}
    record: dict[str, Any] = {
        "type": "user",
        "sessionId": "s",
        "message": {"role": "user", "content": [block]},
    }
    if agent is not None:
        record["toolUseResult"] = {"agentId": agent}
    return record


def said(content: Any, **record: Any) -> dict[str, Any]:
    return {"type": "user", "sessionId": "s", "message": {"role": "user", "content": content}, **record}


def beside(tmp_path: Path, records: list[dict[str, Any]], logs: dict[bytes, Any]) -> Any:
    """``sess.jsonl`` of ``records``, with ``sess/subagents/agent-<name>.jsonl`` beside it for
    each log (a list of records, or the file's bytes), converted from its path."""
    session = tmp_path / "sess.jsonl"
    session.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    folder = tmp_path / "sess" / "subagents"
    folder.mkdir(parents=True)
    for name, log in logs.items():
        path = Path(os.fsdecode(os.fsencode(folder) + b"/agent-" + name + b".jsonl"))
        path.write_bytes(
            log if isinstance(log, bytes) else "".join(json.dumps(r) + "\n" for r in log).encode()
        )
    return convert(session.read_bytes(), "claude-code", to="bbox", path=session)


def test_a_task_result_finds_the_log_its_agent_id_names_whatever_its_prompt(tmp_path: Path) -> None:
    result = beside(tmp_path, [task("t1", "P"), task_result("t1", "a1")], {b"a1": [said("other")]})
    assert body(result) == (
        "x:task id=t1 prompt=P → [launched]\n"
        "u: other tid=a1\n"
        "o: id=t1 session_id=a1 path=sess/subagents/agent-a1.jsonl → [ok] done\n"
    )
    found = report(result)
    assert found[("kept", "subagent logs beside the session (tid= lines before the Task result)")] == (
        (2,),
        1,
    )
    assert ("kept", "subagent logs no Task result names (at the end, tid= lines)") not in found


def test_a_task_result_naming_an_agent_with_no_log_finds_it_by_its_prompt(tmp_path: Path) -> None:
    result = beside(tmp_path, [task("t1", "P"), task_result("t1", "zz")], {b"a1": [said("P")]})
    assert body(result).splitlines()[1:] == [
        "u: P tid=a1",
        "o: id=t1 session_id=a1 path=sess/subagents/agent-a1.jsonl → [ok] done",
    ]


def test_a_result_whose_call_id_is_no_text_looks_for_no_log(tmp_path: Path) -> None:
    result = beside(tmp_path, [task_result([1])], {b"a1": [said("P")]})
    assert body(result) == (
        "o: → [ok] done\n# notes: subagent session_id=a1 path=sess/subagents/agent-a1.jsonl\nu: P tid=a1\n"
    )


def test_an_empty_log_or_one_whose_first_record_is_no_object_matches_no_prompt(tmp_path: Path) -> None:
    """Neither is the log of the call (their first record is no message); read at the end,
    the empty one gives nothing and the other's line is skipped, at the last line read."""
    records = [task("t1", "P"), task_result("t1")]
    result = beside(tmp_path, records, {b"a1": b"", b"b2": b"[1]\n"})
    assert body(result) == "x:task id=t1 prompt=P → [launched]\no: id=t1 → [ok] done\n"
    assert skipped(result) == [(2, "a JSON array, not a record (an object)")]


def test_a_log_of_another_session_is_skipped_at_the_last_line_read_its_id_cut(tmp_path: Path) -> None:
    other = {"type": "user", "sessionId": "x" * 70, "message": {"content": "z"}}
    result = beside(tmp_path, [said("hi"), said("hi2")], {b"a1": [other]})
    assert body(result) == "u: hi\nu: hi2\n"
    why = f"subagent log sess/subagents/agent-a1.jsonl: another session ({'x' * 59}…)"
    assert skipped(result) == [(2, why)]


def test_a_log_whose_agent_id_is_not_one_word_is_read_on_the_sidechain_thread(tmp_path: Path) -> None:
    result = beside(tmp_path, [said("hi")], {b"a b": [said("z")]})
    assert body(result).splitlines() == [
        "u: hi",
        '# notes: subagent session_id="a b" path="sess/subagents/agent-a b.jsonl"',
        "u: z tid=sidechain",
    ]


def test_a_log_that_cannot_be_read_is_skipped_with_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log gone between the listing and its reading (a session cleaned up meanwhile)."""
    gone = tmp_path / "sess" / "subagents" / "agent-a1.jsonl"
    monkeypatch.setattr(claude_code, "subagent_logs", lambda path: {"a1": gone})
    session = tmp_path / "sess.jsonl"
    session.write_text(json.dumps(said("hi")) + "\n", encoding="utf-8")
    result = convert(session.read_bytes(), "claude-code", to="bbox", path=session)
    assert body(result) == "u: hi\n"
    why = "subagent log sess/subagents/agent-a1.jsonl: cannot be read (No such file or directory)"
    assert skipped(result) == [(1, why)]


def test_a_subagents_last_message_is_counted_when_its_log_ends(tmp_path: Path) -> None:
    """A copy of the subagent's message later in the session (a sidechain record of the same
    agent and message id) is a message counted before: its line carries no usage, and the
    tokens are counted once."""
    message = {
        "id": "m_sub",
        "role": "assistant",
        "content": "sub says",
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }
    answer = {"type": "assistant", "sessionId": "s", "message": message}
    records = [task("t1", "P"), task_result("t1", "a1"), {**answer, "isSidechain": True, "agentId": "a1"}]
    result = beside(tmp_path, records, {b"a1": [said("P"), answer]})
    assert body(result) == (
        "x:task id=t1 prompt=P → [launched]\n"
        "u: P tid=a1\n"
        "a: sub says tid=a1 tokens_in=5 tokens_out=2\n"
        "o: id=t1 session_id=a1 path=sess/subagents/agent-a1.jsonl → [ok] done\n"
        "a: sub says tid=a1\n"
        "# tokens_in=5 tokens_out=2 tokens_cached=0\n"
    )
    assert report(result)[("dropped", "API usage of a message id counted before (its lines carry none)")] == (
        (3,),
        1,
    )


def test_a_linked_agent_id_no_text_holds_is_cleaned_and_reported_at_the_results_line(tmp_path: Path) -> None:
    """A log named with a byte that is no UTF-8 (``agent-a\\xff.jsonl``): its agent id holds a
    lone surrogate, U+FFFD on its thread and on the result naming it, each reported."""
    result = beside(tmp_path, [task("t1", "P"), task_result("t1", "a\udcff")], {b"a\xff": [said("P")]})
    assert body(result).splitlines()[1:] == [
        "u: P tid=a\ufffd",
        'o: id=t1 session_id=a\ufffd path="sess/subagents/agent-a\\u{dcff}.jsonl" → [ok] done',
    ]
    assert report(result)[("dropped", NUL)] == ((2, 2), 2)
