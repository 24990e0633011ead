"""Rules declare the kinds of line they see, and the checker calls each only for those
(issue 21, point 3): ``Rule.sees``, ``kinds``, the checker's ``Dispatch`` table."""

from __future__ import annotations

from collections import defaultdict

import pytest
from conftest import corpus_files

import bbox_lark
from bbox_lark.api import checker_for, run
from bbox_lark.checks import EVERY_LINE, RULES, Context, Dispatch, LineKinds, Rule, kinds, rule
from bbox_lark.checks.base import NOT_EVENTS
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Line
from bbox_lark.syntax.parser import iter_nodes

CORPUS = [*corpus_files("valid"), *corpus_files("invalid"), *corpus_files("hostile")]
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"
#: A body with a line of every kind but ``unknown``'s oversized variant.
EVERY_KIND = (
    "u: hi\na: ok\nt:read a.rs → [ok]\nt!:test id=c1 → [running]\nt~:test id=c1 [1/2]\n"
    "o: id=c1 → [ok]\ns:review\np:add step\nm:plan\nr:memory\nx:explore id=x1 → [launched]\n"
    "c:srv.call id=m1 → [ok]\nq:ask id=q1 → [pending]\nth: hmm\ntd: list\n"
    "# t=00:00:01\n@start\nbogus line\n  a continuation\n\n@end\n"
)
LINE_KINDS = frozenset(vocabulary().event_kinds) | NOT_EVENTS


def test_every_registered_rule_declares_the_kinds_it_sees() -> None:
    bbox_lark.registry()  # loads every family
    assert RULES
    for cls in RULES:
        sees = cls.sees
        assert isinstance(sees, LineKinds), cls.__name__
        assert sees.names() <= LINE_KINDS, (cls.__name__, sees.names() - LINE_KINDS)
        seen = {kind for kind in LINE_KINDS if kind in sees}
        # a rule that sees a line has a node() to see it with, and one with a node() sees lines
        assert bool(seen) == (cls.node is not Rule.node), cls.__name__


def test_a_rule_without_line_kinds_is_refused() -> None:
    class Nameless(Rule):
        codes = frozenset({"W003"})

        def node(self, node: Line, ctx: Context) -> None:
            pass

    before = list(RULES)
    with pytest.raises(ValueError, match="declares no line kinds"):
        rule(Nameless)
    assert before == RULES


def test_kinds_name_events_and_the_other_kinds() -> None:
    assert "blank" in EVERY_LINE and "continuation" in EVERY_LINE and "tool" in EVERY_LINE
    events = kinds(events=True, but=["unknown"])
    assert "comment" in events and "tool_start" in events
    assert "unknown" not in events and "blank" not in events and "continuation" not in events
    assert "comment" in kinds("comment") and "tool" not in kinds("comment")
    assert not any(kind in kinds() for kind in LINE_KINDS)


class _Recording(Rule):
    """Records the kinds of line it is called for."""

    codes = frozenset({"W003"})

    def __init__(self) -> None:
        self.called: list[str] = []

    def node(self, node: Line, ctx: Context) -> None:
        self.called.append(node.kind)


def _recorder(sees: LineKinds) -> _Recording:
    """A recording rule of a class of its own that sees ``sees`` (a class attribute)."""
    cls = type("Recorder", (_Recording,), {"sees": sees})
    return cls()  # type: ignore[no-any-return]


def _body_nodes(text: str | bytes) -> list[Line]:
    stream = iter_nodes(text, attach=False)
    next(stream)
    return [node for node in stream if isinstance(node, Line)]  # type: ignore[misc,arg-type]


def test_the_dispatch_calls_a_rule_only_for_the_kinds_it_sees() -> None:
    nodes = _body_nodes(HEADER + EVERY_KIND)
    present = {node.kind for node in nodes}
    assert present == LINE_KINDS  # the body has every kind
    comments, calls = _recorder(kinds("comment")), _recorder(kinds("tool", "observation"))
    events = _recorder(kinds(events=True, but=["unknown"]))
    nothing, everything = _recorder(kinds()), _recorder(EVERY_LINE)
    dispatch = Dispatch([comments, calls, events, nothing, everything])
    for node in nodes:
        for check in dispatch[node.kind]:
            check(node, None)  # type: ignore[arg-type]
    assert comments.called == ["comment"]
    assert calls.called == ["tool", "observation"]
    assert set(events.called) == LINE_KINDS - NOT_EVENTS - {"unknown"}
    assert nothing.called == []
    assert everything.called == [node.kind for node in nodes]


def test_the_dispatch_keeps_the_rules_order_and_skips_rules_without_node() -> None:
    first, second = _recorder(EVERY_LINE), _recorder(kinds("user"))
    dispatch = Dispatch([second, Rule(), first])
    assert dispatch["user"] == (second.node, first.node)
    assert dispatch["blank"] == (first.node,)
    assert dispatch["a kind no grammar has"] == (first.node,)  # an event's kind, for `events`


@pytest.mark.parametrize("text", [HEADER + EVERY_KIND, *(f.data() for f in CORPUS[::4])])
def test_the_checker_calls_every_rule_only_for_its_kinds(text: str | bytes) -> None:
    checker = checker_for(None, None, None, None)
    called: dict[str, set[str]] = defaultdict(set)
    for check in checker.rules:
        name = type(check).__name__
        method = check.node

        def record(node: Line, ctx: Context, name: str = name, method: object = method) -> None:
            called[name].add(node.kind)
            method(node, ctx)  # type: ignore[operator]

        check.node = record  # type: ignore[method-assign]
    checker.dispatch = Dispatch(checker.rules)  # the table binds each rule's node once
    found = list(run(checker, iter_nodes(text, attach=False)))
    assert found == bbox_lark.check(text)
    present = {
        node.kind
        for node in _body_nodes(text if isinstance(text, str) else text.decode("utf-8", "surrogateescape"))
    }
    for check in checker.rules:
        name = type(check).__name__
        wanted = {kind for kind in present if kind in check.sees}
        assert called[name] == wanted, name
