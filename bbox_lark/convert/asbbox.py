"""Reading any format as bbox (``report``, ``stats``, ``export``, ``query``, ``fmt --check``):
:func:`foreign_format` tells a file ``convert`` reads from a bbox file, and :func:`bbox_file`
hands out a bbox file holding any input (the file itself, or a temporary conversion).

Split from :mod:`bbox_lark.convert.files` (which still answers to both names).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from bbox_lark.files.inputs import is_dir, is_regular, kind_of
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.convert.base import Skipped


def foreign_format(path: str | Path) -> str | None:
    """The format of the file ``path`` when its name or content says it is one that
    ``convert`` reads other than bbox (a Claude Code session, an ATIF trajectory …); None
    for bbox, a file no format recognises, a folder or one that cannot be read (those are
    read as bbox, and reported there)."""
    from bbox_lark.convert import Input, detect_format
    from bbox_lark.convert.atif.lines import session_address

    if session_address(str(path)) is not None:
        return "atif"  # FILE#LINE: a trajectory of an ATIF JSON Lines file
    if kind_of(path) != "file":
        return None  # a folder, standard input, a stream read once (spool it first: inputs.spooled)
    path = Path(path)
    try:
        fmt = detect_format(path, Input(path).head())
    except OSError:
        return None
    return None if fmt in (None, "bbox") else fmt


def _refuse_several_trajectories(path: Path) -> None:
    """A :class:`~bbox_lark.convert.ConvertError` that says how to name one trajectory when
    ``path`` is ATIF JSON Lines of several (a file of one is an ATIF file like any other:
    :func:`bbox_lark.convert.atif.lines.is_lines_file`)."""
    from bbox_lark.convert import ConvertError, Input
    from bbox_lark.convert.atif.lines import is_lines_file, trajectory_lines

    if not is_lines_file(str(path)):
        return
    found = [number for number, _ in trajectory_lines(Input(path))]
    raise ConvertError(
        f"holds {len(found)} ATIF trajectories (one per line): name one as {path}#{found[0]}"
        " (stats, export and query read each)"
    )


@contextlib.contextmanager
def bbox_file(
    source: str | Path | bytes,
    *,
    from_: str | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    on_skipped: Callable[[Skipped], None] | None = None,
) -> Iterator[Path]:
    """A bbox file holding ``source`` (a path, ``-`` for standard input, or the input's
    bytes) in the format ``from_`` (detected as ``convert`` does when None): the file
    itself when it is bbox, else a temporary copy (standard input, bytes) or conversion
    (another format), removed afterwards. ``on_skipped`` is called with each record the
    conversion could not read. Raises :class:`bbox_lark.convert.ConvertError` when the
    format cannot be told or read."""
    from bbox_lark.convert import Input, convert_stream, detect_format, get_format

    given = None if isinstance(source, bytes) else str(source)
    path = Path(given) if given is not None and given != "-" else None
    from bbox_lark.convert.atif.lines import address_input

    addressed = address_input(given) if given is not None and path is not None and not path.exists() else None
    if addressed is None and path is not None and from_ in (None, "atif"):
        _refuse_several_trajectories(path)
    if addressed is not None:
        source_input, path, from_ = addressed, None, from_ or "atif"
    elif isinstance(source, bytes):
        source_input = Input(None, source)
    elif path is None:
        source_input = Input(None)
    else:
        source_input = Input(path)
    if from_ is not None:
        fmt = get_format(from_).name
    elif path is not None and is_dir(path):
        fmt = None  # a folder format: convert_stream tells which
    else:
        fmt = detect_format(path, source_input.head())
    if fmt == "bbox" and path is not None and is_regular(path):
        yield path  # read as often as needed; a stream (a FIFO, <(…)) is copied once below
        return
    handle, temporary = tempfile.mkstemp(suffix=".bbox", prefix="bbox-lark-")
    try:
        with os.fdopen(handle, "wb") as raw:
            if fmt == "bbox":
                for chunk in source_input.chunks():
                    raw.write(chunk)
            else:
                text = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="")
                # Every caller parses the file with every check (the secrets' too): the
                # conversion's own scan would only count them a second time.
                conversion = convert_stream(
                    source_input, text, to="bbox", from_=fmt, max_line=max_line, check=False, scan=False
                )
                text.flush()
                text.detach()
                if on_skipped is not None:
                    for skipped in conversion.skipped:
                        on_skipped(skipped)
        yield Path(temporary)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


__all__ = ["bbox_file", "foreign_format"]
