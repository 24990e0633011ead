"""Opening the files a command is given (docs/reference.md#exit-codes); finding them is
:mod:`bbox_lark.discover`.

``-`` means standard input. A missing or unreadable path, or a directory with no matching
files, is an :class:`InputError` (exit 2). A file that is readable but not valid text is
*not* an input error: the parser reports it as findings.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

from bbox_lark.errors import InputError as InputError  # its home is bbox_lark.errors

#: File name endings a directory is searched for (:mod:`bbox_lark.discover`).
SUFFIXES = (".bbox", ".blackbox", ".rlog")


def open_input(item: str) -> IO[bytes]:
    """The binary stream of a file, or standard input for ``-``; :class:`InputError` for a
    path that cannot be read (a folder, a missing or unreadable file)."""
    if item == "-":
        return sys.stdin.buffer
    path = Path(item)
    if path.is_dir():
        raise InputError(f"{item}: no *.bbox, *.blackbox or *.rlog files in this directory")
    if not path.exists():
        raise InputError(f"{item}: no such file or directory")
    try:
        return path.open("rb")
    except OSError as error:
        raise InputError(f"{item}: cannot read: {error.strerror or error}") from None


def read_input(item: str) -> bytes:
    """The bytes of a file, or of standard input for ``-`` (:func:`open_input`'s errors)."""
    stream = open_input(item)
    if stream is sys.stdin.buffer:
        return stream.read()
    try:
        with stream:
            return stream.read()
    except OSError as error:
        raise InputError(f"{item}: cannot read: {error.strerror or error}") from None
