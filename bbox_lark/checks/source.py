"""Byte-level checks: encoding, NUL bytes, oversized lines, the byte order mark."""

from __future__ import annotations

from bbox_lark.checks.base import CLEAN_HEADER, Context, Rule, describe, example, kinds, rule
from bbox_lark.syntax.nodes import SourceFault

FAMILY = "source"

describe(
    "E001",
    "invalid-utf8",
    "error",
    "A line holds bytes that are not valid UTF-8.",
    "bbox/1 is UTF-8. Invalid bytes are kept (the file still prints back byte for byte) but"
    " no reader can be sure what they meant.",
    example("a: caf\udce9\n"),
    example("a: café\n"),
    fix="Re-encode the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`), and make its writer write UTF-8.",
    family=FAMILY,
)
describe(
    "E002",
    "nul-byte",
    "error",
    "A line holds a NUL byte.",
    "A NUL byte marks a binary file or a corrupted write; text tools stop reading at it.",
    example("a: done\x00\n"),
    example("a: done\n"),
    fix="Remove the NUL bytes; binary output belongs in a blob (`@blob sha256=… bytes=…`).",
    family=FAMILY,
)
describe(
    "E003",
    "line-too-long",
    "error",
    "A line is longer than the limit (1 MiB by default); it is kept verbatim, not parsed.",
    "Huge lines are where writers should have used a blob pointer; reading them would make"
    " every tool slow. Raise the limit with --max-line if the file is trusted.",
    example("a: " + "x" * (1024 * 1024) + "\n"),
    example("t:read big.log → @blob sha256=" + "ab" * 32 + " bytes=1048576\n"),
    fix="Move the content into a blob (`@blob sha256=… bytes=…`), or raise the limit with"
    " `--max-line N` if the file is trusted.",
    family=FAMILY,
)
describe(
    "I005",
    "byte-order-mark",
    "info",
    "The file starts with a UTF-8 byte order mark.",
    "A BOM is tolerated and preserved, but some line-based tools see it as part of the first line.",
    "\ufeff" + CLEAN_HEADER,
    CLEAN_HEADER,
    family=FAMILY,
)


@rule
class SourceRule(Rule):
    """Byte-level faults, as the reader finds them, and the byte order mark."""

    family = FAMILY
    scope = "line"
    sees = kinds()  # byte-level faults (:meth:`fault`) and the header

    def start(self, ctx: Context) -> None:
        if ctx.head.bom:
            ctx.report("I005", 1, 1, "byte order mark at the start of the file")

    def fault(self, fault: SourceFault, ctx: Context) -> None:
        ctx.report(fault.code, fault.line, fault.col, fault.message)
