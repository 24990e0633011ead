"""The line-level rule (``bbox_lark/checks/lines.py``: W003, W011, W012, W013, E012, W015,
W021, W022, W023), pinned down where mutation testing found nothing holding it: the line,
column and words of each report, the mode word of ``m:``, and ``@phase`` without a phase, with
a long one and with a list (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import pytest

import bbox_lark

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"
CODES = {"W003", "W011", "W012", "W013", "E012", "W015", "W021", "W022", "W023"}
PHASES = "expected one of design, exit, explore, final, review"


def reports(body: str) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.col, d.message) for d in bbox_lark.check(HEAD + body) if d.code in CODES]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("a: hi\ntool: read src/main.rs\n", ("W003", 8, 1, "unknown line kind (kept verbatim)")),
        ("a: hi\nt: read src/main.rs\n", ("W011", 8, 3, "space between `t:` and the name")),
        ("a: hi\nt: → [ok]\n", ("W012", 8, 3, "`t:` line without a name")),
        ("a: hi\nm:\n", ("W012", 8, 3, "`m:` line without a mode word")),
        ("a: hi\ns:\n", ("W012", 8, 3, "`s:` line without a name")),
        (
            "a: hi\nt:read src/main.rs -> [200 lines]\n",
            ("W013", 8, 20, "ASCII `->` used as the result arrow; use `→`"),
        ),
        (
            'a: hi\nt:grep "TODO src → [3 matches]\n',
            ("E012", 8, 8, "unterminated quoted string in the call part"),
        ),
        (
            'a: hi\nx:explore id=sub_1 → summary="Found 3 failures\n',
            ("W015", 8, 30, "unterminated quoted field value"),
        ),
        ("a: hi\n@restart reason=crash\n", ("W021", 8, 2, "unknown lifecycle primitive `@restart`")),
        ("a: hi\n@phase planning\n", ("W022", 8, 8, f"@phase with phase 'planning'; {PHASES}")),
        ("a: hi\n  stray text\n", None),  # a continuation of the line before: no report
        ("  stray text\na: hi\n", ("W023", 7, 1, "continuation line with no line before it")),
    ],
)
def test_each_report_has_its_line_column_and_words(
    body: str, expected: tuple[str, int, int, str] | None
) -> None:
    assert reports(body) == ([expected] if expected else [])


def test_a_phase_missing_is_reported_after_the_end_of_the_line() -> None:
    assert reports("@phase\n") == [("W022", 7, 7, f"@phase with no phase; {PHASES}")]
    assert reports("@phase x=1\n") == [("W022", 7, 11, f"@phase with no phase; {PHASES}")]


def test_a_long_phase_is_cut_in_the_message() -> None:
    cut = "p" * 80 + "… (150 characters)"
    assert reports("@phase " + "p" * 150 + "\n") == [("W022", 7, 8, f"@phase with phase '{cut}'; {PHASES}")]


def test_a_phase_that_is_a_list_is_shown_as_read() -> None:
    assert reports("@phase [a, b]\n") == [("W022", 7, 8, f"@phase with phase ('a', 'b'); {PHASES}")]


def test_a_known_phase_and_a_known_primitive_are_not_reported() -> None:
    assert reports("@phase design\n@resume reason=crash\n") == []
