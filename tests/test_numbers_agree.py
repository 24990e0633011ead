"""A differential harness for numbers (issue 25, Deliver 2; docs/analytics.md, "How each
number is made").

For every session file of ``corpus/valid`` and ``../shared/corpus-external`` (the real logs,
the documentation's examples, the Claude Code samples and the ATIF trajectories; a foreign
file is read through its bbox form, as ``stats`` and ``report`` read it), the same session's
numbers (calls, outcomes per tool, usage, stated and estimated cost, guessed pairings) agree
across every path that reports them:

* ``stats`` (:func:`bbox_lark.numbers.stats.compute_stats`, what ``stats --json`` prints),
* the tables (:func:`bbox_lark.numbers.tables.session_rows`, what ``export`` writes as Parquet and
  ``query`` reads),
* the report's header numbers (:func:`bbox_lark.report.survey.survey`, the function the
  page's usage card reads),
* ATIF ``final_metrics`` of ``convert --to atif``,
* and across formats: bbox → ATIF → bbox, bbox → JSON Lines → bbox, Claude Code → bbox → ATIF.

And against figures computed here, independently of the numbers module: harbor-style totals
per API message on the Claude Code samples (records grouped by ``message.id``, the last
record's usage kept), and an ATIF file's own ``final_metrics``. ``query`` (DuckDB over the
same rows) is compared once over a folder.
"""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import bbox_lark
from bbox_lark.convert import convert, detect_format
from bbox_lark.numbers.outcomes import OUTCOMES, PAIRINGS
from bbox_lark.numbers.session import SessionTotals, document_numbers
from bbox_lark.numbers.stats import compute_stats
from bbox_lark.syntax.parser import iter_nodes

ROOT = Path(__file__).resolve().parent.parent
EXTERNAL = ROOT.parent / "shared" / "corpus-external"


def _files() -> list[Path]:
    found = sorted((ROOT / "corpus" / "valid").glob("*.bbox"))
    for folder in ("rlog-real", "bbox-docs", "claude-code", "atif"):
        if (EXTERNAL / folder).is_dir():
            found += sorted(p for p in (EXTERNAL / folder).iterdir() if p.is_file())
    found += sorted((ROOT / "tests" / "fixtures" / "claude-code").glob("*.jsonl"))
    return found


def _bbox_text(path: Path) -> str | None:
    """The file's bbox form (foreign formats converted as ``stats`` reads them), or None when
    it is no session bbox-lark reads."""
    data = path.read_bytes()
    fmt = detect_format(path, data[: 1 << 16])
    if fmt in (None, "bbox"):
        return data.decode("utf-8", "surrogateescape")
    try:
        return convert(data, fmt, to="bbox", path=path).text
    except Exception:  # a refused input (an invalid ATIF sample): no numbers to compare
        return None


FILES = [path for path in _files()]


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _numbers(text: str) -> SessionTotals:
    return document_numbers(bbox_lark.parse(text)).totals


def _usage(totals: SessionTotals) -> tuple[Any, ...]:
    u = totals.usage
    return (u.tokens_in, u.tokens_out, u.tokens_cached, totals.usage_source)


def _per_tool(totals: SessionTotals) -> dict[tuple[str, str], tuple[int, ...]]:
    return {(t.family, t.tool): t.outcomes for t in totals.tools}


def _float(value: Decimal | None) -> float | None:
    return float(value) if value is not None else None


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_every_path_reports_the_same_numbers(path: Path) -> None:
    text = _bbox_text(path)
    if text is None:
        pytest.skip("no session bbox-lark reads")
    assert_every_path_agrees(path, text)


def assert_every_path_agrees(path: Path, text: str) -> None:
    """stats, the tables, and the report's survey give ``text``'s numbers alike (also used by
    test_numbers_generated.py on generated sessions)."""
    document = bbox_lark.parse(text)
    totals = document_numbers(document).totals

    # stats (what `stats --json` prints)
    stats = compute_stats(document)
    assert stats.tools.total + stats.mcp.total + stats.subagents.total == sum(
        t.calls for t in totals.tools if t.family in ("tool", "mcp", "subagent")
    )
    assert (stats.usage.usage, stats.usage.source) == (totals.usage, totals.usage_source)
    assert (stats.cost.stated, stats.cost.estimated) == (totals.stated_cost_usd, totals.estimated_cost_usd)
    assert stats.pairing == totals.pairing
    for family, counts in (("tool", stats.tools), ("mcp", stats.mcp), ("subagent", stats.subagents)):
        mine = {name: outcomes for (fam, name), outcomes in _per_tool(totals).items() if fam == family}
        assert dict(counts.by_tool) == mine

    # the tables (export's Parquet rows, query's rows)
    from bbox_lark.numbers.tables import session_rows

    rows = session_rows(str(path), text)
    session = {name: values[0] for name, values in rows.tables["sessions"].items()}
    assert session["calls"] == totals.calls
    assert session["calls_error"] == totals.outcome_count("error")
    assert session["calls_pending"] == totals.outcome_count("pending")
    assert session["calls_ambiguous"] == totals.pairing[PAIRINGS.index("ambiguous")]
    assert (
        session["tokens_in"],
        session["tokens_out"],
        session["tokens_cached"],
        session["usage_source"],
    ) == (_usage(totals))
    assert session["cost_usd"] == _float(totals.stated_cost_usd)
    assert session["estimated_cost_usd"] == _float(totals.estimated_cost_usd)
    calls = rows.tables["calls"]
    per_tool = Counter(zip(calls["family"], calls["tool"], calls["outcome"], strict=True))
    expected = Counter(
        {
            (family, None if tool == "(none)" else tool, outcome): count
            for (family, tool), outcomes in _per_tool(totals).items()
            for outcome, count in zip(OUTCOMES, outcomes, strict=True)
            if count
        }
    )
    assert per_tool == expected
    assert Counter(calls["pairing"]) == Counter(
        {name: count for name, count in zip(PAIRINGS, totals.pairing, strict=True) if count}
    )

    # the report's header numbers (the usage card reads Survey.totals)
    from bbox_lark.report.survey import survey

    found = survey(iter_nodes(text, attach=False))
    assert found.totals is not None
    assert _usage(found.totals) == _usage(totals)
    assert found.totals.outcomes == totals.outcomes
    assert (found.totals.stated_cost_usd, found.totals.estimated_cost_usd) == (
        totals.stated_cost_usd,
        totals.estimated_cost_usd,
    )


def _round_trip_numbers(totals: SessionTotals) -> tuple[Any, ...]:
    return (
        totals.calls,
        totals.outcomes,
        _usage(totals),
        totals.stated_cost_usd,
        totals.estimated_cost_usd,
        totals.models,
        totals.pairing,
    )


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_the_numbers_survive_every_format(path: Path) -> None:
    text = _bbox_text(path)
    if text is None:
        pytest.skip("no session bbox-lark reads")
    document = bbox_lark.parse(text)
    if any(d.severity == "error" for d in document.diagnostics):
        pytest.skip("a file with errors is not converted faithfully")
    assert_numbers_survive_every_format(text, imported=path.parent.name == "atif")


def assert_numbers_survive_every_format(text: str, *, imported: bool = False) -> None:
    """bbox -> ATIF -> bbox and bbox -> JSON Lines -> bbox keep ``text``'s numbers, and ATIF's
    final_metrics state them (unless ``imported``: an ATIF file keeps its producer's own)."""
    totals = document_numbers(bbox_lark.parse(text)).totals
    atif = convert(text, "bbox", to="atif")
    trajectory = json.loads(atif.text)
    # bbox -> ATIF -> bbox, bbox -> JSON Lines -> bbox: the same numbers.
    back = convert(atif.text, "atif", to="bbox").text
    assert _round_trip_numbers(_numbers(back)) == _round_trip_numbers(totals)
    lines = convert(convert(text, "bbox", to="jsonl").text, "jsonl", to="bbox").text
    assert _round_trip_numbers(_numbers(lines)) == _round_trip_numbers(totals)
    # ATIF final_metrics: the session's usage (prompt including cached) and stated cost. (An
    # imported trajectory keeps its producer's own final_metrics: compared with the file in
    # test_an_atif_files_own_final_metrics.)
    if imported:
        return
    final = trajectory.get("final_metrics") or {}
    usage = totals.usage
    if totals.usage_source == "responses":
        assert final.get("total_prompt_tokens") == usage.input_with_cache
        assert final.get("total_completion_tokens") == usage.tokens_out
        assert final.get("total_cached_tokens") == usage.tokens_cached
    elif totals.usage_source == "metrics":
        assert final.get("total_prompt_tokens") == totals.metrics_totals.prompt
        assert final.get("total_completion_tokens") == totals.metrics_totals.completion
    if totals.stated_cost_usd is not None and "total_cost_usd" in final:
        assert Decimal(str(final["total_cost_usd"])) == totals.stated_cost_usd


# -- independent figures ----------------------------------------------------------------


def _claude_code_files() -> list[Path]:
    return [p for p in FILES if p.suffix == ".jsonl" and _is_claude_code(p)]


def _is_claude_code(path: Path) -> bool:
    return detect_format(path, path.read_bytes()[: 1 << 16]) == "claude-code"


def _harbor_totals(path: Path) -> tuple[int, int, int] | None:
    """Harbor-style totals, computed here from the raw records: assistant records grouped by
    ``message.id``, each message's **last** record's usage kept, summed. Input is
    ``input_tokens + cache_creation_input_tokens`` (the input not read from the cache, as
    ours count it). None when a record cannot be read."""
    last: dict[str, dict[str, int]] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError:
            return None
        if not isinstance(record, dict):
            continue
        message = record.get("message")
        if record.get("type") != "assistant" or not isinstance(message, dict):
            continue
        usage, key = message.get("usage"), message.get("id")
        if isinstance(usage, dict) and isinstance(key, str):
            last[key] = usage
    counts = [
        (
            u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0),
            u.get("output_tokens", 0),
            u.get("cache_read_input_tokens", 0),
        )
        for u in last.values()
    ]
    return (sum(c[0] for c in counts), sum(c[1] for c in counts), sum(c[2] for c in counts))


@pytest.mark.parametrize("path", _claude_code_files(), ids=_id)
def test_claude_code_usage_agrees_with_harbor_style_per_message_totals(path: Path) -> None:
    """Ours count each message id once with the largest value of each counter; harbor keeps
    the last record's usage. On streamed records the counters only grow, so they agree
    (docs/formats/claude-code.md, "Our totals and harbor's")."""
    harbor = _harbor_totals(path)
    text = _bbox_text(path)
    if harbor is None or text is None:
        pytest.skip("a record that is no JSON: harbor refuses the file")
    if (path.parent / path.stem / "subagents").is_dir():
        pytest.skip("subagent logs beside it are counted with it; harbor reads the one file")
    totals = _numbers(text)
    if totals.usage_source is None:
        assert harbor == (0, 0, 0)
        return
    usage = totals.usage
    assert (usage.tokens_in or 0, usage.tokens_out or 0, usage.tokens_cached or 0) == harbor
    # Claude Code -> bbox -> ATIF: final_metrics the same totals.
    final = json.loads(convert(text, "bbox", to="atif").text).get("final_metrics") or {}
    assert final.get("total_completion_tokens", 0) == harbor[1]
    assert final.get("total_prompt_tokens", 0) == harbor[0] + harbor[2]


def _atif_files() -> list[Path]:
    return [p for p in FILES if p.parent.name == "atif"]


@pytest.mark.parametrize("path", _atif_files(), ids=_id)
def test_an_atif_files_own_final_metrics(path: Path) -> None:
    from bbox_lark.convert.atif.lines import merge_chain
    from bbox_lark.convert.base import Input

    # A trajectory that names its continuation is one session with it: its own figures are
    # the chain's, added up (issue 29; bbox_lark.convert.atif.lines.merge_chain).
    merged = merge_chain(Input(path))
    data = json.loads(merged if merged is not None else path.read_text(encoding="utf-8"))
    final = data.get("final_metrics")
    text = _bbox_text(path)
    if not isinstance(final, dict) or text is None:
        pytest.skip("no final_metrics to compare with")
    totals = _numbers(text)
    if "total_cost_usd" in final:
        # The stated totals are read where the numbers read them (the closing summary).
        assert totals.summary_totals.prompt == final.get("total_prompt_tokens")
        assert totals.summary_totals.completion == final.get("total_completion_tokens")
        assert totals.stated_cost_usd == Decimal(repr(final["total_cost_usd"]))
        assert totals.estimated_cost_usd is None or totals.estimated_cost_usd < 2 * totals.stated_cost_usd


def test_query_agrees_with_the_tables(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    from bbox_lark.numbers.query import query_tables
    from bbox_lark.numbers.tables import session_rows

    chosen = sorted((ROOT / "corpus" / "valid").glob("*.bbox"))[:12]
    for path in chosen:
        (tmp_path / path.name).write_bytes(path.read_bytes())
    result = query_tables(
        [str(tmp_path)],
        "select path, count(*) as calls, count(*) filter (where outcome = 'error') as errors,"
        " count(*) filter (where pairing = 'ambiguous') as ambiguous from calls group by path",
        jobs=1,
    )
    answered = {Path(row[0]).name: tuple(row[1:]) for row in result.rows}
    for path in chosen:
        totals = _numbers(path.read_text(encoding="utf-8"))
        if totals.calls:
            assert answered[path.name] == (totals.calls, totals.outcome_count("error"), totals.pairing[2])
        rows = session_rows(str(path), path.read_bytes())
        assert rows.tables["sessions"]["calls"] == [totals.calls]
