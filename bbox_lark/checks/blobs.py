"""Blob pointers: their shape, and with a blob folder, their content (docs/reference.md#blobs)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from bbox_lark.checks.base import Context, Rule, describe, example, kinds, rule, shorten
from bbox_lark.files.blobs import blob_path
from bbox_lark.syntax.nodes import BlobPointer
from bbox_lark.syntax.record import Record
from bbox_lark.syntax.scan import find_blobs
from bbox_lark.syntax.values import MAX_INT, is_oversized_int

FAMILY = "blobs"

_HEX = re.compile(r"[0-9a-fA-F]*")
_MIME = re.compile(r"[A-Za-z0-9][\w.+-]*/[A-Za-z0-9][\w.+-]*(?:;.*)?")
_FULL = 64
_SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"  # sha256("test")

describe(
    "W006",
    "blob-hash-too-short",
    "warning",
    "A blob pointer's sha256 has fewer than 6 hex digits.",
    "So short a hash cannot even be looked up in a blob store.",
    example("t:read a.rs → @blob sha256=ab12 bytes=4\n"),
    example(f"t:read a.rs → @blob sha256={_SHA} bytes=4\n"),
    fix="Write the blob's full sha256 (64 hex digits).",
    family=FAMILY,
)
describe(
    "I008",
    "blob-hash-abbreviated",
    "info",
    "A blob pointer's sha256 is abbreviated (6 to 63 hex digits).",
    "An abbreviated hash can find a blob but cannot verify its content.",
    example("t:read a.rs → @blob sha256=9f86d081 bytes=4\n"),
    example(f"t:read a.rs → @blob sha256={_SHA} bytes=4\n"),
    fix="Write the blob's full sha256 (64 hex digits) so that it can be verified.",
    family=FAMILY,
)
describe(
    "W016",
    "blob-hash-not-hex",
    "warning",
    "A blob pointer's sha256 is not hexadecimal.",
    "The hash names the blob's file; a placeholder like `ab12cd34...` names nothing.",
    example("t:read a.rs → @blob sha256=ab12cd34... bytes=4\n"),
    example(f"t:read a.rs → @blob sha256={_SHA} bytes=4\n"),
    fix="Write the blob's sha256 in hex digits.",
    family=FAMILY,
)
describe(
    "W017",
    "blob-pointer-malformed",
    "warning",
    "A blob pointer lacks `sha256=` or `bytes=`, or has a non-integer size or a malformed mime type.",
    "Readers need the hash to find the blob and the size to check it.",
    example(f"t:read a.rs → @blob sha256={_SHA} bytes=big\n"),
    example(f"t:read a.rs → @blob sha256={_SHA} bytes=4 mime=text/plain\n"),
    fix="Write the pointer as `@blob sha256=<64 hex digits> bytes=<size> [mime=type/subtype]`.",
    family=FAMILY,
)
describe(
    "E013",
    "blob-missing",
    "error",
    "With blob checking on, a pointed-to blob is not in the blob folder.",
    "The log claims output that nobody can read back.",
    example(f"t:read a.rs → @blob sha256={'0' * 64} bytes=4\n"),
    example(f"t:read a.rs → @blob sha256={_SHA} bytes=4\n"),
    fix="Put the blob in the blob folder as a file named by its sha256, or give the right folder"
    " with `--blobs DIR`.",
    family=FAMILY,
)
describe(
    "E014",
    "blob-mismatch",
    "error",
    "With blob checking on, a blob's content does not match its pointer's sha256 or bytes.",
    "A blob that changed after the session was logged cannot be trusted.",
    example(f"t:read a.rs → @blob sha256={_SHA} bytes=5\n"),
    example(f"t:read a.rs → @blob sha256={_SHA} bytes=4\n"),
    fix="Store the blob the pointer names, or correct the pointer's `sha256=` and `bytes=`.",
    family=FAMILY,
)


def blob_folder(ctx: Context) -> Path | None:
    if ctx.blobs is not None:
        return ctx.blobs
    if ctx.path is not None:
        beside = ctx.path.parent / ".bbox-blobs"
        if beside.is_dir():
            return beside
    return None


@rule
class BlobRule(Rule):
    """Each blob pointer as its line comes."""

    family = FAMILY
    scope = "line"
    sees = kinds("continuation", events=True)  # a blank line holds no pointer

    def __init__(self) -> None:
        self.folder: Path | None = None

    def start(self, ctx: Context) -> None:
        self.folder = blob_folder(ctx)

    def node(self, node: Record, ctx: Context) -> None:
        if "@blob" in node.raw:
            blob_checks(ctx, self.folder, find_blobs(node.raw, node.line))


def blob_checks(ctx: Context, folder: Path | None, blobs: Iterable[BlobPointer]) -> None:
    for blob in blobs:
        line, col = blob.line, blob.col
        sha = blob.sha256
        if sha is None or sha == "":
            ctx.report("W017", line, col, "blob pointer without sha256=")
        elif not _HEX.fullmatch(sha):
            ctx.report("W016", line, col, f"blob sha256 {shorten(sha)!r} is not hexadecimal")
            sha = None
        elif len(sha) < 6:
            ctx.report("W006", line, col, f"blob sha256 {shorten(sha)!r} has fewer than 6 hex digits")
            sha = None
        elif len(sha) < _FULL:
            ctx.report(
                "I008", line, col, f"blob sha256 {shorten(sha)!r} is abbreviated and cannot be verified"
            )
            sha = None
        elif len(sha) > _FULL:
            ctx.report("W017", line, col, f"blob sha256 has {len(sha)} hex digits, more than 64")
            sha = None
        if blob.size is None:
            ctx.report("W017", line, col, "blob pointer without bytes=")
        elif blob.size_int is None:
            problem = f"is over {MAX_INT}" if is_oversized_int(blob.size) else "is not an integer"
            ctx.report("W017", line, col, f"blob bytes={shorten(blob.size)} {problem}")
        if blob.mime is not None and not _MIME.fullmatch(blob.mime):
            ctx.report("W017", line, col, f"blob mime={shorten(blob.mime)} is not type/subtype")
        if folder is None or sha is None:
            continue
        path = blob_path(folder, sha.lower())
        if path is None:
            ctx.report("E013", line, col, f"blob {sha[:12]}… is not in the blob folder")
            continue
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != sha.lower():
            ctx.report("E014", line, col, f"blob {sha[:12]}… content does not match its sha256")
        elif blob.size_int is not None and blob.size_int != len(data):
            ctx.report(
                "E014",
                line,
                col,
                f"blob {sha[:12]}… is {len(data)} bytes, pointer says {shorten(blob.size or '')}",
            )
