"""The correlation rule (``bbox_lark/checks/correlation.py``: W001, W002, W007, W024, W025) on a
file checked in parts, where the parent pairs with the last parts' keys only and settles the
observations whose key it no longer holds once every part is read (``settle``): mutation
testing found that no test ran the settling in this process (docs/testing.md, "Mutation
testing")."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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
