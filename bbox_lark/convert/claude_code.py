"""Claude Code session logs (``~/.claude/projects/*/*.jsonl``) → bbox/1, read only.

The mapping follows ``bbox-format-claude-code-extensions.md``; ``docs/formats/claude-code.md``
gives every decision with an example, and :data:`FORMAT` ``.import_mapping`` is the table.
In short: one JSON record per line; ``user`` text → ``u:``, assistant text → ``a:``,
thinking → ``th:``, ``tool_use`` → ``t!:Name id=<full id> … → [running]`` (``x:`` for
subagents, ``c:server.method`` for MCP tools, plus ``td:`` for ``TodoWrite``), its
``tool_result`` → ``o: id=<full id> → [ok] …`` or ``→ [error] …``, token usage →
``tokens_in= tokens_out= tokens_cached=`` on the message's lines (DECISIONS §12: one API
message id is one model response, counted once), ``summary`` / ``system`` / file-history snapshots / queue
operations → structured comments (``# notes:``, ``@compact``, ``# file-snapshot:``,
``# queue:``). Multi-line text goes on continuation lines. The subagent logs Claude Code keeps
beside a session (``<session>/subagents/agent-<id>.jsonl``, :func:`subagent_logs`) are read
in: each one's records as lines of thread ``tid=<id>``, right before the ``o:`` result of the
``Task`` call that launched it (found by the result's ``toolUseResult.agentId``, else by the
call's prompt), and that result names the log (``session_id=<id> path=<log>``).

The reader streams: it holds the nodes of the first few records until the header's values
are known (at most :data:`LOOKAHEAD` records), the usage of the API message being written
(one per thread), and bounded maps of recent message ids and open tool calls.

Usage. Claude Code writes one API message as several records (one per content block), each
restating the message's usage, ``output_tokens`` growing as it streams. Each record's lines
carry the usage of the message so far, each counter the largest any of its records gave, so
that :mod:`bbox_lark.numbers` (consecutive lines with equal ``tokens_in`` and
``tokens_cached`` are one response; its output is the largest ``tokens_out``) counts the
message once. ``tokens_in`` is ``input_tokens + cache_creation_input_tokens`` (input not
read from the cache: Anthropic's ``input_tokens`` excludes both cache reads and cache
writes), ``tokens_cached`` is ``cache_read_input_tokens``. A record of a message id already
counted, after other messages, carries no usage (reported).
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bbox_lark.ast import Call, Comment, Continuation, Event, Lifecycle, Message, Observation, Result
from bbox_lark.convert.base import (
    REPO_SHA,
    Format,
    Input,
    MappingRow,
    ReadContext,
    importer_header,
    json_type,
)
from bbox_lark.grammar import vocabulary
from bbox_lark.source import BOM, DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.ast import Line
    from bbox_lark.convert.base import Item

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
_READ_KEYS = frozenset(
    {"type", "timestamp", "sessionId", "cwd", "version", "gitBranch", "slug", "isSidechain", "agentId"}
)
_MESSAGE_KEYS = frozenset({"role", "content", "model", "id", "usage", "type"})
#: The usage keys this reader reads.
_USAGE = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
_FIELD_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_UNSAFE = re.compile("[\x00\ud800-\udfff]")
_NAME_UNSAFE = re.compile(r"[\s→\"]")
#: Header values longer than this go on a ``# notes:`` line instead (the header stays small).
_HEADER_VALUE = 1024
_DUPLICATE_USAGE = (
    "API usage restated by records of one message id"
    " (counted once: each record's lines carry the largest value of each counter so far)"
)
_REPEATED_MESSAGE = "API usage of a message id counted before (its lines carry none)"


class _Malformed(ValueError):
    """A record this reader cannot read (skipped, reported with its line)."""


# -- sniffing ----------------------------------------------------------------------------


_CUT_RECORD = re.compile(r'\{.*"type"\s*:\s*"(?:' + "|".join(sorted(RECORD_TYPES)) + ')"')
_CUT_ID = re.compile(r'"(?:sessionId|uuid|leafUuid|messageId)"\s*:\s*"')


def sniff(text: str) -> int:
    """4 when the first JSON records look like Claude Code's (a ``type`` of its record
    types and a ``sessionId``, ``uuid``, ``leafUuid`` or ``messageId``), else 0: other JSON
    Lines (the ``jsonl`` bbox records) score 0, so detection by content tells them apart."""
    found = seen = 0
    pieces = text.removeprefix(BOM).split("\n", 200)[:200]
    for index, raw in enumerate(pieces):
        line = raw.strip()
        if not line:
            continue
        seen += 1
        if seen > 50:
            break
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            # A record cut where the sniffed head ends (a first record over 64 KiB, a long
            # pasted prompt): the keys before the cut tell.
            if index == len(pieces) - 1 and _CUT_RECORD.match(line) and _CUT_ID.search(line):
                found += 1
            continue
        if not isinstance(record, dict):
            continue
        if record.get("type") not in RECORD_TYPES:
            continue
        if any(isinstance(record.get(key), str) for key in ("sessionId", "uuid", "leafUuid", "messageId")):
            found += 1
    return 4 if found else 0


# -- the reader --------------------------------------------------------------------------


def subagent_logs(path: Path | None) -> dict[str, Path]:
    """The subagent logs Claude Code keeps beside a session log: ``<session>.jsonl`` beside
    ``<session>/subagents/agent-<agentId>.jsonl``, by agent id (none for standard input)."""
    if path is None or path.suffix != ".jsonl":
        return {}
    folder = path.with_suffix("") / "subagents"
    try:
        found = sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    except OSError:
        return {}
    return {log.name[len("agent-") : -len(".jsonl")]: log for log in found if log.is_file()}


def read(source: Input, ctx: ReadContext) -> Iterator[Item]:
    """The bbox document of a Claude Code log, record by record (see the module's doc)."""
    reader = _Reader(ctx, subagent_logs(source.path), source.path)
    held: list[Line] = []
    head_written = False
    for number, raw in enumerate(source.lines(), 1):
        nodes = reader.line(raw, number)
        if head_written:
            yield from nodes
            continue
        held.extend(nodes)
        if reader.ready or number >= LOOKAHEAD:
            yield reader.head()
            yield from held
            held = []
            head_written = True
    tail = reader.finish()
    if not head_written:
        yield reader.head()
        yield from held
    yield from tail


class _Reader:
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
        #: tid → (message id, usage, source line) of the API message being written.
        self.usage: dict[str, tuple[str, dict[str, int], int]] = {}
        #: Message ids whose usage was written (recent ones).
        self.counted: OrderedDict[str, None] = OrderedDict()
        #: Open ``t!`` calls (recent ones): id → tool name, for progress records.
        self.open_tools: OrderedDict[str, str] = OrderedDict()
        self.totals = {"tokens_in": 0, "tokens_out": 0, "tokens_cached": 0}
        self.wrote_usage = False
        self.synthesized_ids = 0
        self.line_no = 0

    # -- header ------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return "session" in self.meta and "model" in self.meta

    def head(self) -> Any:
        values: dict[str, Any] = {"agent": "claude-code"}
        for key in ("model", "client_version", "slug", "cwd", "branch"):
            value = self.meta.get(key)
            if value is not None and len(value) > _HEADER_VALUE:
                self.report.dropped(f"header value `{key}` over {_HEADER_VALUE} characters", 0)
                value = None
            values[key] = value
        session = self.meta.get("session")
        if session is not None and len(session) > _HEADER_VALUE:
            session = None
        return importer_header(self.ctx, session, **values)

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
            # Where in the line (json counts the line's own end as a line of its own).
            if error.pos >= len(raw.rstrip()):
                why = "the record ends too early: cut short?"
            else:
                why = f"{error.msg} at column {error.colno}"
            self.report.skip(number, f"not a JSON record ({_short(why)})")
            return []
        except ValueError as error:
            self.report.skip(number, f"not a JSON record ({_short(str(error))})")
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
        handler = {
            "user": self.user,
            "assistant": self.assistant,
            "summary": self.summary,
            "system": self.system,
            "file-history-snapshot": self.snapshot,
            "queue-operation": self.queue,
            "progress": self.progress,
        }.get(kind)
        if handler is None:
            return self.unknown(kind, record, number)
        out: list[Line] = []
        tid = self.tid(record)
        if kind != "progress" and not (kind == "assistant" and isinstance(record.get("message"), dict)):
            out += self.flush(tid)
        out += self.context(record, number)
        try:
            body = handler(record, number, tid)
        except _Malformed as error:
            # What came before the record (a held usage, a context change) is still written.
            self.report.skip(number, f"{kind} record: {error}")
            return out
        for key in record:
            if key not in _READ_KEYS and key not in _HANDLER_KEYS.get(kind, ()):
                self.report.dropped(f"`{_short(key, 40)}` record fields", number)
        return out + body

    # -- per-record values -------------------------------------------------------------

    def tid(self, record: dict[str, Any]) -> str | None:
        if self.forced_tid is not None:
            return self.forced_tid
        if record.get("isSidechain") is not True:
            return None
        agent = record.get("agentId")
        if isinstance(agent, str) and agent.strip() and not any(c.isspace() for c in agent):
            return self.clean(agent, 0)
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
        return [Comment.build("notes: changed", fields=changed)]

    def clean(self, text: str, number: int) -> str:
        """``text`` without what a bbox line cannot hold: NUL and lone surrogates become
        U+FFFD, carriage returns line breaks (each reported)."""
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
            self.report.dropped("carriage returns (written as line breaks)", number)
        if _UNSAFE.search(text):
            text = _UNSAFE.sub("\ufffd", text)
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
    def continuation(lines: list[str]) -> list[str | Continuation]:
        # An empty line of the text is an empty line of the file; the lines after it still
        # belong to the event (DECISIONS §10 "Line classes").
        return [line if line.strip() else Continuation(0, "", "\n") for line in lines]

    # -- text lines --------------------------------------------------------------------

    def message(self, kind: str, text: str, fields: list[tuple[str, str]], number: int) -> Event:
        """A ``u a th td`` line: the first line of ``text`` on it when it reads back as
        itself, every other line (or all of them) on continuation lines."""
        lines = self.text_lines(text, number)
        if lines and lines[0] == lines[0].strip() and len(lines[0]) <= INLINE:
            try:
                node = Message.build(kind, lines[0], fields=fields, continuation=self.continuation(lines[1:]))
            except ValueError:
                pass
            else:
                # A field of the text (`ts=` in a message) would win over ours: keep it apart.
                if all(node.fields.get(key) == value for key, value in fields):
                    return node
        return Message.build(kind, "", fields=fields, continuation=self.continuation(lines))

    def block_text(self, content: Any, number: int) -> str:
        """The text of a tool result's content (a string or a list of blocks)."""
        if isinstance(content, str):
            return content
        if content is None:
            return ""
        if not isinstance(content, list):
            return _json(content)
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict) and block.get("type") == "image":
                self.report.dropped("image data (a placeholder is written)", number)
                parts.append(_image(block))
            elif isinstance(block, str):
                parts.append(block)
            else:
                parts.append(_json(block))
        return "\n".join(parts)

    # -- user --------------------------------------------------------------------------

    def user(self, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
        message = record.get("message")
        if not isinstance(message, dict):
            raise _Malformed("`message` is not an object")
        content = message.get("content")
        if not isinstance(content, (str, list)):
            raise _Malformed("`message.content` is neither text nor a list of blocks")
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
                out += self.subagent_before_result(block, record, number)
                out += self.tool_result(
                    block, fields, number, interrupted is True, self.linked.pop(number, None)
                )
            elif kind == "image":
                self.report.dropped("image data (a placeholder is written)", number)
                out.append(Message.build("user", _image(block), fields=fields))
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
                result = Result.build(status, rest=lines[0])
                return [
                    Observation.build(fields=pairs, result=result, continuation=self.continuation(lines[1:]))
                ]
            except ValueError:
                pass
        return [
            Observation.build(
                fields=pairs, result=Result.build(status), continuation=self.continuation(lines)
            )
        ]

    # -- assistant ---------------------------------------------------------------------

    def assistant(self, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
        message = record.get("message")
        if not isinstance(message, dict):
            raise _Malformed("`message` is not an object")
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise _Malformed("`message.content` is neither text nor a list of blocks")
        self.drop_message_keys(message, number)
        out: list[Line] = []
        model = message.get("model")
        if isinstance(model, str) and model.strip():
            model = self.clean(model.strip(), number)
            self.meta.setdefault("model", model)
            if self.model is not None and model != self.model:
                self.report.kept("model changes (# model:)", number)
                out.append(Comment.build("model: " + _arg(model)))
            self.model = model
        flushed, usage = self.account(message, number, tid)
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
                out.append(Message.build("thinking", "[redacted:thinking]", fields=usage_fields))
            elif kind == "tool_use":
                out += self.tool_use(block, fields, number, usage)
            else:
                out.append(self.unknown_block(block, number))
        if not isinstance(message.get("id"), str):
            out += self.flush(tid)
        return out

    def account(
        self, message: dict[str, Any], number: int, tid: str | None
    ) -> tuple[list[Line], list[tuple[str, str]]]:
        """Hold this message's usage (merged with its earlier records'): the lines a new
        message ends, and the usage fields for this record's lines."""
        usage = message.get("usage")
        message_id = message.get("id")
        key = tid or ""
        out: list[Line] = []
        held = self.usage.get(key)
        if held is not None and held[0] != message_id:
            out += self.flush(tid)
            held = None
        if not isinstance(usage, dict):
            return out, []
        counts = {k: v for k, v in usage.items() if k in _USAGE and type(v) is int and v >= 0}
        for other in usage:
            if other not in counts and other not in _USAGE:
                self.report.dropped(f"`{_short(str(other), 40)}` usage fields", number)
        if not isinstance(message_id, str) or not message_id:
            self.usage[key] = ("", counts, number)
            return out, self.usage_fields(counts, number)
        if message_id in self.counted:
            self.report.dropped(_REPEATED_MESSAGE, number)
            return out, []
        if held is None:
            self.usage[key] = (message_id, counts, number)
            return out, self.usage_fields(counts, number)
        self.report.dropped(_DUPLICATE_USAGE, number)
        merged = dict(held[1])
        for name, value in counts.items():
            merged[name] = max(merged.get(name, 0), value)
        self.usage[key] = (message_id, merged, held[2])
        return out, self.usage_fields(merged, number)

    @staticmethod
    def usage_values(counts: dict[str, int]) -> list[tuple[str, int]]:
        """``tokens_in`` (input not read from the cache: ``input_tokens`` +
        ``cache_creation_input_tokens``), ``tokens_out``, ``tokens_cached``."""
        pairs: list[tuple[str, int]] = []
        if "input_tokens" in counts or "cache_creation_input_tokens" in counts:
            pairs.append(
                ("tokens_in", counts.get("input_tokens", 0) + counts.get("cache_creation_input_tokens", 0))
            )
        if "output_tokens" in counts:
            pairs.append(("tokens_out", counts["output_tokens"]))
        if "cache_read_input_tokens" in counts:
            pairs.append(("tokens_cached", counts["cache_read_input_tokens"]))
        return pairs

    def usage_fields(self, counts: dict[str, int], number: int) -> list[tuple[str, str]]:
        pairs = [(name, str(value)) for name, value in self.usage_values(counts)]
        if pairs:
            self.report.kept(
                "API usage (tokens_in= tokens_out= tokens_cached= on the message's lines)", number
            )
        return pairs

    def flush(self, tid: str | None) -> list[Line]:
        """The API message held for thread ``tid`` ends: its usage joins the totals (once)."""
        held = self.usage.pop(tid or "", None)
        if held is None:
            return []
        message_id, counts, _ = held
        values = self.usage_values(counts)
        for name, value in values:
            self.totals[name] += value
        if values:
            self.wrote_usage = True
        if message_id:
            self.counted[message_id] = None
            while len(self.counted) > REMEMBERED:
                self.counted.popitem(last=False)
        return []

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
        safe = _NAME_UNSAFE.sub("_", self.clean(head, number))
        if safe != head:
            first.append(("extra.name", self.clean(head, number)))
            self.report.extra("tool names that are not one word (extra.name=)", number)
        # The usage goes after the arrow (it is no argument of the call), as real writers put it.
        result = Result.build(status, rest=" ".join(f"{k}={v}" for k, v in usage))
        node: Event | None = None
        try:
            node = Call.build(kind, safe, fields=first + pairs + extra + fields, result=result)
        except ValueError:
            node = None
        if node is not None and any(node.fields.get(k) != v for k, v in usage):
            node = None  # a tool input key named like a usage field would win over it
        if node is None or len(node.raw) > self.limit:
            # Too long for one line: the input as JSON on continuation lines.
            lines = self.text_lines(_json(tool_input), number)
            self.report.synthesized("line breaks in tool inputs too long for one line", number)
            node = Call.build(
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
            return [], [("extra.input", self.clean(_json(value), number))]
        pairs: list[tuple[str, str]] = []
        rest: dict[str, Any] = {}
        for key, item in value.items():
            if not _FIELD_KEY.fullmatch(key) or key in self.typed or key.startswith("extra."):
                rest[key] = item
                continue
            text = item if isinstance(item, str) else _json(item)
            pairs.append((key, self.clean(text, number)))
        if pairs:
            self.report.kept("tool input keys (as fields; lists and objects as JSON)", number, len(pairs))
        if not rest:
            return pairs, []
        self.report.extra("tool input keys that cannot be field keys (extra.input= JSON)", number, len(rest))
        return pairs, [("extra.input", self.clean(_json(rest), number))]

    def todos(self, todos: list[Any], fields: list[tuple[str, str]], number: int) -> Event:
        items = []
        for todo in todos:
            if isinstance(todo, dict):
                status = todo.get("status")
                content = todo.get("content")
                status = status if isinstance(status, str) and status.strip() else "?"
                content = content if isinstance(content, str) else _json(content)
                items.append(f"[{' '.join(status.split())}] {' '.join(content.split())}".strip())
            else:
                self.report.kept("todo items that are not objects (as their text)", number)
                text = todo if isinstance(todo, str) else _json(todo)
                items.append(" ".join(text.split()))
        items = [self.clean(item, number) for item in items if item]
        try:
            node = Message.build("todos", " ".join(items), fields=fields)
            if all(node.fields.get(k) == v for k, v in fields) and len(node.raw) <= self.limit:
                return node
        except ValueError:
            pass
        lines = [piece for item in items for piece in self.text_lines(item, number)]
        return Message.build("todos", "", fields=fields, continuation=self.continuation(lines))

    # -- subagents ----------------------------------------------------------------------

    def subagent_before_result(
        self, block: dict[str, Any], record: dict[str, Any], number: int
    ) -> list[Line]:
        """The lines of the subagent log a ``Task`` result comes from (read from the file
        beside the session), written before the result; the result then names the log
        (:attr:`linked`)."""
        call = block.get("tool_use_id")
        if not self.subagents or not isinstance(call, str) or call not in self.subagent_calls:
            return []
        prompt = self.subagent_calls.pop(call)
        details = record.get("toolUseResult")
        agent = details.get("agentId") if isinstance(details, dict) else None
        if not (isinstance(agent, str) and agent in self.subagents):
            agent = self.agent_by_prompt(prompt)
        if agent is None:
            return []
        return self.read_subagent(agent, number, link=True)

    def agent_by_prompt(self, prompt: str | None) -> str | None:
        """The unread subagent log whose first user message is ``prompt`` (for results that
        do not name their agent id)."""
        if not prompt:
            return None
        for agent, log in self.subagents.items():
            first = _first_record(log)
            message = first.get("message") if first is not None else None
            if isinstance(message, dict) and message.get("content") == prompt:
                return agent
        return None

    def read_subagent(self, agent: str, number: int, *, link: bool) -> list[Line]:
        """A subagent log's records as lines of thread ``tid=<agent id>`` (the report names
        the session line that brought them in)."""
        log = self.subagents.pop(agent)
        shown = self.relative(log)
        first = _first_record(log)
        session = first.get("sessionId") if first is not None else None
        if session is not None and session != self.meta.get("session"):
            self.report.skip(number, f"subagent log {shown}: another session ({_short(str(session), 60)})")
            return []
        out: list[Line] = []
        saved = (self.forced_tid, self.line_no)
        self.forced_tid = self.clean(agent, number) if not _NAME_UNSAFE.search(agent) else SIDECHAIN_TID
        try:
            with log.open("rb") as lines:
                for raw in lines:
                    out += self.line(raw, number)
            out += self.flush(self.forced_tid)
        except OSError as error:
            self.report.skip(number, f"subagent log {shown}: cannot be read ({error.strerror})")
        finally:
            self.forced_tid, self.line_no = saved
        if link:
            self.linked[number] = (self.clean(agent, number), shown)
            self.report.kept("subagent logs beside the session (tid= lines before the Task result)", number)
        return out

    def relative(self, log: Path) -> str:
        if self.base is not None:
            try:
                return log.relative_to(self.base).as_posix()
            except ValueError:
                pass
        return log.as_posix()

    # -- other records -----------------------------------------------------------------

    def summary(self, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
        text = record.get("summary")
        if not isinstance(text, str):
            raise _Malformed("`summary` is not text")
        pairs: list[tuple[str, str]] = []
        leaf = record.get("leafUuid")
        if isinstance(leaf, str) and leaf:
            pairs.append(("leaf", self.clean(leaf, number)))
        self.report.kept("summary records (# notes: summary)", number)
        return [self.comment("notes: summary", pairs, text, number)]

    def comment(self, head: str, pairs: list[tuple[str, str]], text: str, number: int) -> Event:
        """A comment ``# head fields…`` with ``text`` on continuation lines."""
        return Comment.build(
            head, fields=pairs, continuation=self.continuation(self.text_lines(text, number))
        )

    def system(self, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
        subtype = record.get("subtype")
        content = record.get("content")
        text = content if isinstance(content, str) else ("" if content is None else _json(content))
        fields = self.fields(record, number, tid)
        if subtype == "compact_boundary":
            meta = record.get("compactMetadata")
            pairs: list[tuple[str, str]] = []
            if isinstance(meta, dict):
                if isinstance(meta.get("trigger"), str):
                    pairs.append(("reason", self.clean(meta["trigger"], number)))
                if type(meta.get("preTokens")) is int:
                    pairs.append(("tokens_before", str(meta["preTokens"])))
            self.report.kept("compact boundaries (@compact)", number)
            lines = self.text_lines(text, number)
            return [Lifecycle.build("compact", fields=pairs + fields, continuation=self.continuation(lines))]
        pairs = []
        if isinstance(subtype, str) and subtype:
            pairs.append(("subtype", self.clean(subtype, number)))
        level = record.get("level")
        if isinstance(level, str) and level:
            pairs.append(
                ("level" if level in vocabulary().levels else "extra.level", self.clean(level, number))
            )
        self.report.kept("system records (# notes: system)", number)
        return [self.comment("notes: system", pairs + fields, text, number)]

    def snapshot(self, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
        snapshot = record.get("snapshot")
        if not isinstance(snapshot, dict):
            raise _Malformed("`snapshot` is not an object")
        message_id = record.get("messageId", snapshot.get("messageId"))
        head = "file-snapshot:"
        if isinstance(message_id, str) and message_id:
            head += " " + _arg(self.clean(message_id, number))
        backups = snapshot.get("trackedFileBackups")
        pairs = [("files", str(len(backups)))] if isinstance(backups, (dict, list)) else []
        if backups:
            self.report.dropped("file backup details of file-history snapshots (their count is kept)", number)
        if record.get("isSnapshotUpdate") is True:
            pairs.append(("update", "true"))
        ts = snapshot.get("timestamp", record.get("timestamp"))
        pairs += self.fields({"timestamp": ts}, number, tid)
        self.report.kept("file-history snapshots (# file-snapshot:)", number)
        return [Comment.build(head, fields=pairs)]

    def queue(self, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
        operation = record.get("operation")
        if not isinstance(operation, str) or not operation:
            raise _Malformed("`operation` is not text")
        head = "queue: " + _arg(self.clean(operation, number))
        content = record.get("content")
        text = content if isinstance(content, str) else ("" if content is None else _json(content))
        lines = self.text_lines(text, number)
        fields = self.fields(record, number, tid)
        self.report.kept("queue operations (# queue:)", number)
        if len(lines) == 1 and len(lines[0]) <= INLINE:
            return [Comment.build(head + " " + _arg(lines[0]), fields=fields)]
        return [Comment.build(head, fields=fields, continuation=self.continuation(lines))]

    def progress(self, record: dict[str, Any], number: int, tid: str | None) -> list[Line]:
        call = record.get("toolUseID")
        name = self.open_tools.get(call) if isinstance(call, str) else None
        if name is None:
            self.report.dropped("progress records of no open tool call", number)
            return []
        data = record.get("data")
        pairs, extra = self.input_fields(data, number) if isinstance(data, dict) else ([], [])
        self.report.kept("progress records (t~:)", number)
        fields = [("id", self.clean(str(call), number)), *pairs, *extra, *self.fields(record, number, tid)]
        node = Call.build("tool_progress", name, fields=fields)
        if len(node.raw) > self.limit:
            self.report.dropped("progress data too long for one line", number)
            node = Call.build("tool_progress", name, fields=[fields[0], *self.fields(record, number, tid)])
        return [node]

    def unknown(self, kind: str, record: dict[str, Any], number: int) -> list[Line]:
        """A well-formed record of a type this reader does not know: a comment naming the
        type, the record as JSON on continuation lines."""
        self.report.kept("records of unknown types (as comments with their JSON)", number)
        lines = self.text_lines(_json(record), number)
        return [Comment.build("claude-code record " + _arg(self.clean(kind, number)), continuation=lines)]

    def unknown_block(self, block: dict[str, Any], number: int) -> Event:
        kind = block.get("type")
        name = self.clean(kind, number) if isinstance(kind, str) and kind else "untyped"
        self.report.kept("content blocks of unknown types (as comments with their JSON)", number)
        lines = self.text_lines(_json(block), number)
        return Comment.build("claude-code block " + _arg(name), continuation=lines)

    def drop_message_keys(self, message: dict[str, Any], number: int) -> None:
        for key in message:
            if key not in _MESSAGE_KEYS:
                self.report.dropped(f"`{_short(str(key), 40)}` message fields", number)

    # -- the end -----------------------------------------------------------------------

    def finish(self) -> list[Line]:
        out: list[Line] = []
        for agent, log in list(self.subagents.items()):
            # A subagent no Task result names (a session cut short): its log, at the end.
            lines = self.read_subagent(agent, self.line_no, link=False)
            if lines:
                self.report.kept("subagent logs no Task result names (at the end, tid= lines)", self.line_no)
                pairs = [("session_id", self.clean(agent, self.line_no)), ("path", self.relative(log))]
                out.append(Comment.build("notes: subagent", fields=pairs))
                out += lines
        for tid in list(self.usage):
            out += self.flush(tid or None)
        if self.wrote_usage:
            self.report.synthesized("closing token summary (# tokens_in=…, each message id once)", 0)
            out.append(Comment.build("", fields=[(name, str(value)) for name, value in self.totals.items()]))
        return out


#: Record keys a record type's mapping reads, beyond :data:`_READ_KEYS`.
_HANDLER_KEYS: dict[str, frozenset[str]] = {
    "user": frozenset({"message"}),
    "assistant": frozenset({"message"}),
    "summary": frozenset({"summary", "leafUuid"}),
    "system": frozenset({"subtype", "content", "level", "compactMetadata"}),
    "file-history-snapshot": frozenset({"snapshot", "messageId", "isSnapshotUpdate"}),
    "queue-operation": frozenset({"operation", "content"}),
    "progress": frozenset({"toolUseID", "data"}),
}


def _first_record(log: Path) -> dict[str, Any] | None:
    """The first JSON record of a log, or None."""
    try:
        with log.open("rb") as lines:
            for raw in lines:
                if raw.strip():
                    record = json.loads(raw)
                    return record if isinstance(record, dict) else None
    except (OSError, ValueError, RecursionError):
        return None
    return None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _arg(text: str) -> str:
    from bbox_lark.scan import render_arg

    return render_arg(text)


def _short(text: str, limit: int = 120) -> str:
    text = _UNSAFE.sub("\ufffd", text).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _image(block: dict[str, Any]) -> str:
    source = block.get("source")
    mime = source.get("media_type") if isinstance(source, dict) else None
    mime = mime if isinstance(mime, str) and mime and " " not in mime else "unknown"
    return f"[image {_UNSAFE.sub('', mime)}]"


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


FORMAT = Format(
    name=NAME,
    description="Claude Code session logs (JSON Lines), read only; docs/formats/claude-code.md",
    extensions=EXTENSIONS,
    sniff=sniff,
    read=read,
    write=None,
    fidelity="read only: conversation, tool calls and results, thinking, todos and usage are kept;"
    " record uuids and tool-specific result copies are dropped (reported)",
    lossless=False,
    options=(REPO_SHA,),
    import_mapping=IMPORT_MAPPING,
)
