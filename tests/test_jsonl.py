"""JSON Lines (``convert --to jsonl``, docs/formats/jsonl.md).

``bbox → jsonl → bbox`` must give the input back byte for byte for every corpus file, every
external real log (skipped when ``../shared/corpus-external`` is absent) and generated
documents; every record must match ``docs/schema/bbox-jsonl.schema.json``; the terse style
keeps what docs/formats/jsonl.md says and reports the rest; bad records are skipped with
their line and a message; both directions stream.
"""

from __future__ import annotations

import io
import json
import re
import tracemalloc
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS_MAX_LINE
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from printer_support import documents, external_files, fuzz_settings
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from typer.testing import CliRunner

import bbox_lark
from bbox_lark import BlankLine, Continuation, Event
from bbox_lark.cli import app
from bbox_lark.convert import (
    FATES,
    Fidelity,
    Input,
    ReadContext,
    RefusedInputError,
    WriteContext,
    convert,
    convert_stream,
    detect_format,
    get_format,
    jsonl,
)
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.parser import iter_nodes
from bbox_lark.syntax.source import DEFAULT_MAX_LINE, encode

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
EXTERNAL = ROOT.parent / "shared" / "corpus-external"
SCHEMA = ROOT / "docs" / "schema" / "bbox-jsonl.schema.json"
DEMO = ROOT / "examples" / "demo.bbox"
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
HEADER_RECORD = '{"record":"header","bbox":"1","fields":{"format":"bbox/1","id":"s","repo_sha":"215db51"}}\n'

runner = CliRunner()


def corpus_paths() -> list[Path]:
    return sorted(CORPUS.rglob("*.bbox"))


def external_paths() -> list[Path]:
    """The external bbox files (printer_support.external_files: empty when absent)."""
    return external_files()


def max_line_of(path: Path) -> int:
    """corpus/README.md: the corpus is read with a 1024-character limit, hostile/ with the default."""
    if CORPUS in path.parents and path.parent.name != "hostile":
        return CORPUS_MAX_LINE
    return DEFAULT_MAX_LINE


CORPUS_PATHS = corpus_paths()
EXTERNAL_PATHS = external_paths()


@cache
def validator() -> Draft202012Validator:
    document = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document)


def records(text: str) -> list[dict[str, Any]]:
    # splitlines() would do: the writer escapes every other line break (U+2028 …).
    return [json.loads(line) for line in text.splitlines()]


def assert_valid(text: str) -> None:
    for number, record in enumerate(records(text), 1):
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator().iter_errors(record)]
        assert not errors, (number, errors)


def round_trip(data: bytes | str, max_line: int = DEFAULT_MAX_LINE) -> str:
    """bbox → jsonl → bbox, checked byte for byte; returns the JSONL text."""
    data = encode(data) if isinstance(data, str) else data
    out = convert(data, "bbox", to="jsonl", max_line=max_line)
    text = out.text
    encode(text).decode("utf-8")  # the JSONL itself is valid UTF-8 (lone surrogates escaped)
    back = convert(text, "jsonl", to="bbox", max_line=max_line)
    assert not back.skipped, back.skipped
    assert encode(back.text) == data
    # … and the document read from JSONL is the parsed one, node for node.
    assert list(iter_nodes(data, max_line=max_line)) == list(
        jsonl.read(Input(data=text), ReadContext(Fidelity(), {"style": "full"}, max_line, check=False))
    )
    return text


def kinds_in(data: bytes, max_line: int) -> dict[str, list[int]]:
    """Line numbers per report construct, counted here from the parsed document."""
    doc = bbox_lark.parse(data, max_line=max_line)
    found: dict[str, list[int]] = {}
    if doc.header_lines:
        found["header lines"] = [doc.header_lines[0].line]
    for node in doc.lines:
        if isinstance(node, BlankLine):
            what = "blank lines"
        elif isinstance(node, Continuation):
            what = "continuation lines"
        elif node.kind in ("comment", "lifecycle", "unknown"):
            what = f"{node.kind} lines"
        else:
            what = "event lines"
        found.setdefault(what, []).append(node.line)
    return found


# -- the lossless round trip ---------------------------------------------------------------


@pytest.mark.parametrize(
    "path", CORPUS_PATHS, ids=lambda p: "-".join(p.relative_to(CORPUS).with_suffix("").parts)
)
def test_corpus_round_trip_is_byte_identical(path: Path) -> None:
    data = path.read_bytes()
    text = round_trip(data, max_line_of(path))
    assert_valid(text)
    # The report says precisely what was kept: every line, per record kind.
    report = convert(data, "bbox", to="jsonl", max_line=max_line_of(path)).fidelity
    expected = kinds_in(data, max_line_of(path))
    # (The secrets rows count what lines hold, not lines: tests/test_redact.py checks them.)
    got = {e.what: e for e in report.entries if e.action == "kept" and not e.what.startswith("secrets (")}
    assert set(got) == set(expected)
    for what, lines in expected.items():
        if what == "header lines":
            assert got[what].count == len(bbox_lark.parse(data, max_line=max_line_of(path)).header_lines)
        else:
            assert got[what].lines == tuple(lines)
    assert not report.losses and not report.skipped


def test_corpus_is_found() -> None:
    assert len(CORPUS_PATHS) >= 100


@pytest.mark.skipif(not EXTERNAL_PATHS, reason="../shared/corpus-external is absent")
@pytest.mark.parametrize("path", EXTERNAL_PATHS, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_external_round_trip_is_byte_identical(path: Path) -> None:
    text = round_trip(path.read_bytes())
    assert_valid(text)


@pytest.mark.skipif(not (EXTERNAL / "rlog-real").is_dir(), reason="no real logs")
def test_real_logs_with_an_empty_id_round_trip() -> None:
    empty = [
        p
        for p in EXTERNAL_PATHS
        if p.parent.name == "rlog-real" and re.search(rb"\nid: *\r?\n", p.read_bytes())
    ]
    assert empty, "the real logs hold files with an empty id:"
    for path in empty[:5]:
        header = records(round_trip(path.read_bytes()))[0]
        assert header["fields"]["id"] == ""


@fuzz_settings(80)
@given(documents())
def test_generated_documents_round_trip(text: str) -> None:
    assert_valid(round_trip(text))


SAMPLES = {
    "crlf": (HEADER + "u: hi\n  more\n\nt:read a → [ok]\n").replace("\n", "\r\n").encode(),
    "bom-no-final-newline": ("\ufeff" + HEADER + "u: hi\n# plain").encode(),
    "mixed-endings": (HEADER + "u: a\r\nu: b\n").encode(),
    "invalid-utf8": b"---\nformat: bbox/1\nid: \xe9\nrepo_sha: 215db51\n---\na: caf\xe9 \xff\xfe\n",
    "nul": (HEADER + "u: a\x00b\n").encode(),
    "unknown-lines": (HEADER + "hello there\n@\n!!\n").encode(),
    "no-header": b"a: hi\n  more\n",
    "unclosed-header": b"---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nu: hi\n",
    "leading-blank-lines": ("\n\n" + HEADER + "u: x\n").encode(),
    "header-only-no-newline": b"---\nformat: bbox/1\n---",
    "empty": b"",
    "only-blank": b"\n \n\t\n",
    "orphan-continuation": (HEADER + "  stray\n\n# c\n  after comment\n").encode(),
    "trailing-whitespace-line": (HEADER + "u: a\n   ").encode(),
    "lone-cr": (HEADER + "u: a\rb\n").encode(),
    "separator-chars": (HEADER + "u: a\u2028b\u0085c\x0cd\n").encode(),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_odd_files_round_trip(name: str) -> None:
    text = round_trip(SAMPLES[name])
    assert_valid(text)
    assert text.endswith("\n") and text.count("\n") == len(text.splitlines())  # \n is the only break


def test_invalid_bytes_are_json_escapes() -> None:
    text = convert(SAMPLES["invalid-utf8"], "bbox", to="jsonl").text
    assert "\\udce9" in text and "\\udcff" in text
    assert records(text)[1]["source"] == "a: caf\udce9 \udcff\udcfe"


def test_oversized_lines_are_kept_unparsed() -> None:
    data = (HEADER + "u: " + "x" * 40 + " → [ok]\nu: short\n").encode()
    text = round_trip(data, max_line=20)
    record = records(text)[1]
    assert record["kind"] == "unknown" and record["oversized"] is True
    assert "result" not in record and record["source"].startswith("u: xxx")
    # Read back with the default limit, the flag still marks it oversized.
    node = next(n for n in jsonl.read(Input(data=text), ReadContext(Fidelity())) if isinstance(n, Event))
    assert node.oversized and node.raw == "u: " + "x" * 40 + " → [ok]"


def test_header_record_shape() -> None:
    text = convert(SAMPLES["unclosed-header"], "bbox", to="jsonl").text
    header = records(text)[0]
    assert header["record"] == "header" and header["bbox"] == "1" and header["style"] == "full"
    assert [line["role"] for line in header["lines"]] == ["fence", "yaml", "yaml", "yaml"]
    assert header["fields"] == {"format": "bbox/1", "id": "s", "repo_sha": "215db51"}
    assert header["closed"] is False
    assert records(convert(HEADER, "bbox", to="jsonl").text)[0]["closed"] is True
    assert text.startswith(jsonl.MARKER)


def test_event_record_has_typed_values_beside_their_source() -> None:
    data = (
        HEADER
        + "t:test span=t1 step=4 latency_ms=12 attempt=1/3 level=warn"
        + " → [ok] 3 passed k=v # metrics prompt=5\n"
    )
    record = records(convert(data, "bbox", to="jsonl").text)[1]
    assert record["fields"] == {
        "span": "t1",
        "step": "4",
        "latency_ms": "12",
        "attempt": "1/3",
        "level": "warn",
    }
    assert record["typed"] == {
        "step": 4,
        "latency_ms": 12,
        "attempt": {"number": 1, "of": 3},
        "level": "warn",
    }
    assert record["result"]["kind"] == "ok" and record["result"]["rest"] == "3 passed k=v"
    assert record["result"]["fields"] == {"k": "v"}
    assert record["metrics"] == {"prompt": "5"}
    assert (record["kind"], record["prefix"], record["name"], record["line"]) == ("tool", "t", "test", 7)


# -- records without source: built from values -------------------------------------------


def test_hand_written_records_are_built_from_values() -> None:
    text = HEADER_RECORD + "\n".join(
        json.dumps(r)
        for r in (
            {"kind": "user", "text": "Fix the login bug", "typed": {"step": 1}},
            {
                "kind": "tool",
                "name": "read",
                "args": ["src/login.rs"],
                "fields": {"id": "call_1"},
                "result": {"kind": "count", "number": 42, "unit": "lines"},
            },
            {"kind": "continuation", "text": "fn login() {}"},
            {"kind": "blank"},
            {"kind": "comment", "text": "metrics step=1", "fields": {"cost": "0.01"}},
            {
                "kind": "observation",
                "fields": {"id": "call_1"},
                "result": {"kind": "fields", "fields": {"ok": "yes"}},
            },
            {"kind": "lifecycle", "name": "end", "result": {"kind": "ok"}, "eol": ""},
        )
    )
    result = convert(text, "jsonl", to="bbox")
    assert result.text == (
        "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\n"
        "u: Fix the login bug step=1\n"
        "t:read src/login.rs id=call_1 → [42 lines]\n"
        "  fn login() {}\n"
        "\n"
        "# metrics step=1 cost=0.01\n"
        "o: id=call_1 → ok=yes\n"
        "@end → [ok]"
    )
    assert not result.skipped
    report = {(e.action, e.what): e.lines for e in result.fidelity.entries}
    assert report[("synthesized", "event lines (text built from values: no 'source')")] == (2, 3, 7)
    assert report[("synthesized", "header text (built from the header record's fields)")] == (1,)
    # The built document reads like the text it prints.
    doc = bbox_lark.parse(result.text)
    assert [(e.kind, e.name) for e in doc.events][:2] == [("user", None), ("tool", "read")]
    assert doc.events[1].continuation[0].text == "fn login() {}"


def test_a_source_wins_over_values_that_disagree_and_the_report_says_so() -> None:
    text = HEADER_RECORD + json.dumps({"kind": "user", "text": "edited", "source": "u: original"}) + "\n"
    result = convert(text, "jsonl", to="bbox")
    assert result.text.endswith("u: original\n")
    assert [e.lines for e in result.report if "disagree" in e.what] == [(2,)]


# -- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "skipped"),
    [
        ("not json\n", [(2, "not a JSON value: Expecting value at column 1")]),
        ("[1, 2]\n", [(2, "a record is a JSON object, not an array")]),
        ('"text"\n', [(2, "a record is a JSON object, not a string")]),
        ('{"kind": "bogus"}\n', [(2, "unknown kind 'bogus'")]),
        ('{"text": "no kind"}\n', [(2, "a record needs a 'kind' (a string)")]),
        ('{"kind": "tool", "name": "read", "args": "x"}\n', [(2, "'args' must be a list")]),
        ('{"kind": "tool", "source": 3}\n', [(2, "record: 'source' must be a string")]),
        ('{"kind": "tool", "source": "t:a\\nb"}\n', [(2, "record: 'source' is one line (no line break)")]),
        ('{"kind": "user", "source": "u: a", "eol": "\\r"}\n', [(2, "record: 'eol' must be one of")]),
        (
            '{"kind": "tool", "name": "bad name"}\n',
            [(2, "cannot build a tool line from its values: 'bad name' is not a name for a tool line")],
        ),
        ('{"kind": "user", "text": "a → b"}\n', [(2, "cannot build a user line from its values")]),
        ('{"kind": "tool", "name": "t", "result": {"kind": "count"}}\n', [(2, "'result':")]),
        ('{"record": "header", "bbox": "1"}\n', [(2, "a header record is only allowed as the first record")]),
        ('{"record": "footer"}\n', [(2, "unknown record type 'footer'")]),
        ('{"kind": "continuation", "text": " "}\n', [(2, "a continuation record needs 'text' on one line")]),
        (
            '{"kind":"user","source":"u: ok"}\n{\n{"kind":"user","source":"u: ok"}\n',
            [(3, "not a JSON value")],
        ),
    ],
)
def test_bad_records_are_skipped_with_their_line(body: str, skipped: list[tuple[int, str]]) -> None:
    good = '{"kind": "agent", "source": "a: kept"}\n'
    result = convert(HEADER_RECORD + body + good, "jsonl", to="bbox")
    assert [
        (s.line, s.message[: len(m)]) for s, (_, m) in zip(result.skipped, skipped, strict=True)
    ] == skipped
    assert result.text.endswith("a: kept\n")  # the rest is converted


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", 1, "no header record: the input holds no records"),
        ('{"kind": "user", "source": "u: a"}\n', 1, "the first record is not a header record"),
        ('{"record":"header","bbox":"1","lines":"x"}\n', 1, "header record: 'lines' must be a list"),
        (
            '{"record":"header","bbox":"1","lines":[{"source":"u: a"}]}\n',
            1,
            "header record: its 'lines' do not read as a header block",
        ),
        ('{"record":"header","bbox":"1","bom":"yes"}\n', 1, "header record: 'bom' must be true or false"),
    ],
)
def test_a_missing_or_bad_header_record(text: str, line: int, message: str) -> None:
    result = convert(text, "jsonl", to="bbox")
    assert [(s.line, s.message[: len(message)]) for s in result.skipped] == [(line, message)]
    if "first record" in message:
        assert result.text == "u: a\n"  # the record itself is still converted


def test_an_unknown_record_version_is_refused_as_a_whole() -> None:
    with pytest.raises(RefusedInputError, match="version '2'"):
        convert('{"record":"header","bbox":"2"}\n', "jsonl", to="bbox")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
record_keys = st.sampled_from(
    [
        "kind",
        "source",
        "eol",
        "text",
        "name",
        "args",
        "fields",
        "typed",
        "result",
        "metrics",
        "record",
        "t",
        "a",
        "r",
    ]
)
kind_values = st.sampled_from([*vocabulary().event_kinds, "blank", "continuation", "x"])
records_strategy = st.dictionaries(record_keys, json_values | kind_values, max_size=6)


@fuzz_settings(150)
@given(
    st.lists(
        st.one_of(records_strategy.map(json.dumps), json_values.map(json.dumps), st.text(max_size=40)),
        max_size=6,
    ),
    st.booleans(),
)
def test_the_reader_never_raises(lines: list[str], with_header: bool) -> None:
    text = (HEADER_RECORD if with_header else "") + "".join(line.replace("\n", " ") + "\n" for line in lines)
    for style in ("full", "terse"):
        result = convert(text, "jsonl", to="bbox", style=style)
        # Every input line is converted, skipped or blank.
        assert all(s.line >= 1 for s in result.skipped)
        bbox_lark.parse(result.text)


def test_the_cli_exits_1_on_skipped_records(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(HEADER_RECORD + "oops\n" + '{"kind": "user", "source": "u: hi"}\n', encoding="utf-8")
    result = invoke(str(path), "--to", "bbox")
    assert result.exit_code == 1
    assert result.stdout.endswith("u: hi\n")
    assert f"{path}:2: skipped: not a JSON value" in result.stderr
    refused = invoke("-", "--from", "jsonl", "--to", "bbox", input=b'{"record":"header","bbox":"9"}\n')
    assert refused.exit_code == 2 and "version '9'" in refused.stderr


# -- the terse style ---------------------------------------------------------------------

SPEC_TERSE = """\
{"t":"u","c":"Add ad monetization to billing tier"}
{"t":"a","c":"I'll analyze the billing system."}
{"t":"t","n":"grep","a":{"pattern":"billing","type":"rs"},"r":{"files":4}}
{"t":"t","n":"read","a":{"path":"src/billing/mod.rs"},"r":{"lines":186}}
{"t":"s","n":"pricing-tiers","a":"activate","r":"ok"}
{"t":"x","n":"explore","q":"ad tier check","r":"found in src/ads/display.rs"}
{"t":"p","a":"create","title":"Ad monetization","r":{"steps":6}}
{"t":"m","v":"auto"}
{"t":"t","n":"write","a":{"path":"src/billing/ads.rs"},"r":"ok"}
{"t":"c","s":"github","m":"pr.create","r":{"pr":203}}
{"t":"a","c":"Done. PR #203."}
"""


def test_the_spec_terse_example_reads() -> None:
    result = convert(SPEC_TERSE, "jsonl", to="bbox", style="terse", repo_sha="215db51")
    assert not result.skipped
    body = result.text.split("---\n", 2)[2]
    assert body == (
        "u: Add ad monetization to billing tier\n"
        "a: I'll analyze the billing system.\n"
        "t:grep pattern=billing type=rs → [4 files]\n"
        "t:read path=src/billing/mod.rs → [186 lines]\n"
        "s:pricing-tiers activate → [ok]\n"
        'x:explore "ad tier check" → found in src/ads/display.rs\n'
        'p:create title="Ad monetization" → [6 steps]\n'
        "m:auto\n"
        "t:write path=src/billing/ads.rs → [ok]\n"
        "c:github.pr.create → [203 pr]\n"
        "a: Done. PR #203.\n"
    )
    assert "repo_sha: 215db51" in result.text
    # Without a header record, the header is synthesized (and reported so).
    assert ("synthesized", "header (the terse input has no header record)") in {
        (e.action, e.what) for e in result.fidelity.entries
    }


def call_fields(event: Event) -> dict[str, Any]:
    """The fields before the arrow, the first occurrence of a key winning."""
    found: dict[str, Any] = {}
    for node in event.field_nodes:
        if not node.after_arrow:
            found.setdefault(node.key, node.value)
    return found


TERSE_FILES = [DEMO, *sorted((CORPUS / "valid").glob("*.bbox"))]


@pytest.mark.parametrize("path", TERSE_FILES, ids=lambda p: p.stem)
def test_terse_keeps_kinds_names_and_text_and_reports_the_rest(path: Path) -> None:
    data = path.read_bytes()
    max_line = max_line_of(path)
    doc = bbox_lark.parse(data, max_line=max_line)
    out = convert(data, "bbox", to="jsonl", style="terse", max_line=max_line)
    assert_valid(out.text)
    back = convert(out.text, "jsonl", to="bbox")
    assert not back.skipped, back.skipped
    kept = [e for e in doc.events if e.kind not in ("comment", "unknown") and not e.oversized]
    again = bbox_lark.parse(back.text).events
    assert [(e.kind, e.name) for e in again] == [(e.kind, e.name) for e in kept]
    free = vocabulary().free_text_prefixes
    assert [e.text for e in again if e.prefix in free] == [e.text for e in kept if e.prefix in free]
    assert [call_fields(e) for e in again if e.prefix not in free] == [
        call_fields(e) for e in kept if e.prefix not in free
    ]
    assert [(e.result.kind if e.result else None) for e in again] == [
        (e.result.kind if e.result else None) for e in kept
    ]
    report = {(e.action, e.what): e.lines for e in out.fidelity.entries}
    for what, kind in (("blank lines", BlankLine), ("continuation lines", Continuation)):
        lines = tuple(n.line for n in doc.lines if isinstance(n, kind))
        assert report.get(("dropped", what), ()) == lines
    comments = tuple(e.line for e in doc.events if e.kind == "comment")
    assert report.get(("dropped", "comment lines"), ()) == comments
    assert report.get(("dropped", "metrics comments"), ()) == tuple(
        e.line for e in kept if e.metrics is not None
    )


def test_terse_calls_keep_their_arguments_and_fields() -> None:
    data = HEADER + 't:grep "pattern x" src id=c1 → [2 files]\nc:github.issues q=ads → [err: denied]\n'
    out = convert(data, "bbox", to="jsonl", style="terse")
    assert records(out.text)[1:] == [
        {
            "t": "t",
            "n": "grep",
            "a": ["pattern x", "src"],
            "f": {"id": "c1"},
            "r": {"files": 2},
            "session": "s",
        },
        {"t": "c", "s": "github", "m": "issues", "a": {"q": "ads"}, "r": {"err": "denied"}, "session": "s"},
    ]
    back = bbox_lark.parse(convert(out.text, "jsonl", to="bbox").text).events
    assert back[0].args == ("pattern x", "src") and back[0].fields == {"id": "c1"}  # session: not a field
    assert back[1].name == "github.issues" and back[1].result is not None
    assert back[1].result.message == "denied"


# -- streaming -----------------------------------------------------------------------------


class Lines(io.RawIOBase):
    """A binary stream that makes its lines as they are read, and counts them."""

    def __init__(self, lines: Iterator[bytes]) -> None:
        self.lines = lines
        self.made = 0
        self.held = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while len(self.held) < len(buffer):
            line = next(self.lines, None)
            if line is None:
                break
            self.made += 1
            self.held += line
        size = min(len(buffer), len(self.held))
        buffer[:size] = self.held[:size]
        self.held = self.held[size:]
        return size


def bbox_lines(count: int) -> Iterator[bytes]:
    yield HEADER.encode()
    for n in range(count):
        yield f"t:read src/file_{n}.rs id=c{n} step={n} → [{n} lines]\n".encode()
        yield b"  some output\n"


class Watch(io.StringIO):
    """A text sink that notes how many input lines had been made at its first write."""

    def __init__(self, source: Lines) -> None:
        super().__init__()
        self.source = source
        self.at_first_write: int | None = None

    def write(self, text: str) -> int:
        if self.at_first_write is None:
            self.at_first_write = self.source.made
        return super().write(text)


@pytest.mark.parametrize(("source", "target"), [("bbox", "jsonl"), ("jsonl", "bbox")])
def test_conversions_stream(source: str, target: str) -> None:
    count = 20_000
    if source == "bbox":
        lines = Lines(bbox_lines(count))
    else:
        text = convert(b"".join(bbox_lines(count)), "bbox", to="jsonl", check=False).text
        lines = Lines(line.encode() for line in text.splitlines(keepends=True))
    out = Watch(lines)
    convert_stream(Input(stream=io.BufferedReader(lines)), out, to=target, from_=source, check=False)
    assert out.at_first_write is not None and out.at_first_write < count // 4
    assert lines.made >= 2 * count


class Sink(io.TextIOBase):
    """A text stream that keeps nothing."""

    def write(self, text: str) -> int:
        return len(text)


def peak(count: int, source: str, target: str) -> int:
    data = b"".join(bbox_lines(count))
    if source == "jsonl":
        data = encode(convert(data, "bbox", to="jsonl", check=False).text)
    lines = Lines(iter(data.splitlines(keepends=True)))
    tracemalloc.start()
    try:
        convert_stream(Input(stream=io.BufferedReader(lines)), Sink(), to=target, from_=source, check=False)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("source", "target"), [("bbox", "jsonl"), ("jsonl", "bbox")])
def test_memory_does_not_grow_with_the_input(source: str, target: str) -> None:
    # Ten times the input, not ten times the peak: no list of nodes or records is held.
    small, large = peak(2_000, source, target), peak(20_000, source, target)
    assert large < 2 * small, (small, large)


_JSON_TEXT = st.text(alphabet=st.sampled_from('ab"\\/\n\t\x00\x1f\x85\u2028\u2029\udcff\ud800é😀 '))
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_JSON_TEXT, inner, max_size=4),
    max_leaves=12,
)


@fuzz_settings(300)
@given(st.dictionaries(_JSON_TEXT, _JSON_VALUES, min_size=1, max_size=5), st.integers(1, 5))
def test_a_long_record_written_in_parts_is_its_dump(record: dict[str, Any], piece: int) -> None:
    # The record of a long line is written a part at a time: the same characters as dump.
    out = io.StringIO()
    jsonl.writer.write_record(out, record, long=True, piece=piece)
    assert out.getvalue() == jsonl.dump(record) + "\n"


def test_a_long_line_is_encoded_a_piece_at_a_time() -> None:
    # A JSON Lines record holds a line's text twice (text, source): encoded whole, both
    # encoded copies and their join were alive at once (convert --to jsonl of a
    # 16,000,000-character line: 10.3x the line), and re.sub's escapes of U+2028 an object
    # each (this 8 MiB line took 664 MiB to encode). Beyond the record, writing it now
    # holds a piece of each string at a time: under 1 MiB.
    size = 8 << 20
    text = HEADER + "u: " + "x\u2028" * (size // 2) + "x\n"
    node = next(n for n in iter_nodes(text, max_line=16 << 20) if isinstance(n, Event))
    record = jsonl.line_record(node, 7, "s")
    assert len(record["text"]) == size + 1 and len(record["source"]) == size + 4
    tracemalloc.start()
    try:
        jsonl.writer.write_record(Sink(), record, long=True)
        held = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert held < size // 8, held


def test_the_writer_writes_a_record_per_node_as_it_comes() -> None:
    made: list[int] = []

    def items() -> Iterator[Any]:
        for n, item in enumerate(iter_nodes(HEADER + "u: a\nu: b\nu: c\n", attach=False)):
            made.append(n)
            yield item

    written: list[int] = []

    class Sink(io.StringIO):
        def write(self, text: str) -> int:
            written.append(len(made))
            return super().write(text)

    jsonl.write(items(), Sink(), WriteContext(Fidelity()))
    assert written == [1, 2, 3, 4]


# -- detection, registry, CLI -------------------------------------------------------------

CLAUDE_CODE_LINE = (
    '{"type":"user","message":{"role":"user","content":"hi"},"sessionId":"abc","uuid":"1",'
    '"timestamp":"2025-01-01T00:00:00Z"}\n'
)


def test_sniffing_is_specific() -> None:
    ours = convert(DEMO.read_bytes(), "bbox", to="jsonl").text
    assert jsonl.sniff(ours) == 10
    assert jsonl.sniff("\ufeff" + ours) == 10
    assert jsonl.sniff(ours.replace('"record":"header","bbox":"1"', '"bbox":"1","record":"header"')) == 10
    for other in (
        CLAUDE_CODE_LINE,
        SPEC_TERSE,
        '{"record":"header"}\n',
        "{",
        "",
        HEADER,
        '{"bbox":"2","record":"header"}',
    ):
        assert jsonl.sniff(other) == 0, other
    assert detect_format(None, ours) == "jsonl"
    assert detect_format("session.txt", ours) == "jsonl"
    assert detect_format("x.jsonl", ours) == "jsonl"
    assert detect_format(None, CLAUDE_CODE_LINE) != "jsonl"  # claude-code claims it by content


def test_registry_entry() -> None:
    fmt = get_format("jsonl")
    assert fmt.extensions == (".jsonl",) and fmt.lossless and fmt.keeps_source
    assert [(o.name, o.applies) for o in fmt.options if o.name == "style"] == [
        ("style", "read"),
        ("style", "write"),
    ]
    for row in (*fmt.export_mapping, *fmt.import_mapping):
        assert row.fate in FATES and row.source and row.target


def test_the_schema_names_the_grammar_vocabularies() -> None:
    defs = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]
    vocab = vocabulary()
    assert defs["line"]["properties"]["kind"]["enum"] == [*vocab.event_kinds, "blank", "continuation"]
    assert defs["result"]["properties"]["kind"]["enum"] == list(vocab.result_kinds)
    assert defs["typed"]["properties"]["level"]["enum"] == list(vocab.levels)
    assert set(defs["typed"]["properties"]) <= set(vocab.typed_fields)


def invoke(*args: str, input: bytes | None = None) -> Any:
    result = runner.invoke(app, ["convert", *args], input=input)
    assert "Traceback" not in result.output
    return result


def test_cli_round_trip_through_files(tmp_path: Path) -> None:
    out = tmp_path / "demo.jsonl"
    written = invoke(str(DEMO), "-o", str(out))  # --to from the -o name
    assert written.exit_code == 0, written.output
    assert f"wrote {out} (bbox → jsonl)" in written.stderr
    assert out.read_text(encoding="utf-8") == convert(DEMO.read_bytes(), "bbox", to="jsonl").text
    back = tmp_path / "demo.bbox"
    by_name = invoke(str(out), "-o", str(back))  # --from from the name (and content)
    assert by_name.exit_code == 0, by_name.output
    assert back.read_bytes() == DEMO.read_bytes()
    by_content = invoke("-", "--to", "bbox", input=out.read_bytes())
    assert by_content.stdout_bytes == DEMO.read_bytes()
    by_flag = invoke("-", "--from", "jsonl", "--to", "bbox", input=out.read_bytes())
    assert by_flag.stdout_bytes == DEMO.read_bytes()


def test_cli_to_stdout_and_report() -> None:
    result = invoke(str(DEMO), "--to", "jsonl", "--report")
    assert result.exit_code == 0
    assert result.stdout == convert(DEMO.read_bytes(), "bbox", to="jsonl").text
    assert f"{DEMO}: write: kept event lines: 19 (lines 17, 18, 19, 20, 22, …)" in result.stderr
    assert f"{DEMO}: write: kept continuation lines: 1 (line 21)" in result.stderr
    assert "dropped" not in result.stderr and "synthesized" not in result.stderr


def test_cli_terse_reports_what_it_drops() -> None:
    result = invoke(str(DEMO), "--to", "jsonl", "--style", "terse")
    assert result.exit_code == 0
    assert f"{DEMO}: dropped comment lines: 5 (lines 15, 29, 31, 41, 42)" in result.stderr
    assert f"{DEMO}: dropped continuation lines: 1 (line 21)" in result.stderr
    bad = invoke(str(DEMO), "--to", "jsonl", "--style", "short")
    assert bad.exit_code == 2 and "'short' is not one of full, terse" in bad.stderr
    wrong = invoke(str(DEMO), "--to", "bbox", "--style", "terse")
    assert wrong.exit_code == 2 and "option 'style' does not apply" in wrong.stderr


def test_cli_passes_invalid_bytes_through() -> None:
    path = CORPUS / "invalid" / "E001-invalid-utf8.bbox"
    to_jsonl = invoke(str(path), "--to", "jsonl")
    assert to_jsonl.exit_code == 1  # the input has errors
    to_jsonl.stdout_bytes.decode("utf-8")
    back = invoke("-", "--from", "jsonl", "--to", "bbox", input=to_jsonl.stdout_bytes)
    assert back.stdout_bytes == path.read_bytes()


# -- snapshots -----------------------------------------------------------------------------


class JSONLSnapshotExtension(SingleFileSnapshotExtension):
    """The JSONL output byte for byte, as a ``.jsonl`` file."""

    _write_mode = WriteMode.BINARY
    file_extension = "jsonl"


SNAPSHOT_FILES = [
    DEMO,
    CORPUS / "valid" / "crlf-no-final-newline.bbox",
    CORPUS / "invalid" / "E001-invalid-utf8.bbox",
]


@pytest.mark.parametrize("path", SNAPSHOT_FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("style", ["full", "terse"])
def test_jsonl_snapshot(path: Path, style: str, snapshot: SnapshotAssertion) -> None:
    text = convert(path.read_bytes(), "bbox", to="jsonl", style=style, max_line=max_line_of(path)).text
    assert encode(text) == snapshot.use_extension(JSONLSnapshotExtension)


# -- the documentation ---------------------------------------------------------------------


def doc_blocks(language: str) -> list[str]:
    text = (ROOT / "docs" / "formats" / "jsonl.md").read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_the_docs_examples_are_what_convert_writes_and_reads() -> None:
    bbox_blocks, json_blocks = doc_blocks("bbox"), doc_blocks("json")
    assert len(bbox_blocks) == 2 and len(json_blocks) == 3
    assert convert(bbox_blocks[0], "bbox", to="jsonl").text == json_blocks[0]
    assert convert(json_blocks[1], "jsonl", to="bbox").text == bbox_blocks[1]
    assert convert(bbox_blocks[0], "bbox", to="jsonl", style="terse").text == json_blocks[2]


def test_the_docs_report_lines_are_what_the_reader_says() -> None:
    (shown,) = doc_blocks("text")
    data = (
        HEADER_RECORD + "not json\n"
        '{"kind":"user","source":"u: a"}\n{"kind":"user","source":"u: b"}\n'
        '{"kind":"bogus"}\n{"kind":"user","source":"u: c"}\n{"record":"header","bbox":"1"}\n'
    )
    result = convert(data, "jsonl", to="bbox")
    assert "".join(s.render("session.jsonl") + "\n" for s in result.skipped) == shown


def test_every_record_names_its_session() -> None:
    """Records of many sessions put together still say where each came from; a header
    without an id names none (null); reading ignores the key."""
    for style in ("full", "terse"):
        out = convert(HEADER + "u: hi\nt:read a.rs → [ok]\n", "bbox", to="jsonl", style=style)
        body = records(out.text)[1:]
        assert body and all(record["session"] == "s" for record in body)
        unnamed = convert(HEADER.replace("id: s\n", "id:\n") + "u: hi\n", "bbox", to="jsonl", style=style)
        assert [record["session"] for record in records(unnamed.text)[1:]] == [None]
        back = bbox_lark.parse(convert(out.text, "jsonl", to="bbox").text)
        assert all("session" not in event.fields for event in back.events)
