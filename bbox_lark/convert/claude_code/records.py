"""The record types besides user and assistant messages: summaries, system records, file
snapshots, queue operations, progress."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bbox_lark.convert.claude_code.tables import INLINE
from bbox_lark.convert.claude_code.values import Malformed, as_arg, as_json
from bbox_lark.syntax import build
from bbox_lark.syntax.grammar import vocabulary

if TYPE_CHECKING:
    from bbox_lark.convert.claude_code.reader import ClaudeCodeReader
    from bbox_lark.syntax.nodes import Line


def summary(reader: ClaudeCodeReader, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
    text = record.get("summary")
    if not isinstance(text, str):
        raise Malformed("`summary` is not text")
    pairs: list[tuple[str, str]] = []
    leaf = record.get("leafUuid")
    if isinstance(leaf, str) and leaf:
        pairs.append(("leaf", reader.clean(leaf, number)))
    reader.report.kept("summary records (# notes: summary)", number)
    return [reader.comment("notes: summary", pairs, text, number)]


def system(reader: ClaudeCodeReader, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
    subtype = record.get("subtype")
    content = record.get("content")
    text = content if isinstance(content, str) else ("" if content is None else as_json(content))
    fields = reader.fields(record, number, tid)
    if subtype == "compact_boundary":
        meta = record.get("compactMetadata")
        pairs: list[tuple[str, str]] = []
        if isinstance(meta, dict):
            if isinstance(meta.get("trigger"), str):
                pairs.append(("reason", reader.clean(meta["trigger"], number)))
            if type(meta.get("preTokens")) is int:
                pairs.append(("tokens_before", str(meta["preTokens"])))
        reader.report.kept("compact boundaries (@compact)", number)
        lines = reader.text_lines(text, number)
        return [build.lifecycle("compact", fields=pairs + fields, continuation=reader.continuation(lines))]
    pairs = []
    if isinstance(subtype, str) and subtype:
        pairs.append(("subtype", reader.clean(subtype, number)))
    level = record.get("level")
    if isinstance(level, str) and level:
        pairs.append(
            ("level" if level in vocabulary().levels else "extra.level", reader.clean(level, number))
        )
    reader.report.kept("system records (# notes: system)", number)
    return [reader.comment("notes: system", pairs + fields, text, number)]


def snapshot(reader: ClaudeCodeReader, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
    snapshot = record.get("snapshot")
    if not isinstance(snapshot, dict):
        raise Malformed("`snapshot` is not an object")
    message_id = record.get("messageId", snapshot.get("messageId"))
    head = "file-snapshot:"
    if isinstance(message_id, str) and message_id:
        head += " " + as_arg(reader.clean(message_id, number))
    backups = snapshot.get("trackedFileBackups")
    pairs = [("files", str(len(backups)))] if isinstance(backups, (dict, list)) else []
    if backups:
        reader.report.dropped("file backup details of file-history snapshots (their count is kept)", number)
    if record.get("isSnapshotUpdate") is True:
        pairs.append(("update", "true"))
    ts = snapshot.get("timestamp", record.get("timestamp"))
    pairs += reader.fields({"timestamp": ts}, number, tid)
    reader.report.kept("file-history snapshots (# file-snapshot:)", number)
    return [build.comment(head, fields=pairs)]


def queue(reader: ClaudeCodeReader, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
    operation = record.get("operation")
    if not isinstance(operation, str) or not operation:
        raise Malformed("`operation` is not text")
    head = "queue: " + as_arg(reader.clean(operation, number))
    content = record.get("content")
    text = content if isinstance(content, str) else ("" if content is None else as_json(content))
    lines = reader.text_lines(text, number)
    fields = reader.fields(record, number, tid)
    reader.report.kept("queue operations (# queue:)", number)
    if len(lines) == 1 and len(lines[0]) <= INLINE:
        return [build.comment(head + " " + as_arg(lines[0]), fields=fields)]
    return [build.comment(head, fields=fields, continuation=reader.continuation(lines))]


def progress(reader: ClaudeCodeReader, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
    call = record.get("toolUseID")
    name = reader.open_tools.get(call) if isinstance(call, str) else None
    if name is None:
        reader.report.dropped("progress records of no open tool call", number)
        return []
    data = record.get("data")
    pairs, extra = reader.input_fields(data, number) if isinstance(data, dict) else ([], [])
    reader.report.kept("progress records (t~:)", number)
    fields = [("id", reader.clean(str(call), number)), *pairs, *extra, *reader.fields(record, number, tid)]
    node = build.call("tool_progress", name, fields=fields)
    if len(node.raw) > reader.limit:
        reader.report.dropped("progress data too long for one line", number)
        node = build.call("tool_progress", name, fields=[fields[0], *reader.fields(record, number, tid)])
    return [node]


#: The record types read here, each with its function.
READERS = {
    "summary": summary,
    "system": system,
    "file-history-snapshot": snapshot,
    "queue-operation": queue,
    "progress": progress,
}
