"""``tools/bench.py``'s helpers work (speed itself is measured by the tool, never asserted).

Each test runs on a tiny input in a few seconds at most; the full benchmark is too slow for CI.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

import bbox_lark

ROOT = Path(__file__).resolve().parent.parent


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bbox_bench", ROOT / "tools" / "bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bbox_bench"] = module  # worker processes find its functions by name
    spec.loader.exec_module(module)
    return module


bench = load_bench()


def test_the_generated_session_is_clean_and_deterministic() -> None:
    text = bench.generate_session(2000)
    assert text == bench.generate_session(2000)
    assert 2000 <= bench.count_lines(text) <= 2005
    assert bbox_lark.check(text) == []  # not even an info: the benchmark measures clean input
    assert bbox_lark.check(bench.SMALL_FILE) == []
    assert bench.count_lines(bench.SMALL_FILE) == 10


def test_the_regex_baseline_sees_every_line() -> None:
    text = bench.generate_session(500)
    assert bench.regex_classify(text) == text.count("\n") + 1  # the empty string after the last \n


def test_best_times_are_positive() -> None:
    cpu, wall = bench.best_times(bench.bbox_check, [bench.SMALL_FILE], 2)
    assert cpu > 0 and wall > 0


def test_all_cores_over_files(tmp_path: Path) -> None:
    paths = []
    for n in range(3):
        path = tmp_path / f"{n}.bbox"
        path.write_text(bench.generate_session(200, seed=n), encoding="utf-8")
        paths.append(path)
    assert bench.all_cores_files(paths, 2, 1) > 0


def test_all_cores_on_one_text_waits_for_the_library() -> None:
    seconds = bench.all_cores_text(bench.generate_session(300), 2, 1)
    if bench.library_parallel_check() is None:
        assert seconds is None  # printed as "not implemented yet"
    else:
        assert seconds is not None and seconds > 0


def test_peak_memory_of_a_check_process(tmp_path: Path) -> None:
    path = tmp_path / "small.bbox"
    path.write_text(bench.SMALL_FILE, encoding="utf-8")
    assert 5 < bench.peak_memory_mib(path) < 1000


def test_startup_times_are_cpu_milliseconds() -> None:
    times = bench.startup_times({"pass": [sys.executable, "-c", "pass"]}, runs=2, warm=0)
    assert len(times["pass"]) == 2 and all(value > 0 for value in times["pass"])


def test_children_keep_their_bytecode_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert "PYTHONDONTWRITEBYTECODE" not in bench.child_env()


def test_a_small_run_prints_every_throughput_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for n in range(2):
        (corpus / f"{n}.rlog").write_text(bench.generate_session(300, seed=n), encoding="utf-8")
    args = ["--only", "throughput", "--corpus", str(corpus), "--lines", "500", "--repeat", "1"]
    assert bench.main([*args, "--jobs", "2"]) == 0
    shown = capsys.readouterr().out
    assert "real logs (corpus): 2 file(s)" in shown
    assert shown.count("check, one process") == 2 and shown.count("ratio") >= 3
    assert "all cores (2)" in shown


def test_a_small_rates_run_compares_each_command_with_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The section's wiring and arithmetic with the processes' CPU given; each command's
    # arguments are then run for real, in this process (a process each would be 2 s).
    from typer.testing import CliRunner

    from bbox_lark.cli import app

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.bbox").write_text(bench.generate_session(40, seed=1), encoding="utf-8")
    commands: list[list[str]] = []

    def run_child(command: list[str], env: object = None) -> tuple[int, float, int]:
        commands.append(command)
        return 0, 0.5 if command[len(bench.bbox_lark_command())] == "check" else 2.0, 0

    monkeypatch.setattr(bench, "run_child", run_child)
    assert bench.main(["--only", "rates", "--corpus", str(corpus), "--repeat", "2"]) == 0
    shown = capsys.readouterr().out
    assert "real logs (corpus): 41 lines" in shown
    for name in ("stats --json", "export", "report"):
        assert re.search(
            rf"{re.escape(name)} +CPU +2\.00 s +20 lines/s +of check 0\.25 \(goal >= 0\.6\)", shown
        )
    assert re.search(r"check +CPU +0\.50 s +82 lines/s\n", shown)
    assert len(commands) == 2 * len(bench.RATE_COMMANDS)
    for command in commands[: len(bench.RATE_COMMANDS)]:
        arguments = command[len(bench.bbox_lark_command()) :]
        done = CliRunner().invoke(app, arguments)
        assert done.exit_code in (0, 1), (arguments, done.output)


def test_a_small_export_run_prints_both_figures(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The section's wiring and figures; the real `bbox-lark export` runs in the test below.
    runs: list[tuple[int, int]] = []

    def export_run(folder: Path, jobs: int) -> tuple[int, float, float]:
        runs.append((len(list(folder.glob("session-*.bbox"))), jobs))
        return (0, 0.5, 100.0) if jobs == 1 else (3, 0.25, 50.0)

    monkeypatch.setattr(bench, "export_run", export_run)
    args = ["--only", "export", "--export-sessions", "3", "--export-lines", "60", "--jobs", "2"]
    assert bench.main(args) == 0
    assert runs == [(3, 1), (3, 2)]
    shown = capsys.readouterr().out
    total = sum(bench.count_lines(bench.generate_session(60, seed=n)) for n in range(3))
    assert f"3 generated sessions, {total:,} lines" in shown
    one, every = (" ".join(line.split()) for line in shown.splitlines() if "export, " in line)
    assert one == f"export, one core {total / 0.5:,.0f} lines/s peak 100.0 MiB"
    assert every == f"export, all cores (2) {total / 0.25:,.0f} lines/s peak 50.0 MiB (exit 3)"


def test_export_run_measures_a_real_export(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.bbox").write_text(bench.generate_session(20), encoding="utf-8")
    code, wall, peak = bench.export_run(logs, 1)
    assert code == 0 and wall > 0 and 5 < peak < 2000
    assert (tmp_path / "logs-out-1" / "sessions.parquet").is_file()


def test_the_stages_table_counts_every_line_and_grows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = bench.generate_session(300)
    lines = bench.count_lines(text)
    assert bench.stage_split(text) == bench.stage_scan(text) == bench.stage_driver(text) == lines
    assert bench.scan_share(text)[1] == lines and bench.scan_share(text)[0] > lines // 2
    assert bench.stage_build(text) == bench.stage_records(text) > lines // 2
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.rlog").write_text(text, encoding="utf-8")
    assert bench.main(["--only", "stages", "--corpus", str(corpus), "--lines", "300", "--repeat", "1"]) == 0
    shown = capsys.readouterr().out
    for name, _ in bench.STAGES:
        assert shown.count(name) == 2  # real logs and the generated session
    assert "re classifier (baseline)" in shown and "µs/line" in shown
    assert shown.count("read by the one scan") == 2 and shown.count(bench.REFERENCE[0]) == 2
    assert shown.count(bench.NODES[0]) == 2


def test_a_small_commands_run_prints_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyarrow")
    assert bench.main(["--only", "commands", "--command-lines", "40"]) == 0
    shown = capsys.readouterr().out
    assert "peak memory per command" in shown and "failed" not in shown
    for name in bench.COMMANDS:
        assert f"  {name}" in shown


def test_a_commands_run_measures_the_commands_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--only", "commands", "--command-lines", "40", "--command", "fix --arrows"]) == 0
    shown = capsys.readouterr().out
    assert "  fix --arrows" in shown and "  check " not in shown and "redact" not in shown


def test_harbor_row_is_skipped_with_a_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    python, why = bench.harbor_python(str(tmp_path / "no-python"))
    assert python is None and "cannot run" in why
    bench.harbor(tmp_path, [10], 1, str(tmp_path / "no-python"))
    assert "skipped:" in capsys.readouterr().out


def test_ours_usage_in_harbors_terms() -> None:
    stats = {
        "files": [
            {
                "usage": {"tokens_in": 10, "tokens_out": 3, "tokens_cached": 90},
                "calls": {"tool": {"total": 4}, "mcp": {"total": 1}, "subagent": {"total": 2}},
            }
        ]
    }
    import json

    assert bench.ours_usage(json.dumps(stats)) == {"calls": 7, "prompt": 100, "completion": 3, "cached": 90}
