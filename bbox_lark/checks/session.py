"""Session lifecycle checks: `@start` and `@end` (DECISIONS §6)."""

from __future__ import annotations

from bbox_lark.ast import BlankLine
from bbox_lark.checks import Context, describe, example, rule

FAMILY = "session"

LONG_SESSION = 50

describe(
    "I001",
    "long-session-without-start",
    "info",
    f"The body has more than {LONG_SESSION} non-blank lines and no `@start`.",
    "Long sessions should mark their start (budget, duration) so they can be resumed and audited.",
    example("".join(f"a: line {n}\n" for n in range(LONG_SESSION + 1))),
    example("@start\n" + "".join(f"a: line {n}\n" for n in range(LONG_SESSION + 1)) + "@end\n"),
    fix="Add an `@start` line where the session begins.",
    family=FAMILY,
)
describe(
    "I002",
    "start-without-end",
    "info",
    "The session has an `@start` but no `@end`.",
    "A session without `@end` was cut off or is still running; its totals are incomplete.",
    example("@start\na: working\n"),
    example("@start\na: working\n@end\n"),
    fix="Add an `@end` line when the session ends.",
    family=FAMILY,
)


@rule
def session_checks(ctx: Context) -> None:
    doc = ctx.document
    starts = [e for e in ctx.events if e.kind == "lifecycle" and e.name == "start"]
    ends = [e for e in ctx.events if e.kind == "lifecycle" and e.name == "end"]
    content = sum(1 for node in doc.lines if not isinstance(node, BlankLine))
    if not starts and content > LONG_SESSION:
        ctx.report("I001", 1, 1, f"{content} non-blank body lines and no @start")
    if starts and not ends:
        ctx.report("I002", starts[0].line, 1, "@start without @end")
