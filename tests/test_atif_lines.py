"""ATIF JSON Lines (one trajectory per line, as agentpile writes them) and ATIF
``continued_trajectory_ref`` chains: sniffed apart from bbox JSON Lines, each line a session
for ``stats``, ``export``, ``query``, ``report`` and ``convert -o DIR``; a chain one session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bbox_lark.cli import app
from bbox_lark.convert import Input, convert, detect_format
from bbox_lark.convert.atif.lines import expand_sessions, merge_chain, sniff_lines
from bbox_lark.files.discover import discover

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo.bbox"
GOLDEN = (
    REPO.parent
    / "shared"
    / "corpus-external"
    / "atif"
    / "harbor-golden__terminus_2__linear-history.trajectory.json"
)
runner = CliRunner()


def trajectory(session_id: str) -> dict[str, object]:
    text = DEMO.read_text(encoding="utf-8").replace("id: ", f"id: {session_id}-", 1)
    return json.loads(convert(text, "bbox", to="atif").text)


@pytest.fixture
def two(tmp_path: Path) -> Path:
    path = tmp_path / "atif_two.jsonl"
    path.write_text("".join(json.dumps(trajectory(n)) + "\n" for n in ("one", "two")), encoding="utf-8")
    return path


def test_atif_json_lines_are_not_bbox_json_lines(two: Path) -> None:
    assert detect_format(two, Input(two).head()) == "atif"
    assert sniff_lines(two.read_text(encoding="utf-8")) == 4
    assert sniff_lines('{"record": "header", "bbox": "1"}\n') == 0
    assert sniff_lines('{\n  "schema_version": "ATIF-v1.7"\n}\n') == 0  # one trajectory, pretty


def test_each_line_is_a_session(two: Path, tmp_path: Path) -> None:
    found = expand_sessions(discover([str(two)]))
    assert [item.path for item in found] == [f"{two}#1", f"{two}#2"]
    result = runner.invoke(app, ["stats", str(two)])
    assert result.exit_code == 0, result.output
    assert f"{two}#1" in result.output and f"{two}#2" in result.output
    out = tmp_path / "out"
    result = runner.invoke(app, ["convert", str(two), "--to", "bbox", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["atif_two-1.bbox", "atif_two-2.bbox"]
    assert "id: one-" in (out / "atif_two-1.bbox").read_text(encoding="utf-8")
    result = runner.invoke(app, ["report", str(two), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and f"{two}#1" in result.output
    result = runner.invoke(app, ["report", f"{two}#2", "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output


def test_export_and_query_read_each_trajectory(two: Path, tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    result = runner.invoke(
        app, ["query", str(two), "--sql", "select count(*) as n from sessions", "--format", "csv"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "2"


def test_a_chain_is_one_session(tmp_path: Path) -> None:
    whole = trajectory("chain")
    steps = whole["steps"]
    assert isinstance(steps, list) and len(steps) > 2
    first = {**whole, "steps": steps[:2], "continued_trajectory_ref": "trajectory.cont-1.json"}
    rest = [{**step, "step_id": n} for n, step in enumerate(steps[2:], 1)]
    second = {**whole, "steps": rest}
    (tmp_path / "run.trajectory.json").write_text(json.dumps(first), encoding="utf-8")
    (tmp_path / "run.trajectory.cont-1.json").write_text(json.dumps(second), encoding="utf-8")
    merged = merge_chain(Input(tmp_path / "run.trajectory.json"))
    assert merged is not None
    value = json.loads(merged)
    assert [s["step_id"] for s in value["steps"]] == list(range(1, len(steps) + 1))
    assert "continued_trajectory_ref" not in value
    result = convert(
        (tmp_path / "run.trajectory.json").read_bytes(), to="atif", path=tmp_path / "run.trajectory.json"
    )
    assert len(json.loads(result.text)["steps"]) == len(steps)


@pytest.mark.skipif(not GOLDEN.is_file(), reason="no external corpus")
@pytest.mark.parametrize("version", ["1.7", "1.8"])
def test_the_harbor_golden_chain_reads_as_one_trajectory(version: str) -> None:
    result = convert(GOLDEN.read_bytes(), to="atif", path=GOLDEN, atif_version=version)
    value = json.loads(result.text)
    assert value["schema_version"] == f"ATIF-v{version}"
    assert len(value["steps"]) == 13
    assert value["final_metrics"]["total_prompt_tokens"] == 2252 + 7802


def test_a_continuation_found_beside_its_head_is_counted_once(tmp_path: Path) -> None:
    # DECISIONS §13, each session once: reading the head reads its chain, so the continuation
    # found in the same folder is counted in the head, not again on its own.
    head, tail = trajectory("head"), trajectory("tail")
    head["continued_trajectory_ref"] = "run.cont-1.json"
    (tmp_path / "run.json").write_text(json.dumps(head), encoding="utf-8")
    (tmp_path / "run.cont-1.json").write_text(json.dumps(tail), encoding="utf-8")
    found = {Path(item.path).name: item for item in discover([str(tmp_path)], sessions=True)}
    assert found["run.json"].counted_in is None
    assert Path(found["run.cont-1.json"].counted_in or "").name == "run.json"
    result = runner.invoke(app, ["stats", "--json", str(tmp_path)])
    report = json.loads(result.stdout)
    assert [Path(f["path"]).name for f in report["files"]] == ["run.json"]
    assert [Path(c["path"]).name for c in report["counted_in"]] == ["run.cont-1.json"]
    one = json.loads(runner.invoke(app, ["stats", "--json", str(tmp_path / "run.json")]).stdout)
    assert report["totals"] == one["totals"]
