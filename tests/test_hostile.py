"""Hostile input: no crash and linear time on any input (the "Hardening" issue).

Every shape a fuzz campaign found against the first core is here at a size that runs in well
under a second once the code is linear; a quadratic path coming back would make its test take
minutes (or hit the per-test time limit below). The crashers also stand in ``corpus/invalid``
so their findings are snapshot-tested.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import bbox_lark
from bbox_lark.cli import app
from bbox_lark.printer import document_signature, format_document

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"

runner = CliRunner()


@pytest.fixture(autouse=True)
def time_limit() -> Iterator[None]:
    """No hostile input may take more than a few seconds (a quadratic one takes minutes)."""

    def expired(_signum: int, _frame: object) -> None:
        raise TimeoutError("a hostile input took more than 20 s: a slow path is back")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, 20)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def assert_sound(text: str) -> bbox_lark.Document:
    """Parse, check, print and format ``text``: nothing raises, printing is lossless, every
    finding is located inside the file, ``fmt`` is idempotent and keeps the meaning."""
    document = bbox_lark.parse(text)
    assert bbox_lark.dumps(document) == text
    lines = max(1, text.count("\n") + (0 if text.endswith("\n") or not text else 1))
    for d in document.diagnostics:
        assert 1 <= d.line <= lines, d
        assert d.col >= 1, d
    formatted = format_document(document)
    again = bbox_lark.parse(formatted)
    assert format_document(again) == formatted
    assert document_signature(again) == document_signature(document)
    return document


def codes(document: bbox_lark.Document) -> set[str]:
    return {d.code for d in document.diagnostics}


# -- isolation: one file's failure never costs the others their report -------------------


def test_an_internal_error_is_a_finding_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad, good = tmp_path / "a-bad.bbox", tmp_path / "b-good.bbox"
    bad.write_text(HEADER + "a: CRASH-ME\n")
    good.write_text(HEADER + "t:read a.rs -> [1 lines]\n")
    real_parse = bbox_lark.api.parse

    def parse(data: str | bytes, **options: object) -> bbox_lark.Document:
        if b"CRASH-ME" in (data if isinstance(data, bytes) else data.encode()):
            raise RuntimeError("boom")
        return real_parse(data, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(bbox_lark.api, "parse", parse)
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{bad}:1:1: E016 internal error (RuntimeError")
    assert "Please report this bug" in lines[0]
    assert lines[1] == f"{good}:7:13: W013 ASCII `->` used as the result arrow; use `→`"
    as_json = json.loads(runner.invoke(app, ["check", "--format", "json", str(tmp_path)]).stdout)
    assert as_json["exit_code"] == 2
    assert [f["diagnostics"][0]["code"] for f in as_json["files"]] == ["E016", "W013"]


def test_an_internal_error_is_reported_whatever_is_selected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEADER)

    def parse(*_args: object, **_options: object) -> bbox_lark.Document:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(bbox_lark.api, "parse", parse)
    result = runner.invoke(app, ["check", "--select", "W003", str(path)])
    assert result.exit_code == 2
    assert ": E016 internal error (RecursionError" in result.stdout


# -- timing helper ----------------------------------------------------------------------


def best_time(action: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def assert_linear(make: Callable[[int], str], n: int, action: Callable[[str], object] | None = None) -> None:
    """Doubling the input twice (n → 4n) may cost at most ~8× (linear: 4×, quadratic: 16×).
    A generous bound: the machine is noisy; the hostile sizes make a quadratic path obvious."""
    run = action or assert_sound
    small, large = make(n), make(4 * n)
    t_small = best_time(lambda: run(small))
    t_large = best_time(lambda: run(large), repeat=2)
    assert t_large < max(10 * t_small, 0.05), (t_small, t_large)


def test_subprocess_sanity() -> None:
    # The CLI runs as a real program too (used by the output-encoding tests below).
    done = subprocess.run([sys.executable, "-m", "bbox_lark.cli", "--help"], capture_output=True, text=True)
    assert done.returncode == 0
