"""The redaction-count rule (``bbox_lark/checks/redactions.py``, W018), pinned down where
mutation testing found nothing holding it: which markers count (continuation lines, several on
a line, not those on the line stating the count), every stated count compared, the position
and words of the report, and a file checked in parts (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

from pathlib import Path

import pytest

import bbox_lark

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"


def w018(body: str) -> list[tuple[int, int, str]]:
    return [(d.line, d.col, d.message) for d in bbox_lark.check(HEAD + body) if d.code == "W018"]


@pytest.mark.parametrize(
    "body",
    [
        "a: [redacted:x] and [redacted:y]\n# redactions=2\n",
        "t:read .env → K=[redacted:env_var]\n  more [redacted:x]\n# redactions=2\n",  # a continuation
        "# redactions=1 [redacted:not-counted]\na: [redacted:y]\n",  # the stating line's own marker
        "a: [redacted:x] [redacted:y]\n# tokens=100 cost=0.1 redactions=2\n",  # the closing summary
        "# redactions=0\na: no marker, [redacted:x without its bracket\n",
        "# redactions=01\na: [redacted:y]\n",  # the value is read as a number
    ],
)
def test_a_true_count_is_not_reported(body: str) -> None:
    assert w018(body) == []


def test_a_wrong_count_is_reported_at_its_value_with_both_numbers() -> None:
    body = "t:read .env → K=[redacted:env_var] [redacted:aws]\n  more [redacted:x]\n# redactions=2\n"
    assert w018(body) == [(9, 14, "redactions=2 but the body has 3 marker(s)")]


def test_every_stated_count_is_compared_with_the_whole_body() -> None:
    body = "# redactions=1\na: [redacted:x]\n# redactions=5\n# tokens=1 redactions=0\nb: [redacted:y]\n"
    assert w018(body) == [
        (7, 14, "redactions=1 but the body has 2 marker(s)"),
        (9, 14, "redactions=5 but the body has 2 marker(s)"),
        (10, 23, "redactions=0 but the body has 2 marker(s)"),
    ]


def test_a_count_that_is_no_number_is_reported_as_written() -> None:
    assert w018("# redactions=abc\n") == [(7, 14, "redactions=abc but the body has 0 marker(s)")]


def test_a_file_checked_in_parts_adds_up_the_markers_of_every_part(tmp_path: Path) -> None:
    # `check --jobs` on a large file: each part counts its markers (a file-scoped rule) and
    # the counts are merged (RedactionRule.merge); threads, so that the parts run here.
    from concurrent.futures import ThreadPoolExecutor

    from bbox_lark.checks.parallel import Options, check_split, plan

    body = "a: [redacted:x]\n" + "u: filler\n" * 30 + "b: [redacted:y] [redacted:z]\n" + "u: more\n" * 30
    text = HEAD + "# redactions=2\n" + body + "# redactions=3\n"
    path = tmp_path / "parts.bbox"
    path.write_text(text, encoding="utf-8")
    planned = plan(str(path), 1024, 100)
    assert planned is not None and len(planned[2]) > 2
    with ThreadPoolExecutor(2) as pool:
        found = check_split(str(path), Options(None, None, None, 1024), pool, 3, planned)
    assert found == bbox_lark.check(text)
    assert [(d.line, d.message) for d in found if d.code == "W018"] == [
        (7, "redactions=2 but the body has 3 marker(s)")
    ]
