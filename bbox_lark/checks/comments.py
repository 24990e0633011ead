"""Structured comment checks: elapsed time (docs/reference.md#comments-and-lifecycle)."""

from __future__ import annotations

from bbox_lark.checks.base import Context, Rule, describe, example, kinds, rule, shorten
from bbox_lark.syntax.record import Record
from bbox_lark.syntax.values import MAX_INT, is_oversized_int, parse_elapsed

FAMILY = "comments"

describe(
    "W019",
    "malformed-elapsed",
    "warning",
    "An elapsed-time comment is not `# t=HH:MM:SS`.",
    "Elapsed marks are how people scan a long session; a malformed one cannot be ordered.",
    example("# t=5m\na: hello\n"),
    example("# t=00:05:00\na: hello\n"),
    fix="Write the mark as `# t=HH:MM:SS`.",
    family=FAMILY,
)
describe(
    "W020",
    "elapsed-decreasing",
    "warning",
    "An elapsed-time comment is earlier than the previous `# t=` mark.",
    "Elapsed time only grows within a session; going back means reordered or merged logs."
    " Each mark is compared with the previous one, so a session that resets"
    " its clock warns once, at the reset, not on every later mark.",
    example("# t=00:10:00\na: hello\n# t=00:05:00\n"),
    example("# t=00:05:00\na: hello\n# t=00:10:00\n"),
    fix="Keep marks in order; a session whose clock restarted warns once here and can ignore it.",
    family=FAMILY,
)


@rule
class ElapsedRule(Rule):
    """``# elapsed`` marks: each against the previous one."""

    family = FAMILY
    sees = kinds("comment")

    def wants(self, node: Record) -> bool:
        return node.kind == "comment" and node.name == "elapsed"

    def __init__(self) -> None:
        self.last: int | None = None
        self.last_value = ""

    def node(self, event: Record, ctx: Context) -> None:
        if event.name != "elapsed":
            return
        value = event.text[2:].split(None, 1)[0] if len(event.text) > 2 else ""
        col = event.text_col + 2
        seconds = parse_elapsed(value)
        if seconds is None:
            hours = value.split(":", 1)[0]
            problem = f"has more hours than {MAX_INT}" if is_oversized_int(hours) else "is not HH:MM:SS"
            ctx.report("W019", event.line, col, f"elapsed time {shorten(value)!r} {problem}")
            return
        last = self.last
        if last is not None and seconds < last:
            message = (
                f"elapsed time {shorten(value)} is earlier than the previous mark, {shorten(self.last_value)}"
            )
            ctx.report("W020", event.line, col, message)
        self.last, self.last_value = seconds, value
