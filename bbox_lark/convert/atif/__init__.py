"""ATIF, the Agent Trajectory Interchange Format (harbor RFC 0001): one JSON document per
trajectory. The full description, with the decisions where the RFC is silent, is
``docs/formats/atif.md``; the mapping tables in :mod:`.tables` are the ones the docs render.

ATIF is one JSON object, so the writer builds the whole trajectory (placing each line as it
comes) before it writes it, step by step, and the reader loads the whole file. Nothing here
needs the ``atif`` package: the structure is checked by :func:`trajectory_problems` and
:func:`step_problems` (the package's Pydantic models are the judge in the tests only;
:mod:`.schema` says why it is not a JSON Schema).

Two directions, two ways of keeping what the other side cannot hold:

- **bbox → ATIF.** Every body line is mapped the natural way (``u:`` → a user step, ``a:``
  → an agent step, ``th:`` → the next agent step's ``reasoning_content``, calls →
  ``tool_calls``, results → ``observation.results``, ``# metrics step=N`` → that step's
  ``metrics``) *and* recorded, as values, under ``extra.bbox.lines`` of the step it belongs
  to (the header under the root's ``extra.bbox.header``). Reading such a trajectory back
  rebuilds the lines from those records, in their order: ``bbox → ATIF → bbox`` keeps every
  line's kind, name, arguments, fields, result, metrics and continuation lines. (One
  exception, reported in the fidelity report: a string value holding a character as two
  UTF-16 surrogate code units, which only a ``str`` given to the API can hold, comes back as
  the one character they encode, as from any JSON reader; messages, results and comments
  keep them, as written text.)
- **ATIF → bbox.** A trajectory from another producer (no ``extra.bbox``) is mapped to
  natural bbox lines; what bbox has no line for travels in *attachments*: continuation lines
  ``+key JSON`` (a JSON value, continued on ``+ …`` lines) beside ``| text`` lines that hold
  a message or an output line by line. ``ATIF → bbox → ATIF`` gives an equal trajectory.

The pieces: :mod:`.tables` (names and the mapping tables, as data), :mod:`.schema` (the
structure checks), :mod:`.records` (lines as JSON records, attachments), :mod:`.reader`
(ATIF → bbox), :mod:`.writer` (bbox → ATIF steps, one ``place_<kind>`` method per line
kind) and :mod:`.document` (the trajectory's root, totals and embedded subagents).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO, cast

from bbox_lark.convert.atif.document import finish
from bbox_lark.convert.atif.jsontext import pieces, strings
from bbox_lark.convert.atif.reader import read, sniff
from bbox_lark.convert.atif.records import attachment, read_attachments, record, restore, text_lines
from bbox_lark.convert.atif.schema import step_problems, trajectory_problems
from bbox_lark.convert.atif.tables import (
    DEFAULT_VERSION,
    EXPORT_MAPPING,
    EXTRA_KEY,
    IMPORT_MAPPING,
    SCHEMA_HEADER,
    VERSIONS,
)

# The one writer class, under the name the package's write() looks up when it runs.
from bbox_lark.convert.atif.writer import TrajectoryWriter as _Writer
from bbox_lark.convert.base import REPO_SHA, Format, Option, WriteContext, flatten

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item
    from bbox_lark.syntax.parser import Head

__all__ = [
    "DEFAULT_VERSION",
    "EXPORT_MAPPING",
    "EXTRA_KEY",
    "FORMAT",
    "IMPORT_MAPPING",
    "SCHEMA_HEADER",
    "VERSIONS",
    "attachment",
    "read",
    "read_attachments",
    "record",
    "restore",
    "sniff",
    "step_problems",
    "text_lines",
    "trajectory_problems",
    "write",
]


_SURROGATE = re.compile("[\ud800-\udfff]")
#: A high surrogate followed by a low one: a character given as two UTF-16 code units.
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def write(items: Iterable[Item], out: TextIO, ctx: WriteContext) -> None:
    """The stream as one ATIF trajectory: each line is placed as it comes (the nodes are not
    held; the steps are, in a temporary file but the recent ones: :mod:`.steps`), the JSON
    text is written step by step (:mod:`.jsontext`)."""
    stream = iter(flatten(items))
    writer = _Writer(cast("Head", next(stream)), ctx)  # a stream starts with its head
    try:
        for node in stream:
            writer.feed(node)
        _write(writer, out, ctx)
    finally:
        writer.close()


def _write(writer: _Writer, out: TextIO, ctx: WriteContext) -> None:
    trajectory = finish(writer)  # its steps are made as they are read, twice
    pairs, undecodable = 0, False
    for text in strings(trajectory):  # what the text will hold, before a piece of it is written
        if _SURROGATE.search(text) is not None:
            undecodable = True
            pairs += len(_PAIR.findall(text))
    if pairs:
        # A str given to the API may hold an emoji as two UTF-16 code units; in JSON they are
        # one escaped pair, which every JSON reader reads as the one character it encodes.
        ctx.report.dropped("surrogate pairs as two code units (read back as one character)", 0, pairs)
    if undecodable:
        # Bytes that were not UTF-8 in the bbox file (kept as lone surrogates): JSON escapes.
        ctx.report.extra("undecodable bytes (as \\udcXX escapes)", 0)
    # Each step's text is written as it is made (the text is never held whole).
    for piece in pieces(trajectory, ensure_ascii=undecodable, sink=out.write):
        out.write(piece)
    out.write("\n")


def _sniff(text: str) -> int:
    """ATIF JSON Lines (one trajectory per line, :mod:`.lines`), else one trajectory."""
    from bbox_lark.convert.atif.lines import sniff_lines

    return sniff_lines(text) or sniff(text)


FORMAT = Format(
    name="atif",
    description="ATIF trajectory JSON (harbor RFC 0001, v1.7/v1.8), or ATIF JSON Lines; docs/formats/atif.md",
    extensions=(".json",),
    sniff=_sniff,
    read=read,
    write=write,
    fidelity=(
        "bbox → ATIF → bbox keeps every line's kind, name, arguments, fields, result and"
        " metrics (records in extra.bbox); ATIF → bbox → ATIF gives an equal trajectory"
    ),
    lossless=False,
    options=(
        Option(
            "atif_version",
            "atif output: the schema_version to write (default: the source's v1.7/v1.8, else 1.8).",
            default=None,
            choices=("1.7", "1.8", *VERSIONS),
        ),
        REPO_SHA,
    ),
    export_mapping=EXPORT_MAPPING,
    import_mapping=IMPORT_MAPPING,
)
