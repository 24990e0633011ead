"""A bbox line as JSON values (``extra.bbox.lines`` records) and back, and the continuation
lines that carry what bbox has no line for (``| text``, ``+key JSON`` attachments)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from bbox_lark.convert.atif.tables import ATTACH_MARK, TEXT_MARK
from bbox_lark.syntax.nodes import BlankLine, Continuation

_ATTACH = re.compile(r"\+([A-Za-z_][A-Za-z0-9_]*)(?: (.*))?\Z", re.S)


# Characters a text line cannot hold as it is (line breaks, controls, lone surrogates).


UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029\ud800-\udfff\ufeff]")


_JSON_LINE = 4096
#: How the two forms of continuation lines start.
_MARKS = (ATTACH_MARK, TEXT_MARK)


# -- attachments: text and JSON values in continuation lines ----------------------------


def attachment(key: str, value: Any) -> list[str]:
    """The continuation texts of ``+key JSON`` (long JSON continued on ``+ …`` lines), in
    ASCII when the JSON holds a character a line cannot hold as it is."""
    text = json.dumps(value, ensure_ascii=False)
    ascii_only = bool(UNSAFE.search(text))
    if ascii_only:
        text = json.dumps(value, ensure_ascii=True)
    if len(text) <= _JSON_LINE:
        return [f"{ATTACH_MARK}{key} {text}"]
    pieces = json.dumps(value, ensure_ascii=ascii_only, indent=1).split("\n")
    return [f"{ATTACH_MARK}{key} {pieces[0]}", *(f"{ATTACH_MARK} {p}" for p in pieces[1:])]


def text_lines(text: str, key: str = "text") -> list[str]:
    """A text as ``| line`` continuation texts (``+key "…"`` when a line cannot hold it)."""
    if text == "":
        return []
    lines = text.split("\n")
    if any(UNSAFE.search(line) for line in lines):
        return attachment(key, text)
    return [TEXT_MARK + (" " + line if line else "") for line in lines]


def read_attachments(continuation: Iterable[Continuation]) -> tuple[str | None, dict[str, Any]]:
    """The text of ``| …`` lines (None when there are none) and the attachments. Continuation
    lines that follow neither form are text lines as they are."""
    plain = [line.text for line in continuation]
    joined = "\n".join(plain)
    if not (joined.startswith(_MARKS) or f"\n{ATTACH_MARK}" in joined or f"\n{TEXT_MARK}" in joined):
        return (joined if plain else None), {}  # no line in either form (a bbox document's output)
    texts: list[str] = []
    found: dict[str, Any] = {}
    key: str | None = None
    pending: list[str] = []

    def close() -> None:
        if key is not None:
            try:
                found[key] = json.loads("\n".join(pending))
            except ValueError:
                texts.append("\n".join(pending))

    for text in plain:
        if text.startswith(ATTACH_MARK + " ") and key is not None:
            pending.append(text[2:])
            continue
        match = _ATTACH.match(text)
        if match:
            close()
            key, pending = match[1], [match[2] or ""]
            continue
        close()
        key, pending = None, []
        if text == TEXT_MARK:
            texts.append("")
        elif text.startswith(TEXT_MARK + " "):
            texts.append(text[2:])
        else:
            texts.append(text)
    close()
    return ("\n".join(texts) if texts else None), found


# -- records: a bbox line as values, in JSON ----------------------------------------------


def _pairs(nodes: Iterable[Any]) -> list[list[Any]]:
    """Fields as ``[key, value]`` (``[key, value, true]`` when the value was quoted)."""
    return [
        [f.key, list(f.value) if isinstance(f.value, tuple) else f.value, *([True] if f.quoted else [])]
        for f in nodes
    ]


def _fields(pairs: Iterable[Any]) -> list[Any]:
    from bbox_lark.syntax.nodes import Field

    out: list[Any] = []
    for key, value, *quoted in pairs:
        value = tuple(value) if isinstance(value, list) else value
        out.append(Field(key, value, "", 0, 0, quoted=bool(quoted and quoted[0])))
    return out


def record(node: Any, n: int, *, continuation: bool = True) -> dict[str, Any]:
    """A body line as JSON values (what :func:`restore` builds it from again). Without
    ``continuation`` an event's continuation lines are left out (they are recorded as lines
    of their own, so that blank lines between them come back in place)."""
    from bbox_lark.syntax.build import values_of

    if isinstance(node, BlankLine):
        return {"n": n, "kind": "blank", "raw": node.raw}
    if isinstance(node, Continuation):
        return {"n": n, "kind": "continuation", "text": node.text}
    values = values_of(node)
    out: dict[str, Any] = {"n": n, "kind": node.kind if not node.oversized else "unknown"}
    for key, value in values.items():
        if key == "kind" or value is None:
            continue
        if key == "fields":
            if value:
                out["fields"] = _pairs(value)
        elif key == "metrics":
            out["metrics"] = _pairs(value)
        elif key == "args":
            if value:
                out["args"] = [list(a) if isinstance(a, tuple) else a for a in value]
        elif key == "result":
            out["result"] = value.text
        elif key == "continuation":
            if value and continuation:
                out["continuation"] = [c.text for c in value]
        else:
            out[key] = value
    return out


#: The keys of a :func:`record` besides ``n`` and ``kind``, with the JSON type of each.
_RECORD_KEYS = {
    "text": "string",
    "name": "string",
    "raw": "string",
    "result": "string",
    "args": "items",
    "continuation": "strings",
    "fields": "pairs",
    "metrics": "pairs",
}


def record_problem(rec: Mapping[str, Any]) -> str | None:
    """What makes ``rec`` no :func:`record` (a key of the wrong type, a key it never has),
    checked once before :func:`restore` builds anything; None when its shape is right."""
    from bbox_lark.convert.base import type_problem

    problem = type_problem("kind", rec.get("kind"), "string")
    if problem:
        return problem
    for key, value in rec.items():
        if key in ("n", "kind"):
            continue
        shape = _RECORD_KEYS.get(key)
        if shape is None:
            return f"`{key}` is not a key of a line record"
        if shape == "string":
            problem = type_problem(key, value, "string")
        elif not isinstance(value, list):
            problem = type_problem(key, value, "array")
        elif shape == "strings":
            problem = first_problem(type_problem(f"{key}[{i}]", v, "string") for i, v in enumerate(value))
        elif shape == "items":
            problem = first_problem(_item_problem(f"{key}[{i}]", v) for i, v in enumerate(value))
        else:
            problem = first_problem(_pair_problem(f"{key}[{i}]", v) for i, v in enumerate(value))
        if problem:
            return problem
    return None


def first_problem(problems: Iterable[str | None]) -> str | None:
    """The first problem found, else None."""
    return next((problem for problem in problems if problem), None)


def _item_problem(what: str, value: Any) -> str | None:
    """A positional argument or field value: a string, or an array of strings (a list)."""
    from bbox_lark.convert.base import type_problem

    problem = type_problem(what, value, "string", "array")
    if problem or isinstance(value, str):
        return problem
    return first_problem(type_problem(f"{what}[{i}]", v, "string") for i, v in enumerate(value))


def _pair_problem(what: str, value: Any) -> str | None:
    """A field as ``[key, value]`` or ``[key, value, true]``."""
    from bbox_lark.convert.base import type_problem

    problem = type_problem(what, value, "array")
    if problem:
        return problem
    if len(value) not in (2, 3):
        return f"`{what}` must be [key, value] or [key, value, quoted], got {len(value)} items"
    if len(value) == 3 and not isinstance(value[2], bool):
        return type_problem(f"{what}[2]", value[2], "boolean")
    return type_problem(f"{what}[0]", value[0], "string") or _item_problem(f"{what}[1]", value[1])


def restore(rec: Mapping[str, Any]) -> Any:
    """The body line a :func:`record` stands for (ValueError or KeyError when it is not one;
    :func:`record_problem` first tells a record of the wrong shape)."""
    from bbox_lark.syntax.build import from_values
    from bbox_lark.syntax.transform import read_result

    kind = rec["kind"]
    if kind == "blank":
        raw = rec.get("raw", "")
        if not isinstance(raw, str) or raw.strip():
            raise ValueError("a blank line holds only whitespace")
        return BlankLine(0, raw, "\n")
    if kind == "continuation":
        return Continuation(0, "  " + str(rec["text"]), "\n")
    values: dict[str, Any] = {"kind": kind}
    for key, value in rec.items():
        if key in ("n", "kind"):
            continue
        if key in ("fields", "metrics"):
            values[key] = _fields(value)
        elif key == "result":
            values[key] = read_result(value, 1, 0)[0]
        else:
            values[key] = value
    return from_values(kind, values)


# -- reading ----------------------------------------------------------------------------
