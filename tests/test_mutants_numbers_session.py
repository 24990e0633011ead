"""A session's numbers (``bbox_lark/numbers/session.py``), pinned down where mutation testing
found nothing holding them: a call's args summary, latency and end line, the model a comment
switches to, the stated cost's sources in order, the estimate's note, the steps a line counts
for, the tools table and the time span (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

import bbox_lark
from bbox_lark.numbers.session import (
    CallRecord,
    SessionCounter,
    SessionNumbers,
    SessionTotals,
    StepRecord,
    document_numbers,
    read_session,
)
from bbox_lark.numbers.usage import Totals, Usage
from bbox_lark.syntax.nodes import Event, Head
from bbox_lark.syntax.record import Record, iter_records

HEADER = "---\nformat: bbox/1\nid: s1\nrepo_sha: 215db51\n---\n"


def numbers(body: str, header: str = HEADER, estimate: bool = False) -> SessionNumbers:
    text = header + body
    parsed = document_numbers(bbox_lark.parse(text), estimate=estimate)
    assert read_session(text, estimate=estimate) == parsed  # the stream agrees, every time
    # So do the records (what ``stats`` feeds), and a counter keeping no call or step record
    # (``stats``' own): the same totals, but for the steps it does not count.
    assert _counted(text, estimate) == (list(parsed.calls), parsed.steps, parsed.totals)
    for options in ({"calls": False}, {"steps": False}, {"calls": False, "steps": False}):
        calls, steps, totals = _counted(text, estimate, **options)
        kept = options.get("steps", True)
        assert calls == ([] if "calls" in options else list(parsed.calls))
        assert steps == (parsed.steps if kept else ())
        assert totals == (parsed.totals if kept else replace(parsed.totals, steps=0))
    return parsed


def _counted(
    text: str, estimate: bool, **options: bool
) -> tuple[list[CallRecord], tuple[StepRecord, ...], SessionTotals]:
    """What a counter fed the records of ``text`` gives (``options``: ``calls``, ``steps``)."""
    items = iter(iter_records(text))
    head = next(items)
    assert isinstance(head, Head)
    header = dict(head.header_info.fields) if head.header_info is not None else {}
    counter = SessionCounter(header, estimate=estimate, **options)
    calls: list[CallRecord] = []
    for item in items:
        if isinstance(item, Event) or (isinstance(item, Record) and item.is_event):
            calls.extend(counter.feed(item))
    pending, steps, totals = counter.finish()
    return sorted(calls + pending, key=lambda call: call.start_line), steps, totals


# -- calls -------------------------------------------------------------------------------


def test_the_args_summary_is_cut_at_200_characters() -> None:
    calls = numbers(
        "t:read " + "a" * 250 + " → [ok]\n"
        "t:read " + "b" * 200 + " → [ok]\n"
        "t:read " + "c" * 201 + " → [ok]\n"
        't:grep [a, b] "x y" → 3\n'
        "t:grep → 3\n"
    ).calls
    assert [call.args for call in calls] == ["a" * 199 + "…", "b" * 200, "c" * 199 + "…", "[a, b] x y", ""]


@pytest.mark.parametrize(
    ("lines", "latency"),
    [
        (["t!:bash id=1 latency_ms=5", "o: id=1 → [ok] latency_ms=7"], 7),  # the completion's
        (["t!:bash id=1 latency_ms=5", "o: id=1 → [ok]"], 5),  # else the start's
        (["t:bash latency_ms=9 → [ok]"], 9),
        (["t:bash → [ok]"], None),
        (["t!:bash id=1 ts=2025-01-01T00:00:00Z", "o: id=1 → [ok] ts=2025-01-01T00:00:01.25Z"], 1250),
        (["t!:bash id=1 ts=2025-01-01T00:00:00Z", "o: id=1 → [ok] ts=2025-01-01T00:00:00Z"], 0),
        (["t!:bash id=1 ts=2025-01-01T00:00:01Z", "o: id=1 → [ok] ts=2025-01-01T00:00:00.5Z"], None),
        (["t!:bash id=1 ts=2025-01-01T00:00:00Z", "o: id=1 → [ok]"], None),
        (["t!:bash id=1", "o: id=1 → [ok] ts=2025-01-01T00:00:00Z"], None),
        (["t!:bash id=1 ts=2025-01-01T00:00:00Z", "o: id=1 → [ok] ts=yesterday"], None),
        (["t!:bash id=1 ts=2025-01-01T00:00:00Z"], None),  # pending
    ],
)
def test_a_calls_latency(lines: list[str], latency: int | None) -> None:
    (call,) = numbers("".join(line + "\n" for line in lines)).calls
    assert call.latency_ms == latency


def test_a_calls_end_line() -> None:
    calls = numbers("t!:bash id=1\no: id=1 → [ok]\nt:read a → [ok]\nt!:bash id=2\n").calls
    assert [(call.start_line, call.end_line) for call in calls] == [(6, 7), (8, 8), (9, None)]


def test_the_tools_table_names_an_unnamed_tool_and_counts_each_outcome() -> None:
    totals = numbers("t:read a → [ok]\nt:read b\nq: → [selected: a]\nt!:bash id=1\n").totals
    assert [(t.family, t.tool, t.calls, t.outcomes) for t in totals.tools] == [
        ("question", "(none)", 1, (1, 0, 0, 0, 0, 0)),
        ("tool", "bash", 1, (0, 0, 1, 0, 0, 0)),
        ("tool", "read", 2, (1, 0, 0, 0, 0, 1)),
    ]
    assert totals.tools[2].to_json() == {
        "calls": 2,
        "ok": 1,
        "error": 0,
        "pending": 0,
        "skipped": 0,
        "retry": 0,
        "unknown": 1,
    }
    assert [totals.outcome_count(o) for o in ("ok", "pending", "unknown", "error")] == [2, 1, 1, 0]


# -- models, costs, estimates ------------------------------------------------------------------


def test_the_model_a_comment_switches_to() -> None:
    totals = numbers(
        '# model: "m1" reason=plan\n'
        "a: x tokens_in=1\n"
        "# model: reason=x\n"  # names no model
        "u: next\n"
        "a: y tokens_in=2\n"
        "# model: ''\n"  # an empty name
        "u: next\n"
        "# note: m9\n"  # another comment
        "# modelx: m8\n"
        "a: z tokens_in=3\n"
        "# model: m2 other\n"
        "u: next\n"
        "a: w tokens_in=4\n"
    ).totals
    assert totals.models == ("m1", "m2")
    assert totals.usage_by_model == (("m1", Usage(6)), ("m2", Usage(4)))


def test_the_header_model_and_totals() -> None:
    header = HEADER.replace("215db51\n", "215db51\nmodel: hm\ntokens_total_in: 50\ntokens_cached: 7\n")
    totals = numbers("a: x tokens_in=1\na: y model=m2 tokens_in=2\n", header=header).totals
    assert totals.models == ("hm", "m2")
    assert totals.header_totals == Totals(prompt=50, cached=7)
    assert totals.usage_by_model == (("hm", Usage(1)), ("m2", Usage(2)))
    empty = "---\nformat: bbox/1\nid: s1\nrepo_sha: 215db51\nmodel: ''\n---\n"
    assert numbers("a: x tokens_in=1\n", header=empty).totals.models == ()


@pytest.mark.parametrize(
    ("body", "stated"),
    [
        ("# metrics cost=0.1\n# tokens=5 cost=0.2\n@end cost_usd=0.3\n", Decimal("0.3")),  # @end first
        ("# metrics cost=0.1\n# tokens=5 cost=0.2\n", Decimal("0.2")),  # then the summary
        ("# metrics cost=0.1\n# metrics cost=0.15\n", Decimal("0.25")),  # then the metrics summed
        ("@end tokens_in=1\n", None),
    ],
)
def test_the_stated_cost(body: str, stated: Decimal | None) -> None:
    assert numbers(body).totals.stated_cost_usd == stated


def test_the_closing_summary_and_end_totals_are_kept_beside() -> None:
    totals = numbers("# tokens=5 cost=0.2\n@end tokens_in=3 tokens_out=4\n").totals
    assert totals.summary_totals == Totals(tokens=5, cost=Decimal("0.2"))
    assert totals.end_totals == Totals(prompt=3, completion=4)
    assert totals.usage == Usage() and totals.usage_source is None


def test_the_estimate_note() -> None:
    assert numbers("a: x tokens_in=1\n").totals.estimate_note == "not asked for"
    assert numbers("u: x\n").totals.estimate_note == "no usage"
    assert numbers("u: x\n", estimate=True).totals.estimate_note == "no usage"
    assert numbers("a: x tokens_in=1\n", estimate=True).totals.estimate_note == "no model named"
    totals = numbers("# metrics prompt=5\n", estimate=True).totals
    assert (totals.usage_source, totals.estimate_note) == ("metrics", "no model named")


def test_the_metrics_are_priced_with_the_model_in_force() -> None:
    pytest.importorskip("genai_prices")
    from bbox_lark.numbers.prices import estimate_cost

    model = "claude-sonnet-4-5-20250929"
    totals = numbers(
        f"a: x model={model} tokens_in=1\n# metrics prompt=500 completion=20\n", estimate=True
    ).totals
    assert totals.usage_source == "metrics"
    assert totals.estimated_cost_usd == estimate_cost([(model, Usage(500, 20))]).cost_usd
    assert totals.estimate_lower_bound


# -- steps and metrics ---------------------------------------------------------------------


def test_the_steps_a_line_counts_for() -> None:
    result = numbers(
        "u: a step=1\n"  # 6
        "# c step=1\n"  # 7: a comment has no step
        "t:read x step=2 → [ok]\n"  # 8
        "# metrics step=3 prompt=4\n"  # 9: a step with metrics only
        "t:read y step=2\n"  # 10
        "# metrics step=2 prompt=1\n"  # 11
        "@end step=9\n"  # 12: a lifecycle line has one
    )
    assert [
        (s.step, s.first_line, s.last_line, s.events, s.calls, s.metrics.prompt) for s in result.steps
    ] == [
        (1, 6, 6, 1, 0, None),
        (2, 8, 10, 2, 2, 1),
        (3, 9, 9, 0, 0, 4),
        (9, 12, 12, 1, 0, None),
    ]
    assert result.totals.steps == 3  # steps with events


def test_a_step_first_seen_in_metrics_takes_the_lines_of_its_events() -> None:
    result = numbers("# metrics step=2 prompt=4\nu: a\nt:read y step=2\nt:read z step=2\n")
    assert [(s.step, s.first_line, s.last_line, s.events) for s in result.steps] == [(2, 8, 9, 2)]


def test_a_steps_usage_is_of_the_responses_starting_there() -> None:
    result = numbers("a: x step=1 tokens_in=1 tokens_out=2\na: y step=2 tokens_in=1 tokens_out=5\nu: z\n")
    assert [(s.step, s.usage) for s in result.steps] == [(1, Usage(1, 5)), (2, Usage())]


def test_metrics_counted_once_per_step_from_the_line_or_the_metrics() -> None:
    totals = numbers(
        "a: x model=m2 tokens_in=1\n"
        "# metrics prompt=5\n"
        "# metrics step=4 prompt=1\n"
        "a: y step=4 # metrics prompt=7\n"  # step 4 again: skipped
        "a: z step=5 # metrics prompt=2 step=4\n"  # the line's step wins
    ).totals
    assert (totals.metrics_seen, totals.metrics_counted, totals.metrics_skipped) == (4, 3, 1)
    assert totals.usage_by_model == (("m2", Usage(8)),)
    assert totals.metrics_totals == Totals(prompt=8)


def test_a_counter_without_steps_keeps_and_counts_none() -> None:
    counter = SessionCounter({"id": "x", "model": "m"}, steps=False, estimate=False)
    for event in bbox_lark.parse(
        HEADER + "u: a step=1\n# metrics step=1 prompt=3\n# metrics step=1 prompt=3\n"
    ).events:
        counter.feed(event)
    pending, steps, totals = counter.finish()
    assert (pending, steps, totals.steps, totals.metrics_counted, totals.session_id) == ([], (), 0, 1, "x")
    assert totals.models == ("m",)
    assert SessionCounter({"id": 5}).session_id == ""


# -- time ----------------------------------------------------------------------------------


def test_the_time_span_takes_the_earliest_and_latest_valid_ts() -> None:
    totals = numbers(
        "u: a ts=2025-01-01T00:00:05Z\n"
        "u: b ts=2025-01-01T00:00:01Z\n"
        "u: c ts=bad\n"
        "u: d ts=2025-01-01T00:00:09Z\n"
        "u: e ts=2025-01-01T00:00:03Z\n"
    ).totals
    assert (totals.first_ts, totals.last_ts, totals.duration_ms) == (
        "2025-01-01T00:00:01Z",
        "2025-01-01T00:00:09Z",
        8000,
    )
    same = numbers("u: a ts=2025-01-01T00:00:05Z\nu: b ts=2025-01-01T01:00:05+01:00\n").totals
    assert (same.first_ts, same.last_ts, same.duration_ms) == (
        "2025-01-01T00:00:05Z",
        "2025-01-01T01:00:05+01:00",  # the same moment: the later line
        0,
    )
    assert numbers("u: a\n").totals.duration_ms is None


def test_a_trailing_metrics_step_counts_and_every_skip_and_overflow_is_counted() -> None:
    totals = numbers(
        "a: z # metrics step=4 prompt=2\n"  # the step of the metrics: the line states none
        "# metrics step=4 prompt=3\n"  # skipped
        "# metrics step=4 prompt=3\n"  # skipped
        "# metrics prompt=1 cached=5\n"  # W028
        "# metrics prompt=1 cached=6\n"  # W028
    ).totals
    assert (totals.metrics_seen, totals.metrics_counted, totals.metrics_skipped) == (5, 3, 2)
    assert totals.metrics_cached_over_prompt == 2
    assert totals.metrics_totals == Totals(prompt=4, cached=11)


def test_a_model_name_with_a_colon_or_an_x() -> None:
    totals = numbers(
        "# model: vertex:m3\na: y tokens_in=1\n# model: X1X r=2\nu: q\na: w tokens_in=2\n"
    ).totals
    assert totals.models == ("vertex:m3", "X1X")


def test_document_numbers_hands_each_call_to_on_call() -> None:
    taken: list[object] = []
    document = bbox_lark.parse(HEADER + "t:read a → [ok]\nt!:bash id=1\n")
    result = document_numbers(document, estimate=False, on_call=taken.append)
    assert result.calls == () and [call.start_line for call in taken] == [6, 7]  # type: ignore[attr-defined]


def test_an_estimate_is_made_unless_refused() -> None:
    text = HEADER + "a: x tokens_in=1\n# c\n"
    assert read_session(text).totals.estimate_note == "no model named"  # asked for by default
    counter = SessionCounter(bbox_lark.parse(text).header)
    for event in bbox_lark.parse(text).events:
        counter.feed(event)
    totals = counter.finish()[2]
    assert (totals.estimate_note, totals.events) == ("no model named", 2)
    assert numbers("# metrics prompt=5\n").totals.estimate_note == "not asked for"


def test_a_calls_pairing_step_and_time() -> None:
    calls = numbers(
        "t!:bash id=1 step=3 ts=2025-01-01T00:00:00Z\n"
        "o: id=1 → [ok]\n"
        "t!:Read a\n"
        "t!:Grep b\n"
        "t:Read → [ok]\n"
        "t:Grep → [ok]\n"
    ).calls
    assert [(c.tool, c.pairing, c.step, c.ts) for c in calls] == [
        ("bash", "id", 3, "2025-01-01T00:00:00Z"),
        ("Read", "order", None, None),
        ("Grep", "order", None, None),
    ]


def test_read_session_takes_a_session_id_and_a_line_limit() -> None:
    text = HEADER + "t:read " + "x" * 50 + " → [ok]\n"
    assert read_session(text, session_id="f.bbox").totals.session_id == "f.bbox"
    assert read_session(text).totals.calls == 1
    assert read_session(text, max_line=20).totals.calls == 0  # the long line is not read


def test_a_completed_call_leaves_no_guess_on_the_next_with_its_key() -> None:
    calls = numbers(
        "t!:bash id=1\no: id=1 → [ok]\nt!:bash id=1\no: id=1 → [ok]\n"
        "t!:Read a\nt:Read → [ok]\nt!:Read b\nt:Read → [ok]\n"
    ).calls
    assert [c.pairing for c in calls] == ["id", "id", "order", "order"]
    assert [c.response for c in numbers("t:read a tokens_in=1 → [ok]\nt!:bash id=1 tokens_in=1\n").calls] == [
        1,
        1,
    ]


def test_the_steps_name_their_session_and_the_metrics_usage_is_kept() -> None:
    result = numbers("a: x step=1\n# metrics step=1 prompt=10 cached=4 completion=2\n")
    assert [s.session_id for s in result.steps] == ["s1"]
    assert result.totals.metrics_usage == Usage(6, 2, 4)


# -- the six survivors of the last run, settled --------------------------------------------


@pytest.mark.parametrize("value", ['""', "[a, b]"])
def test_a_model_field_that_is_empty_or_a_list_switches_no_model(value: str) -> None:
    totals = numbers(f"u: hi model={value}\na: hi tokens_in=5 tokens_out=3\n").totals
    assert totals.models == ()
    assert totals.usage_by_model == ((None, Usage(5, 3)),)


@pytest.mark.parametrize(
    "line", ["@start cost_usd=3 tokens_total_in=4", "t:end cost_usd=3 tokens_total_in=4 → [ok]"]
)
def test_only_an_end_lifecycle_line_states_the_end_totals(line: str) -> None:
    totals = numbers(line + "\nu: hi\n").totals
    assert totals.end_totals == Totals()
    assert totals.stated_cost_usd is None


def test_a_call_line_without_usage_inside_a_response_belongs_to_no_response() -> None:
    calls = numbers(
        "a: hi tokens_in=5 tokens_out=1\nt:bash → [ok]\nt:bash tokens_in=5 tokens_out=2 → [ok]\n"
    ).calls
    assert [call.response for call in calls] == [None, 1]


def test_a_key_left_with_an_open_call_keeps_the_next_start_ambiguous() -> None:
    calls = numbers("t!:bash id=1\nt!:bash id=1\no: id=1 → [ok]\nt!:bash id=1\n").calls
    assert [(call.start_line, call.pairing) for call in calls] == [
        (6, "ambiguous"),
        (7, "ambiguous"),
        (9, "ambiguous"),
    ]


def test_a_key_whose_open_calls_all_completed_pairs_the_next_call_by_id() -> None:
    calls = numbers(
        "t!:bash id=1\nt!:bash id=1\no: id=1 → [ok]\no: id=1 → [ok]\nt!:bash id=1\no: id=1 → [ok]\n"
    ).calls
    assert [(call.start_line, call.pairing) for call in calls] == [
        (6, "ambiguous"),
        (7, "ambiguous"),
        (10, "id"),
    ]


def test_a_counter_fed_nothing_has_read_no_line_ts_or_step() -> None:
    counter = SessionCounter()
    assert (counter.line_ts, counter.line_step) == (None, None)
    counter.feed(bbox_lark.parse(HEADER + "u: a step=2 ts=2025-01-01T00:00:00Z\n").events[0])
    assert (counter.line_ts, counter.line_step) == ("2025-01-01T00:00:00Z", 2)
    counter.feed(bbox_lark.parse(HEADER + "# a comment step=3 ts=bad\n").events[0])
    assert (counter.line_ts, counter.line_step) == (None, None)
