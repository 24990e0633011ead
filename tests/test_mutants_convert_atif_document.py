"""The ATIF document a bbox log becomes (``bbox_lark/convert/atif/document.py``), pinned down
where its mutants showed no test looked: the embedded subagent trajectories' steps (their
line records left in the parent, their other ``extra`` kept, a subagent's own subagent
referenced by id), the session's ``final_metrics`` and the report's row for them, the
schema version asked for or read from the header, and the audio parts ``ATIF-v1.7`` turns
into text (docs/testing.md, "Mutation testing"). Every test goes through ``convert``."""

from __future__ import annotations

import json

from test_mutants_convert_atif_writer import HEADER, export, rows  # the writer's tests' helpers

from bbox_lark.convert import convert

IMPORTED = "---\nformat: bbox/1\nid: s1\nagent: a\nversion: 1\natif: ATIF-v1.8\n---\n"
DELEGATING = "u: go\na: delegating\nx:explore id=x1 → session_id=T path=subs/T.json\n"


# -- subagent trajectories --------------------------------------------------------------------


def test_an_embedded_trajectorys_steps_leave_their_line_records_in_the_parent() -> None:
    trajectory, _ = export(DELEGATING + "u: task tid=T ts=garbage\na: work tid=T\na: back\n")
    (embedded,) = trajectory["subagent_trajectories"]
    assert embedded["steps"] == [
        {"step_id": 1, "source": "user", "message": "task", "extra": {"bbox": {"ts": "garbage"}}},
        {"step_id": 2, "source": "agent", "message": "work"},
    ]
    parent = trajectory["steps"][1]
    assert [r["n"] for r in parent["extra"]["bbox"]["lines"]] == [2, 3, 4, 5]


def test_a_subagents_own_subagent_is_referenced_by_its_trajectory_id() -> None:
    trajectory, _ = export(
        DELEGATING + "u: task tid=T\na: work tid=T\n"
        "x:deeper id=x2 tid=T → session_id=U path=subs/U.json\nu: inner tid=U\na: back\n"
    )
    first, second = trajectory["subagent_trajectories"]
    assert (first["trajectory_id"], second["trajectory_id"]) == ("T", "U")
    (result,) = first["steps"][1]["observation"]["results"]
    assert result["subagent_trajectory_ref"] == [
        {"trajectory_path": "subs/U.json", "session_id": "U", "trajectory_id": "U"}
    ]
    assert second["steps"] == [{"step_id": 1, "source": "user", "message": "inner"}]
    assert [r["n"] for r in trajectory["steps"][1]["extra"]["bbox"]["lines"]] == [2, 3, 4, 5, 6, 7]


# -- final_metrics ----------------------------------------------------------------------------


def test_final_metrics_and_their_row_in_the_report() -> None:
    trajectory, result = export(
        "u: go\na: x tokens_in=10 tokens_out=5 tokens_cached=100\n@end cost_usd=0.25\n"
    )
    assert trajectory["final_metrics"] == {
        "total_prompt_tokens": 110,
        "total_completion_tokens": 5,
        "total_cached_tokens": 100,
        "total_cost_usd": 0.25,
        "total_steps": 2,
    }
    what = "final_metrics (the session's usage and stated cost, as stats counts them)"
    assert rows(result)[("synthesized", what)] == (0,)
    entry = next(e for e in result.fidelity.entries if e.what == what)
    assert entry.count == 1


def test_no_usage_and_no_cost_is_no_final_metrics_and_no_row() -> None:
    trajectory, result = export("u: go\na: x\n")
    assert "final_metrics" not in trajectory
    assert not any(what.startswith("final_metrics") for _, what in rows(result))


# -- the text written (convert/atif/__init__.py) ----------------------------------------------


def test_undecodable_bytes_are_escaped_and_reported_once() -> None:
    result = convert((HEADER + "u: café ").encode() + b"\xff\nu: b \xfe\n", "bbox", to="atif")
    assert '"message": "caf\\u00e9 \\udcff"' in result.text  # every non-ASCII character escaped
    assert '"message": "b \\udcfe"' in result.text and result.text.endswith("}\n")
    assert rows(result)[("extra", "undecodable bytes (as \\udcXX escapes)")] == (0,)
    assert not any("surrogate pairs" in what for _, what in rows(result))


def test_text_that_is_utf8_is_written_as_it_is() -> None:
    result = convert(HEADER + "u: café\n", "bbox", to="atif")
    assert '"message": "café"' in result.text and result.text.endswith("\n}\n")
    assert json.loads(result.text)["steps"][0]["message"] == "café"
    assert not any("undecodable" in what for _, what in rows(result))


# -- what the end of the stream adds, and the report's rows for it ------------------------------


def test_a_header_alone_is_one_system_step_reported_as_made() -> None:
    trajectory, result = export("")
    assert trajectory["steps"] == [{"step_id": 1, "source": "system", "message": ""}]
    assert rows(result) == {
        ("synthesized", "step_ids"): (0,),
        ("synthesized", "system steps (the document has no step)"): (0,),
        ("extra", "header keys (in extra.bbox.header)"): (1,),
    }


def test_thinking_that_no_step_followed_is_an_agent_step_reported_as_made() -> None:
    trajectory, result = export("u: go\nth: thinking\n")
    assert trajectory["steps"][1] == {
        "step_id": 2,
        "source": "agent",
        "message": "",
        "reasoning_content": "thinking",
    }
    found = rows(result)
    assert found[("synthesized", "step_ids")] == (7, 0)
    assert found[("synthesized", "agent steps (for th: lines no step followed)")] == (0,)
    assert ("synthesized", "system steps (the document has no step)") not in found


def test_usage_on_event_lines_is_reported_kept_and_skips_a_step_of_no_model_call() -> None:
    trajectory, result = export(
        "a: x tokens_in=5 tokens_out=2\n  +llm_call_count 0\n"
        "a: y tokens_in=6 tokens_out=3\n  +llm_call_count 1\n"
    )
    first, second = trajectory["steps"]
    assert "metrics" not in first and first["llm_call_count"] == 0
    assert second["metrics"] == {"prompt_tokens": 6, "completion_tokens": 3}
    assert rows(result)[("kept", "usage on event lines (→ step metrics, each model response once)")] == (0,)


def test_a_null_id_leaves_the_session_id_out_and_says_so() -> None:
    trajectory, result = export("u: x\n", "---\nformat: bbox/1\nid: null\nagent: a\nversion: 1\n---\n")
    assert "session_id" not in trajectory
    assert trajectory["extra"]["bbox"]["null"] == ["id"]
    what = "an empty or missing id: (session_id left out; optional since v1.7)"
    assert rows(result)[("dropped", what)] == (1,)
    entry = next(e for e in result.fidelity.entries if e.what == what)
    assert entry.count == 1


def test_an_imported_trajectory_without_a_session_id_comes_back_without_one() -> None:
    source = {
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "n", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
    }
    text = convert(json.dumps(source), "atif", to="bbox").text
    assert "+session_id null" in text
    back = json.loads(convert(text, "bbox", to="atif").text)
    assert back == source


def test_an_imported_trajectorys_ids_come_back() -> None:
    source = {
        "schema_version": "ATIF-v1.7",
        "session_id": "has space",
        "trajectory_id": "t 1",
        "agent": {"name": "n", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
    }
    back = json.loads(convert(convert(json.dumps(source), "atif", to="bbox").text, "bbox", to="atif").text)
    assert back == source


def test_a_subagents_steps_before_the_first_parent_step_leave_their_records_in_it() -> None:
    for before in (["u: task tid=T\n"], ["u: task tid=T\n", "a: work tid=T\n"]):
        trajectory, _ = export("".join(before) + "u: go\nx:explore id=x1 → session_id=T path=p\n")
        first = trajectory["steps"][0]
        assert first["message"] == "go"
        count = len(before)
        assert [r["n"] for r in first["extra"]["bbox"]["lines"]] == list(range(1, count + 2))
        assert len(trajectory["subagent_trajectories"][0]["steps"]) == count


def test_an_imported_trajectorys_values_no_header_can_hold_come_back_from_its_root() -> None:
    source = {
        "schema_version": "ATIF-v1.7",
        "session_id": "s\nt",
        "trajectory_id": "a\nb",
        "agent": {"name": "line\nbreak", "version": "v\n1", "model_name": "m\nx"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
    }
    text = convert(json.dumps(source), "atif", to="bbox").text
    assert '+agent_name "line\\nbreak"' in text and '+trajectory_id "a\\nb"' in text
    back = json.loads(convert(text, "bbox", to="atif").text)
    assert back == source


def test_the_agent_from_empty_header_values_and_from_none() -> None:
    header = "---\nformat: bbox/1\nid: s1\nagent: ''\nversion: ''\nclient_version: '2.0'\nmodel: ''\n---\n"
    trajectory, result = export("u: x\n", header)
    assert trajectory["agent"] == {"name": "", "version": "2.0"}  # an empty model is no model
    assert not any(what.startswith("agent ") for _, what in rows(result))
    trajectory, result = export("u: x\n", "---\nformat: bbox/1\nid: s1\n---\n")
    assert trajectory["agent"] == {"name": "unknown", "version": "unknown"}
    found = rows(result)
    assert found[("synthesized", "agent name (the header has no agent:)")] == (1,)
    assert found[("synthesized", "agent version (the header has no version:)")] == (1,)


def test_an_imported_trajectorys_continuation_and_subagents_come_back() -> None:
    sub = {
        "schema_version": "ATIF-v1.7",
        "trajectory_id": "sub",
        "agent": {"name": "n", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "inner"}],
    }
    source = {
        "schema_version": "ATIF-v1.7",
        "session_id": "s",
        "agent": {"name": "n", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
        "continued_trajectory_ref": "next.json",
        "subagent_trajectories": [sub],
    }
    back = json.loads(convert(convert(json.dumps(source), "atif", to="bbox").text, "bbox", to="atif").text)
    assert back == source


def test_the_header_keys_kept_are_counted_one_each() -> None:
    _, result = export("u: x\n")
    entry = next(e for e in result.fidelity.entries if e.what == "header keys (in extra.bbox.header)")
    assert (entry.lines, entry.count) == ((1,), 4)
