"""The Lightbox format's names, field lists and mapping tables, as data."""

from __future__ import annotations

import re

from bbox_lark.convert.base import MappingRow
from bbox_lark.convert.lightbox import chain as lightbox
from bbox_lark.syntax.grammar import vocabulary

#: File name ending of a Lightbox events file (``events.jsonl``, ``NAME.events.jsonl``).
EXTENSIONS = (".jsonl",)
#: The statuses of the spec.
STATUSES = ("pending", "complete", "error")
#: Longest one-line JSON (or fields) result; longer output goes on continuation lines.
INLINE_LIMIT = 160
#: The timestamp of calls when neither they, an earlier line nor the header gives one.
EPOCH = "1970-01-01T00:00:00.000+00:00"
#: Header keys whose timestamp calls without one fall back to (after earlier lines' ``ts=``).
HEADER_TIMES = ("extra.lightbox_created_at", "created_at", "started_at", "started", "ts")
#: The ``meta.json`` key where the writer keeps the bbox header (the reference reads only the
#: keys it knows), so that ``bbox → lightbox → bbox`` keeps it.
HEADER_KEY = "bbox_header"
#: The bbox kinds whose tool names carry their prefix in Lightbox (``x:explore``), each with
#: the prefix the grammar gives it.
PREFIXED_KINDS = {
    kind: prefix
    for prefix, kind in vocabulary().prefix_kinds.items()
    if kind in ("subagent", "mcp", "skill", "plan", "question")
}

#: Event fields read into call fields of the same name (strings; integers for the counts).
#: The optional fields that become plain fields of the call line.
PLAIN_FIELDS = ("actor", "originating_actor", "parent_invocation", "chunk_count", "total_bytes")
INTEGER_FIELDS = ("chunk_count", "total_bytes")
#: The typed fields this converter writes itself (one name each: the grammar's vocabulary
#: is not restated).
ID_KEY = "id"
TS_KEY = "ts"
LATENCY_KEY = "latency_ms"
#: Field keys this converter writes itself; an ``input`` entry with one of them goes into
#: ``input=`` JSON so it never reads as one of them.
OWN_FIELDS = frozenset(
    {ID_KEY, TS_KEY, LATENCY_KEY, "ts_end", "retry_of", "session_id", "input", "tool", "error"}
    | set(PLAIN_FIELDS)
)
OWN_PREFIXES = ("content_hashes.", "redacted_bytes.")
#: Every field a Lightbox v1 event may have (the spec's two tables).
KNOWN_EVENT_KEYS = frozenset((*lightbox.REQUIRED_FIELDS, *lightbox.OPTIONAL_FIELDS))
FIELD_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
REDACTED = "[REDACTED]"
SECRET = "secret"
MARKER = re.compile(r"\[redacted:([^\[\]\s]*)\]\Z")
TOOL_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


#: bbox → Lightbox, as ``docs/convert.md`` shows it.
EXPORT_MAPPING = (
    MappingRow(
        "call lines `t:` `x:` `c:` `s:` `p:` `q:` (a call that completes nothing)",
        "an event, `status` complete (error for `[err: …]`); tool `read`, `x:explore`, `c:github.issues`",
    ),
    MappingRow("a start (`t!:`, or a call → `[running]` `[pending]` …)", "a pending event (output null)"),
    MappingRow(
        "its completion (`t:` with the start's id, `o: id=…`)",
        "the resolved event: the start's invocation id and tool; `o:` comes back as `t:`",
    ),
    MappingRow("`id=`", "`invocation_id` (synthesized `inv_NNNNN` when absent or repeated)", "kept"),
    MappingRow(
        "`ts=`",
        "`timestamp_start`; without one: the previous line's `ts=`, else the header's"
        " `created_at`/`started_at`, else 1970-01-01T00:00:00.000+00:00",
        "kept",
        "reported as synthesized",
    ),
    MappingRow(
        "`latency_ms=` / `ts_end=`",
        "`timestamp_end` = `ts` + latency (milliseconds, the start's style); else `timestamp_start`",
    ),
    MappingRow("positional arguments", "`input.args` (a list of strings)"),
    MappingRow(
        "other fields (`step=`, `span=`, `attempt=` … included)",
        "`input` entries, strings (never numbers)",
    ),
    MappingRow("`input=` (JSON)", "its entries merged into `input`"),
    MappingRow(
        "`actor=` `originating_actor=` `parent_invocation=` `retry_of=` `chunk_count=` `total_bytes=`",
        "the event fields of those names (counts as integers)",
    ),
    MappingRow("`content_hashes.PATH=`", "`content_hashes[PATH]`"),
    MappingRow(
        "`[redacted:secret]` / `[redacted:KIND]` values",
        '`"[REDACTED]"` / `{"_redacted": true, "_reason": KIND, "_bytes": …}`',
    ),
    MappingRow("a fields result (`→ a=1 b=x`)", '`output` `{"a": "1", "b": "x"}`'),
    MappingRow("a JSON object result, or continuation lines holding one", "that object as `output`"),
    MappingRow(
        "any other result and continuation lines",
        '`output` `{"result": "[186 lines]", "text": "line 1\\nline 2"}`',
    ),
    MappingRow("`[err: MSG]`", '`status` error, `error` `{"message": MSG}` (or `error=` JSON)'),
    MappingRow(
        "the header",
        "`id` → `session_id`; the whole header in `meta.json` (`bbox_header`, which the reference ignores)",
        "extra",
    ),
    MappingRow(
        "a call's `# metrics …` (tokens, cost), a field key repeated on a line (the first is written),"
        " an error's `error=` that is no JSON object",
        "nothing: Lightbox has no place for them",
        "dropped",
        "counted in the report",
    ),
    MappingRow(
        "messages, thinking, todos, comments, lifecycle, `m:` `r:` `t~:` lines, unknown lines",
        "nothing: Lightbox has no place for them",
        "dropped",
        "counted per kind in the report",
    ),
)

#: Lightbox → bbox, as ``docs/convert.md`` shows it.
IMPORT_MAPPING = (
    MappingRow("an event, `status` complete", "`t:TOOL id=INV ts=START latency_ms=N … → RESULT`"),
    MappingRow("`status` pending", "`t!:TOOL id=INV … → [running]` (a start)"),
    MappingRow("its resolved event", "`t:TOOL id=INV …`, the start's completion (same id)"),
    MappingRow(
        "`status` error, `error.message`", "`→ [err: MESSAGE]` (a richer error also as `error=` JSON)"
    ),
    MappingRow("tool `x:NAME` `c:S.M` `s:` `p:` `q:`", "that kind of line (as the writer names them)"),
    MappingRow(
        "`timestamp_end`",
        "`latency_ms=` when it gives the end back exactly, else `ts_end=`",
    ),
    MappingRow("`input.args` (strings)", "positional arguments"),
    MappingRow(
        "other `input` entries: strings, integers, booleans, null, lists of strings",
        "fields (`key=value`; the JSON type is not kept)",
    ),
    MappingRow(
        "nested `input` values, keys that cannot be field keys or that the converter writes",
        "one `input=` field holding their JSON",
        "extra",
    ),
    MappingRow(
        '`output` `{"result": …, "text": …}`',
        "that result and continuation lines (what the writer makes of a bbox result)",
    ),
    MappingRow("`output`, a flat object", 'a fields result (`→ humidity=65 conditions="Partly cloudy"`)'),
    MappingRow("any other `output`", "its JSON: the result when short, else continuation lines"),
    MappingRow(
        "redacted values and `content_hashes`", "`[redacted:KIND]` markers, `content_hashes.PATH=` fields"
    ),
    MappingRow("`retry_of`", "`retry_of=INV attempt=N`", "kept", "`attempt=` synthesized"),
    MappingRow(
        "`actor` `originating_actor` `parent_invocation` `chunk_count` `total_bytes`",
        "fields of those names",
    ),
    MappingRow("`session_id`", "header `id` (`session_id=` on an event of another session)"),
    MappingRow(
        "`meta.json` `created_at`, `lightbox_version`",
        "header `extra.lightbox_created_at`, `extra.lightbox_version`;"
        " the saved `bbox_header`, when there is one",
    ),
    MappingRow(
        "`prev_hash`, `hash`", "verified, not written", "dropped", "a broken chain is reported (exit 1)"
    ),
    MappingRow("event fields unknown to Lightbox v1", "nothing", "dropped", "reported"),
    MappingRow(
        "a line that is not an event; an unknown `status`", "skipped with its line (exit 1)", "dropped"
    ),
)
