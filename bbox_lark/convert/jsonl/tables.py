"""The JSON Lines format's names, record keys and mapping tables, as data."""

from __future__ import annotations

from bbox_lark.convert.base import MappingRow

#: The version of the record shape (the header record's ``"bbox"``).
RECORD_VERSION = "1"
#: File name ending of a JSON Lines file.
EXTENSION = ".jsonl"
#: The line endings a record's ``eol`` may hold.
EOLS = ("\n", "\r\n", "")
STYLES = ("full", "terse")
#: The start of every header record this format writes (what the sniffer looks for first).
MARKER = '{"record":"header","bbox":"' + RECORD_VERSION + '"'


#: Keys of the terse style (bbox-format-full.md "JSONL ALTERNATIVE") plus ``f`` (fields
#: beside positional arguments), this format's addition.
TERSE_KEYS = frozenset({"t", "c", "n", "a", "r", "s", "m", "v", "q", "f", "session"})


class RecordError(ValueError):
    """A record that cannot be read (its line is skipped with this message)."""


EXPORT_MAPPING = (
    MappingRow("byte order mark", 'header record `"bom": true`'),
    MappingRow(
        "header lines (leading blanks, fences, YAML)", "header record `lines`: role, source, eol each"
    ),
    MappingRow("header keys and values", "header record `fields` (source text of each scalar)"),
    MappingRow("header faults (no closing fence …)", "header record `faults`"),
    MappingRow(
        "event line",
        "a record: `kind`, `prefix`, `name`, `text`, `fields`, `typed`, `args`, `arrow`,"
        " `result`, `metrics`, `source`, `eol`",
    ),
    MappingRow("fields after the arrow", "`result.fields`"),
    MappingRow("typed values (step, ts, attempt, latency_ms, level)", "`typed` (numbers, objects)"),
    MappingRow("comment, lifecycle, unknown line", "a record of that `kind`"),
    MappingRow("oversized line", '`"kind": "unknown", "oversized": true` and its `source`'),
    MappingRow("continuation line", '`"kind": "continuation"`, `owner`, `text`, `source`'),
    MappingRow("blank line", '`"kind": "blank"`, `source`'),
    MappingRow("line ending (LF, CRLF, none)", "`eol`"),
    MappingRow("invalid UTF-8 bytes", "lone surrogates, written as `\\udcXX` JSON escapes"),
    MappingRow("--style terse: comment, blank, continuation, unknown lines", "nothing", "dropped"),
    MappingRow("--style terse: metrics, source text, line endings", "nothing", "dropped"),
)

IMPORT_MAPPING = (
    MappingRow("record with `source`", "that line, byte for byte (values are not read)"),
    MappingRow("record without `source`", "a line built from its values (`build.call` …)", "synthesized"),
    MappingRow("header record with `lines`", "those header lines, byte for byte"),
    MappingRow("header record with only `fields`", "a header written from them", "synthesized"),
    MappingRow("`typed` value without its field", "the field, written from the value", "synthesized"),
    MappingRow("terse record", "a line built from `t c n a f r s m v q`", "synthesized"),
    MappingRow("terse input without a header record", "`format`, `id`, `repo_sha: unknown`", "synthesized"),
    MappingRow("malformed JSON, a record of the wrong shape, an unknown kind", "skipped (exit 1)", "dropped"),
)
