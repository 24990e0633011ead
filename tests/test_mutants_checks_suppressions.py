"""Suppression comments (``bbox_lark/checks/suppressions.py``: I010, I011), pinned down where
mutation testing found nothing holding them: a line's own finding kept beside the I011 of the
suppression on it when checking as a stream, the name of an I010, and
``apply_suppressions`` on a parsed document, which gives what ``check`` gives
(docs/testing.md, "Mutation testing").

Keys are joined from pieces at run time: no line of this file holds one whole."""

from __future__ import annotations

import pytest

import bbox_lark
from bbox_lark.checks.suppressions import apply_suppressions, read_suppression

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
GH = "gh" + "p" + "_" + "FAKEfake0123456789notARealTokenABC12"


def test_a_lines_finding_stays_beside_the_i011_of_its_suppression_in_a_stream() -> None:
    text = HEADER + f"# bbox-lark: ignore[W999] {GH}\na: hello\n"
    streamed = [(d.line, d.code) for d in bbox_lark.iter_check(text)]
    assert sorted(streamed) == [(7, "I011"), (7, "S001")]
    assert [(d.line, d.code) for d in bbox_lark.check(text)] == [(7, "I011"), (7, "S001")]


def test_an_unused_suppression_names_its_check() -> None:
    (unused,) = bbox_lark.check(HEADER + "# bbox-lark: ignore[W003]\na: hello\n")
    assert (unused.code, unused.name, unused.severity) == ("I010", "unused-suppression", "info")
    assert unused.message == "suppression of W003 silenced nothing on line 8"


@pytest.mark.parametrize(
    "body",
    [
        "# bbox-lark: ignore[W003]\nbogus\n",
        "# bbox-lark: ignore[W003]\na: hello\n",
        "# bbox-lark: ignore-file[W003]\nbogus\nbogus\n",
        "# bbox-lark: ignore[W999]\nbogus\n",
    ],
)
def test_apply_suppressions_on_a_parsed_document_gives_what_check_gives(body: str) -> None:
    text = HEADER + body
    # The findings before suppression: those of the text with plain comments in their place.
    unsilenced = bbox_lark.check(text.replace("# bbox-lark:", "# a note:"))
    document = bbox_lark.parse(text)
    applied = apply_suppressions(document, unsilenced, lambda code: True)
    assert sorted(applied, key=lambda d: (d.line, d.col, d.code)) == bbox_lark.check(text)


def found(body: str) -> list[tuple[int, int, str, str]]:
    return [(d.line, d.col, d.code, d.name) for d in bbox_lark.check(HEADER + body)]


def test_each_unknown_code_of_a_list_is_reported_at_its_own_column() -> None:
    assert found("# bbox-lark: ignore[W003, W999, W998]\nbogus\n") == [
        (7, 27, "I011", "invalid-suppression"),
        (7, 33, "I011", "invalid-suppression"),
    ]


def test_an_empty_entry_of_a_list_skips_to_the_next() -> None:
    assert found("# bbox-lark: ignore[,W999]\nbogus\n") == [
        (7, 22, "I011", "invalid-suppression"),
        (8, 1, "W003", "unknown-line"),
    ]


def test_a_one_letter_prefix_silences_its_family() -> None:
    assert found("# bbox-lark: ignore[W]\nbogus\n") == []


@pytest.mark.parametrize(("kind", "target"), [("ignore", 9), ("ignore-file", None)])
def test_read_suppression_takes_the_line_it_is_given_to_silence(kind: str, target: int | None) -> None:
    (comment,) = [
        e for e in bbox_lark.parse(HEADER + f"# bbox-lark: {kind}[W003]\n").events if e.kind == "comment"
    ]
    suppression, invalid = read_suppression(comment, 9)
    assert suppression is not None and invalid == []
    assert (suppression.line, suppression.file_wide, suppression.target) == (7, kind == "ignore-file", target)
    assert suppression.codes == [("W003", 21 + len(kind) - 6)]
