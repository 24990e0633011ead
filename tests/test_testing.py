"""bbox_lark.testing: snapshots of a log with run-to-run values masked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from syrupy.assertion import SnapshotAssertion

from bbox_lark import Writer, parse
from bbox_lark.testing import bbox_snapshot, normalize

__all__ = ["bbox_snapshot"]  # the fixture, used by name below


def _session(path: Path, start: datetime, pause: float) -> None:
    now = [start]

    def clock() -> datetime:
        now[0] += timedelta(seconds=pause)
        return now[0]

    header = {"id": f"sess-{start:%H%M%S}", "repo_sha": "215db51", "started": start.isoformat()}
    with Writer(path, header, clock=clock, mark_every=30, auto_step=True) as log:
        log.user("Fix the login bug.")
        first = log.call("read", "src/auth.rs", tid="turn-a")
        second = log.call("grep", "token", tid="turn-a")
        second.finish("3 matches", latency_ms=int(pause * 10))
        first.finish("186 lines")
        log.agent("Fixed.")


def test_two_runs_normalise_to_the_same_log(tmp_path: Path) -> None:
    _session(tmp_path / "a.bbox", datetime(2025, 1, 1, tzinfo=UTC), 40)
    _session(tmp_path / "b.bbox", datetime(2025, 6, 2, 3, 4, 5, tzinfo=UTC), 5)
    a, b = (tmp_path / name for name in ("a.bbox", "b.bbox"))
    assert a.read_text() != b.read_text()
    assert normalize(a) == normalize(b)
    # Masking keeps every line but the elapsed marks, in order.
    kept = [e.kind for e in parse(a.read_bytes()).events if e.name != "elapsed"]
    assert [e.kind for e in parse(normalize(a)).events] == kept
    assert "<id1>" in normalize(a) and "# t=" not in normalize(a) and "id: <session-id>" in normalize(a)


def test_a_log_matches_its_snapshot(tmp_path: Path, bbox_snapshot: SnapshotAssertion) -> None:
    path = tmp_path / "run.bbox"
    _session(path, datetime(2025, 3, 3, tzinfo=UTC), 50)
    assert path == bbox_snapshot
