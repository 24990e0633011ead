"""The typed-field and step rules (``bbox_lark/checks/fields.py``: W005, W014, W004, I007,
I009), pinned down where mutation testing found nothing holding them: the column and words of
each report, which comments are read, the boundaries of a step's order, and the set of steps
seen (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import bbox_lark
from bbox_lark.checks.fields import StepSet
from bbox_lark.checks.parallel import Options, check_split, plan

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"
CODES = {"W004", "W005", "W014", "I007", "I009"}
LARGEST = "is over the largest integer a typed field takes (9223372036854775807)"


def reports(body: str) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.col, d.message) for d in bbox_lark.check(HEAD + body) if d.code in CODES]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "a: x ts=2026-13-01T00:00:00Z\n",
            ("W005", 9, "ts=2026-13-01T00:00:00Z is not an ISO 8601 date-time with a zone"),
        ),
        ("a: x ts=yesterday\n", ("W005", 9, "ts=yesterday is not an ISO 8601 date-time with a zone")),
        ("a: x step=-1\n", ("W014", 11, "step=-1 is not a non-negative integer")),
        ("a: x latency_ms=1.5\n", ("W014", 17, "latency_ms=1.5 is not a non-negative integer")),
        ("a: x attempt=3/2\n", ("W014", 14, "attempt=3/2 is not N or N/M with N <= M")),
        ("a: x level=loud\n", ("W014", 12, "level=loud is not one of debug, info, warn, error")),
        ("a: x step=99999999999999999999999\n", ("W014", 11, f"step=99999999999999999999999 {LARGEST}")),
        (
            "a: x attempt=1/99999999999999999999999\n",
            ("W014", 14, f"attempt=1/99999999999999999999999 {LARGEST}"),
        ),
        ("# metrics step=x prompt_tokens=1\n", ("W014", 16, "step=x is not a non-negative integer")),
        ("# anchor step=x\n", ("W014", 15, "step=x is not a non-negative integer")),
        ("a: x # metrics step=x\n", ("W014", 21, "step=x is not a non-negative integer")),
        ("a: done step=1 ts=x\n", ("W005", 19, "ts=x is not an ISO 8601 date-time with a zone")),
    ],
)
def test_a_bad_typed_value_is_reported_at_its_value(body: str, expected: tuple[str, int, str]) -> None:
    code, col, message = expected
    assert reports(body) == [(code, 7, col, message)]


@pytest.mark.parametrize(
    "body",
    [
        "a: x attempt=2/3\n",
        "a: x attempt=0/0\n",
        "a: x attempt=4\n",
        "a: x id=\n",
        "# note step=x\n",
        "a: x level=warn latency_ms=0 ts=2026-01-01T00:00:00Z\n",
    ],
)
def test_a_good_value_an_id_and_a_plain_comment_are_not_reported(body: str) -> None:
    assert reports(body) == []


def test_a_lower_step_is_reported_against_the_highest_before_it() -> None:
    body = "a: x step=3\na: y step=1\na: z step=2\n# anchor step=1\n"
    assert reports(body) == [
        ("W004", 8, 11, "step=1 is lower than step=3 before it"),
        ("W004", 9, 11, "step=2 is lower than step=3 before it"),
    ]


def test_a_step_that_skips_is_reported_and_the_next_or_same_step_is_not() -> None:
    assert reports("a: x step=1\na: y step=3\n") == [("I007", 8, 11, "step=3 skips from step=1")]
    assert reports("a: x step=1\na: y step=1\na: z step=2\n") == []
    assert reports("a: x step=5\na: y step=x\na: z step=6\n")[-1:] == [
        ("W014", 8, 11, "step=x is not a non-negative integer")
    ]


def test_a_reference_to_a_step_no_line_has_is_reported_where_it_stands() -> None:
    assert reports("a: x step=1\n# anchor step=5\n") == [
        ("I009", 8, 15, "step=5 refers to a step no line has")
    ]
    assert reports("# anchor step=5\na: x step=1\n") == [
        ("I009", 7, 15, "step=5 refers to a step no line has")
    ]
    assert reports("a: x step=1\n# anchor step=9 step=1\n") == [
        ("I009", 8, 15, "step=9 refers to a step no line has")
    ]


def test_references_are_not_reported_when_no_line_has_a_step_or_the_step_exists() -> None:
    assert reports("# anchor step=5\n") == []
    assert reports("# anchor step=1\na: x step=1\n") == []
    assert reports("a: x step=2\n# metrics step=2 prompt_tokens=1\n") == []
    assert reports("a: x step=1\n# note step=7\n") == []  # not a step reference


def test_the_step_set_keeps_rising_and_out_of_order_steps() -> None:
    steps = StepSet()
    assert not steps
    assert 1 not in steps
    steps.add(2)
    assert steps
    steps.add(5)
    steps.add(3)  # out of order
    steps.add(5)
    steps.add(1 << 63)  # too large for the array
    assert [n for n in range(7) if n in steps] == [2, 3, 5]
    assert (1 << 63) in steps
    assert "2" not in steps
    only_extra = StepSet()
    only_extra.add(1 << 64)
    assert only_extra
    assert 0 not in only_extra


def test_a_step_reference_that_is_no_number_is_not_kept() -> None:
    assert reports("a: x step=1\n# anchor step=x\n") == [
        ("W014", 8, 15, "step=x is not a non-negative integer")
    ]


def test_rising_steps_are_kept_in_the_array_and_only_the_others_in_the_set() -> None:
    # The set's promise (8 bytes a step): a step in order is appended once, never set aside.
    steps = StepSet()
    for step in (1, 2, 2, 3, 1 << 62, 0, 1 << 63):
        steps.add(step)
    assert list(steps._rising) == [1, 2, 3, 1 << 62]
    assert steps._extra == {0, 1 << 63}


def in_parts(tmp_path: Path, text: str) -> list[tuple[str, int, int, str]]:
    """The step findings of ``text`` checked in parts (threads: in this process, so that
    ``StepRule.wants`` runs where mutation testing sees it), after checking that they are
    those of one pass."""
    path = tmp_path / "parts.bbox"
    path.write_text(text, encoding="utf-8")
    planned = plan(str(path), 1024, 100)
    assert planned is not None and len(planned[2]) > 2
    with ThreadPoolExecutor(2) as pool:
        found = check_split(str(path), Options(None, None, None, 1024), pool, 3, planned)
    assert found == bbox_lark.check(text)
    return [(d.code, d.line, d.col, d.message) for d in found if d.code in {"W004", "I007", "I009"}]


def test_steps_and_references_in_different_parts(tmp_path: Path) -> None:
    filler = "".join(f"a: line {n}\n" for n in range(30))
    comments = "# note step=1\n# anchor x\n# metrics tokens_in=5\n" * 10
    body = (
        "# anchor step=2\n"  # satisfied by a later part
        + "a: x step=2\n"
        + filler
        + comments
        + "a: y step=1\n"  # lower than the step of the first part
        + filler
        + "a: z step=5\n"  # skips
        + "# anchor step=9\n"  # no line has it
        + "# metrics step=7 prompt_tokens=1\n"  # a metrics reference, satisfied below
        + filler
        + "a: w step=7\n"
    )
    assert in_parts(tmp_path, HEAD + body) == [
        ("W004", 69, 11, "step=1 is lower than step=2 before it"),
        ("I007", 100, 11, "step=5 skips from step=2"),
        ("I009", 101, 15, "step=9 refers to a step no line has"),
        ("I007", 133, 11, "step=7 skips from step=5"),
    ]
