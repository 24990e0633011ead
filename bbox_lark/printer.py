"""Printing documents: the lossless printer and the canonical formatter (DECISIONS §7, §10).

:func:`dumps` gives back the exact input of :func:`bbox_lark.parse`: every node keeps its
source text and line ending, so printing is concatenation and nothing is ever rebuilt.

:func:`format_document` writes the canonical form that ``bbox-lark fmt`` produces. Each body
line is rebuilt from the parts the parser found (prefix, name, call text, arrow, result,
trailing metrics comment), with whitespace between words and fields collapsed to one space.
The header, continuation lines, quoted strings and every word are kept as written. See
``docs/fmt.md`` for the full list of rules.

Meaning is never changed: every rewritten line is parsed again and compared with the
original through :func:`line_signature` (the line with its trivia left out). A line whose
canonical rewrite would read differently (a corner such as ``u:# metrics``, where adding the
canonical space would start a metrics comment) is kept as written.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from bbox_lark.ast import BlankLine, Continuation, Document, Event, Field, Line, Result
from bbox_lark.source import BOM

#: Prefixes whose name follows the colon with no space (DECISIONS §3, §10).
NAMED_PREFIXES = frozenset({"t", "t!", "t~", "s", "p", "x", "c", "m"})
#: The canonical result arrow.
ARROW = "→"

_WS = re.compile(r"\s+")
_NON_WS = re.compile(r"\S+")
_METRICS = "# metrics"


def dumps(document: Document) -> str:
    """The document's exact source text: ``dumps(parse(text)) == text`` for every input
    (bytes inputs come back as text decoded with ``surrogateescape``; see
    :func:`bbox_lark.source.encode`)."""
    parts = [BOM] if document.bom else []
    parts.extend(line.raw + line.eol for line in document.header_lines)
    parts.extend(line.raw + line.eol for line in document.lines)
    return "".join(parts)


def format_document(document: Document) -> str:
    """The canonical form of a document (``bbox-lark fmt``). Idempotent; the BOM, the
    header, every line ending and continuation line are kept; a whitespace-only last line
    without a line ending (trailing whitespace of the file) is dropped."""
    parts = [BOM] if document.bom else []
    parts.extend(line.raw + line.eol for line in document.header_lines)
    for line in document.lines:
        text = format_line(line)
        if not text and not line.eol:
            continue
        parts.append(text + line.eol)
    return "".join(parts)


def format_line(node: Line) -> str:
    """One body line in canonical form (without its line ending)."""
    if isinstance(node, Continuation):
        return node.raw
    if isinstance(node, BlankLine):
        return ""
    canonical = canonical_line(node)
    if canonical == node.raw:
        return canonical
    from bbox_lark.parser import parse_line

    if line_signature(parse_line(canonical)) != line_signature(node):
        return node.raw
    return canonical


def canonical_line(event: Event) -> str:
    """The canonical rewrite of an event line, built from its parts, *without* the check
    that it still means the same (:func:`format_line` does that)."""
    raw = event.raw
    if event.oversized:
        return raw
    if event.kind == "unknown":
        stripped = raw.rstrip()
        # A body line never becomes a header fence by losing its trailing whitespace.
        return raw if _is_fence(stripped) and not _is_fence(raw) else stripped
    if event.kind == "comment":
        if event.name is None:
            return raw.rstrip()
        return "# " + _words(raw, event.text_col - 1, len(event.text))
    head, head_end = _head(event)
    out = [head]
    end = head_end
    if event.text:
        out += [" ", _words(raw, event.text_col - 1, len(event.text))]
        end = event.text_col - 1 + len(event.text)
    result = event.result
    if event.arrow is not None and event.arrow_col is not None:
        out.append(" " + ARROW)
        end = event.arrow_col - 1 + len(event.arrow)
        if result is not None and result.text:
            out += [" ", _words(raw, result.col - 1, len(result.text))]
            end = result.col - 1 + len(result.text)
    if event.metrics is not None:
        tail = raw[end:]
        start = tail.find(_METRICS)
        if start < 0 or tail[:start].strip():
            return raw
        body_start = end + start + len(_METRICS)
        body = raw[body_start:]
        lead = len(body) - len(body.lstrip())
        words = _words(raw, body_start + lead, len(body.strip()))
        out.append(" " + _METRICS + (" " + words if words else ""))
    return "".join(out)


def _head(event: Event) -> tuple[str, int]:
    """The canonical line head (``t:read``, ``u:``, ``@start``) and the offset in ``raw``
    where the source head ends."""
    if event.kind == "lifecycle":
        name = event.name or ""
        return "@" + name, 1 + len(name)
    prefix = event.prefix
    if prefix in NAMED_PREFIXES and event.name is not None and event.name_col is not None:
        return f"{prefix}:{event.name}", event.name_col - 1 + len(event.name)
    return f"{prefix}:", len(prefix) + 1


# -- words -----------------------------------------------------------------------------


@cache
def _protected() -> re.Pattern[str]:
    """Quoted strings and lists, where they open (DECISIONS §9): at the start of the text or
    after whitespace, ``=``, ``[`` or ``,``. The QUOTED and LIST patterns come from
    ``grammar/bbox.lark``."""
    from bbox_lark.parser import terminal_pattern

    quoted, list_ = terminal_pattern("QUOTED"), terminal_pattern("LIST")
    return re.compile(rf"(?:^|(?<=[\s=\[,]))(?:{quoted}|{list_})")


@cache
def _fence() -> re.Pattern[str]:
    from bbox_lark.parser import terminal_pattern

    return re.compile(terminal_pattern("FENCE"))


def _is_fence(text: str) -> bool:
    return _fence().fullmatch(text) is not None


def _words(raw: str, start: int, length: int) -> str:
    """``raw[start:start + length]`` with each whitespace run between words and fields made
    one space. Whitespace inside a quoted string or a list is kept as written."""
    segment = raw[start : start + length]
    if not _WS.search(segment):
        return segment
    protected = [m.span() for m in _protected().finditer(segment) if _WS.search(m[0])]
    out: list[str] = []
    last = 0
    for gap in _WS.finditer(segment):
        a, b = gap.span()
        if any(lo < a and b < hi for lo, hi in protected):
            continue
        word = segment[last:a]
        out.append(word)
        # `#<tab>metrics` stays as written: one space there would start a metrics comment.
        following = _NON_WS.match(segment, b)
        keep = word == "#" and following is not None and following[0] == "metrics"
        out.append(gap[0] if keep else " ")
        last = b
    out.append(segment[last:])
    return "".join(out)


# -- meaning ---------------------------------------------------------------------------


def _ws(text: str | None) -> str | None:
    return " ".join(text.split()) if text is not None else None


def _field_signature(node: Field) -> tuple[Any, ...]:
    return (node.key, node.value, node.quoted, node.after_arrow)


def _result_signature(result: Result | None) -> tuple[Any, ...] | None:
    if result is None:
        return None
    blob = result.blob
    return (
        result.kind,
        _ws(result.text),
        _ws(result.head),
        _ws(result.rest),
        result.number,
        _ws(result.unit),
        result.total,
        _ws(result.message),
        tuple(_ws(c) for c in result.choices),
        (blob.sha256, blob.size, blob.mime) if blob is not None else None,
    )


def line_signature(node: Line) -> tuple[Any, ...]:
    """What a body line means, with trivia left out: whitespace between words, the arrow's
    spelling (``->`` or ``→``), the space between a prefix and its name, columns. Two lines
    with equal signatures are the same line to every check and converter."""
    if isinstance(node, Continuation):
        return ("continuation", node.text)
    if isinstance(node, BlankLine):
        return ("blank",)
    return (
        node.kind,
        node.prefix,
        node.name,
        _ws(node.text),
        tuple(_field_signature(f) for f in node.field_nodes),
        node.args,
        node.arrow is not None,
        _result_signature(node.result),
        None if node.metrics is None else tuple(_field_signature(f) for f in node.metric_nodes),
        tuple((q.in_field, q.in_free_text) for q in node.quote_faults),
        node.oversized,
    )


def document_signature(document: Document) -> tuple[Any, ...]:
    """What a document means, with trivia left out: the BOM, the header lines, every event's
    :func:`line_signature` with its continuation text, and orphan continuation lines.
    Blank lines and line endings are trivia."""
    events: list[tuple[Any, ...]] = []
    for node in document.lines:
        if isinstance(node, Event):
            events.append((line_signature(node), tuple(c.text for c in node.continuation)))
        elif isinstance(node, Continuation) and node.owner is None:
            events.append(("orphan", node.text))
    header = tuple(line.raw for line in document.header_lines if line.role != "blank")
    return (document.bom, header, tuple(events))
