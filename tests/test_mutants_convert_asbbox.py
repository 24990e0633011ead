"""Reading any format as bbox (``bbox_lark.convert.asbbox``): what ``stats``, ``report``,
``export`` and ``query`` count is the bbox form :func:`bbox_file` hands out, so its bytes must
be the conversion's, a bbox file must be read as it is, and the temporary copy must go.
:func:`foreign_format` decides which files are converted first."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from bbox_lark.convert import ConvertError, convert
from bbox_lark.convert.asbbox import bbox_file, foreign_format
from bbox_lark.convert.base import Skipped

ROOT = Path(__file__).resolve().parent.parent
CLAUDE_CODE = ROOT / "tests" / "fixtures" / "claude-code" / "comments.jsonl"
LIGHTBOX = ROOT / "tests" / "fixtures" / "lightbox" / "session"
DEMO = ROOT / "examples" / "session.bbox"
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"


def _cc_as_bbox(data: bytes, **options: object) -> str:
    return convert(data.decode("utf-8"), "claude-code", to="bbox", scan=False, **options).text  # type: ignore[arg-type]


def trajectory(name: str) -> str:
    text = DEMO.read_text(encoding="utf-8").replace("id: ", f"id: {name}-", 1)
    return json.dumps(json.loads(convert(text, "bbox", to="atif").text)) + "\n"


# -- foreign_format ---------------------------------------------------------------------------------


def test_a_bbox_file_is_not_foreign(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEADER + "u: hi\n", encoding="utf-8")
    assert foreign_format(path) is None
    assert foreign_format(str(path)) is None


def test_a_file_no_format_knows_is_read_as_bbox(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just words\n", encoding="utf-8")
    assert foreign_format(path) is None


def test_a_claude_code_session_is_foreign(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(CLAUDE_CODE.read_bytes())
    assert foreign_format(path) == "claude-code"
    assert foreign_format(str(path)) == "claude-code"


def test_a_trajectory_s_address_is_atif(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(trajectory("one") + trajectory("two"), encoding="utf-8")
    assert foreign_format(path) == "atif"
    assert foreign_format(f"{path}#2") == "atif"


def test_a_name_that_says_one_format_decides(tmp_path: Path) -> None:
    path = tmp_path / "named.bbox"
    path.write_bytes(CLAUDE_CODE.read_bytes())  # a Claude Code session, named as bbox
    assert foreign_format(path) is None


def test_a_folder_standard_input_or_a_missing_file_is_not_foreign(tmp_path: Path) -> None:
    assert foreign_format(tmp_path) is None
    assert foreign_format(LIGHTBOX) is None  # a folder format: read where it is named
    assert foreign_format("-") is None
    assert foreign_format(tmp_path / "missing.jsonl") is None


def test_a_file_that_cannot_be_read_is_not_foreign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bbox_lark.convert

    path = tmp_path / "s.jsonl"
    path.write_bytes(CLAUDE_CODE.read_bytes())

    def failing(self: object, *args: object) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(bbox_lark.convert.Input, "head", failing)
    assert foreign_format(path) is None


# -- bbox_file --------------------------------------------------------------------------------------


def test_a_bbox_file_is_handed_out_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEADER + "u: hi\n", encoding="utf-8")
    with bbox_file(path) as handed:
        assert handed == path
    with bbox_file(str(path), from_="bbox") as handed:
        assert handed == path
    assert path.is_file()


def test_bytes_are_copied_to_a_temporary_file_removed_afterwards() -> None:
    data = (HEADER + "u: hé\r\nno final newline").encode()
    with bbox_file(data) as handed:
        assert handed.suffix == ".bbox" and handed.name.startswith("bbox-lark-")
        assert handed.read_bytes() == data
    assert not handed.exists()


def test_standard_input_is_copied_once(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (HEADER + "u: from a pipe\n").encode()

    class Stdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", Stdin())
    with bbox_file("-") as handed:
        assert handed.read_bytes() == data
    assert not handed.exists()


def test_another_format_is_its_conversion(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    data = CLAUDE_CODE.read_bytes()
    path.write_bytes(data)
    with bbox_file(path) as handed:
        assert handed != path and handed.suffix == ".bbox"
        assert handed.read_text(encoding="utf-8") == _cc_as_bbox(data)
    assert not handed.exists()
    with bbox_file(path, from_="claude-code") as handed:
        assert handed.read_text(encoding="utf-8") == _cc_as_bbox(data)
    with bbox_file(data, from_="claude-code") as handed:
        assert handed.read_text(encoding="utf-8") == _cc_as_bbox(data)


def test_the_conversion_keeps_to_the_longest_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    data = CLAUDE_CODE.read_bytes()
    path.write_bytes(data)
    with bbox_file(path, max_line=128) as handed:
        text = handed.read_text(encoding="utf-8")
    assert text == _cc_as_bbox(data, max_line=128)
    assert text != _cc_as_bbox(data)
    assert max(len(line.encode()) for line in text.splitlines()) <= 128


def test_each_record_the_conversion_skipped_is_handed_on(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    data = CLAUDE_CODE.read_bytes()
    path.write_bytes(data + b"not a record\n" + b"{cut\n")
    skipped: list[Skipped] = []
    with bbox_file(path, on_skipped=skipped.append) as handed:
        assert handed.read_text(encoding="utf-8") == _cc_as_bbox(data + b"not a record\n{cut\n")
    lines = data.count(b"\n")
    assert [record.line for record in skipped] == [lines + 1, lines + 2]
    with bbox_file(path) as handed:  # no one to tell: still converted
        assert handed.is_file()


def test_a_folder_format_is_told_by_the_conversion(tmp_path: Path) -> None:
    with bbox_file(LIGHTBOX) as handed:
        text = handed.read_text(encoding="utf-8")
    assert text.startswith("---\nformat: bbox/1\n")
    assert text == convert_folder_text(LIGHTBOX)


def convert_folder_text(folder: Path) -> str:
    from bbox_lark.convert import Input, convert_stream

    out = io.StringIO()
    convert_stream(Input(folder), out, to="bbox", check=False, scan=False)
    return out.getvalue()


def test_an_atif_json_lines_file_of_one_trajectory_is_that_trajectory(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(trajectory("one"), encoding="utf-8")
    with bbox_file(path) as handed:
        text = handed.read_text(encoding="utf-8")
    assert "id: one-" in text
    with bbox_file(path, from_="atif") as handed:
        assert handed.read_text(encoding="utf-8") == text


def test_an_atif_json_lines_file_of_several_says_how_to_name_one(tmp_path: Path) -> None:
    path = tmp_path / "three.jsonl"
    path.write_text(trajectory("one") + "\n" + trajectory("two") + trajectory("three"), encoding="utf-8")
    for from_ in (None, "atif"):
        with pytest.raises(ConvertError) as raised, bbox_file(path, from_=from_):
            pass
        assert str(raised.value) == (
            f"holds 3 ATIF trajectories (one per line): name one as {path}#1"
            " (stats, export and query read each)"
        )


def test_a_trajectory_is_read_by_its_address(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    path.write_text(trajectory("one") + trajectory("two"), encoding="utf-8")
    with bbox_file(f"{path}#2") as handed:
        second = handed.read_text(encoding="utf-8")
    with bbox_file(f"{path}#1", from_="atif") as handed:
        first = handed.read_text(encoding="utf-8")
    assert "id: two-" in second and "id: one-" in first
    assert not handed.exists()


def test_a_claude_code_session_named_as_such_is_not_taken_for_atif_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(CLAUDE_CODE.read_bytes())
    with bbox_file(path, from_="claude-code") as handed:
        assert handed.read_text(encoding="utf-8") == _cc_as_bbox(CLAUDE_CODE.read_bytes())


def test_an_unknown_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.bbox"
    path.write_text(HEADER, encoding="utf-8")
    with pytest.raises(ConvertError), bbox_file(path, from_="no-such-format"):
        pass


def test_the_temporary_file_goes_when_the_reader_fails(tmp_path: Path) -> None:
    data = (HEADER + "u: hi\n").encode()
    handed: list[Path] = []
    with pytest.raises(RuntimeError), bbox_file(data) as path:
        handed.append(path)
        raise RuntimeError("the caller failed")
    assert handed and not handed[0].exists()
