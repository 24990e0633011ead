"""Lightbox sessions (``../shared/spec/lightbox-event-format.md``) to bbox/1 and back.

``convert --from lightbox PATH`` reads a session folder (its ``events.jsonl`` and
``meta.json``) or an events file; ``convert --to lightbox -o DIR`` writes a hash-chained
``events.jsonl`` and a ``meta.json`` (with bbox-lark's anchor) that the reference recorder
verifies. ``docs/lightbox.md`` ("Converting") shows both directions with real output; the
mapping tables below are what ``docs/convert.md`` shows.

Reading, one call line per event:

- ``status=complete`` → ``t:TOOL id=INVOCATION ts=START latency_ms=N … → RESULT``;
  ``status=pending`` → ``t!:TOOL id=… → [running]``; the resolved event of a pending one (the
  same invocation id) → ``t:TOOL id=…`` again, which completes the start (docs/reference.md#correlation);
  ``status=error`` → ``→ [err: MESSAGE]``.
- ``latency_ms`` is ``timestamp_end - timestamp_start`` when that gives ``timestamp_end``
  back exactly (written in the start's style); else the end goes in ``ts_end=``.
- ``input``: each entry with a plain key and a string, integer, boolean or null value (or a
  list of strings) is a field; ``input.args`` (a list of strings) gives the positional
  arguments; every other entry (nested values, keys that cannot be field keys, keys this
  converter writes itself) goes into one field ``input=`` holding their JSON.
- ``output``: ``{"result": TEXT, "text": LINES}`` (what the writer makes of a bbox result)
  gives that result and continuation lines back; a flat object → a fields result
  (``→ conditions="Partly cloudy" humidity=65``); anything else → its JSON as the result
  when it fits on a short line, else as continuation lines (indented JSON).
- Redacted values (``"[REDACTED]"``, ``{"_redacted": true, "_reason": R, "_bytes": N}``) →
  ``[redacted:secret]`` / ``[redacted:R]`` markers; ``content_hashes`` →
  ``content_hashes.PATH=HASH`` fields, ``_bytes`` → ``redacted_bytes.PATH=N``.
- ``retry_of`` → ``retry_of=INV`` and ``attempt=N`` (1 + the attempt it retries);
  ``actor``, ``originating_actor``, ``parent_invocation``, ``chunk_count``,
  ``total_bytes`` → fields of the same names; ``error`` beyond ``{"message": …}`` →
  ``error=JSON``.
- ``session_id`` → the header's ``id`` (an event of another session gets ``session_id=``);
  ``meta.json``'s ``created_at`` and ``lightbox_version`` → header keys
  ``extra.lightbox_created_at`` and ``extra.lightbox_version`` (the whole bbox header when
  the writer saved it there, :data:`HEADER_KEY`); ``repo_sha:
  unknown`` unless ``--repo-sha`` (docs/reference.md#importers).
- The chain is verified (:func:`bbox_lark.lightbox.verify_bytes`) while reading: a chain that
  is not VALID is reported as a skipped record at its line (exit 1) and the events are
  converted as they stand. A line that is not an event (not JSON, not an object, no
  ``tool``/``invocation_id``, an unknown ``status``, a cut last line) is skipped with its
  line; the rest is converted.

Writing: every call (``t t! x c s p q``; lines of the kinds :data:`bbox_lark.correlate.FAMILIES`
names) is an event; a completion (a ``t:`` with the id of an open ``t!``, an ``o:`` with a
final result) is the resolved event of its start. Other lines (messages, comments,
lifecycle, ``m:`` ``r:`` ``t~``, unknown lines) have no place in Lightbox: dropped, counted
in the report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bbox_lark import lightbox
from bbox_lark.convert.base import (
    REPO_SHA,
    ConvertError,
    Format,
    Input,
    MappingRow,
    ReadContext,
    RefusedInputError,
    WriteContext,
    build_head,
    clean_json,
    collect,
    importer_header,
    json_type,
    overflow_lines,
)
from bbox_lark.grammar import vocabulary

if TYPE_CHECKING:
    from bbox_lark.ast import Event, Result
    from bbox_lark.convert.base import Item

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
_INTEGER_FIELDS = ("chunk_count", "total_bytes")
#: The typed fields this converter writes itself (one name each: the grammar's vocabulary
#: is not restated).
_ID = "id"
_TS = "ts"
_LATENCY = "latency_ms"
#: Field keys this converter writes itself; an ``input`` entry with one of them goes into
#: ``input=`` JSON so it never reads as one of them.
OWN_FIELDS = frozenset(
    {_ID, _TS, _LATENCY, "ts_end", "retry_of", "session_id", "input", "tool", "error"} | set(PLAIN_FIELDS)
)
_OWN_PREFIXES = ("content_hashes.", "redacted_bytes.")
#: Every field a Lightbox v1 event may have (the spec's two tables).
_KNOWN_EVENT_KEYS = frozenset((*lightbox.REQUIRED_FIELDS, *lightbox.OPTIONAL_FIELDS))
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_REDACTED = "[REDACTED]"
_SECRET = "secret"
_MARKER = re.compile(r"\[redacted:([^\[\]\s]*)\]\Z")
_TOOL_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


# -- detection ---------------------------------------------------------------------------


def sniff(text: str) -> int:
    """3 for a folder holding ``events.jsonl`` (``folder:PATH``, asked by the registry) or
    content whose first line is a Lightbox event; 2 when it starts like one but is cut."""
    if text.startswith("folder:"):
        folder = Path(text[len("folder:") :])
        return 3 if (folder / "events.jsonl").is_file() else 0
    first = next((line for line in text.lstrip("\ufeff").splitlines() if line.strip()), "")
    if not first.lstrip().startswith("{"):
        return 0
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        return 2 if '"invocation_id"' in first and '"prev_hash"' in first else 0
    if isinstance(value, dict) and {"invocation_id", "tool", "prev_hash"} <= value.keys():
        return 3
    return 0


# -- small helpers -----------------------------------------------------------------------


def _reject_float(literal: str) -> Any:
    raise ValueError(f"float {literal}")


def _json_object(text: str) -> dict[str, Any] | None:
    """``text`` read as a JSON object without floats, else None."""
    try:
        value = json.loads(text, parse_float=_reject_float, parse_constant=_reject_float)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _compact_json(value: Any, *, ascii_only: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"), sort_keys=False, default=str)


def _json_lines(value: Any) -> list[str]:
    """Indented JSON, ASCII only (so no character can end or break a line)."""
    return json.dumps(value, ensure_ascii=True, indent=2, default=str).split("\n")


def _scalar_text(value: Any) -> str | None:
    """A JSON scalar as a field value's text, else None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    return None


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _args_list(value: Any) -> bool:
    """Positional arguments: strings, and lists of strings (bracketed lists)."""
    return isinstance(value, list) and all(isinstance(v, str) or _string_list(v) for v in value)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _parse_time(value: Any) -> datetime | None:
    from bbox_lark.values import parse_timestamp

    return parse_timestamp(value) if isinstance(value, str) else None


def _render_time(moment: datetime, like: str) -> str:
    """``moment`` in milliseconds, in the style of ``like`` (``Z`` or an offset)."""
    text = moment.isoformat(timespec="milliseconds")
    if like.endswith("Z") and text.endswith("+00:00"):
        text = text[: -len("+00:00")] + "Z"
    return text


def _latency(start: Any, end: Any) -> int | None:
    """Milliseconds from ``start`` to ``end`` when ``end`` is ``start`` plus them, written
    as :func:`_render_time` writes it; else None."""
    began, ended = _parse_time(start), _parse_time(end)
    if began is None or ended is None or ended < began:
        return None
    millis = (ended - began) // timedelta(milliseconds=1)
    if _render_time(began + timedelta(milliseconds=millis), start) != end:
        return None
    return millis


# -- reading -----------------------------------------------------------------------------


def _redaction(value: Any) -> tuple[str, int | None] | None:
    """(kind, bytes) when ``value`` is one of the spec's redacted forms."""
    if value == _REDACTED:
        return _SECRET, None
    if isinstance(value, dict) and value.get("_redacted") is True:
        reason = value.get("_reason")
        kind = _TOOL_CHARS.sub("_", reason) if isinstance(reason, str) and reason else "redacted"
        size = value.get("_bytes")
        extra = set(value) - {"_redacted", "_reason", "_bytes"}
        if extra or (size is not None and (not isinstance(size, int) or isinstance(size, bool))):
            return None
        return kind, size
    return None


class _Line:
    """The values of the call line one event becomes."""

    def __init__(self) -> None:
        self.args: list[Any] = []
        self.fields: list[tuple[str, Any]] = []
        self.awkward: dict[str, Any] = {}


def _input_fields(event: dict[str, Any], line: _Line, report: Any, number: int, safe: bool) -> None:
    given = event.get("input")
    if given is None:
        return
    if not isinstance(given, dict):
        raise ValueError(f"input is a JSON {json_type(given)}, not an object")
    for key, value in given.items():
        if safe:
            line.awkward[key] = value
            continue
        if key == "args" and _args_list(value) and not line.args:
            line.args = [v if isinstance(v, str) else tuple(v) for v in value]
            continue
        plain = bool(_KEY.match(key)) and key not in OWN_FIELDS and not key.startswith(_OWN_PREFIXES)
        redacted = _redaction(value)
        if plain and redacted is not None:
            kind, size = redacted
            line.fields.append((key, f"[redacted:{kind}]"))
            if size is not None:
                line.fields.append((f"redacted_bytes.input.{key}", size))
            report.kept("redacted input values", number)
            continue
        text = _scalar_text(value)
        if plain and text is not None and (text == "" or text.strip()):
            line.fields.append((key, text))
        elif plain and _string_list(value):
            line.fields.append((key, tuple(value)))
        else:
            line.awkward[key] = value


def _output_result(
    status: str, output: Any, error: Any, safe: bool
) -> tuple[Result | None, list[str], list[tuple[str, Any]]]:
    """The result, continuation lines and result fields (redaction sizes) of an event."""
    from bbox_lark.ast import Result

    if status == "pending":
        return Result.build("running"), [], []
    extra_fields: list[tuple[str, Any]] = []
    general = None if safe else _general_form(output)
    if status == "error":
        message = _error_message(error)
        if general is not None and general[0] is not None and general[0].kind == "error":
            return general[0], general[1], []
        try:
            result = Result.build("error", message=message) if message else Result.build("error")
        except ValueError:
            result = Result.build("error")
        if general is not None and general[0] is None:
            return result, general[1], []
        return result, ([] if output is None else _json_lines(output)), []
    if output is None:
        return None, [], []
    if general is not None:
        return general[0], general[1], []
    if not safe and isinstance(output, dict) and output:
        flat: list[tuple[str, Any]] = []
        for key, value in output.items():
            redacted = _redaction(value)
            text = _scalar_text(value)
            if not _KEY.match(key) or key.startswith(_OWN_PREFIXES):
                flat = []
                break
            if redacted is not None:
                flat.append((key, f"[redacted:{redacted[0]}]"))
                if redacted[1] is not None:
                    extra_fields.append((f"redacted_bytes.output.{key}", redacted[1]))
            elif text is not None and (
                text == "" or (text.strip() and "\n" not in text and "\r" not in text)
            ):
                flat.append((key, text))
            elif _string_list(value):
                flat.append((key, tuple(value)))
            else:
                flat = []
                break
        if flat:
            built = _try_result("fields", fields=flat)
            if built is not None and len(built.text) <= INLINE_LIMIT:
                return built, [], extra_fields
        extra_fields = []
    if not safe:
        inline = _compact_json(output)
        if len(inline) <= INLINE_LIMIT and "\n" not in inline:
            built = _try_result("text", text=inline)
            if built is not None and _json_object(built.text) == output:
                return built, [], []
    return Result.build("empty"), _json_lines(output), []


def _try_result(kind: str, **values: Any) -> Result | None:
    from bbox_lark.ast import Result

    try:
        return Result.build(kind, **values)
    except ValueError:
        return None


def _general_form(output: Any) -> tuple[Result | None, list[str]] | None:
    """What the writer makes of a bbox result: ``{"result": TEXT, "text": LINES}`` (either
    key alone too) read back; None when ``output`` is not of that form or would not read
    back the same."""
    from bbox_lark.transform import read_result

    if not isinstance(output, dict) or not output or set(output) - {"result", "text"}:
        return None
    text, lines = output.get("result"), output.get("text")
    if any(v is not None and not isinstance(v, str) for v in (text, lines)):
        return None
    result = None
    if text is not None:
        if text != text.strip() or "\n" in text or "\r" in text:
            return None
        result = read_result(text, 1, 0)[0]
        if text and _json_object(text) is not None:
            return None  # it would be read back as that object
    continuation: list[str] = []
    if lines is not None:
        continuation = lines.split("\n")
        if any(not c.strip() or "\r" in c for c in continuation):
            return None
        if (text is None or text == "") and _json_object(lines) is not None:
            return None
    if text is None and lines is None:
        return None
    if result is None:
        from bbox_lark.ast import Result

        result = Result.build("empty")
    return result, continuation


def _error_message(error: Any) -> str | None:
    if isinstance(error, dict):
        for key in ("message", "type", "code"):
            value = error.get(key)
            if isinstance(value, str) and value.strip():
                return _one_line(value).replace("[", "(").replace("]", ")")
        return _one_line(_compact_json(error)).replace("[", "(").replace("]", ")") if error else None
    if isinstance(error, str) and error.strip():
        return _one_line(error).replace("[", "(").replace("]", ")")
    return None


class _Reader:
    """The state of one reading: open pending invocations, attempts, the header's id."""

    def __init__(self, ctx: ReadContext, session_id: str | None) -> None:
        self.ctx = ctx
        self.report = ctx.report
        self.session_id = session_id
        self.pending: dict[str, str] = {}
        self.attempts: dict[str, int] = {}

    def node(self, event: dict[str, Any], number: int) -> Event | None:
        """The call line of one event; None (and a skip) when it is not one."""
        from bbox_lark.ast import Call

        tool, invocation, status = event.get("tool"), event.get("invocation_id"), event.get("status")
        if not isinstance(tool, str) or not tool:
            self.report.skip(number, "no tool name (`tool` missing or not a string)")
            return None
        if not isinstance(invocation, str) or not invocation:
            self.report.skip(number, "no invocation_id")
            return None
        if status not in STATUSES:
            shown = json.dumps(status)[:40]
            self.report.skip(number, f"unknown status {shown} (expected pending, complete or error)")
            return None
        for safe in (False, True):
            try:
                node = self._build(Call, event, tool, invocation, status, number, safe)
            except ValueError as error:
                if safe:
                    self.report.skip(number, f"cannot be written as a bbox line: {error}")
                    return None
                continue
            break
        if status == "pending":
            self.pending[invocation] = tool
        else:
            self.pending.pop(invocation, None)
        return node

    def _build(
        self,
        call: Any,
        event: dict[str, Any],
        tool: str,
        invocation: str,
        status: str,
        number: int,
        safe: bool,
    ) -> Event:
        report = self.report
        kind, name = _kind_and_name(tool)
        line = _Line()
        fields = line.fields
        fields.append(("id", invocation))
        start, end = event.get("timestamp_start"), event.get("timestamp_end")
        if isinstance(start, str) and start:
            fields.append(("ts", start))
        if isinstance(end, str) and end and end != start:
            latency = _latency(start, end)
            fields.append(("latency_ms", latency) if latency is not None else ("ts_end", end))
        retry_of = event.get("retry_of")
        if isinstance(retry_of, str) and retry_of:
            fields.append(("retry_of", retry_of))
            attempt = self.attempts.get(retry_of, 1) + 1
            self.attempts[invocation] = attempt
            given = event.get("input")
            if not (isinstance(given, dict) and "attempt" in given):
                fields.append(("attempt", attempt))
                report.synthesized("attempt= fields (from retry_of)", number)
        for key in PLAIN_FIELDS:
            value = event.get(key)
            if (key in _INTEGER_FIELDS and isinstance(value, int) and not isinstance(value, bool)) or (
                isinstance(value, str) and value and "\n" not in value
            ):
                fields.append((key, value))
            elif value is not None:
                line.awkward[f"({key})"] = value
        session = event.get("session_id")
        if isinstance(session, str) and session != self.session_id:
            fields.append(("session_id", session))
        if kind == "tool" and name != tool:
            fields.append(("tool", tool))
        _input_fields(event, line, report, number, safe)
        error = event.get("error")
        if (
            status == "error"
            and error is not None
            and not (isinstance(error, dict) and set(error) <= {"message"} and not safe)
        ):
            fields.append(("error", _compact_json(error, ascii_only=True)))
        result, continuation, result_fields = _output_result(status, event.get("output"), error, safe)
        awkward = {k: v for k, v in line.awkward.items() if not k.startswith("(")}
        strays = {k: v for k, v in line.awkward.items() if k.startswith("(")}
        if awkward:
            fields.append(("input", _compact_json(awkward, ascii_only=True)))
            report.kept("input entries as input= JSON (nested values, keys that are no field keys)", number)
        for key in sorted(strays):
            report.dropped(f"event fields of the wrong type ({key.strip('()')})", number)
        hashes = event.get("content_hashes")
        if isinstance(hashes, dict):
            for path, digest in hashes.items():
                key = f"content_hashes.{path}"
                if isinstance(digest, str) and _KEY.match(key) and digest.strip() and "\n" not in digest:
                    fields.append((key, digest))
                else:
                    raise ValueError(f"content_hashes entry {path!r} cannot be a field")
        elif hashes is not None:
            raise ValueError("content_hashes is not an object")
        fields.extend(result_fields)
        if kind == "tool" and status == "pending":
            kind = "tool_start"
        node: Event = call.build(
            kind, name, line.args, fields=fields, result=result, continuation=continuation
        )
        unknown = sorted(set(event) - _KNOWN_EVENT_KEYS)
        for key in unknown:
            report.dropped(f"event fields unknown to Lightbox v1 ({key})", number)
        report.kept("events", number)
        # The chain is verified while reading; its hashes have no place on a bbox line.
        report.dropped("prev_hash and hash (verified, not written)", number)
        return node


def _kind_and_name(tool: str) -> tuple[str, str | None]:
    """The bbox kind and name a Lightbox tool name stands for: ``x:explore`` → a subagent
    line (as the writer names them), else a tool line (its name made safe when needed)."""
    from bbox_lark.ast import Call

    prefix, colon, rest = tool.partition(":")
    if colon:
        for kind, letter in PREFIXED_KINDS.items():
            if letter == prefix:
                name = rest or None
                try:
                    Call.build(kind, name)
                except ValueError:
                    break
                return kind, name
    try:
        Call.build("tool", tool)
    except ValueError:
        return "tool", _TOOL_CHARS.sub("_", tool).strip("_.-") or "tool"
    return "tool", tool


def _events_and_meta(source: Input) -> tuple[bytes, dict[str, Any], str]:
    """The events file's bytes, ``meta.json`` (or {}) and the name shown."""
    from bbox_lark.lightbox import events_file, meta_file

    path = source.path
    if path is not None and path.is_dir():
        found, why = events_file(path)
        if found is None:
            raise RefusedInputError((why or "not a Lightbox session").removeprefix(f"{path}: "))
        events_path: Path | None = found
        data = found.read_bytes()
    else:
        events_path = path
        data = source.read_bytes()
    meta: dict[str, Any] = {}
    meta_path = meta_file(events_path) if events_path is not None else None
    if meta_path is not None and meta_path.is_file():
        try:
            loaded = json.loads(meta_path.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            loaded = None
        if isinstance(loaded, dict):
            meta = loaded
    return data, meta, str(events_path) if events_path is not None else source.shown


def _anchor(meta: dict[str, Any]) -> Any:
    from bbox_lark.lightbox import ANCHOR_KEY, Anchor

    value = meta.get(ANCHOR_KEY)
    if isinstance(value, dict):
        head, count = value.get("head"), value.get("events")
        if (head is None or isinstance(head, str)) and isinstance(count, int) and not isinstance(count, bool):
            return Anchor(head, count)
    return None


def _decode(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """One line's event, or why it is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"not valid UTF-8 (byte {error.start + 1})"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"not JSON: {error.msg} (column {error.colno})"
    except (ValueError, RecursionError):
        return None, "not JSON (a number too long or nesting too deep)"
    if not isinstance(value, dict):
        return None, f"a JSON {json_type(value)}, not an event object"
    return value, None


#: What :func:`clean_json` replaced, as the report says it.
_REPLACED = "NUL characters and lone surrogates in JSON strings (written as U+FFFD)"


def _header(ctx: ReadContext, session_id: str | None, header: dict[str, Any], saved: Any) -> Any:
    """The bbox header: the one the writer saved in ``meta.json`` (:data:`HEADER_KEY`) when
    there is one (its ``id`` replaced by the session id), else an importer's header."""
    if isinstance(saved, dict) and saved and all(isinstance(k, str) and _KEY.match(k) for k in saved):
        values = {key: value for key, value in saved.items() if _plain_yaml(value)}
        if session_id:
            values["id"] = session_id
        if ctx.options.get("repo_sha"):
            values["repo_sha"] = ctx.options["repo_sha"]
        if values.get("format") and values.get("id") and values.get("repo_sha"):
            try:
                head = build_head(values)
            except Exception:
                head = None
            if head is not None and head.header_info is not None and not head.header_info.faults:
                ctx.report.kept("header keys (from meta.json's bbox_header)", 0, len(values))
                return head
    return importer_header(ctx, session_id, **header)


def _plain_yaml(value: Any) -> bool:
    """Strings, and lists and maps of them: what a bbox header holds."""
    if isinstance(value, str):
        return True
    if isinstance(value, list):
        return all(_plain_yaml(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_yaml(v) for k, v in value.items())
    return False


def read(source: Input, ctx: ReadContext) -> Iterator[Item]:
    """The session's header, then a call line per event (see the module's docstring)."""
    from bbox_lark.lightbox import SCHEMA_VERSION, Status, verify_bytes

    report = ctx.report
    data, meta, shown = _events_and_meta(source)
    meta, replaced = clean_json(meta)
    if replaced:
        ctx.report.dropped(_REPLACED, 0, replaced)
    verification = verify_bytes(data, anchor=_anchor(meta), path=shown)
    lines = data.splitlines(keepends=True)
    decoded: list[tuple[int, dict[str, Any] | None, str | None]] = []
    for number, raw in enumerate(lines, 1):
        body = raw.rstrip(b"\r\n")
        if not body.strip():
            continue
        event, why = _decode(body)
        if event is not None:
            event, replaced = clean_json(event)
            if replaced:
                ctx.report.dropped(_REPLACED, number, replaced)
        if why is not None and number == len(lines) and not raw.endswith((b"\n", b"\r")):
            why = f"last line cut while it was written? {why}"
        decoded.append((number, event, why))
    session_id = meta.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        session_id = next(
            (
                e["session_id"]
                for _, e, _ in decoded
                if e is not None and isinstance(e.get("session_id"), str)
            ),
            None,
        )
    header: dict[str, Any] = {}
    for key, name in (
        ("created_at", "extra.lightbox_created_at"),
        ("lightbox_version", "extra.lightbox_version"),
    ):
        value = meta.get(key)
        if isinstance(value, str) and value and "\n" not in value:
            header[name] = value
    head = _header(ctx, session_id, header, meta.get(HEADER_KEY))
    yield head
    reader = _Reader(ctx, session_id)
    origin: dict[int, tuple[int, int]] = {}
    report.origin = lambda line: origin.get(line, (line, 0))
    number_out = 0
    head_lines = head.body_start - 1 + overflow_lines(ctx)
    warned_version = False
    skipped_lines: set[int] = set()
    for number, event, why in decoded:
        if event is None:
            report.skip(number, why or "not an event")
            skipped_lines.add(number)
            continue
        node = reader.node(event, number)
        if node is None:
            skipped_lines.add(number)
            continue
        version = event.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION and not warned_version:
            warned_version = True
            skipped_lines.add(number)
            report.skip(
                number,
                f"schema_version {json.dumps(version)[:20]} is not {SCHEMA_VERSION}; converted as version 1",
            )
        number_out += 1
        at = head_lines + number_out
        origin[at] = (number, 0)
        node = replace(
            node,
            line=at,
            continuation=tuple(replace(c, line=at + n, owner=at) for n, c in enumerate(node.continuation, 1)),
        )
        for n in range(1, len(node.continuation) + 1):
            origin[at + n] = (number, 0)
        number_out += len(node.continuation)
        yield node
    if verification.status is not Status.VALID and verification.line not in skipped_lines:
        where = verification.line or (decoded[-1][0] if decoded else 1)
        report.skip(
            where,
            f"hash chain {verification.status.name}: {verification.reason}"
            " (the events were converted as they stand)",
        )
    for invocation in reader.pending:
        report.note("kept", f"pending events never resolved ({invocation})")


# -- writing -----------------------------------------------------------------------------


def _restore(value: Any, key_path: str, redacted_bytes: dict[str, str]) -> Any:
    """A field value back to Lightbox: a redaction marker → the spec's redacted form."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, str):
        match = _MARKER.match(value)
        if match:
            kind = match[1]
            if kind == _SECRET:
                return _REDACTED
            restored: dict[str, Any] = {"_redacted": True, "_reason": kind}
            size = redacted_bytes.get(key_path)
            if size is not None and size.isdigit():
                restored["_bytes"] = int(size)
            return restored
    return value


def _output_of(event: Event, error: bool) -> Any:
    """The output object of a call's result and continuation lines (see the mapping)."""
    result = event.result
    texts = [c.text for c in event.continuation]
    redacted_bytes = {
        f.key[len("redacted_bytes.") :]: f.value
        for f in event.field_nodes
        if f.key.startswith("redacted_bytes.") and isinstance(f.value, str)
    }
    if result is not None and not texts and not error:
        if result.kind == "fields":
            after = [f for f in event.field_nodes if f.after_arrow]
            output: dict[str, Any] = {}
            for f in after:
                output.setdefault(f.key, _restore(f.value, f"output.{f.key}", redacted_bytes))
            return output
        found = _json_object(result.text) if result.kind == "text" else None
        if found is not None:
            return found
    if texts and (result is None or not result.text):
        found = _json_object("\n".join(texts))
        if found is not None:
            return found
    made: dict[str, Any] = {}
    if result is not None and not (error and not result.rest):
        made["result"] = result.text
    if texts:
        made["text"] = "\n".join(texts)
    return made or None


class _Writer:
    def __init__(self, ctx: WriteContext, header: dict[str, Any]) -> None:
        self.report = ctx.report
        session = header.get("id")
        if not isinstance(session, str) or not session:
            session = "bbox-session"
            self.report.synthesized("session_id (the header has no id)", 0)
        self.session_id = session
        self.last_ts: str | None = None
        #: Invocation id -> attempt number, as the reader counts them from ``retry_of``.
        self.attempts: dict[str, int] = {}
        for key in HEADER_TIMES:
            value = header.get(key)
            if isinstance(value, str) and _parse_time(value) is not None:
                self.last_ts = value
                break

    def implied_attempt(self, event: Event) -> str | None:
        """The ``attempt=`` the reader writes for ``event``'s ``retry_of=`` (None without)."""
        retry_of = event.fields.get("retry_of")
        if not isinstance(retry_of, str) or not retry_of:
            return None
        return str(self.attempts.get(retry_of, 1) + 1)

    def timestamp(self, event: Event) -> str:
        own = event.ts
        if own is not None:
            self.last_ts = own
            return own
        if self.last_ts is not None:
            self.report.synthesized("timestamps (the previous known ts=)", event.line)
            return self.last_ts
        self.report.synthesized(f"timestamps ({EPOCH}: no earlier ts= and none in the header)", event.line)
        return EPOCH


_TOP_FIELDS = ("actor", "originating_actor", "parent_invocation", "retry_of")


def _event_values(
    event: Event, writer: _Writer, invocation: str, tool: str, status: str, resolved: bool
) -> dict[str, Any]:
    report = writer.report
    start = writer.timestamp(event)
    given: dict[str, Any] = {}
    redacted_bytes = {
        f.key[len("redacted_bytes.") :]: f.value
        for f in event.field_nodes
        if f.key.startswith("redacted_bytes.") and isinstance(f.value, str)
    }
    if event.args:
        given["args"] = [list(a) if isinstance(a, tuple) else a for a in event.args]
    values: dict[str, Any] = {
        "schema_version": "1",
        "session_id": writer.session_id,
        "invocation_id": invocation,
        "tool": tool,
        "status": status,
        "timestamp_start": start,
    }
    hashes: dict[str, str] = {}
    seen: set[str] = set()
    for f in event.field_nodes:
        key, value = f.key, f.value
        if f.after_arrow or key in seen:
            continue
        seen.add(key)
        if key in (_ID, _TS, _LATENCY, "ts_end", "tool", "error") or key.startswith("redacted_bytes."):
            continue
        if key == "session_id" and isinstance(value, str):
            values["session_id"] = value
        elif key in _TOP_FIELDS and isinstance(value, str):
            values[key] = value
        elif key == "attempt" and value == writer.implied_attempt(event):
            continue  # the reader gives it back from retry_of
        elif key in _INTEGER_FIELDS and isinstance(value, str) and value.isdigit() and len(value) < 19:
            values[key] = int(value)
        elif key.startswith("content_hashes.") and isinstance(value, str):
            hashes[key[len("content_hashes.") :]] = value
        elif key == "input" and isinstance(value, str) and _json_object(value) is not None:
            for inner, item in (_json_object(value) or {}).items():
                given.setdefault(inner, item)
        elif key == "args" and event.args:
            report.dropped("args= fields beside positional arguments", event.line)
        else:
            given[key] = _restore(value, f"input.{key}", redacted_bytes)
    implied = writer.implied_attempt(event)
    if implied is not None:
        writer.attempts[invocation] = int(implied)
    if hashes:
        values["content_hashes"] = hashes
    values["input"] = given
    if status == "pending":
        values["output"] = None
        values["timestamp_end"] = None
        if event.result is not None and event.result.kind != "running":
            report.dropped("start results other than [running] (a pending event has no output)", event.line)
        return values
    error = status == "error"
    values["output"] = _output_of(event, error)
    if error:
        raw = event.fields.get("error")
        found = _json_object(raw) if isinstance(raw, str) else None
        message = event.result.message if event.result is not None else None
        values["error"] = found if found is not None else ({"message": message} if message else {})
    end = event.fields.get("ts_end")
    latency = event.latency_ms
    began = _parse_time(start)
    if isinstance(end, str) and end:
        values["timestamp_end"] = end
    elif latency is not None and began is not None:
        values["timestamp_end"] = _render_time(began + timedelta(milliseconds=latency), start)
    else:
        values["timestamp_end"] = start
        report.synthesized("timestamp_end (= timestamp_start: no latency_ms= or ts_end=)", event.line)
    del resolved
    return values


def _tool_name(event: Event) -> str:
    tool = event.fields.get("tool")
    if event.kind in ("tool", "tool_start") and isinstance(tool, str) and tool:
        return tool
    letter = PREFIXED_KINDS.get(event.kind)
    if letter is not None:
        return f"{letter}:{event.name or ''}"
    return event.name or "tool"


def _status(event: Event) -> str:
    from bbox_lark.correlate import is_start

    if is_start(event):
        return "pending"
    if event.result is not None and event.result.kind == "error":
        return "error"
    return "complete"


def write(items: Iterable[Item], out: TextIO, ctx: WriteContext) -> None:
    """The document's calls as a Lightbox session in ``ctx.path`` (see the mapping)."""
    from bbox_lark.ast import Continuation, Event
    from bbox_lark.correlate import COMPLETION, FAMILIES, Pairer
    from bbox_lark.lightbox import write_session

    del out
    if ctx.path is None:
        raise ConvertError("lightbox output is a folder: give -o DIR")
    report = ctx.report
    head, body = collect(items)
    header = dict(head.header_info.fields) if head.header_info is not None else {}
    writer = _Writer(ctx, header)
    events = [node for node in body if isinstance(node, Event)]
    owners = {id(c) for e in events for c in e.continuation}
    # Invocation ids: id= when present and not taken by an earlier call, else inv_NNNNN.
    taken = {e.id for e in events if e.id}
    pairer = Pairer()
    by_index: dict[int, str] = {}  # renumbered line of a start -> its invocation id
    tools: dict[int, str] = {}
    used: set[str] = set()
    counter = 0
    written: list[dict[str, Any]] = []

    def synthesize() -> str:
        nonlocal counter
        while True:
            counter += 1
            made = f"inv_{counter:05d}"
            if made not in taken and made not in used:
                return made

    for index, event in enumerate(events, 1):
        outcome = pairer.feed(replace(event, line=index))
        if outcome == COMPLETION:
            started = pairer.completed
            invocation = by_index.get(started)
            if invocation is None:  # pragma: no cover - every start is registered
                continue
            tool = tools[started]
            status = "error" if event.result is not None and event.result.kind == "error" else "complete"
            written.append(_event_values(event, writer, invocation, tool, status, True))
            report.kept(f"{event.kind} lines completing a start (resolved events)", event.line)
            continue
        if event.kind not in FAMILIES:
            if event.ts is not None:
                writer.last_ts = event.ts
            what = "comment" if event.kind == "comment" else event.kind
            report.dropped(f"{what} lines (Lightbox has no place for them)", event.line)
            for c in event.continuation:
                report.dropped("their continuation lines", c.line)
            continue
        own = event.id
        if own and own not in used:
            invocation = own
        else:
            invocation = synthesize()
            why = "repeated" if own else "none"
            report.synthesized(f"invocation ids (id= {why}: inv_NNNNN)", event.line)
        used.add(invocation)
        by_index[index] = invocation
        tool = _tool_name(event)
        tools[index] = tool
        written.append(_event_values(event, writer, invocation, tool, _status(event), False))
        report.kept(f"{event.kind} lines", event.line)
    for node in body:
        if isinstance(node, Continuation) and id(node) not in owners and node.owner is None:
            report.dropped("continuation lines without an event", node.line)
    meta: dict[str, Any] = {"session_id": writer.session_id}
    if header:
        meta[HEADER_KEY] = header
        report.extra("header keys (in meta.json's bbox_header)", 0, len(header))
    created = next((header[k] for k in HEADER_TIMES[:2] if isinstance(header.get(k), str)), None)
    if isinstance(created, str) and created:
        meta["created_at"] = created
    elif not written:
        meta["created_at"] = EPOCH
    try:
        write_session(ctx.path, written, meta, overwrite=True)
    except OSError as error:
        raise ConvertError(f"{ctx.path}: cannot write: {error.strerror or error}") from None
    except ValueError as error:  # pragma: no cover - the values are built to be valid
        raise ConvertError(f"{ctx.path}: cannot write the session: {error}") from None


FORMAT = Format(
    name="lightbox",
    description="Lightbox sessions: hash-chained events.jsonl + meta.json (a folder)",
    extensions=EXTENSIONS,
    sniff=sniff,
    read=read,
    write=write,
    fidelity=(
        "calls only (names, ids, arguments, fields, results, timing); messages, comments and"
        " lifecycle lines are dropped and reported"
    ),
    lossless=False,
    options=(REPO_SHA,),
    output="folder",
    reads_folders=True,
    export_mapping=(
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
            "`id` → `session_id`; the whole header in `meta.json`"
            " (`bbox_header`, which the reference ignores)",
            "extra",
        ),
        MappingRow(
            "messages, thinking, todos, comments, lifecycle, `m:` `r:` `t~:` lines, unknown lines",
            "nothing: Lightbox has no place for them",
            "dropped",
            "counted per kind in the report",
        ),
    ),
    import_mapping=(
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
    ),
)
