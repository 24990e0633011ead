"""The values the Writer writes (``bbox_lark/write/values.py``), pinned down where mutation
testing found nothing holding them: each value type's text, the messages naming the argument
at fault, which streams take bytes, names' length, blob pointers, markers, plain comments, a
line's values scanned together for secrets, and what an appended file already holds
(docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import datetime as dt
import io
import os
from pathlib import Path

import pytest

from bbox_lark.write import values as wv
from bbox_lark.write.writer import Writer

GH = "gh" + "p" + "_" + "FAKEfake0123456789notARealTokenABC12"
RANDOM = "Fk9q2LmZ7vXw4RtY8pQs"


class BytesPath(os.PathLike):  # type: ignore[type-arg]
    def __fspath__(self) -> bytes:
        return b"/x"


def test_a_scalar_as_text() -> None:
    assert [wv.scalar(v, "a") for v in ("s", True, False, 3, 2.5, Path("/x/y"))] == [
        "s",
        "true",
        "false",
        "3",
        "2.5",
        "/x/y",
    ]


@pytest.mark.parametrize(("value", "name"), [(BytesPath(), "BytesPath"), ([1], "list"), (None, "NoneType")])
def test_a_value_that_is_no_scalar_is_named_with_its_type(value: object, name: str) -> None:
    with pytest.raises(TypeError) as raised:
        wv.scalar(value, "arg 1")
    assert str(raised.value) == f"arg 1 must be a str, a number, a bool or a path, not {name}"


def test_a_str_is_needed() -> None:
    assert wv.need_str("x", "w") == "x"
    with pytest.raises(TypeError, match=r"^a header key must be a str, not int$"):
        wv.need_str(1, "a header key")


def test_json_keeps_non_ascii_and_names_what_it_cannot_write() -> None:
    assert wv.as_json({"é": [1, None]}, "r") == '{"é": [1, null]}'
    with pytest.raises(TypeError, match=r"^result: a set JSON cannot write \(Object of type set"):
        wv.as_json({1, 2}, "result")
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(TypeError, match=r"^result: a list JSON cannot write \(Circular reference"):
        wv.as_json(loop, "result")


def test_header_values_as_yaml_writes_them() -> None:
    value = {"a": [dt.date(2026, 1, 2), dt.datetime(2026, 1, 2, 3, 4, 5)], "b": (1, None, 2.5, "s", True)}
    assert wv.header_value(value, "h") == {
        "a": ["2026-01-02", "2026-01-02T03:04:05"],
        "b": [1, None, 2.5, "s", True],
    }


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({1: 2}, "header['x'] key must be a str, not int"),
        (
            {"a": {"b": {3}}},
            "header['x']['a']['b'] must be a str, a number, a bool, None, a list or a mapping, not set",
        ),
        (
            [0, object()],
            "header['x'][1] must be a str, a number, a bool, None, a list or a mapping, not object",
        ),
        (b"x", "header['x'] must be a str, a number, a bool, None, a list or a mapping, not bytes"),
    ],
)
def test_a_header_value_yaml_cannot_carry_names_its_place(value: object, message: str) -> None:
    with pytest.raises(TypeError) as raised:
        wv.header_value(value, "header['x']")
    assert str(raised.value) == message


class _Mode:
    def __init__(self, mode: object) -> None:
        self.mode = mode


def test_which_streams_take_bytes() -> None:
    with open(os.devnull, "wb") as raw, open(os.devnull, "w") as text:
        streams = [io.StringIO(), text, io.BytesIO(), raw, io.FileIO(os.devnull, "w")]
        assert [wv.is_binary(s) for s in streams] == [False, False, True, True, True]
    assert [wv.is_binary(_Mode(m)) for m in ("wb", "w", 3, "ab+")] == [True, False, False, True]
    assert wv.is_binary(object()) is False


def test_a_name_is_at_most_1024_characters() -> None:
    wv.check_name("x" * 1024, "n")
    with pytest.raises(ValueError) as raised:
        wv.check_name("x" * 1025, "tool name")
    assert str(raised.value) == "tool name is 1025 characters long; a name is at most 1024"


def test_small_predicates() -> None:
    assert wv.parts_of("k=", ("a", "b")) == [("k=", "a"), ("k=", "b")]
    assert wv.parts_of("k=", "a") == [("k=", "a")]
    pointer = "@blob sha256=" + "a" * 64 + " bytes=3"
    assert wv.is_pointer(pointer)
    assert not wv.is_pointer(pointer + " x") and not wv.is_pointer(" " + pointer)
    assert not wv.is_pointer("@blob sha256=" + "a" * 64)
    assert wv.count_markers("a [redacted:x] b [redacted:y]") == 2
    assert wv.count_markers("none") == 0 and wv.count_markers("[redacted:") == 0
    assert wv.typename(1.5) == "float"


@pytest.mark.parametrize(
    ("text", "raw"),
    [
        ("plain", "# plain"),
        ("ok # x", "# ok # x"),
        ("two\nlines", '# "two\\nlines"'),
        (" lead", '# " lead"'),
        ("trail ", '# "trail "'),
        ("t=00:00:01", '# "t=00:00:01"'),  # as written it would be a structured comment
        ("redactions=3", '# "redactions=3"'),
        ("bell\x07", '# "bell\\u{7}"'),
    ],
)
def test_a_plain_comment_reads_back_as_its_text(text: str, raw: str) -> None:
    assert wv.plain_comment(text).raw == raw


def test_a_lines_values_are_scanned_together() -> None:
    assert wv.scanned([]) == []
    assert wv.scanned([("a=", "b"), ("c=", "d")]) == ["b", "d"]
    # the value beside its key, and a key inside the second part alone
    assert wv.scanned([("token=", RANDOM), ("", f"x {GH} y")]) == [
        "[redacted:generic_secret]",
        "x [redacted:github_token] y",
    ]
    # the key is one part, the value the next: judged as the reader sees them
    assert wv.scanned([("", "password"), ("=", RANDOM)]) == ["password", "[redacted:generic_secret]"]
    # parts are joined by a space: the value is still judged beside its name
    assert wv.scanned([("", "password="), ("", RANDOM)]) == ["password=", "[redacted:generic_secret]"]
    assert wv.scanned([("x ", GH), ("y ", "z")]) == ["[redacted:github_token]", "z"]
    assert wv.scanned([("", f"{GH} and {GH}")]) == ["[redacted:github_token] and [redacted:github_token]"]


def test_a_key_block_over_an_empty_part_leaves_that_part_empty() -> None:
    begin = "-----BEGIN RSA PRIVATE KEY-----"
    assert wv.scanned([("", f"{begin} MIIEFAKE"), ("", ""), ("", "KEYFORtests")]) == [
        "[redacted:private_key]",
        "",
        "[redacted:private_key]",
    ]


def test_resume_reads_what_an_appended_file_holds(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    path.write_text(
        "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\n---\n@start id=s\n# t=00:01:30 after the build\n"
        "t:bash 'x' id=call_7 step=4 → [ok]\nu: [redacted:a] [redacted:b]\n  [redacted:c]\n"
        "# t=00:00:10\n# t=00:01:00 later\na: step=2 cut",
        encoding="utf-8",
    )
    found = wv.resume(path)
    assert (found.ids, found.step, found.started, found.markers, found.last_mark, found.cut) == (
        {"s", "call_7"},  # @start's id too
        4,
        True,
        3,
        90,
        True,
    )
    path.write_text(
        "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\n---\nu: hi\n# t=\n# t=00:00:00\n# xx99:00:00\n"
        "t:elapsed 'x' → [ok]\n@end\n",
        encoding="utf-8",
    )
    found = wv.resume(path)
    assert (found.ids, found.step, found.started, found.markers, found.last_mark, found.cut) == (
        set(),
        0,
        False,
        0,
        0,
        False,
    )
    assert wv.resume(tmp_path / "missing.bbox") == wv.Resumed()


def test_a_writer_appending_goes_on_from_what_the_file_holds(tmp_path: Path) -> None:
    path = tmp_path / "s.bbox"
    path.write_text(
        "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\n---\n@start id=s\n"
        "t:bash 'x' id=call_1 step=4 → [ok]\nu: [redacted:a]",
        encoding="utf-8",
    )
    with Writer(path, {"id": "s", "repo_sha": "abc1234"}, auto_step=True) as log:
        log.user("again")
        log.call("bash", "y").finish()
    text = path.read_text(encoding="utf-8")
    assert text.count("@start") == 1 and text.count("---") == 2
    assert "u: [redacted:a]\nu: again step=5\n" in text
    assert "id=call_2" in text and "# redactions=1\n" in text
