"""JSON Lines: one JSON record per physical line of a bbox/1 file (``docs/formats/jsonl.md``,
schema ``docs/schema/bbox-jsonl.schema.json``).

The **full** style (the default) is lossless: the first record is the header (byte order
mark, the header's lines with their source text and line endings, its key → value map,
its faults), then one record per body line, continuation and blank lines included, each
with its values (kind, name, fields, typed values, arguments, result, metrics) *and* its
``source`` text and line ending. Reading a record that has ``source`` reads that text (line
by line, as :func:`bbox_lark.iter_nodes` does), so ``bbox → jsonl → bbox`` is byte for byte
the input; a record without ``source`` (written by hand or by a data tool) is built from its
values with the node builders (``build.call`` …) and reported as synthesized text.

Invalid UTF-8 (decoded with ``surrogateescape``, docs/reference.md#api-values) becomes lone surrogates
U+DC80–U+DCFF; they are written as JSON escapes (``"\\udcff"``), which keeps the JSONL file
valid UTF-8 and reads back (with Python's ``json``) to the same string, hence the same bytes.

The **terse** style (``--style terse``) is the spec's "JSONL ALTERNATIVE" (keys ``t c n a r
s m v q``): lossy, and its writer reports what it drops.

Both directions stream: the reader yields a node per record as it reads, the writer writes
a record per node as it gets it.

The pieces: :mod:`.tables` (names, keys, the mapping tables), :mod:`.writer` (both styles),
:mod:`.reader` (records to nodes, with their places) and :mod:`.nodes` (nodes built from a
record's values).
"""

from __future__ import annotations

import json

from bbox_lark.convert.base import REPO_SHA, Format, Option
from bbox_lark.convert.jsonl.nodes import build_record
from bbox_lark.convert.jsonl.reader import read
from bbox_lark.convert.jsonl.tables import (
    EOLS,
    EXPORT_MAPPING,
    EXTENSION,
    IMPORT_MAPPING,
    MARKER,
    RECORD_VERSION,
    STYLES,
    TERSE_KEYS,
    RecordError,
)
from bbox_lark.convert.jsonl.writer import TerseWriter, dump, header_record, line_record, write
from bbox_lark.syntax.source import BOM

__all__ = [
    "EOLS",
    "EXPORT_MAPPING",
    "EXTENSION",
    "FORMAT",
    "IMPORT_MAPPING",
    "MARKER",
    "RECORD_VERSION",
    "STYLES",
    "TERSE_KEYS",
    "RecordError",
    "TerseWriter",
    "build_record",
    "dump",
    "header_record",
    "line_record",
    "read",
    "sniff",
    "write",
]

# -- the format ------------------------------------------------------------------------


def sniff(text: str) -> int:
    """10 when the first line is this format's header record (``{"record": "header",
    "bbox": "1", …}``), else 0: other JSON Lines files (Claude Code sessions, the terse
    style without its header) are never claimed."""
    first = text.removeprefix(BOM).lstrip(" \t\r\n").split("\n", 1)[0]
    if first.startswith(MARKER):
        return 10
    if not first.startswith("{"):
        return 0
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        return 0
    if isinstance(value, dict) and value.get("record") == "header" and value.get("bbox") == RECORD_VERSION:
        return 10
    return 0


_STYLE_HELP = (
    "jsonl: full (lossless, one record per line with its source) or terse (the spec's"
    " JSONL ALTERNATIVE: lossy, reports what it drops)."
)


FORMAT = Format(
    name="jsonl",
    description="JSON Lines: a record per line, lossless (docs/formats/jsonl.md); --style terse: the spec's",
    extensions=(EXTENSION,),
    sniff=sniff,
    read=read,
    write=write,
    fidelity=(
        "lossless: byte for byte (every record carries its line's source); --style terse is the"
        " spec's JSONL ALTERNATIVE, lossy, and reports what it drops"
    ),
    lossless=True,
    options=(
        Option("style", _STYLE_HELP, default="full", choices=STYLES, applies="read"),
        Option("style", _STYLE_HELP, default="full", choices=STYLES, applies="write"),
        REPO_SHA,
    ),
    export_mapping=EXPORT_MAPPING,
    import_mapping=IMPORT_MAPPING,
    keeps_source=True,
)
