"""The correlation rule (``bbox_lark/checks/correlation.py``: W001, W002, W007, W024, W025): each
finding's column and message, with and without a key or a name (mutation testing found them
pinned only by the corpus snapshots), and W002 on a file checked in parts, where the parent
pairs with the last parts' keys only and settles the observations whose key it no longer
holds once every part is read (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import bbox_lark
from bbox_lark.checks.parallel import Options, check_split, plan

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"
FILLER = "".join(f"u: line {n} of filler text, long enough to fill the parts\n" for n in range(80))


def in_parts(tmp_path: Path, text: str) -> list[tuple[int, str, str]]:
    """The W002 findings of ``text`` checked in parts (threads: in this process), after
    checking that every finding is that of one pass."""
    path = tmp_path / "parts.bbox"
    path.write_text(text, encoding="utf-8")
    planned = plan(str(path), 1024, 100)
    assert planned is not None and len(planned[2]) > 3
    with ThreadPoolExecutor(2) as pool:
        found = check_split(str(path), Options(None, None, None, 1024), pool, 3, planned)
    assert found == bbox_lark.check(text)
    return [(d.line, d.code, d.message) for d in found if d.code == "W002"]


def test_an_observation_of_a_key_no_line_had_is_reported_after_the_parts(tmp_path: Path) -> None:
    text = HEAD + FILLER + "o: id=never_seen → [ok]\n" + FILLER
    assert in_parts(tmp_path, text) == [(87, "W002", "observation for unknown call id=never_seen")]


def test_an_observation_of_a_key_from_parts_ago_is_not_reported(tmp_path: Path) -> None:
    text = HEAD + "t:read id=early a.rs → [ok]\n" + FILLER + FILLER + "o: id=early → [ok]\n"
    assert in_parts(tmp_path, text) == []


def test_an_observation_before_the_line_that_registers_its_key_is_reported(tmp_path: Path) -> None:
    text = HEAD + FILLER + "o: id=later → [ok]\n" + FILLER + "t:read id=later a.rs → [ok]\n" + FILLER
    assert in_parts(tmp_path, text) == [(87, "W002", "observation for unknown call id=later")]


def found(body: str) -> list[tuple[int, int, str, str]]:
    return [(d.line, d.col, d.code, d.message) for d in bbox_lark.check(HEAD + body)]


@pytest.mark.parametrize(
    ("body", "finding"),
    [
        ("t~:test span=t200 [64/128 passed]\n", (7, 14, "W001", "progress for span=t200 with no open start")),
        ("t~:test [64/128 passed]\n", (7, 1, "W001", "progress for tool 'test' with no open start")),
        ("t~:\n", (7, 1, "W001", "progress for tool '' with no open start")),
        (
            "t!:Read id=toolu_01 a.rs → [running]\nt!:Read id=toolu_01 b.rs → [running]\n"
            "o: id=toolu_01 → [ok]\no: id=toolu_01 → [ok]\n",
            (8, 12, "W024", "id=toolu_01 is already held by an open call"),
        ),
        ("u: hi\n  o: id=x\no: span=s9 → [ok]\n", (9, 9, "W002", "observation for unknown call span=s9")),
        (
            "t!:test id=call_1 cargo test → [running]\n",
            (7, 1, "W007", "tool start `t!:test` is never completed"),
        ),
        ("t!: → [running]\n", (7, 1, "W007", "tool start `t!:` is never completed")),
        (
            'x:explore id=sub_1 "find" → [launched]\n',
            (7, 1, "W025", "`x:` call started here is never completed"),
        ),
    ],
)
def test_each_finding_has_its_column_and_message(body: str, finding: tuple[int, int, str, str]) -> None:
    assert finding in found(body)
