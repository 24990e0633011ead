"""Reading the files a command is given (DECISIONS §8, §10); finding them is
:mod:`bbox_lark.discover`.

``-`` means standard input. A missing or unreadable path, or a directory with no matching
files, is an :class:`InputError` (exit 2). A file that is readable but not valid text is
*not* an input error: the parser reports it as findings.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: File name endings a directory is searched for (also :data:`bbox_lark.discover.SUFFIXES`).
SUFFIXES = (".bbox", ".blackbox", ".rlog")


class InputError(Exception):
    """A path that cannot be read: the command exits 2."""


def collect_inputs(paths: list[str]) -> list[str]:
    """The paths :func:`bbox_lark.discover.discover` finds for ``paths`` (no configuration
    file read), as strings. Kept for callers of the first release; new code uses
    ``discover``, which also gives each input its settings.

    A path that cannot be used (missing, or a directory without bbox files) stays in the
    list: :func:`read_input` reports it, so the other paths are still read and the run
    ends with exit 2 (the highest code wins, DECISIONS §10)."""
    from bbox_lark.config import Resolver
    from bbox_lark.discover import discover

    return [item.path for item in discover(paths, Resolver(isolated=True))]


def read_input(item: str) -> bytes:
    """The bytes of a file, or of standard input for ``-``."""
    if item == "-":
        return sys.stdin.buffer.read()
    path = Path(item)
    if path.is_dir():
        raise InputError(f"{item}: no *.bbox, *.blackbox or *.rlog files in this directory")
    if not path.exists():
        raise InputError(f"{item}: no such file or directory")
    try:
        return path.read_bytes()
    except OSError as error:
        raise InputError(f"{item}: cannot read: {error.strerror or error}") from None
