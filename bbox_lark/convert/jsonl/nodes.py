"""Nodes built from a record's values (a record without ``source``), in the full style and the
terse one."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from bbox_lark.convert.base import json_type
from bbox_lark.convert.jsonl.tables import TERSE_KEYS, RecordError
from bbox_lark.syntax import build
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import (
    BlankLine,
    Comment,
    Continuation,
    Event,
    Lifecycle,
    Message,
    Observation,
    Result,
    Unknown,
)

if TYPE_CHECKING:
    from bbox_lark.syntax.nodes import Line

# -- building nodes from values ------------------------------------------------------------


def build_record(record: dict[str, Any], kind: str, number: int, eol: str) -> Line:
    """The node of a full-style record without ``source``, built from its values."""
    if kind == "blank":
        return BlankLine(number, "", eol)
    if kind == "continuation":
        text = _string(record, "text")
        if not text.strip() or "\n" in text or text.endswith("\r"):
            raise RecordError("a continuation record needs 'text' on one line")
        return Continuation(number, "  " + text, eol)
    from bbox_lark.syntax.transform import node_class

    cls = node_class(kind)
    text = _string(record, "text", "")
    name = record.get("name")
    if name is not None and not isinstance(name, str):
        raise RecordError("'name' must be a string")
    fields = _fields(record.get("fields"), "fields")
    fields = _with_typed(fields, record.get("typed"))
    args = _args(record.get("args"))
    result = _result(record.get("result")) if record.get("result") is not None else None
    metrics = _fields(record.get("metrics"), "metrics") if record.get("metrics") is not None else None
    try:
        node: Event
        if cls is Message:
            node = build.message(kind, text, result=result, metrics=metrics)
            missing = {k: v for k, v in fields.items() if k not in node.fields}
            if missing:
                node = build.message(kind, text, fields=missing, result=result, metrics=metrics)
        elif cls is Comment:
            node = build.comment(text)
            missing = {k: v for k, v in fields.items() if k not in node.fields}
            if missing:
                node = build.comment(text, fields=missing)
        elif cls is Unknown:
            node = build.unknown(text)
        elif cls is Observation:
            node = build.observation(args, fields=fields, result=result, metrics=metrics)
        elif cls is Lifecycle:
            node = build.lifecycle(name or "", args, fields=fields, result=result, metrics=metrics)
        else:
            node = build.call(kind, name, args, fields=fields, result=result, metrics=metrics)
    except (ValueError, TypeError) as error:
        raise RecordError(f"cannot build a {kind} line from its values: {error}") from None
    return _placed(node, number, eol)


def _placed(node: Event, number: int, eol: str) -> Event:
    """A built node at its line, its emitted text taken as its source (so it is written and
    given its continuation lines like a parsed one)."""
    return replace(node, line=number, eol=eol, source=node.raw)


def _string(record: dict[str, Any], key: str, default: str | None = None) -> str:
    value = record.get(key, default)
    if not isinstance(value, str):
        raise RecordError(f"'{key}' must be a string")
    return value


def _fields(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError(f"'{what}' must be an object")
    found: dict[str, Any] = {}
    for key, item in value.items():
        found[key] = _field_value(item, f"{what}.{key}")
    return found


def _field_value(value: Any, what: str) -> str | list[str]:
    if isinstance(value, list):
        return [_scalar(item, what) for item in value]
    return _scalar(value, what)


def _scalar(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return json.dumps(value)
    raise RecordError(f"'{what}' must be a string, a number or a list of them")


def _with_typed(fields: dict[str, Any], typed: Any) -> dict[str, Any]:
    """Typed values a record gives without their source string, as fields."""
    if typed is None:
        return fields
    if not isinstance(typed, dict):
        raise RecordError("'typed' must be an object")
    fields = dict(fields)
    for key, value in typed.items():
        if key in fields:
            continue
        if key == "attempt" and isinstance(value, dict):
            number, of = value.get("number"), value.get("of")
            fields[key] = f"{_scalar(number, 'typed.attempt')}" + (
                f"/{_scalar(of, 'typed.attempt')}" if of is not None else ""
            )
        else:
            fields[key] = _scalar(value, f"typed.{key}")
    return fields


def _args(value: Any) -> list[str | list[str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError("'args' must be a list")
    return [_field_value(item, "args") for item in value]


def _result(value: Any) -> Result:
    """A result from its values (full style)."""
    if not isinstance(value, dict):
        raise RecordError("'result' must be an object")
    kind = value.get("kind", "text")
    text = value.get("text", "")
    if not isinstance(kind, str) or not isinstance(text, str):
        raise RecordError("'result': 'kind' and 'text' must be strings")
    blob = value.get("blob") or {}
    if not isinstance(blob, dict):
        raise RecordError("'result.blob' must be an object")
    choices = value.get("choices", [])
    if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        raise RecordError("'result.choices' must be a list of strings")
    try:
        if kind == "fields":
            return build.result("fields", fields=_fields(value.get("fields"), "result.fields"))
        if kind == "text":
            return build.result("text", text=text)
        return build.result(
            kind,
            number=_int(value.get("number")),
            unit=_opt_str(value.get("unit")),
            total=_int(value.get("total")),
            message=_opt_str(value.get("message")),
            choices=choices,
            sha256=_opt_str(blob.get("sha256")),
            size=_int(blob.get("bytes")),
            mime=_opt_str(blob.get("mime")),
            rest=_opt_str(value.get("rest")) or "",
        )
    except (ValueError, TypeError) as error:
        raise RecordError(f"'result': {error}") from None


def _int(value: Any) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise RecordError(f"{value!r} is not a whole number")


def _opt_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise RecordError(f"{value!r} is not a string")


# -- reading the terse style ---------------------------------------------------------------


def terse_node(record: dict[str, Any], number: int) -> Event:
    """The node of a terse record, built from its values."""
    vocab = vocabulary()
    prefix = record.get("t")
    if not isinstance(prefix, str):
        raise RecordError('a terse record needs \'t\' (a prefix such as "u" or "t")')
    if prefix != "@" and prefix not in vocab.prefix_kinds:
        raise RecordError(f"unknown terse type 't': {prefix!r}")
    args: list[Any] = []
    fields: dict[str, Any] = {}
    value = record.get("a")
    if isinstance(value, dict):
        fields.update(_fields(value, "a"))
    elif isinstance(value, list):
        args.extend(_args(value))
    elif value is not None:
        args.append(_scalar(value, "a"))
    if record.get("q") is not None:
        args.insert(0, _scalar(record["q"], "q"))
    fields.update(_fields(record.get("f"), "f"))
    for key, item in record.items():  # other keys (`"title": …` in the spec's example)
        if key not in TERSE_KEYS:
            fields.setdefault(key, _field_value(item, key))
    result = _terse_result(record["r"]) if record.get("r") is not None else None
    try:
        if prefix == "@":
            primitive = _string(record, "n")
            return _placed(
                build.lifecycle(primitive, args, fields=fields or None, result=result), number, "\n"
            )
        kind = vocab.prefix_kinds[prefix]
        if prefix in vocab.free_text_prefixes:
            text = _string(record, "c", "")
            node: Event = build.message(kind, text, fields=fields or None, result=result)
            return _placed(node, number, "\n")
        if kind == "observation":
            return _placed(build.observation(args, fields=fields or None, result=result), number, "\n")
        name = _terse_name(record, kind, args)
        return _placed(build.call(kind, name, args, fields=fields or None, result=result), number, "\n")
    except (ValueError, TypeError) as error:
        raise RecordError(f"cannot build a {prefix}: line from its values: {error}") from None


def _terse_name(record: dict[str, Any], kind: str, args: list[Any]) -> str | None:
    if kind == "mcp" and record.get("s") is not None:
        server = _scalar(record["s"], "s")
        method = record.get("m")
        return f"{server}.{_scalar(method, 'm')}" if method is not None else server
    if kind == "mode" and record.get("v") is not None:
        return _scalar(record["v"], "v")
    name = record.get("n")
    if name is None and kind == "plan" and args and isinstance(args[0], str):
        return str(args.pop(0))  # the spec's `{"t":"p","a":"create",…}`: the action is the name
    return None if name is None else _scalar(name, "n")


def _terse_result(value: Any) -> Result:
    """``"ok"``, ``{"lines": 186}``, ``186``, ``{"err": "msg"}``, a map (fields) or text."""
    from bbox_lark.syntax.transform import read_result

    vocab = vocabulary()
    try:
        if isinstance(value, str):
            if value in vocab.start_statuses or value in vocab.final_statuses:
                return build.result(value)
            return read_result(value.strip(), 1, 0)[0]
        if isinstance(value, int) and not isinstance(value, bool):
            return build.result("count", number=value)
        if isinstance(value, dict):
            if len(value) == 1:
                ((key, item),) = value.items()
                if key in ("err", "error") and isinstance(item, str):
                    return build.result("error", message=item)
                if isinstance(item, int) and not isinstance(item, bool):
                    return build.result("count", number=item, unit=key)
            return build.result("fields", fields=_fields(value, "r"))
    except ValueError as error:
        raise RecordError(f"'r': {error}") from None
    raise RecordError(f"'r' must be a string, a number or an object, not {json_type(value, article=True)}")
