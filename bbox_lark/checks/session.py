"""Session lifecycle checks: `@start` and `@end` (docs/reference.md#checks)."""

from __future__ import annotations

from bbox_lark.checks.base import Context, Rule, describe, example, kinds, rule
from bbox_lark.syntax.record import Record

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
class SessionRule(Rule):
    """Counts non-blank body lines and remembers the first ``@start`` and whether an
    ``@end`` came; reports at the end."""

    family = FAMILY
    scope = "file"
    sees = kinds("continuation", events=True)  # the non-blank lines

    def __init__(self) -> None:
        self.content = 0
        self.first_start: int | None = None
        self.ended = False

    def node(self, node: Record, ctx: Context) -> None:
        self.content += 1
        if node.kind == "lifecycle":
            if node.name == "start":
                if self.first_start is None:
                    self.first_start = node.line
            elif node.name == "end":
                self.ended = True

    def merge(self, part: Rule) -> None:
        assert isinstance(part, SessionRule)
        self.content += part.content
        if self.first_start is None:
            self.first_start = part.first_start
        self.ended = self.ended or part.ended

    def finish(self, ctx: Context) -> None:
        if self.first_start is None and self.content > LONG_SESSION:
            ctx.report("I001", 1, 1, f"{self.content} non-blank body lines and no @start")
        if self.first_start is not None and not self.ended:
            ctx.report("I002", self.first_start, 1, "@start without @end")
