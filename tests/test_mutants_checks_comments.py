"""The elapsed-time rule (``bbox_lark/checks/comments.py``: W019, W020), pinned down where
mutation testing found nothing holding it: the exact column and message of each report, an
equal mark, an empty mark, words after the mark, and the previous mark each report names
(docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from pathlib import Path

import pytest

import bbox_lark

HEAD = "---\nformat: bbox/1\nid: s\n---\n"


def elapsed(body: str) -> list[tuple[int, int, str, str]]:
    """W019 and W020 of a session with ``body``, as (line, column, code, message)."""
    found = bbox_lark.check(HEAD + body)
    return [(d.line, d.col, d.code, d.message) for d in found if d.code in {"W019", "W020"}]


@pytest.mark.parametrize(
    ("mark", "col", "message"),
    [
        ("# t=5m", 5, "elapsed time '5m' is not HH:MM:SS"),
        ("#   t=5m", 7, "elapsed time '5m' is not HH:MM:SS"),  # the column follows the text
        ("# t=", 5, "elapsed time '' is not HH:MM:SS"),  # an empty mark: a warning, no traceback
        ("# t=5", 5, "elapsed time '5' is not HH:MM:SS"),  # one character is a value too
        ("# t=1:2:3 and words after", 5, "elapsed time '1:2:3' is not HH:MM:SS"),
        (
            "# t=99999999999999999999:00:00",
            5,
            "elapsed time '99999999999999999999:00:00' has more hours than 9223372036854775807",
        ),
        (
            "# t=99999999999999999999:xx",
            5,
            "elapsed time '99999999999999999999:xx' has more hours than 9223372036854775807",
        ),
        ("# t=1:xx", 5, "elapsed time '1:xx' is not HH:MM:SS"),
    ],
)
def test_a_malformed_mark_is_reported_at_its_value(mark: str, col: int, message: str) -> None:
    found = elapsed(f"a: hello\n{mark}\n")
    assert found == [(6, col, "W019", message)]


def test_words_after_a_mark_are_not_part_of_it() -> None:
    assert elapsed("# t=00:05:00 resumed here\na: hello\n# t=00:06:00\n") == []


def test_an_equal_mark_is_not_earlier() -> None:
    assert elapsed("# t=00:05:00\na: hello\n# t=00:05:00\n") == []


def test_a_decreasing_mark_names_the_previous_one_and_is_reported_at_its_line() -> None:
    body = "# t=00:05:00 start\na: hello\n# t=00:10:00\nb: x\n# t=00:04:00 reset\n# t=00:04:30\n"
    assert elapsed(body) == [
        (9, 5, "W020", "elapsed time 00:04:00 is earlier than the previous mark, 00:10:00"),
    ]


def test_each_mark_is_compared_with_the_one_just_before() -> None:
    # Two resets: each names the mark it follows, not the highest one seen.
    body = "# t=00:10:00\n# t=00:05:00\n# t=00:07:00\n# t=00:06:00\n"
    assert [message for *_, message in elapsed(body)] == [
        "elapsed time 00:05:00 is earlier than the previous mark, 00:10:00",
        "elapsed time 00:06:00 is earlier than the previous mark, 00:07:00",
    ]


def test_a_malformed_mark_does_not_reset_the_clock() -> None:
    body = "# t=00:10:00\n# t=junk\n# t=00:05:00\n"
    assert [code for _, _, code, _ in elapsed(body)] == ["W019", "W020"]


def test_other_comments_are_not_marks() -> None:
    assert elapsed("# note: t=5m\n# tokens=5\n# t =5m\na: hello\n") == []


def test_marks_in_different_parts_of_a_file_checked_in_parts(tmp_path: Path) -> None:
    # `check --jobs` on a large file: each part sends the sequence rules only the nodes they
    # want (ElapsedRule.wants); threads here, so that the parts run in this process.
    from concurrent.futures import ThreadPoolExecutor

    from bbox_lark.checks.parallel import Options, check_split, plan

    text = HEAD + "# t=00:10:00\n" + "a: filler\n" * 40 + "# note\n# t=00:05:00\n" + "b: x\n" * 40
    path = tmp_path / "parts.bbox"
    path.write_text(text, encoding="utf-8")
    planned = plan(str(path), 1024, 120)
    assert planned is not None and len(planned[2]) > 2
    with ThreadPoolExecutor(2) as pool:
        found = check_split(str(path), Options(None, None, None, 1024), pool, 3, planned)
    assert found == bbox_lark.check(text)
    assert [(d.line, d.code) for d in found if d.code.startswith("W02")] == [(47, "W020")]
