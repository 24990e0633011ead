"""Claude Code's tool results (``bbox_lark/convert/claude_code/reader.py``,
``ClaudeCodeReader.tool_result``), pinned down where mutation testing found nothing holding
them: the call a result names, closed by it (a progress record after it is of no open call),
a result naming no call, a call id cleaned and reported with its line (docs/testing.md,
"Mutation testing"). Through ``convert``, as a user runs it."""

from __future__ import annotations

import json
from typing import Any

from bbox_lark.convert import convert


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


def run(*records: dict[str, Any]) -> Any:
    return convert("\n".join(json.dumps(r) for r in records).encode(), "claude-code", to="bbox")


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
