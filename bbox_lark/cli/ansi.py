"""Terminal colours: whether to use them, and colouring text and unified diffs.

Colours are plain ANSI SGR sequences (no rich import: ``bbox-lark check`` start-up time
matters). :func:`wants_color` follows the usual conventions: ``NO_COLOR`` (any non-empty
value) turns colours off, ``FORCE_COLOR`` (any non-empty value) turns them on, and otherwise
a stream gets colours when it is a terminal whose ``TERM`` is not ``dumb``.
"""

from __future__ import annotations

import os
import re
from typing import TextIO

RESET = "\x1b[0m"
BOLD = "1"
RED = "31"
GREEN = "32"
YELLOW = "33"
BLUE = "34"
CYAN = "36"

#: The colour of each severity.
SEVERITY_STYLE = {"error": f"{BOLD};{RED}", "warning": YELLOW, "info": CYAN}


def wants_color(stream: TextIO) -> bool:
    """True when text written to ``stream`` should be coloured."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False


def paint(text: str, style: str, enabled: bool = True) -> str:
    """``text`` in ``style`` (SGR parameters such as ``"1;31"``), or as is when disabled."""
    if not enabled or not style or not text:
        return text
    return f"\x1b[{style}m{text}{RESET}"


_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def color_diff(diff: str) -> str:
    """A unified diff with its file headers bold, hunk headers cyan, removed lines red and
    added lines green. Line endings (``\\n``, ``\\r\\n``) and every character of every line
    are kept: only colour sequences are added, around each line's text. Hunk line counts
    are followed, so a removed line that starts with ``--`` is never taken for a header."""
    out: list[str] = []
    old = new = 0  # lines left in the current hunk, per side
    for piece in diff.split("\n"):
        text, cr = (piece[:-1], "\r") if piece.endswith("\r") else (piece, "")
        style = ""
        if text.startswith("\\"):  # "\ No newline at end of file"
            style = BOLD
        elif old > 0 or new > 0:
            first = text[:1]
            if first == "-":
                old, style = old - 1, RED
            elif first == "+":
                new, style = new - 1, GREEN
            else:
                old, new = old - 1, new - 1
        elif (match := _HUNK.match(text)) is not None:
            old = 1 if match[1] is None else int(match[1])
            new = 1 if match[2] is None else int(match[2])
            style = CYAN
        elif text.startswith(("--- ", "+++ ")):
            style = BOLD
        out.append(paint(text, style) + cr)
    return "\n".join(out)
