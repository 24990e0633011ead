"""Redaction markers and the stated redaction count (DECISIONS §4, §9)."""

from __future__ import annotations

from collections.abc import Iterator

from bbox_lark.ast import Document, Event, Redaction
from bbox_lark.checks import Context, describe, example, rule, shorten
from bbox_lark.scan import find_redactions
from bbox_lark.values import parse_int

FAMILY = "redactions"

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


def _states_count(node: object) -> bool:
    return (
        isinstance(node, Event)
        and node.kind == "comment"
        and node.name in ("redactions", "summary")
        and "redactions" in node.fields
    )


def iter_redactions(document: Document) -> Iterator[Redaction]:
    """Every marker on every body line except the comments that state the count."""
    for node in document.lines:
        if "[redacted:" in node.raw and not _states_count(node):
            yield from find_redactions(node.raw, node.line)


@rule
def redaction_checks(ctx: Context) -> None:
    count = sum(1 for _ in iter_redactions(ctx.document))
    for event in ctx.events:
        if not _states_count(event):
            continue
        node = next(n for n in event.field_nodes if n.key == "redactions")
        stated = parse_int(node.value)
        if stated != count:
            ctx.report(
                "W018",
                event.line,
                node.value_col,
                f"redactions={shorten(node.raw_value)} but the body has {count} marker(s)",
            )
