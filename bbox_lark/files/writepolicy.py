"""When ``fmt``, ``fix`` and ``convert`` refuse to write a file (docs/reference.md#write-policy): the one
place that decides it, used by all three.

A writing command refuses a file only when it cannot be read faithfully: the errors in
:data:`REFUSING_CODES`. Every other error (an empty ``id:``, a missing ``repo_sha``, a
missing blob, a correlation problem, ...) is shown on standard error and the file is
written all the same: real logs often have them, and their owners still need to format and
convert them. ``--force`` writes even a refused file. Exit code: 0 when written, 1 when
refused.

The errors counted are those ``check`` would report for the file under the same settings:
a code left out by ``select``/``ignore``/``per-file-ignores`` or silenced by a suppression
comment neither refuses a file nor is shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bbox_lark._classes import dataclass
from bbox_lark.files.config import Settings
from bbox_lark.files.said import Said
from bbox_lark.syntax.nodes import Diagnostic

#: The errors that make ``fmt``, ``fix`` and ``convert`` refuse a file, and why.
REFUSING_CODES: dict[str, str] = {
    "E001": "bytes that are not UTF-8 (undecodable or binary text)",
    "E002": "a NUL byte (binary text)",
    "E003": "a line over the length limit (kept verbatim, never parsed)",
    "E006": "header YAML that does not parse",
    "E007": "a header that is not a mapping of keys to values",
    "E008": "YAML anchors or aliases in the header (not loaded)",
    "E009": "a header over the size limit (not loaded)",
    "E012": "an unterminated quoted string in a call part",
    "E015": "a YAML tag in the header (not loaded)",
    "E017": "a header nested too deep (not loaded)",
}


@dataclass(frozen=True, slots=True)
class WriteVerdict:
    """What a writing command does with one file."""

    #: Errors that mean the file cannot be read faithfully.
    refusing: tuple[Diagnostic, ...] = ()
    #: Every other error: shown on standard error, the file is written.
    other: tuple[Diagnostic, ...] = ()
    #: ``--force`` was given.
    force: bool = False

    @property
    def refused(self) -> bool:
        """True when the file must not be written."""
        return bool(self.refusing) and not self.force

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Every error counted, in file order."""
        return tuple(sorted((*self.refusing, *self.other), key=lambda d: (d.line, d.col, d.code)))

    @property
    def exit_code(self) -> int:
        """1 when refused, else 0."""
        return 1 if self.refused else 0

    def said(self, shown: str, what: str = "not written") -> Said:
        """The line for the file ``shown`` when it is refused (``what``: not written, not
        formatted ...), as every writing command says it."""
        return Said(
            f"{shown}: {len(self.refusing)} error(s); {what} (fix them first, or pass --force)", "refused"
        )


def write_verdict(
    diagnostics: Iterable[Diagnostic],
    *,
    settings: Settings | None = None,
    path: str | Path | None = None,
    force: bool = False,
) -> WriteVerdict:
    """The verdict on a file with ``diagnostics`` (its findings, suppressions applied),
    counting only the errors ``settings`` report for ``path``."""
    errors = [
        d
        for d in diagnostics
        if d.severity == "error" and (settings is None or settings.enabled(d.code, path))
    ]
    return WriteVerdict(
        refusing=tuple(d for d in errors if d.code in REFUSING_CODES),
        other=tuple(d for d in errors if d.code not in REFUSING_CODES),
        force=force,
    )
