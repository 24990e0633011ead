"""Finding and reading the files a command is given (DECISIONS §8, §10).

A directory means every ``*.bbox``, ``*.blackbox`` and ``*.rlog`` below it; ``-`` means
standard input. A missing or unreadable path, or a directory with no matching files, is an
:class:`InputError` (exit 2). A file that is readable but not valid text is *not* an input
error: the parser reports it as findings.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: File name endings a directory is searched for.
SUFFIXES = (".bbox", ".blackbox", ".rlog")


class InputError(Exception):
    """A path that cannot be read: the command exits 2."""


def collect_inputs(paths: list[str]) -> list[str]:
    """Expand directories into their bbox files, in a stable order."""
    found: list[str] = []
    for raw in paths:
        if raw == "-":
            found.append(raw)
            continue
        path = Path(raw)
        if path.is_dir():
            matches = sorted(str(p) for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
            if not matches:
                raise InputError(f"{raw}: no *.bbox, *.blackbox or *.rlog files in this directory")
            found.extend(matches)
        elif path.exists():
            found.append(raw)
        else:
            raise InputError(f"{raw}: no such file or directory")
    return found


def read_input(item: str) -> bytes:
    """The bytes of a file, or of standard input for ``-``."""
    if item == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(item).read_bytes()
    except OSError as error:
        raise InputError(f"{item}: cannot read: {error.strerror or error}") from None
