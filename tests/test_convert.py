"""``convert`` and the compact form (docs/formats/compact.md).

Every ``corpus/**/*.bbox`` file (found by glob) and every bbox file of
``../shared/corpus-external/{bbox-docs,bbox-fragments,rlog-real}`` (skipped when absent) must
survive ``bbox → compact → bbox`` with the same meaning line for line, and compact text must
be a fixpoint of ``read → write``. The meaning is compared with a signature written here (not
the printer's), so the converter is not judged by the function it uses itself. The golden
corpus's compact output is snapshot-tested byte for byte (``.cbox`` files); the lossy form
and its report are snapshot-tested on a few files; the command is run through ``CliRunner``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS_MAX_LINE
from hypothesis import given
from printer_support import documents, external_files, fuzz_settings
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from typer.testing import CliRunner

import bbox_lark
from bbox_lark import BlankLine, Continuation, Document, Event
from bbox_lark.cli import app
from bbox_lark.convert import (
    Conversion,
    ConvertError,
    Report,
    UndetectableFormatError,
    UnknownFormatError,
    UnsupportedOptionError,
    convert,
    detect_format,
    formats,
)
from bbox_lark.convert.compact import (
    LOSSY_FIELDS,
    expand,
    read_compact,
    split_compact_line,
    write_compact,
)
from bbox_lark.syntax.printer import dumps, format_document
from bbox_lark.syntax.source import DEFAULT_MAX_LINE, encode

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"

DEMO = ROOT / "examples" / "demo.bbox"
DEMO_CBOX = ROOT / "docs" / "examples" / "demo.cbox"
COMPACT_MD = ROOT / "docs" / "formats" / "compact.md"
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
#: The registered formats as messages list them (every format added changes it).
NAMES = ", ".join(f.name for f in formats())

runner = CliRunner()


def corpus_paths() -> list[Path]:
    return sorted(CORPUS.rglob("*.bbox"))


def external_paths() -> list[Path]:
    """The external bbox files (printer_support.external_files: empty when absent)."""
    return external_files()


def corpus_id(path: Path) -> str:
    return "-".join(path.relative_to(CORPUS).with_suffix("").parts)


CORPUS_PATHS = corpus_paths()
EXTERNAL_PATHS = external_paths()


# -- the meaning of a document, written independently of the converter -----------------


def _ws(text: str) -> str:
    return " ".join(text.split())


def line_meaning(node: Any) -> tuple[Any, ...]:
    """Kind, name, fields, arguments, result kind and text, metrics of a line; the text of a
    continuation; nothing else for a blank line. Whitespace between words is left out."""
    if isinstance(node, BlankLine):
        return ("blank",)
    if isinstance(node, Continuation):
        return ("continuation", node.raw)
    assert isinstance(node, Event)
    result = node.result
    return (
        node.kind,
        node.prefix,
        node.name,
        _ws(node.text),
        node.fields,
        node.args,
        node.arrow is not None,
        None if result is None else (result.kind, _ws(result.text), result.number, result.unit),
        node.metrics,
        tuple(c.raw for c in node.continuation),
        node.oversized,
    )


def meaning(doc: Document) -> tuple[Any, ...]:
    """The document's meaning: BOM, header lines (exact), every body line's meaning at its
    line number. A whitespace-only last line without a line ending is trivia."""
    lines = list(doc.lines)
    if lines and isinstance(lines[-1], BlankLine) and not lines[-1].eol:
        lines.pop()
    header = tuple((h.raw, h.eol) for h in doc.header_lines)
    body = tuple((node.line, line_meaning(node)) for node in lines)
    return (doc.bom, header, body)


def parse_file(path: Path, max_line: int = CORPUS_MAX_LINE) -> Document:
    return bbox_lark.parse(path.read_bytes(), max_line=max_line)


def assert_round_trip(doc: Document, max_line: int) -> str:
    compact = write_compact(doc)
    back = read_compact(compact, max_line=max_line)
    assert meaning(back) == meaning(doc)
    assert len(back.events) == len(doc.events)
    assert write_compact(back) == compact, "compact is not a fixpoint of read → write"
    return compact


# -- round trip and fixpoint ---------------------------------------------------------------


@pytest.mark.parametrize("path", CORPUS_PATHS, ids=corpus_id)
def test_corpus_round_trip(path: Path) -> None:
    doc = parse_file(path)
    compact = assert_round_trip(doc, CORPUS_MAX_LINE)
    # compact → bbox is what `fmt` writes for the input, and bbox → bbox is the input.
    back = convert(compact, "compact", to="bbox", max_line=CORPUS_MAX_LINE)
    assert back.text == format_document(doc)
    assert encode(convert(path.read_bytes(), to="bbox", path=path).text) == path.read_bytes()
    # … and bbox → compact → bbox → compact is a fixpoint.
    assert convert(back.text, "bbox", to="compact", max_line=CORPUS_MAX_LINE).text == compact


def test_corpus_is_found() -> None:
    assert len(CORPUS_PATHS) >= 100
    assert {p.parent.name for p in CORPUS_PATHS} >= {"valid", "invalid"}


@pytest.mark.skipif(not EXTERNAL_PATHS, reason="../shared/corpus-external is absent")
@pytest.mark.parametrize("path", EXTERNAL_PATHS, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_external_round_trip(path: Path) -> None:
    doc = parse_file(path, max_line=DEFAULT_MAX_LINE)
    assert_round_trip(doc, DEFAULT_MAX_LINE)


@fuzz_settings(60)
@given(documents())
def test_generated_documents_round_trip(text: str) -> None:
    doc = bbox_lark.parse(text)
    compact = assert_round_trip(doc, DEFAULT_MAX_LINE)
    # compact → bbox is in fmt's canonical form and means the same. (Exactly fmt's output
    # for the corpus; generated corners that fmt keeps as written may keep compact spacing,
    # and generated files mix LF and CRLF inside one event's lines.)
    back = convert(compact, "compact", to="bbox").text
    assert format_document(bbox_lark.parse(back)) == back
    assert convert(back, "bbox", to="compact").text == compact
    assert meaning(bbox_lark.parse(back.replace("\r\n", "\n"))) == meaning(
        bbox_lark.parse(dumps(doc).replace("\r\n", "\n"))
    )
    lossy = write_compact(doc, lossy=True)
    assert write_compact(read_compact(lossy), lossy=True) == lossy


# -- the compact syntax --------------------------------------------------------------------


def test_continuations_blank_lines_and_comments_are_appended_and_kept() -> None:
    text = HEADER + "\n# t=00:00:01\nt:read  src/a.rs  → [2 lines]\n  fn a() {}\n\n\tfn b() {}\na:  done\n"
    compact = write_compact(bbox_lark.parse(text))
    assert compact == (
        HEADER + "\n# t=00:00:01\nt:read src/a.rs→[2 lines] ⏎ fn a() {} ⏎ ⏎\tfn b() {}\na:done\n"
    )
    assert expand(compact)[0] == (
        HEADER + "\n# t=00:00:01\nt:read src/a.rs→[2 lines]\n  fn a() {}\n\n\tfn b() {}\na:done\n"
    )


def test_orphan_continuations_and_leading_blank_lines_start_a_line() -> None:
    text = HEADER + "\n\n  stray\n\twith a tab\nu: hi\n"
    compact = write_compact(bbox_lark.parse(text))
    assert compact == HEADER + " ⏎ ⏎ stray ⏎\twith a tab\nu:hi\n"
    assert meaning(read_compact(compact)) == meaning(bbox_lark.parse(text))


@pytest.mark.parametrize(
    "line",
    [
        "u: the ⏎ symbol",
        "u: ⏎",
        "t:x → ⏎⏎ ⏎r",
        "# plain ⏎ comment",
        "u: a lone \r carriage return",
        "u: ends with a carriage return\r",
        "⏎ unknown line",
    ],
)
def test_escapes_keep_the_mark_and_carriage_returns(line: str) -> None:
    text = HEADER + line + "\n  cont ⏎ with ⏎⏎ marks\r\n"
    doc = bbox_lark.parse(text)
    compact = write_compact(doc)
    assert compact.count("\n") == HEADER.count("\n") + 1  # one line for the event and its continuation
    assert "\r" not in compact.replace("\r\n", "")
    assert meaning(read_compact(compact)) == meaning(doc)
    assert write_compact(read_compact(compact)) == compact


def test_escapes_in_the_header() -> None:
    text = "---\nformat: bbox/1\nid: s ⏎ x\nrepo_sha: 215db51\n---\nu: hi\n"
    compact = write_compact(bbox_lark.parse(text))
    assert "id: s ⏎⏎ x\n" in compact
    assert read_compact(compact).header["id"] == "s ⏎ x"


@pytest.mark.parametrize(
    ("line", "pieces"),
    [
        ("t:x→[ok]", ["t:x→[ok]"]),
        ("t:x ⏎ a ⏎ b", ["t:x", " a", " b"]),
        ("t:x ⏎ ⏎ a", ["t:x", "", " a"]),
        ("t:x ⏎", ["t:x", ""]),
        ("t:x ⏎\ta", ["t:x", "\ta"]),
        ("t:x ⏎⏎ a", ["t:x ⏎ a"]),
        ("t:x ⏎⏎ ⏎ a", ["t:x ⏎", " a"]),
        ("t:x ⏎ ⏎⏎a", ["t:x", " ⏎a"]),
        ("t:x ⏎r", ["t:x \r"]),
        ("t:x⏎y", ["t:x⏎y"]),  # neither a separator nor an escape: text
        ("", [""]),
    ],
)
def test_split_compact_line(line: str, pieces: list[str]) -> None:
    assert [piece for piece, _ in split_compact_line(line)] == pieces


@pytest.mark.parametrize(
    ("ending", "final"),
    [("\n", True), ("\r\n", True), ("\n", False), ("\r\n", False)],
)
def test_line_endings_bom_and_final_newline_are_kept(ending: str, final: bool) -> None:
    body = ["# c", "t:read a.rs → [1 line]", "  fn a() {}", "", "u: hi"]
    text = "\ufeff" + (HEADER + "\n".join(body)).replace("\n", ending) + (ending if final else "")
    compact = write_compact(bbox_lark.parse(text))
    assert compact.startswith("\ufeff---" + ending)
    assert compact.endswith("u:hi" + (ending if final else ""))
    assert compact.count("\n") == compact.count(ending)
    back = convert(compact, "compact", to="bbox").text
    assert back == text.replace("u: hi", "u: hi")  # already canonical: byte for byte


def test_a_trailing_whitespace_only_line_is_dropped_like_fmt_drops_it() -> None:
    text = HEADER + "u: hi\n  \t"
    compact = write_compact(bbox_lark.parse(text))
    assert compact == HEADER + "u:hi\n"
    assert convert(compact, "compact", to="bbox").text == format_document(bbox_lark.parse(text))


def test_a_line_whose_rewrite_would_read_differently_is_kept() -> None:
    # With its tab made a space, `#<tab>metrics` would start a metrics comment.
    line = "u: see #\tmetrics  below"
    doc = bbox_lark.parse(HEADER + line + "\n")
    compact = write_compact(doc)
    assert compact.endswith("u:see #\tmetrics below\n")
    assert meaning(read_compact(compact)) == meaning(doc)


def test_the_spec_compact_example_is_already_compact() -> None:
    path = CORPUS / "valid" / "spec-full-compact-format.bbox"
    text = path.read_text(encoding="utf-8")
    compact = write_compact(bbox_lark.parse(text))
    # Its lines are compact already; the blank line after the header stays an empty line.
    assert compact == text


# -- lossy ---------------------------------------------------------------------------------

LOSSY_FILES = [
    DEMO,
    CORPUS / "valid" / "spec-full-ad-monetization.bbox",
    CORPUS / "valid" / "continuations.bbox",
    CORPUS / "valid" / "metrics-inline.bbox",
]


def render_report(conversion: Conversion) -> str:
    return "".join(entry.render() + "\n" for entry in conversion.report)


@pytest.mark.parametrize("path", LOSSY_FILES, ids=lambda p: p.stem)
def test_lossy(path: Path, snapshot_text: SnapshotAssertion) -> None:
    doc = parse_file(path)
    result = convert(path.read_bytes(), to="compact", path=path, lossy=True)
    assert result.text + "\n## report\n" + render_report(result) == snapshot_text
    report = {(e.action, e.what): e.lines for e in result.report}
    comments = [e.line for e in doc.events if e.kind == "comment"]
    assert report.get(("dropped", "comment lines"), ()) == tuple(comments)
    blanks = [n.line for n in doc.lines if isinstance(n, BlankLine)]
    assert report.get(("dropped", "blank lines"), ()) == tuple(blanks)
    # What the summary keeps: every other event, in order, with its kind and name …
    back = read_compact(result.text)
    kept = [(e.kind, e.name) for e in doc.events if e.kind != "comment"]
    assert [(e.kind, e.name) for e in back.events] == kept
    # … and none of what it drops.
    assert not any(isinstance(n, (BlankLine, Continuation)) for n in back.lines)
    for event in back.events:
        assert event.metrics is None
        assert not set(event.fields) & set(LOSSY_FIELDS), event.raw
        assert event.result is None or event.result.kind != "count" or event.result.unit is None
    dropped_fields = sum(len(lines) for (action, what), lines in report.items() if what.endswith("= fields"))
    assert dropped_fields == sum(
        1 for e in doc.events if e.kind != "comment" for f in e.field_nodes if f.key in LOSSY_FIELDS
    )
    # A lossy file is compact too, and a fixpoint of its own.
    assert write_compact(back, lossy=True) == result.text


def test_lossy_results_from_continuation_lines() -> None:
    text = HEADER + 'c:github.pr create →\n  PR #203 created\nx:explore "ads" →\n  one\n  two\n'
    result = convert(text, "bbox", to="compact", lossy=True)
    assert result.text == HEADER + 'c:github.pr create→PR #203 created\nx:explore "ads"→[2]\n'
    report = {(e.action, e.what): e.lines for e in result.report}
    assert report == {
        ("synthesized", "results from a single continuation line"): (7,),
        ("synthesized", "count results (the number of continuation lines)"): (9,),
        ("dropped", "continuation lines"): (10, 11),
    }


def test_lossy_needs_compact_output() -> None:
    with pytest.raises(UnsupportedOptionError, match="lossy"):
        convert(DEMO.read_bytes(), to="bbox", lossy=True)


# -- snapshots of the golden corpus --------------------------------------------------------


class CompactSnapshotExtension(SingleFileSnapshotExtension):
    """The compact output byte for byte, as a ``.cbox`` file (CRLF and invalid bytes kept)."""

    _write_mode = WriteMode.BINARY
    file_extension = "cbox"


@pytest.mark.parametrize("path", CORPUS_PATHS, ids=corpus_id)
def test_compact_snapshot(path: Path, snapshot: SnapshotAssertion) -> None:
    compact = write_compact(parse_file(path))
    assert encode(compact) == snapshot.use_extension(CompactSnapshotExtension)


# -- the registry and detection ------------------------------------------------------------


def test_registry() -> None:
    names = [f.name for f in formats()]
    assert names[:2] == ["bbox", "compact"]
    for f in formats():
        assert f.extensions and all(e.startswith(".") and e == e.lower() for e in f.extensions)
        assert f.fidelity


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.bbox", "bbox"),
        ("a.blackbox", "bbox"),
        ("a.rlog", "bbox"),
        ("A.BBOX", "bbox"),
        ("dir.cbox/a.bbox", "bbox"),
        ("a.cbox", "compact"),
    ],
)
def test_detect_by_extension(name: str, expected: str) -> None:
    # The extension wins over content that looks like the other format.
    other = "u: hi ⏎ there\n" if expected == "bbox" else HEADER + "u: hi\n"
    assert detect_format(name, other) == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (HEADER + "u: hi\n", "bbox"),
        ("t:read a.rs → [1 line]\n", "bbox"),
        (HEADER + "t:read a.rs→[1 line] ⏎ fn a() {}\n", "compact"),
        (HEADER + "u:hi ⏎\nu:there\n", "compact"),
        ("\ufeff" + HEADER + "u:the ⏎⏎ mark\n", "compact"),
        (HEADER + "u: hi\n  cont ⏎ text\n", "bbox"),  # a separator in a continuation line is text
        ('{"t": "u", "c": "hi"}\n', None),
        ("", None),
        ("# only a comment\n", None),
    ],
)
def test_detect_by_content(content: str, expected: str | None) -> None:
    for path in (None, "-", "session.txt"):
        assert detect_format(path, content) == expected
        assert detect_format(path, content.encode()) == expected


def test_unknown_and_undetectable_formats() -> None:
    with pytest.raises(UnknownFormatError) as unknown:
        convert(DEMO.read_bytes(), to="xml")
    assert NAMES in str(unknown.value)
    with pytest.raises(UnknownFormatError):
        convert(DEMO.read_bytes(), "xml", to="bbox")
    with pytest.raises(UndetectableFormatError, match="--from"):
        convert('{"a": 1}', to="compact")
    assert issubclass(UndetectableFormatError, ConvertError)


def test_formats_are_case_insensitive() -> None:
    assert convert(DEMO.read_bytes(), "BBOX", to="Compact").target == "compact"


def test_diagnostics_of_a_compact_input_are_at_its_own_lines() -> None:
    compact = HEADER + 't:x→[ok] ⏎ one ⏎ two\nt:grep "open src\n'
    result = convert(compact, "compact", to="bbox")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [(d.code, d.line, d.col) for d in errors] == [("E012", 8, 8)]
    assert compact.splitlines()[7][7] == '"'
    # … and a finding inside an appended continuation is shown where it stands.
    text = HEADER + "t:x → [ok]\n  data @blob sha256=ab bytes=4\n\n\tmore @blob sha256=cd bytes=2\n"
    assert [(d.code, d.line) for d in bbox_lark.parse(text).diagnostics] == [("W006", 8), ("W006", 10)]
    compact = write_compact(bbox_lark.parse(text))
    line = compact.splitlines()[6]
    first = line.index("@blob") + 1
    second = line.index("@blob", first) + 1
    back = convert(compact, "compact", to="bbox")
    assert [(d.code, d.line, d.col) for d in back.diagnostics] == [("W006", 7, first), ("W006", 7, second)]


def test_report_entries_render() -> None:
    report = Report()
    for line in (3, 5, 8, 13, 21, 34):
        report.drop("comment lines", line)
    report.synthesize("count results", 2)
    rendered = [e.render() for e in report.entries]
    assert rendered == [
        "dropped comment lines: 6 (lines 3, 5, 8, 13, 21, …)",
        "synthesized count results: 1 (line 2)",
    ]


# -- docs ----------------------------------------------------------------------------------


def _table(text: str) -> list[str]:
    start = text.index("| bbox | compact |")
    return [line.strip() for line in text[start:].splitlines() if line.strip().startswith("|")][:40]


def test_the_mapping_table_in_the_docs_is_the_one_in_the_code() -> None:
    from bbox_lark.convert import compact

    docs = COMPACT_MD.read_text(encoding="utf-8")
    code = compact.__doc__ or ""
    rows = _table(code)
    assert len(rows) > 10
    assert _table(docs)[: len(rows)] == rows
    assert compact.EXTENSION in docs


def _blocks(text: str) -> list[tuple[str, str]]:
    return [(m[2], m[3]) for m in re.finditer(r"^(`{3,})(\w*)\n(.*?)^\1$", text, re.M | re.S)]


def test_the_docs_examples_are_what_convert_writes() -> None:
    blocks = _blocks(COMPACT_MD.read_text(encoding="utf-8"))
    source = next(body for language, body in blocks if language == "bbox")
    plain = [body for language, body in blocks if language == ""]
    report = next(body for language, body in blocks if language == "text")
    assert convert(source, to="compact").text == plain[0]
    lossy = convert(source, to="compact", lossy=True)
    assert lossy.text == plain[1]
    assert "".join(f"small.bbox: {e.render()}\n" for e in lossy.report) == report


def test_the_demo_compact_file_is_current() -> None:
    assert DEMO_CBOX.read_bytes() == encode(convert(DEMO.read_bytes(), to="compact").text)


# -- the command ---------------------------------------------------------------------------


def invoke(*args: str, input: bytes | None = None) -> Any:
    result = runner.invoke(app, ["convert", *args], input=input)
    assert "Traceback" not in result.output
    return result


def test_cli_writes_to_stdout() -> None:
    result = invoke(str(DEMO), "--to", "compact")
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == encode(convert(DEMO.read_bytes(), to="compact").text)
    assert result.stderr == ""
    dash = invoke(str(DEMO), "--to", "compact", "-o", "-")
    assert (dash.exit_code, dash.stdout_bytes) == (0, result.stdout_bytes)


def test_cli_writes_atomically_with_o(tmp_path: Path) -> None:
    target = tmp_path / "demo.cbox"
    target.write_text("old content\n", encoding="utf-8")
    before = os.stat(target).st_ino
    result = invoke(str(DEMO), "-o", str(target))  # --to from the file name
    assert os.stat(target).st_ino != before, "not replaced by a rename"
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == b""
    assert target.read_bytes() == DEMO_CBOX.read_bytes()
    assert f"wrote {target} (bbox → compact)" in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["demo.cbox"]  # no temporary file left behind


def test_cli_compact_to_bbox_from_stdin_and_by_extension(tmp_path: Path) -> None:
    expected = encode(format_document(bbox_lark.parse(DEMO.read_bytes())))
    by_flag = invoke("-", "--from", "compact", "--to", "bbox", input=DEMO_CBOX.read_bytes())
    assert by_flag.exit_code == 0, by_flag.output
    assert by_flag.stdout_bytes == expected
    by_content = invoke("-", "--to", "bbox", input=DEMO_CBOX.read_bytes())
    assert by_content.stdout_bytes == expected
    by_name = invoke(str(DEMO_CBOX), "--to", "bbox")
    assert by_name.stdout_bytes == expected
    out = tmp_path / "demo.bbox"
    assert invoke(str(DEMO_CBOX), "-o", str(out)).exit_code == 0
    assert out.read_bytes() == expected


def test_cli_lossy_reports_on_stderr() -> None:
    result = invoke(str(DEMO), "--to", "compact", "--lossy")
    assert result.exit_code == 0
    assert result.stdout == convert(DEMO.read_bytes(), to="compact", lossy=True).text
    assert f"{DEMO}: dropped comment lines: 5 (lines 15, 29, 31, 41, 42)" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", "xml"], "unknown format 'xml'; known formats: " + ", ".join(f.name for f in formats())),
        (["--from", "xml", "--to", "bbox"], "unknown format 'xml'"),
        (["--to", "bbox", "--lossy"], "option 'lossy' does not apply to bbox input or bbox output"),
        ([], "give --to FORMAT (one of: " + ", ".join(f.name for f in formats() if f.write) + ")"),
        (["-o", "out.txt"], "give --to FORMAT"),
    ],
)
def test_cli_usage_errors(args: list[str], message: str, tmp_path: Path) -> None:
    result = invoke(str(DEMO), *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_cli_help_lists_the_formats_and_every_format_option() -> None:
    shown = runner.invoke(app, ["convert", "--help"]).stdout
    help_text = " ".join(shown.replace("│", " ").split())  # the text of rich's boxes, unwrapped
    readable = ", ".join(f.name for f in formats() if f.read)
    writable = ", ".join(f.name for f in formats() if f.write)
    assert f"One of: {writable}" in help_text
    assert f"One of: {readable}" in help_text
    for fmt in formats():
        for option in fmt.options:
            assert option.flag in help_text
    assert "--list" not in help_text  # convert has no --list
    # Only the top-level command installs shell completion.
    assert "--install-completion" not in help_text
    assert "--show-completion" not in help_text


def test_cli_undetectable_input() -> None:
    result = invoke("-", "--to", "compact", input=b'{"t": "u"}\n')
    assert result.exit_code == 2
    assert "<stdin>: cannot tell the input format" in result.stderr
    assert "give --from (one of: " + ", ".join(f.name for f in formats()) + ")" in result.stderr


def test_cli_missing_file_and_directory(tmp_path: Path) -> None:
    missing = invoke(str(tmp_path / "missing.bbox"), "--to", "compact")
    assert missing.exit_code == 2
    assert "no such file" in missing.stderr
    folder = invoke(str(tmp_path), "--to", "compact")
    assert folder.exit_code == 2


def test_cli_unwritable_output(tmp_path: Path) -> None:
    result = invoke(str(DEMO), "--to", "compact", "-o", str(tmp_path / "no" / "such" / "dir.cbox"))
    assert result.exit_code == 2
    assert "cannot write" in result.stderr


def test_cli_input_with_errors(tmp_path: Path) -> None:
    findings = ROOT / "docs" / "examples" / "findings.bbox"
    shown = str(findings)
    to_stdout = invoke(shown, "--to", "compact")
    assert to_stdout.exit_code == 1
    assert to_stdout.stdout == convert(findings.read_bytes(), to="compact").text
    assert f"{shown}:12:8: E012" in to_stdout.stderr
    target = tmp_path / "out.cbox"
    refused = invoke(shown, "--to", "compact", "-o", str(target))
    assert refused.exit_code == 1
    assert "not written" in refused.stderr
    assert not target.exists()
    forced = invoke(shown, "--to", "compact", "-o", str(target), "--force")
    assert forced.exit_code == 0
    assert target.read_text(encoding="utf-8") == to_stdout.stdout


def test_cli_passes_invalid_bytes_through() -> None:
    path = CORPUS / "invalid" / "E001-invalid-utf8.bbox"
    data = path.read_bytes()
    as_bbox = invoke(str(path), "--to", "bbox")
    assert as_bbox.exit_code == 1  # the input has errors
    assert as_bbox.stdout_bytes == data
    compact = invoke(str(path), "--to", "compact")
    back = invoke("-", "--from", "compact", "--to", "bbox", input=compact.stdout_bytes)
    assert back.stdout_bytes == encode(format_document(bbox_lark.parse(data)))


def test_cli_never_tracebacks_on_odd_input() -> None:
    for data in (
        b"",
        b"\x00\xff\xfe",
        b"\xef\xbb\xbf",
        b"\r\r\n",
        "⏎ ⏎⏎\n".encode(),
        json.dumps([1]).encode(),
    ):
        for args in (["--from", "compact", "--to", "bbox"], ["--from", "bbox", "--to", "compact", "--lossy"]):
            result = invoke("-", *args, input=data)
            assert result.exit_code in (0, 1), result.output


def test_cli_report_json_to_an_unwritable_place_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "out.cbox"
    result = invoke(
        str(DEMO), "--to", "compact", "-o", str(target), "--report-json", str(tmp_path / "no" / "r.json")
    )
    assert result.exit_code == 2
    assert "cannot write the report there" in result.stderr
    assert not target.exists() and result.stdout == ""
    fine = invoke(str(DEMO), "--to", "compact", "--report-json", str(tmp_path / "r.json"))
    assert fine.exit_code == 0
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["source"] == "bbox" and report["target"] == "compact"
    assert report["totals"]["kept"] == sum(e["count"] for e in report["entries"] if e["fate"] == "kept") > 0


# -- many files at once: convert PATH... -o DIR ------------------------------------------------


def _one_at_a_time(paths: list[Path], to: str, out: Path) -> dict[str, tuple[bytes, int]]:
    """Each input converted alone to ``out/NAME``: its bytes and exit code, by name."""
    from bbox_lark.convert.many import output_name

    found = {}
    out.mkdir()
    for path in paths:
        name = output_name(str(path), to)
        result = runner.invoke(app, ["convert", str(path), "--to", to, "-o", str(out / name)])
        data = (out / name).read_bytes() if (out / name).exists() else b""
        found[name] = (data, result.exit_code)
    return found


@pytest.mark.parametrize("to", ["jsonl", "atif", "compact"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_many_files_give_the_outputs_of_one_at_a_time(
    tmp_path: Path, to: str, jobs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bbox_lark.convert.files
    import bbox_lark.files.runner

    monkeypatch.setattr(bbox_lark.files.runner, "PARALLEL_MIN_BYTES", 0)  # worker processes, however small
    paths = [p for p in sorted((CORPUS / "valid").glob("*.bbox"))][:12]
    alone = _one_at_a_time(paths, to, tmp_path / "alone")
    many = tmp_path / "many"
    result = runner.invoke(
        app, ["convert", *map(str, paths), "--to", to, "-o", str(many), "--jobs", jobs, "--quiet"]
    )
    assert sorted(p.name for p in many.iterdir()) == sorted(name for name, (data, _) in alone.items() if data)
    for name, (data, _) in alone.items():
        if data:
            assert (many / name).read_bytes() == data, name
    assert result.exit_code == max(code for _, code in alone.values())
    assert result.stderr.splitlines()[-1].startswith(f"{len(list(many.iterdir()))} file(s) converted to ")


def test_a_folder_is_walked_as_check_walks_it(tmp_path: Path) -> None:
    src = tmp_path / "logs"
    (src / "deep").mkdir(parents=True)
    (src / "a.bbox").write_bytes(DEMO.read_bytes())
    (src / "deep" / "b.rlog").write_bytes(DEMO.read_bytes())
    (src / "notes.txt").write_text("not a log\n")
    result = runner.invoke(app, ["convert", str(src), "--to", "compact", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.cbox", "b.cbox"]
    assert result.stderr.splitlines()[-1] == f"2 file(s) converted to {tmp_path / 'out'} (compact)"


def test_many_files_quiet_drops_the_notes_and_keeps_the_summary(tmp_path: Path) -> None:
    args = ["convert", str(DEMO), str(CORPUS / "valid" / "arrows.bbox"), "--to", "atif", "-o", str(tmp_path)]
    loud = runner.invoke(app, args)
    quiet = runner.invoke(app, [*args, "--quiet"])
    assert loud.exit_code == quiet.exit_code == 0
    assert len(loud.stderr.splitlines()) > 1
    assert quiet.stderr.splitlines() == [loud.stderr.splitlines()[-1]]


def test_many_files_go_on_past_a_bad_input_and_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["convert", str(tmp_path / "missing.bbox"), str(DEMO), "--to", "compact", "-o", str(tmp_path / "o")],
    )
    assert result.exit_code == 2
    assert "missing.bbox: no such file or directory" in result.stderr
    assert (tmp_path / "o" / "demo.cbox").exists()
    assert result.stderr.splitlines()[-1].endswith("(compact), 1 could not be converted")


def test_many_files_with_one_output_name_convert_the_first(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "x.bbox").write_bytes(DEMO.read_bytes())
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "convert",
            str(tmp_path / "a" / "x.bbox"),
            str(tmp_path / "b" / "x.bbox"),
            "--to",
            "compact",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 2
    assert "is " in result.stderr and "already; not converted" in result.stderr
    assert [p.name for p in out.iterdir()] == ["x.cbox"]


def test_many_files_need_a_folder_and_a_format(tmp_path: Path) -> None:
    no_dir = runner.invoke(app, ["convert", str(DEMO), str(DEMO), "--to", "compact"])
    assert no_dir.exit_code == 2 and "give -o DIR" in no_dir.stderr
    no_to = runner.invoke(app, ["convert", str(DEMO), str(DEMO), "-o", str(tmp_path)])
    assert no_to.exit_code == 2 and "give --to FORMAT" in no_to.stderr


def test_many_inputs_take_a_folder_format_folder_as_one_input(tmp_path: Path) -> None:
    session = ROOT / "docs" / "examples" / "lightbox" / "session"
    for name in ("s1", "s2"):
        shutil.copytree(session, tmp_path / name)
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["convert", str(tmp_path / "s1"), str(tmp_path / "s2"), "--to", "bbox", "-o", str(out), "-q"]
    )
    assert result.exit_code == 0, result.stderr
    alone = runner.invoke(app, ["convert", str(session), "--to", "bbox"])
    assert (out / "s1.bbox").read_bytes() == (out / "s2.bbox").read_bytes() == alone.stdout_bytes
