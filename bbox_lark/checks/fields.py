"""Typed field values and step ordering (docs/reference.md#inside-a-line, docs/reference.md#steps)."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Mapping
from functools import cache
from typing import Any

from bbox_lark.checks.base import Context, Rule, describe, example, kinds, rule, shorten
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Field
from bbox_lark.syntax.record import Record
from bbox_lark.syntax.values import MAX_INT, is_oversized_int, parse_attempt, parse_int, parse_timestamp

FAMILY = "fields"

describe(
    "W004",
    "step-decreasing",
    "warning",
    "A line's `step=` is lower than the highest step seen before it.",
    "Steps order a trajectory; going back means lines were reordered or a writer restarted its"
    " counter. `bbox-lark fix --renumber-steps` repairs the numbering.",
    example("a: first step=2\na: second step=1\n"),
    example("a: first step=1\na: second step=2\n"),
    fix="Run `bbox-lark fix --renumber-steps` to renumber the steps in order.",
    family=FAMILY,
)
describe(
    "W005",
    "invalid-timestamp",
    "warning",
    "`ts=` is not an ISO 8601 date-time with a zone.",
    "Timestamps join logs with dashboards; without a zone they are ambiguous.",
    example("a: hello ts=2025-12-18T03:21:08\n"),
    example("a: hello ts=2025-12-18T03:21:08Z\n"),
    fix="Write `ts=` as ISO 8601 with a zone, e.g. `ts=2025-06-18T09:00:00Z`.",
    family=FAMILY,
)
describe(
    "W014",
    "malformed-typed-field",
    "warning",
    "A typed field has a malformed value: `step` and `latency_ms` take integers, `attempt`"
    " takes `N` or `N/M` with N <= M, `level` takes debug, info, warn or error.",
    "Typed fields feed statistics and converters; a malformed value is dropped from them.",
    example("t:curl api.example.com attempt=4/3 → [ok]\n"),
    example("t:curl api.example.com attempt=2/3 → [ok]\n"),
    fix="Write the value in the field's type: an integer `step` or `latency_ms`, `attempt=N` or"
    " `N/M`, `level=debug|info|warn|error`.",
    family=FAMILY,
)
describe(
    "I007",
    "step-gap",
    "info",
    "A line's `step=` skips numbers after the highest step so far.",
    "Gaps are legal (steps may live in other files) but often mean lost lines."
    " `bbox-lark fix --renumber-steps` closes them.",
    example("a: first step=1\na: second step=5\n"),
    example("a: first step=1\na: second step=2\n"),
    fix="Run `bbox-lark fix --renumber-steps` to number the steps 1..N.",
    family=FAMILY,
)
describe(
    "I009",
    "dangling-step-reference",
    "info",
    "A `# metrics step=N` or `# anchor step=N` comment refers to a step no line has.",
    "Per-step metrics and anchors point at an event; a step nobody has cannot be joined.",
    example("a: hello step=1\n# metrics step=2 prompt_tokens=5\n"),
    example("a: hello step=1\n# metrics step=1 prompt_tokens=5\n"),
    fix="Point the comment at a step an event has, or remove the reference.",
    family=FAMILY,
)


#: What a typed value must be, by the grammar terminal that gives its syntax. Values of the
#: other typed fields (ids: any non-empty value) are not checked.
_SYNTAX = {
    "TS_VALUE": "is not an ISO 8601 date-time with a zone",
    "STEP_VALUE": "is not a non-negative integer",
    "LATENCY_MS_VALUE": "is not a non-negative integer",
    "ATTEMPT_VALUE": "is not N or N/M with N <= M",
    "LEVEL_VALUE": "is not one of {levels}",
}
_TOO_LARGE = f"is over the largest integer a typed field takes ({MAX_INT})"


def _typed_problem(key: str, value: object) -> str | None:
    """Why a typed field's value is malformed, or None when it is fine (or not checked).
    The syntax is the grammar's; the range, N <= M and a real date are checked here."""
    vocab = vocabulary()
    terminal = vocab.typed_field_terminals.get(key)
    if terminal not in _SYNTAX:
        return None
    if not isinstance(value, str) or vocab.typed_fields[key].fullmatch(value) is None:
        return _SYNTAX[terminal].format(levels=", ".join(vocab.levels))
    if any(is_oversized_int(part) for part in value.split("/", 1)):
        return _TOO_LARGE
    if (key == "ts" and parse_timestamp(value) is None) or (
        key == "attempt" and parse_attempt(value) is None
    ):
        return _SYNTAX[terminal].format(levels=", ".join(vocab.levels))
    return None


@cache
def checked_keys() -> frozenset[str]:
    """The typed keys whose values :func:`_typed_problem` checks (``ts``, ``step``, ...; not
    the ids, which take any non-empty value)."""
    terminals = vocabulary().typed_field_terminals
    return frozenset(key for key, terminal in terminals.items() if terminal in _SYNTAX)


def _typed(ctx: Context, line: int, node: Field) -> None:
    problem = _typed_problem(node.key, node.value)
    if problem is not None:
        code = "W005" if node.key == "ts" else "W014"
        ctx.report(code, line, node.value_col, f"{node.key}={shorten(node.raw_value)} {problem}")


@rule
class FieldRule(Rule):
    """Typed values, each on its own line."""

    codes = frozenset({"W005", "W014"})
    family = FAMILY
    scope = "line"
    sees = kinds(events=True, but=["unknown"])  # an unknown line has no fields

    def __init__(self) -> None:
        self.checked = checked_keys()
        self.reference_comments = vocabulary().step_reference_comments

    def node(self, event: Record, ctx: Context) -> None:
        # The fields' dicts hold every key of their nodes: a line without a checked key
        # (most lines) costs one set operation, and no field node is looked at; nor is one
        # on a line whose checked keys each stand once with a good value (_fine).
        checked = self.checked
        if event.kind == "comment" and event.name not in self.reference_comments:
            return
        fields = event.fields
        if not checked.isdisjoint(fields) and not _fine(event.raw, fields, checked):
            for node in event.field_nodes:
                if node.key in checked:
                    _typed(ctx, event.line, node)
        metrics = event.metrics
        if (
            metrics
            and event.kind != "comment"
            and not checked.isdisjoint(metrics)
            and not _fine(event.raw, metrics, checked)
        ):
            for node in event.metric_nodes:
                if node.key in checked:
                    _typed(ctx, event.line, node)


@rule
class StepRule(Rule):
    """Step order against the highest step so far; I009 at the end, from the set of step
    numbers (a :class:`StepSet`, 8 bytes a step) and the step references of the structured
    comments to a step not seen before them."""

    codes = frozenset({"W004", "I007", "I009"})
    family = FAMILY
    keys = frozenset({"step"})
    sees = kinds(events=True, but=["unknown"])

    def __init__(self) -> None:
        self.reference_comments = vocabulary().step_reference_comments
        self.highest: int | None = None
        self.steps = StepSet()
        #: (line, column, step, source value) of each step reference not yet satisfied.
        self.references: list[tuple[int, int, int, str]] = []

    def wants(self, node: Record) -> bool:
        if node.kind not in self.sees:
            return False
        if node.kind == "comment" and node.name not in self.reference_comments:
            return False
        return "step" in node.fields

    def node(self, event: Record, ctx: Context) -> None:
        if "step" not in event.fields:  # it holds every key of the field nodes
            return
        if event.kind == "comment":
            if event.name in self.reference_comments:
                for node in event.field_nodes:
                    if node.key == "step":
                        step = parse_int(node.value)
                        # a step already seen is never reported: only the others are kept
                        if step is not None and step not in self.steps:
                            self.references.append((event.line, node.value_col, step, node.raw_value))
            return
        self.highest = _order(ctx, event, self.highest, self.steps)

    def finish(self, ctx: Context) -> None:
        steps = self.steps
        for line, col, step, raw in self.references:
            if steps and step not in steps:
                ctx.report("I009", line, col, f"step={shorten(raw)} refers to a step no line has")


class StepSet:
    """A set of step numbers: 8 bytes a step for steps that go up (an array), a plain set
    for the few that come out of order."""

    __slots__ = ("_extra", "_rising")

    def __init__(self) -> None:
        self._rising = array("q")
        self._extra: set[int] = set()

    def add(self, value: int) -> None:
        rising = self._rising
        if (not rising or value > rising[-1]) and value < (1 << 63):
            rising.append(value)
        elif value not in self:
            self._extra.add(value)

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int):
            return False
        if value in self._extra:
            return True
        rising = self._rising
        index = bisect.bisect_left(rising, value)
        return index < len(rising) and rising[index] == value

    def __bool__(self) -> bool:
        return bool(self._rising) or bool(self._extra)


def _order(ctx: Context, event: Record, highest: int | None, steps: StepSet) -> int | None:
    # The first `step` field node's value is the fields' `step` (the first occurrence wins):
    # the node (its column) only for a finding.
    value = event.fields.get("step")
    step = parse_int(value) if isinstance(value, str) else None
    if step is None:
        return highest
    steps.add(step)
    if highest is not None:
        if step < highest:
            ctx.report(
                "W004", event.line, _step_col(event), f"step={step} is lower than step={highest} before it"
            )
            return highest
        if step > highest + 1:
            ctx.report("I007", event.line, _step_col(event), f"step={step} skips from step={highest}")
    return step if highest is None or step > highest else highest


def _step_col(event: Record) -> int:
    return next(n.value_col for n in event.field_nodes if n.key == "step")


def _fine(raw: str, fields: Mapping[str, Any], checked: frozenset[str]) -> bool:
    """True when every checked key of ``fields`` stands once on the line (``key=`` once in
    its text, so one field node has it: the one whose value ``fields`` holds) with a value
    :func:`_typed_problem` accepts: the field nodes need not be built."""
    for key in checked.intersection(fields):
        if raw.count(key + "=") != 1 or _typed_problem(key, fields[key]) is not None:
            return False
    return True
