"""Snapshot testing of bbox logs, for harness authors (``docs/writing.md``, "Testing").

A harness's test runs its agent on a fixed task and compares the log it wrote with a
snapshot kept in the repository. What changes from run to run is masked first
(:func:`normalize`), so the snapshot holds only what the agent did, and a failing test shows
the lines that differ:

* the header's ``id:`` becomes ``<session-id>``, and a header value that is a timestamp
  becomes ``<ts>``;
* the values of ``id=``, ``span=``, ``parent=`` and ``tid=`` become ``<id1>``, ``<id2>`` …,
  numbered by first appearance (the same id gets the same number, so correlations stay
  visible);
* ``ts=`` values become ``<ts>``; ``latency_ms=``, ``duration_ms=`` and ``elapsed_ms=``
  values become ``<ms>``;
* elapsed marks (``# t=HH:MM:SS``) are left out: how many a run writes depends on its speed.

Everything else (messages, arguments, results, blob hashes, which are content hashes) is
kept as written. Use it with `syrupy <https://github.com/syrupy-project/syrupy>`_::

    from bbox_lark.testing import bbox_snapshot  # noqa: F401  (a pytest fixture)

    def test_agent_fixes_the_bug(tmp_path, bbox_snapshot):
        run_agent(log=tmp_path / "run.bbox")
        assert (tmp_path / "run.bbox") == bbox_snapshot

or add ``pytest_plugins = ["bbox_lark.testing"]`` to a ``conftest.py``. The snapshot is a
``.bbox`` file under ``__snapshots__/``; ``pytest --snapshot-update`` writes it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

#: Fields whose values are ids: numbered by first appearance.
ID_KEYS = frozenset({"id", "span", "parent", "tid"})
#: Fields whose values are durations.
DURATION_KEYS = frozenset({"latency_ms", "duration_ms", "elapsed_ms"})

_HEADER_ID = re.compile(r"^id:[ \t]*\S.*$")
_HEADER_TS = re.compile(r"^([A-Za-z_][\w.-]*:[ \t]*)['\"]?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}\S*$")


def normalize(log: str | bytes | Path) -> str:
    """``log`` (its text, bytes or path) with run-to-run values masked and elapsed marks
    left out (see the module's documentation). Every other line is kept, in order, so a
    diff is line by line."""
    from bbox_lark.api import parse
    from bbox_lark.syntax.nodes import Event

    if isinstance(log, Path):
        log = log.read_bytes()
    document = parse(log)
    ids: dict[str, str] = {}
    out: list[str] = []
    for line in document.header_lines:
        text = line.raw
        if line.role == "yaml":
            text = _HEADER_ID.sub("id: <session-id>", text)
            text = _HEADER_TS.sub(r"\1<ts>", text)
        out.append(text + line.eol)
    for node in document.lines:
        text = node.raw
        if isinstance(node, Event) and node.source is not None:
            if node.kind == "comment" and node.name == "elapsed":
                continue
            text = _masked(node, ids)
        out.append(text + node.eol)
    return "".join(out)


def _masked(event: Any, ids: dict[str, str]) -> str:
    raw: str = event.raw
    edits: list[tuple[int, int, str]] = []
    for field in [*event.field_nodes, *event.metric_nodes]:
        if field.key in ID_KEYS:
            value = ids.setdefault(str(field.value), f"<id{len(ids) + 1}>")
        elif field.key == "ts":
            value = "<ts>"
        elif field.key in DURATION_KEYS:
            value = "<ms>"
        else:
            continue
        start = field.value_col - 1
        edits.append((start, start + len(field.raw_value), value))
    for start, end, value in sorted(set(edits), reverse=True):
        raw = raw[:start] + value + raw[end:]
    return raw


class BboxSnapshotExtension(SingleFileSnapshotExtension):
    """Snapshots of a bbox log, :func:`normalize` d, as ``.bbox`` files (syrupy diffs them
    line by line). The compared value may be the log's text, bytes or path."""

    _write_mode = WriteMode.TEXT
    file_extension = "bbox"

    def serialize(self, data: Any, **_: Any) -> str:
        return normalize(data)


@pytest.fixture
def bbox_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """syrupy's ``snapshot`` for bbox logs (:class:`BboxSnapshotExtension`)."""
    return snapshot.use_extension(BboxSnapshotExtension)
