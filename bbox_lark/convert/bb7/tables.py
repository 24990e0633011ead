"""BB-7's names, versions, the chat, message and part keys it reads, and the mapping table, as
data."""

from __future__ import annotations

from bbox_lark.convert.base import MappingRow

#: The chat versions BB-7 has written: 0 and 1 hold legacy ``content``, 2 is parts only.
VERSIONS = (0, 1, 2)
#: BB-7's current chat version (what a v0/v1 chat is migrated to).
CURRENT_VERSION = 2
#: Message roles BB-7 writes, and the line kind of a message's text.
ROLE_KINDS = {"user": "user", "assistant": "agent"}
#: Part types of ``bb7-spec.md`` (``chat.json``), each with the construct its report row names.
PART_TYPES = ("text", "thinking", "code", "file", "context_event", "raw")
#: Context-event actions: the tool name of each (``t:<name>``) and who did it. The list is the
#: spec's plus ``UserPartialApplyFile``, which BB-7 writes too (``internal/state/types.go``).
ACTIONS: dict[str, tuple[str, str]] = {
    "AssistantWriteFile": ("write", "assistant"),
    "UserWriteFile": ("update-file", "user"),
    "UserApplyFile": ("apply", "user"),
    "UserPartialApplyFile": ("partial-apply", "user"),
    "UserSaveAs": ("save-as", "user"),
    "UserRejectOutput": ("reject-output", "user"),
    "UserSetReadOnly": ("set-readonly", "user"),
    "UserAddFile": ("add-file", "user"),
    "UserAddSection": ("add-section", "user"),
    "UserRemoveFile": ("remove-file", "user"),
    "UserRemoveSection": ("remove-section", "user"),
}
#: Context-event actions written as ``# notes: fork-warning …`` comments, with their issue.
FORK_WARNINGS = {"ForkWarningModified": "modified", "ForkWarningDeleted": "deleted"}
#: Known keys of the chat object, of a message, of a part, of a context file reference.
CHAT_KEYS = frozenset(
    {
        "version",
        "id",
        "name",
        "created",
        "model",
        "reasoning_effort",
        "global",
        "draft",
        "context_files",
        "messages",
    }
)
MESSAGE_KEYS = frozenset(
    {
        "role",
        "model",
        "parts",
        "content",
        "timestamp",
        "output_files",
        "usage",
        "reasoning_effort",
        "context_snapshot",
    }
)
PART_KEYS = frozenset(
    {
        "type",
        "content",
        "language",
        "path",
        "added",
        "action",
        "readonly",
        "external",
        "version",
        "prev_version",
        "original_path",
        "start_line",
        "end_line",
    }
)
#: ``usage`` keys and their ``# metrics`` names (``duration`` is seconds, written in ms).
USAGE_METRICS = {
    "prompt_tokens": "prompt_tokens",
    "completion_tokens": "completion_tokens",
    "cached_tokens": "cached_tokens",
    "total_tokens": "total_tokens",
    "cost": "cost_usd",
    "duration": "latency_ms",
}
#: A chat name longer than this is cut in the header (which stays small, docs/reference.md#importers).
TITLE_LIMIT = 200
#: Text lines longer than this are broken (a bbox line over the limit is an error, E003).
LINE_LIMIT = 100_000
#: Go's zero time: BB-7 writes it for a message without a timestamp.
ZERO_TIME = "0001-01-01T00:00:00Z"


#: BB-7 → bbox, as ``docs/formats/bb7.md`` and ``docs/convert.md`` show it.
MAPPING = (
    MappingRow("chat id", "header id", note="synthesized (imported-<uuid>) when absent or empty"),
    MappingRow("(no repo sha in a chat)", "header repo_sha", "synthesized", "unknown, or --repo-sha"),
    MappingRow("chat model", "header model"),
    MappingRow("chat name", "header extra.title", note=f"cut at {TITLE_LIMIT} characters"),
    MappingRow("chat created", "header extra.created"),
    MappingRow("chat version", "header extra.bb7_version", note="the version read, before migration"),
    MappingRow("chat reasoning_effort / global", "header extra.reasoning_effort / extra.global"),
    MappingRow("legacy message content (v0/v1)", "one text part", note="as BB-7 migrates it"),
    MappingRow("user text part", "u: (more lines: continuation lines)"),
    MappingRow("assistant text part", "a: (more lines: continuation lines)"),
    MappingRow("system text part", '@notify "first line" (more lines: continuation lines)'),
    MappingRow("thinking part", "th:"),
    MappingRow("code / raw part", "u:/a: extra.part=code extra.language=…, the text on continuation lines"),
    MappingRow("file part", "t:write PATH extra.part=file"),
    MappingRow("context event AssistantWriteFile", "t:write PATH version=… prev_version=… added=true"),
    MappingRow("context event User* (add, remove, apply …)", "t:add-file PATH … by=user (see docs)"),
    MappingRow("context event ForkWarningModified / Deleted", "# notes: fork-warning modified path=…"),
    MappingRow("message timestamp", "ts= on each line of the message", note="Go's zero time dropped"),
    MappingRow("message model (a switch)", "# model: NAME before the message"),
    MappingRow("user context_snapshot", "# file-snapshot: files=[path:10-50@id, …]"),
    MappingRow("assistant output_files", "output_files=[…] on the message's first line"),
    MappingRow("assistant usage", "inline # metrics (prompt_tokens, cost_usd, latency_ms …)"),
    MappingRow("message reasoning_effort", "extra.reasoning_effort= on the message's first line"),
    MappingRow("chat context_files", "# file-snapshot: context files=[…] readonly=[…] external=[…]"),
    MappingRow("chat draft", "# notes: draft (unsent input), the text on continuation lines"),
    MappingRow("unknown fields, empty parts, trailing whitespace", "—", "dropped", "each reported"),
)
