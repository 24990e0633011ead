"""The check registry's building blocks (``bbox_lark.checks.base``): a finding's message is
masked and printable, a long value is cut with its length, a rule sees the kinds it declares
and no other, and the registry refuses what would make two codes ambiguous."""

from __future__ import annotations

import io
from pathlib import Path
from typing import ClassVar

import pytest

import bbox_lark.checks.runner  # noqa: F401  (registers E016, the code the findings below use)
from bbox_lark.checks import base
from bbox_lark.checks.base import (
    CLEAN_HEADER,
    EVERY_LINE,
    NOT_EVENTS,
    CheckInfo,
    Context,
    Dispatch,
    LineKinds,
    Rule,
    example,
    kinds,
    printable,
    shorten,
)
from bbox_lark.syntax.nodes import Diagnostic
from bbox_lark.syntax.record import Record


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> dict[str, CheckInfo]:
    """A registry of its own, so that registering a test code leaves the real one alone."""
    fresh: dict[str, CheckInfo] = {}
    monkeypatch.setattr(base, "REGISTRY", fresh)
    monkeypatch.setattr(base, "RULES", [])
    return fresh


def _records(text: str) -> list[Record]:
    from bbox_lark.syntax.record import iter_records

    return [r for r in iter_records(io.BytesIO(text.encode())) if isinstance(r, Record)]


def _context(path: Path | None = None) -> Context:
    from bbox_lark.syntax.record import iter_records

    stream = iter_records(io.BytesIO(CLEAN_HEADER.encode()))
    list(stream)
    assert stream.head is not None
    return Context(stream.head, path)


# -- messages ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain words, é and ✓", "plain words, é and ✓"),
        ("a\nb", "a\\nb"),
        ("a\tb", "a\\tb"),
        ("\x00", "\\x00"),
        ("\x08", "\\x08"),
        ("\x0b\x0c\r", "\\x0b\\x0c\\x0d"),
        ("\x1f", "\\x1f"),
        ("\x7f", "\\x7f"),
        ("\x20\x7e", " ~"),
        ("caf\udce9", "caf\\xe9"),  # an undecodable byte (surrogateescape)
        ("\udc80\udcff", "\\x80\\xff"),
        ("\udc7f\udd00", "\udc7f\udd00"),  # not an escaped byte: left to the printer
    ],
)
def test_printable(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_shorten_cuts_a_long_value_and_gives_its_length() -> None:
    assert shorten("x" * 100) == "x" * 100
    assert shorten("x" * 101) == "x" * 80 + "… (101 characters)"
    assert shorten("y" * 1234) == "y" * 80 + "… (1,234 characters)"
    assert shorten("abcdefghij" * 3, limit=25) == "abcde… (30 characters)"
    assert shorten("abc", limit=3) == "abc"


def test_a_finding_is_reported_with_its_code_s_severity_and_name() -> None:
    ctx = _context()
    ctx.report("E016", 3, 4, "a message")
    info = base.REGISTRY["E016"]
    assert ctx.found == [Diagnostic("E016", info.severity, 3, 4, "a message", info.name)]


def test_a_finding_s_message_never_shows_a_secret_or_a_line_break() -> None:
    ctx = _context()
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    ctx.report("E016", 1, 1, f"value {key}\nnext")
    (found,) = ctx.found
    assert key not in found.message and "\n" not in found.message
    assert found.message.startswith("value ghp_") and found.message.endswith("\\nnext")


def test_a_context_s_defaults() -> None:
    ctx = _context()
    assert ctx.path is None and ctx.blobs is None and ctx.found == [] and ctx.allowed_secrets == frozenset()
    assert _context().found is not ctx.found


# -- what a rule sees ----------------------------------------------------------------------------


def test_named_kinds_only() -> None:
    seen = kinds("comment", "blank")
    assert "comment" in seen and "blank" in seen
    assert "user" not in seen and "continuation" not in seen
    assert seen == LineKinds(frozenset({"comment", "blank"}), False, frozenset())
    assert seen.names() == {"comment", "blank"}


def test_every_event_but_some() -> None:
    seen = kinds("continuation", events=True, but=["comment"])
    assert "user" in seen and "lifecycle" in seen and "unknown" in seen and "continuation" in seen
    assert "comment" not in seen and "blank" not in seen
    assert seen.names() == {"continuation", "comment"}
    assert "user" not in kinds(events=False)
    assert "blank" not in kinds(events=True)


def test_every_line() -> None:
    assert {"continuation", "blank"} == NOT_EVENTS
    for kind in ("continuation", "blank", "user", "agent", "comment", "lifecycle", "unknown"):
        assert kind in EVERY_LINE
    assert kinds() == LineKinds()
    assert "comment" not in kinds()


def test_the_clean_header_and_examples() -> None:
    assert example("u: hi\n") == CLEAN_HEADER + "u: hi\n"
    assert example("u: hi\n", header="---\nformat: bbox/1\n---\n") == "---\nformat: bbox/1\n---\nu: hi\n"
    assert base.SUPPRESSION_MARKER == "bbox-lark:"


# -- rules ---------------------------------------------------------------------------------------


class _Comments(Rule):
    codes: ClassVar[frozenset[str]] = frozenset({"T001"})
    sees = kinds("comment")

    def __init__(self) -> None:
        self.seen: list[str] = []

    def node(self, node: Record, ctx: Context) -> None:
        self.seen.append(f"comments:{node.kind}")


class _Events(Rule):
    codes: ClassVar[frozenset[str]] = frozenset({"T002"})
    sees = kinds(events=True, but=["unknown"])

    def node(self, node: Record, ctx: Context) -> None:
        pass


class _HeaderOnly(Rule):
    codes: ClassVar[frozenset[str]] = frozenset({"T003"})
    sees = kinds()


def test_a_rule_s_defaults() -> None:
    rule = _HeaderOnly()
    ctx = _context()
    assert rule.start(ctx) is None and rule.finish(ctx) is None
    assert rule.node(None, ctx) is None  # type: ignore[arg-type]
    assert rule.fault(None, ctx) is None  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError):
        rule.merge(_HeaderOnly())
    assert Rule.scope == "sequence" and Rule.keys == frozenset() and Rule.family == ""


def test_a_rule_wants_the_kinds_it_sees() -> None:
    body = _records(CLEAN_HEADER + "# a note\nu: hi\n")
    assert [r.kind for r in body] == ["comment", "user"]
    assert [(_Comments().wants(r), _Events().wants(r)) for r in body] == [(True, True), (False, True)]


def test_dispatch_calls_the_rules_that_see_a_kind_in_their_order() -> None:
    rules = [_Events(), _HeaderOnly(), _Comments()]
    dispatch = Dispatch(rules)
    assert dispatch.rules == (rules[0], rules[2])  # a rule without its own node() is left out
    assert "comment" not in dispatch
    comment = dispatch["comment"]
    assert [m.__self__ for m in comment] == [rules[0], rules[2]]  # type: ignore[attr-defined]
    assert "comment" in dispatch and dispatch["comment"] == comment
    assert [m.__self__ for m in dispatch["unknown"]] == []  # type: ignore[attr-defined]
    assert [m.__self__ for m in dispatch["user"]] == [rules[0]]  # type: ignore[attr-defined]
    assert dispatch["blank"] == ()


def test_which_rules_see_a_kind_is_worked_out_once_per_selection() -> None:
    first = Dispatch([_Comments(), _Events()])
    first["comment"]
    second = Dispatch([_Comments(), _Events()])
    assert second._seeing is first._seeing and second._seeing["comment"] == (0, 1)
    other = Dispatch([_Events(), _Comments()])
    assert other._seeing is not first._seeing
    fresh = _Comments()
    assert [m.__self__ for m in Dispatch([fresh])["comment"]] == [fresh]  # type: ignore[attr-defined]


# -- the registry ---------------------------------------------------------------------------------


def test_describe_registers_a_code(registry: dict[str, CheckInfo]) -> None:
    base.describe("T001", "test-one", "warning", "sum", "why", "bad", "good", family="tests", fix="do x")
    base.describe("T002", "test-two", "error", "s", "r", "b", "g", family="tests", internal=True)
    assert registry["T001"] == CheckInfo(
        "T001", "test-one", "warning", "sum", "why", "bad", "good", "tests", fix="do x", internal=False
    )
    assert registry["T002"].internal and registry["T002"].fix == "" and not registry["T002"].retired
    assert registry["T002"].family == "tests"


def test_describe_refuses_a_code_twice_or_an_unknown_severity(registry: dict[str, CheckInfo]) -> None:
    base.describe("T001", "one", "info", "s", "r", "b", "g", family="tests")
    with pytest.raises(ValueError, match="diagnostic code T001 registered twice"):
        base.describe("T001", "again", "info", "s", "r", "b", "g", family="tests")
    with pytest.raises(ValueError, match="unknown severity 'fatal'"):
        base.describe("T009", "x", "fatal", "s", "r", "b", "g", family="tests")
    assert "T009" not in registry


def test_a_rule_reports_its_family_s_codes(registry: dict[str, CheckInfo]) -> None:
    base.describe("T001", "one", "info", "s", "r", "b", "g", family="tests")
    base.describe("T002", "two", "info", "s", "r", "b", "g", family="tests")
    base.describe("T003", "three", "info", "s", "r", "b", "g", family="others")

    class Family(Rule):
        family = "tests"
        sees = kinds("comment")

    assert base.rule(Family) is Family
    assert Family.codes == {"T001", "T002"}
    assert [Family] == base.RULES

    class Own(Rule):
        family = "tests"
        codes: ClassVar[frozenset[str]] = frozenset({"T003"})
        sees = kinds("comment")

    base.rule(Own)
    assert Own.codes == {"T003"} and [Family, Own] == base.RULES


def test_a_rule_without_codes_or_kinds_is_refused(registry: dict[str, CheckInfo]) -> None:
    class Nothing(Rule):
        family = "none"
        sees = kinds("comment")

    with pytest.raises(ValueError, match="rule Nothing declares no codes"):
        base.rule(Nothing)

    class Blind(Rule):
        codes: ClassVar[frozenset[str]] = frozenset({"T001"})

    with pytest.raises(ValueError, match=r"rule Blind declares no line kinds \(sees = kinds\(...\)\)"):
        base.rule(Blind)

    class Wrong(Rule):
        codes: ClassVar[frozenset[str]] = frozenset({"T001"})
        sees: ClassVar[object] = {"comment"}  # type: ignore[misc]

    with pytest.raises(ValueError, match="declares no line kinds"):
        base.rule(Wrong)
    assert base.RULES == []
