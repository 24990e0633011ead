"""Redaction markers and the stated redaction count (docs/reference.md#redactions-and-metrics)."""

from __future__ import annotations

from bbox_lark.checks.base import Context, Rule, describe, example, kinds, rule, shorten
from bbox_lark.syntax.nodes import Field
from bbox_lark.syntax.record import Record
from bbox_lark.syntax.scan import find_redactions, iter_redactions, line_redactions, states_redaction_count
from bbox_lark.syntax.values import parse_int

FAMILY = "redactions"

__all__ = ["FAMILY", "RedactionRule", "iter_redactions", "line_redactions"]

describe(
    "W018",
    "redaction-count-mismatch",
    "warning",
    "A `# redactions=N` comment (or `redactions=` in the closing summary) disagrees with the"
    " number of `[redacted:…]` markers.",
    "The count is an audit claim: a mismatch means a secret was redacted without a marker, or"
    " the count is stale.",
    example("t:read .env → API_KEY=[redacted:env_var]\n# redactions=2\n"),
    example("t:read .env → API_KEY=[redacted:env_var]\n# redactions=1\n"),
    fix="Correct the count so that it matches the `[redacted:…]` markers.",
    family=FAMILY,
)


@rule
class RedactionRule(Rule):
    """Counts markers and keeps each comment that states a count (line, column, value);
    compares them at the end."""

    family = FAMILY
    scope = "file"
    sees = kinds("continuation", events=True)  # a blank line holds no marker

    def __init__(self) -> None:
        self.count = 0
        self.stated: list[tuple[int, Field]] = []

    def node(self, node: Record, ctx: Context) -> None:
        # scan.line_redactions on a record (a comment's record holds its node)
        states = node.kind == "comment" and states_redaction_count(node.event())
        if not states and "[redacted:" in node.raw:
            self.count += len(find_redactions(node.raw, node.line))
        if states:
            self.stated.append((node.line, next(n for n in node.field_nodes if n.key == "redactions")))

    def merge(self, part: Rule) -> None:
        assert isinstance(part, RedactionRule)
        self.count += part.count
        self.stated += part.stated

    def finish(self, ctx: Context) -> None:
        count = self.count
        for line, field in self.stated:
            stated = parse_int(field.value)
            if stated != count:
                ctx.report(
                    "W018",
                    line,
                    field.value_col,
                    f"redactions={shorten(field.raw_value)} but the body has {count} marker(s)",
                )
