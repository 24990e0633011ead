"""What a command says beside its output: the lines for standard error, each with its mark.

A workflow of the library (converting, counting, sending, writing pages) decides what is said
about its result and returns it as :class:`Said` lines with the exit code; the command line
only renders them (``bbox_lark.cli.console.say``): the mark picks the colour and the prefix,
the text is never markup. So a message is written once, in the library, and the same words
reach a Python caller.
"""

from __future__ import annotations

from typing import Literal

from bbox_lark._classes import dataclass

#: How a line is shown: ``""`` as it is; ``"!"`` a warning (``! text``), never silenced by
#: ``--quiet``; ``"error"`` a usage or input problem (``error: text``, exit 2); ``"refused"``
#: a red ``✗``; ``"done"`` a green ``✓``; ``"note"`` ``note: text``.
Mark = Literal["", "!", "error", "refused", "done", "note"]


@dataclass(frozen=True, slots=True)
class Said:
    """One line a command says on standard error."""

    #: The words, without the mark (never markup; a path in them is shown as given).
    text: str
    mark: Mark = ""


__all__ = ["Mark", "Said"]
