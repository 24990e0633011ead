"""The golden corpus: every ``corpus/valid`` and ``corpus/invalid`` file, found by glob.

Each file gets two snapshots (its parsed document as JSON, its rendered diagnostics), and
``valid``/``invalid`` files get their verdict checked. Conventions: ``corpus/README.md``.
"""

from __future__ import annotations

import json

import pytest
from conftest import CorpusFile, corpus_files, dumps_document, render_diagnostics
from syrupy.assertion import SnapshotAssertion

import bbox_lark
from bbox_lark import BlankLine, Continuation, Event
from bbox_lark.syntax.jsonout import document_to_json

VALID = corpus_files("valid")
INVALID = corpus_files("invalid")
#: Inputs a fuzzer or an attack found (corpus/README.md, "Hostile inputs").
HOSTILE = corpus_files("hostile")
ALL = VALID + INVALID + HOSTILE


def ids(files: list[CorpusFile]) -> list[str]:
    return [f.id for f in files]


def test_corpus_is_found() -> None:
    # A glob that silently finds nothing would make every parametrized test vanish.
    assert len(VALID) >= 40
    assert len(INVALID) >= len(bbox_lark.registry())


@pytest.mark.parametrize("file", ALL, ids=ids(ALL))
def test_document(file: CorpusFile, snapshot_json: SnapshotAssertion) -> None:
    assert document_to_json(file.parse()) == snapshot_json


@pytest.mark.parametrize("file", ALL, ids=ids(ALL))
def test_diagnostics(file: CorpusFile, snapshot_text: SnapshotAssertion) -> None:
    assert render_diagnostics(file.parse().diagnostics, file.relative) == snapshot_text


@pytest.mark.parametrize("file", VALID, ids=ids(VALID))
def test_valid_file_has_no_error_or_warning(file: CorpusFile) -> None:
    found = [d for d in file.parse().diagnostics if d.severity != "info"]
    assert render_diagnostics(found, file.relative) == ""


HAND_WRITTEN = [f for f in VALID if not f.path.name.startswith("spec-")]


@pytest.mark.parametrize("file", HAND_WRITTEN, ids=ids(HAND_WRITTEN))
def test_hand_written_valid_file_has_no_diagnostic(file: CorpusFile) -> None:
    # Only the spec examples (kept verbatim) may carry infos; a hand-written file has none,
    # except the byte order mark's own info in the file about the BOM (corpus/README.md).
    doc = file.parse()
    expected = ["I005"] if doc.bom else []
    assert [d.code for d in doc.diagnostics] == expected


@pytest.mark.parametrize("file", INVALID, ids=ids(INVALID))
def test_invalid_file_reports_its_code(file: CorpusFile) -> None:
    assert file.code in bbox_lark.registry(), f"{file.path.name} is not named after a registered code"
    codes = {d.code for d in file.parse().diagnostics}
    assert file.code in codes


@pytest.mark.parametrize("file", HOSTILE, ids=ids(HOSTILE))
def test_hostile_file_gets_its_verdict(file: CorpusFile) -> None:
    found = {d.code for d in file.parse().diagnostics if d.severity != "info"}
    if file.code == "clean":
        assert found == set()
    else:
        assert file.code in bbox_lark.registry(), f"{file.path.name} is not named after a registered code"
        assert file.code in found


@pytest.mark.parametrize("file", ALL, ids=ids(ALL))
def test_lines_keep_every_byte(file: CorpusFile) -> None:
    # The AST keeps each line's exact text and ending (DECISIONS §7): joined back, they are
    # the file (the BOM is a flag, invalid UTF-8 survives as surrogate escapes).
    data = file.data()
    doc = file.parse()
    text = ("\ufeff" if doc.bom else "") + "".join(
        line.raw + line.eol for line in (*doc.header_lines, *doc.lines)
    )
    assert text.encode("utf-8", "surrogateescape") == data


@pytest.mark.parametrize("file", ALL, ids=ids(ALL))
def test_columns_point_at_their_text(file: CorpusFile) -> None:
    # Every column in an event names the code point where its text starts (DECISIONS §9), so
    # the columns in the snapshots can be trusted without counting them by hand.
    doc = file.parse()
    for event in doc.events:
        raw, where = event.raw, f"line {event.line}: {event.raw!r}"
        if event.name is not None and event.name_col is not None:
            assert raw[event.name_col - 1 :].startswith(event.name), where
        if event.text and event.kind != "unknown":
            assert raw[event.text_col - 1 :].startswith(event.text), where
        for node in (*event.field_nodes, *event.metric_nodes):
            assert raw[node.col - 1 :].startswith(f"{node.key}={node.raw_value}"), where
            assert raw[node.value_col - 1 :].startswith(node.raw_value), where
        if event.arrow is not None and event.arrow_col is not None:
            assert raw[event.arrow_col - 1 :].startswith(event.arrow), where
        if event.result is not None and event.result.text:
            assert raw[event.result.col - 1 :].startswith(event.result.text), where
    last = len(doc.header_lines) + len(doc.lines)
    for diagnostic in doc.diagnostics:
        assert 1 <= diagnostic.line <= max(last, 1), diagnostic
        assert diagnostic.col >= 1, diagnostic


@pytest.mark.parametrize("file", ALL, ids=ids(ALL))
def test_events_are_the_lines_that_are_not_blank_or_continuations(file: CorpusFile) -> None:
    doc = file.parse()
    expected = [line for line in doc.lines if not isinstance(line, BlankLine | Continuation)]
    assert doc.events == expected
    assert all(isinstance(event, Event) for event in doc.events)
    for event in doc.events:
        for continuation in event.continuation:
            assert continuation.owner == event.line


def test_document_layout_is_json() -> None:
    # The snapshot layout is plain JSON that reads back to the same values.
    value = document_to_json(VALID[0].parse())
    assert json.loads(dumps_document(value)) == value
