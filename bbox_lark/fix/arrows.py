"""``fix --arrows``: ASCII result arrows ``->`` become ``→`` (docs/reference.md#inside-a-line).

Only the arrows the parser took as the result arrow change (``Event.arrow == "->"``): the
two characters at ``Event.arrow_col`` are replaced by ``→`` and the spacing around them is
kept. An ``->`` that is not a result arrow stays as written: in the free text of ``u a th
td`` lines, inside quotes, in a word (``a->b``), after the real arrow, in comments,
continuation lines and the header. The count is the number of arrows rewritten.
"""

from __future__ import annotations

from bbox_lark.fix.framework import Edit, FixResult, LineFixer, plural
from bbox_lark.syntax.nodes import Event

ASCII_ARROW = "->"
ARROW = "→"


class Arrows(LineFixer):
    name = "arrows"
    description = "Turn ASCII -> result arrows into →, keeping the spacing around them."

    def summary(self, changed: int) -> str:
        return f"Rewrote {plural(changed, 'ASCII arrow')} as {ARROW}"

    def edit(self, event: Event, survey: object) -> FixResult:
        col = event.arrow_col
        if event.arrow != ASCII_ARROW or col is None or event.raw[col - 1 : col + 1] != ASCII_ARROW:
            return NOTHING
        return FixResult((Edit(event.line, col, col + len(ASCII_ARROW), ARROW),), 1)


NOTHING = FixResult()
