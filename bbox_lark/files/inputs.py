"""Opening the files a command is given (docs/reference.md#exit-codes); finding them is
:mod:`bbox_lark.files.discover`.

This module is the one place that asks the operating system about an input path: every
command classifies (:func:`kind_of`, :func:`is_dir`, :func:`exists`), opens
(:func:`open_input`) and reads (:func:`read_input`, :func:`spooled`) its inputs through it.
None of its functions lets an :class:`OSError` out: a name too long, a loop of symbolic
links, a file where a folder is expected, a permission refused, a socket … is an
:class:`InputError` whose message names the path and the reason (exit 2), never an internal
error.

``-`` means standard input. A missing or unreadable path, or a directory with no matching
files, is an :class:`InputError` (exit 2). A file that is readable but not valid text is
*not* an input error: the parser reports it as findings.

Every input is read once. A command that needs two passes over its input, or that sniffs
its format before reading it, takes it through :func:`spooled`: a regular file is used in
place; standard input, a FIFO, a process substitution (``<(…)``, a ``/dev/fd/N`` pipe) or a
character device is copied once to a temporary file, which is read as often as needed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Literal

from bbox_lark.errors import InputError as InputError  # its home is bbox_lark.errors

#: File name endings a directory is searched for (:mod:`bbox_lark.files.discover`).
SUFFIXES = (".bbox", ".blackbox", ".rlog")

Kind = Literal["stdin", "file", "stream", "dir", "missing", "other", "error"]


def reason(error: OSError) -> str:
    """The operating system's reason for ``error``, as a short phrase (``File name too
    long``, ``Too many levels of symbolic links``, ``Permission denied`` …)."""
    return error.strerror or type(error).__name__


def problem(item: str | os.PathLike[str], error: OSError) -> str:
    """The one-line message for an input ``item`` the system refused with ``error``."""
    if isinstance(error, FileNotFoundError):
        return f"{os.fspath(item)}: no such file or directory"
    return f"{os.fspath(item)}: cannot read: {reason(error)}"


def _stat(path: str | os.PathLike[str]) -> os.stat_result | OSError:
    try:
        return os.stat(path)
    except OSError as error:
        return error
    except ValueError as error:  # an embedded NUL character
        return OSError(errno.EINVAL, f"invalid path ({error})")


def kind_of(item: str | os.PathLike[str]) -> Kind:
    """What ``item`` is: ``stdin`` (``-``), ``file`` (a regular file), ``stream`` (read once:
    a FIFO, a process substitution, a character device), ``dir``, ``missing``, ``other``
    (a socket, a block device: not readable as a file) or ``error`` (the system refused to
    say: :func:`why_not` tells why). Never raises."""
    if os.fspath(item) == "-":
        return "stdin"
    found = _stat(item)
    if isinstance(found, OSError):
        return "missing" if isinstance(found, FileNotFoundError) else "error"
    mode = found.st_mode
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return "stream"
    return "other"


def why_not(item: str | os.PathLike[str]) -> str | None:
    """Why ``item`` cannot be opened as an input file (the one-line message, naming the
    path), or None when it can be tried (a file, a stream, standard input; a folder is the
    caller's to judge)."""
    if os.fspath(item) == "-":
        return None
    found = _stat(item)
    if isinstance(found, OSError):
        return problem(item, found)
    if stat.S_ISSOCK(found.st_mode):
        return f"{os.fspath(item)}: cannot read: a socket, not a file"
    if stat.S_ISBLK(found.st_mode):
        return f"{os.fspath(item)}: cannot read: a block device, not a file"
    return None


def is_dir(item: str | os.PathLike[str]) -> bool:
    """True when ``item`` is a folder (``Path.is_dir`` that never raises)."""
    return os.fspath(item) != "-" and kind_of(item) == "dir"


def exists(item: str | os.PathLike[str]) -> bool:
    """True when ``item`` names something (``Path.exists`` that never raises)."""
    return os.fspath(item) == "-" or not isinstance(_stat(item), OSError)


def is_regular(item: str | os.PathLike[str]) -> bool:
    """True when ``item`` is a regular file: one that can be read twice."""
    return kind_of(item) == "file"


def open_input(item: str) -> IO[bytes]:
    """The binary stream of a file, or standard input for ``-``; :class:`InputError` for a
    path that cannot be read (a folder, a missing or unreadable file, a socket …)."""
    if item == "-":
        return sys.stdin.buffer
    if is_dir(item):
        raise InputError(f"{item}: no *.bbox, *.blackbox or *.rlog files in this directory")
    refused = why_not(item)
    if refused is not None:
        raise InputError(refused)
    try:
        return Path(item).open("rb")
    except OSError as error:
        raise InputError(problem(item, error)) from None


def read_input(item: str) -> bytes:
    """The bytes of a file, or of standard input for ``-`` (:func:`open_input`'s errors)."""
    stream = open_input(item)
    try:
        return stream.read()
    except OSError as error:
        raise InputError(problem(item, error)) from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


@contextlib.contextmanager
def reading(item: str) -> Iterator[IO[bytes]]:
    """:func:`open_input` as a context: the stream is closed afterwards (standard input is
    left open), and an operating-system error while it is read is an :class:`InputError`."""
    stream = open_input(item)
    try:
        yield stream
    except OSError as error:
        raise InputError(problem(item, error)) from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


@contextlib.contextmanager
def spooled(item: str) -> Iterator[str]:
    """A path to a regular file holding ``item``'s bytes, for a reader that reads it more
    than once (sniffing its format, two passes): ``item`` itself when it is a regular file
    (or a folder or a path that cannot be read: the reader reports it), else a temporary
    copy made by reading ``item`` once (standard input, a FIFO, ``<(…)``), removed
    afterwards. :class:`InputError` when reading fails."""
    if item != "-" and kind_of(item) != "stream":
        yield item
        return
    source = open_input(item)
    handle, temporary = tempfile.mkstemp(suffix=Path(item).suffix if item != "-" else "", prefix="bbox-lark-")
    try:
        with os.fdopen(handle, "wb") as copy:
            try:
                shutil.copyfileobj(source, copy, 1 << 20)
            except OSError as error:
                raise InputError(problem(item, error)) from None
            finally:
                if source is not sys.stdin.buffer:
                    source.close()
        yield temporary
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
