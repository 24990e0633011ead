"""Blob pointers (``bbox_lark/checks/blobs.py``: W006, I008, W016, W017, E013, E014), pinned down
one finding at a time: each shape's code, message and column at the edges of the hash's
length (5, 6, 63, 64 and 65 digits), a size over the largest integer, a mime type, a pointer
on a continuation line, the blob folder beside the file, and a blob's content and size
checked in that order (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import bbox_lark

HEAD = "---\nformat: bbox/1\nid: s\nrepo_sha: abc1234\nrunner: local\n---\n"
SHA = hashlib.sha256(b"test").hexdigest()


def found(body: str, **options: object) -> list[tuple[int, int, str, str]]:
    return [(d.line, d.col, d.code, d.message) for d in bbox_lark.check(HEAD + body, **options)]  # type: ignore[arg-type]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A blob folder holding ``test`` under its sha256, and ``other`` under 64 ones."""
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    (blobs / SHA).write_bytes(b"test")
    (blobs / ("1" * 64)).write_bytes(b"other")
    return blobs


@pytest.mark.parametrize(
    ("pointer", "code", "message"),
    [
        ("sha256=abcde bytes=4", "W006", "blob sha256 'abcde' has fewer than 6 hex digits"),
        ("sha256=abcdef bytes=4", "I008", "blob sha256 'abcdef' is abbreviated and cannot be verified"),
        (
            f"sha256={SHA[:63]} bytes=4",
            "I008",
            f"blob sha256 '{SHA[:63]}' is abbreviated and cannot be verified",
        ),
        (f"sha256={SHA}0 bytes=4", "W017", "blob sha256 has 65 hex digits, more than 64"),
        ("sha256=xyz bytes=4", "W016", "blob sha256 'xyz' is not hexadecimal"),
        ("bytes=4", "W017", "blob pointer without sha256="),
        ("sha256= bytes=4", "W017", "blob pointer without sha256="),
        (f"sha256={SHA}", "W017", "blob pointer without bytes="),
        (
            f"sha256={SHA} bytes=99999999999999999999999",
            "W017",
            "blob bytes=99999999999999999999999 is over 9223372036854775807",
        ),
        (f"sha256={SHA} bytes=4 mime=text", "W017", "blob mime=text is not type/subtype"),
    ],
)
def test_each_shape_of_a_pointer_has_its_finding(pointer: str, code: str, message: str) -> None:
    assert found(f"t:read a → @blob {pointer}\n") == [(7, 12, code, message)]


def test_a_full_pointer_with_a_size_and_a_mime_type_is_clean() -> None:
    assert found(f"t:read a → @blob sha256={SHA} bytes=4 mime=text/plain; charset=utf-8\n") == []


def test_a_pointer_on_a_continuation_line_is_checked_where_it_stands() -> None:
    body = f"t:read a → [running]\n  output @blob sha256={SHA} bytes=x\n"
    assert found(body) == [(8, 10, "W017", "blob bytes=x is not an integer")]


def test_a_hash_in_capitals_finds_its_blob(folder: Path) -> None:
    assert found(f"t:read a → @blob sha256={SHA.upper()} bytes=4\n", blobs=folder) == []


@pytest.mark.parametrize(
    ("pointer", "message"),
    [
        (f"sha256={SHA} bytes=5", "E014 blob 9f86d081884c… is 4 bytes, pointer says 5"),
        (f"sha256={'0' * 64} bytes=4", "E013 blob 000000000000… is not in the blob folder"),
        (f"sha256={'1' * 64} bytes=5", "E014 blob 111111111111… content does not match its sha256"),
        (f"sha256={'1' * 64} bytes=9", "E014 blob 111111111111… content does not match its sha256"),
    ],
)
def test_a_blob_is_checked_against_its_pointer(folder: Path, pointer: str, message: str) -> None:
    code, _, text = message.partition(" ")
    assert found(f"t:read a → @blob {pointer}\n", blobs=folder) == [(7, 12, code, text)]


@pytest.mark.parametrize(
    ("sha", "code"), [("0" * 12, "I008"), ("0" * 65, "W017"), ("0" * 5, "W006"), ("xyz", "W016")]
)
def test_an_abbreviated_or_bad_hash_is_not_looked_up(folder: Path, sha: str, code: str) -> None:
    assert [f[2] for f in found(f"t:read a → @blob sha256={sha} bytes=4\n", blobs=folder)] == [code]


def test_every_pointer_of_a_line_is_looked_up_after_one_that_is_not(folder: Path) -> None:
    missing, bad = f"@blob sha256={'0' * 64} bytes=4", f"@blob sha256={SHA} bytes=5"
    assert [f[2] for f in found(f"t:read a → @blob sha256=abc123 bytes=4 {missing}\n", blobs=folder)] == [
        "I008",
        "E013",
    ]
    assert [f[2] for f in found(f"t:read a → {missing} {bad}\n", blobs=folder)] == ["E013", "E014"]


def test_the_blob_folder_beside_the_file_is_used_unless_one_is_given(tmp_path: Path, folder: Path) -> None:
    body = f"t:read a → @blob sha256={SHA} bytes=4\n"
    assert found(body, path=tmp_path / "s.bbox") == []  # no .bbox-blobs: blobs are not checked
    (tmp_path / ".bbox-blobs").mkdir()
    assert found(body, path=tmp_path / "s.bbox") == [
        (7, 12, "E013", "blob 9f86d081884c… is not in the blob folder")
    ]
    assert found(body, path=tmp_path / "s.bbox", blobs=folder) == []
