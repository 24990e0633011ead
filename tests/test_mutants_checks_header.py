"""The header rule (``bbox_lark/checks/header.py``: E004, E005, E010, E011, W008, W009, W010,
I003, I004, I006), pinned down where mutation testing found nothing holding it: the line and
words of each report, empty against missing fields, the format's family and version, the
bounds of a repo_sha (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import pytest

import bbox_lark

CODES = {"E004", "E005", "E006", "E010", "E011", "W008", "W009", "W010", "W026", "I003", "I004", "I006"}


def reports(text: str) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.col, d.message) for d in bbox_lark.check(text) if d.code in CODES]


def head(*lines: str) -> str:
    return "---\nrunner: local\nid: s\n" + "".join(line + "\n" for line in lines) + "---\n"


def test_no_header_and_an_unclosed_header() -> None:
    assert reports("a: hi\n") == [("E004", 1, 1, "no header: the file must start with a `---` line")]
    assert reports("---\nformat: bbox/1\n") == [
        ("E005", 1, 1, "the header's `---` is never closed"),
        ("E010", 1, 1, "required header field `id` is missing"),
        ("E010", 1, 1, "required header field `repo_sha` is missing"),
        ("I004", 1, 1, "no runner in the header"),
    ]
    assert ("E005", 2, 1, "the header's `---` is never closed") in reports(
        "\n---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\n"
    )


def test_a_yaml_error_stops_the_field_checks() -> None:
    assert reports("---\nformat: [a\n---\n") == [
        ("E006", 2, 11, "header YAML: expected ',' or ']', but got '<stream end>'")
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (head("format: bbox/1", "repo_sha: abc1234"), []),
        (head("format: bbox/1.0", "repo_sha: abcdef"), []),
        (head("format: bbox/1", "repo_sha: " + "a" * 40), []),
        (head("format: bbox/1", "repo_sha: abc1234", "mode: auto", "sandbox_id: x"), []),
        (head("format: bbox/1", "repo_sha: abc1234", "mode: manual", "extra.team: x"), []),
        (
            head("format: bbox/1", "repo_sha: abc1234", "mode: auto", "foo: 1"),
            [
                ("I003", 6, 1, "mode: auto without sandbox_id"),
                ("I006", 7, 1, "unknown header key 'foo' (kept)"),
            ],
        ),
        (
            "---\nrunner: local\nformat: bbox/1\nid:\nrepo_sha: abc1234\n---\n",
            [("E010", 4, 1, "required header field `id` is empty")],
        ),
        (
            "---\nrunner: local\nformat: bbox/1\nid: ' '\nrepo_sha: abc1234\n---\n",
            [("E010", 4, 1, "required header field `id` is empty")],
        ),
        (
            "---\nrunner: local\nformat: bbox/1\nid: null\nrepo_sha: abc1234\n---\n",
            [("E010", 4, 1, "required header field `id` is empty")],
        ),
        (
            head("format:", "repo_sha:"),
            [
                ("E010", 4, 1, "required header field `format` is empty"),
                ("E010", 5, 1, "required header field `repo_sha` is empty"),
            ],
        ),
        (
            head("format: null", "repo_sha: null"),
            [
                ("E010", 4, 1, "required header field `format` is empty"),
                ("E010", 5, 1, "required header field `repo_sha` is empty"),
            ],
        ),
        (
            head("format: json/1", "repo_sha: abc1234"),
            [("E011", 4, 1, "format 'json/1' does not start with `bbox/`")],
        ),
        (
            head("format: bbox", "repo_sha: abc1234"),
            [("E011", 4, 1, "format 'bbox' does not start with `bbox/`")],
        ),
        (
            head("format: rlog/1", "repo_sha: abc1234"),
            [("W010", 4, 1, "format 'rlog/1' is the later name of bbox/")],
        ),
        (
            head("format: rlog/2", "repo_sha: abc1234"),
            [
                ("W008", 4, 1, "format 'rlog/2' is not bbox/1"),
                ("W010", 4, 1, "format 'rlog/2' is the later name of bbox/"),
            ],
        ),
        (head("format: bbox/2", "repo_sha: abc1234"), [("W008", 4, 1, "format 'bbox/2' is not bbox/1")]),
        (head("format: bbox/1/2", "repo_sha: abc1234"), [("W008", 4, 1, "format 'bbox/1/2' is not bbox/1")]),
        (
            head("format: bbox/1", "repo_sha: abc12"),
            [("W009", 5, 1, "repo_sha 'abc12' is not 6 to 40 hex digits")],
        ),
        (
            head("format: bbox/1", "repo_sha: abcdefg"),
            [("W009", 5, 1, "repo_sha 'abcdefg' is not 6 to 40 hex digits")],
        ),
        (
            head("format: bbox/1", "repo_sha: " + "a" * 41),
            [("W009", 5, 1, f"repo_sha '{'a' * 41}' is not 6 to 40 hex digits")],
        ),
    ],
)
def test_each_field_report_has_its_line_and_words(
    text: str, expected: list[tuple[str, int, int, str]]
) -> None:
    assert reports(text) == expected
