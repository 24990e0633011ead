"""Parts of parsed events built on first access, against building them at once.

The parser leaves an event's ``field_nodes``, ``args`` and ``metric_nodes`` unbuilt
(``bbox_lark.syntax.nodes.Deferred``, read by ``shape.deferred_parts`` from the source and the spans
the scan found) because ``check`` reads them only to place a finding; ``shape.DEFER_PARTS =
False`` builds every part at once, as before. For every node of the golden corpus, the
external logs (when present), the generated benchmark session, the fuzzer's inputs and the
scan tests' tricky lines, both ways give the same node: every attribute equal (the dicts in
the same order), and the same through ``==``, ``repr``, ``values()``, pickling,
``copy.copy``, ``dataclasses.replace`` and the writers' ``type(node).__name__``, each taken
on a node none of whose parts was read yet.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from collections.abc import Callable
from typing import Any

import fuzz
import fuzzgen
import pytest
from printer_support import external_files, golden_files
from test_bench_tool import bench
from test_line_scan import TRICKY

import bbox_lark
from bbox_lark.checks.fields import checked_keys
from bbox_lark.syntax import parser, shape
from bbox_lark.syntax.nodes import DEFERRED_PARTS, EMPTY_PARTS, Deferred, Event, Message

#: Every part an event reads: the base's fields and those only some families hold.
EVENT_FIELDS = [f.name for f in dataclasses.fields(Event)] + sorted(EMPTY_PARTS)

#: What is taken of a node before any of its parts is read, and compared both ways.
VIEWS: dict[str, Callable[[Any], Any]] = {
    "attributes": lambda node: attributes(node),
    "repr": repr,
    "values": lambda node: node.values() if isinstance(node, Event) else node,
    "pickle": lambda node: pickle.loads(pickle.dumps(node)),
    "copy": copy.copy,
    "replace": lambda node: dataclasses.replace(node),
    "class": lambda node: type(node).__name__,
    "equal": lambda node: node,
}


def attributes(node: Any) -> Any:
    """Every field of a node, the dicts as item lists (their order matters to writers)."""
    if not isinstance(node, Event):
        return node
    values = []
    for name in EVENT_FIELDS:
        value = getattr(node, name)
        assert type(value) is not Deferred, name
        values.append(list(value.items()) if isinstance(value, dict) else value)
    return values


def slot_values(node: Event) -> list[Any]:
    """What the deferrable slots hold, without building anything (() for a part the node's
    family does not hold)."""
    found = [inspect.getattr_static(type(node), name) for name in DEFERRED_PARTS]
    return [part.slot.__get__(node) if hasattr(part, "slot") else () for part in found]


def parse_both_ways(data: str | bytes, monkeypatch: pytest.MonkeyPatch, attach: bool) -> list[Any]:
    with monkeypatch.context() as patch:
        patch.setattr(shape, "DEFER_PARTS", False)
        return list(bbox_lark.iter_nodes(data, attach=attach))


def assert_same_document(data: str | bytes, monkeypatch: pytest.MonkeyPatch) -> int:
    """Each view of each node, taken on freshly parsed nodes, equals the eager nodes'; the
    number of nodes that had a deferred part."""
    deferred = 0
    for attach in (True, False):
        eager = parse_both_ways(data, monkeypatch, attach)
        for name, view in VIEWS.items():
            lazy = list(bbox_lark.iter_nodes(data, attach=attach))
            if name == "attributes":
                deferred += sum(
                    any(type(v) is Deferred for v in slot_values(n)) for n in lazy if isinstance(n, Event)
                )
            assert [view(n) for n in lazy] == [view(n) for n in eager], name
    return deferred


def test_tricky_lines() -> None:
    for raw in TRICKY:
        for name, view in VIEWS.items():
            lazy = shape.scanned_line(raw, 7, "\n")
            driver = shape.build_line(parser.line_driver().parse(raw), raw, 7, "\n") if raw else lazy
            shape.DEFER_PARTS = False
            try:
                eager = shape.scanned_line(raw, 7, "\n")
            finally:
                shape.DEFER_PARTS = True
            if lazy is None:
                continue
            assert view(lazy) == view(eager), (raw, name)
            assert view(driver) == view(eager), (raw, name)


def test_reading_one_part_builds_them_all() -> None:
    node = shape.scanned_line("t:read a.rs n=1 → [ok] k=v # metrics step=2", 1, "\n")
    assert isinstance(node, Event)
    assert all(type(v) is Deferred for v in slot_values(node))
    assert node.args == ("a.rs",)
    assert not any(type(v) is Deferred for v in slot_values(node))
    assert [f.key for f in node.field_nodes] == ["n", "k"]
    assert [f.key for f in node.metric_nodes] == ["step"]
    assert Event.field_nodes is vars(Event)["field_nodes"]  # the class attribute stays readable
    assert type(node).field_nodes is vars(type(node))["field_nodes"]


def test_a_family_without_args_defers_the_rest() -> None:
    node = shape.scanned_line("u: hello n=1 # metrics step=2", 1, "\n")
    assert isinstance(node, Message)
    assert "args" not in {f.name for f in dataclasses.fields(node)}
    assert [type(v) is Deferred for v in slot_values(node)] == [True, False, True]
    assert [f.key for f in node.metric_nodes] == ["step"]
    assert not any(type(v) is Deferred for v in slot_values(node))
    assert [f.key for f in node.field_nodes] == ["n"]
    assert node.args == ()


def test_empty_parts_are_not_deferred() -> None:
    node = shape.scanned_line("u: hello there", 1, "\n")
    assert isinstance(node, Event)
    assert slot_values(node) == [(), (), ()]


def test_a_node_stays_frozen() -> None:
    node = shape.scanned_line("t:read a.rs", 1, "\n")
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.args = ()  # type: ignore[misc, union-attr]
    with pytest.raises(TypeError):  # its keyed values are read-only too
        node.fields["id"] = "x"  # type: ignore[union-attr]
    # A value: hashed by its values (the deferred parts built first), equal to the same
    # line read with every part built at once.
    assert hash(node) == hash(shape.scanned_line("t:read a.rs", 1, "\n"))


def test_golden_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    deferred = sum(assert_same_document(path.read_bytes(), monkeypatch) for path in golden_files())
    assert deferred > 100


@pytest.mark.skipif(not external_files(), reason="../shared/corpus-external is absent")
def test_external_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    deferred = sum(assert_same_document(path.read_bytes(), monkeypatch) for path in external_files())
    assert deferred > 1000


def test_generated_session(monkeypatch: pytest.MonkeyPatch) -> None:
    assert assert_same_document(bench.generate_session(2000), monkeypatch) > 1000


@pytest.mark.parametrize("name", sorted(fuzzgen.GENERATORS))
def test_fuzzer_inputs(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pool = fuzzgen.Pool.load(fuzzgen.default_folders())
    for index in range(25):
        assert_same_document(fuzz.generate(name, 21, index, pool, 4096), monkeypatch)


def test_check_builds_few_deferred_parts_on_a_clean_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """What makes deferring pay: the checks read the field nodes only to place a finding,
    or on a line whose typed key stands twice or is malformed (since Core v4 they read
    records, and a record builds its node only then: ``tests/test_records.py``). A rule that
    reads ``field_nodes``, ``args`` or ``metric_nodes`` on every line makes this fail (then
    read ``fields`` instead, or say in docs/design.md why it must)."""
    built: list[str] = []
    reader = shape.deferred_parts

    def counting(raw: str, *state: Any) -> Any:
        built.append(raw)
        return reader(raw, *state)

    monkeypatch.setattr(shape, "deferred_parts", counting)
    text = bench.generate_session(2000)
    assert bbox_lark.check(text) == []
    checked = checked_keys()
    assert all(any(f"{key}=" in raw for key in checked) for raw in built)
    assert len(built) < text.count("\n") // 10
