"""``fmt``: the canonical form (DECISIONS §7, §10; docs/fmt.md).

Formatter pairs (``tests/fixtures/fmt/*.in.bbox`` next to ``*.out.bbox``) give the expected
output; every golden and external file must format idempotently and keep its meaning (its
``document_signature``: every event, field, argument, result and continuation text, with
whitespace and arrow spelling left out); the golden corpus's formatted output is
snapshot-tested; the command is run through Typer's ``CliRunner``.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest
from conftest import CORPUS_MAX_LINE, CorpusFile, corpus_files
from printer_support import FMT_FIXTURES, external_files, file_id, golden_files
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

import bbox_lark
from bbox_lark import format_document
from bbox_lark.cli import app
from bbox_lark.syntax.parser import parse_line
from bbox_lark.syntax.printer import document_signature, format_line
from bbox_lark.syntax.source import DEFAULT_MAX_LINE, encode, split_lines

runner = CliRunner()
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"


def fmt(text: str | bytes) -> str:
    return format_document(bbox_lark.parse(text))


# -- the canonical form, line by line ----------------------------------------------------

LINES = [
    # arrows: `→` with one space each side, ASCII arrows rewritten
    ("t:test→[ok]", "t:test → [ok]"),
    ("t:read  src/a.rs   ->   [186 lines]", "t:read src/a.rs → [186 lines]"),
    ("t:read src/a.rs ->", "t:read src/a.rs →"),
    ("o: id=1 →   ", "o: id=1 →"),
    ("t:x→", "t:x →"),
    # named prefixes without a space, the others with one
    ("t: read src/a.rs", "t:read src/a.rs"),
    ("m: auto", "m:auto"),
    ("m:   auto   afk=true", "m:auto afk=true"),
    ("u:hello", "u: hello"),
    ("a:   hello   there", "a: hello   there"),  # free text keeps its inner spacing
    ("th:thinking", "th: thinking"),
    ("td:[pending] x", "td: [pending] x"),
    ("o:id=1→[ok]", "o: id=1 → [ok]"),
    ('r:"ads"', 'r: "ads"'),
    ("q:id=q1 → [pending]", "q: id=q1 → [pending]"),
    ("u:", "u:"),
    ("t:", "t:"),
    ("@start   id=s  step=1", "@start id=s step=1"),
    ("c:github.issues   q=x", "c:github.issues q=x"),
    # fields and words: one space; tabs and other whitespace between them too
    ("t:x\ta=1\t\tb=2", "t:x a=1 b=2"),
    ("t:x a=1 \u00a0 b=2", "t:x a=1 b=2"),
    # quoted strings and lists are untouched
    ('c:gh q="a  b"  →  [2]', 'c:gh q="a  b" → [2]'),
    ('u: he said "a   b"   twice', 'u: he said "a   b"   twice'),
    ("t:x [a,   b]  l=[1,  2]", "t:x [a,   b] l=[1,  2]"),
    ('t:x "a → b"   c', 't:x "a → b" c'),
    ('t:x → "quoted  result"   rest', 't:x → "quoted  result"   rest'),
    ('@end summary="a  b"  prs=[1,  2]', '@end summary="a  b" prs=[1,  2]'),
    # results: one space after the arrow, the text as written (DECISIONS §10)
    ("t:test  →   [ok]   128   tests", "t:test → [ok]   128   tests"),
    ("q: → [selected:  yes,  no]", "q: → [selected:  yes,  no]"),
    ("t:read x → [186  lines]  more", "t:read x → [186  lines]  more"),
    ("td:  [pending] Read  [pending] Fix", "td: [pending] Read  [pending] Fix"),
    # trailing metrics comments
    ("a: hi   # metrics   prompt=1   cost=2  ", "a: hi # metrics prompt=1 cost=2"),
    ("t:x → [ok]\t# metrics a=1", "t:x → [ok] # metrics a=1"),
    ("t:x # metrics", "t:x # metrics"),
    # comments: structured ones canonical, plain ones only lose trailing whitespace
    ("#   metrics  step=3   a=1", "# metrics step=3 a=1"),
    ("#t=00:00:01", "# t=00:00:01"),
    ("#  anchor  step=2", "# anchor step=2"),
    ("# plain   comment   ", "# plain   comment"),
    ("#no space", "#no space"),
    ("## heading", "## heading"),
    ("#", "#"),
    ("#   ", "#"),
    # unknown lines lose trailing whitespace only
    ("hello   world   ", "hello   world"),
    (" one leading space ", " one leading space"),
    # continuation and blank lines
    ("  continuation   text   ", "  continuation   text   "),
    ("\tcontinuation ", "\tcontinuation "),
    ("   ", ""),
    ("\t", ""),
]


@pytest.mark.parametrize(("line", "expected"), LINES, ids=[repr(line) for line, _ in LINES])
def test_canonical_line(line: str, expected: str) -> None:
    node = parse_line(line)
    assert format_line(node) == expected
    assert format_line(parse_line(expected)) == expected  # idempotent


KEPT = [
    # One space after the prefix would start a metrics comment.
    "u:# metrics prompt=5",
    # One space before `->` would make it an arrow.
    "o:-> x",
    # `#<tab>metrics` in text: one space there would start a metrics comment.
    "t:x #\tmetrics b → [ok]",
]


@pytest.mark.parametrize("line", KEPT)
def test_line_whose_rewrite_would_read_differently_is_kept(line: str) -> None:
    assert format_line(parse_line(line)) == line


def test_unknown_line_never_becomes_a_fence() -> None:
    # `---` followed by a vertical tab is not a fence; without it it would be one, and a
    # file without a header would suddenly start with a header.
    text = "---\x0b\nu: hi\n"
    assert fmt(text) == "---\x0b\nu: hi\n"
    assert bbox_lark.parse(fmt(text)).header_info is None


def test_header_is_untouched() -> None:
    header = "---\nformat:   bbox/1   \nid: s\nrepo_sha: 215db51\nrunner: local\nnote:  a  b  \n---   \n"
    assert fmt(header + "u:hi\n") == header + "u: hi\n"


def test_line_endings_bom_and_final_newline_are_kept() -> None:
    text = "\ufeff" + HEADER.replace("\n", "\r\n") + "u:a\r\nu:b\nu:c"
    assert fmt(text) == "\ufeff" + HEADER.replace("\n", "\r\n") + "u: a\r\nu: b\nu: c"


def test_invalid_bytes_survive() -> None:
    data = HEADER.encode() + b"t:caf\xe9   x\n"
    assert encode(fmt(data)) == HEADER.encode() + b"t:caf\xe9 x\n"


# -- formatter pairs ---------------------------------------------------------------------

PAIRS = sorted(FMT_FIXTURES.glob("*.in.bbox"))


def _expected(path: Path) -> Path:
    return path.with_name(path.name.replace(".in.bbox", ".out.bbox"))


def test_pairs_are_found() -> None:
    assert len(PAIRS) >= 5
    assert all(_expected(p).exists() for p in PAIRS)
    assert sorted(FMT_FIXTURES.glob("*.out.bbox")) == sorted(_expected(p) for p in PAIRS)


@pytest.mark.parametrize("path", PAIRS, ids=[p.name.removesuffix(".in.bbox") for p in PAIRS])
def test_formatter_pair(path: Path) -> None:
    source, expected = path.read_bytes(), _expected(path).read_bytes()
    assert encode(fmt(source)) == expected
    assert encode(fmt(expected)) == expected
    assert document_signature(bbox_lark.parse(source)) == document_signature(bbox_lark.parse(expected))


# -- every corpus file: idempotent, meaning kept ------------------------------------------

GOLDEN = golden_files()
EXTERNAL = external_files()


def _check_fmt_properties(data: bytes, max_line: int = CORPUS_MAX_LINE) -> None:
    document = bbox_lark.parse(data, max_line=max_line)
    once = format_document(document)
    again = bbox_lark.parse(once, max_line=max_line)
    assert format_document(again) == once
    assert document_signature(again) == document_signature(document)
    # What fmt leaves alone: the header, every continuation line; every other body line has
    # no trailing whitespace.
    assert [h.raw for h in again.header_lines] == [h.raw for h in document.header_lines]
    conts = [(c.raw, c.eol) for c in document.lines if c.kind == "continuation"]
    assert [(c.raw, c.eol) for c in again.lines if c.kind == "continuation"] == conts
    assert all(line.raw == line.raw.rstrip() for line in again.lines if line.kind != "continuation")


@pytest.mark.parametrize("path", GOLDEN, ids=[file_id(p) for p in GOLDEN])
def test_golden_file_formats_idempotently_and_keeps_meaning(path: Path) -> None:
    # corpus/hostile needs long lines: it is parsed with the default limit (corpus/README.md).
    _check_fmt_properties(path.read_bytes(), DEFAULT_MAX_LINE if "hostile" in path.parts else CORPUS_MAX_LINE)


@pytest.mark.skipif(not EXTERNAL, reason="../shared/corpus-external is absent")
@pytest.mark.parametrize("path", EXTERNAL, ids=[file_id(p) for p in EXTERNAL])
def test_external_file_formats_idempotently_and_keeps_meaning(path: Path) -> None:
    _check_fmt_properties(path.read_bytes())


def test_meaning_check_can_fail() -> None:
    # The signature sees a changed word, field value, result, continuation and kind.
    base = document_signature(bbox_lark.parse(HEADER + "t:x a=1 → [ok]\n  c\n"))
    for other in ("t:x a=2 → [ok]\n  c\n", "t:x a=1 → [err]\n  c\n", "t:x a=1 → [ok]\n  d\n", "u: x\n  c\n"):
        assert document_signature(bbox_lark.parse(HEADER + other)) != base


# -- snapshots of the golden corpus ------------------------------------------------------

SNAPSHOT_FILES = corpus_files("valid") + corpus_files("invalid")
_HIDDEN = re.compile("[\x00-\x08\x0a-\x1f\x7f\udc80-\udcff]")


def visible(text: str) -> str:
    """Formatted text as a reviewable snapshot: control characters and undecodable bytes
    as ``\\xNN``, the BOM, CRLF endings and a missing final newline as markers."""
    out = []
    if text.startswith("\ufeff"):
        out.append("<BOM>\n")
        text = text[1:]
    for raw, eol in split_lines(text):
        shown = _HIDDEN.sub(lambda m: f"\\x{ord(m[0]) % 0xDC00:02x}", raw)
        out.append(shown + {"\n": "", "\r\n": "<CRLF>", "": "<no final newline>"}[eol] + "\n")
    return "".join(out)


def test_visible() -> None:
    assert visible("\ufeffa\r\nb\x00\udcff\nc") == "<BOM>\na<CRLF>\nb\\x00\\xff\nc<no final newline>\n"


@pytest.mark.parametrize("file", SNAPSHOT_FILES, ids=[f.id for f in SNAPSHOT_FILES])
def test_fmt_output(file: CorpusFile, snapshot_text: SnapshotAssertion) -> None:
    document = bbox_lark.parse(file.data(), max_line=CORPUS_MAX_LINE)
    assert visible(format_document(document)) == snapshot_text


# -- the command -------------------------------------------------------------------------

MESSY = HEADER + "u:Fix it\nt:test→[ok]\n"
CLEAN = HEADER + "u: Fix it\nt:test → [ok]\n"
BROKEN = HEADER + 't:grep "open  → [ok]\n'


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"messy": MESSY, "clean": CLEAN, "broken": BROKEN}
    out = {}
    for name, text in paths.items():
        out[name] = tmp_path / f"{name}.bbox"
        out[name].write_bytes(text.encode())
    return out


def test_fmt_rewrites_in_place(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["fmt", str(files["messy"]), str(files["clean"])])
    assert result.exit_code == 0, result.output
    assert files["messy"].read_text() == CLEAN
    assert files["clean"].read_text() == CLEAN
    assert f"reformatted {files['messy']}" in result.stderr
    assert "1 file(s) reformatted, 1 unchanged" in result.stderr


def test_fmt_keeps_file_mode_and_leaves_no_temporary_file(files: dict[str, Path]) -> None:
    files["messy"].chmod(0o640)
    assert runner.invoke(app, ["fmt", str(files["messy"])]).exit_code == 0
    assert stat.S_IMODE(files["messy"].stat().st_mode) == 0o640
    assert sorted(p.name for p in files["messy"].parent.iterdir()) == [
        "broken.bbox",
        "clean.bbox",
        "messy.bbox",
    ]


def test_fmt_interrupted_write_leaves_the_old_file(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    result = runner.invoke(app, ["fmt", str(files["messy"])])
    assert result.exit_code == 2
    assert "cannot write" in result.stderr
    assert files["messy"].read_text() == MESSY
    assert len(list(files["messy"].parent.iterdir())) == 3


def test_fmt_check_lists_files_that_would_change(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["fmt", "--check", str(files["messy"]), str(files["clean"])])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == f"would reformat {files['messy']}"
    assert str(files["clean"]) not in result.stderr
    assert files["messy"].read_text() == MESSY  # never writes


def test_fmt_check_passes_on_canonical_files(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["fmt", "--check", str(files["clean"])])
    assert result.exit_code == 0
    assert "0 file(s) would be reformatted, 1 unchanged" in result.stderr


def test_fmt_diff_prints_a_unified_diff_and_writes_nothing(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["fmt", "--diff", str(files["messy"])])
    assert result.exit_code == 1  # it would change something (DECISIONS §11)
    name = str(files["messy"])
    assert result.stdout == (
        f"--- a/{name}\n+++ b/{name}\n@@ -4,5 +4,5 @@\n repo_sha: 215db51\n runner: local\n"
        " ---\n-u:Fix it\n-t:test→[ok]\n+u: Fix it\n+t:test → [ok]\n"
    )
    assert files["messy"].read_text() == MESSY


def test_fmt_check_and_diff_together(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["fmt", "--check", "--diff", str(files["messy"])])
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a/")
    assert files["messy"].read_text() == MESSY


def test_fmt_diff_exits_0_when_nothing_would_change(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["fmt", "--diff", str(files["clean"])])
    assert result.exit_code == 0
    assert result.stdout == ""


def test_fmt_refuses_a_file_with_errors(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["fmt", str(files["broken"]), str(files["messy"])])
    assert result.exit_code == 1
    assert f"{files['broken']}:7:8: E012" in result.stderr
    assert result.stdout == ""
    assert "1 error(s); not formatted (fix them first, or pass --force)" in result.stderr
    assert files["broken"].read_text() == BROKEN
    assert files["messy"].read_text() == CLEAN  # the other file is still formatted


def test_fmt_force_rewrites_a_file_with_errors(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["fmt", "--force", str(files["broken"])])
    assert result.exit_code == 0, result.output
    assert files["broken"].read_text() == HEADER + 't:grep "open → [ok]\n'


def test_fmt_check_reports_files_with_errors_like_others(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["fmt", "--check", str(files["broken"])])
    assert result.exit_code == 1
    assert f"would reformat {files['broken']}" in result.stderr


def test_fmt_stdin_to_stdout() -> None:
    result = runner.invoke(app, ["fmt", "-"], input=MESSY.encode())
    assert result.exit_code == 0
    assert result.stdout_bytes == CLEAN.encode()


def test_fmt_stdin_keeps_invalid_bytes() -> None:
    data = HEADER.encode() + b"t:caf\xe9   x\r\n"
    result = runner.invoke(app, ["fmt", "--force", "-"], input=data)
    assert result.exit_code == 0
    assert result.stdout_bytes == HEADER.encode() + b"t:caf\xe9 x\r\n"


def test_fmt_directory(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.rlog").write_text(MESSY)
    (tmp_path / "notes.txt").write_text("u:not a log   \n")
    result = runner.invoke(app, ["fmt", str(tmp_path)])
    assert result.exit_code == 0
    assert (tmp_path / "sub" / "a.rlog").read_text() == CLEAN
    assert (tmp_path / "notes.txt").read_text() == "u:not a log   \n"


def test_fmt_missing_path_is_a_usage_error(files: dict[str, Path], tmp_path: Path) -> None:
    result = runner.invoke(app, ["fmt", str(tmp_path / "nope.bbox"), str(files["messy"])])
    assert result.exit_code == 2
    assert "no such file or directory" in result.stderr
    assert files["messy"].read_text() == CLEAN  # the readable file is still formatted
