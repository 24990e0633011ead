"""``fix --renumber-steps``: steps become 1..N, and step references follow (docs/reference.md#steps).

Rules (``docs/fix.md`` shows them with examples):

* **Which steps.** A line's step is its first ``step=`` field, as for ``Event.step`` and the
  step checks (W004, I007): on event and lifecycle lines, before or after the result arrow.
  Comments, unknown lines, continuation lines (opaque) and the header have no steps.
* **The new numbers.** The distinct values are dense-ranked in order of first appearance:
  ``5, 5, 9, 7`` becomes ``1, 1, 2, 3``. Equal steps stay equal; values are compared as
  integers (``step=05`` and ``step=5`` are one step).
* **References follow by value.** Every other ``step=`` that is a plain integer is remapped
  through the same map, so it keeps pointing at the same event: a second ``step=`` on the
  same line, ``# metrics step=N`` and ``# anchor step=N`` comment lines, and a trailing
  `` # metrics step=N`` on an event line. A value no event has as its step is left
  unchanged and noted (the note says so when an event now carries that number).
* **Left alone, and noted.** A quoted value (``step="3"``: the writer quoted it, and quoted
  text is never edited) and a value that is not a non-negative integer (``step=abc``). Such
  a line's step takes no part in the ranking.
* **Never touched.** Any other key (``max_step=``, ``steps=``), ``step=`` inside quoted text
  (``"step=3"``, ``note="at step=3"``), other comments (``# step=3``, ``# notes: ...``).

The count is the number of ``step=`` values whose text changes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator

from bbox_lark.fix.framework import Edit, FixResult, LineFixer, Note, plural
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Comment, Event, Field, Unknown
from bbox_lark.syntax.values import parse_int


def _has_steps(event: Event) -> bool:
    """Event and lifecycle lines carry steps; comments and unknown lines do not."""
    return not isinstance(event, (Comment, Unknown))


def _steps(nodes: tuple[Field, ...]) -> Iterator[Field]:
    return (node for node in nodes if node.key == "step")


def _plain(node: Field) -> int | None:
    """The step value when it can be renumbered: unquoted and a non-negative integer."""
    return None if node.quoted else parse_int(node.value)


class RenumberSteps(LineFixer):
    name = "renumber-steps"
    description = (
        "Renumber step= on events to 1..N (distinct values dense-ranked in order of first"
        " appearance) and remap # metrics / # anchor step= references to match."
    )

    def summary(self, changed: int) -> str:
        return f"Renumbered {plural(changed, 'step reference')}"

    surveys = True

    def survey(self, events: Iterable[Event]) -> dict[int, int]:
        return self.ranking(events)

    def edit(self, event: Event, survey: object) -> FixResult:
        mapping: dict[int, int] = survey  # type: ignore[assignment]
        edits: list[Edit] = []
        notes: list[Note] = []

        def note(node: Field, why: str) -> None:
            message = f"step={node.raw_value} {why}; left unchanged"
            value = parse_int(node.value)
            # The new numbers are 1..N: a dangling 3 would silently name the event now numbered 3.
            if value is not None and 1 <= value <= len(mapping):
                message += f", but an event is now numbered {value}"
            # One string per distinct message: a log may hold a dangling reference a line.
            notes.append(Note(event.line, node.value_col, sys.intern(message)))

        def remap(node: Field) -> None:
            if node.quoted:
                note(node, "is quoted")
                return
            value = parse_int(node.value)
            if value is None:
                note(node, "is not a non-negative integer")
            elif value not in mapping:
                note(node, "refers to a step no event has")
            elif str(mapping[value]) != node.raw_value:
                end = node.value_col + len(node.raw_value)
                edits.append(Edit(event.line, node.value_col, end, str(mapping[value])))

        if isinstance(event, Comment):
            if event.name in vocabulary().step_reference_comments:
                for node in _steps(event.field_nodes):
                    remap(node)
        elif _has_steps(event):
            for node in _steps(event.field_nodes):
                remap(node)
            for node in _steps(event.metric_nodes):
                remap(node)
        if not edits and not notes:
            return _NOTHING
        return FixResult(tuple(edits), len(edits), tuple(notes))

    @staticmethod
    def ranking(events: Iterable[Event]) -> dict[int, int]:
        """Old step value to new: the distinct line steps dense-ranked in order of first
        appearance (only plain values take part)."""
        mapping: dict[int, int] = {}
        for event in events:
            if not _has_steps(event):
                continue
            first = next(_steps(event.field_nodes), None)
            value = _plain(first) if first is not None else None
            if value is not None and value not in mapping:
                mapping[value] = len(mapping) + 1
        return mapping


_NOTHING = FixResult()
