"""The reader: one Claude Code record at a time to bbox lines, the header once its values are
known; user and assistant messages, tool calls and results are read here."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bbox_lark.convert.base import (
    ReadContext,
    importer_header,
    json_type,
)
from bbox_lark.convert.claude_code.records import READERS
from bbox_lark.convert.claude_code.subagents import read_subagent, relative, subagent_before_result
from bbox_lark.convert.claude_code.tables import (
    FIELD_KEY,
    HANDLER_KEYS,
    INLINE,
    MCP_PREFIX,
    MESSAGE_KEYS,
    NAME_UNSAFE,
    READ_KEYS,
    REMEMBERED,
    SIDECHAIN_TID,
    SUBAGENT_TOOLS,
    TODO_TOOL,
    UNSAFE,
)
from bbox_lark.convert.claude_code.usage import UsageMerger
from bbox_lark.convert.claude_code.values import Malformed, as_arg, as_json, image_placeholder, short
from bbox_lark.syntax import build
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Continuation, Event
from bbox_lark.syntax.source import BOM, DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.syntax.nodes import Line


class ClaudeCodeReader:
    def __init__(
        self, ctx: ReadContext, subagents: dict[str, Path] | None = None, path: Path | None = None
    ) -> None:
        self.ctx = ctx
        #: Subagent logs beside the session (agent id -> path) not read yet.
        self.subagents = dict(subagents or {})
        self.base = path.parent if path is not None else None
        #: Open subagent calls (``Task``/``Agent`` tool_use ids) -> their ``prompt`` input.
        self.subagent_calls: OrderedDict[str, str | None] = OrderedDict()
        #: The thread of the subagent log being read (its lines' ``tid=``), or None.
        self.forced_tid: str | None = None
        #: Input line -> (agent id, log path) of the subagent log read for its Task result.
        self.linked: dict[int, tuple[str, str]] = {}
        self.report = ctx.report
        self.limit = max(64, (ctx.max_line or DEFAULT_MAX_LINE) - 64)
        self.ts_pattern = vocabulary().typed_fields["ts"]
        self.typed = frozenset(vocabulary().typed_fields)
        #: First values seen: the header's.
        self.meta: dict[str, str] = {}
        #: The values in force (a change is written as a ``# notes:`` line).
        self.current: dict[str, str] = {}
        self.model: str | None = None
        #: Open ``t!`` calls (recent ones): id → tool name, for progress records.
        self.open_tools: OrderedDict[str, str] = OrderedDict()
        #: The usage of the API messages being written (merged over their records).
        self.api_usage = UsageMerger(self.report)
        self.synthesized_ids = 0
        self.line_no = 0

    # -- header ------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return "session" in self.meta and "model" in self.meta

    def head(self) -> Any:
        values: dict[str, Any] = {"agent": "claude-code"}
        for key in ("model", "client_version", "slug", "cwd", "branch"):
            values[key] = self.meta.get(key)
        # A value the header cannot hold (too long, not one line) goes to a body line.
        return importer_header(self.ctx, self.meta.get("session"), **values)

    # -- one input line ----------------------------------------------------------------

    def line(self, raw: bytes, number: int) -> list[Line]:
        self.line_no = number
        if number == 1:
            raw = raw.removeprefix(BOM.encode())
        if not raw.strip():
            if raw.strip(b"\r\n"):
                self.report.dropped("whitespace-only lines", number)
            return []
        try:
            record = json.loads(raw)
        except UnicodeDecodeError:
            self.report.skip(number, "not UTF-8 text")
            return []
        except json.JSONDecodeError as error:
            # Where in the line (json counts the line's own end as a line of its own, and
            # characters of the decoded text, error.doc, not bytes; a byte order mark is
            # decoded away, so a line of a mark alone is blank there, no record cut short).
            end = len(error.doc.rstrip())
            if end and error.pos >= end:
                why = "the record ends too early: cut short?"
            else:
                why = f"{error.msg} at column {error.colno}"
            self.report.skip(number, f"not a JSON record ({short(why)})")
            return []
        except ValueError as error:
            self.report.skip(number, f"not a JSON record ({short(str(error))})")
            return []
        except RecursionError:
            self.report.skip(number, "JSON nested too deeply")
            return []
        if not isinstance(record, dict):
            self.report.skip(number, f"a JSON {json_type(record)}, not a record (an object)")
            return []
        kind = record.get("type")
        if not isinstance(kind, str) or not kind:
            self.report.skip(number, "a record without a `type`")
            return []
        return self.record(kind, record, number)

    def record(self, kind: str, record: dict[str, Any], number: int) -> list[Line]:
        handler = RECORD_READERS.get(kind)
        if handler is None:
            return self.unknown(kind, record, number)
        out: list[Line] = []
        tid = self.tid(record, number)
        if kind != "progress" and not (kind == "assistant" and isinstance(record.get("message"), dict)):
            out += self.api_usage.flush(tid)
        out += self.context(record, number)
        try:
            body = handler(self, record, number, tid)
        except Malformed as error:
            # What came before the record (a held usage, a context change) is still written.
            self.report.skip(number, f"{kind} record: {error}")
            return out
        for key in record:
            if key not in READ_KEYS and key not in HANDLER_KEYS.get(kind, ()):
                self.report.dropped(f"`{short(key, 40)}` record fields", number)
        return out + body

    # -- per-record values -------------------------------------------------------------

    def tid(self, record: dict[str, Any], number: int) -> str | None:
        if self.forced_tid is not None:
            return self.forced_tid
        if record.get("isSidechain") is not True:
            return None
        agent = record.get("agentId")
        if isinstance(agent, str) and agent.strip() and not any(c.isspace() for c in agent):
            return self.clean(agent, number)
        return SIDECHAIN_TID

    def fields(self, record: dict[str, Any], number: int, tid: str | None) -> list[tuple[str, str]]:
        """``ts=`` and ``tid=`` of a record's lines."""
        out: list[tuple[str, str]] = []
        ts = record.get("timestamp")
        if isinstance(ts, str) and self.ts_pattern.fullmatch(ts):
            out.append(("ts", ts))
        elif ts is not None:
            self.report.dropped("timestamps that are not ISO 8601 with a zone", number)
        if tid is not None:
            out.append(("tid", tid))
        return out

    def context(self, record: dict[str, Any], number: int) -> list[Line]:
        """A ``# notes:`` line when the session id, cwd, branch or client version changes."""
        changed: list[tuple[str, str]] = []
        for source_key, key in (
            ("sessionId", "session"),
            ("cwd", "cwd"),
            ("gitBranch", "branch"),
            ("version", "client_version"),
            ("slug", "slug"),
        ):
            value = record.get(source_key)
            if not isinstance(value, str) or not value.strip():
                continue
            value = self.clean(value.strip(), number)
            self.meta.setdefault(key, value)
            before = self.current.get(key)
            self.current[key] = value
            if before is not None and before != value:
                changed.append((key, value))
        if not changed:
            return []
        self.report.kept("changes of session id, cwd, branch or version (as # notes: lines)", number)
        return [build.comment("notes: changed", fields=changed)]

    def clean(self, text: str, number: int) -> str:
        """``text`` without what a bbox line cannot hold: NUL and lone surrogates become
        U+FFFD, carriage returns line breaks (each reported)."""
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
            self.report.dropped("carriage returns (written as line breaks)", number)
        if UNSAFE.search(text):
            text = UNSAFE.sub("\ufffd", text)
            self.report.dropped("NUL characters and lone surrogates (written as U+FFFD)", number)
        return text

    def text_lines(self, text: str, number: int) -> list[str]:
        """The lines of ``text``, without leading and trailing blank lines; a line over the
        line limit is cut in pieces (reported)."""
        lines = self.clean(text, number).split("\n")
        while lines and not lines[-1].strip():
            lines.pop()
        start = 0
        while start < len(lines) and not lines[start].strip():
            start += 1
        out: list[str] = []
        for line in lines[start:]:
            if len(line) <= self.limit:
                out.append(line)
                continue
            self.report.synthesized("line breaks in lines over the line limit", number)
            out.extend(line[i : i + self.limit] for i in range(0, len(line), self.limit))
        return out

    @staticmethod
    def continuation(lines: list[str]) -> list[Continuation]:
        """The continuation lines of :meth:`text_lines`' lines, built here: each is one line
        (split at line breaks, carriage returns gone, :meth:`clean`), so it is what the
        builders would make of it, without their per-line checks. An empty line of the text
        is an empty line of the file; the lines after it still belong to the event
        (docs/reference.md#continuations)."""
        return [Continuation(0, "  " + line if line.strip() else "", "\n") for line in lines]

    # -- text lines --------------------------------------------------------------------

    def message(self, kind: str, text: str, fields: list[tuple[str, str]], number: int) -> Event:
        """A ``u a th td`` line: the first line of ``text`` on it when it reads back as
        itself, every other line (or all of them) on continuation lines."""
        lines = self.text_lines(text, number)
        if lines and lines[0] == lines[0].strip() and len(lines[0]) <= INLINE:
            try:
                node = build.message(kind, lines[0], fields=fields, continuation=self.continuation(lines[1:]))
            except ValueError:
                pass
            else:
                # A field in the text (`ts=`, `tokens_out=` at its end) would read as the line's
                # own, a time or a usage the record never had: the line holds ours alone.
                if node.fields == dict(fields):
                    return node
        return build.message(kind, "", fields=fields, continuation=self.continuation(lines))

    def block_text(self, content: Any, number: int) -> str:
        """The text of a tool result's content (a string or a list of blocks)."""
        if isinstance(content, str):
            return content
        if content is None:
            return ""
        if not isinstance(content, list):
            return as_json(content)
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict) and block.get("type") == "image":
                self.report.dropped("image data (a placeholder is written)", number)
                parts.append(image_placeholder(block))
            elif isinstance(block, str):
                parts.append(block)
            else:
                parts.append(as_json(block))
        return "\n".join(parts)

    # -- user --------------------------------------------------------------------------

    def user(self, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
        message = record.get("message")
        if not isinstance(message, dict):
            raise Malformed("`message` is not an object")
        content = message.get("content")
        if not isinstance(content, (str, list)):
            raise Malformed("`message.content` is neither text nor a list of blocks")
        self.drop_message_keys(message, number)
        fields = self.fields(record, number, tid)
        if isinstance(content, str):
            self.report.kept("user messages (u:)", number)
            return [self.message("user", content, fields, number)]
        interrupted = isinstance(record.get("toolUseResult"), dict) and record["toolUseResult"].get(
            "interrupted"
        )
        out: list[Line] = []
        for index, block in enumerate(content, 1):
            if not isinstance(block, dict):
                self.report.skip(number, f"user record: content block {index} is not an object")
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                self.report.kept("user messages (u:)", number)
                out.append(self.message("user", block["text"], fields, number))
            elif kind == "tool_result":
                out += subagent_before_result(self, block, record, number)
                out += self.tool_result(
                    block, fields, number, interrupted is True, self.linked.pop(number, None)
                )
            elif kind == "image":
                self.report.dropped("image data (a placeholder is written)", number)
                out.append(build.message("user", image_placeholder(block), fields=fields))
            else:
                out.append(self.unknown_block(block, number))
        return out

    def tool_result(
        self,
        block: dict[str, Any],
        fields: list[tuple[str, str]],
        number: int,
        interrupted: bool,
        subagent: tuple[str, str] | None = None,
    ) -> list[Line]:
        call = block.get("tool_use_id")
        pairs = list(fields)
        if isinstance(call, str) and call:
            pairs.insert(0, ("id", self.clean(call, number)))
            self.open_tools.pop(call, None)
            self.report.kept("tool_result blocks (o: id=<tool_use id>)", number)
        else:
            self.report.kept("tool_result blocks without a tool_use_id (o: without id=)", number)
        if subagent is not None:
            pairs[1:1] = [("session_id", subagent[0]), ("path", subagent[1])]
        if interrupted:
            pairs.append(("interrupted", "true"))
        error = block.get("is_error") is True
        if error:
            self.report.kept("is_error tool results ([error])", number)
        lines = self.text_lines(self.block_text(block.get("content"), number), number)
        status = "error" if error else "ok"
        if lines and lines[0] == lines[0].strip() and len(lines[0]) <= INLINE:
            try:
                result = build.result(status, rest=lines[0])
                node = build.observation(
                    fields=pairs, result=result, continuation=self.continuation(lines[1:])
                )
            except ValueError:
                pass
            else:
                # A field after the result (`→ [ok] step=4`) would be the line's own, as in message.
                if node.fields == dict(pairs):
                    return [node]
        return [
            build.observation(
                fields=pairs, result=build.result(status), continuation=self.continuation(lines)
            )
        ]

    # -- assistant ---------------------------------------------------------------------

    def assistant(self, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
        message = record.get("message")
        if not isinstance(message, dict):
            raise Malformed("`message` is not an object")
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise Malformed("`message.content` is neither text nor a list of blocks")
        self.drop_message_keys(message, number)
        out: list[Line] = []
        model = message.get("model")
        if isinstance(model, str) and model.strip():
            model = self.clean(model.strip(), number)
            self.meta.setdefault("model", model)
            if self.model is not None and model != self.model:
                self.report.kept("model changes (# model:)", number)
                out.append(build.comment("model: " + as_arg(model)))
            self.model = model
        flushed, usage = self.api_usage.account(message, number, tid)
        out += flushed
        fields = self.fields(record, number, tid)
        usage_fields = fields + usage
        for index, block in enumerate(content, 1):
            if not isinstance(block, dict):
                self.report.skip(number, f"assistant record: content block {index} is not an object")
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                self.report.kept("assistant text blocks (a:)", number)
                out.append(self.message("agent", block["text"], usage_fields, number))
            elif kind == "thinking" and isinstance(block.get("thinking", ""), str):
                self.report.kept("thinking blocks (th:)", number)
                if block.get("signature"):
                    self.report.dropped("thinking signatures", number)
                out.append(self.message("thinking", block.get("thinking", ""), usage_fields, number))
            elif kind == "redacted_thinking":
                self.report.kept("redacted thinking blocks (th: [redacted:thinking])", number)
                self.report.dropped("redacted thinking data", number)
                out.append(build.message("thinking", "[redacted:thinking]", fields=usage_fields))
            elif kind == "tool_use":
                out += self.tool_use(block, fields, number, usage)
            else:
                out.append(self.unknown_block(block, number))
        if not isinstance(message.get("id"), str):
            out += self.api_usage.flush(tid)
        return out

    def tool_use(
        self,
        block: dict[str, Any],
        fields: list[tuple[str, str]],
        number: int,
        usage: Sequence[tuple[str, str]] = (),
    ) -> list[Line]:
        call = block.get("id")
        if isinstance(call, str) and call.strip():
            call = self.clean(call, number)
        else:
            self.synthesized_ids += 1
            call = f"claude-code-{number}-{self.synthesized_ids}"
            self.report.synthesized("tool call ids (the tool_use has none)", number)
        name = block.get("name")
        if not isinstance(name, str) or not name.strip():
            name = "unnamed"
            self.report.synthesized("tool names (the tool_use has none)", number)
        tool_input = block.get("input")
        out: list[Line] = []
        todos = tool_input.get("todos") if isinstance(tool_input, dict) else None
        if name == TODO_TOOL and isinstance(todos, list):
            self.report.kept("TodoWrite todo lists (td:)", number)
            out.append(self.todos(todos, fields, number))
            tool_input = {k: v for k, v in tool_input.items() if k != "todos"}  # type: ignore[union-attr]
        kind, head, status = "tool_start", name, "running"
        if name.startswith(MCP_PREFIX) and name.count("__") >= 2:
            server, _, method = name[len(MCP_PREFIX) :].partition("__")
            kind, head = "mcp", f"{server}.{method}"
            self.report.kept("MCP tool_use blocks (c:server.method)", number)
        elif name in SUBAGENT_TOOLS:
            kind, status = "subagent", "launched"
            prompt = tool_input.get("prompt") if isinstance(tool_input, dict) else None
            self.subagent_calls[call] = prompt if isinstance(prompt, str) else None
            while len(self.subagent_calls) > REMEMBERED:
                self.subagent_calls.popitem(last=False)
            wanted = tool_input.get("subagent_type") if isinstance(tool_input, dict) else None
            head = wanted if isinstance(wanted, str) and wanted.strip() else "task"
            self.report.kept("subagent tool_use blocks (x:)", number)
        else:
            self.report.kept("tool_use blocks (t!:)", number)
        self.report.synthesized("[running] results of tool calls (the result follows on o:)", number)
        pairs, extra = self.input_fields(tool_input, number)
        first = [("id", call)]
        # Cleaned once (each NUL reported once); extra.name= only when the word had to change.
        cleaned = self.clean(head, number)
        safe = NAME_UNSAFE.sub("_", cleaned)
        if safe != cleaned:
            first.append(("extra.name", cleaned))
            self.report.extra("tool names that are not one word (extra.name=)", number)
        # The usage goes after the arrow (it is no argument of the call), as real writers put it.
        result = build.result(status, rest=" ".join(f"{k}={v}" for k, v in usage))
        node: Event | None = None
        try:
            node = build.call(kind, safe, fields=first + pairs + extra + fields, result=result)
        except ValueError:
            node = None
        if node is not None and any(node.fields.get(k) != v for k, v in usage):
            node = None  # a tool input key named like a usage field would win over it
        if node is None or len(node.raw) > self.limit:
            # Too long for one line: the input as JSON on continuation lines.
            lines = self.text_lines(as_json(tool_input), number)
            self.report.synthesized("line breaks in tool inputs too long for one line", number)
            node = build.call(
                kind,
                safe,
                fields=first + fields,
                result=result,
                continuation=self.continuation(lines),
            )
        if kind == "tool_start":
            self.open_tools[call] = safe
            while len(self.open_tools) > REMEMBERED:
                self.open_tools.popitem(last=False)
        return [node, *out]

    def input_fields(self, value: Any, number: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """A tool input as fields (one per key; lists and objects as JSON text), and the
        keys that cannot be fields (not a field key, or a typed one) as ``extra.input=``."""
        if value is None:
            return [], []
        if not isinstance(value, dict):
            self.report.extra("tool inputs that are not objects (extra.input=)", number)
            return [], [("extra.input", self.clean(as_json(value), number))]
        pairs: list[tuple[str, str]] = []
        rest: dict[str, Any] = {}
        for key, item in value.items():
            if not FIELD_KEY.fullmatch(key) or key in self.typed or key.startswith("extra."):
                rest[key] = item
                continue
            text = item if isinstance(item, str) else as_json(item)
            pairs.append((key, self.clean(text, number)))
        if pairs:
            self.report.kept("tool input keys (as fields; lists and objects as JSON)", number, len(pairs))
        if not rest:
            return pairs, []
        self.report.extra("tool input keys that cannot be field keys (extra.input= JSON)", number, len(rest))
        return pairs, [("extra.input", self.clean(as_json(rest), number))]

    def todos(self, todos: list[Any], fields: list[tuple[str, str]], number: int) -> Event:
        items = []
        for todo in todos:
            if isinstance(todo, dict):
                status = todo.get("status")
                content = todo.get("content")
                status = status if isinstance(status, str) and status.strip() else "?"
                content = content if isinstance(content, str) else as_json(content)
                items.append(f"[{' '.join(status.split())}] {' '.join(content.split())}".strip())
            else:
                self.report.kept("todo items that are not objects (as their text)", number)
                text = todo if isinstance(todo, str) else as_json(todo)
                items.append(" ".join(text.split()))
        items = [self.clean(item, number) for item in items if item]
        try:
            node = build.message("todos", " ".join(items), fields=fields)
            if node.fields == dict(fields) and len(node.raw) <= self.limit:
                return node
        except ValueError:
            pass
        lines = [piece for item in items for piece in self.text_lines(item, number)]
        return build.message("todos", "", fields=fields, continuation=self.continuation(lines))

    # -- other records -----------------------------------------------------------------

    def comment(self, head: str, pairs: list[tuple[str, str]], text: str, number: int) -> Event:
        """A comment ``# head fields…`` with ``text`` on continuation lines."""
        return build.comment(
            head, fields=pairs, continuation=self.continuation(self.text_lines(text, number))
        )

    def unknown(self, kind: str, record: dict[str, Any], number: int) -> list[Line]:
        """A well-formed record of a type this reader does not know: a comment naming the
        type, the record as JSON on continuation lines."""
        self.report.kept("records of unknown types (as comments with their JSON)", number)
        lines = self.text_lines(as_json(record), number)
        return [build.comment("claude-code record " + as_arg(self.clean(kind, number)), continuation=lines)]

    def unknown_block(self, block: dict[str, Any], number: int) -> Event:
        kind = block.get("type")
        name = self.clean(kind, number) if isinstance(kind, str) and kind else "untyped"
        self.report.kept("content blocks of unknown types (as comments with their JSON)", number)
        lines = self.text_lines(as_json(block), number)
        return build.comment("claude-code block " + as_arg(name), continuation=lines)

    def drop_message_keys(self, message: dict[str, Any], number: int) -> None:
        for key in message:
            if key not in MESSAGE_KEYS:
                self.report.dropped(f"`{short(str(key), 40)}` message fields", number)

    # -- the end -----------------------------------------------------------------------

    def finish(self) -> list[Line]:
        out: list[Line] = []
        for agent, log in list(self.subagents.items()):
            # A subagent no Task result names (a session cut short): its log, at the end.
            lines = read_subagent(self, agent, self.line_no, link=False)
            if lines:
                self.report.kept("subagent logs no Task result names (at the end, tid= lines)", self.line_no)
                pairs = [("session_id", self.clean(agent, self.line_no)), ("path", relative(self, log))]
                out.append(build.comment("notes: subagent", fields=pairs))
                out += lines
        for tid in list(self.api_usage.usage):
            out += self.api_usage.flush(tid or None)
        if self.api_usage.wrote_usage:
            self.report.synthesized("closing token summary (# tokens_in=…, each message id once)", 0)
            out.append(
                build.comment(
                    "", fields=[(name, str(value)) for name, value in self.api_usage.totals.items()]
                )
            )
        return out


#: The reading of each record type (one function per type, the reader's own or
#: :data:`bbox_lark.convert.claude_code.records.READERS`); others are kept as comments.
RECORD_READERS: dict[str, Callable[[ClaudeCodeReader, dict[str, Any], int, str | None], list[Line]]] = {
    "user": ClaudeCodeReader.user,
    "assistant": ClaudeCodeReader.assistant,
    **READERS,
}
