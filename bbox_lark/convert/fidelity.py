"""The fidelity report every conversion fills in (docs/convert.md): per construct, what a
reader or writer **kept**, what went to an **extra** (a side channel of the target that brings
it back), what it **synthesized** (ids, step numbers, timestamps …) and what it **dropped**,
with counts and the first source lines of each; records it could not read are **skipped**
with their line and why (the command then exits 1, docs/reference.md#importers).
:mod:`bbox_lark.convert.base` (the converter interface) still answers to these names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: What can happen to a construct in a conversion, in the order reports show them.
FATES = ("kept", "extra", "synthesized", "dropped")
#: How many source lines a report row remembers (its count goes on).
LINES_KEPT = 1_000


@dataclass(frozen=True, slots=True)
class ReportEntry:
    """One row of a fidelity report: a construct, what happened to it, how often, where."""

    #: One of :data:`FATES`.
    action: str
    #: The construct, as a plural noun phrase: ``comment lines``, ``id= fields``.
    what: str
    #: Source lines of the first occurrences (at most :data:`LINES_KEPT`); 0 for none.
    lines: tuple[int, ...]
    #: How many times it happened (may exceed ``len(lines)``).
    count: int = -1
    #: The direction it happened in: ``read`` or ``write``.
    stage: str = "write"

    def __post_init__(self) -> None:
        if self.count < 0:
            object.__setattr__(self, "count", len(self.lines))

    def render(self, limit: int = 5) -> str:
        """``dropped comment lines: 9 (lines 14, 29, 32, 35, 36, …)``."""
        where = [n for n in self.lines if n > 0]
        if not where:
            return f"{self.action} {self.what}: {self.count}"
        shown = ", ".join(str(n) for n in where[:limit])
        more = ", …" if self.count > limit else ""
        label = "line" if self.count == 1 else "lines"
        return f"{self.action} {self.what}: {self.count} ({label} {shown}{more})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "fate": self.action,
            "construct": self.what,
            "count": self.count,
            "lines": [n for n in self.lines if n > 0][:20],
            "stage": self.stage,
        }


@dataclass(frozen=True, slots=True)
class Skipped:
    """A source record a reader could not read (or a writer could not write)."""

    line: int
    message: str

    def render(self, shown: str) -> str:
        return f"{shown}:{self.line}: skipped: {self.message}"


class Fidelity:
    """The fidelity report of one conversion (mutable while a converter fills it in).

    Memory is bounded: a row keeps its count and its first :data:`LINES_KEPT` lines."""

    def __init__(self) -> None:
        #: (stage, fate, construct) -> [count, first lines].
        self._rows: dict[tuple[str, str, str], tuple[list[int], list[int]]] = {}
        self.skipped: list[Skipped] = []
        #: ``read`` while the reader runs, ``write`` while the writer does.
        self.stage = "write"
        #: A reader's map from each line of the document it yields to the input line it
        #: came from and the column shift (``document col + shift = input col``); None
        #: means "the same lines and columns".
        self.origin: Callable[[int], tuple[int, int]] | None = None

    # What happened, one call per occurrence (``line`` is a source line; 0 when none).
    def note(self, fate: str, what: str, line: int = 0, count: int = 1) -> None:
        if fate not in FATES:
            raise ValueError(f"unknown fate {fate!r}")
        if self.stage == "write" and self.origin is not None and line > 0:
            line = self.origin(line)[0]
        row = self._rows.get((self.stage, fate, what))
        if row is None:
            row = self._rows[(self.stage, fate, what)] = ([0], [])
        row[0][0] += count
        if len(row[1]) < LINES_KEPT:
            row[1].append(line)

    def kept(self, what: str, line: int = 0, count: int = 1) -> None:
        self.note("kept", what, line, count)

    def extra(self, what: str, line: int = 0, count: int = 1) -> None:
        self.note("extra", what, line, count)

    def synthesized(self, what: str, line: int = 0, count: int = 1) -> None:
        self.note("synthesized", what, line, count)

    def dropped(self, what: str, line: int = 0, count: int = 1) -> None:
        self.note("dropped", what, line, count)

    # The names of the first interface, kept for the compact converter's callers.
    drop = dropped
    synthesize = synthesized

    def skip(self, line: int, message: str) -> None:
        """A record that could not be read; reported with its line, exit code 1. A secret
        the message quotes (the record's bad value) is masked: the record is in no output,
        and its message goes to stderr, the fidelity report and export's tables."""
        from bbox_lark.secrets.scanner import mask_secrets

        self.skipped.append(Skipped(line, mask_secrets(message, fragments=True)))

    def source_line(self, line: int) -> int:
        """The input line a document line came from."""
        return self.origin(line)[0] if self.origin is not None else line

    @property
    def entries(self) -> tuple[ReportEntry, ...]:
        """Every row, the reader's first, each stage's in order of first occurrence."""
        keys = sorted(self._rows, key=lambda k: k[0] != "read")
        return tuple(
            ReportEntry(fate, what, tuple(self._rows[k][1]), self._rows[k][0][0], stage)
            for k in keys
            for stage, fate, what in (k,)
        )

    @property
    def losses(self) -> tuple[ReportEntry, ...]:
        """The rows that say something was dropped or synthesized (what ``convert`` prints
        without ``--report``)."""
        return tuple(e for e in self.entries if e.action in ("dropped", "synthesized"))

    def count(self, fate: str, what: str | None = None) -> int:
        return sum(e.count for e in self.entries if e.action == fate and (what is None or e.what == what))

    def to_dict(self) -> dict[str, Any]:
        return {
            "entries": [e.to_dict() for e in self.entries],
            "skipped": [{"line": s.line, "message": s.message} for s in self.skipped],
            "totals": {fate: self.count(fate) for fate in FATES},
        }

    def render(self, shown: str = "") -> str:
        """The whole report as text, a row per line."""
        prefix = f"{shown}: " if shown else ""
        order = {fate: n for n, fate in enumerate(FATES)}
        entries = sorted(self.entries, key=lambda e: (e.stage != "read", order[e.action]))
        rows = [f"{prefix}{e.stage}: {e.render()}" for e in entries]
        rows.extend(s.render(shown or "<input>") for s in self.skipped)
        return "".join(row + "\n" for row in rows)

    def __bool__(self) -> bool:
        return bool(self._rows or self.skipped)


#: The first interface's name for the report.
Report = Fidelity


__all__ = ["FATES", "LINES_KEPT", "Fidelity", "Report", "ReportEntry", "Skipped"]
