"""``check`` reads records, not nodes (issue "Core v4", point 3): the record of every line
against the node of the same line, and ``check`` on records against the node path.

:func:`bbox_lark.syntax.record.iter_records` yields a :class:`~bbox_lark.syntax.record.Record` a body line,
made from the one anchored scan's spans without building the node; the checks run on them.
For every line of the golden corpus, the external logs (when present), the generated
benchmark session, the fuzzer's generators (a fixed seed), the line scan's tricky lines and
the grammar's Hypothesis strategies: each attribute a record holds equals the node's
(:func:`bbox_lark.syntax.parser.iter_nodes` with ``attach=False``), the node a record builds on
demand equals that node, and the diagnostics of ``check`` equal those of the node path
(:func:`node_path_check`: every node built, then wrapped as a record; the reference until the
next release).
"""

from __future__ import annotations

import fuzz
import fuzzgen
import pytest
from hypothesis import given
from printer_support import any_lines, documents, external_files, fuzz_settings, golden_files, on_each_file
from test_bench_tool import bench
from test_line_scan import TRICKY

import bbox_lark
import bbox_lark.syntax.record
from bbox_lark.api import checker_for, run
from bbox_lark.syntax.nodes import Diagnostic, Event
from bbox_lark.syntax.record import Record, iter_records, record_line
from bbox_lark.syntax.scan import item_loop, word_fields
from bbox_lark.syntax.source import Source

#: The attributes a record holds itself (the rest it reads from its node).
HELD = (
    "kind",
    "line",
    "raw",
    "eol",
    "col",
    "prefix",
    "name",
    "name_col",
    "spaced_name",
    "arrow",
    "arrow_col",
    "fields",
    "metrics",
    "quote_faults",
    "oversized",
)
#: What it reads from the node or works out from the spans.
DERIVED = ("text", "text_col", "field_nodes", "metric_nodes", "args", "result")


def node_path_check(source: Source, **options: object) -> list[Diagnostic]:
    """``check`` as it was before records: every node built (``iter_nodes``, ``attach=False``),
    each handed to the checker (which reads it through :meth:`Record.of`)."""
    checker = checker_for(None, None, None, None)
    return list(run(checker, bbox_lark.iter_nodes(source, attach=False)))


def assert_same_record(record: Record, node: bbox_lark.Line) -> None:
    """The record holds the node's values, and builds the very node."""
    if isinstance(node, Event):
        for name in HELD:
            assert getattr(record, name) == getattr(node, name), (name, node.raw)
        result = node.result
        assert record.result_kind == (result.kind if result is not None else None), node.raw
        assert record.is_event
    else:
        assert record.kind == ("blank" if isinstance(node, bbox_lark.BlankLine) else "continuation")
        assert (record.line, record.raw, record.eol) == (node.line, node.raw, node.eol)
        assert record.owner == getattr(node, "owner", None)
        assert not record.is_event
    fresh = _fresh(record)
    for name in DERIVED:
        expected = getattr(node, name, () if name != "result" else None)
        if name == "text" and not isinstance(node, Event):
            expected = ""
        if name == "text_col" and not isinstance(node, Event):
            expected = 1
        assert getattr(fresh, name) == expected, (name, node.raw)
    assert record.node() == node, node.raw


def _fresh(record: Record) -> Record:
    """``record`` again, its node not yet built (the derived values read from the spans)."""
    again = record_line(record.raw, record.line, record.eol) if not record.oversized else record
    again.owner = record.owner
    return again


def assert_same(source: Source) -> None:
    records = list(iter_records(source))
    nodes = list(bbox_lark.iter_nodes(source, attach=False))
    assert len(records) == len(nodes)
    assert records[0] == nodes[0]  # the Head
    for record, node in zip(records[1:], nodes[1:], strict=True):
        assert isinstance(record, Record)
        assert_same_record(record, node)
    assert bbox_lark.check(source) == node_path_check(source)
    assert list(bbox_lark.iter_check(source)) == list(
        run(checker_for(None, None, None, None, stream=True), bbox_lark.iter_nodes(source, attach=False))
    )


def test_golden_corpus() -> None:
    assert on_each_file(golden_files(), assert_same) > 50


@pytest.mark.skipif(not external_files(), reason="../shared/corpus-external is absent")
def test_external_logs() -> None:
    assert on_each_file(external_files(), assert_same) > 50


def test_generated_session() -> None:
    assert_same(bench.generate_session(3000))


@pytest.mark.parametrize("name", sorted(fuzzgen.GENERATORS))
def test_fuzzer_inputs(name: str) -> None:
    pool = fuzzgen.Pool.load(fuzzgen.default_folders())
    for index in range(25):
        assert_same(fuzz.generate(name, 21, index, pool, 4096))


def test_tricky_lines() -> None:
    assert_same("".join(f"{raw}\n" for raw in TRICKY))
    for raw in TRICKY:
        assert_same(f"a: first\n{raw}\n")


@fuzz_settings(60)
@given(documents())
def test_documents(text: str) -> None:
    assert_same(text)


@fuzz_settings(400)
@given(any_lines())
def test_word_fields_is_the_item_loop(raw: str) -> None:
    for text in (raw, *raw.split(" ")):
        if '"' in text or "[" in text:
            continue
        for free_text, after_arrow in ((False, False), (True, False), (True, True)):
            into: dict[str, object] = {}
            faults = item_loop(text, 1, after_arrow, free_text, False, into)[2]
            fast: dict[str, object] = {}
            word_fields(text, fast)
            assert (fast, []) == (into, faults), text


@pytest.mark.skipif(
    not bbox_lark.syntax.record.__file__.endswith(".py"),
    reason="the compiled build's classes cannot be patched",
)
def test_check_builds_no_node_for_a_common_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean generated session: ``check`` builds nodes only for the lines a check must read
    them on (typed keys; here the steps and ``# metrics`` comments, which the driver reads)."""
    built: list[int] = []
    original = Record.node

    def counting(self: Record) -> bbox_lark.Line:
        if self._node is None:
            built.append(self.line)
        return original(self)

    monkeypatch.setattr(Record, "node", counting)
    text = bench.generate_session(2000)
    assert bbox_lark.check(text) == []
    lines = text.count("\n")
    assert len(built) < lines // 4
