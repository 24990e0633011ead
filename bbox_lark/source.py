"""From bytes or text to physical lines, keeping everything needed to print them back.

Lines end at ``"\\n"``; a ``"\\r"`` right before it belongs to the line ending (CRLF). Any
other character, a lone ``"\\r"`` included, is line content. Bytes are decoded as UTF-8 with
``surrogateescape``, so invalid bytes survive the round trip and are reported where they
stand.
"""

from __future__ import annotations

import re
import unicodedata

from bbox_lark._classes import dataclass
from bbox_lark.ast import SourceFault

#: Default limit on one line's length, in code points (DECISIONS §1).
DEFAULT_MAX_LINE = 1024 * 1024

BOM = "\ufeff"
_SURROGATE = re.compile("[\udc80-\udcff]")


@dataclass(frozen=True, slots=True)
class Source:
    bom: bool
    #: (text without ending, ending) for every physical line.
    lines: list[tuple[str, str]]
    faults: list[SourceFault]


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


def read_source(data: bytes | str, max_line: int = DEFAULT_MAX_LINE) -> Source:
    text = decode(data)
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    lines = split_lines(text)
    faults: list[SourceFault] = []
    for number, (line, _) in enumerate(lines, 1):
        if len(line) > max_line:
            faults.append(
                SourceFault(
                    "E003",
                    number,
                    max_line + 1,
                    f"line is {len(line)} characters long, over the limit of {max_line};"
                    " it is kept verbatim and not parsed",
                )
            )
        if "\x00" in line:
            faults.append(SourceFault("E002", number, line.index("\x00") + 1, "NUL byte"))
        bad = _SURROGATE.search(line)
        if bad is not None:
            byte = ord(bad[0]) - 0xDC00
            faults.append(SourceFault("E001", number, bad.start() + 1, f"invalid UTF-8 byte 0x{byte:02x}"))
    return Source(bom, lines, faults)
