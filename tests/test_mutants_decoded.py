"""The secrets scanner's views of a text (``bbox_lark/secrets/decoded.py``), pinned down where mutation
testing found nothing holding them: each escape form, how deep escapes are resolved, the
continuation joins, and the map of each view back to the text as written (docs/testing.md,
"Mutation testing")."""

from __future__ import annotations

import pytest

from bbox_lark.secrets.decoded import joined, same, views


def all_views(text: str) -> list[tuple[str, list[int], list[int] | None]]:
    """Each view, its map at every offset (one past the end too) and its joins."""
    return [(view, [back(i) for i in range(len(view) + 1)], joins) for view, back, joins in views(text)]


def test_a_plain_text_is_its_only_view() -> None:
    assert all_views("plain") == [("plain", [0, 1, 2, 3, 4, 5], None)]
    assert all_views("a\nb") == [("a\nb", [0, 1, 2, 3], None)]  # a line break, no continuation
    assert same(7) == 7


def test_an_escape_maps_back_to_its_whole_sequence() -> None:
    assert all_views("a\\u002db")[1:] == [("a-b", [0, 1, 7, 8], None)]


@pytest.mark.parametrize(
    ("text", "char"),
    [
        ("\\u{2d}", "-"),
        ("\\u002d", "-"),
        ("\\U0000002d", "-"),
        ("\\x2D", "-"),
        ("%2d", "-"),
        ("\\/", "/"),
        ("\\'", "'"),
        ('\\"', '"'),
        ("\\\\", "\\"),
        ("\\ ", " "),
        ("\\_", "\xa0"),
        ("\\N", "\x85"),
        ("\\e", "\x1b"),
        ("\\0", "\0"),
        ("\\a", "\a"),
        ("\\b", "\b"),
        ("\\f", "\f"),
        ("\\n", "\n"),
        ("\\r", "\r"),
        ("\\t", "\t"),
    ],
)
def test_each_escape_form_is_read(text: str, char: str) -> None:
    found = all_views("k" + text + "z")
    assert found[1:] == [("k" + char + "z", [0, 1, 1 + len(text), 2 + len(text)], None)]


def test_escapes_are_resolved_three_times_at_most() -> None:
    assert all_views("%2525252D") == [
        ("%2525252D", list(range(10)), None),
        ("%25252D", [0, 3, 4, 5, 6, 7, 8, 9], None),
        ("%252D", [0, 5, 6, 7, 8, 9], None),
        ("%2D", [0, 7, 8, 9], None),
    ]


def test_a_twice_escaped_text_maps_through_both_decodings() -> None:
    assert all_views("x%255Fy\\n")[1:] == [
        ("x%5Fy\n", [0, 1, 4, 5, 6, 7, 9], None),
        ("x_y\n", [0, 1, 6, 7, 9], None),
    ]


def test_a_percent_alone_is_enough_to_decode() -> None:
    assert [view for view, _, _ in all_views("a%41")] == ["a%41", "aA"]


def test_a_code_point_past_unicode_is_kept_as_written() -> None:
    text = "k\\U00110000z \\u{110000}"
    assert {view for view, _, _ in all_views(text)} == {text}
    assert all(back == list(range(len(text) + 1)) for _, back, _ in all_views(text))


def test_surrogate_halves_are_kept_as_characters() -> None:
    assert all_views("\\ud83d\\ude00")[1:] == [("\ud83d\ude00", [0, 6, 12], None)]


def test_continuation_lines_are_joined_and_the_joins_named() -> None:
    text = "a\n  b\n\tc\r\n  d"
    assert all_views(text)[1:] == [
        ("abcd", [0, 4, 7, 12, 13], [1, 2, 3]),
        # Every other break joined too (the first and third; then the second): a key
        # wrapped over one break ends with its line there.
        ("ab\n\tcd", [0, 4, 5, 6, 7, 12, 13], [1, 5]),
        ("a\n  bc\r\n  d", [0, 1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13], [5]),
    ]
    assert joined("no break") is None
    assert all_views("a\n  b")[1:] == [("ab", [0, 4, 5], [1])]  # one break: no alternates


def test_a_joined_text_with_escapes_has_both_views() -> None:
    text = "sk\\u002d\n  ant"
    assert [(view, joins) for view, _, joins in all_views(text)] == [
        (text, None),
        ("sk-\n  ant", None),
        ("sk\\u002dant", [8]),
    ]


def test_the_last_code_point_of_unicode_is_read() -> None:
    assert all_views("\\U0010FFFF\\U0010fffe")[1:] == [("\U0010ffff\U0010fffe", [0, 10, 20], None)]


def test_a_joined_text_maps_each_character_of_a_line_back() -> None:
    assert all_views("ab\n  cd\n\tef")[1:] == [
        ("abcdef", [0, 1, 5, 6, 9, 10, 11], [2, 4]),
        ("abcd\n\tef", [0, 1, 5, 6, 7, 8, 9, 10, 11], [2]),
        ("ab\n  cdef", [0, 1, 2, 3, 4, 5, 6, 9, 10, 11], [7]),
    ]
