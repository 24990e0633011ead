"""The session rule (``bbox_lark/checks/session.py``: I001, I002) on a file checked in parts,
where each part counts its lines and the counts are merged (``SessionRule.merge``): mutation
testing found that only worker processes ran the merge, which no test in this process saw
(docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import bbox_lark
from bbox_lark.checks.parallel import Options, check_split, plan

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"


def in_parts(tmp_path: Path, text: str) -> list[tuple[int, str, str]]:
    """The I001 and I002 findings of ``text`` checked in parts (threads: in this process),
    after checking that they are those of one pass."""
    path = tmp_path / "parts.bbox"
    path.write_text(text, encoding="utf-8")
    planned = plan(str(path), 1024, 100)
    assert planned is not None and len(planned[2]) > 2
    with ThreadPoolExecutor(2) as pool:
        found = check_split(str(path), Options(None, None, None, 1024), pool, 3, planned)
    assert found == bbox_lark.check(text)
    return [(d.line, d.code, d.message) for d in found if d.code in {"I001", "I002"}]


def test_the_lines_of_every_part_add_up_to_a_long_session(tmp_path: Path) -> None:
    # 60 lines in all, no part holding more than a few: only their sum passes the 50 of I001.
    text = HEAD + "".join(f"a: line {n}\n" for n in range(60))
    assert in_parts(tmp_path, text) == [(1, "I001", "60 non-blank body lines and no @start")]


def test_the_first_start_of_any_part_is_the_one_reported(tmp_path: Path) -> None:
    body = "".join(f"a: line {n}\n" for n in range(20)) + "@start\n" + "b: x\n" * 20 + "@start\n"
    assert in_parts(tmp_path, HEAD + body + "c: y\n" * 20) == [(27, "I002", "@start without @end")]


def test_an_end_in_a_later_part_closes_the_session(tmp_path: Path) -> None:
    body = "@start\n" + "".join(f"a: line {n}\n" for n in range(60)) + "@end\n" + "# after\n" * 10
    assert in_parts(tmp_path, HEAD + body) == []


def test_i001_starts_one_line_past_the_limit() -> None:
    # A survivor of the second run (`>` made `>=`): exactly LONG_SESSION lines are not long.
    from bbox_lark.checks.session import LONG_SESSION

    def found(lines: int) -> list[tuple[int, str, str]]:
        diagnostics = bbox_lark.check(HEAD + "a: x\n" * lines)
        return [(d.line, d.code, d.message) for d in diagnostics if d.code == "I001"]

    assert found(LONG_SESSION) == []
    over = LONG_SESSION + 1
    assert found(over) == [(1, "I001", f"{over} non-blank body lines and no @start")]
