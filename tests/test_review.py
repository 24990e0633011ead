"""What went wrong in a session (bbox_lark.numbers.review): each fact on a session whose answer is known."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from bbox_lark.numbers.review import CallItem, ReviewOptions, call_key, review_bbox

SESSION = """\
---
format: bbox/1
id: r-1
repo_sha: 215db51
model: claude-sonnet-4-5
---
@start ts=2025-12-20T14:00:00Z
t:issue_ready → [ok] none ts=2025-12-20T14:00:01Z
t:issue_ready → [ok] none ts=2025-12-20T14:00:02Z
t:issue_ready → [ok] none ts=2025-12-20T14:00:03Z
t:issue_ready → [ok] none ts=2025-12-20T14:00:04Z
t:issue_ready → [ok] none ts=2025-12-20T14:00:05Z
t:Bash cmd="cargo test" → [error] Exit code 101 ts=2025-12-20T14:20:00Z
t:Bash cmd="cargo  test" → [ok] 12 passed
t:Edit file_path=a.rs → [err: old_string not found]
t:Read file_path=a.rs → [ok]
a: thinking hard tokens_in=10 tokens_out=900 tokens_cached=100
a: small tokens_in=10 tokens_out=1 tokens_cached=100
u: next
t!:Grep id=g1 pattern=x → [running]
@end
"""


def review(tmp_path: Path, text: str = SESSION, **options: object) -> object:
    path = tmp_path / "s.bbox"
    path.write_text(text, encoding="utf-8")
    return review_bbox(path, ReviewOptions(**options))  # type: ignore[arg-type]


def test_each_fact_of_a_known_session(tmp_path: Path) -> None:
    found = review(tmp_path)
    assert [c.line for c in found.failed] == [13, 15] and found.failed_count == 2
    assert found.failed[0].text.startswith("[error] Exit code 101")
    assert [c.line for c in found.pending] == [20] and found.pending_count == 1
    # The same call again right after it failed, whitespace aside: a retry.
    assert [c.line for c in found.retries] == [14]
    (loop,) = found.loops
    assert (loop.tool, loop.count, loop.lines, loop.in_a_row) == ("issue_ready", 5, (8, 9, 10, 11, 12), True)
    assert [(g.previous, g.line) for g in found.gaps] == [(12, 13)]  # 20 minutes
    # Edit failed and no Edit succeeded later; Bash recovered.
    assert found.went_wrong is not None and found.went_wrong.line == 15
    assert found.costliest[0].line == 17 and found.costliest[0].tokens_out == 900
    data = found.to_json()
    assert data["loops"][0]["count"] == 5 and data["options"]["loop_min"] == 5


def test_the_thresholds_are_options(tmp_path: Path) -> None:
    assert review(tmp_path, loop_min=6).loops == ()
    assert review(tmp_path, gap_seconds=3600).gaps == ()
    assert len(review(tmp_path, costliest=1).costliest) == 1


def test_a_loop_within_a_window_not_in_a_row(tmp_path: Path) -> None:
    body = "".join(f"t:poll → [ok]\nt:Read file_path=f{n}.rs → [ok]\n" for n in range(6))
    text = "---\nformat: bbox/1\nid: w\nrepo_sha: 215db51\n---\n" + body
    (loop,) = review(tmp_path, text).loops
    assert loop.count == 6 and not loop.in_a_row
    assert review(tmp_path, text, loop_window=1).loops == ()


def test_the_call_key_leaves_out_ids_times_and_usage() -> None:
    from bbox_lark import parse

    events = [
        n
        for n in parse(
            "---\nformat: bbox/1\nid: k\nrepo_sha: 215db51\n---\n"
            't!:Bash id=a ts=2025-12-20T14:00:00Z cmd="make  test" tokens_in=3 → [running]\n'
            't!:Bash id=b cmd="make test" → [running]\n'
        ).events
        if getattr(n, "kind", None) == "tool_start"
    ]
    assert call_key(events[0]) == call_key(events[1]) == "Bash cmd=make test"


def test_an_ambiguous_pairing_is_marked_where_the_numbers_say_it() -> None:
    """The hook for bbox_lark.numbers.session' ``pairing`` (id, order, ambiguous): read when a
    record has it, None when no record does."""
    from types import SimpleNamespace

    from bbox_lark.numbers.review import Reviewer

    def record(line: int, pairing: str | None) -> object:
        fields = {"start_line": line, "end_line": line + 1, "tool": "Bash", "family": "tool", "args": ""}
        if pairing is not None:
            fields["pairing"] = pairing
        return SimpleNamespace(outcome="ok", **fields)

    reviewer = Reviewer()
    reviewer.call(record(3, "id"))  # type: ignore[arg-type]
    reviewer.call(record(5, "ambiguous"))  # type: ignore[arg-type]
    assert reviewer.finish().ambiguous == (5,)
    plain = Reviewer()
    plain.call(record(3, None))  # type: ignore[arg-type]
    assert plain.finish().ambiguous is None


# -- the listed failures and "what went wrong" on long logs ------------------------------------


def _calls_text(plan: list[tuple[int, int, int]]) -> tuple[str, list[tuple[int, str, str, int | None]]]:
    """A session of calls from ``plan`` (tool, outcome, how: inline, completed later by id, or
    never completed) and each call's (start line, tool, outcome, completing line) as the log
    states them (the completing line None for an inline or pending call)."""
    tools, outcomes = ("Read", "Bash", "Edit"), ("ok", "error")
    lines = ["---", "format: bbox/1", "id: r-2", "repo_sha: 215db51", "---", "@start"]
    calls: list[list[Any]] = []
    waiting: list[tuple[int, str]] = []

    def complete() -> None:
        for index, line in reversed(waiting):
            lines.append(line)
            calls[index][3] = len(lines)
        waiting.clear()

    for n, (tool_at, outcome_at, how) in enumerate(plan):
        tool, outcome = tools[tool_at], outcomes[outcome_at]
        result = "[ok]" if outcome == "ok" else "[error] exit 1"
        if how == 0:
            lines.append(f"t:{tool} n={n} → {result}")
        elif how == 1:  # completed by id after the next call's start: records come out of order
            lines.append(f"t!:{tool} id=c{n} n={n} → [running]")
            waiting.append((n, f"o: id=c{n} → {result}"))
        else:
            lines.append(f"t!:{tool} id=c{n} n={n} → [running]")
            outcome = "pending"
        calls.append([len(lines), tool, outcome, None])
        if how != 1:
            complete()
    complete()
    lines.append("@end")
    return "\n".join(lines) + "\n", [(call[0], call[1], call[2], call[3]) for call in calls]


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 2)), max_size=60))
@example([(0, 0, 1), (0, 1, 0)])  # a success completed after a later failure of its tool
@settings(max_examples=150)
def test_failures_listed_and_what_went_wrong_match_every_call(plan: list[tuple[int, int, int]]) -> None:
    # The reviewer keeps the first `listed` failures and pending calls, and for "what went
    # wrong" only the failures after their tool's latest success: each answer must be what
    # all the calls say.
    text, calls = _calls_text(plan)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.bbox"
        path.write_text(text, encoding="utf-8")
        found = review_bbox(path, ReviewOptions(listed=3))
    failed = [call for call in calls if call[2] == "error"]
    pending = [call for call in calls if call[2] == "pending"]

    def listed(items: tuple[CallItem, ...]) -> list[tuple[int, str, str, int | None]]:
        return [(item.line, item.tool, item.outcome, item.end_line) for item in items]

    assert listed(found.failed) == failed[:3] and found.failed_count == len(failed)
    assert listed(found.pending) == pending[:3] and found.pending_count == len(pending)
    assert all(item.text.startswith("[error] exit 1") for item in found.failed)
    last_ok = {tool: line for line, tool, outcome, _ in calls if outcome == "ok"}
    wrong = next((call for call in failed if call[0] > last_ok.get(call[1], 0)), None)
    assert (found.went_wrong and listed((found.went_wrong,))[0]) == wrong


def test_listing_no_call_still_counts_them_and_finds_what_went_wrong(tmp_path: Path) -> None:
    # listed=0 raised IndexError once the review kept its listed calls in a bounded heap.
    found = review(tmp_path, listed=0)
    assert found.failed == () and found.failed_count == 2
    assert found.pending == () and found.pending_count == 1
    assert found.went_wrong is not None and found.went_wrong.line == 15
