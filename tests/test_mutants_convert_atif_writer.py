"""bbox → ATIF (``bbox_lark/convert/atif/writer.py``), pinned down where mutation testing found
nothing holding it: the steps a line opens and their numbers, what goes to which step (lines
before any step, reasoning, calls, results and deferred ``o:`` lines, subagent references),
the tool_call_ids made unique, each model response's usage summed in the step it went to,
``# metrics`` lines and what they refuse, an imported trajectory's attachments and comments,
and the fidelity report's rows with their lines (docs/testing.md, "Mutation testing").
Every test goes through ``convert`` (public behaviour); fast: no corpus."""

from __future__ import annotations

import json
from typing import Any

import atif
import pytest

from bbox_lark.convert import convert

HEADER = "---\nformat: bbox/1\nid: s1\nagent: a\nversion: 1\n---\n"
#: The header of a document imported from ATIF (``atif:`` names its schema): not native.
IMPORTED = "---\nformat: bbox/1\nid: s1\nagent: a\nversion: 1\natif: ATIF-v1.8\n---\n"
#: The file line of the body's first line under either header.
FIRST = 7
FIRST_IMPORTED = 8
BIG = 1 << 22
SHA = "ab" * 32


def export(body: str, header: str = HEADER, **options: Any) -> tuple[dict[str, Any], Any]:
    result = convert(header + body, "bbox", to="atif", max_line=BIG, **options)
    data = json.loads(result.text)
    atif.Trajectory.model_validate(data)
    return data, result


def rows(result: Any) -> dict[tuple[str, str], tuple[int, ...]]:
    """The writer's rows of the fidelity report: (fate, what) -> the lines."""
    return {(e.action, e.what): e.lines for e in result.fidelity.entries if e.stage == "write"}


def lines_of(step: dict[str, Any]) -> list[dict[str, Any]]:
    return list(step.get("extra", {}).get("bbox", {}).get("lines", ()))


def results(step: dict[str, Any]) -> list[dict[str, Any]]:
    return list(step.get("observation", {}).get("results", ()))


# -- steps: which line opens one, their numbers, lines before any step -----------------------


def test_a_result_before_any_step_opens_a_system_step_with_its_line() -> None:
    trajectory, result = export("o: id=q → [ok]\n  more\nu: hi\n")
    system, user = trajectory["steps"]
    assert (system["step_id"], system["source"], system["message"]) == (1, "system", "")
    assert results(system) == [{"content": "[ok]\nmore", "extra": {"id": "q"}}]
    assert (user["step_id"], user["source"], user["message"]) == (2, "user", "hi")
    found = rows(result)
    assert found[("synthesized", "system steps (for lines before any step)")] == (FIRST,)
    assert found[("synthesized", "step_ids")] == (FIRST, FIRST + 2)
    assert found[("extra", "o: lines with an unknown call id (id in extra)")] == (FIRST,)
    assert found[("extra", "continuation lines")] == (FIRST + 1,)


def test_a_result_of_no_call_after_a_step_goes_to_that_step() -> None:
    trajectory, result = export("u: hi\no: → [late]\n")
    (user,) = trajectory["steps"]
    assert user["source"] == "user"
    assert results(user) == [{"content": "[late]"}]
    assert ("synthesized", "system steps (for lines before any step)") not in rows(result)
    assert rows(result)[("kept", "o: lines without a call id")] == (FIRST + 1,)


def test_lines_before_the_first_step_are_recorded_in_it_once() -> None:
    trajectory, result = export("# before\n@start\n\nu: hi\n  more text\nu: again\n")
    first, second = trajectory["steps"]
    assert lines_of(first) == [
        {"n": 1, "kind": "comment", "text": "before"},
        {"n": 2, "kind": "lifecycle", "name": "start"},
        {"n": 3, "kind": "blank", "raw": ""},
        {"n": 4, "kind": "user", "text": "hi"},
        {"n": 5, "kind": "continuation", "text": "more text"},
    ]
    assert first["message"] == "hi\nmore text"
    assert lines_of(second) == [{"n": 6, "kind": "user", "text": "again"}]
    found = rows(result)
    assert found[("extra", "comment lines")] == (FIRST,)
    assert found[("extra", "lifecycle lines")] == (FIRST + 1,)
    assert found[("extra", "blank lines")] == (FIRST + 2,)
    assert found[("synthesized", "step_ids")] == (FIRST + 3, FIRST + 5)
    assert found[("kept", "user messages (u:)")] == (FIRST + 3, FIRST + 5)


def test_thinking_goes_to_the_next_agent_step_only() -> None:
    trajectory, result = export("th: first\nth: second tokens=3\nu: hi\nt:read a.txt → [1 line]\na: more\n")
    user, agent, last = trajectory["steps"]
    assert "reasoning_content" not in user
    assert agent["source"] == "agent" and agent["reasoning_content"] == "first\nsecond"
    assert "reasoning_content" not in last
    assert rows(result)[("kept", "thinking lines (th: → reasoning_content)")] == (FIRST, FIRST + 1)


def test_a_call_after_thinking_opens_a_new_agent_step() -> None:
    trajectory, _ = export("a: one\nt:read a → [ok]\nth: hmm\nt:read b → [ok]\n")
    first, second = trajectory["steps"]
    assert [c["arguments"] for c in first["tool_calls"]] == [{"args": ["a"]}]
    assert second["source"] == "agent" and second["message"] == "" and second["reasoning_content"] == "hmm"
    assert [c["arguments"] for c in second["tool_calls"]] == [{"args": ["b"]}]


def test_calls_after_an_agent_line_stay_in_its_step_and_after_a_user_line_open_one() -> None:
    trajectory, result = export("a: go\nt:a → [1]\nt:b → [2]\nu: next\nt:c → [3]\n")
    agent, user, later = trajectory["steps"]
    assert [c["function_name"] for c in agent["tool_calls"]] == ["a", "b"]
    assert "tool_calls" not in user
    assert (later["source"], [c["function_name"] for c in later["tool_calls"]]) == ("agent", ["c"])
    assert rows(result)[("synthesized", "step_ids")] == (FIRST, FIRST + 3, FIRST + 4)


def test_step_ids_count_from_one_in_order() -> None:
    trajectory, _ = export("u: a\na: b\nu: c\na: d\n")
    assert [(s["step_id"], s["source"]) for s in trajectory["steps"]] == [
        (1, "user"),
        (2, "agent"),
        (3, "user"),
        (4, "agent"),
    ]


# -- messages and step fields --------------------------------------------------------------


def test_a_message_is_its_text_without_fields_then_its_continuation_lines() -> None:
    trajectory, _ = export(
        "u: fix  the bug step=1 ts=2025-01-02T10:00:00Z\n  line two\n"
        "a: answer step=2 model=m2 ts=notatime\n"
        "u: model=m3\n  only continuation\n"
    )
    user, agent, last = trajectory["steps"]
    assert user["message"] == "fix the bug\nline two"
    assert user["timestamp"] == "2025-01-02T10:00:00Z"
    assert "model_name" not in user
    assert agent["message"] == "answer" and agent["model_name"] == "m2"
    assert "timestamp" not in agent and agent["extra"]["bbox"]["ts"] == "notatime"
    assert last["message"] == "only continuation" and "model_name" not in last


def test_a_malformed_ts_is_kept_in_extra_with_its_line() -> None:
    # ISO 8601 without a zone, or a date alone, is no bbox ts= (nor an ATIF timestamp).
    trajectory, result = export(
        "u: a ts=2025-01-02T10:00:00Z\nu: b ts=soon\nu: c ts=2025-01-02T10:00:00\nu: d ts=2025-01-02\n"
    )
    assert [s.get("timestamp") for s in trajectory["steps"]] == ["2025-01-02T10:00:00Z", None, None, None]
    assert [s["extra"]["bbox"].get("ts") for s in trajectory["steps"]] == [
        None,
        "soon",
        "2025-01-02T10:00:00",
        "2025-01-02",
    ]
    assert rows(result)[("extra", "malformed ts= values")] == (FIRST + 1, FIRST + 2, FIRST + 3)


def test_a_field_after_the_arrow_stays_in_the_text() -> None:
    trajectory, _ = export("a: look here k=v → x=1\n")
    assert trajectory["steps"][0]["message"].startswith("look here")
    assert "k=v" not in trajectory["steps"][0]["message"]


# -- tool calls ------------------------------------------------------------------------------


def test_a_call_without_an_id_gets_one_named_for_its_line() -> None:
    trajectory, result = export('a: go\nt:grep "x y" p=1 p=2 → [ok]\nc:foo id=z\n')
    (step,) = trajectory["steps"]
    assert step["tool_calls"] == [
        {"tool_call_id": "call_2", "function_name": "grep", "arguments": {"p": "1", "args": ["x y"]}},
        {"tool_call_id": "z", "function_name": "foo", "arguments": {}, "extra": {"kind": "mcp"}},
    ]
    assert results(step) == [{"source_call_id": "call_2", "content": "[ok]"}]
    found = rows(result)
    assert found[("synthesized", "tool_call_ids")] == (FIRST + 1,)
    assert found[("kept", "tool calls (→ tool_calls)")] == (FIRST + 1,)
    assert found[("kept", "mcp calls (→ tool_calls)")] == (FIRST + 2,)


def test_an_args_field_leaves_the_positional_arguments_under_another_key() -> None:
    trajectory, _ = export('a: go\nt:run "pos" args=named list=[a,b] → [ok]\n')
    (call,) = trajectory["steps"][0]["tool_calls"]
    assert call["arguments"] == {"args": "named", "list": ["a", "b"], "_args": ["pos"]}


def test_a_call_without_a_name_is_named_for_its_kind() -> None:
    trajectory, _ = export("a: go\nq: what now? → yes\n")
    (call,) = trajectory["steps"][0]["tool_calls"]
    assert call["function_name"] == "question" and call["extra"] == {"kind": "question"}


def test_ids_used_again_in_one_document_get_suffixes_in_turn() -> None:
    trajectory, result = export(
        "a: go\nt:a id=k → [1]\nt:b id=k → [2]\nt:c id=k → [3]\nu: x\nt:d id=k → [4]\n"
    )
    first, _, later = trajectory["steps"]
    assert [c["tool_call_id"] for c in first["tool_calls"]] == ["k", "k~2", "k~3"]
    assert [c.get("extra") for c in first["tool_calls"]] == [None, {"id": "k"}, {"id": "k"}]
    assert [r["source_call_id"] for r in results(first)] == ["k", "k~2", "k~3"]
    assert [c["tool_call_id"] for c in later["tool_calls"]] == ["k~4"]
    reused = "unique tool_call_ids (an id reused while a call was open)"
    assert rows(result)[("synthesized", reused)] == (FIRST + 2, FIRST + 3, FIRST + 5)


def test_an_open_call_that_is_completed_gets_its_result_and_status() -> None:
    trajectory, result = export("a: one\nt!:run id=A x=1 → [running]\na: two\nt:run id=A → [ok]\n  output\n")
    first, second = trajectory["steps"]
    assert first["tool_calls"] == [
        {
            "tool_call_id": "A",
            "function_name": "run",
            "arguments": {"x": "1"},
            "extra": {"status": "[running]"},
        }
    ]
    assert results(first) == [{"source_call_id": "A", "content": "[ok]\noutput"}]
    assert "tool_calls" not in second and "observation" not in second
    found = rows(result)
    assert found[("kept", "tool_start calls (→ tool_calls)")] == (FIRST + 1,)
    assert found[("kept", "tool completions (→ the start's observation result)")] == (FIRST + 3,)


def test_a_deferred_result_goes_back_to_its_calls_step() -> None:
    trajectory, result = export("a: one\nt!:run id=A → [running]\nu: meanwhile\no: id=A → [done]\n")
    first, user = trajectory["steps"]
    assert results(first) == [{"source_call_id": "A", "content": "[done]"}]
    assert "observation" not in user
    assert rows(result)[("kept", "o: lines (→ observation.results of their call's step)")] == (FIRST + 3,)


def test_a_result_names_the_latest_call_of_its_key() -> None:
    trajectory, _ = export("a: one\nt:run id=A → [1]\no: id=A → [again]\n")
    (step,) = trajectory["steps"]
    assert results(step) == [
        {"source_call_id": "A", "content": "[1]"},
        {"source_call_id": "A", "content": "[again]"},
    ]


def test_a_plan_is_no_tool_call() -> None:
    trajectory, result = export("a: go\np: step one\n")
    assert "tool_calls" not in trajectory["steps"][0]
    assert rows(result)[("extra", "plan lines")] == (FIRST + 1,)


# -- subagents and blobs ---------------------------------------------------------------------


def test_subagent_results_reference_their_trajectory_or_keep_a_session_alone() -> None:
    trajectory, result = export(
        'a: go\nx:explore id=x1 "look" → [running]\no: id=x1 path=subs/a.json session_id=sub-a → [done]\n'
        "x:other id=x2 → path=subs/b.json\nx:third id=x3 → session_id=only\n"
        "t!:run id=r1 → [running]\no: id=r1 path=p.json session_id=zz → [ok]\n"
        "x:empty id=x4 → path= session_id=\n"
    )
    got = results(trajectory["steps"][0])
    assert got[0] == {
        "source_call_id": "x1",
        "content": "[done]",
        "subagent_trajectory_ref": [{"trajectory_path": "subs/a.json", "session_id": "sub-a"}],
    }
    assert got[1]["subagent_trajectory_ref"] == [{"trajectory_path": "subs/b.json"}]
    assert got[2] == {"source_call_id": "x3", "content": "session_id=only", "extra": {"session_id": "only"}}
    assert got[3] == {"source_call_id": "r1", "content": "[ok]"}
    assert got[4] == {"source_call_id": "x4", "content": "path= session_id="}
    found = rows(result)
    assert found[("kept", "x: path= (→ subagent_trajectory_ref)")] == (FIRST + 2, FIRST + 3)
    assert found[("extra", "x: session_id= without path= (no valid reference since v1.7)")] == (FIRST + 4,)


def test_a_subagents_thread_becomes_its_trajectory_unless_a_step_mixes_threads() -> None:
    start = (
        "u: go\na: delegating\nx:explore id=x1 → session_id=T path=subs/T.json\n"
        "u: task tid=T\na: work tid=T\n"
    )
    trajectory, _ = export(start + "t:read a.rs tid=T id=r → [ok]\na: back\n")
    assert [s["message"] for s in trajectory["steps"]] == ["go", "delegating", "back"]
    (embedded,) = trajectory["subagent_trajectories"]
    assert embedded["trajectory_id"] == "T"
    assert [(s["step_id"], s["message"]) for s in embedded["steps"]] == [(1, "task"), (2, "work")]
    ref = results(trajectory["steps"][1])[0]["subagent_trajectory_ref"]
    assert ref == [{"trajectory_path": "subs/T.json", "session_id": "T", "trajectory_id": "T"}]
    # A step holding a line of the main thread stays in the parent.
    trajectory, _ = export(start + "t:read a.rs id=r → [ok]\na: back\n")
    assert [s["message"] for s in trajectory["steps"]] == ["go", "delegating", "work", "back"]
    assert [s["message"] for s in trajectory["subagent_trajectories"][0]["steps"]] == ["task"]


def test_a_reference_to_a_session_that_is_no_thread_embeds_nothing() -> None:
    trajectory, _ = export("u: go\nx:explore id=x1 → session_id=T path=subs/T.json\nu: task tid=U\n")
    assert "subagent_trajectories" not in trajectory
    assert len(trajectory["steps"]) == 3


def test_a_blob_pointer_is_kept_with_its_hash_size_and_type() -> None:
    trajectory, result = export(f"a: go\nt:fetch id=f1 → @blob sha256={SHA} bytes=10 mime=text/plain\n")
    (got,) = results(trajectory["steps"][0])
    assert got["extra"] == {"blob": {"sha256": SHA, "bytes": "10", "mime": "text/plain"}}
    assert rows(result)[("extra", "blob pointers (with their hash)")] == (FIRST + 1,)


# -- usage: each model response counted once, in the step it went to -------------------------


def test_two_responses_that_end_in_one_step_add_up() -> None:
    """A completion that states a new response goes to its call's earlier step, which holds
    a response already: the step's metrics are both (not the last alone, not a difference)."""
    trajectory, _ = export(
        "a: one tokens_in=1 tokens_out=1\nt!:x id=A → [running]\n"
        "a: two tokens_in=5 tokens_out=5\nt:x id=A tokens_in=9 tokens_out=9 → [ok]\n"
    )
    assert [s["metrics"] for s in trajectory["steps"]] == [
        {"prompt_tokens": 10, "completion_tokens": 10},
        {"prompt_tokens": 5, "completion_tokens": 5},
    ]
    assert trajectory["final_metrics"]["total_prompt_tokens"] == 15


def test_usage_on_a_line_of_no_agent_step_counts_in_the_totals_only() -> None:
    trajectory, _ = export("th: hmm tokens_in=3 tokens_out=1\nu: x\na: y tokens_in=2 tokens_out=2\n")
    assert [s.get("metrics") for s in trajectory["steps"]] == [
        None,
        {"prompt_tokens": 2, "completion_tokens": 2},
    ]
    assert trajectory["final_metrics"]["total_prompt_tokens"] == 5
    assert trajectory["final_metrics"]["total_completion_tokens"] == 3


def test_a_call_that_starts_a_new_response_opens_a_new_step() -> None:
    trajectory, _ = export(
        "a: look tokens_in=1 tokens_out=1\nt:a → [1] tokens_in=1 tokens_out=2\n"
        "t:b tokens_in=7 tokens_out=3 → [2]\nt:c → [3]\n"
    )
    first, second = trajectory["steps"]
    assert [c["function_name"] for c in first["tool_calls"]] == ["a"]
    assert [c["function_name"] for c in second["tool_calls"]] == ["b", "c"]
    assert second["message"] == ""
    # The first response's lines share tokens_in: it gave its largest tokens_out.
    assert [s["metrics"] for s in trajectory["steps"]] == [
        {"prompt_tokens": 1, "completion_tokens": 2},
        {"prompt_tokens": 7, "completion_tokens": 3},
    ]


def test_a_response_that_starts_on_a_call_of_an_agent_step_without_one_stays_in_it() -> None:
    trajectory, _ = export("a: look\nt:a tokens_in=4 tokens_out=2 → [1]\n")
    (step,) = trajectory["steps"]
    assert step["metrics"] == {"prompt_tokens": 4, "completion_tokens": 2}


# -- # metrics ---------------------------------------------------------------------------------


def test_a_metrics_comment_goes_to_the_agent_step_of_its_step_number() -> None:
    trajectory, result = export(
        "u: hi step=1\na: x step=2\na: y step=3\n"
        "# metrics step=2 prompt_tokens=$4 cost=$0.5 tokens_out=1e400 odd=[1,2] cached=7 completion=3\n"
        "# metrics step=2 prompt_tokens=5\n# metrics step=1 prompt_tokens=6\n"
        "# metrics step=9 prompt_tokens=6\n"
        "# metrics prompt_tokens=6\n"
    )
    user, agent, other = trajectory["steps"]
    assert agent["metrics"] == {
        "prompt_tokens": 4,
        "cost_usd": 0.5,
        "cached_tokens": 7,
        "completion_tokens": 3,
        "extra": {"tokens_out": "1e400", "odd": ["1", "2"]},
    }
    assert "metrics" not in user and "metrics" not in other
    found = rows(result)
    assert found[("kept", "# metrics step=N lines (→ that step's metrics)")] == (FIRST + 3,)
    refused = found[("extra", "# metrics lines with no agent step to go to")]
    assert refused == (FIRST + 4, FIRST + 5, FIRST + 6, FIRST + 7)


def test_a_metrics_comment_keeps_the_first_value_of_a_name_and_the_others_in_extra() -> None:
    trajectory, _ = export("a: x step=1\n# metrics step=1 prompt_tokens=4 prompt=5 cost=abc\n")
    assert trajectory["steps"][0]["metrics"] == {"prompt_tokens": 4, "extra": {"prompt": "5", "cost": "abc"}}


def test_a_step_number_reaches_the_step_a_call_opened() -> None:
    trajectory, _ = export("u: hi\nt:read step=4 → [ok]\n# metrics step=4 completion_tokens=2\n")
    assert trajectory["steps"][1]["metrics"] == {"completion_tokens": 2}


def test_trailing_metrics_of_an_agent_line_and_of_its_call() -> None:
    trajectory, _ = export(
        "a: one # metrics prompt_tokens=3 cost_usd=0.25\nt:read → [ok] # metrics completion_tokens=2\n"
    )
    assert trajectory["steps"][0]["metrics"] == {"prompt_tokens": 3, "cost_usd": 0.25, "completion_tokens": 2}


def test_metrics_win_over_responses_once_any_is_stated() -> None:
    trajectory, _ = export(
        "a: one tokens_in=9 tokens_out=9\na: two step=2\n# metrics step=2 prompt_tokens=1\n"
    )
    assert [s.get("metrics") for s in trajectory["steps"]] == [None, {"prompt_tokens": 1}]


def test_a_step_that_takes_no_metrics_refuses_them() -> None:
    trajectory, result = export(
        "a: x step=2\n  +llm_call_count 0\n# metrics step=2 prompt_tokens=4\n", IMPORTED
    )
    assert "metrics" not in trajectory["steps"][0]
    assert trajectory["steps"][0]["llm_call_count"] == 0
    assert rows(result)[("extra", "metrics of a step that takes none")] == (FIRST_IMPORTED + 2,)


def test_metrics_attachments_are_kept() -> None:
    trajectory, _ = export(
        "a: x step=1\n# metrics step=1 prompt_tokens=1\n  +logprobs [-0.5]\n  +completion_token_ids [3]\n"
        '  +prompt_token_ids [1, 2]\n  +extra {"k": 1}\n',
        IMPORTED,
    )
    assert trajectory["steps"][0]["metrics"] == {
        "prompt_tokens": 1,
        "logprobs": [-0.5],
        "completion_token_ids": [3],
        "prompt_token_ids": [1, 2],
        "extra": {"k": 1},
    }


@pytest.mark.parametrize(
    ("text", "real", "number"),
    [
        ("12", False, 12),
        ("1.5", True, 1.5),
        ("1.5", False, None),
        ("1e400", True, None),
        ("nan", True, None),
        ("inf", True, None),
        ("x", True, None),
        ("9" * 5000, False, None),
    ],
)
def test_json_number_gives_only_finite_json_numbers(text: str, real: bool, number: Any) -> None:
    from bbox_lark.convert.atif.writer import json_number

    assert json_number(text, real) == number


# -- an imported trajectory (not native) -------------------------------------------------------


def test_an_imported_documents_blank_and_stray_lines_are_dropped_with_their_lines() -> None:
    trajectory, result = export("  lost\n\nu: hi\n  | line two\n", IMPORTED)
    (user,) = trajectory["steps"]
    assert user["message"] == "hi\nline two"
    assert "extra" not in user
    found = rows(result)
    assert found[("dropped", "continuation lines")] == (FIRST_IMPORTED,)
    assert found[("dropped", "blank lines")] == (FIRST_IMPORTED + 1,)


def test_an_imported_documents_root_and_system_comments_and_attachments() -> None:
    trajectory, result = export(
        '# atif root\n  +notes "n1"\n# atif system\n  | sys prompt\n  +timestamp "2025-01-01T00:00:00Z"\n'
        '  +extra {"k": 1}\n  +odd 5\n  +step_id 9\nu: hi\n  | two\n  +message "whole"\n'
        '# cost=1 tokens=2\n# other\na: x\n  +model_name "mm"\n  +reasoning_effort "high"\n',
        IMPORTED,
    )
    assert trajectory["notes"] == "n1"
    system, user, agent = trajectory["steps"]
    assert system == {
        "step_id": 1,
        "source": "system",
        "message": "sys prompt",
        "timestamp": "2025-01-01T00:00:00Z",
        "extra": {"k": 1, "bbox": {"attachments": {"odd": 5}}},
    }
    assert user["message"] == "whole"
    # An imported document numbers its events only (continuation lines travel with them).
    assert lines_of(user) == [{"n": 5, "kind": "comment", "text": "other"}]
    assert (agent["model_name"], agent["reasoning_effort"]) == ("mm", "high")
    found = rows(result)
    assert found[("kept", "# atif system lines (→ system steps)")] == (FIRST_IMPORTED + 2,)
    assert found[("kept", "the closing summary (→ final_metrics)")] == (FIRST_IMPORTED + 11,)
    assert found[("extra", "comment lines")] == (FIRST_IMPORTED + 12,)
    assert found[("synthesized", "step_ids")] == (FIRST_IMPORTED + 2, FIRST_IMPORTED + 8, FIRST_IMPORTED + 13)


@pytest.mark.parametrize("key", ["message", "text"])
def test_an_imported_system_steps_message_may_be_an_attachment(key: str) -> None:
    trajectory, _ = export(f'# atif system\n  | plain\n  +{key} "attached"\n', IMPORTED)
    assert trajectory["steps"][0]["message"] == "attached"


def test_an_imported_thinking_lines_text_may_be_an_attachment() -> None:
    trajectory, _ = export('th: cut\n  +text "whole thought"\na: x\n', IMPORTED)
    assert trajectory["steps"][0]["reasoning_content"] == "whole thought"


def test_reasoning_taken_by_a_step_is_not_given_again() -> None:
    trajectory, _ = export("th: one\na: x\nth: two\na: y\na: z\n")
    assert [s.get("reasoning_content") for s in trajectory["steps"]] == ["one", "two", None]


def test_an_imported_system_comment_without_text_has_an_empty_message() -> None:
    trajectory, result = export("# atif system\n# atif other\nu: hi\n", IMPORTED)
    assert trajectory["steps"][0] == {
        "step_id": 1,
        "source": "system",
        "message": "",
        "extra": {"bbox": {"lines": [{"n": 2, "kind": "comment", "text": "atif other"}]}},
    }
    assert rows(result)[("extra", "comment lines")] == (FIRST_IMPORTED + 1,)


def test_an_imported_call_keeps_its_attached_id_name_and_arguments() -> None:
    trajectory, result = export(
        'a: go\nt:x → [ok]\n  +tool_call_id "call-9"\n  +function_name "real"\n  +arguments {"q": 1}\n'
        '  +extra {"e": 2}\nt:y id=call-9 → [ok]\n',
        IMPORTED,
    )
    first, second = trajectory["steps"][0]["tool_calls"]
    assert first == {
        "tool_call_id": "call-9",
        "function_name": "real",
        "arguments": {"q": 1},
        "extra": {"e": 2},
    }
    assert second["tool_call_id"] == "call-9~2" and second["extra"] == {"id": "call-9"}
    assert rows(result)[("synthesized", "unique tool_call_ids (an id reused while a call was open)")] == (
        FIRST_IMPORTED + 6,
    )


def test_a_stray_continuation_line_first_is_recorded_in_the_first_step() -> None:
    trajectory, result = export("  stray\nu: two  spaces\n")
    (user,) = trajectory["steps"]
    # Without fields to cut out, the text is as written.
    assert user["message"] == "two  spaces"
    assert lines_of(user) == [
        {"n": 1, "kind": "continuation", "text": "stray"},
        {"n": 2, "kind": "user", "text": "two  spaces"},
    ]
    assert rows(result)[("extra", "continuation lines")] == (FIRST,)


def test_a_response_over_two_agent_steps_is_counted_in_its_first() -> None:
    trajectory, _ = export("a: one tokens_in=1 tokens_out=1\na: two tokens_in=1 tokens_out=5\n")
    assert [s.get("metrics") for s in trajectory["steps"]] == [
        {"prompt_tokens": 1, "completion_tokens": 5},
        None,
    ]


def test_results_without_text_or_with_continuation_text_only() -> None:
    trajectory, _ = export("a: x\nt!:run id=A\no: id=A\no: id=A\n  only more\nt:q id=B → \n  cont\n")
    assert results(trajectory["steps"][0]) == [
        {"source_call_id": "A", "content": ""},
        {"source_call_id": "A", "content": "only more"},
        {"source_call_id": "B", "content": "cont"},
    ]


def test_an_imported_document_keeps_an_id_used_again_in_another_step() -> None:
    """An imported trajectory's ids are its own: one used again in a later step is kept (a
    bbox document's is made unique); its result's attachments are taken as they are."""
    body = (
        "a: x\nt:a id=k → [1]\na: y\nt:b id=k → [2]\no: id=k → [3]\n"
        '  +content "c"\n  +subagent_trajectory_ref [{"trajectory_path": "p"}]\n  +extra {"e": 1}\n'
    )
    trajectory, _ = export(body, IMPORTED)
    first, second = trajectory["steps"]
    assert [c["tool_call_id"] for c in first["tool_calls"] + second["tool_calls"]] == ["k", "k"]
    assert results(second)[1] == {
        "source_call_id": "k",
        "content": "c",
        "subagent_trajectory_ref": [{"trajectory_path": "p"}],
        "extra": {"e": 1},
    }
    trajectory, _ = export(body)
    assert [c["tool_call_id"] for c in trajectory["steps"][1]["tool_calls"]] == ["k~2"]


def test_an_imported_steps_timestamp_and_extra_attachments() -> None:
    trajectory, _ = export(
        'u: hi ts=2025-01-02T10:00:00Z\n  +timestamp "2025-03-04T00:00:00Z"\n  +extra {"k": 1}\n'
        "u: again\n  +extra 5\n",
        IMPORTED,
    )
    first, second = trajectory["steps"]
    assert first["timestamp"] == "2025-03-04T00:00:00Z" and first["extra"] == {"k": 1}
    assert second["extra"] == {"bbox": {"attachments": {"extra": 5}}}


def test_an_imported_id_is_made_unique_only_against_the_ids_of_its_own_step() -> None:
    trajectory, _ = export(
        "a: x\nt:a id=k1 → [1]\nt:b id=k2 → [2]\na: y\nt:c id=k3 → [3]\nt:d id=k1 → [4]\n", IMPORTED
    )
    ids = [[c["tool_call_id"] for c in s["tool_calls"]] for s in trajectory["steps"]]
    assert ids == [["k1", "k2"], ["k3", "k1"]]


def test_an_attached_tool_calls_list_is_read_past_what_holds_no_id() -> None:
    body = (
        'a: x\n  +tool_calls ["odd", {"tool_call_id": 5}, {"tool_call_id": "k"}]\n'
        "t:a id=k → [1]\nt:b id=m → [1]\n"
    )
    # (The attached list is no valid ATIF: the output is read as JSON only.)
    trajectory = json.loads(convert(IMPORTED + body, "bbox", to="atif").text)
    calls = trajectory["steps"][0]["tool_calls"]
    assert calls[:3] == ["odd", {"tool_call_id": 5}, {"tool_call_id": "k"}]
    assert [c["tool_call_id"] for c in calls[3:]] == ["k~2", "m"]


def test_each_message_line_is_reported_kept_with_its_line() -> None:
    _, result = export("u: a\na: b\nu: c\na: d\n")
    found = rows(result)
    assert found[("kept", "user messages (u:)")] == (FIRST, FIRST + 2)
    assert found[("kept", "agent messages (a:)")] == (FIRST + 1, FIRST + 3)


def test_a_positional_list_is_an_argument_list() -> None:
    trajectory, _ = export('a: go\nt:run [a,b] "c" → [ok]\n')
    assert trajectory["steps"][0]["tool_calls"][0]["arguments"] == {"args": [["a", "b"], "c"]}


def test_trailing_metrics_of_a_step_that_takes_none_are_refused_with_their_line() -> None:
    trajectory, result = export("a: x # metrics prompt_tokens=1\n  +llm_call_count 0\n", IMPORTED)
    assert "metrics" not in trajectory["steps"][0]
    assert rows(result)[("extra", "metrics of a step that takes none")] == (FIRST_IMPORTED,)


def test_a_field_that_starts_the_text_is_cut_out_too() -> None:
    trajectory, _ = export("u: k=v rest  here\n")
    assert trajectory["steps"][0]["message"] == "rest here"


def test_a_thread_that_no_subagent_result_names_stays_in_the_steps() -> None:
    # Any name: "XXXX" is the one a mutant of the empty "no session" gives every result.
    trajectory, _ = export("a: x\nt:r → [ok]\nu: task tid=XXXX\na: work tid=XXXX\n")
    assert "subagent_trajectories" not in trajectory
    assert [s["message"] for s in trajectory["steps"]] == ["x", "task", "work"]


@pytest.mark.parametrize("kind", ["u", "a"])
def test_an_imported_messages_text_may_be_an_attachment(kind: str) -> None:
    trajectory, _ = export(f'{kind}: cut\n  | more\n  +text "whole"\n', IMPORTED)
    assert trajectory["steps"][0]["message"] == "whole"


def test_a_subagent_reference_names_only_a_session_that_is_a_word() -> None:
    trajectory, _ = export(
        "a: go\nx:one id=x1 → path=p1 session_id=\nx:two id=x2 → path=p2 session_id=[a,b]\n"
    )
    refs = [r["subagent_trajectory_ref"] for r in results(trajectory["steps"][0])]
    assert refs == [[{"trajectory_path": "p1"}], [{"trajectory_path": "p2"}]]


def test_a_document_without_a_header_or_usage_exports() -> None:
    trajectory, result = export("u: hi\na: there\n", header="")
    assert trajectory["agent"] == {"name": "unknown", "version": "unknown"}
    assert [s["message"] for s in trajectory["steps"]] == ["hi", "there"]
    assert "final_metrics" not in trajectory
    found = rows(result)
    assert found[("synthesized", "step_ids")] == (1, 2)
    assert ("kept", "usage on event lines (→ step metrics, each model response once)") not in found


def test_an_imported_agent_steps_attached_observation_is_kept() -> None:
    trajectory, _ = export('a: x\n  +observation {"results": [{"content": "seen"}]}\n', IMPORTED)
    assert trajectory["steps"][0]["observation"] == {"results": [{"content": "seen"}]}


def test_an_imported_documents_stray_lines_count_in_the_line_numbers_of_its_records() -> None:
    trajectory, _ = export("  a\n  b\n\n# c\nu: x\n", IMPORTED)
    assert lines_of(trajectory["steps"][0]) == [{"n": 4, "kind": "comment", "text": "c"}]


def test_a_comment_among_a_subagents_lines_leaves_its_step_in_the_thread() -> None:
    """A comment has no thread of its own: one a step takes (its ``# metrics``) or none does
    leaves the step of a subagent's lines in the subagent's trajectory."""
    trajectory, _ = export(
        "u: go\na: delegating\nx:explore id=x1 → session_id=T path=subs/T.json\n"
        "u: task tid=T\n# note\na: work tid=T step=5\n# metrics step=5 completion_tokens=2\na: back\n"
    )
    assert [s["message"] for s in trajectory["steps"]] == ["go", "delegating", "back"]
    embedded = trajectory["subagent_trajectories"][0]["steps"]
    assert [s["message"] for s in embedded] == ["task", "work"]
    assert embedded[1]["metrics"] == {"completion_tokens": 2}


def test_a_completion_is_recorded_in_the_step_of_its_start() -> None:
    trajectory, _ = export("a: one\nt!:run id=A → [running]\na: two\nt:run id=A → [ok]\n")
    first, second = trajectory["steps"]
    assert [r["n"] for r in lines_of(first)] == [1, 2, 4]
    assert [r["n"] for r in lines_of(second)] == [3]


def test_a_thinking_lines_usage_goes_to_the_step_of_the_agent_line_after_it() -> None:
    # A response whose only usage is on its th: line, and whose a: line states none: the
    # usage counted in final_metrics but in no step's metrics (the steps added up to less).
    text = (
        HEADER
        + "u: hi\nth: thinking tokens_in=100 tokens_out=20\na: done\n"
        + "u: more\na: again tokens_in=7 tokens_out=3\n"
    )
    trajectory = json.loads(convert(text, "bbox", to="atif").text)
    metrics = [step.get("metrics") for step in trajectory["steps"]]
    assert metrics == [
        None,
        {"prompt_tokens": 100, "completion_tokens": 20},
        None,
        {"prompt_tokens": 7, "completion_tokens": 3},
    ]
    final = trajectory["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (107, 23)
