"""A migrated BB-7 chat as a bbox document stream: the header, each message's parts and context
events as lines, the chat's context files and draft."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from bbox_lark.convert.base import (
    Input,
    ReadContext,
    importer_header,
    json_type,
)
from bbox_lark.convert.bb7.chat import Locator, chat_version, load_chat, migrate_message
from bbox_lark.convert.bb7.tables import (
    ACTIONS,
    CHAT_KEYS,
    FORK_WARNINGS,
    LINE_LIMIT,
    MESSAGE_KEYS,
    PART_KEYS,
    PART_TYPES,
    ROLE_KINDS,
    TITLE_LIMIT,
    USAGE_METRICS,
    ZERO_TIME,
)
from bbox_lark.syntax import build

if TYPE_CHECKING:
    from bbox_lark.convert.base import Fidelity, Item
    from bbox_lark.syntax.nodes import Event

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


# -- building lines ------------------------------------------------------------------------


def _number(value: Any) -> str | None:
    """A JSON number as a plain decimal (no exponent), or None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return None
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _one_line(value: str) -> str:
    """A value for a one-line comment text: whitespace runs (line breaks) as one space."""
    return " ".join(value.split())


class _Builder:
    """Turns one chat into a document stream, filling in the fidelity report."""

    def __init__(self, chat: dict[str, Any], locator: Locator, ctx: ReadContext) -> None:
        self.chat = chat
        self.locator = locator
        self.ctx = ctx
        self.report: Fidelity = ctx.report
        self.model: str | None = None

    # -- text -------------------------------------------------------------------------

    def _text_lines(self, text: str, where: int) -> list[str]:
        """``text``'s lines, trailing whitespace removed (canonical bbox has none), lines
        over :data:`LINE_LIMIT` broken; both reported."""
        lines = []
        for line in _LINE_BREAK.split(text):
            stripped = line.rstrip()
            if stripped != line:
                self.report.dropped("trailing whitespace of text lines", where)
            while len(stripped) > LINE_LIMIT:
                lines.append(stripped[:LINE_LIMIT])
                stripped = stripped[LINE_LIMIT:]
                self.report.synthesized(f"line breaks in text lines over {LINE_LIMIT:,} characters", where)
            lines.append(stripped)
        return lines

    @staticmethod
    def _continuation(lines: list[str]) -> list[Any]:
        """Continuation lines for ``lines``; an empty text line is a blank line, as the
        parser reads the text back (a continuation attaches across blank lines:
        docs/reference.md#continuations)."""
        from bbox_lark.syntax.nodes import Continuation

        return [line if line.strip() else Continuation(0, "", "\n") for line in lines]

    def _message_line(
        self,
        kind: str,
        text: str,
        fields: dict[str, Any],
        metrics: dict[str, str] | None,
        where: int,
        whole: bool = False,
    ) -> Event:
        """A ``u a th`` line (or ``@notify`` for ``kind`` "system") for ``text``: its first
        line on the event line when it reads back as written (and leaves ``fields`` as
        given), else every line on continuation lines. ``whole`` puts all text there."""
        lines = self._text_lines(text, where) if text else []
        while lines and not lines[-1].strip():
            lines.pop()
            self.report.dropped("empty last lines of texts", where)
        first = lines[0] if lines and not whole else ""
        if first and first == first.strip() and len(first) < LINE_LIMIT:
            try:
                if kind == "system":
                    node: Event = build.lifecycle(
                        "notify",
                        [first],
                        fields=fields,
                        metrics=metrics,
                        continuation=self._continuation(lines[1:]),
                    )
                else:
                    node = build.message(
                        kind,
                        first,
                        fields=fields,
                        metrics=metrics,
                        continuation=self._continuation(lines[1:]),
                    )
                # A field at the end of the text (``tokens_out=``, ``ts=``) would read as the
                # line's own, a usage or a time the message never had: the line holds ours alone.
                if dict(node.fields) == {key: _field_text(value) for key, value in fields.items()}:
                    return node
            except ValueError:
                pass
            self.report.note("kept", "text first lines moved to a continuation line", where)
        rest = self._continuation(lines)
        if kind == "system":
            return build.lifecycle("notify", fields=fields, metrics=metrics, continuation=rest)
        return build.message(kind, "", fields=fields, metrics=metrics, continuation=rest)

    # -- the chat -----------------------------------------------------------------------

    def head(self) -> Item:
        chat, report = self.chat, self.report
        fields: dict[str, Any] = {"agent": "bb7"}
        chat_id = _one_line(self._string(chat, "id", "chat", 1))
        if chat_id:
            report.kept("chat ids (header id)", 1)
            if chat_id != chat.get("id"):
                report.dropped("line breaks and runs of whitespace in chat ids (one space each)", 1)
        model = _one_line(self._string(chat, "model", "chat", 1))
        if model:
            fields["model"] = model
            report.kept("chat models (header model)", 1)
            self.model = fields["model"]
        name = self._string(chat, "name", "chat", 1)
        if name:
            title = _one_line(name)
            if len(title) > TITLE_LIMIT:
                title = title[:TITLE_LIMIT]
                report.dropped(f"chat name characters beyond {TITLE_LIMIT} (the header stays small)", 1)
            fields["extra.title"] = title
            report.kept("chat names (header extra.title)", 1)
        created = self._string(chat, "created", "chat", 1)
        if created:
            fields["extra.created"] = _one_line(created)
            report.kept("chat creation times (header extra.created)", 1)
        effort = self._string(chat, "reasoning_effort", "chat", 1)
        if effort:
            fields["extra.reasoning_effort"] = _one_line(effort)
            report.kept("chat reasoning efforts (header extra.reasoning_effort)", 1)
        if chat.get("global") is True:
            fields["extra.global"] = "true"
            report.kept("global chat flags (header extra.global)", 1)
        fields["extra.bb7_version"] = str(chat_version(chat))
        report.kept("chat versions (header extra.bb7_version)", 1)
        for key in sorted(set(chat) - CHAT_KEYS):
            report.dropped(f"unknown chat fields ({_one_line(key)[:60]})", 1)
        return importer_header(self.ctx, chat_id or None, **fields)

    def _string(self, where: dict[str, Any], key: str, owner: str, line: int) -> str:
        value = where.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            self.report.dropped(f"{owner} {key} fields that are not strings", line)
            return ""
        return value

    def body(self) -> Iterator[Item]:
        messages = self.chat.get("messages") or []
        for index, message in enumerate(messages):
            try:
                # A message's lines are built whole before any is given: a value no bbox line
                # can hold (a node builder's ValueError) skips the message, never the import.
                nodes = list(self.message(index, message))
            except ValueError as error:
                line, col = self.locator.at(index)
                self.report.skip(line, f"message {index} (line {line}, column {col}): {error}")
                continue
            yield from nodes
        yield from self.context_files()
        yield from self.draft()

    # -- one message --------------------------------------------------------------------

    def message(self, index: int, message: Any) -> Iterator[Item]:
        line, col = self.locator.at(index)
        report = self.report
        where = f"message {index} (line {line}, column {col})"
        if not isinstance(message, dict):
            report.skip(
                line, f"{where}: a message must be a JSON object, not {json_type(message, article=True)}"
            )
            return
        role = message.get("role")
        if role not in ("user", "assistant", "system"):
            shown = json.dumps(role)[:60] if "role" in message else "none"
            report.skip(line, f"{where}: unknown role {shown} (BB-7 writes user, assistant and system)")
            return
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            report.skip(
                line, f"{where}: legacy content must be a string, not {json_type(content, article=True)}"
            )
            return
        parts = message.get("parts")
        if parts is not None and not isinstance(parts, list):
            report.skip(line, f"{where}: parts must be a list, not {json_type(parts, article=True)}")
            return
        migrated = migrate_message(message)
        if isinstance(content, str) and content and not parts:
            report.kept("legacy content fields (migrated to one text part, as BB-7 loads them)", line)
        elif isinstance(content, str) and content:
            report.dropped("legacy content beside parts (BB-7 ignores it)", line)
        for key in sorted(set(message) - MESSAGE_KEYS):
            report.dropped(f"unknown message fields ({_one_line(key)[:60]})", line)
        report.kept(f"{role} messages", line)

        # Comments before the message: a model switch, the context snapshot of a user message.
        model = _one_line(self._string(message, "model", "message", line))
        if model and model != self.model:
            self.model = model
            yield build.comment(f"model: {self.model}")
            report.kept("model switches (# model:)", line)
        snapshot = self._snapshot(message.get("context_snapshot"), line)
        if snapshot is not None:
            yield snapshot

        first = self._first_fields(message, line)
        ts = self._timestamp(message, line)
        every = {"ts": ts} if ts else {}
        events = 0
        for number, part in enumerate(migrated.get("parts") or []):
            fields = {**every, **(first[0] if events == 0 else {})}
            metrics = first[1] if events == 0 else None
            node = self.part(index, number, role, part, fields, metrics)
            if node is not None:
                events += 1
                yield node
        if events == 0:
            kind = ROLE_KINDS.get(str(role), str(role))
            report.kept("messages with no part to show (an empty line of their role)", line)
            yield self._message_line(kind, "", {**every, **first[0]}, first[1], line)

    def _first_fields(
        self, message: dict[str, Any], line: int
    ) -> tuple[dict[str, Any], dict[str, str] | None]:
        """The fields and metrics of a message's first line: ``output_files``,
        ``reasoning_effort``, ``usage``."""
        report = self.report
        fields: dict[str, Any] = {}
        files = message.get("output_files")
        if isinstance(files, list) and all(isinstance(f, str) for f in files):
            if files:
                fields["output_files"] = list(files)
                report.kept("output_files (output_files= on the message's first line)", line)
        elif files is not None:
            report.dropped("output_files that are not lists of strings", line)
        effort = self._string(message, "reasoning_effort", "message", line)
        if effort:
            fields["extra.reasoning_effort"] = effort
            report.kept("message reasoning efforts (extra.reasoning_effort=)", line)
        usage = message.get("usage")
        metrics: dict[str, str] | None = None
        if isinstance(usage, dict):
            metrics = {}
            for key, value in usage.items():
                number = _number(value)
                if number is None:
                    report.dropped(f"usage values that are not numbers ({_one_line(key)[:60]})", line)
                    continue
                name = USAGE_METRICS.get(key) or "extra." + re.sub(r"[^A-Za-z0-9_.-]", "_", key or "_")
                if key == "duration":
                    number = str(round(float(number) * 1000))
                metrics[name] = number
            if metrics:
                report.kept("usage (inline # metrics on the message's first line)", line)
            else:
                metrics = None
        elif usage is not None:
            report.dropped("usage fields that are not objects", line)
        return fields, metrics

    def _timestamp(self, message: dict[str, Any], line: int) -> str:
        from bbox_lark.syntax.values import parse_timestamp

        value = self._string(message, "timestamp", "message", line)
        if not value:
            return ""
        if value == ZERO_TIME:
            self.report.dropped("zero timestamps (Go's empty time, 0001-01-01)", line)
            return ""
        if parse_timestamp(value) is None:
            self.report.dropped("timestamps that are not ISO 8601 with a zone", line)
            return ""
        self.report.kept("timestamps (ts= on each line of the message)", line)
        return value

    def _snapshot(self, refs: Any, line: int) -> Item | None:
        """``# file-snapshot: files=[path@id, path:10-50@id]`` for a context snapshot."""
        if refs is None or refs == []:
            return None
        items = self._file_refs(refs, "file_id", line)
        if items is None:
            self.report.dropped("context snapshots that are not lists of file references", line)
            return None
        self.report.kept("context snapshots (# file-snapshot: files=[…])", line)
        return build.comment("file-snapshot:", fields={"files": items})

    @staticmethod
    def _file_refs(refs: Any, id_key: str, line: int) -> list[str] | None:
        if not isinstance(refs, list):
            return None
        items = []
        for ref in refs:
            if not isinstance(ref, dict) or not isinstance(ref.get("path"), str):
                return None
            text = ref["path"]
            start, end = ref.get("start_line"), ref.get("end_line")
            if isinstance(start, int) and isinstance(end, int) and start > 0 and end > 0:
                text += f":{start}-{end}"
            version = ref.get(id_key) if id_key else None
            if isinstance(version, str) and version:
                text += f"@{version}"
            items.append(text)
        return items

    # -- one part ------------------------------------------------------------------------

    def part(
        self,
        index: int,
        number: int,
        role: str,
        part: Any,
        fields: dict[str, Any],
        metrics: dict[str, str] | None,
    ) -> Event | None:
        line, col = self.locator.at(index, number)
        if line == 0:  # a migrated legacy content: the message's own position
            line, col = self.locator.at(index)
        report = self.report
        where = f"message {index}, part {number} (line {line}, column {col})"
        if not isinstance(part, dict):
            report.skip(line, f"{where}: a part must be a JSON object, not {json_type(part, article=True)}")
            return None
        kind = part.get("type")
        if kind not in PART_TYPES:
            shown = json.dumps(kind)[:60] if "type" in part else "none"
            report.skip(line, f"{where}: unknown part type {shown} (BB-7 writes {', '.join(PART_TYPES)})")
            return None
        for key in ("content", "language", "path", "action", "version", "prev_version", "original_path"):
            if part.get(key) is not None and not isinstance(part[key], str):
                report.skip(
                    line, f"{where}: {key} must be a string, not {json_type(part[key], article=True)}"
                )
                return None
        for key in sorted(set(part) - PART_KEYS):
            report.dropped(f"unknown part fields ({_one_line(key)[:60]})", line)
        # One method per part type (``text_part``, ``file_part``, ``context_event_part``, ...).
        node: Event | None = getattr(self, f"{kind}_part")(part, role, fields, metrics, line, where)
        return node

    def text_part(
        self,
        part: dict[str, Any],
        role: str,
        fields: dict[str, Any],
        metrics: dict[str, str] | None,
        line: int,
        where: str,
    ) -> Event | None:
        """A ``text``, ``thinking``, ``code`` or ``raw`` part: a message line of its role."""
        report = self.report
        kind = part["type"]
        content = part.get("content") or ""
        for key in sorted(set(part) & (PART_KEYS - {"type", "content", "language"})):
            report.dropped(f"{kind} part fields that only context events have ({key})", line)
        if kind != "code" and part.get("language") is not None:
            report.dropped(f"{kind} part fields that only code parts have (language)", line)
        if not content.strip():
            report.dropped(f"{kind} parts with no text", line)
            return None
        report.kept(f"{kind} parts", line)
        line_kind = "thinking" if kind == "thinking" else ROLE_KINDS.get(role, role)
        if kind in ("code", "raw"):
            extra: dict[str, Any] = {"extra.part": kind}
            language = part.get("language")
            if kind == "code" and language:
                extra["extra.language"] = language
            return self._message_line(line_kind, content, {**fields, **extra}, metrics, line, whole=True)
        return self._message_line(line_kind, content, fields, metrics, line)

    thinking_part = code_part = raw_part = text_part

    def file_part(
        self,
        part: dict[str, Any],
        role: str,
        fields: dict[str, Any],
        metrics: dict[str, str] | None,
        line: int,
        where: str,
    ) -> Event | None:
        path = part.get("path") or ""
        if not path:
            self.report.skip(line, f"{where}: a file part needs a path")
            return None
        self.report.kept("file parts (t:write PATH extra.part=file)", line)
        return build.call("tool", "write", [path], fields={**fields, "extra.part": "file"}, metrics=metrics)

    def context_event_part(
        self,
        part: dict[str, Any],
        role: str,
        fields: dict[str, Any],
        metrics: dict[str, str] | None,
        line: int,
        where: str,
    ) -> Event | None:
        report = self.report
        action = part.get("action") or ""
        path = part.get("path") or ""
        if not action and not path:
            report.skip(line, f"{where}: a context event needs an action or a path")
            return None
        values: dict[str, Any] = {}
        for key in ("version", "prev_version", "original_path"):
            if part.get(key):
                values[key] = part[key]
        start, end = part.get("start_line"), part.get("end_line")
        for key, value in (("start_line", start), ("end_line", end)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                report.skip(line, f"{where}: {key} must be an integer, not {json_type(value, article=True)}")
                return None
        if isinstance(start, int) and isinstance(end, int) and start > 0 and end > 0:
            values["lines"] = f"{start}-{end}"
        for key in ("readonly", "external", "added"):
            value = part.get(key)
            if isinstance(value, bool):
                if key != "added" or value:
                    values[key] = "true" if value else "false"
            elif value is not None:
                report.dropped(f"context event {key} fields that are not booleans", line)
        if action in FORK_WARNINGS:
            report.kept(f"context events {action} (# notes: fork-warning)", line)
            text = f"notes: fork-warning {FORK_WARNINGS[action]}"
            return build.comment(
                text, fields={"path": path, **values, **({"ts": fields["ts"]} if "ts" in fields else {})}
            )
        name, actor = ACTIONS.get(action, ("context-event", ""))
        if action in ACTIONS:
            report.kept(f"context events {action} (t:{name})", line)
        else:
            values["action"] = action
            report.kept("context events of an action the spec does not list (t:context-event action=…)", line)
        by = {"by": actor} if actor == "user" else {}
        return build.call(
            "tool", name, [path] if path else [], fields={**values, **by, **fields}, metrics=metrics
        )

    # -- after the messages ---------------------------------------------------------------

    def context_files(self) -> Iterator[Item]:
        """``# file-snapshot: context files=[…] readonly=[…] external=[…]``: the chat's context
        when it was saved."""
        files = self.chat.get("context_files")
        if files is None or files == []:
            return
        items = self._file_refs(files, "version", 1)
        paths = self._file_refs(files, "", 1)
        if items is None or paths is None:
            self.report.dropped("context_files that are not lists of file references", 1)
            return
        fields: dict[str, Any] = {"files": items}
        readonly = [path for path, ref in zip(paths, files, strict=True) if ref.get("readonly") is True]
        external = [path for path, ref in zip(paths, files, strict=True) if ref.get("external") is True]
        if readonly:
            fields["readonly"] = readonly
        if external:
            fields["external"] = external
        self.report.kept("chat context files (# file-snapshot: context, at the end)", 1)
        yield build.comment("file-snapshot: context", fields=fields)

    def draft(self) -> Iterator[Item]:
        """``# notes: draft`` with the unsent input on continuation lines."""
        draft = self._string(self.chat, "draft", "chat", 1)
        if not draft.strip():
            return
        lines = self._text_lines(draft, 1)
        while lines and not lines[-1].strip():
            lines.pop()
        self.report.kept("drafts (# notes: draft, its text on continuation lines)", 1)
        yield build.comment("notes: draft (unsent input)", continuation=self._continuation(lines))


def _field_text(value: Any) -> Any:
    return tuple(value) if isinstance(value, list | tuple) else str(value)


def read(source: Input, ctx: ReadContext) -> Iterator[Item]:
    """The bbox document of a BB-7 ``chat.json``."""
    chat, locator, replaced = load_chat(source.read_bytes())
    builder = _Builder(chat, locator, ctx)
    head = builder.head()
    if replaced:
        ctx.report.note("dropped", "NUL characters and unpaired surrogates (written as U+FFFD)", 0, replaced)
    yield head
    yield from builder.body()
