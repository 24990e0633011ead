"""What went wrong (``numbers/review.py``): the facts the mutation run of the Reviewer found
unguarded (docs/testing.md, its row), each through the Review the page and ``stats --json``
read, or through the Reviewer's own API where only it can tell."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bbox_lark.numbers.review import Reviewer, ReviewFeed, ReviewOptions, call_key, review_bbox

HEADER = "---\nformat: bbox/1\nid: m\nrepo_sha: 215db51\nmodel: claude-sonnet-4-5\n---\n"


def review(tmp_path: Path, body: str, header: str = HEADER, **options: Any) -> Any:
    path = tmp_path / "s.bbox"
    path.write_text(header + body, encoding="utf-8")
    return review_bbox(path, ReviewOptions(**options))


def record(line: int, outcome: str = "error", **fields: Any) -> Any:
    """A decided call as ``SessionCounter`` gives it (the fields the Reviewer reads)."""
    made = {"start_line": line, "end_line": line, "tool": "Bash", "family": "tool", "args": ""}
    made.update({"pairing": "id", **fields})
    return SimpleNamespace(outcome=outcome, **made)


def test_a_response_that_names_no_model_is_priced_as_the_headers() -> None:
    from bbox_lark.numbers.usage import Response, Usage

    reviewer = Reviewer(model="claude-sonnet-4-5")
    reviewer.response(Response(1, 3, 3, Usage(tokens_in=10, tokens_out=5)))
    (costly,) = reviewer.finish().costliest
    assert costly.model == "claude-sonnet-4-5"


def test_long_gaps_are_counted_exactly_on_the_ts_clock(tmp_path: Path) -> None:
    body = (
        "u: a ts=2025-12-20T14:00:00Z\n"
        "a: b ts=2025-12-20T14:20:00Z\n"  # 20 minutes: a long gap
        "u: c ts=2025-12-20T14:21:00Z\n"
    )
    found = review(tmp_path, body)
    assert found.gap_count == 1 and [(g.previous, g.line) for g in found.gaps] == [(7, 8)]
    assert found.to_json()["long_gaps"]["count"] == 1


def test_long_gaps_are_counted_on_the_elapsed_clock_when_no_line_has_a_ts(tmp_path: Path) -> None:
    body = "# t=00:00:00\nu: a\n# t=04:00:00\nu: b\n# t=04:01:00\n"
    found = review(tmp_path, body)
    assert found.gap_count == 1 and [(g.previous, g.line) for g in found.gaps] == [(7, 9)]


def test_a_call_given_no_text_has_an_empty_snippet() -> None:
    reviewer = Reviewer()
    reviewer.call(record(4))
    (item,) = reviewer.finish().failed
    assert item.text == "" and item.pairing == "id"


def test_a_failed_calls_item_carries_its_pairing() -> None:
    reviewer = Reviewer()
    reviewer.call(record(4, pairing="order"), "boom")
    reviewer.call(record(6, outcome="pending", pairing="ambiguous"))
    found = reviewer.finish()
    assert [item.pairing for item in found.failed + found.pending] == ["order", "ambiguous"]


def test_a_call_with_no_key_read_is_keyed_by_its_tool_and_arguments() -> None:
    reviewer = Reviewer(ReviewOptions(loop_min=3))
    for line in range(3, 6):
        reviewer.call(record(line, outcome="ok", tool="Read", args="a.py"))
    (loop,) = reviewer.finish().loops
    assert (loop.tool, loop.key, loop.count) == ("Read", "Read a.py", 3)


def test_a_call_without_a_tool_and_one_of_another_family_are_named_as_the_page_shows_them() -> None:
    reviewer = Reviewer()
    reviewer.call(record(3, tool=None))
    reviewer.call(record(5, tool="fs.read", family="mcp"))
    found = reviewer.finish()
    assert [item.tool for item in found.failed] == ["(none)", "mcp:fs.read"]
    assert found.went_wrong is not None and found.went_wrong.tool == "(none)"


def test_ambiguous_calls_are_kept_up_to_ten_times_the_listed_count() -> None:
    reviewer = Reviewer(ReviewOptions(listed=2))
    for line in range(3, 30):
        reviewer.call(record(line, outcome="ok", pairing="ambiguous"))
    assert reviewer.finish().ambiguous == tuple(range(3, 23))


def test_loops_are_listed_up_to_the_listed_count(tmp_path: Path) -> None:
    body = "t:poll → [ok]\n" * 5 + "t:wait → [ok]\n" * 5
    assert len(review(tmp_path, body).loops) == 2
    found = review(tmp_path, body, listed=1)
    assert [loop.tool for loop in found.loops] == ["poll"]


def test_the_review_counts_calls_and_retries_and_keeps_its_options(tmp_path: Path) -> None:
    body = 't:Bash cmd="make" → [error] exit 2\nt:Bash cmd="make" → [error] exit 2\nt:Read a.py → [ok]\n'
    found = review(tmp_path, body, loop_min=6)
    assert found.calls == 3 and found.retry_count == 1 and [c.line for c in found.retries] == [8]
    assert found.options.loop_min == 6 and found.to_json()["options"]["loop_min"] == 6


def test_a_failure_on_the_first_line_of_a_headerless_log_is_what_went_wrong(tmp_path: Path) -> None:
    found = review(tmp_path, "t:Bash → [error] exit 1\nt:Read a → [ok]\n", header="")
    assert found.went_wrong is not None and found.went_wrong.line == 1


def test_the_reviewer_holds_no_key_once_every_call_is_decided(tmp_path: Path) -> None:
    # A completing line's key (a `t:` line that completes an earlier start by id) is let go
    # with its call, not kept to the end of the file.
    from bbox_lark import parse
    from bbox_lark.numbers.session import SessionCounter

    text = HEADER + "t!:Bash id=c1 → [running]\nt:Bash id=c1 → [ok]\nt:Read a → [error] x\n"
    reviewer = Reviewer()
    feed = ReviewFeed(reviewer)
    counter = SessionCounter({})
    for event in parse(text).events:
        feed.event(event)
        for made in counter.feed(event):
            feed.record(made, event)
    pending, _, _ = counter.finish()
    assert pending == []
    assert reviewer._open == {}
    assert reviewer.finish().calls == 2


def test_an_earlier_success_decided_last_does_not_make_a_failure_before_a_later_one_count(
    tmp_path: Path,
) -> None:
    # Records come as calls complete: Read at 9 succeeds first, then Read at 7 (an earlier
    # success), then the failure at 8, which a success after it (9) has made good. Nothing
    # went wrong; the review must not fall back to the success decided last.
    body = (
        "t!:Read id=a n=1 → [running]\n"
        "t!:Read id=f n=2 → [running]\n"
        "t:Read n=3 → [ok]\n"
        "o: id=a → [ok]\n"
        "o: id=f → [error] gone\n"
    )
    found = review(tmp_path, body)
    assert found.failed_count == 1 and [item.line for item in found.failed] == [8]
    assert found.went_wrong is None


# -- the review as JSON (stats --json, the report's facts) and the costliest responses --------


def test_the_review_of_a_known_session_as_json(tmp_path: Path) -> None:
    from test_review import SESSION

    path = tmp_path / "s.bbox"
    path.write_text(SESSION, encoding="utf-8")
    data = review_bbox(path).to_json()

    def item(line: int, tool: str, outcome: str, text: str, pairing: str | None = "id") -> dict[str, Any]:
        return {
            "line": line,
            "tool": tool,
            "outcome": outcome,
            "end_line": None,
            "text": text,
            "pairing": pairing,
        }

    edit = item(15, "Edit", "error", "[err: old_string not found]")
    priced = _prices_installed()
    assert data == {
        "calls": 10,
        "failed": {
            "count": 2,
            "items": [item(13, "Bash", "error", "[error] Exit code 101 ts=2025-12-20T14:20:00Z"), edit],
        },
        "never_completed": {"count": 1, "items": [item(20, "Grep", "pending", "")]},
        "retries": {"count": 1, "items": [item(14, "Bash", "ok", "", None)]},
        "loops": [
            {
                "tool": "issue_ready",
                "key": "issue_ready",
                "count": 5,
                "first_line": 8,
                "last_line": 12,
                "lines": [8, 9, 10, 11, 12],
                "in_a_row": True,
            }
        ],
        "long_gaps": {"count": 1, "items": [{"line": 13, "previous": 12, "seconds": 1195.0}]},
        "costliest_responses": [
            {
                "line": 17,
                "last_line": 18,
                "model": "claude-sonnet-4-5",
                "tokens_in": 10,
                "tokens_out": 900,
                "tokens_cached": 100,
                "weight": 4520.0,  # 900 x 5 + 10 + 100 x 0.1
                # $3 / $15 / $0.30 a million tokens in, out and read from the cache.
                "estimated_usd": "0.01356000" if priced else None,
            }
        ],
        "went_wrong": edit,
        "ambiguous": [],
        "options": {"loop_min": 5, "loop_window": 20, "gap_seconds": 300.0, "costliest": 5},
    }


def _prices_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("genai_prices") is not None


def _response(
    first: int, tokens_in: int = 0, tokens_out: int = 0, cached: int = 0, model: str | None = None
) -> Any:
    from bbox_lark.numbers.usage import Response, Usage

    usage = Usage(tokens_in=tokens_in, tokens_out=tokens_out, tokens_cached=cached)
    return Response(1, first, first + 1, usage, model)


def test_the_costliest_responses_are_the_heaviest_earlier_first_on_a_tie() -> None:
    reviewer = Reviewer(ReviewOptions(costliest=2), model="claude-sonnet-4-5")
    for first, out in ((3, 2), (5, 6), (7, 6), (9, 4), (11, 6)):
        reviewer.response(_response(first, tokens_out=out))
    reviewer.response(_response(13))  # no tokens: not a costly response
    costliest = reviewer.finish().costliest
    assert [(c.line, c.last_line, c.weight) for c in costliest] == [(5, 6, 30.0), (7, 8, 30.0)]


def test_a_responses_weight_counts_output_input_and_cache_reads_and_its_own_model() -> None:
    reviewer = Reviewer(ReviewOptions(costliest=3))
    reviewer.response(_response(3, tokens_in=7, tokens_out=1, cached=30, model="gpt-4o"))
    reviewer.response(_response(5, cached=2))  # 0.2: still a weight
    reviewer.response(_response(7, tokens_in=1, model="claude-sonnet-4-5"))
    found = reviewer.finish().costliest
    assert [(c.line, c.weight, c.model) for c in found] == [
        (3, 15.0, "gpt-4o"),
        (7, 1.0, "claude-sonnet-4-5"),
        (5, 0.2, None),
    ]
    assert [(c.tokens_in, c.tokens_out, c.tokens_cached) for c in found] == [(7, 1, 30), (1, 0, 0), (0, 0, 2)]
    first = found[0]
    assert found[2].to_json()["estimated_usd"] is None and found[2].estimated_usd is None
    only_empty = Reviewer()
    only_empty.response(_response(3))
    assert only_empty.finish().costliest == ()  # no tokens: no weight, not listed
    if _prices_installed():
        assert first.estimated_usd is not None and first.estimated_usd > 0
        assert found[2].estimated_usd is None  # no model: no price


def test_a_gap_is_longer_than_the_threshold_and_a_clock_going_back_keeps_the_latest_time() -> None:
    reviewer = Reviewer(ReviewOptions(gap_seconds=10, listed=1))
    for line, seconds in ((3, 100.0), (4, 110.0), (5, 105.0), (6, 120.12345), (7, 140.75), (8, 160.8)):
        reviewer.time(line, seconds)
    found = reviewer.finish()
    # 110 -> 120.12345 is over 10 s after the latest time (110, not the 105 read after it);
    # the threshold itself (100 -> 110) is not a gap; one listed (to the millisecond), three
    # counted.
    assert [(g.previous, g.line, g.seconds) for g in found.gaps] == [(4, 6, 10.123)]
    assert found.gap_count == 3
    same = Reviewer(ReviewOptions(gap_seconds=10))
    for line, seconds in ((3, 100.0), (4, 100.0), (5, 200.0)):
        same.time(line, seconds)
    assert [(g.previous, g.line) for g in same.finish().gaps] == [(4, 5)]  # the later of two equal times


def test_the_call_key_writes_list_arguments_and_leaves_out_extra_fields() -> None:
    event = SimpleNamespace(
        name="Grep", args=(("a", "b"), "x  y"), fields={"z": "1", "extra.k": "v", "a": "2"}
    )
    assert call_key(event) == "Grep [a, b] x y a=2 z=1"  # type: ignore[arg-type]
    assert call_key(SimpleNamespace(name=None, args=(), fields={})) == ""  # type: ignore[arg-type]


def test_loops_within_the_window_its_edge_and_far_into_the_session(tmp_path: Path) -> None:
    filler = "".join(f"t:Read f{n} → [ok]\n" for n in range(25))
    # Five polls, each 3 calls after the last (the window), far into the session.
    polls = "".join(f"t:poll → [ok]\nt:Read a{n} → [ok]\nt:Read b{n} → [ok]\n" for n in range(5))
    (loop, *others) = review(tmp_path, filler + polls, loop_window=3, listed=2).loops
    assert (loop.tool, loop.count, loop.first_line, loop.last_line, loop.lines) == (
        "poll",
        5,
        32,
        44,
        (32, 35),
    )
    assert not loop.in_a_row and others == []
    assert review(tmp_path, filler + polls, loop_window=2).loops == ()


def test_a_loop_broken_off_and_started_again_and_the_order_of_loops(tmp_path: Path) -> None:
    body = "t:poll → [ok]\n" * 5 + "".join(f"t:Read f{n} → [ok]\n" for n in range(5)) + "t:poll → [ok]\n" * 6
    body += "".join(f"t:wait → [ok]\nt:Read x{n} → [ok]\n" for n in range(7))
    found = review(tmp_path, body, loop_window=3)
    # In a row first (the longer first), then the others.
    assert [(loop.tool, loop.count, loop.first_line, loop.in_a_row) for loop in found.loops] == [
        ("poll", 6, 17, True),
        ("poll", 5, 7, True),
        ("wait", 7, 23, False),
    ]


def test_retries_are_counted_past_the_listed_ones(tmp_path: Path) -> None:
    body = 't:Bash cmd="make" → [error] 2\n' * 4
    found = review(tmp_path, body, listed=2)
    assert found.retry_count == 3 and [(c.line, c.tool, c.outcome) for c in found.retries] == [
        (8, "Bash", "error"),
        (9, "Bash", "error"),
    ]


def test_a_long_result_is_cut_to_its_snippet_and_one_of_the_snippets_length_is_kept(tmp_path: Path) -> None:
    from bbox_lark.numbers.review import SNIPPET

    long = "x" * 400
    exact = "[error] " + "y" * (SNIPPET - 8)
    # A result is cut to twice the snippet's length before its spaces collapse (a bound on
    # the work for a huge result): here 300 spaces leave 13 characters of text.
    spaced = "[error]" + " " * 300 + "z" * 200
    body = f"t:A → [error] {long}\nt:B → {exact}\nt:C → {spaced}\n"
    texts = [item.text for item in review(tmp_path, body).failed]
    assert texts[0] == ("[error] " + long)[: SNIPPET - 1] + "…" and len(texts[0]) == SNIPPET
    assert texts[1] == exact and len(exact) == SNIPPET
    assert texts[2] == "[error] " + "z" * (2 * SNIPPET - 307)


def test_session_costs_keep_the_stated_and_the_estimated_apart() -> None:
    from decimal import Decimal

    from bbox_lark.numbers.review import Costs, session_costs

    assert session_costs(None) == Costs(None, None, None)
    totals = SimpleNamespace(
        stated_cost_usd=Decimal("1.5"),
        estimated_cost_usd=Decimal("0.25"),
        estimate_note="a note",
        usage_source="metrics",
    )
    assert session_costs(totals) == Costs(Decimal("1.5"), Decimal("0.25"), "a note")  # type: ignore[arg-type]
    totals.usage_source = None
    assert session_costs(totals) == Costs(Decimal("1.5"), Decimal("0.25"), None)  # type: ignore[arg-type]
    assert session_costs(SimpleNamespace(usage_source=None)) == Costs(None, None, None)  # type: ignore[arg-type]
    assert session_costs(SimpleNamespace(usage_source="responses")) == Costs(None, None, None)  # type: ignore[arg-type]


def test_elapsed_marks_keep_their_own_clock_and_a_call_named_elapsed_is_a_call(tmp_path: Path) -> None:
    # ts= lines one minute apart, # t= marks four hours apart: the ts clock is the one shown.
    body = (
        "# t=00:00:00\nu: a ts=2025-12-20T14:00:00Z\n"
        "t:elapsed → [ok] ts=2025-12-20T14:01:00Z\n# t=04:00:00\n"
        "u: b ts=2025-12-20T14:30:00Z\n"
    )
    found = review(tmp_path, body)
    assert [(g.previous, g.line) for g in found.gaps] == [(9, 11)] and found.gap_count == 1


def test_the_review_reads_past_blank_and_continuation_lines_and_ends_the_last_response(
    tmp_path: Path,
) -> None:
    body = (
        "u: go\n\nt:Bash → [error] 1\n  more output\nt:Bash → [error] 1\na: done tokens_in=3 tokens_out=2\n"
    )
    found = review(tmp_path, body)
    assert found.calls == 2 and found.retry_count == 1
    assert [(c.line, c.tokens_out, c.model) for c in found.costliest] == [(12, 2, "claude-sonnet-4-5")]


def test_a_header_model_that_is_not_text_prices_nothing_and_undecodable_bytes_are_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.bbox"
    header = HEADER.replace("model: claude-sonnet-4-5", "model: [a, b]")
    path.write_bytes(
        header.encode()
        + b"u: caf\xe9\r\na: ok tokens_in=3 tokens_out=2\nt:Bash \xff \xe2\x86\x92 [error] 1\n"
    )
    found = review_bbox(path)
    assert [(c.line, c.model) for c in found.costliest] == [(8, None)]
    assert [item.line for item in found.failed] == [9] and found.calls == 1


def test_a_call_completed_by_a_line_without_a_result_is_reviewed(tmp_path: Path) -> None:
    found = review(tmp_path, "t!:Bash id=c1 → [running]\nt:Bash id=c1\n")
    assert found.calls == 1 and found.failed == () and found.pending == ()
