"""From bytes or text to physical lines, keeping everything needed to print them back.

Lines end at ``"\\n"``; a ``"\\r"`` right before it belongs to the line ending (CRLF). Any
other character, a lone ``"\\r"`` included, is line content. Bytes are decoded as UTF-8 with
``surrogateescape``, so invalid bytes survive the round trip and are reported where they
stand.
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import IO

from bbox_lark.syntax.nodes import SourceFault

#: Default limit on one line's length, in code points (docs/reference.md#bytes-and-lines).
DEFAULT_MAX_LINE = 1024 * 1024

BOM = "\ufeff"

#: What can be read: the whole text (``str`` or ``bytes``), a file object (binary, or text
#: opened with ``newline=""``) or any iterable of lines or pieces of text.
Source = str | bytes | IO[str] | IO[bytes] | Iterable[str] | Iterable[bytes]
# The surrogates as regex escapes: mypyc (setup.py) compiles no literal lone surrogate.
_SURROGATE = re.compile("[\\udc80-\\udcff]")


def decode(data: bytes | str) -> str:
    """Text from bytes (UTF-8, invalid bytes kept as lone surrogates) or text as is."""
    if isinstance(data, str):
        return data
    return data.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    """The inverse of :func:`decode`."""
    return text.encode("utf-8", "surrogateescape")


def shown_text(text: str) -> str:
    """``text`` with undecodable input bytes (lone surrogates, from ``surrogateescape``) as
    ``\\xNN``: they cannot be written as UTF-8, and a message, a path shown or a diff's
    label must never crash the output."""
    if text.isprintable() or not any(0xDC80 <= ord(char) <= 0xDCFF for char in text):
        return text
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


def visible(text: str) -> str:
    """``text`` with every invisible or undecodable character as an escape: bytes that are
    not UTF-8 as ``\\xNN``, control and format characters (NUL, BOM, ...) as ``\\xNN`` /
    ``\\uNNNN``. Tabs stay."""
    if text.isprintable():
        return text
    out: list[str] = []
    for char in text:
        point = ord(char)
        if 0xDC80 <= point <= 0xDCFF:  # an undecodable byte (surrogateescape)
            out.append(f"\\x{point - 0xDC00:02x}")
        elif char == "\t" or unicodedata.category(char) not in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            out.append(char)
        elif point < 0x100:
            out.append(f"\\x{point:02x}")
        else:
            out.append(f"\\u{point:04x}")
    return "".join(out)


def split_lines(text: str) -> list[tuple[str, str]]:
    """Physical lines as (text, ending) pairs; ``"".join(t + e ...) == text``."""
    parts = text.split("\n")
    last = parts.pop()
    lines = [(p[:-1], "\r\n") if p.endswith("\r") else (p, "\n") for p in parts]
    if last:
        lines.append((last, ""))
    return lines


def physical_lines(source: Source) -> Iterator[str]:
    """The source's lines as text, each with its ``\n`` (the last one may lack it).

    Bytes are decoded line by line as UTF-8 with ``surrogateescape`` (a line break never
    falls inside a UTF-8 sequence, so this is the same as decoding the whole). Only ``\n``
    ends a line: a text file should be opened with ``newline=""`` or ``newline="\n"`` (or
    in binary), else Python has already turned its CRLFs into ``\n``. The pieces of an
    iterable need not be lines: they are joined and cut at ``\n``."""
    if isinstance(source, bytes):
        source = io.BytesIO(source)
    elif isinstance(source, str):
        source = io.StringIO(source, newline="\n")
    held_bytes: list[bytes] = []
    held_text: list[str] = []
    out: list[str] = []  # a line yields from here (out.pop()): this frame does not hold it
    for chunk in source:
        if isinstance(chunk, bytes):
            if chunk.find(b"\n") == len(chunk) - 1 and not held_bytes:
                out.append(chunk.decode("utf-8", "surrogateescape"))  # a whole line: the usual case
                del chunk  # nor its bytes, while the line is read: a long line is held once
                yield out.pop()
                continue
            *whole, rest = chunk.split(b"\n")
            for piece in whole:
                held_bytes.append(piece)
                yield (b"".join(held_bytes) + b"\n").decode("utf-8", "surrogateescape")
                held_bytes = []
            if rest:
                held_bytes.append(rest)
        else:
            if chunk.find("\n") == len(chunk) - 1 and not held_text:
                yield chunk
                continue
            *parts, tail = chunk.split("\n")
            for part in parts:
                held_text.append(part)
                yield "".join(held_text) + "\n"
                held_text = []
            if tail:
                held_text.append(tail)
    if held_bytes:
        yield b"".join(held_bytes).decode("utf-8", "surrogateescape")
    if held_text:
        yield "".join(held_text)


def byte_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The lines of ``chunks`` joined, each with its ``\\n``. A line yields from a list it
    leaves empty (``out.pop()``), so this frame holds no line while the reader has it."""
    held: list[bytes] = []
    out: list[bytes] = []
    for piece in chunks:
        start = 0
        while True:
            end = piece.find(b"\n", start)
            if end < 0:
                break
            held.append(piece[start : end + 1] if start or end + 1 < len(piece) else piece)
            out.append(held[0] if len(held) == 1 else b"".join(held))
            held.clear()
            yield out.pop()
            start = end + 1
        if start < len(piece):
            held.append(piece[start:] if start else piece)
    if held:
        out.append(b"".join(held))
        held.clear()
        yield out.pop()


class LineReader:
    """Bytes or text to physical lines and their byte-level faults, as the parser reads them
    (:class:`bbox_lark.syntax.parser.NodeStream`): the one place that splits lines, strips a BOM
    and finds invalid UTF-8 (E001), NUL bytes (E002) and lines over the limit (E003).

    :meth:`lines` yields (text without ending, ending, oversized) per line as it is read;
    :attr:`faults` collects each line's faults before the line is yielded."""

    __slots__ = ("bom", "faults", "first_line", "lines_read", "max_line")

    def __init__(self, max_line: int = DEFAULT_MAX_LINE, first_line: int = 1) -> None:
        self.max_line = max_line
        #: The number of the first line read (a part of a body starts later: ``check --jobs``).
        self.first_line = first_line
        self.faults: list[SourceFault] = []
        #: True when line 1 started with a byte order mark (removed from its text).
        self.bom = False
        #: The number of the last line read so far.
        self.lines_read = 0

    def lines(self, source: Source) -> Iterator[tuple[str, str, bool]]:
        """(text, ending, oversized) per physical line, faults recorded as they come."""
        max_line, faults = self.max_line, self.faults
        # No enumerate(): its result tuple would hold the line read (with its ending) while
        # the line without it is parsed, a long line twice; ``chunk`` goes for the same reason.
        number = self.first_line - 1
        for chunk in physical_lines(source):
            number += 1
            if chunk.endswith("\n"):
                if chunk.endswith("\r\n"):
                    raw, eol = chunk[:-2], "\r\n"
                else:
                    raw, eol = chunk[:-1], "\n"
            else:
                raw, eol = chunk, ""
            del chunk
            if number == 1 and raw.startswith(BOM):
                raw = raw[1:]
                self.bom = True
            oversized = len(raw) > max_line
            if oversized:
                faults.append(
                    SourceFault(
                        "E003",
                        number,
                        max_line + 1,
                        f"line is {len(raw)} characters long, over the limit of {max_line};"
                        " it is kept verbatim and not parsed",
                    )
                )
            if "\x00" in raw:
                faults.append(SourceFault("E002", number, raw.index("\x00") + 1, "NUL byte"))
            if _SURROGATE.search(raw) is not None:
                bad = _SURROGATE.search(raw)
                assert bad is not None
                byte = ord(bad[0]) - 0xDC00
                faults.append(
                    SourceFault("E001", number, bad.start() + 1, f"invalid UTF-8 byte 0x{byte:02x}")
                )
            self.lines_read = number
            yield raw, eol, oversized
