"""The Claude Code format's names, the record and message keys it reads, and its mapping
table, as data."""

from __future__ import annotations

import re

from bbox_lark.convert.base import MappingRow

NAME = "claude-code"
EXTENSIONS = (".jsonl",)
#: Records read before the header is written when the session id or model is still unknown.
LOOKAHEAD = 200
#: How many API message ids and open tool calls the reader remembers.
REMEMBERED = 4096
#: Longest message or result text kept on the event line itself (the rest: continuations).
INLINE = 4096
#: The ``tid=`` of a sidechain record that names no ``agentId``.
SIDECHAIN_TID = "sidechain"
#: Tool names whose calls become subagent lines (``x:``).
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
TODO_TOOL = "TodoWrite"
MCP_PREFIX = "mcp__"

#: Record types with a mapping of their own (others are kept as comments).
RECORD_TYPES = frozenset(
    {"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation", "progress"}
)
#: Record keys every mapping reads (each other key is reported as dropped, by name).
READ_KEYS = frozenset(
    {"type", "timestamp", "sessionId", "cwd", "version", "gitBranch", "slug", "isSidechain", "agentId"}
)
MESSAGE_KEYS = frozenset({"role", "content", "model", "id", "usage", "type"})
#: The usage keys this reader reads.
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
FIELD_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
UNSAFE = re.compile("[\x00\ud800-\udfff]")
NAME_UNSAFE = re.compile(r"[\s→\"]")
DUPLICATE_USAGE = (
    "API usage restated by records of one message id"
    " (counted once: each record's lines carry the largest value of each counter so far)"
)
REPEATED_MESSAGE = "API usage of a message id counted before (its lines carry none)"


#: Record keys a record type's mapping reads, beyond :data:`READ_KEYS`.
HANDLER_KEYS: dict[str, frozenset[str]] = {
    "user": frozenset({"message"}),
    "assistant": frozenset({"message"}),
    "summary": frozenset({"summary", "leafUuid"}),
    "system": frozenset({"subtype", "content", "level", "compactMetadata"}),
    "file-history-snapshot": frozenset({"snapshot", "messageId", "isSnapshotUpdate"}),
    "queue-operation": frozenset({"operation", "content"}),
    "progress": frozenset({"toolUseID", "data"}),
}


IMPORT_MAPPING = (
    MappingRow(
        "`sessionId` (first record)", "header `id`", "kept", "later changes: `# notes: changed session=…`"
    ),
    MappingRow("`cwd`, `gitBranch`, `version`, `slug`", "header `cwd`, `branch`, `client_version`, `slug`"),
    MappingRow("assistant `message.model`", "header `model`; a change: `# model: …`"),
    MappingRow(
        "(none)", "header `agent: claude-code`; `repo_sha: unknown` unless `--repo-sha`", "synthesized"
    ),
    MappingRow("`timestamp`", "`ts=` on each line of the record"),
    MappingRow("`isSidechain: true`", "`tid=<agentId>` (or `tid=sidechain`) on each line"),
    MappingRow("user text", "`u: text`; more lines on continuation lines"),
    MappingRow("assistant `text` block", "`a: text`"),
    MappingRow("`thinking` block", "`th: text`; the signature is dropped", "kept"),
    MappingRow("`redacted_thinking` block", "`th: [redacted:thinking]`", "dropped", "the encrypted data"),
    MappingRow("`tool_use` block", "`t!:Name id=<full id> key=value … → [running]`"),
    MappingRow("`tool_use` of `mcp__server__method`", "`c:server.method id=… → [running]`"),
    MappingRow("`tool_use` of `Task`", "`x:<subagent_type> id=… → [launched]`"),
    MappingRow(
        "`<session>/subagents/agent-<id>.jsonl` beside the log (same `sessionId`)",
        "its records as `tid=<id>` lines before the Task's result, which gets `session_id=<id>"
        " path=<log>`; a log no result names: at the end after `# notes: subagent`",
    ),
    MappingRow("`TodoWrite` input", "`td: [status] content …` after its `t!:TodoWrite` line"),
    MappingRow("tool input keys", "fields; lists and objects as JSON text"),
    MappingRow("tool input keys that cannot be fields", "`extra.input=` (JSON)", "extra"),
    MappingRow("`tool_result` block", "`o: id=<tool_use_id> → [ok] first line`, the rest on continuations"),
    MappingRow("`tool_result` with `is_error: true`", "`o: id=… → [error] first line`"),
    MappingRow("`toolUseResult.interrupted`", "`interrupted=true` on the `o:` line"),
    MappingRow(
        "`message.usage`",
        "`tokens_in=` (input + cache creation) `tokens_out=` `tokens_cached=` (cache reads) on the"
        " message's lines (after the arrow on call lines)",
    ),
    MappingRow(
        "usage restated by the records of one message id",
        "each counter's largest value so far on each record's lines: one response, counted once",
        "kept",
        "reported",
    ),
    MappingRow("(end of log)", "`# tokens_in=… tokens_out=… tokens_cached=…`", "synthesized"),
    MappingRow("`summary` record", "`# notes: summary leaf=<leafUuid>` + its text"),
    MappingRow("`system` record", "`# notes: system subtype=… level=…` + its content"),
    MappingRow("`system` `compact_boundary`", "`@compact reason=<trigger> tokens_before=<preTokens>`"),
    MappingRow(
        "`file-history-snapshot`", "`# file-snapshot: <messageId> files=<count>`", "kept", "backups dropped"
    ),
    MappingRow("`queue-operation`", '`# queue: <operation> "<content>"`'),
    MappingRow("`progress` of an open tool call", "`t~:Name id=<toolUseID> …`"),
    MappingRow("`progress` of no open tool call", "(nothing)", "dropped"),
    MappingRow("record of an unknown type", "`# claude-code record <type>` + its JSON"),
    MappingRow("image content", "`[image <mime>]`", "dropped", "the image data"),
    MappingRow(
        "`uuid`, `parentUuid`, `requestId`, `toolUseResult`, …", "(nothing)", "dropped", "each key reported"
    ),
    MappingRow("a line that is not a JSON record with a `type`", "(nothing)", "dropped", "skipped: exit 1"),
)
