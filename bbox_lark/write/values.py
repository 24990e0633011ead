"""The values a :class:`bbox_lark.write.writer.Writer` writes: type checks that name the argument at
fault, conversion to text, the secret scan of a line's values together, and the small
predicates the Writer's lines are built with (``docs/writing.md``)."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from bbox_lark.syntax import build
from bbox_lark.syntax.nodes import Continuation, Event
from bbox_lark.syntax.scan import POINTER, UNWRITABLE, find_redactions, quote
from bbox_lark.syntax.source import DEFAULT_MAX_LINE
from bbox_lark.syntax.text import decode

#: A field, argument or list item as the Writer writes it.
Value = str | tuple[str, ...]


def typename(value: object) -> str:
    return type(value).__name__


def need_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {typename(value)}")
    return value


def scalar(value: object, what: str) -> str:
    """A field value, argument or list item that is one value, as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    raise TypeError(f"{what} must be a str, a number, a bool or a path, not {typename(value)}")


def as_json(value: object, what: str) -> str:
    """A mapping (or, as a result, a list) as JSON text."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as error:
        raise TypeError(f"{what}: a {typename(value)} JSON cannot write ({error})") from None


def header_value(value: object, what: str) -> Any:
    """A header value as YAML can write it and a reader reads it back: strings, numbers,
    booleans, None, dates (ISO 8601 text), lists and mappings of them."""
    if value is None or isinstance(value, (str, int, float)):
        return value
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {need_str(k, f"{what} key"): header_value(v, f"{what}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [header_value(v, f"{what}[{n}]") for n, v in enumerate(value)]
    raise TypeError(
        f"{what} must be a str, a number, a bool, None, a list or a mapping, not {typename(value)}"
    )


def is_binary(stream: object) -> bool:
    """True for a stream that takes bytes (``open(p, "wb")``, a socket's file, ``io.BytesIO``)."""
    if isinstance(stream, io.TextIOBase):
        return False
    if isinstance(stream, (io.RawIOBase, io.BufferedIOBase)):
        return True
    mode = getattr(stream, "mode", "")
    return isinstance(mode, str) and "b" in mode


#: The longest name (a tool, a method, a lifecycle primitive, a field key): a name cannot be
#: written text or a blob, so a longer one is a ValueError.
MAX_NAME = 1024


#: What a name cannot hold (the grammar has no written form for names): whitespace, the arrow,
#: control characters, lone surrogates, and the `@` of `@blob` (a blob pointer to every reader).
NAME_UNSAFE = re.compile(r"[\s→\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]|@(?=blob)")
KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")

#: The longest line the Writer writes a message, comment or error message into: the line
#: limit ``check`` applies by default, less room for the line's head and fields. Longer
#: text goes to the blob store.
LINE_ROOM = DEFAULT_MAX_LINE - 64 * 1024

METHODS = {
    "user": "user",
    "agent": "agent",
    "thinking": "thinking",
    "todos": "todos",
    "tool": "call",
    "mcp": "mcp",
    "subagent": "subagent",
    "skill": "skill",
    "plan": "plan",
    "question": "question",
}

PRIMITIVE_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def check_name(name: str, what: str) -> None:
    if len(name) > MAX_NAME:
        raise ValueError(f"{what} is {len(name)} characters long; a name is at most {MAX_NAME}")


def parts_of(context: str, value: Value) -> list[tuple[str, str]]:
    return [(context, item) for item in value] if isinstance(value, tuple) else [(context, value)]


def is_pointer(text: str) -> bool:
    """True for text that is exactly one complete blob pointer (``scan.quote`` keeps such a
    value a pointer; the Writer stores text given as one, so that it reads back as given)."""
    return text.startswith("@blob sha256=") and POINTER.fullmatch(text) is not None


def count_markers(text: str) -> int:
    """The redaction markers in a value as written (scan.quote writes no marker the value
    does not hold, so the line holds exactly these)."""
    return len(find_redactions(text, 0)) if "[redacted:" in text else 0


def markers_of(given: str, put: int, written: str) -> int:
    """The redaction markers in ``written``, a value the Writer made from the caller's
    ``given`` text by the secret scan (which put ``put`` markers in it) and, for a name, by
    replacing characters a name cannot hold. Counted from the scan's matches: text that held
    no ``[redacted:`` holds after the scan exactly the markers it put (each one whole: a
    kind is a word, and nothing before a marker can end in a part of ``[redacted:``; a
    replaced character becomes ``_``, which no marker's head holds). Text that already held
    one is counted as written (a secret beside a marker, or a name's replaced character,
    may make or unmake one): ``# redactions=N`` counts the caller's own markers too."""
    return put if "[redacted:" not in given else count_markers(written)


def plain_comment(text: str) -> Event:
    """A plain comment whose text reads back as ``text``: as written when it can be,
    else as written text."""
    if "\n" not in text and text == text.strip() and not UNWRITABLE.search(text) and decode(text) == text:
        try:
            node = build.comment(text)
        except ValueError:
            pass
        else:
            if node.name is None:
                return node
    return build.comment(quote(text))


def scanned(parts: list[tuple[str, str]]) -> list[str]:
    """Each part's text (``(context, text)``) with its secrets replaced by markers, the
    parts scanned as one text (``context`` and ``text`` of each, one space between
    parts), so that a value is judged beside its key and an argument beside the one
    before it, as a reader of the line sees them (docs/reference.md#secrets)."""
    return scan_counted(parts)[0]


def scan_counted(parts: list[tuple[str, str]]) -> tuple[list[str], list[int]]:
    """:func:`scanned`'s texts, and how many markers the scan put in each (one for each
    match that covers part of it: a match over two parts puts a marker in each)."""
    texts = [text for _, text in parts]
    put = [0] * len(texts)
    if not parts:
        return texts, put
    from bbox_lark.secrets.scanner import find_secrets, marker

    spans: list[tuple[int, int]] = []
    joined: list[str] = []
    at = 0
    for n, (context, text) in enumerate(parts):
        if n:
            joined.append(" ")
            at += 1
        joined += [context, text]
        at += len(context)
        spans.append((at, at + len(text)))
        at += len(text)
    whole = "".join(joined)
    found = find_secrets(whole)
    if not found:
        return texts, put
    out: list[str] = []
    for n, ((start, end), text) in enumerate(zip(spans, texts, strict=True)):
        pieces: list[str] = []
        at = start
        for match in found:
            lo, hi = max(match.start, start), min(match.end, end)
            if lo >= hi:
                continue
            pieces += [whole[at:lo], marker(match.kind)]
            put[n] += 1
            at = hi
        out.append("".join(pieces) + whole[at:end] if pieces else text)
    return out, put


@dataclass(slots=True)
class Resumed:
    """What the Writer reads from a file it appends to."""

    ids: set[str] = field(default_factory=set)
    step: int = 0
    started: bool = False
    markers: int = 0
    last_mark: int = 0
    #: The file's last line has no line ending (a line cut by a crash).
    cut: bool = False


def resume(path: Path) -> Resumed:
    """Before appending to ``path``: what the session there already holds (its call ids,
    so a new id never repeats one; its highest step; whether it has ``@start``; its
    redaction markers; its last elapsed mark; whether its last line was cut). Read as a
    stream; a file that cannot be read is appended to all the same."""
    from bbox_lark.syntax.parser import iter_nodes
    from bbox_lark.syntax.scan import line_redactions
    from bbox_lark.syntax.values import parse_elapsed

    found = Resumed()
    try:
        with open(path, "rb") as existing:
            for node in iter_nodes(existing):
                if isinstance(node, (Event, Continuation)):
                    found.markers += sum(1 for _ in line_redactions(node))
                if not isinstance(node, Event):
                    continue
                if node.kind == "lifecycle" and node.name == "start":
                    found.started = True
                elif node.kind == "comment" and node.name == "elapsed":
                    seconds = parse_elapsed(node.text[2:].split(None, 1)[0] if len(node.text) > 2 else "")
                    found.last_mark = max(found.last_mark, seconds or 0)
                call_id = node.fields.get("id")
                if isinstance(call_id, str):
                    found.ids.add(call_id)
                step = node.step
                if isinstance(step, int):
                    found.step = max(found.step, step)
            existing.seek(-1, os.SEEK_END)
            found.cut = existing.read(1) != b"\n"
    except (OSError, ValueError):
        pass
    return found


class Pointer(str):
    """A blob pointer the Writer made or was given: written as is, never scanned again."""

    __slots__ = ()


@lru_cache(maxsize=4096)
def safe_key(key: str, redact: bool) -> str:
    """A field key as the grammar reads it: a secret in it redacted, other characters
    replaced by ``_``, a leading ``_`` where it starts with neither a letter nor ``_``
    (ValueError when too long). Keys repeat on every line: each is worked out once."""
    if redact:
        (key,) = scanned([("", key)])
    safe = KEY_UNSAFE.sub("_", key) or "_"
    if not (safe[0].isalpha() or safe[0] == "_"):
        safe = "_" + safe
    check_name(safe, "a field key")
    return safe
