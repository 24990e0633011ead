"""bbox/1 as a format (``bbox_lark.convert.bbox``): told from its content, read with its
findings, written back byte for byte, or in canonical form from another format."""

from __future__ import annotations

from pathlib import Path

import pytest

from bbox_lark.convert import convert
from bbox_lark.convert.bbox import EXTENSIONS, sniff

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "session.bbox"
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"


def test_its_extensions() -> None:
    assert EXTENSIONS == (".bbox", ".blackbox", ".rlog")


@pytest.mark.parametrize(
    ("text", "score"),
    [
        (HEADER, 2),
        ("\n\n" + HEADER, 2),  # blank lines before the fence
        ("\ufeff" + HEADER, 2),
        ("---\r\nformat: bbox/1\r\n---\r\n", 2),
        ("u: hi\n", 1),
        ("@start\n", 1),
        ("# a comment\nu: hi\n", 1),
        ("# a comment\n", 0),
        ("tool: what is this\n", 0),  # an unknown line is no sign
        ("plain words\n", 0),
        ("", 0),
        ("u: hi\n---\n", 1),
        ("# c\n---\n", 0),  # a fence after the first line is not a header
        ("x" * 10_001 + "\nu: hi\n", 1),  # a long line is passed over, not parsed
        ("u: " + "x" * 9_997 + "\n", 1),  # 10,000 characters: parsed
    ],
)
def test_sniff(text: str, score: int) -> None:
    assert sniff(text) == score


def test_sniff_reads_fifty_lines_at_most() -> None:
    notes = "# a note\n" * 49
    assert sniff(notes + "u: hi\n") == 1
    assert sniff(notes + "# more\nu: hi\n") == 0


def test_sniff_stops_at_two_thousand_lines() -> None:
    assert sniff("\n" * 1_998 + "u: hi\n") == 1
    assert sniff("\n" * 2_000 + "u: hi\n") == 0


def test_bbox_to_bbox_gives_every_byte_back() -> None:
    text = "\ufeff" + HEADER + "u:   spaced\r\n\n# note\nt:read  a.rs →  [1 line]\n  line\n   "
    assert convert(text, "bbox", to="bbox").text == text
    assert convert(DEMO.read_bytes(), "bbox", to="bbox").text == DEMO.read_text(encoding="utf-8")


def test_canonical_is_fmt_s_form() -> None:
    import bbox_lark
    from bbox_lark.syntax.printer import format_document

    text = HEADER + "u:   spaced\nt:read  a.rs →  [1 line]\n  line\n   "
    done = convert(text, "bbox", to="bbox", canonical=True).text
    assert done == format_document(bbox_lark.parse(text))
    assert not done.endswith("   ")  # a whitespace-only last line without an ending is dropped


def test_a_whitespace_only_line_before_the_last_is_kept_blank() -> None:
    text = HEADER + "u: hi\n   \nu: there"
    assert convert(text, "bbox", to="bbox", canonical=True).text == HEADER + "u: hi\n\nu: there"


def test_from_another_format_it_is_canonical() -> None:
    compact = HEADER + "u:hi ⏎ there\nt:read a.rs→[1 line] ⏎ fn a() {}\n"
    done = convert(compact, "compact", to="bbox")
    assert "u: hi\n" in done.text and "t:read a.rs → [1 line]\n" in done.text


def test_each_line_kept_is_counted_by_kind_unless_from_another_format() -> None:
    done = convert(HEADER + "u: hi\n# c\nu: again\n\n", "bbox", to="bbox")
    rows = {(e.action, e.what): (e.count, e.lines) for e in done.fidelity.entries}
    assert rows[("kept", "user lines")] == (2, (7, 9))
    assert rows[("kept", "comment lines")] == (1, (8,))
    assert rows[("kept", "blank lines")] == (1, (10,))
    foreign = convert(HEADER + "u:hi ⏎ there\n", "compact", to="bbox")
    assert all(not e.what.endswith(" lines") or e.stage == "read" for e in foreign.fidelity.entries)


def test_the_findings_are_read_on_the_way() -> None:
    text = HEADER + "tool: what is this\nu: caf"
    done = convert(text.encode() + b"\xe9\n", "bbox", to="bbox")
    assert [d.code for d in done.diagnostics] == ["W003", "E001"]
    unchecked = convert(text.encode() + b"\xe9\n", "bbox", to="jsonl", check=False)  # type: ignore[call-arg]
    assert unchecked.diagnostics == ()


def test_a_fault_after_the_last_line_is_found() -> None:
    done = convert(HEADER.encode() + b"u: a\x00b", "bbox", to="bbox")
    assert [d.code for d in done.diagnostics] == ["E002"]


def test_the_longest_line_is_the_conversion_s() -> None:
    text = HEADER + "a: " + "x" * 300 + "\n"
    assert convert(text, "bbox", to="bbox").diagnostics == ()
    assert [d.code for d in convert(text, "bbox", to="bbox", max_line=100).diagnostics] == ["E003"]


def test_a_built_event_is_printed_from_its_values() -> None:
    import io

    from bbox_lark.convert.base import Fidelity, Input, ReadContext, WriteContext
    from bbox_lark.convert.bbox import read, write
    from bbox_lark.syntax import build

    items = list(read(Input(None, (HEADER + "u:   spaced\n").encode()), ReadContext(Fidelity(), {})))
    out = io.StringIO()
    write([*items, build.message("user", "built  text")], out, WriteContext(Fidelity(), {}))
    assert out.getvalue() == HEADER + "u:   spaced\nu: built  text\n"


def test_a_fault_before_the_last_line_is_found() -> None:
    done = convert(HEADER.encode() + b"u: caf\xe9\nu: next\n", "bbox", to="bbox")
    assert [(d.code, d.line) for d in done.diagnostics] == [("E001", 7)]


def test_sniff_passes_over_a_line_just_over_ten_thousand() -> None:
    assert sniff("u: " + "x" * 9_998 + "\n") == 0  # 10,001 characters: not parsed


def test_the_input_s_blobs_and_allowed_secrets_reach_its_checks(tmp_path: Path) -> None:
    import io

    from bbox_lark.convert import Input, convert_stream

    path = tmp_path / "a.bbox"
    path.write_text(HEADER + "t:read src/lib.rs → @blob sha256=" + "0" * 64 + " bytes=4\n", encoding="utf-8")
    assert convert_stream(Input(path), io.StringIO(), to="bbox").diagnostics == ()
    (tmp_path / ".bbox-blobs").mkdir()  # beside the file: its blobs are looked for there
    assert [d.code for d in convert_stream(Input(path), io.StringIO(), to="bbox").diagnostics] == ["E013"]
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = HEADER + f"a: {key}\n"
    assert [d.code for d in convert(text, "bbox", to="bbox").diagnostics] == ["S001"]
    assert convert(text, "bbox", to="bbox", allowed_secrets=[key]).diagnostics == ()


def test_a_built_event_before_a_read_line() -> None:
    import io

    from bbox_lark.convert.base import Fidelity, Input, ReadContext, WriteContext
    from bbox_lark.convert.bbox import read, write
    from bbox_lark.syntax import build

    head, *lines = list(read(Input(None, (HEADER + "u:   spaced\n").encode()), ReadContext(Fidelity(), {})))
    out = io.StringIO()
    write([head, build.message("user", "built"), *lines], out, WriteContext(Fidelity(), {}))
    assert out.getvalue() == HEADER + "u: built\nu:   spaced\n"


def test_a_fault_in_a_header_with_no_body_is_found() -> None:
    done = convert(
        b"---\nformat: bbox/1\nid: caf\xe9\nrepo_sha: 215db51\nrunner: local\n---\n", "bbox", to="bbox"
    )
    assert ("E001", 3) in [(d.code, d.line) for d in done.diagnostics]
