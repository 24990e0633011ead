"""Fixers: small, safe, mechanical repairs of bbox/1 files (``bbox-lark fix``, ``docs/fix.md``).

Each fixer lives in its own module and subclasses :class:`Fixer`; :data:`FIXERS` registers
it under its flag name, and the command line builds one ``--NAME`` flag per entry. The
shared machinery (edits, notes, the diff) is in
:mod:`bbox_lark.fix.framework`.

>>> from bbox_lark.fix import FIXERS, apply_fixes
>>> outcome = apply_fixes("a: one step=5\\n# metrics step=5 cost=1\\n", [FIXERS["renumber-steps"]])
>>> outcome.new_text, outcome.changes
('a: one step=1\\n# metrics step=1 cost=1\\n', {'renumber-steps': 2})

May import :mod:`bbox_lark.syntax`, :mod:`bbox_lark.files`, :mod:`bbox_lark.secrets`,
:mod:`bbox_lark.checks` and :mod:`bbox_lark.api` (``tools/layers.py``); ``fix.rewrite`` is what
``fmt`` and ``fix`` do over files.
"""

from __future__ import annotations

from bbox_lark.fix.apply import apply_fixes
from bbox_lark.fix.arrows import Arrows
from bbox_lark.fix.framework import (
    Edit,
    Fixer,
    FixError,
    FixOutcome,
    FixResult,
    LineFixer,
    Note,
    TextFixer,
    apply_edits,
    unified_diff,
)
from bbox_lark.fix.redact import Redact
from bbox_lark.fix.renumber_steps import RenumberSteps

#: Every fixer by its flag name, in the order they run (text fixers after the others).
FIXERS: dict[str, Fixer] = {fixer.name: fixer for fixer in (RenumberSteps(), Arrows(), Redact())}

__all__ = [
    "FIXERS",
    "Arrows",
    "Edit",
    "FixError",
    "FixOutcome",
    "FixResult",
    "Fixer",
    "LineFixer",
    "Note",
    "Redact",
    "RenumberSteps",
    "TextFixer",
    "apply_edits",
    "apply_fixes",
    "unified_diff",
]
