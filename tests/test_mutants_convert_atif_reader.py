"""ATIF → bbox (``bbox_lark/convert/atif/reader.py``), pinned down where mutation testing found
nothing holding it: sniffing, the line of each step in the JSON text, the refusals and the skips
with their messages, the header and the ``# atif root`` attachments of a foreign trajectory,
each step's lines, fields and attachments, the closing summary of ``final_metrics``, and a
trajectory written from bbox rebuilt from its ``extra.bbox`` records (docs/testing.md,
"Mutation testing"). Fast: no ``atif`` package, no corpus."""

from __future__ import annotations

import json
from typing import Any

import pytest

import bbox_lark
from bbox_lark.convert import RefusedInputError, convert
from bbox_lark.convert.atif import sniff
from bbox_lark.numbers.stats import compute_stats

AGENT = {"name": "a", "version": "1"}


def trajectory(*steps: dict[str, Any], **root: Any) -> dict[str, Any]:
    return {"schema_version": "ATIF-v1.8", "session_id": "s", "agent": AGENT, **root, "steps": list(steps)}


def step(step_id: int, source: str = "agent", message: Any = "hi", **more: Any) -> dict[str, Any]:
    return {"step_id": step_id, "source": source, "message": message, **more}


def read(source: dict[str, Any] | str | bytes, **options: Any) -> Any:
    text = json.dumps(source, indent=2) if isinstance(source, dict) else source
    return convert(text, "atif", to="bbox", **options)


def head(result: Any) -> str:
    return result.text.split("---\n")[1]


def body(result: Any) -> str:
    return result.text.split("---\n", 2)[2]


def rows(result: Any) -> dict[tuple[str, str], tuple[tuple[int, ...], int]]:
    """The reader's rows of the fidelity report: (fate, what) -> (lines, count)."""
    return {(e.action, e.what): (e.lines, e.count) for e in result.fidelity.entries if e.stage == "read"}


def skips(result: Any) -> list[tuple[int, str]]:
    return [(s.line, s.message) for s in result.skipped]


def line_of(text: str, needle: str, nth: int = 0) -> int:
    """The 1-based line of the ``nth`` occurrence of ``needle`` in ``text``."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    return text.count("\n", 0, at) + 1


# -- sniffing and loading -------------------------------------------------------------------


def test_sniff_reads_the_first_64_kib_only() -> None:
    key = '"schema_version": "ATIF'
    at_the_edge = "{" + " " * ((1 << 16) - 1 - len(key)) + key
    assert len(at_the_edge) == 1 << 16
    assert sniff(at_the_edge + '-v1.8"}') == 3
    assert sniff("{ " + at_the_edge[1:] + '-v1.8"}') == 0
    assert sniff('  {"agent": {},\n "schema_version" : "ATIF-v1.7"}') == 3
    assert sniff('{"schema_version": "v1"}') == 0


def test_a_byte_order_mark_is_read_past() -> None:
    text = json.dumps(trajectory(step(1, "user")))
    assert body(read(b"\xef\xbb\xbf" + text.encode())) == "u: step=1\n  | hi\n"


def test_bytes_that_are_no_utf8_are_refused_with_their_place() -> None:
    with pytest.raises(RefusedInputError) as caught:
        read(b'{"a": "\xff"}')
    assert str(caught.value) == "not UTF-8 (byte 7): not an ATIF trajectory"


def test_an_empty_file_is_refused_naming_a_trajectory() -> None:
    with pytest.raises(RefusedInputError) as caught:
        read(b"  \n")
    assert str(caught.value) == "empty file: an ATIF trajectory is a JSON object"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"schema_version": "ATIF-v1.8", "agent": {"name": "a"}, "steps": [], "x": 1},
            "not a valid ATIF trajectory: the document: unknown key 'x' (and 1 more)",
        ),
        (
            {"schema_version": "ATIF-v1.8", "agent": {}, "steps": [], "x": 1},
            "not a valid ATIF trajectory: the document: unknown key 'x' (and 2 more)",
        ),
    ],
)
def test_a_refusal_counts_the_other_problems(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RefusedInputError) as caught:
        read(data)
    assert str(caught.value) == message


# -- where a step is in the JSON text, and the steps skipped ---------------------------------


def test_skipped_steps_name_the_line_of_their_step_id() -> None:
    source = trajectory(step(1, "user"), step(2, "robot"), step(3), step(4, "robot"))
    text = json.dumps(source, indent=2)
    result = read(text)
    assert skips(result) == [
        (
            line_of(text, '"step_id": 2'),
            "steps[1] (step_id 2).source: 'robot' is not one of system, user, agent",
        ),
        (
            line_of(text, '"step_id": 4'),
            "steps[3] (step_id 4).source: 'robot' is not one of system, user, agent",
        ),
    ]
    assert rows(result)[("kept", "agent steps (as a:)")] == ((line_of(text, '"step_id": 3'),), 1)


def test_a_step_id_before_the_steps_is_not_taken_for_a_step() -> None:
    source = trajectory(step(1, "user"), step(2, "robot"))
    source = {"extra": {"step_id": 2}, **source}
    text = json.dumps(source, indent=2)
    assert text.index('"step_id": 2') < text.index('"steps"')
    assert skips(read(text))[0][0] == line_of(text, '"step_id": 2', nth=1)


def test_a_trajectory_on_one_line_puts_every_step_on_line_1() -> None:
    text = json.dumps(trajectory(step(1, "user"), step(2, "robot"), step(3, "robot")))
    assert [line for line, _ in skips(read(text))] == [1, 1]


def test_a_step_id_that_is_no_integer_has_no_line() -> None:
    text = json.dumps(trajectory(step(1, "user"), {**step(2), "step_id": "2"}), indent=2)
    (line, message), *_ = skips(read(text))
    assert line == 0
    assert message.startswith("steps[1]")


def test_a_step_id_of_the_first_step_before_the_steps_is_not_taken_for_it() -> None:
    text = json.dumps({"extra": {"step_id": 1}, **trajectory(step(1, "robot"))}, indent=2)
    assert [line for line, _ in skips(read(text))] == [line_of(text, '"step_id": 1', nth=1)]


def test_a_steps_key_after_the_steps_is_not_where_they_start() -> None:
    text = json.dumps({**trajectory(step(1, "user"), step(2, "robot")), "extra": {"steps": 0}}, indent=2)
    assert text.index('"extra"') > text.index('"step_id": 2')
    assert [line for line, _ in skips(read(text))] == [line_of(text, '"step_id": 2')]


def test_lines_are_counted_from_the_first_character() -> None:
    text = "\n" + json.dumps(trajectory(step(1, "user"), step(2, "robot")), indent=2)
    assert [line for line, _ in skips(read(text))] == [line_of(text, '"step_id": 2')]


def test_a_step_that_is_no_object_is_skipped_without_a_line() -> None:
    text = json.dumps(trajectory(1, step(2, "robot")), indent=2)  # type: ignore[arg-type]
    assert skips(read(text)) == [
        (0, "steps[0]: must be an object"),
        (
            line_of(text, '"step_id": 2'),
            "steps[1] (step_id 2).source: 'robot' is not one of system, user, agent",
        ),
    ]


def test_a_step_id_written_with_an_escape_has_no_line() -> None:
    # The JSON reads "step\u005fid" as step_id; the line finder looks for the plain key only.
    source = trajectory(step(1, "user"), {"step@id": 1, "source": "user", "message": "x"}, step(3, "robot"))
    text = json.dumps(source, indent=2).replace('"step@id"', '"step\\u005fid"')
    text = text.replace('"step_id": 3', '"step\\u005fid": 3')
    assert skips(read(text)) == [
        (0, "steps[1] (step_id 1): step_id is not sequential (expected 2); converted, numbered 2"),
        (0, "steps[2] (step_id 3).source: 'robot' is not one of system, user, agent"),
    ]


def test_a_step_with_several_problems_lists_them_all() -> None:
    text = json.dumps(trajectory(step(1, "robot", message=3)), indent=2)
    assert skips(read(text)) == [
        (
            line_of(text, '"step_id": 1'),
            "steps[0] (step_id 1).message: must be a string or a list of content parts;"
            " steps[0] (step_id 1).source: 'robot' is not one of system, user, agent",
        )
    ]


def test_a_repeated_step_id_is_renumbered_and_each_step_counted() -> None:
    # The message says "numbered 2": the bbox says so too, and the second step's metrics
    # count (with step=1 twice, the numbers took the first step's metrics only).
    metrics = {"prompt_tokens": 10, "cost_usd": 0.5}
    text = json.dumps(trajectory(step(1, metrics=metrics), step(1, metrics=metrics)), indent=2)
    result = read(text)
    assert skips(result) == [
        (
            line_of(text, '"step_id": 1', nth=1),
            "steps[1] (step_id 1): step_id is not sequential (expected 2); converted, numbered 2",
        )
    ]
    assert body(result).count("step=2") == 2
    stats = compute_stats(bbox_lark.parse(result.text)).to_json()
    assert (stats["usage"]["tokens_in"], stats["cost_usd"]) == (20, 1.0)


def test_a_step_id_out_of_order_is_converted_with_its_place() -> None:
    result = read(trajectory(step(1, "user"), step(5), step(3, reasoning_content="r")))
    assert [m for _, m in skips(result)] == [
        "steps[1] (step_id 5): step_id is not sequential (expected 2); converted, numbered 2"
    ]
    assert body(result) == "u: step=1\n  | hi\na: step=2\n  | hi\nth: step=3\n  | r\na: step=3\n  | hi\n"


# -- a foreign trajectory: the header and # atif root ---------------------------------------


def test_the_header_takes_what_it_can_hold() -> None:
    source = trajectory(
        step(1, "user"), agent={"name": "bot", "version": "2", "model_name": "m1"}, trajectory_id="t1"
    )
    result = read(source, repo_sha="215db51")
    assert head(result) == (
        "format: bbox/1\nid: s\nrepo_sha: 215db51\nagent: bot\nversion: '2'\nmodel: m1\n"
        "atif: ATIF-v1.8\ntrajectory_id: t1\n"
    )
    assert body(result) == "u: step=1\n  | hi\n"
    assert skips(result) == []


def test_values_the_header_cannot_hold_go_to_the_root_comment() -> None:
    long = "x" * 201
    source = trajectory(
        step(1, "user"),
        agent={"name": "a b\n", "version": "", "model_name": long},
        trajectory_id=" t",
        session_id="s\n",
    )
    result = read(source)
    assert head(result).startswith("format: bbox/1\nid: imported-")
    assert head(result).endswith("repo_sha: unknown\natif: ATIF-v1.8\n")
    assert body(result) == (
        "# atif root\n"
        '  +agent_name "a b\\n"\n'
        '  +agent_version ""\n'
        f'  +model_name "{long}"\n'
        '  +trajectory_id " t"\n'
        '  +session_id "s\\n"\n'
        "u: step=1\n  | hi\n"
    )


def test_a_model_name_of_200_characters_is_a_header_value() -> None:
    name = "m" * 200
    result = read(trajectory(step(1, "user"), agent={**AGENT, "model_name": name}))
    assert f"\nmodel: {name}\n" in head(result)


def test_a_missing_model_and_trajectory_id_are_left_out() -> None:
    result = read(trajectory(step(1, "user")))
    assert (
        head(result) == "format: bbox/1\nid: s\nrepo_sha: unknown\nagent: a\nversion: '1'\natif: ATIF-v1.8\n"
    )
    assert body(result) == "u: step=1\n  | hi\n"


def test_the_root_objects_are_kept_in_order_and_reported() -> None:
    source = trajectory(
        step(1, "user"),
        agent={**AGENT, "tool_definitions": [{"name": "t"}], "extra": {"k": 1}},
        notes="n",
        continued_trajectory_ref="r",
        extra={"e": 2},
        subagent_trajectories=[{**trajectory(step(1, "user")), "trajectory_id": "t9"}],
    )
    result = read(source)
    assert body(result) == (
        "# atif root\n"
        '  +notes "n"\n'
        '  +continued_trajectory_ref "r"\n'
        '  +extra {"e": 2}\n'
        "  +subagent_trajectories "
        + json.dumps([{**trajectory(step(1, "user")), "trajectory_id": "t9"}])
        + "\n"
        '  +agent_tool_definitions [{"name": "t"}]\n'
        '  +agent_extra {"k": 1}\n'
        "u: step=1\n  | hi\n"
    )
    found = rows(result)
    for what in (
        "trajectory notes (in # atif root)",
        "trajectory continued_trajectory_ref (in # atif root)",
        "trajectory extra (in # atif root)",
        "trajectory subagent_trajectories (in # atif root)",
        "agent tool_definitions (in # atif root)",
        "agent extra (in # atif root)",
    ):
        assert found[("kept", what)] == ((1,), 1)


def test_a_root_extra_without_a_header_is_a_foreign_trajectory() -> None:
    result = read(trajectory(step(1, "user"), extra={"bbox": {"lines": []}}))
    assert body(result) == '# atif root\n  +extra {"bbox": {"lines": []}}\nu: step=1\n  | hi\n'


# -- the closing summary of final_metrics ----------------------------------------------------


@pytest.mark.parametrize(
    ("final", "summary"),
    [
        (
            {
                "total_cost_usd": 1.5,
                "total_prompt_tokens": 100,
                "total_completion_tokens": 20,
                "total_cached_tokens": 7,
            },
            "# cost=1.5 prompt_tokens=100 completion_tokens=20 cached_tokens=7\n",
        ),
        ({"total_cost_usd": 2, "total_completion_tokens": 0}, "# cost=2 completion_tokens=0\n"),
        ({"total_cost_usd": 1.0, "total_prompt_tokens": 0}, "# cost=1.0 prompt_tokens=0\n"),
        (
            {"total_cost_usd": 1, "total_prompt_tokens": None, "total_cached_tokens": -1, "total_steps": 3},
            "# cost=1\n",
        ),
        ({"total_prompt_tokens": 5}, ""),
        ({"total_cost_usd": None, "total_prompt_tokens": 5}, ""),
        ({"total_cost_usd": -1, "total_prompt_tokens": 5}, ""),
        ({"total_cost_usd": -0.5}, ""),
    ],
)
def test_final_metrics_close_with_a_summary_when_they_state_a_cost(
    final: dict[str, Any], summary: str
) -> None:
    result = read(trajectory(step(1), final_metrics=final))
    assert (
        body(result)
        == "# atif root\n  +final_metrics " + json.dumps(final) + "\na: step=1\n  | hi\n" + summary
    )
    row = rows(result).get(("kept", "final_metrics totals (also as the closing # cost=… summary)"))
    assert row == (((1,), 1) if summary else None)


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN"])
def test_a_cost_that_is_no_finite_number_states_no_summary(number: str) -> None:
    text = json.dumps(trajectory(step(1), final_metrics={"total_cost_usd": 0, "total_prompt_tokens": 5}))
    text = text.replace('"total_cost_usd": 0', f'"total_cost_usd": {number}')
    assert body(read(text)).endswith("\na: step=1\n  | hi\n")


# -- each step's lines ------------------------------------------------------------------------


def test_a_system_step_is_a_comment_with_its_values_attached() -> None:
    stamp = "2025-01-01T00:00:00Z"
    source = trajectory(
        step(1, "system", "sys\nmore", timestamp=stamp, extra={"e": 1}), step(2, "system", "")
    )
    text = json.dumps(source, indent=2)
    lines = (line_of(text, '"step_id": 1'), line_of(text, '"step_id": 2'))
    result = read(text)
    assert body(result) == (
        f'# atif system\n  | sys\n  | more\n  +timestamp "{stamp}"\n  +extra {{"e": 1}}\n# atif system\n'
    )
    assert rows(result)[("kept", "system steps (as # atif system)")] == ((lines[0], lines[1]), 2)


def test_a_step_takes_its_time_and_model_as_fields() -> None:
    source = trajectory(
        step(1, "user", "q", timestamp="2025-01-01T00:00:00Z"),
        step(2, "agent", "r", timestamp="2025-01-01T00:00:01Z", model_name="m"),
    )
    assert body(read(source)) == (
        "u: step=1 ts=2025-01-01T00:00:00Z\n  | q\na: step=2 ts=2025-01-01T00:00:01Z model=m\n  | r\n"
    )


def test_a_time_or_model_that_is_no_field_value_is_attached() -> None:
    source = trajectory(
        step(1, "agent", "q", timestamp="2025-01-01", model_name=""),
        step(2, "agent", "r", timestamp="2025-01-01T00:00:00Z", model_name="a\nb"),
        step(3, "system", "s", timestamp="2025-01-02 00:00:00Z"),
    )
    assert body(read(source)) == (
        'a: step=1\n  | q\n  +timestamp "2025-01-01"\n  +model_name ""\n'
        'a: step=2 ts=2025-01-01T00:00:00Z\n  | r\n  +model_name "a\\nb"\n'
        '# atif system\n  | s\n  +timestamp "2025-01-02 00:00:00Z"\n'
    )


def test_a_model_name_of_201_characters_is_attached() -> None:
    name = "m" * 201
    assert body(read(trajectory(step(1, model_name=name)))) == f'a: step=1\n  | hi\n  +model_name "{name}"\n'


def test_step_values_bbox_has_no_field_for_are_attached_in_order() -> None:
    source = trajectory(
        step(
            1,
            extra={"e": 1},
            is_copied_context=True,
            llm_call_count=2,
            reasoning_effort="high",
            tool_calls=[],
            observation={"results": []},
        )
    )
    assert body(read(source)) == (
        "a: step=1\n  | hi\n"
        '  +reasoning_effort "high"\n'
        "  +llm_call_count 2\n"
        "  +is_copied_context true\n"
        '  +extra {"e": 1}\n'
        "  +tool_calls []\n"
        '  +observation {"results": []}\n'
    )


def test_a_message_in_parts_is_attached_as_json() -> None:
    parts = [{"type": "text", "text": "hi"}]
    assert (
        body(read(trajectory(step(1, "user", parts)))) == "u: step=1\n  +message " + json.dumps(parts) + "\n"
    )


def test_a_message_or_result_a_text_line_cannot_hold_is_attached_under_its_key() -> None:
    results = [{"source_call_id": "c1", "content": "ring\x07"}]
    source = trajectory(
        step(1, "agent", "bell\x07", tool_calls=[call("c1")], observation={"results": results})
    )
    assert body(read(source)) == (
        'a: step=1\n  +message "bell\\u0007"\nt:read id=c1\no: id=c1 →\n  +content "ring\\u0007"\n'
    )


def test_an_agent_step_with_reasoning_is_two_lines_and_reported() -> None:
    source = trajectory(step(1, "user"), step(2, reasoning_content="think\n\nmore", model_name="m"))
    text = json.dumps(source, indent=2)
    result = read(text)
    assert (
        body(result) == "u: step=1\n  | hi\nth: step=2\n  | think\n  |\n  | more\na: step=2 model=m\n  | hi\n"
    )
    line = line_of(text, '"step_id": 2')
    found = rows(result)
    assert found[("kept", "reasoning_content (as th:)")] == ((line,), 1)
    assert found[("kept", "agent steps (as a:)")] == ((line,), 1)
    assert found[("kept", "user steps (as u:)")] == ((line_of(text, '"step_id": 1'),), 1)


# -- tool calls and their results -------------------------------------------------------------


def call(call_id: str, name: str = "read", arguments: Any = None, **more: Any) -> dict[str, Any]:
    return {"tool_call_id": call_id, "function_name": name, "arguments": arguments or {}, **more}


def test_a_call_s_arguments_are_fields_when_each_can_be_one() -> None:
    source = trajectory(step(1, tool_calls=[call("c1", arguments={"path": "a.rs", "x.y-z": "2"})]))
    assert body(read(source)) == "a: step=1\n  | hi\nt:read id=c1 path=a.rs x.y-z=2\n"


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "a", "n": 3},
        {"a b": "x"},
        {"9a": "x"},
        {"args": "x"},
        {"id": "x"},
        {"step": "2"},
        {"ts": "x"},
        {"path": "a\nb"},
        {"path": "p" * 201},
    ],
)
def test_arguments_that_are_no_fields_are_attached_whole(arguments: dict[str, Any]) -> None:
    source = trajectory(step(1, tool_calls=[call("c1", arguments=arguments)]))
    assert (
        body(read(source)) == "a: step=1\n  | hi\nt:read id=c1\n  +arguments " + json.dumps(arguments) + "\n"
    )


def test_an_argument_of_200_characters_is_a_field() -> None:
    value = "p" * 200
    source = trajectory(step(1, tool_calls=[call("c1", arguments={"path": value})]))
    assert body(read(source)) == f"a: step=1\n  | hi\nt:read id=c1 path={value}\n"


def test_a_call_id_that_is_no_field_value_is_attached() -> None:
    source = trajectory(step(1, tool_calls=[call("c\n1", extra={"q": 1})]))
    assert body(read(source)) == 'a: step=1\n  | hi\nt:read\n  +tool_call_id "c\\n1"\n  +extra {"q": 1}\n'


def test_a_call_s_id_and_arguments_are_both_attached_when_neither_is_a_field() -> None:
    source = trajectory(step(1, tool_calls=[call("c\n1", arguments={"n": 3})]))
    assert body(read(source)) == 'a: step=1\n  | hi\nt:read\n  +tool_call_id "c\\n1"\n  +arguments {"n": 3}\n'


def test_a_tool_name_that_is_no_bbox_name_is_attached_and_reported() -> None:
    source = trajectory(step(1, tool_calls=[call("c1", "do it", {"k": "v"}), call("c2", "ok")]))
    text = json.dumps(source, indent=2)
    result = read(text)
    assert body(result) == 'a: step=1\n  | hi\nt:tool id=c1 k=v\n  +function_name "do it"\nt:ok id=c2\n'
    line = line_of(text, '"step_id": 1')
    found = rows(result)
    assert found[("extra", "tool names that are no bbox name (in +function_name)")] == ((line,), 1)
    assert found[("kept", "tool calls (as t:)")] == ((line, line), 2)


def test_results_are_observations_with_their_values() -> None:
    results = [
        {
            "source_call_id": "c1",
            "content": "out\nmore",
            "extra": {"e": 1},
            "subagent_trajectory_ref": [{"trajectory_id": "t"}],
        },
        {"source_call_id": "c2", "content": None},
        {"source_call_id": "c3", "content": [{"type": "text", "text": "x"}]},
        {"content": ""},
    ]
    source = trajectory(
        step(1, tool_calls=[call("c1"), call("c2"), call("c3")], observation={"results": results})
    )
    text = json.dumps(source, indent=2)
    result = read(text)
    assert skips(result) == []
    assert body(result) == (
        "a: step=1\n  | hi\nt:read id=c1\nt:read id=c2\nt:read id=c3\n"
        "o: id=c1 →\n  | out\n  | more\n"
        '  +subagent_trajectory_ref [{"trajectory_id": "t"}]\n'
        '  +extra {"e": 1}\n'
        "o: id=c2 →\n  +content null\n"
        'o: id=c3 →\n  +content [{"type": "text", "text": "x"}]\n'
        "o: →\n"
    )
    assert rows(result)[("kept", "observation results (as o:)")] == ((line_of(text, '"step_id": 1'),) * 4, 4)


def test_a_result_s_call_id_that_is_no_field_value_is_attached_first() -> None:
    results = [{"source_call_id": "c\n1", "content": "x"}, {"source_call_id": "", "content": "y"}]
    source = trajectory(step(1, tool_calls=[call("c\n1"), call("")], observation={"results": results}))
    out = body(read(source))
    assert '\no: →\n  +source_call_id "c\\n1"\n  | x\n' in out
    assert '\no: →\n  +source_call_id ""\n  | y\n' in out


# -- # metrics ------------------------------------------------------------------------------


def test_step_metrics_are_a_metrics_comment() -> None:
    metrics = {
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "cached_tokens": 4,
        "cost_usd": 0.25,
        "logprobs": [0.5],
        "extra": None,
        "prompt_token_ids": [1, 2],
    }
    text = json.dumps(trajectory(step(1, metrics=metrics), step(2, metrics={"cost_usd": 1})), indent=2)
    result = read(text)
    assert body(result) == (
        "a: step=1\n  | hi\n"
        "# metrics step=1 prompt_tokens=10 completion_tokens=2 cached_tokens=4 cost_usd=0.25\n"
        "  +logprobs [0.5]\n  +prompt_token_ids [1, 2]\n"
        "a: step=2\n  | hi\n# metrics step=2 cost_usd=1\n"
    )
    lines = (line_of(text, '"step_id": 1'), line_of(text, '"step_id": 2'))
    assert rows(result)[("kept", "step metrics (as # metrics)")] == (lines, 2)


def test_metrics_with_no_number_are_a_bare_metrics_comment() -> None:
    result = read(trajectory(step(1, metrics={})))
    assert body(result) == "a: step=1\n  | hi\n# metrics step=1\n"


# -- a trajectory written from bbox, rebuilt from extra.bbox -----------------------------------

BBOX = (
    "---\nformat: bbox/1\nid: s1\nrepo_sha: 215db51\nk:\n---\n"
    "@phase design\nu: hi step=1\n# a note\na: ok step=2\n"
)


def exported() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(convert(BBOX, "bbox", to="atif").text)
    return data


def test_a_trajectory_from_bbox_comes_back_as_it_was() -> None:
    data = exported()
    assert data["extra"]["bbox"]["null"] == ["k"]
    text = json.dumps(data, indent=2)
    result = read(text)
    assert result.text == BBOX
    assert skips(result) == []
    found = rows(result)
    first, second = line_of(text, '"step_id": 1'), line_of(text, '"step_id": 2')
    assert found[("kept", "lifecycle lines (from extra.bbox records)")] == ((first,), 1)
    assert found[("kept", "user lines (from extra.bbox records)")] == ((first,), 1)
    assert found[("kept", "comment lines (from extra.bbox records)")] == ((first,), 1)
    assert found[("kept", "agent lines (from extra.bbox records)")] == ((second,), 1)


def test_records_come_back_in_their_order_whatever_step_holds_them() -> None:
    data = exported()
    first, second = data["steps"]
    first["extra"]["bbox"]["lines"], second["extra"]["bbox"]["lines"] = (
        second["extra"]["bbox"]["lines"],
        first["extra"]["bbox"]["lines"],
    )
    assert read(data).text == BBOX


def test_a_header_without_nulls_comes_back() -> None:
    data = exported()
    del data["extra"]["bbox"]["null"]
    assert read(data).text == BBOX.replace("k:\n", "k: ''\n")


@pytest.mark.parametrize(
    ("header", "nulls", "problem"),
    [
        ([], None, "`header` must be an object, got an array"),
        ({"format": "bbox/1"}, "k", "`null` must be an array, got a string"),
        ({"format": "bbox/1"}, ["k", 2], "`null[1]` must be a string, got a number"),
    ],
)
def test_a_header_of_the_wrong_shape_is_written_anew(header: Any, nulls: Any, problem: str) -> None:
    data = exported()
    data["extra"]["bbox"] = {"header": header, "null": nulls}
    result = read(data)
    assert skips(result) == [(1, f"extra.bbox.header: {problem}; a header was written for it")]
    assert head(result) == "format: bbox/1\nid: s1\nrepo_sha: unknown\n"
    assert body(result) == BBOX.split("---\n", 2)[2]


def test_a_header_one_level_too_deep_is_written_anew() -> None:
    from bbox_lark.syntax.header import MAX_HEADER_DEPTH

    def nested(depth: int) -> Any:
        value: Any = []
        for _ in range(depth - 1):
            value = [value]
        return value

    data = exported()
    data["extra"]["bbox"]["header"]["k"] = nested(MAX_HEADER_DEPTH - 2)
    assert skips(read(data)) == []
    data["extra"]["bbox"]["header"]["k"] = nested(MAX_HEADER_DEPTH - 1)
    assert skips(read(data)) == [
        (
            1,
            f"extra.bbox.header: the header nests more than {MAX_HEADER_DEPTH - 1} levels deep;"
            " a header was written for it",
        )
    ]


def test_an_empty_header_is_written_anew_without_a_skip() -> None:
    data = exported()
    data["extra"]["bbox"] = {"header": {}}
    result = read(data, repo_sha="abcdef1")
    assert skips(result) == []
    assert head(result) == "format: bbox/1\nid: s1\nrepo_sha: abcdef1\n"


@pytest.mark.parametrize("session", ["a\nb", " a", "", None, "x" * 1025])
def test_a_session_id_the_header_cannot_hold_is_replaced(session: Any) -> None:
    data = exported()
    data["extra"]["bbox"] = {"header": {}}
    if session is None:
        del data["session_id"]
    else:
        data["session_id"] = session
    result = read(data)
    assert head(result).startswith("format: bbox/1\nid: imported-")
    assert "notes: header" not in result.text


def test_lines_that_are_no_array_are_skipped_with_their_step() -> None:
    data = exported()
    data["steps"][1]["extra"]["bbox"]["lines"] = {"n": 4}
    text = json.dumps(data, indent=2)
    result = read(text)
    assert skips(result) == [
        (line_of(text, '"step_id": 2'), "step 2: `extra.bbox.lines` must be an array, got an object")
    ]
    assert body(result) == "@phase design\nu: hi step=1\n# a note\n"


def test_the_steps_after_lines_that_are_no_array_come_back() -> None:
    data = exported()
    data["steps"][0]["extra"]["bbox"]["lines"] = "x"
    result = read(data)
    assert [m for _, m in skips(result)] == ["step 1: `extra.bbox.lines` must be an array, got a string"]
    assert body(result) == "a: ok step=2\n"


def test_records_with_the_same_number_come_back_in_their_order() -> None:
    data = exported()
    data["steps"][1]["extra"]["bbox"]["lines"] += [{"n": 4, "kind": "agent", "text": "again"}]
    result = read(data)
    assert skips(result) == []
    assert body(result) == "@phase design\nu: hi step=1\n# a note\na: ok step=2\na: again\n"


def test_a_step_with_no_records_or_a_foreign_extra_adds_nothing() -> None:
    data = exported()
    data["steps"][1]["extra"] = {"bbox": {}}
    result = read(data)
    assert (body(result), skips(result)) == ("@phase design\nu: hi step=1\n# a note\n", [])
    data["steps"][1]["extra"] = {"other": 1}
    assert body(read(data)) == "@phase design\nu: hi step=1\n# a note\n"
    del data["steps"][1]["extra"]
    assert body(read(data)) == "@phase design\nu: hi step=1\n# a note\n"


@pytest.mark.parametrize(
    "record", [{"kind": "agent", "text": "x"}, {"n": "4", "kind": "agent"}, {"n": True}, 7]
)
def test_a_record_without_its_number_is_skipped(record: Any) -> None:
    data = exported()
    data["steps"][1]["extra"]["bbox"]["lines"] = [record]
    text = json.dumps(data, indent=2)
    result = read(text)
    assert skips(result) == [
        (line_of(text, '"step_id": 2'), "step 2: extra.bbox.lines: a record without its number")
    ]


def test_a_record_that_cannot_be_rebuilt_is_skipped_with_its_number() -> None:
    data = exported()
    data["steps"][1]["extra"]["bbox"]["lines"] = [
        {"n": 4, "kind": "blank", "raw": "x"},
        {"n": 5, "kind": "user", "text": "go"},
    ]
    text = json.dumps(data, indent=2)
    result = read(text)
    assert skips(result) == [
        (
            line_of(text, '"step_id": 2'),
            "extra.bbox record 4: cannot be rebuilt: a blank line holds only whitespace",
        )
    ]
    assert body(result) == "@phase design\nu: hi step=1\n# a note\nu: go\n"


def test_a_record_of_the_wrong_shape_is_skipped_with_its_line() -> None:
    data = exported()
    data["steps"][1]["extra"]["bbox"]["lines"] = [
        {"n": 4, "kind": "agent", "text": []},
        {"n": 5, "kind": "user", "text": "go"},
    ]
    text = json.dumps(data, indent=2)
    result = read(text)
    assert body(result) == "@phase design\nu: hi step=1\n# a note\nu: go\n"
    assert skips(result) == [
        (line_of(text, '"step_id": 2'), "extra.bbox record 4: `text` must be a string, got an array")
    ]
