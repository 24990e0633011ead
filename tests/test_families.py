"""Each event family holds only its own fields (issue 28, point 1).

``Event`` keeps what every line has; each family (``Message``, ``Call``, ``Observation``,
``Lifecycle``, ``Comment``, ``Unknown``) adds the parts its lines can fill, and the base
reads a part a family does not hold as its empty value (docs/design.md, "Nodes you can
build"). The parser makes the families by position (``shape._FAMILY_FIELDS``).
"""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from printer_support import golden_files

import bbox_lark
from bbox_lark import build
from bbox_lark.syntax import shape
from bbox_lark.syntax.nodes import (
    EMPTY_PARTS,
    FAMILY_CLASSES,
    Call,
    Comment,
    Event,
    Lifecycle,
    Message,
    Observation,
    Unknown,
)

BASE = (
    "kind",
    "line",
    "source",
    "eol",
    "col",
    "prefix",
    "text",
    "text_col",
    "fields",
    "field_nodes",
    "continuation",
    "quote_faults",
    "emitted",
)
RESULT = ("arrow", "arrow_col", "result", "metrics", "metric_nodes")

#: The table of docs/design.md: each family's own fields, after the base's.
OWN = {
    Message: RESULT,
    Call: ("name", "name_col", "spaced_name", "args", *RESULT),
    Observation: ("args", *RESULT),
    Lifecycle: ("name", "name_col", "args", *RESULT),
    Comment: ("name", "metrics", "metric_nodes"),
    Unknown: ("oversized",),
}


def names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def test_each_family_holds_only_its_own_fields() -> None:
    assert set(OWN) == set(FAMILY_CLASSES)
    assert names(Event) == BASE
    for cls, own in OWN.items():
        assert names(cls) == BASE + own, cls
    # Every part some family holds and the base does not is an empty part of the base.
    assert {name for own in OWN.values() for name in own} == set(EMPTY_PARTS)


def test_the_parser_makes_the_families_by_position() -> None:
    assert shape._positional()
    for cls, order in shape._FAMILY_FIELDS.items():
        assert names(cls) == order


LINES = {
    "u: hi n=1 → [ok] # metrics step=1": Message,
    "t:read a.rs id=1 → [3 lines] # metrics cost_usd=0.1": Call,
    "o: out id=1 → [ok]": Observation,
    '@start "fix it" → [ok]': Lifecycle,
    "# metrics step=1": Comment,
    "what is this": Unknown,
}


@pytest.mark.parametrize("text", LINES)
def test_a_part_a_family_lacks_reads_empty(text: str) -> None:
    node = bbox_lark.parse(text + "\n").events[0]
    cls = LINES[text]
    assert type(node) is cls
    for part, empty in EMPTY_PARTS.items():
        if part not in OWN[cls]:
            assert getattr(node, part) == empty, part
            assert part not in {f.name for f in dataclasses.fields(node)}
    shown = (f"{f.name}={getattr(node, f.name)!r}" for f in dataclasses.fields(node) if f.repr)
    assert repr(node) == f"{cls.__name__}({', '.join(shown)})"
    assert pickle.loads(pickle.dumps(node)) == node
    assert dataclasses.replace(node) == node


def test_a_family_refuses_a_part_it_lacks() -> None:
    with pytest.raises(TypeError):
        Message("user", 0, None, name="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Comment("comment", 0, None, result=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Event("tool", 0, None, args=("a",))  # type: ignore[call-arg]
    message = build.message("user", "hi")
    with pytest.raises(TypeError):
        dataclasses.replace(message, name="x")  # type: ignore[call-arg]


def test_family_node_leaves_out_empty_parts_and_refuses_others() -> None:
    node = shape.family_node(
        Comment, "comment", 1, "# x", "\n", prefix="#", text="x", text_col=3, args=(), result=None
    )
    assert node == bbox_lark.parse("# x\n").events[0]
    with pytest.raises(TypeError, match="holds no result"):
        shape.family_node(Comment, "comment", 1, "# x", result=build.result("ok"))
    with pytest.raises(TypeError, match="holds no name"):
        shape.family_node(Observation, "observation", 1, "o:", name="x")


def test_match_reads_the_family() -> None:
    kinds = []
    for node in bbox_lark.parse("".join(line + "\n" for line in LINES)).events:
        match node:
            case Call(name="read", args=("a.rs",)):
                kinds.append("read")
            case Comment(name="metrics", metrics={"step": "1"}):
                kinds.append("metrics")
            case Message() | Observation() | Lifecycle() | Unknown():
                kinds.append(node.kind)
    assert kinds == ["user", "read", "observation", "lifecycle", "metrics", "unknown"]


def test_every_corpus_event_is_its_kinds_family() -> None:
    for path in golden_files():
        for node in bbox_lark.parse(path.read_bytes()).events:
            assert type(node) is shape.node_class(node.kind), (path, node.line)
