"""What went wrong (``numbers/review.py``): the facts the mutation run of the Reviewer found
unguarded (docs/testing.md, its row), each through the Review the page and ``stats --json``
read, or through the Reviewer's own API where only it can tell."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bbox_lark.numbers.review import Reviewer, ReviewFeed, ReviewOptions, review_bbox

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
