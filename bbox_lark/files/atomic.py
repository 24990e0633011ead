"""Atomic file writes: the data goes to a temporary file in the target's directory, is flushed
to disk, then renamed over the target with :func:`os.replace`. An interrupted run leaves
either the old file or the new one, never half of one, and no temporary file behind.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, keeping the mode of an existing file (a new
    file gets the default mode, as :func:`open` would give it). A symbolic link stays a link:
    the file it points to is replaced.

    Raises :class:`OSError` when the file cannot be written; the original file is then left
    untouched and the temporary file is removed.
    """
    target = Path(os.path.realpath(path))  # through a symlink: replace the file, keep the link
    directory = target.parent
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    handle, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temp_name, mode)
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    _fsync_directory(directory)


class AtomicWriter:
    """A file written as a stream and put in place atomically by :meth:`commit` (what
    :func:`write_atomic` does for bytes in memory); :meth:`discard` leaves the target as it
    was. Use as a context manager: leaving it without a commit discards."""

    def __init__(self, path: str | Path) -> None:
        self.target = Path(os.path.realpath(path))
        try:
            self._mode: int | None = stat.S_IMODE(os.stat(self.target).st_mode)
        except FileNotFoundError:
            self._mode = None
        handle, self._temp = tempfile.mkstemp(
            prefix=f".{self.target.name}.", suffix=".tmp", dir=self.target.parent
        )
        self.stream = os.fdopen(handle, "wb")
        self._done = False

    def commit(self) -> None:
        try:
            self.stream.flush()
            os.fsync(self.stream.fileno())
            self.stream.close()
            mode = self._mode
            if mode is None:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.chmod(self._temp, mode)
            os.replace(self._temp, self.target)
        except BaseException:
            self.discard()
            raise
        self._done = True
        _fsync_directory(self.target.parent)

    def discard(self) -> None:
        if self._done:
            return
        self._done = True
        with contextlib.suppress(OSError):
            self.stream.close()
        with contextlib.suppress(OSError):
            os.unlink(self._temp)

    def __enter__(self) -> AtomicWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable where the platform allows it (not on Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
