"""Statistics (``bbox_lark.numbers.stats``), with every expectation counted by hand (DECISIONS §10)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import bbox_lark
from bbox_lark.numbers.stats import Stats, Totals, combine_stats, compute_stats
from bbox_lark.numbers.usage import Usage
from bbox_lark.syntax.correlate import pair_calls
from bbox_lark.syntax.grammar import vocabulary

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"


def stats_of(body: str, header: str = HEADER) -> Stats:
    return compute_stats(bbox_lark.parse(header + body))


# -- lines and events -------------------------------------------------------------------


def test_line_counts() -> None:
    text = (
        "\n"  # 1: blank before the header (part of the header block)
        "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\n"  # 2-6
        "u: hi\n"  # 7 content
        "\n"  # 8 blank
        "   \n"  # 9 blank (whitespace only)
        "# a comment\n"  # 10 comment
        "t:read a.rs → [2 lines]\n"  # 11 content
        "  line one\n"  # 12 continuation
        "\tline two\n"  # 13 continuation
        "tool: what is this\n"  # 14 unknown
        "@end\n"  # 15 content (lifecycle)
    )
    lines = compute_stats(bbox_lark.parse(text)).lines
    assert lines.to_json() == {
        "total": 15,
        "header": 6,
        "body": 9,
        "content": 11,  # 5 header lines that are not blank + u, t, 2 continuations, unknown, @end
        "blank": 3,
        "comment": 1,
        "continuation": 2,
        "unknown": 1,
    }
    assert lines.total == lines.content + lines.blank + lines.comment
    assert lines.total == lines.header + lines.body


def test_line_counts_without_header_or_final_newline() -> None:
    lines = compute_stats(bbox_lark.parse("a: one\r\n\r\n# two")).lines
    assert (lines.total, lines.header, lines.body) == (3, 0, 3)
    assert (lines.content, lines.blank, lines.comment) == (1, 1, 1)


def test_empty_file() -> None:
    stats = compute_stats(bbox_lark.parse(b""))
    assert stats.lines.total == 0
    assert stats.steps.min is None and stats.steps.max is None
    assert stats.metrics.totals == Totals()


def test_event_counts_include_every_kind() -> None:
    stats = stats_of("u: a\nu: b\na: c\nt:read x\nt!:test → [running]\nt~:test\nt:test → [ok]\n# c\n@start\n")
    events = dict(stats.events)
    assert list(events) == list(vocabulary().event_kinds)
    assert events["user"] == 2
    assert events["agent"] == 1
    assert events["tool"] == 2
    assert events["tool_start"] == 1
    assert events["tool_progress"] == 1
    assert events["comment"] == 1
    assert events["lifecycle"] == 1
    assert events["mcp"] == 0
    assert stats.event_count("user") == 2


def test_lifecycle_by_primitive() -> None:
    stats = stats_of("@start\n@checkpoint hour=4\n@pause\n@resume\n@checkpoint hour=8\n@end\n")
    assert stats.lifecycle == (("checkpoint", 2), ("end", 1), ("pause", 1), ("resume", 1), ("start", 1))


# -- steps and timestamps ---------------------------------------------------------------


def test_step_range() -> None:
    stats = stats_of(
        "@start step=3\n"
        "a: one step=5\n"
        "t:read a step=4 → [ok]\n"
        "# metrics step=99 prompt=1\n"  # a reference, not a step
        "# anchor step=0\n"  # a reference too
        "a: again step=5\n"
        "a: bad step=x\n"  # malformed: no step
    )
    assert stats.steps.to_json() == {"min": 3, "max": 5, "distinct": 3, "lines": 4}


def test_no_steps() -> None:
    assert stats_of("a: hello\n").steps.to_json() == {"min": None, "max": None, "distinct": 0, "lines": 0}


def test_timestamps_count_valid_ones() -> None:
    stats = stats_of(
        "u: hi ts=2025-12-18T03:21:11Z\n"
        "a: hi ts=2025-12-18T03:21:12+02:00\n"
        "a: no zone ts=2025-12-18T03:21:13\n"  # invalid (W005), not counted
        "a: none\n"
    )
    assert stats.timestamps == 2


# -- calls ------------------------------------------------------------------------------


def test_start_and_completion_are_one_call() -> None:
    stats = stats_of(
        "t!:test id=c1 cargo test → [running]\n"
        "t~:test id=c1 [12/128]\n"  # progress: no call
        "t~:test id=c1 [64/128]\n"
        "t:test id=c1 → [ok] 128 passed\n"  # completes c1: no second call
    )
    assert stats.tools.total == 1
    assert stats.tools.by_name == (("test", 1),)
    assert stats.tools.open == 0
    assert stats.event_count("tool_progress") == 2


def test_anonymous_start_is_completed_by_next_call_of_same_name() -> None:
    stats = stats_of(
        "t!:build make → [running]\n"
        "t~:build 50%\n"
        "t:lint → [ok]\n"  # another tool: its own call
        "t:build → [ok]\n"  # completes the anonymous start
        "t:build → [ok]\n"  # nothing left open: a new call
    )
    assert dict(stats.tools.by_name) == {"build": 2, "lint": 1}
    assert stats.tools.total == 3
    assert stats.tools.open == 0


def test_span_and_id_are_separate_keys() -> None:
    stats = stats_of(
        "t!:grep span=k1 → [running]\n"
        "t:grep id=k1 → [ok]\n"  # id k1 is not span k1: a call of its own
        "t:grep span=k1 → [ok]\n"  # completes the span
    )
    assert stats.tools.total == 2
    assert stats.tools.open == 0
    assert (stats.call_ids, stats.spans) == (1, 1)


def test_observation_completes_a_running_call() -> None:
    stats = stats_of(
        "t:test id=c2 → [running]\n"
        "o: id=c2 → [ok]\n"
        "t:read id=c3 a.rs → [3 lines]\n"  # complete in itself
        "o: id=c3 → [ok]\n"  # an observation is never a call
    )
    assert stats.tools.total == 2
    assert stats.event_count("observation") == 2


def test_calls_never_completed_stay_open() -> None:
    stats = stats_of("t!:deploy id=d1 → [running]\nt!:test → [running]\nt:read a\n")
    assert stats.tools.total == 3
    assert stats.tools.open == 2


def test_mcp_calls_by_server_method() -> None:
    stats = stats_of(
        "c:github.issues id=m1 state=open → [pending]\n"
        "c:github.issues id=m1 → [8 issues]\n"  # completion
        "c:github.issues state=closed → [2 issues]\n"
        "c:linear.search q=ads → [1 match]\n"
        "c:github → [ok]\n"  # a server without a method
    )
    assert stats.mcp.by_name == (("github.issues", 2), ("github", 1), ("linear.search", 1))
    assert stats.mcp.total == 4


def test_subagents_by_type() -> None:
    stats = stats_of(
        'x:explore id=s1 "find tests" → [launched]\n'
        'o: id=s1 → summary="3 files"\n'
        'x:explore id=s2 "find docs" → [started]\n'
        'x:explore id=s2 → summary="2 files"\n'
        'x:plan "design" → [ok]\n'
        'x:review id=s3 "check" → [launched]\n'  # never completed
    )
    assert stats.subagents.by_name == (("explore", 2), ("plan", 1), ("review", 1))
    assert stats.subagents.open == 1


def test_questions_skills_and_plans_are_not_tool_calls() -> None:
    stats = stats_of('q: id=q1 "Which?" → [pending]\nq: id=q1 → [selected: a]\ns:deploy → [loaded]\n')
    assert stats.tools.total == 0
    assert stats.event_count("question") == 2


def test_distinct_call_ids() -> None:
    stats = stats_of(
        "t:read id=a1 x → [ok]\n"
        "t:read id=a2 y → [running]\n"
        "o: id=a2 → [ok]\n"  # same id again
        "t~:read span=p1\n"
        "x:explore id=a3 → [ok]\n"
        "@start id=sess_1\n"  # a session id, not a call id
        "a: note id=zzz\n"  # not a call line
    )
    assert stats.call_ids == 3
    assert stats.spans == 1


# -- redactions and blobs ---------------------------------------------------------------

SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


def test_redactions_by_kind() -> None:
    stats = stats_of(
        "t:read .env → API_KEY=[redacted:env_var] DB=[redacted:env_var]\n"
        "a: token [redacted:github_token]\n"
        "t:cat x → [ok]\n"
        "  secret [redacted:api_key]\n"  # continuation lines count too
        "# redactions=4\n"  # the stated count is not a marker
    )
    assert stats.redactions.total == 4
    assert stats.redactions.by_kind == (("env_var", 2), ("api_key", 1), ("github_token", 1))


def test_blobs() -> None:
    stats = stats_of(
        f"t:read a.rs → @blob sha256={SHA} bytes=4\n"
        f"t:read b.rs → @blob sha256={SHA.upper()} bytes=4 mime=text/plain\n"  # same blob
        "t:read c.rs → @blob sha256=ab12cd34 bytes=1000\n"
        "t:read d.rs → [ok]\n"
        "  @blob sha256=ffff00 bytes=big\n"  # in a continuation; no valid size
    )
    assert stats.blobs.to_json() == {"count": 4, "bytes": 1008, "distinct": 3}


# -- tokens and cost --------------------------------------------------------------------


def test_metrics_once_per_step_with_aliases() -> None:
    stats = stats_of(
        "a: first step=1 # metrics prompt=100 completion=10 cached=50 cost=0.1\n"  # step 1 (from the event)
        "# metrics step=1 prompt_tokens=999 completion_tokens=999\n"  # step 1 again: skipped
        "a: second step=2\n"
        "# metrics step=2 tokens_in=200 tokens_out=20 tokens_cached=60 cost_usd=$0.2\n"
        "a: third step=3 # metrics prompt_tokens=300 completion_tokens=30 cached_tokens=70 cost_usd=0.3\n"
        "a: third again step=3 # metrics prompt=7\n"  # step 3 again: skipped
    )
    metrics = stats.metrics
    assert metrics.totals == Totals(prompt=600, completion=60, cached=180, tokens=None, cost=Decimal("0.6"))
    assert (metrics.seen, metrics.counted, metrics.skipped) == (5, 3, 2)
    assert stats.to_json()["tokens"]["metrics"]["cost"] == 0.6  # exact: summed as decimals


def test_metrics_without_step_each_count() -> None:
    stats = stats_of("a: one # metrics prompt=5\na: two # metrics prompt=5\n# metrics prompt=5 cost=$1\n")
    assert stats.metrics.totals.prompt == 15
    assert stats.metrics.totals.cost == Decimal(1)
    assert stats.metrics.counted == 3


def test_metrics_first_alias_wins_and_bad_values_are_ignored() -> None:
    stats = stats_of(
        "# metrics step=1 prompt=1 prompt_tokens=2 tokens_in=3 completion=x completion_tokens=4\n"
        "# metrics step=2 cost=free cached=1.5 tokens=12\n"
    )
    totals = stats.metrics.totals
    assert totals.prompt == 1
    assert totals.completion == 4  # `x` is no number; the next alias is taken
    assert totals.cached is None  # 1.5 tokens is no count
    assert totals.cost is None
    assert totals.tokens == 12


def test_stated_totals_are_reported_beside_not_added() -> None:
    header = (
        "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n"
        "tokens_total_in: 1000\ntokens_total_out: 100\ntokens_cached: 500\n---\n"
    )
    body = (
        "@start\n"
        "a: work step=1 # metrics prompt=10 completion=1 cost=0.01\n"
        "@end tokens_in=900 tokens_out=90 cost_usd=$4.50\n"
        "# tokens=990 cost=$4.5\n"
    )
    stats = stats_of(body, header)
    assert stats.metrics.totals == Totals(prompt=10, completion=1, cost=Decimal("0.01"))
    assert stats.header_totals == Totals(prompt=1000, completion=100, cached=500)
    assert stats.end_totals == Totals(prompt=900, completion=90, cost=Decimal("4.50"))
    assert stats.summary_totals == Totals(tokens=990, cost=Decimal("4.5"))
    tokens = stats.to_json()["tokens"]
    assert tokens["metrics"]["prompt"] == 10
    assert tokens["header"] == {
        "prompt": 1000,
        "completion": 100,
        "cached": 500,
        "tokens": None,
        "cost": None,
        "cache_write": None,
    }
    assert tokens["end"]["cost"] == 4.5


def test_last_end_line_counts() -> None:
    stats = stats_of("@end tokens_in=1\n@resume\n@end tokens_in=2 prompt_tokens=7\n")
    assert stats.end_totals.prompt == 2


def test_header_fields_shown() -> None:
    stats = stats_of("", "---\nformat: bbox/1\nid: s\nrepo_sha: 0123456\nmodel: sonnet-4\nskills: [a]\n---\n")
    assert stats.header == (("format", "bbox/1"), ("id", "s"), ("model", "sonnet-4"), ("repo_sha", "0123456"))


# -- the pairing agrees with the correlation checks -------------------------------------

_LINES = st.builds(
    lambda prefix, name, key, result: f"{prefix}:{name}{key}{result}",
    st.sampled_from(["t", "t!", "t~", "o", "x", "c", "q"]),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["", " id=1", " id=2", " span=1"]),
    st.sampled_from(["", " → [ok]", " → [running]", " → [pending]", " → [launched]", " → text"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINES, max_size=12))
def test_pairing_matches_correlation_checks(lines: list[str]) -> None:
    text = HEADER + "".join(line + "\n" for line in lines)
    document = bbox_lark.parse(text, select=["W001", "W002", "W007", "W024", "W025"])
    pairing = pair_calls(document.events)

    def reported(*codes: str) -> list[int]:
        return sorted(d.line for d in document.diagnostics if d.code in codes)

    assert reported("W001") == sorted(e.line for e in pairing.orphan_progress)
    assert reported("W002") == sorted(e.line for e in pairing.unknown_observations)
    assert reported("W024") == sorted(e.line for e in pairing.ambiguous)
    assert reported("W007", "W025") == sorted(e.line for e in pairing.open_starts)
    # Every registering line is a call or a completion, never both.
    calls = {e.line for e in pairing.calls}
    assert not calls & set(pairing.completes)
    registering = {e.line for e in document.events if e.prefix in ("t", "t!", "x", "c", "q")}
    assert calls | (registering & set(pairing.completes)) == registering


# -- outcomes, usage and cost (bbox_lark.numbers.session), and all cores --------------------------


def test_outcomes_per_tool_in_json() -> None:
    value = stats_of(
        "t!:bash id=1 → [running]\no: id=1 → [error] Exit code 1\n"
        "t:bash → [ok]\nt!:bash id=2\nt:lint → [skip]\n"
    ).to_json()
    tool = value["calls"]["tool"]
    assert tool["by_tool"]["bash"] == {
        "calls": 3,
        "ok": 1,
        "error": 1,
        "pending": 1,
        "skipped": 0,
        "retry": 0,
        "unknown": 0,
    }
    assert tool["outcomes"]["skipped"] == 1
    assert tool["open"] == 1


def test_usage_per_session_under_the_writers_names() -> None:
    value = stats_of(
        "a: look tokens_in=2 tokens_out=2 tokens_cached=100\n"
        "t!:read id=A → [running] tokens_in=2 tokens_out=216 tokens_cached=100\n"
        "o: id=A → [ok]\n"
        "@end tokens_in=2 tokens_out=216 cost_usd=0.0330\n"
    ).to_json()
    usage = value["usage"]
    assert (usage["tokens_in"], usage["tokens_out"], usage["tokens_cached"]) == (2, 216, 100)
    assert (usage["source"], usage["responses"]) == ("responses", 1)
    assert value["cost_usd"] == 0.033
    assert value["tokens"]["end"]["prompt"] == 2  # stated, beside


def test_combined_usage_and_cost() -> None:
    one = stats_of("a: x tokens_in=1 tokens_out=2\n@end cost_usd=0.5\n")
    two = stats_of("# metrics prompt=10 completion=20\n")
    total = combine_stats([one, two])
    assert total.usage.usage == Usage(11, 22)
    assert total.usage.source == "mixed"
    assert total.cost.stated == Decimal("0.5")
    assert total.cost.estimated is None  # header has no model: no estimate
    assert total.cost.estimate_note == "2 file(s) with usage have no estimate"


def test_stats_on_all_cores_equals_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """``stats --jobs 2`` over the corpus prints exactly what ``--jobs 1`` prints (the
    pool is used even for a small run: the size threshold is lowered)."""
    import bbox_lark.checks.workflow
    import bbox_lark.files.runner
    from bbox_lark.cli import app

    monkeypatch.setattr(bbox_lark.files.runner, "PARALLEL_MIN_BYTES", 0)
    runner = CliRunner()
    corpus = str(Path(__file__).parent.parent / "corpus")
    for args in (["--json"], []):
        one = runner.invoke(app, ["stats", *args, "--jobs", "1", corpus])
        many = runner.invoke(app, ["stats", *args, "--jobs", "2", corpus])
        assert "Traceback" not in many.output
        assert (many.exit_code, many.stdout) == (one.exit_code, one.stdout)
    valid = corpus + "/valid"  # no findings on stderr: the output is JSON alone
    value = json.loads(runner.invoke(app, ["stats", "--json", "--jobs", "2", valid]).stdout)
    assert value == json.loads(runner.invoke(app, ["stats", "--json", "--jobs", "1", valid]).stdout)
    assert len(value["files"]) > 20


def test_stats_inputs_in_pool_keep_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import bbox_lark.checks.workflow
    import bbox_lark.files.runner
    from bbox_lark.files.config import Settings
    from bbox_lark.files.discover import FoundInput as Input
    from bbox_lark.numbers.stats_run import stats_inputs

    monkeypatch.setattr(bbox_lark.files.runner, "PARALLEL_MIN_BYTES", 0)
    paths = []
    for n in range(6):
        path = tmp_path / f"{n}.bbox"
        path.write_text(HEADER + "t:read a → [ok]\n" * (n + 1), encoding="utf-8")
        paths.append(str(path))
    items = [Input(p, Settings()) for p in paths]
    items.insert(2, Input(str(tmp_path / "missing.bbox"), Settings()))
    results = list(stats_inputs(items, jobs=2))
    assert [r.path for r in results] == [i.path for i in items]
    assert results[2].stats is None and results[2].problem
    assert [r.stats.tools.total for r in results if r.stats is not None] == [1, 2, 3, 4, 5, 6]


def test_bad_jobs_is_a_usage_error() -> None:
    from bbox_lark.cli import app

    result = CliRunner().invoke(app, ["stats", "--jobs", "0", "-"], input=HEADER)
    assert result.exit_code == 2
    assert "--jobs" in result.output and "Traceback" not in result.output


def test_a_claude_code_session_is_counted_through_its_bbox_form(tmp_path: Path) -> None:
    """``stats`` of a Claude Code session counts what ``convert`` makes of it (as ``report``
    shows it), and says so; before, its JSON records were counted as unknown bbox lines."""
    from bbox_lark.cli import app

    source = Path(__file__).parent / "fixtures" / "claude-code" / "tool-ids.jsonl"
    runner = CliRunner()
    converted = tmp_path / "tool-ids.bbox"
    assert runner.invoke(app, ["convert", str(source), "--to", "bbox", "-o", str(converted)]).exit_code == 0
    direct = runner.invoke(app, ["stats", "--json", str(source)])
    assert direct.exit_code == 0, direct.output
    assert f"{source}: read as claude-code (converted to bbox first)" in direct.stderr
    via = runner.invoke(app, ["stats", "--json", str(converted)])
    mine, theirs = json.loads(direct.stdout)["files"][0], json.loads(via.stdout)["files"][0]
    assert mine.pop("path") == str(source) and theirs.pop("path") == str(converted)
    assert mine == theirs
    assert mine["lines"]["unknown"] == 0 and mine["calls"]["tool"]["total"] > 0


def test_records_a_conversion_skipped_are_named_and_exit_1(tmp_path: Path) -> None:
    from bbox_lark.cli import app

    good = (Path(__file__).parent / "fixtures" / "claude-code" / "tool-ids.jsonl").read_bytes()
    source = tmp_path / "cut.jsonl"
    source.write_bytes(good.rstrip(b"\n") + b'\n{"type": "user", "message": \n')
    done = CliRunner().invoke(app, ["stats", str(source)])
    assert done.exit_code == 1, done.output
    assert "skipped: not a JSON record" in done.stderr
    assert "1 record(s) skipped (not counted)" in done.stderr
    assert "Traceback" not in done.output


def test_each_inputs_exit_code_is_decided_by_the_library() -> None:
    """The thin CLI: ``stats`` takes each input's exit code from :class:`FileStats`."""
    from bbox_lark.numbers.stats import compute_stats
    from bbox_lark.numbers.stats_run import FileStats
    from bbox_lark.syntax.nodes import Diagnostic

    clean = compute_stats(bbox_lark.parse("u: hi\n"))
    error = Diagnostic("E001", "error", 1, 1, "bad")
    warning = Diagnostic("W003", "warning", 1, 1, "odd")
    assert FileStats("a", clean).exit_code == 0
    assert FileStats("a", clean, errors=(warning,)).exit_code == 0
    assert FileStats("a", clean, errors=(error,)).exit_code == 1
    assert FileStats("a", clean, skipped=("a:1: skipped: x",)).exit_code == 1
    assert FileStats("a", problem="a: cannot read").exit_code == 2
    assert FileStats("a", counted_in="b").exit_code == 0


def test_distinct_counts_exactly_past_its_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Call ids are counted in bounded memory (sorted runs on disk, merged): the count is
    exact whatever the values hold (a separator, an escape, a control, a lone surrogate)
    and however duplicates fall across the runs."""
    import random

    from bbox_lark.numbers.stats import Distinct

    monkeypatch.setattr(Distinct, "LIMIT", 3)
    rng = random.Random(5)
    alphabet = ["a", "b", "\n", "\\", "\\n", "\x01", "\udced", "é", "𝄞", ""]
    for _ in range(200):
        values = [
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(0, 40))
        ]
        counter = Distinct()
        for value in values:
            counter.add(value)
        assert counter.count() == len(set(values)), values
