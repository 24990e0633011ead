"""``bbox-lark stats``' numbers (``bbox_lark/numbers/stats.py``), pinned down where mutation
testing found nothing holding them: the JSON of every part, the statistics of several files
added up field by field (the step range, usage sources, stated and estimated costs and their
note, the time span by instant, not by text), ``stats --json``'s one shape for one file or
many, and the exact count of distinct values past the memory limit (docs/testing.md,
"Mutation testing")."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

import bbox_lark
from bbox_lark.numbers.outcomes import OUTCOMES
from bbox_lark.numbers.stats import (
    Blobs,
    CallCounts,
    Cost,
    Distinct,
    LineCounts,
    MetricsTotals,
    Redactions,
    Stats,
    StepRange,
    TimeSpan,
    UsageTotals,
    combine_stats,
    compute_stats,
    stats_run_json,
    sum_metrics,
)
from bbox_lark.numbers.usage import Totals, Usage
from bbox_lark.syntax.grammar import vocabulary

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"


def stats_of(body: str, header: str = HEADER) -> Stats:
    return compute_stats(bbox_lark.parse(header + body))


def kinds(**counts: int) -> tuple[tuple[str, int], ...]:
    return tuple((kind, counts.get(kind, 0)) for kind in vocabulary().event_kinds)


def outcomes(**counts: int) -> tuple[int, ...]:
    return tuple(counts.get(name, 0) for name in OUTCOMES)


ONE = Stats(
    header=(("id", "a"),),
    lines=LineCounts(total=20, header=5, body=15, content=12, blank=3, comment=5, continuation=2, unknown=1),
    events=kinds(user=2, agent=1),
    lifecycle=(("phase", 2), ("end", 1)),
    steps=StepRange(3, 9, 4, 5),
    timestamps=2,
    tools=CallCounts(
        total=3,
        open=1,
        by_name=(("read", 2), ("bash", 1)),
        outcomes=outcomes(ok=1, error=1, pending=1),
        by_tool=(("read", outcomes(ok=1, error=1)), ("bash", outcomes(pending=1))),
    ),
    mcp=CallCounts(
        total=1, by_name=(("srv.get", 1),), outcomes=outcomes(ok=1), by_tool=(("srv.get", outcomes(ok=1)),)
    ),
    call_ids=4,
    spans=1,
    redactions=Redactions(2, (("env_var", 2),)),
    blobs=Blobs(1, 10, 1),
    metrics=MetricsTotals(Totals(prompt=1, completion=2, cost=Decimal("0.5")), seen=3, counted=2, skipped=1),
    header_totals=Totals(prompt=100),
    end_totals=Totals(completion=5),
    summary_totals=Totals(tokens=7, cost=Decimal(1)),
    usage=UsageTotals(Usage(1, 2), "metrics", 0, (("m1", Usage(1, 2)),)),
    cost=Cost(Decimal("0.5"), Decimal("0.25"), None, False),
    models=("m1", "m2"),
    time=TimeSpan("2025-01-01T10:00:00+02:00", "2025-01-01T10:30:00+02:00", 1800000),
    pairing=(1, 2, 0),
    metrics_cached_over_prompt=1,
)

TWO = Stats(
    header=(("id", "b"),),
    lines=LineCounts(
        total=300, header=100, body=200, content=160, blank=40, comment=100, continuation=30, unknown=10
    ),
    events=kinds(user=10, tool=3),
    lifecycle=(("end", 4),),
    steps=StepRange(1, 5, 3, 30),
    timestamps=20,
    tools=CallCounts(
        total=30,
        open=0,
        by_name=(("bash", 20), ("edit", 10)),
        outcomes=outcomes(ok=25, retry=5),
        by_tool=(("bash", outcomes(ok=15, retry=5)), ("edit", outcomes(ok=10))),
    ),
    subagents=CallCounts(
        total=2,
        by_name=(("explore", 2),),
        outcomes=outcomes(unknown=2),
        by_tool=(("explore", outcomes(unknown=2)),),
    ),
    call_ids=40,
    spans=10,
    redactions=Redactions(30, (("api_key", 20), ("env_var", 10))),
    blobs=Blobs(10, 1000, 9),
    metrics=MetricsTotals(Totals(prompt=10, cached=30, cost=Decimal("2")), seen=30, counted=20, skipped=10),
    header_totals=Totals(prompt=1000, completion=1),
    end_totals=Totals(completion=50, cost=Decimal("3")),
    summary_totals=Totals(tokens=70),
    usage=UsageTotals(Usage(10, 20, 30), "metrics", 5, (("m2", Usage(10, 20, 30)), ("m1", Usage(1)))),
    cost=Cost(Decimal("2"), Decimal("1"), None, True),
    models=("m2", "m3"),
    time=TimeSpan("2025-01-01T09:00:00Z", "2025-01-01T08:45:00Z", 60000),
    pairing=(10, 20, 30),
    metrics_cached_over_prompt=2,
)


def test_several_files_add_up_field_by_field() -> None:
    assert combine_stats([ONE, TWO]) == Stats(
        header=(),
        lines=LineCounts(
            total=320, header=105, body=215, content=172, blank=43, comment=105, continuation=32, unknown=11
        ),
        events=kinds(user=12, agent=1, tool=3),
        lifecycle=(("end", 5), ("phase", 2)),
        steps=StepRange(1, 9, 7, 35),
        timestamps=22,
        tools=CallCounts(
            total=33,
            open=1,
            by_name=(("bash", 21), ("edit", 10), ("read", 2)),
            outcomes=outcomes(ok=26, error=1, pending=1, retry=5),
            by_tool=(
                ("bash", outcomes(ok=15, pending=1, retry=5)),
                ("edit", outcomes(ok=10)),
                ("read", outcomes(ok=1, error=1)),
            ),
        ),
        mcp=CallCounts(
            total=1,
            by_name=(("srv.get", 1),),
            outcomes=outcomes(ok=1),
            by_tool=(("srv.get", outcomes(ok=1)),),
        ),
        subagents=CallCounts(
            total=2,
            by_name=(("explore", 2),),
            outcomes=outcomes(unknown=2),
            by_tool=(("explore", outcomes(unknown=2)),),
        ),
        call_ids=44,
        spans=11,
        redactions=Redactions(32, (("api_key", 20), ("env_var", 12))),
        blobs=Blobs(11, 1010, 10),
        metrics=MetricsTotals(
            Totals(prompt=11, completion=2, cached=30, cost=Decimal("2.5")), seen=33, counted=22, skipped=11
        ),
        header_totals=Totals(prompt=1100, completion=1),
        end_totals=Totals(completion=55, cost=Decimal("3")),
        summary_totals=Totals(tokens=77, cost=Decimal(1)),
        usage=UsageTotals(Usage(11, 22, 30), "metrics", 5, (("m1", Usage(2, 2)), ("m2", Usage(10, 20, 30)))),
        cost=Cost(Decimal("2.5"), Decimal("1.25"), None, True),
        models=("m1", "m2", "m3"),
        # 10:00+02:00 is 08:00Z, before 09:00Z; 10:30+02:00 is 08:30Z, before 08:45Z.
        time=TimeSpan("2025-01-01T10:00:00+02:00", "2025-01-01T08:45:00Z", 1860000),
        pairing=(11, 22, 30),
        metrics_cached_over_prompt=3,
    )


def test_no_files_add_up_to_nothing() -> None:
    total = combine_stats([])
    assert total.steps == StepRange(None, None, 0, 0)
    assert total.time == TimeSpan(None, None, None)
    assert total.usage == UsageTotals(Usage(), None, 0, ())
    assert total.cost == Cost(None, None, "no usage", False)
    assert total.tools == CallCounts()


def test_files_without_steps_or_times_leave_them_out_of_the_range() -> None:
    empty = Stats()
    total = combine_stats([empty, ONE, empty])
    assert (total.steps.min, total.steps.max) == (3, 9)
    assert total.time == ONE.time


@pytest.mark.parametrize(
    ("sources", "source"),
    [
        (["metrics", "metrics"], "metrics"),
        (["metrics", "responses"], "mixed"),
        ([None, "responses"], "responses"),
        ([None, None], None),
    ],
)
def test_the_usage_source_over_several_files(sources: list[str | None], source: str | None) -> None:
    items = [Stats(usage=UsageTotals(source=s)) for s in sources]
    assert combine_stats(items).usage.source == source


@pytest.mark.parametrize(
    ("costs", "expected"),
    [
        # (stated, estimated, has usage) per file -> (stated, estimated, note)
        ([(None, None, False)], (None, None, "no usage")),
        (
            [(None, None, True), (None, "1", True)],
            (None, Decimal(1), "1 file(s) with usage have no estimate"),
        ),
        ([(None, None, True), (None, None, True)], (None, None, "2 file(s) with usage have no estimate")),
        ([("0", "0", True), (None, "0", True)], (Decimal(0), Decimal(0), None)),
    ],
)
def test_stated_and_estimated_costs_over_several_files(
    costs: list[tuple[str | None, str | None, bool]],
    expected: tuple[Decimal | None, Decimal | None, str | None],
) -> None:
    items = [
        Stats(
            cost=Cost(None if s is None else Decimal(s), None if e is None else Decimal(e)),
            usage=UsageTotals(source="metrics" if used else None),
        )
        for s, e, used in costs
    ]
    cost = combine_stats(items).cost
    assert (cost.stated, cost.estimated, cost.estimate_note) == expected
    assert cost.lower_bound is False


def test_the_estimate_is_a_lower_bound_when_one_file_s_is() -> None:
    items = [Stats(cost=Cost(lower_bound=False)), Stats(cost=Cost(lower_bound=True)), Stats()]
    assert combine_stats(items).cost.lower_bound is True


def test_stats_json_has_one_shape_for_one_file_or_many() -> None:
    value = stats_run_json(
        [("a.bbox", ONE), ("b.bbox", TWO)],
        unreadable=[{"path": "c.bbox", "error": "no such file"}],
        counted_in=[{"path": "d.bbox", "in": "a.bbox"}],
    )
    assert list(value) == ["version", "files", "totals", "unreadable", "counted_in"]
    assert value["version"] == 1
    assert value["files"] == [{"path": "a.bbox", **ONE.to_json()}, {"path": "b.bbox", **TWO.to_json()}]
    totals = combine_stats([ONE, TWO]).to_json()
    del totals["version"], totals["header"]
    assert value["totals"] == {"files": 2, **totals}
    assert value["unreadable"] == [{"path": "c.bbox", "error": "no such file"}]
    assert value["counted_in"] == [{"path": "d.bbox", "in": "a.bbox"}]
    empty = stats_run_json([])
    assert (empty["files"], empty["totals"]["files"], empty["unreadable"], empty["counted_in"]) == (
        [],
        0,
        [],
        [],
    )


def test_the_json_of_every_part() -> None:
    value = ONE.to_json()
    assert value["header"] == {"id": "a"}
    assert value["lines"] == {
        "total": 20,
        "header": 5,
        "body": 15,
        "content": 12,
        "blank": 3,
        "comment": 5,
        "continuation": 2,
        "unknown": 1,
    }
    assert value["events"] == dict(kinds(user=2, agent=1))
    assert value["lifecycle"] == {"phase": 2, "end": 1}
    assert value["steps"] == {"min": 3, "max": 9, "distinct": 4, "lines": 5}
    assert value["timestamps"] == 2
    assert value["calls"]["tool"] == {
        "total": 3,
        "open": 1,
        "by_name": {"read": 2, "bash": 1},
        "outcomes": {"ok": 1, "error": 1, "pending": 1, "skipped": 0, "retry": 0, "unknown": 0},
        "by_tool": {
            "read": {"calls": 2, "ok": 1, "error": 1, "pending": 0, "skipped": 0, "retry": 0, "unknown": 0},
            "bash": {"calls": 1, "ok": 0, "error": 0, "pending": 1, "skipped": 0, "retry": 0, "unknown": 0},
        },
    }
    assert value["calls"]["mcp"]["by_name"] == {"srv.get": 1}
    assert value["calls"]["subagent"] == CallCounts().to_json()
    assert (value["call_ids"], value["spans"]) == (4, 1)
    assert value["redactions"] == {"total": 2, "by_kind": {"env_var": 2}}
    assert value["blobs"] == {"count": 1, "bytes": 10, "distinct": 1}
    assert value["tokens"] == {
        "metrics": {
            "prompt": 1,
            "completion": 2,
            "cached": None,
            "tokens": None,
            "cost": 0.5,
            "cache_write": None,
            "seen": 3,
            "counted": 2,
            "skipped": 1,
        },
        "header": Totals(prompt=100).to_json(),
        "end": Totals(completion=5).to_json(),
        "summary": Totals(tokens=7, cost=Decimal(1)).to_json(),
    }
    assert value["usage"] == {
        "tokens_in": 1,
        "tokens_out": 2,
        "tokens_cached": None,
        "source": "metrics",
        "responses": 0,
        "by_model": {"m1": {"tokens_in": 1, "tokens_out": 2, "tokens_cached": None}},
    }
    assert (value["cost_usd"], value["estimated_cost_usd"]) == (0.5, 0.25)
    assert (value["estimate_note"], value["estimate_lower_bound"]) == (None, False)
    assert value["models"] == ["m1", "m2"]
    assert value["time"] == {
        "first_ts": "2025-01-01T10:00:00+02:00",
        "last_ts": "2025-01-01T10:30:00+02:00",
        "duration_ms": 1800000,
    }
    assert value["pairing"] == {"id": 1, "order": 2, "ambiguous": 0}
    assert value["metrics_cached_over_prompt"] == 1
    empty = Stats().to_json()
    assert (empty["cost_usd"], empty["estimated_cost_usd"]) == (None, None)
    assert empty["version"] == 1


def test_a_file_s_usage_and_cost_in_its_statistics() -> None:
    stats = stats_of(
        "a: hi tokens_in=5 tokens_out=7\n@end cost_usd=0.25\n",
        "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nmodel: gpt-4o\n---\n",
    )
    assert stats.usage == UsageTotals(Usage(5, 7), "responses", 1, (("gpt-4o", Usage(5, 7)),))
    assert stats.cost.stated == Decimal("0.25")
    assert stats.cost.estimated is not None and stats.cost.estimated > 0
    assert stats.models == ("gpt-4o",)
    no_model = stats_of("a: hi tokens_in=5\n")
    assert no_model.usage.by_model == (("(none)", Usage(5)),)
    assert no_model.cost.estimated is None
    assert no_model.cost.estimate_note is not None


def test_sum_metrics_counts_each_step_once() -> None:
    events = bbox_lark.parse(
        HEADER + "a: x step=1 # metrics prompt=3 cost=0.5\n# metrics step=1 prompt=9\n# metrics prompt=4\n"
    ).events
    assert sum_metrics(events) == MetricsTotals(
        Totals(prompt=7, cost=Decimal("0.5")), seen=3, counted=2, skipped=1
    )


def test_a_lifecycle_line_is_counted_by_its_name() -> None:
    assert stats_of("@start\n@end\n@end x=1\n").lifecycle == (("end", 2), ("start", 1))


def test_steps_and_timestamps_of_a_file() -> None:
    stats = stats_of(
        "a: x step=7 ts=2025-01-01T00:00:00Z\n"
        "a: y step=2\n"
        "a: z step=7 ts=2025-01-01T00:00:05Z\n"
        "t:read id=k span=p step=9 → [ok]\n"
    )
    assert stats.steps == StepRange(2, 9, 3, 4)
    assert stats.timestamps == 2
    assert stats.time == TimeSpan("2025-01-01T00:00:00Z", "2025-01-01T00:00:05Z", 5000)
    assert (stats.call_ids, stats.spans) == (1, 1)


def test_header_lines_that_are_blank_count_as_blank() -> None:
    text = "\n \n---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\nu: hi\n\n"
    lines = compute_stats(bbox_lark.parse(text)).lines
    assert lines == LineCounts(
        total=9, header=7, body=2, content=6, blank=3, comment=0, continuation=0, unknown=0
    )


# -- Distinct ---------------------------------------------------------------------------------


def test_distinct_holds_up_to_its_limit_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Distinct, "LIMIT", 3)
    counter = Distinct()
    for value in "abc":
        counter.add(value)
    assert counter._runs == []
    counter.add("d")
    assert len(counter._runs) == 1 and counter._held == set()
    assert counter.count() == 4


@pytest.mark.parametrize(
    "values",
    [
        ["a\nb", "a\\nb", "a", "b", "a\nb"],
        ["x\\", "x\\\\", "x", "x\\"],
        ["\udced", "\udcee", "é", "\udced"],
        ["b", "a", "c", "a", "b", "d", "e"],
    ],
)
def test_distinct_counts_exactly_across_runs(values: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Distinct, "LIMIT", 1)
    counter = Distinct()
    for value in values:
        counter.add(value)
    assert counter.count() == len(set(values))
    assert counter._runs == []


def test_distinct_counts_what_is_held_after_the_last_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Distinct, "LIMIT", 2)
    counter = Distinct()
    for value in ["a", "b", "c", "z"]:
        counter.add(value)
    assert counter._held == {"z"}
    assert counter.count() == 4


def test_event_count_is_zero_for_a_kind_never_seen() -> None:
    assert ONE.event_count("agent") == 1
    assert ONE.event_count("mcp") == 0
    assert Stats().event_count("user") == 0
    assert Stats().event_count("no such kind") == 0


def test_each_line_with_a_valid_time_is_counted() -> None:
    stats = stats_of(
        "a: x ts=2025-01-01T00:00:00Z\na: y ts=2025-01-01T00:00:01Z\na: z ts=2025-01-01T00:00:02Z\na: none\n"
    )
    assert stats.timestamps == 3


def test_distinct_spans_are_counted_by_value() -> None:
    stats = stats_of("t~:read span=p1\nt~:read span=p2\nt~:read span=p1\n")
    assert (stats.spans, stats.call_ids) == (2, 0)


def test_a_file_s_pairing_and_cached_over_prompt_are_in_its_statistics() -> None:
    stats = stats_of(
        "t!:read id=a → [running]\no: id=a → [ok]\n"
        "t!:x → [running]\nt:x → [ok]\n# metrics prompt=5 cached=9\n"
    )
    assert stats.pairing == (1, 1, 0)
    assert stats.metrics_cached_over_prompt == 1


@pytest.mark.parametrize(
    ("model", "body", "note", "lower_bound"),
    [
        ("claude-sonnet-4-5", "a: hi tokens_in=5 tokens_out=7\n", None, True),
        ("claude-sonnet-4-5", "a: hi tokens_in=5 tokens_out=7 tokens_cache_write=0\n", None, False),
        ("nosuchmodel", "a: hi tokens_in=5\n", "no price for model nosuchmodel", False),
        ("claude-sonnet-4-5", "u: hi\n", "no usage", False),
    ],
)
def test_a_file_s_estimate_note_and_lower_bound(
    model: str, body: str, note: str | None, lower_bound: bool
) -> None:
    cost = stats_of(body, HEADER.replace("runner: local", f"model: {model}")).cost
    assert (cost.estimate_note, cost.lower_bound) == (note, lower_bound)
    assert (cost.estimated is not None) == (note is None)


def test_a_counter_fed_records_counts_what_one_fed_nodes_does() -> None:
    from bbox_lark.numbers.stats import StatsCounter
    from bbox_lark.syntax.parser import iter_nodes
    from bbox_lark.syntax.record import iter_records

    text = (
        HEADER
        + "# redactions=2 [redacted:api_key]\n"  # states the count: not counted
        + "u: hi [redacted:api_key] step=1\n  more [redacted:env_var]\n"
        + "t:read id=a → @blob sha256=AB12 bytes=3\n"
    )

    def counted(items: Any) -> Stats:
        head = next(items)
        counter = StatsCounter(dict(head.header_info.fields))
        for item in items:
            counter.append(item)
        return counter.finish(head.header_lines)

    by_records = counted(iter(iter_records(text)))
    assert by_records == counted(iter(iter_nodes(text)))
    assert by_records.redactions == Redactions(2, (("api_key", 1), ("env_var", 1)))
