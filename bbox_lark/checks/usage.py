"""Numbers a line states but that are not counted (docs/analytics.md#how-each-number-is-made).

* **W027** a usage, model or cost field inside a free-text line's text (``a: Set
  tokens_out=9 in the fixture.``): numbers are read from a free-text line's trailing run of
  fields only (:func:`bbox_lark.numbers.usage.number_fields`), so this one is not counted.
* **W028** a ``# metrics`` whose ``cached`` exceeds its ``prompt``: ``prompt`` includes
  ``cached`` (ATIF's convention), so the uncached input would be negative; the prompt is
  taken as uncached input.
"""

from __future__ import annotations

from bbox_lark.checks.base import Context, Rule, describe, example, kinds, rule, shorten
from bbox_lark.numbers.usage import METRIC_ALIASES, fields_inside_text, read_totals
from bbox_lark.syntax.record import Record

FAMILY = "usage"

describe(
    "W027",
    "number-inside-text",
    "warning",
    "A usage, model or cost field (`tokens_in=`, `tokens_out=`, `tokens_cached=`, `model=`,"
    " `cost=`, `cost_usd=`) stands inside a free-text line's text, with more text after it.",
    "Numbers are read from a `u a th td` line only in its trailing run of fields; a field"
    " followed by more text is most likely prose (`Set tokens_out=999999 in the fixture.`), so"
    " it is not counted. A number inside text is not counted; quote it or move it to the end.",
    example("a: Set tokens_out=999999 in the fixture, then run it.\n"),
    example('a: Set "tokens_out=999999" in the fixture, then run it. tokens_out=12\n'),
    fix='Quote the text (`"tokens_out=9"`) when it is prose; move the field to the end of the'
    " line when it is the line's usage.",
    family=FAMILY,
)
describe(
    "W028",
    "cached-over-prompt",
    "warning",
    "A `# metrics` states more cached tokens than prompt tokens.",
    "`# metrics` follow ATIF: `prompt_tokens` include `cached_tokens`, so the uncached input is"
    " their difference; a larger `cached` cannot be. The prompt is then taken as uncached input"
    " (the writer most likely wrote it without the cache reads).",
    example("a: done step=1\n# metrics step=1 prompt_tokens=10 cached_tokens=900\n"),
    example("a: done step=1\n# metrics step=1 prompt_tokens=910 cached_tokens=900\n"),
    fix="Write `prompt_tokens` including the cached tokens (ATIF's convention).",
    family=FAMILY,
)

_CACHED = frozenset(key for key, quantity in METRIC_ALIASES.items() if quantity == "cached")


@rule
class NumberFieldRule(Rule):
    """W027 on free-text lines, W028 on metrics (trailing or on a ``# metrics`` line)."""

    codes = frozenset({"W027", "W028"})
    family = FAMILY
    scope = "line"
    sees = kinds(events=True, but=["unknown"])

    def node(self, event: Record, ctx: Context) -> None:
        for node in fields_inside_text(event):
            ctx.report(
                "W027",
                event.line,
                node.col,
                f"`{shorten(node.key)}=` inside text is not counted; quote it or move it to the end",
            )
        metrics = event.metrics
        if metrics and not _CACHED.isdisjoint(metrics):
            totals = read_totals(metrics)
            if totals.cached_over_prompt:
                node = next(n for n in event.metric_nodes if n.key in _CACHED)
                ctx.report(
                    "W028",
                    event.line,
                    node.col,
                    f"cached tokens ({totals.cached:,}) exceed the prompt ({totals.prompt:,});"
                    " the prompt is taken as uncached input",
                )
