"""Line-level checks: line kinds, names, arrows, quotes, lifecycle primitives
(docs/reference.md#line-kinds, docs/reference.md#quotes)."""

from __future__ import annotations

from bbox_lark.checks.base import Context, Rule, describe, example, kinds, rule, shorten
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.record import Record

FAMILY = "lines"


describe(
    "W003",
    "unknown-line",
    "warning",
    "A body line is none of: blank, continuation, comment, lifecycle, prefixed event.",
    "Unknown lines are kept verbatim, but no tool can say what they record. A typo in a prefix"
    " (`tool:` for `t:`) is the usual cause.",
    example("tool: read src/main.rs\n"),
    example("t:read src/main.rs\n"),
    fix="Correct the prefix (`t:`, `a:`, `u:`, …), or make the line a comment with `#`.",
    family=FAMILY,
)
describe(
    "W011",
    "space-before-name",
    "warning",
    "A named prefix (`t: t!: t~: s: p: x: c:`) has a space before its name.",
    "The name follows the colon directly (`t:read`); the line is read as if it did, and `fmt`"
    " removes the space.",
    example("t: read src/main.rs\n"),
    example("t:read src/main.rs\n"),
    fix="Remove the space (`t:read`); `bbox-lark fmt` does it.",
    family=FAMILY,
)
describe(
    "W012",
    "missing-name",
    "warning",
    "A tool, skill, plan, subagent, MCP or mode line has no name.",
    "Without the name (`t:read`, `m:auto`) the event cannot be counted or correlated.",
    example("t: → [ok]\n"),
    example("t:read → [ok]\n"),
    fix="Put the name right after the colon: `t:read`, `s:pdf`, `c:github.issues`, `m:auto`.",
    family=FAMILY,
)
describe(
    "W013",
    "ascii-arrow",
    "warning",
    "A result is introduced by the ASCII `->` instead of `→`.",
    "The ASCII arrow is accepted with whitespace around it, but `→` is the format's separator"
    " and cannot be mistaken for text. `bbox-lark fmt` and `fix --arrows` rewrite it.",
    example("t:read src/main.rs -> [200 lines]\n"),
    example("t:read src/main.rs → [200 lines]\n"),
    fix="Run `bbox-lark fmt` or `bbox-lark fix --arrows` to rewrite it as `→`.",
    family=FAMILY,
)
describe(
    "E012",
    "unterminated-quote",
    "error",
    "A quoted string in the call part of a line is never closed.",
    "An unclosed quote leaves the call's arguments ambiguous. The rest of the line is still"
    " read, as if the quote were an ordinary character.",
    example('t:grep "TODO src → [3 matches]\n'),
    example('t:grep "TODO" src → [3 matches]\n'),
    fix='Close the string with `"`, or remove the stray quote.',
    family=FAMILY,
)
describe(
    "W015",
    "unterminated-field-value",
    "warning",
    'A quoted field value in free text or a result (`key="...`) is never closed.',
    "Real writers truncate long text; the value is read up to the next space.",
    example('x:explore id=sub_1 → summary="Found 3 failures\n'),
    example('x:explore id=sub_1 → summary="Found 3 failures"\n'),
    fix='Close the value with `"`, or write it without quotes.',
    family=FAMILY,
)
describe(
    "W021",
    "unknown-lifecycle",
    "warning",
    "A lifecycle line uses a primitive the format does not define.",
    "Known primitives (the grammar's `primitive` rule): "
    + ", ".join(sorted(vocabulary().primitives))
    + ". Others are parsed generically.",
    example("@restart reason=crash\n"),
    example("@resume reason=crash\n"),
    fix="Use a defined primitive (`bbox-lark explain W021` lists them), or make the line a comment.",
    family=FAMILY,
)
describe(
    "W022",
    "unknown-phase",
    "warning",
    "`@phase` names no phase, or one other than explore, design, review, final, exit.",
    "Plan mode has exactly five phases; another word is usually a typo.",
    example("@phase planning\n"),
    example("@phase design\n"),
    fix="Write `@phase` with one of explore, design, review, final, exit.",
    family=FAMILY,
)
describe(
    "W023",
    "orphan-continuation",
    "warning",
    "A continuation line has no preceding line to belong to.",
    "Continuations extend the line before them; at the start of the body there is none.",
    example("  stray text\na: hello\n"),
    example("a: hello\n  more text\n"),
    fix="Remove the indentation, or move the line under the line it continues.",
    family=FAMILY,
)


@rule
class LineRule(Rule):
    """Each line on its own."""

    family = FAMILY
    scope = "line"
    sees = kinds("continuation", events=True, but=["comment"])  # a comment's own checks are elsewhere

    def node(self, node: Record, ctx: Context) -> None:
        if node.kind != "continuation":
            _check_event(ctx, node)
        elif node.owner is None:
            ctx.report("W023", node.line, 1, "continuation line with no line before it")


def _check_event(ctx: Context, event: Record) -> None:
    kind = event.kind
    if kind == "unknown":
        if not event.oversized:
            ctx.report("W003", event.line, 1, "unknown line kind (kept verbatim)")
        return
    if kind == "comment":
        return
    if event.spaced_name:
        ctx.report("W011", event.line, len(event.prefix) + 2, f"space between `{event.prefix}:` and the name")
    if event.name is None and event.prefix in vocabulary().named_prefixes:
        what = "mode word" if event.prefix == "m" else "name"
        ctx.report("W012", event.line, len(event.prefix) + 2, f"`{event.prefix}:` line without a {what}")
    if event.arrow == "->" and event.arrow_col is not None:
        ctx.report("W013", event.line, event.arrow_col, "ASCII `->` used as the result arrow; use `→`")
    for fault in event.quote_faults:
        if fault.in_free_text:
            if fault.in_field:
                ctx.report("W015", event.line, fault.col, "unterminated quoted field value")
        else:
            ctx.report("E012", event.line, fault.col, "unterminated quoted string in the call part")
    if kind == "lifecycle":
        name = event.name or ""
        if name not in vocabulary().primitives:
            ctx.report("W021", event.line, 2, f"unknown lifecycle primitive `@{shorten(name)}`")
        elif name == "phase":
            phase = event.args[0] if event.args else None
            phases = vocabulary().phases
            if not isinstance(phase, str) or phase not in phases:
                shown = (
                    "no phase"
                    if phase is None
                    else f"phase {shorten(str(phase))!r}"
                    if isinstance(phase, str)
                    else f"phase {phase!r}"
                )
                col = event.text_col if phase is not None else len(event.raw) + 1
                ctx.report(
                    "W022",
                    event.line,
                    col,
                    f"@phase with {shown}; expected one of {', '.join(sorted(phases))}",
                )
