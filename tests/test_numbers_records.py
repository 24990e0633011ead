"""The numbers read from records are the numbers read from nodes (issue "Core v4", point 4):
``stats`` counts the records ``check`` reads (:func:`bbox_lark.syntax.record.iter_records`),
building a node only for what a record does not hold, in the same pass as the checks.

For every file of the golden corpus, the external logs (when present), the generated
benchmark session, the fuzzer's generators (a fixed seed) and the grammar's Hypothesis
documents: :class:`~bbox_lark.numbers.stats.StatsCounter` over the records gives the
statistics it gives over the nodes (:func:`bbox_lark.syntax.parser.iter_nodes`, the path
``stats`` took before), and :class:`~bbox_lark.numbers.session.SessionCounter` gives the same
call records, steps and totals (the reference until the next release)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import fuzz
import fuzzgen
import pytest
from hypothesis import given
from printer_support import documents, external_files, fuzz_settings, golden_files, on_each_file
from test_bench_tool import bench

from bbox_lark.numbers.session import SessionCounter
from bbox_lark.numbers.stats import Stats, StatsCounter
from bbox_lark.syntax.nodes import Event, Head
from bbox_lark.syntax.parser import iter_nodes
from bbox_lark.syntax.record import Record, iter_records
from bbox_lark.syntax.source import Source


def _header(head: Any) -> dict[str, Any]:
    assert isinstance(head, Head)
    return dict(head.header_info.fields) if head.header_info is not None else {}


def _stats(lines: Iterable[Any]) -> Stats:
    items = iter(lines)
    head = next(items)
    counter = StatsCounter(_header(head))
    for item in items:
        counter.append(item)
    return counter.finish(head.header_lines)


def _session(lines: Iterable[Any]) -> tuple[Any, ...]:
    items = iter(lines)
    counter = SessionCounter(_header(next(items)), estimate=False)
    calls = []
    for item in items:
        if isinstance(item, Event) or (isinstance(item, Record) and item.is_event):
            calls.extend(counter.feed(item))
    pending, steps, totals = counter.finish()
    return (calls + pending, steps, totals)


def assert_same_numbers(source: Source) -> None:
    assert _stats(iter_records(source)) == _stats(iter_nodes(source))
    assert _session(iter_records(source)) == _session(iter_nodes(source))


def test_golden_corpus() -> None:
    assert on_each_file(golden_files(), assert_same_numbers) > 50


@pytest.mark.skipif(not external_files(), reason="../shared/corpus-external is absent")
def test_external_logs() -> None:
    assert on_each_file(external_files(), assert_same_numbers) > 50


def test_generated_session() -> None:
    assert_same_numbers(bench.generate_session(3000))


@pytest.mark.parametrize("name", sorted(fuzzgen.GENERATORS))
def test_fuzzer_inputs(name: str) -> None:
    pool = fuzzgen.Pool.load(fuzzgen.default_folders())
    for index in range(15):
        assert_same_numbers(fuzz.generate(name, 21, index, pool, 4096))


@pytest.mark.parametrize(
    "text",
    [
        "a: says tokens_in=5 tokens_out=7 then more\na: done tokens_in=5 tokens_out=9\n",
        "a: done tokens_in=5 tokens_out=9 → tokens_in=7\n",
        'a: "tokens_in=4" tokens_in=5 tokens_out=1\na: x model=m1 tokens_in=2\n',
        "a: tokens_in=5 tokens_in=6 tokens_out=1\n",
        "t:bash id=a1 → error: no such file\nt:bash id=a2 → Error:x\nt:bash id=a3 → an error: later\n",
        "t!:read id=r1 ts=2025-01-01T00:00:00Z\no: id=r1 ts=2025-01-01T00:00:02Z → ok latency_ms=x\n",
    ],
)
def test_lines_a_record_reads_through_its_node(text: str) -> None:
    """Usage inside a free-text line's text, result fields, repeated keys, text results that
    hold ``error:``: where the record cannot tell cheaply, its node decides, as before."""
    assert_same_numbers("---\nformat: bbox/1\nid: s\nmodel: claude-sonnet-4-5\n---\n" + text)


@fuzz_settings(60)
@given(documents())
def test_documents(text: str) -> None:
    assert_same_numbers(text)
