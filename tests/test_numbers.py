"""The numbers module (``bbox_lark.numbers.session``): outcomes, responses, step metrics, totals
(DECISIONS §10 "Stats", §12), every expectation counted by hand."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from printer_support import documents, fuzz_settings

import bbox_lark
from bbox_lark.numbers.outcomes import OUTCOMES, call_outcome
from bbox_lark.numbers.prices import estimate_cost
from bbox_lark.numbers.session import document_numbers, read_session
from bbox_lark.numbers.usage import Usage, response_usage

HEADER = "---\nformat: bbox/1\nid: s1\nrepo_sha: 215db51\nmodel: claude-sonnet-4-5-20250929\n---\n"


def numbers(body: str, header: str = HEADER, **options: object):  # type: ignore[no-untyped-def]
    return document_numbers(bbox_lark.parse(header + body), **options)  # type: ignore[arg-type]


def event(line: str) -> bbox_lark.Event:
    return bbox_lark.parse(HEADER + line + "\n").events[0]


# -- outcomes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "outcome"),
    [
        ("t:test → [ok]", "ok"),
        ("t:read a.rs → [12 lines]", "ok"),
        ("q:which → [selected: a, b]", "ok"),
        ("x:explore → session_id=abc summary=done", "ok"),
        ("t:grep foo → 3 matches", "ok"),
        ("t:read .env → [redacted:api_key]", "ok"),
        ("s:review → [loaded]", "ok"),
        ("t:test → [err: 2 failed]", "error"),
        ("t:test → [error] Exit code 101", "error"),
        ("t:test → [error]", "error"),
        ("t:test → Error: no such file", "error"),
        ("t:lint → [skip]", "skipped"),
        ("t:fetch → [retry 2/3]", "retry"),
        ("t:read a.rs", "unknown"),
        ("t!:build id=b1", "pending"),
        ("x:explore id=a1 → [running]", "pending"),
    ],
)
def test_outcome_of_a_line(line: str, outcome: str) -> None:
    assert call_outcome(event(line)) == outcome


def test_the_completion_decides() -> None:
    start = event("t!:build id=b1")
    assert call_outcome(start, event("o: id=b1 → [ok]")) == "ok"
    assert call_outcome(start, event("o: id=b1 → [err: boom]")) == "error"
    assert call_outcome(start, event("t:build id=b1 → [skip]")) == "skipped"


def test_calls_and_outcomes_per_tool() -> None:
    result = numbers(
        "t!:bash id=1 → [running]\n"  # 7
        "o: id=1 → [ok]\n"  # 8
        "t!:bash id=2 → [running]\n"  # 9
        "o: id=2 → [error] Exit code 1\n"  # 10
        "t!:bash id=3 → [running]\n"  # 11: never completed
        "t~:bash id=3 50%\n"  # 12: progress, no call
        "c:github.issues → [3]\n"  # 13
        "t:read a.rs\n"  # 14: no result
    )
    totals = result.totals
    assert totals.calls == 5
    assert dict(zip(OUTCOMES, totals.outcomes, strict=True)) == {
        "ok": 2,
        "error": 1,
        "pending": 1,
        "skipped": 0,
        "retry": 0,
        "unknown": 1,
    }
    tools = {(t.family, t.tool): t.to_json() for t in totals.tools}
    assert tools[("tool", "bash")] == {
        "calls": 3,
        "ok": 1,
        "error": 1,
        "pending": 1,
        "skipped": 0,
        "retry": 0,
        "unknown": 0,
    }
    assert tools[("mcp", "github.issues")]["ok"] == 1
    calls = result.calls
    assert [(c.start_line, c.end_line, c.outcome) for c in calls] == [
        (7, 8, "ok"),
        (9, 10, "error"),
        (11, None, "pending"),
        (13, 13, "ok"),
        (14, 14, "unknown"),
    ]
    first = calls[0]
    assert (first.session_id, first.key, first.key_field, first.tool, first.family, first.kind) == (
        "s1",
        "1",
        "id",
        "bash",
        "tool",
        "tool_start",
    )


def test_call_record_args_and_latency() -> None:
    result = numbers(
        't!:read src/a.rs "two words" [1, 2] id=r ts=2025-01-01T00:00:00Z\n'
        "o: id=r ts=2025-01-01T00:00:01.5Z → [ok]\n"
        "t:test latency_ms=42 → [ok]\n"
    )
    first, second = result.calls
    assert first.args == "src/a.rs two words [1, 2]"
    assert first.latency_ms == 1500
    assert second.latency_ms == 42


# -- usage stated on event lines (§12) ---------------------------------------------------


REAL_SHAPE = (
    "a: I'll look. tokens_in=2 tokens_out=2 tokens_cached=100\n"  # 7  response 1
    "t!:read id=A → [running] tokens_in=2 tokens_out=216 tokens_cached=100\n"  # 8  response 1
    "o: id=A → [ok]\n"  # 9  ends it
    "th: hmm tokens_in=5 tokens_out=1 tokens_cached=300\n"  # 10 response 2
    "a: done tokens_in=5 tokens_out=40 tokens_cached=300\n"  # 11 response 2
    "# a comment\n"  # 12 neither joins nor ends
    "t!:edit id=B → [running] tokens_in=5 tokens_out=30 tokens_cached=300\n"  # 13 response 2 (30 < 40)
    "o: id=B → [ok]\n"  # 14
    "a: again tokens_in=5 tokens_out=7 tokens_cached=300\n"  # 15 response 3: same numbers, after o:
    "u: thanks\n"  # 16
    "@end tokens_in=999 cost_usd=0.5\n"  # 17: stated, not a response
)


def test_one_response_counts_once_with_its_largest_output() -> None:
    totals = numbers(REAL_SHAPE, estimate=False).totals
    assert totals.responses == 3
    assert totals.response_usage == Usage(2 + 5 + 5, 216 + 40 + 7, 100 + 300 + 300)
    assert totals.usage_source == "responses"
    assert totals.usage == totals.response_usage
    assert totals.stated_cost_usd == Decimal("0.5")
    assert totals.end_totals.prompt == 999


def test_response_usage_per_line() -> None:
    lines = response_usage(bbox_lark.parse(HEADER + REAL_SHAPE).events)
    assert {line: r.ordinal for line, r in lines.items()} == {7: 1, 8: 1, 10: 2, 11: 2, 13: 2, 15: 3}
    assert lines[7].usage == Usage(2, 216, 100)
    assert lines[13].usage == Usage(5, 40, 300)


def test_a_different_input_starts_a_new_response() -> None:
    totals = numbers(
        "a: one tokens_in=1 tokens_out=5 tokens_cached=10\n"
        "a: two tokens_in=2 tokens_out=3 tokens_cached=10\n",
        estimate=False,
    ).totals
    assert (totals.responses, totals.usage) == (2, Usage(3, 8, 20))


def test_responses_are_consecutive_within_a_thread() -> None:
    """A subagent's lines (tid=) interleaved with the main agent's neither join nor split the
    main agent's response; a u:/o: of one thread ends only that thread's response."""
    totals = numbers(
        "th: plan tokens_in=5 tokens_out=1 tokens_cached=100\n"  # main, response 1
        "u: go tid=sub\n"
        "a: sub answer tid=sub tokens_in=2 tokens_out=3 tokens_cached=10\n"  # sub, response 2
        "o: id=x tid=sub → [ok]\n"
        "a: main text tokens_in=5 tokens_out=9 tokens_cached=100\n"  # main, still response 1
        "a: sub again tid=sub tokens_in=2 tokens_out=4 tokens_cached=10\n",  # sub, response 3
        estimate=False,
    ).totals
    assert totals.responses == 3
    assert totals.response_usage == Usage(5 + 2 + 2, 9 + 3 + 4, 100 + 10 + 10)


def test_call_records_name_their_response() -> None:
    calls = numbers(REAL_SHAPE, estimate=False).calls
    assert [(c.start_line, c.response) for c in calls] == [(8, 1), (13, 2)]
    assert calls[0].usage == Usage(2, 216, 100)


# -- # metrics (§10) and the choice of source -------------------------------------------


def test_metrics_once_per_step_and_win_over_responses() -> None:
    totals = numbers(
        "a: one step=1 tokens_in=9 tokens_out=9 tokens_cached=9 # metrics prompt=10 completion=2 cost=$0.25\n"
        "# metrics step=1 prompt=100\n"  # same step: skipped
        "# metrics step=2 tokens_in=5 tokens_out=1 cached_tokens=7\n"
        "# metrics prompt=1\n",  # no step: counts
        estimate=False,
    ).totals
    assert (totals.metrics_seen, totals.metrics_counted, totals.metrics_skipped) == (4, 3, 1)
    assert totals.usage_source == "metrics"
    assert totals.usage == Usage(16, 3, 7)
    assert totals.response_usage == Usage(9, 9, 9)
    assert totals.stated_cost_usd == Decimal("0.25")


def test_steps() -> None:
    result = numbers(
        "u: go step=1\n"  # 7
        "t:read a step=1 → [ok] tokens_in=3 tokens_out=4 tokens_cached=5\n"  # 8
        "a: ok step=2\n"  # 9
        "# metrics step=2 prompt=7\n"  # 10
        "# metrics step=9 prompt=1\n",  # 11: a step no event has
        estimate=False,
    )
    steps = {s.step: s for s in result.steps}
    assert (steps[1].first_line, steps[1].last_line, steps[1].events, steps[1].calls) == (7, 8, 2, 1)
    assert steps[1].usage == Usage(3, 4, 5)
    assert steps[2].metrics.prompt == 7
    assert steps[9].events == 0
    assert result.totals.steps == 2


# -- models, time, cost -----------------------------------------------------------------


def test_models_switch_and_time() -> None:
    totals = numbers(
        "a: one ts=2025-01-01T00:00:00Z tokens_in=1 tokens_out=1\n"
        "# model: claude-opus-4-1 reason=plan\n"
        "u: next\n"
        "a: two ts=2025-01-01T00:01:00Z tokens_in=2 tokens_out=2\n",
        estimate=False,
    ).totals
    assert totals.models == ("claude-sonnet-4-5-20250929", "claude-opus-4-1")
    assert dict(totals.usage_by_model) == {
        "claude-sonnet-4-5-20250929": Usage(1, 1),
        "claude-opus-4-1": Usage(2, 2),
    }
    assert (totals.first_ts, totals.last_ts, totals.duration_ms) == (
        "2025-01-01T00:00:00Z",
        "2025-01-01T00:01:00Z",
        60_000,
    )


def test_estimate_counts_cache_reads_as_input() -> None:
    pytest.importorskip("genai_prices")
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    model = "claude-sonnet-4-5-20250929"
    expected = calc_price(
        PriceUsage(input_tokens=1000 + 5000, cache_read_tokens=5000, output_tokens=200), model_ref=model
    ).total_price
    estimate = estimate_cost([(model, Usage(1000, 200, 5000))])
    assert estimate.cost_usd == Decimal(str(expected))
    assert estimate.note is None
    totals = numbers("a: hi tokens_in=1000 tokens_out=200 tokens_cached=5000\n").totals
    assert totals.estimated_cost_usd == estimate.cost_usd
    assert totals.stated_cost_usd is None


def test_estimate_prices_each_request_alone() -> None:
    """Prices have tiers by a request's input: two requests of 150k are not one of 300k."""
    pytest.importorskip("genai_prices")
    model = "claude-sonnet-4-5-20250929"
    one = estimate_cost([(model, Usage(150_000, 10))]).cost_usd
    two = estimate_cost([(model, Usage(150_000, 10)), (model, Usage(150_000, 10))]).cost_usd
    assert one is not None and two == 2 * one


def test_no_estimate_without_a_known_model() -> None:
    pytest.importorskip("genai_prices")
    assert estimate_cost([(None, Usage(1, 1))]).note == "no model named"
    assert estimate_cost([("no-such-model-xyz", Usage(1, 1))]).note == "no price for model no-such-model-xyz"
    assert estimate_cost([]).note == "no usage"


# -- streaming and documents agree ------------------------------------------------------


def test_stream_and_document_agree() -> None:
    text = HEADER + REAL_SHAPE
    streamed = read_session(text.encode(), estimate=False)
    parsed = numbers(REAL_SHAPE, estimate=False)
    assert streamed == parsed
    taken: list[object] = []
    kept = read_session(text, estimate=False, on_call=taken.append)
    assert kept.calls == () and tuple(taken) == parsed.calls


def test_session_id_override_and_empty_header_id() -> None:
    assert numbers("u: hi\n", session_id="file.bbox").totals.session_id == "file.bbox"
    header = "---\nformat: bbox/1\nid:\nrepo_sha: 215db51\n---\n"
    assert numbers("u: hi\n", header=header).totals.session_id == ""


# -- properties --------------------------------------------------------------------------


@fuzz_settings(60)
@given(documents())
def test_streamed_and_parsed_numbers_agree_on_any_document(text: str) -> None:
    """Differential: the stream (iter_nodes) and the parsed document give the same numbers,
    every call gets one of the outcomes, and the outcomes add up to the calls."""
    streamed = read_session(text, estimate=False)
    parsed = document_numbers(bbox_lark.parse(text), estimate=False)
    assert streamed == parsed
    totals = parsed.totals
    assert sum(totals.outcomes) == totals.calls == len(parsed.calls)
    assert all(call.outcome in OUTCOMES for call in parsed.calls)
    assert sum(t.calls for t in totals.tools) == totals.calls


_usage_line = st.tuples(
    st.sampled_from(["a: x", "th: y", "t!:read id=k → [running]", "u: next", "o: id=k → [ok]", "# note"]),
    st.integers(0, 3),
    st.integers(0, 50),
    st.integers(0, 3),
)


@fuzz_settings(100)
@given(st.lists(_usage_line, max_size=12))
def test_responses_count_each_once(lines: list[tuple[str, int, int, int]]) -> None:
    """Against a plain reference of §12's rule: consecutive usage lines with equal tokens_in
    and tokens_cached, no u:/o: between, are one response; its output is the largest."""
    body = ""
    groups: list[list[int]] = []  # per response: [in, cached, largest out]
    key = None
    for text, tokens_in, tokens_out, cached in lines:
        if text.startswith(("u:", "o:")):
            body += text + "\n"
            key = None
            continue
        if text.startswith("#"):
            body += text + "\n"
            continue
        body += f"{text} tokens_in={tokens_in} tokens_out={tokens_out} tokens_cached={cached}\n"
        if key == (tokens_in, cached):
            groups[-1][2] = max(groups[-1][2], tokens_out)
        else:
            groups.append([tokens_in, cached, tokens_out])
            key = (tokens_in, cached)
    totals = numbers(body, estimate=False).totals
    assert totals.responses == len(groups)
    if groups:
        expected = Usage(sum(g[0] for g in groups), sum(g[2] for g in groups), sum(g[1] for g in groups))
        assert totals.response_usage == expected


def test_streaming_keeps_no_call_history() -> None:
    """read_session with on_call holds the open calls, not the finished ones: four times
    the calls take far less than four times the memory (no timing: memory is compared)."""
    import tracemalloc

    def lines(n: int):  # type: ignore[no-untyped-def]
        yield HEADER
        for i in range(n):
            yield f"t!:bash id=c{i} → [running] tokens_in={i} tokens_out=1\n"
            yield f"o: id=c{i} → [ok]\n"

    def peak(n: int) -> int:
        taken: list[int] = []
        tracemalloc.start()
        try:
            totals = read_session(lines(n), estimate=False, on_call=lambda _: taken.append(1)).totals
            most = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert len(taken) == totals.calls == totals.responses == n
        return most

    peak(100)  # first use: the grammar and caches load
    small, large = peak(3000), peak(12000)
    assert large < 2 * small, (small, large)


# -- §13: the numbers at the joins ------------------------------------------------------


def test_metrics_prompt_includes_cached() -> None:
    # ATIF's convention (§13): uncached input = prompt - cached, per step.
    totals = numbers(
        "a: one step=1\n# metrics step=1 prompt_tokens=110 completion_tokens=5 cached_tokens=100\n"
        "a: two step=2\n# metrics step=2 prompt_tokens=3 cached_tokens=50\n",  # W028: prompt uncached
        estimate=False,
    ).totals
    assert totals.usage == Usage(10 + 3, 5, 150)
    assert totals.metrics_totals.prompt == 113  # as stated
    assert totals.metrics_cached_over_prompt == 1


def test_prose_is_not_usage() -> None:
    # Issue 25: `Set tokens_out=999999 in the fixture.` added a million output tokens and a
    # model inside backquotes became the session's model.
    totals = numbers(
        "a: Set tokens_out=999999 in the fixture. tokens_in=1\n"
        "a: formatted as `@init model=...` (line 301) here\n"
        "u: next\n"
        "a: done tokens_in=5 tokens_out=2 model=claude-sonnet-4-5\n",
        estimate=False,
    ).totals
    assert totals.usage == Usage(6, 2, None)
    assert totals.models[-1] == "claude-sonnet-4-5" and not any("..." in m for m in totals.models)


def test_a_key_in_prose_and_again_at_the_end_reads_the_end() -> None:
    # A usage, model or cost key written inside the text and again in the trailing run: the
    # numbers took the first value (the prose one), because the line's fields, where the
    # first of a repeated key wins, held as many keys as the trailing run. Found by the
    # generated "fields inside prose change no number" test (test_numbers_generated.py).
    prose = numbers(
        "a: tests ok tokens_in=211 cost tokens_out=1991 tokens_in=4772 model=claude-opus-4-1\n"
        "th: the cache tokens_out=93 why step=1 tokens_out=1785 tokens_in=908\n"
        "a: done model=gpt-4o now tokens_in=5 model=claude-sonnet-4-5\n",
        estimate=False,
    ).totals
    assert prose.usage == Usage(4772 + 908 + 5, 1991 + 1785, None)
    assert prose.models[1:] == ("claude-opus-4-1", "claude-sonnet-4-5")  # after the header's


def test_stated_cost_of_an_atif_import_is_read() -> None:
    from bbox_lark.convert import convert

    path = Path(__file__).parent.parent.parent / "shared" / "corpus-external" / "atif"
    source = path / "harbor-atif2otel__trajectory_pass.json"
    if not source.exists():
        pytest.skip("no external corpus")
    final = json.loads(source.read_text(encoding="utf-8"))["final_metrics"]
    text = convert(source.read_bytes(), "atif", to="bbox").text
    totals = numbers(text.split("---\n", 2)[2], header=text[: text.index("---\n", 4) + 4]).totals
    assert totals.stated_cost_usd == Decimal(repr(final["total_cost_usd"]))
    assert totals.usage.tokens_in == final["total_prompt_tokens"] - final["total_cached_tokens"]
    assert totals.usage.tokens_cached == final["total_cached_tokens"]
    assert totals.usage.tokens_out == final["total_completion_tokens"]
    # The estimate prices the cached tokens as cache reads: near the stated figure, not 7x it.
    assert totals.estimated_cost_usd is not None
    assert totals.estimated_cost_usd < 2 * totals.stated_cost_usd
    assert totals.estimate_lower_bound


def test_cache_writes_are_priced_where_named() -> None:
    named = numbers(
        "a: x model=claude-sonnet-4-5 tokens_in=1000 tokens_out=1 tokens_cache_write=1000\n"
    ).totals
    plain = numbers("a: x model=claude-sonnet-4-5 tokens_in=1000 tokens_out=1\n").totals
    assert named.usage.tokens_cache_write == 1000 and not named.estimate_lower_bound
    assert plain.estimate_lower_bound
    assert named.estimated_cost_usd is not None and plain.estimated_cost_usd is not None
    assert named.estimated_cost_usd > plain.estimated_cost_usd


def test_guessed_pairs_are_marked() -> None:
    # Issue 25: every call has id=toolu_01; results pair in order (the EISDIR error goes to
    # the Read): both calls say `ambiguous`.
    result = numbers(
        "t!:Read id=toolu_01 src\n"
        "t!:Bash id=toolu_01 ls\n"
        "o: id=toolu_01 → [err: EISDIR]\n"
        "o: id=toolu_01 → [ok]\n"
        "t!:Grep foo\n"
        "t:Grep → 3\n"
        "t:Edit id=toolu_02 a.rs → [ok]\n",
        estimate=False,
    )
    assert [(c.tool, c.pairing) for c in result.calls] == [
        ("Read", "ambiguous"),
        ("Bash", "ambiguous"),
        ("Grep", "order"),
        ("Edit", "id"),
    ]
    assert result.totals.pairing == (1, 1, 2)
