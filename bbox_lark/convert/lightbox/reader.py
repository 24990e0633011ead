"""Lightbox → bbox: one call line per event, the chain verified while reading (see the
package's docstring)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bbox_lark.convert.base import (
    Input,
    ReadContext,
    RefusedInputError,
    clean_json,
    importer_header,
    json_type,
    overflow_lines,
)
from bbox_lark.convert.lightbox.tables import (
    FIELD_KEY,
    HEADER_KEY,
    INLINE_LIMIT,
    INTEGER_FIELDS,
    KNOWN_EVENT_KEYS,
    OWN_FIELDS,
    OWN_PREFIXES,
    PLAIN_FIELDS,
    PREFIXED_KINDS,
    REDACTED,
    SECRET,
    STATUSES,
    TOOL_CHARS,
)
from bbox_lark.convert.lightbox.values import (
    args_list,
    compact_json,
    json_lines,
    json_object,
    latency_between,
    one_line,
    scalar_text,
    string_list,
)
from bbox_lark.files.inputs import is_dir
from bbox_lark.syntax import build

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item
    from bbox_lark.syntax.nodes import Event, Result

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


# -- reading -----------------------------------------------------------------------------


def _redaction(value: Any) -> tuple[str, int | None] | None:
    """(kind, bytes) when ``value`` is one of the spec's redacted forms."""
    if value == REDACTED:
        return SECRET, None
    if isinstance(value, dict) and value.get("_redacted") is True:
        reason = value.get("_reason")
        kind = TOOL_CHARS.sub("_", reason) if isinstance(reason, str) and reason else "redacted"
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
        if key == "args" and args_list(value) and not line.args:
            line.args = [v if isinstance(v, str) else tuple(v) for v in value]
            continue
        plain = bool(FIELD_KEY.match(key)) and key not in OWN_FIELDS and not key.startswith(OWN_PREFIXES)
        redacted = _redaction(value)
        if plain and redacted is not None:
            kind, size = redacted
            line.fields.append((key, f"[redacted:{kind}]"))
            if size is not None:
                line.fields.append((f"redacted_bytes.input.{key}", size))
            report.kept("redacted input values", number)
            continue
        text = scalar_text(value)
        if plain and text is not None and (text == "" or text.strip()):
            line.fields.append((key, text))
        elif plain and string_list(value):
            line.fields.append((key, tuple(value)))
        else:
            line.awkward[key] = value


def _output_result(
    status: str, output: Any, error: Any, safe: bool
) -> tuple[Result | None, list[str], list[tuple[str, Any]]]:
    """The result, continuation lines and result fields (redaction sizes) of an event."""
    if status == "pending":
        return build.result("running"), [], []
    extra_fields: list[tuple[str, Any]] = []
    general = None if safe else _general_form(output)
    if status == "error":
        message = _error_message(error)
        if general is not None and general[0] is not None and general[0].kind == "error":
            return general[0], general[1], []
        try:
            result = build.result("error", message=message) if message else build.result("error")
        except ValueError:
            result = build.result("error")
        if general is not None and "result" not in output:  # the writer's form of an error's lines
            return result, general[1], []
        return result, ([] if output is None else json_lines(output)), []
    if output is None:
        return None, [], []
    if general is not None:
        return general[0], general[1], []
    if not safe and isinstance(output, dict) and output:
        flat: list[tuple[str, Any]] = []
        for key, value in output.items():
            redacted = _redaction(value)
            text = scalar_text(value)
            if not FIELD_KEY.match(key) or key.startswith(OWN_PREFIXES):
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
            elif string_list(value):
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
        inline = compact_json(output)
        if len(inline) <= INLINE_LIMIT and "\n" not in inline:
            built = _try_result("text", text=inline)
            if built is not None and json_object(built.text) == output:
                return built, [], []
    return build.result("empty"), json_lines(output), []


def _try_result(kind: str, **values: Any) -> Result | None:
    try:
        return build.result(kind, **values)
    except ValueError:
        return None


def _general_form(output: Any) -> tuple[Result | None, list[str]] | None:
    """What the writer makes of a bbox result: ``{"result": TEXT, "text": LINES}`` (either
    key alone too) read back; None when ``output`` is not of that form or would not read
    back the same."""
    from bbox_lark.syntax.transform import read_result

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
        if text and json_object(text) is not None:
            return None  # it would be read back as that object
    continuation: list[str] = []
    if lines is not None:
        continuation = lines.split("\n")
        if any(not c.strip() or "\r" in c for c in continuation):
            return None
        if (text is None or text == "") and json_object(lines) is not None:
            return None
    if text is None and lines is None:
        return None
    if result is None:
        result = build.result("empty")
    return result, continuation


def _error_message(error: Any) -> str | None:
    if isinstance(error, dict):
        for key in ("message", "type", "code"):
            value = error.get(key)
            if isinstance(value, str) and value.strip():
                return one_line(value).replace("[", "(").replace("]", ")")
        return one_line(compact_json(error)).replace("[", "(").replace("]", ")") if error else None
    if isinstance(error, str) and error.strip():
        return one_line(error).replace("[", "(").replace("]", ")")
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
                node = self._build(event, tool, invocation, status, number, safe)
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
            latency = latency_between(start, end)
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
            if (key in INTEGER_FIELDS and isinstance(value, int) and not isinstance(value, bool)) or (
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
            fields.append(("error", compact_json(error, ascii_only=True)))
        result, continuation, result_fields = _output_result(status, event.get("output"), error, safe)
        awkward = {k: v for k, v in line.awkward.items() if not k.startswith("(")}
        strays = {k: v for k, v in line.awkward.items() if k.startswith("(")}
        if awkward:
            fields.append(("input", compact_json(awkward, ascii_only=True)))
            report.kept("input entries as input= JSON (nested values, keys that are no field keys)", number)
        for key in sorted(strays):
            report.dropped(f"event fields of the wrong type ({key.strip('()')})", number)
        hashes = event.get("content_hashes")
        if isinstance(hashes, dict):
            for path, digest in hashes.items():
                key = f"content_hashes.{path}"
                if isinstance(digest, str) and FIELD_KEY.match(key) and digest.strip() and "\n" not in digest:
                    fields.append((key, digest))
                else:
                    raise ValueError(f"content_hashes entry {path!r} cannot be a field")
        elif hashes is not None:
            raise ValueError("content_hashes is not an object")
        fields.extend(result_fields)
        if kind == "tool" and status == "pending":
            kind = "tool_start"
        node: Event = build.call(
            kind, name, line.args, fields=fields, result=result, continuation=continuation
        )
        unknown = sorted(set(event) - KNOWN_EVENT_KEYS)
        for key in unknown:
            report.dropped(f"event fields unknown to Lightbox v1 ({key})", number)
        report.kept("events", number)
        # The chain is verified while reading; its hashes have no place on a bbox line.
        report.dropped("prev_hash and hash (verified, not written)", number)
        return node


def _kind_and_name(tool: str) -> tuple[str, str | None]:
    """The bbox kind and name a Lightbox tool name stands for: ``x:explore`` → a subagent
    line (as the writer names them), else a tool line (its name made safe when needed)."""
    prefix, colon, rest = tool.partition(":")
    if colon:
        for kind, letter in PREFIXED_KINDS.items():
            if letter == prefix:
                name = rest or None
                try:
                    build.call(kind, name, fields={"id": "i"})  # every event's line has an id=
                except ValueError:
                    break
                return kind, name
    try:
        build.call("tool", tool)
    except ValueError:
        return "tool", TOOL_CHARS.sub("_", tool).strip("_.-") or "tool"
    return "tool", tool


def _events_and_meta(source: Input) -> tuple[bytes, dict[str, Any], str]:
    """The events file's bytes, ``meta.json`` (or {}) and the name shown."""
    from bbox_lark.convert.lightbox.chain import events_file, meta_file

    path = source.path
    if path is not None and is_dir(path):
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
    from bbox_lark.convert.lightbox.chain import ANCHOR_KEY, Anchor

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
    if isinstance(saved, dict) and saved and all(isinstance(k, str) and FIELD_KEY.match(k) for k in saved):
        values = {key: value for key, value in saved.items() if _plain_yaml(value)}
        if session_id:
            values["id"] = session_id
        if ctx.options.get("repo_sha"):
            values["repo_sha"] = ctx.options["repo_sha"]
        if values.get("format") and values.get("id") and values.get("repo_sha"):
            try:
                head = build.head(values)
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
    """The session's header, then a call line per event (see the package's docstring)."""
    from bbox_lark.convert.lightbox.chain import SCHEMA_VERSION, Status, verify_bytes

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
