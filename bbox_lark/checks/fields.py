"""Typed field values and step ordering (DECISIONS §4, §6, §9)."""

from __future__ import annotations

from bbox_lark.ast import Event, Field
from bbox_lark.checks import Context, describe, example, rule, shorten
from bbox_lark.values import LEVELS, MAX_INT, is_oversized_int, parse_attempt, parse_int, parse_timestamp

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


def _typed_problem(key: str, value: object) -> str | None:
    """Why a typed field's value is malformed, or None when it is fine."""
    if key == "ts":
        ok = isinstance(value, str) and parse_timestamp(value) is not None
        return None if ok else "is not an ISO 8601 date-time with a zone"
    if key in ("step", "latency_ms"):
        if is_oversized_int(value):
            return f"is over the largest integer a typed field takes ({MAX_INT})"
        return None if parse_int(value) is not None else "is not a non-negative integer"
    if key == "attempt":
        if isinstance(value, str) and any(is_oversized_int(part) for part in value.split("/", 1)):
            return f"is over the largest integer a typed field takes ({MAX_INT})"
        return None if parse_attempt(value) is not None else "is not N or N/M with N <= M"
    if key == "level":
        return None if value in LEVELS else f"is not one of {', '.join(LEVELS)}"
    return None


def _typed(ctx: Context, line: int, node: Field) -> None:
    problem = _typed_problem(node.key, node.value)
    if problem is not None:
        code = "W005" if node.key == "ts" else "W014"
        ctx.report(code, line, node.value_col, f"{node.key}={shorten(node.raw_value)} {problem}")


_TYPED = frozenset({"ts", "step", "latency_ms", "attempt", "level"})
_STEP_COMMENTS = frozenset({"metrics", "anchor"})


@rule
def field_checks(ctx: Context) -> None:
    highest: int | None = None
    steps: set[int] = set()
    references: list[tuple[int, Field]] = []
    for event in ctx.events:
        if event.kind == "unknown":
            continue
        if event.kind == "comment":
            if event.name in _STEP_COMMENTS:
                for node in event.field_nodes:
                    if node.key in _TYPED:
                        _typed(ctx, event.line, node)
                    if node.key == "step" and parse_int(node.value) is not None:
                        references.append((event.line, node))
            continue
        for node in event.field_nodes:
            if node.key in _TYPED:
                _typed(ctx, event.line, node)
        for node in event.metric_nodes:
            if node.key in _TYPED:
                _typed(ctx, event.line, node)
        highest = _order(ctx, event, highest, steps)
    for line, node in references:
        if steps and parse_int(node.value) not in steps:
            ctx.report(
                "I009", line, node.value_col, f"step={shorten(node.raw_value)} refers to a step no line has"
            )


def _order(ctx: Context, event: Event, highest: int | None, steps: set[int]) -> int | None:
    node = next((n for n in event.field_nodes if n.key == "step"), None)
    step = parse_int(node.value) if node is not None else None
    if node is None or step is None:
        return highest
    steps.add(step)
    if highest is not None:
        if step < highest:
            ctx.report(
                "W004", event.line, node.value_col, f"step={step} is lower than step={highest} before it"
            )
            return highest
        if step > highest + 1:
            ctx.report("I007", event.line, node.value_col, f"step={step} skips from step={highest}")
    return step if highest is None or step > highest else highest
