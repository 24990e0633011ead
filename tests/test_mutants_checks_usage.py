"""The rule for numbers a line states but that are not counted (``bbox_lark/checks/usage.py``,
W027 and W028), pinned down where mutation testing found nothing holding it: the column and
words of each report (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import bbox_lark

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"


def reports(body: str) -> list[tuple[str, int, int, str]]:
    found = bbox_lark.check(HEAD + body)
    return [(d.code, d.line, d.col, d.message) for d in found if d.code in {"W027", "W028"}]


def test_a_field_inside_text_is_reported_at_its_own_column() -> None:
    assert reports("a: Set tokens_out=999999 in the fixture, then run it.\n") == [
        ("W027", 7, 8, "`tokens_out=` inside text is not counted; quote it or move it to the end")
    ]


def test_cached_over_prompt_is_reported_at_the_cached_field_whatever_its_place() -> None:
    message = "cached tokens (900) exceed the prompt (10); the prompt is taken as uncached input"
    last = "a: done step=1\n# metrics step=1 prompt_tokens=10 cached_tokens=900\n"
    first = "a: done step=1\n# metrics step=1 cached_tokens=900 prompt_tokens=10\n"
    assert reports(last) == [("W028", 8, 35, message)]
    assert reports(first) == [("W028", 8, 18, message)]


def test_cached_within_the_prompt_is_not_reported() -> None:
    assert reports("a: done step=1\n# metrics step=1 prompt_tokens=910 cached_tokens=900\n") == []
