"""Printing documents: the lossless printer and the canonical formatter
(docs/reference.md#round-trip, docs/reference.md#fmt).

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

from bbox_lark._classes import dataclass
from bbox_lark.syntax.grammar import compiled, terminal_pattern, vocabulary
from bbox_lark.syntax.nodes import (
    BlankLine,
    Call,
    Comment,
    Continuation,
    Document,
    Event,
    Field,
    Lifecycle,
    Line,
    Message,
    Unknown,
    collapse_ws,
    field_signature,
    result_signature,
)
from bbox_lark.syntax.parser import parse_line
from bbox_lark.syntax.scan import needs_quotes, render_arg, render_value
from bbox_lark.syntax.source import BOM

#: The canonical result arrow.
ARROW = "→"

_WS = re.compile(r"\s+")
_NON_WS = re.compile(r"\S+")
_METRICS = "# metrics"


def dumps(document: Document) -> str:
    """The document's exact source text: ``dumps(parse(text)) == text`` for every input
    (bytes inputs come back as text decoded with ``surrogateescape``; see
    :func:`bbox_lark.syntax.source.encode`)."""
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
    if node.source is None:
        return emit_line(node)
    canonical, metrics_at = _canonical(node)
    if canonical == node.raw or not _corner(node, canonical, metrics_at):
        return canonical
    # One of the corners docs/fmt.md lists, where the canonical whitespace itself may change
    # what a character means: the rewrite is read once and kept only if it means the same.
    if line_signature(parse_line(canonical)) != line_signature(node):
        return node.raw
    return canonical


#: What the canonical whitespace can turn into syntax (docs/fmt.md, "Lines kept as
#: written"): ``#`` and ``metrics`` (a metrics comment), ``->`` (an ASCII arrow).
_CORNER = re.compile(r"#\s*metrics|->")


def _corner(node: Event, canonical: str, metrics_at: int) -> bool:
    """True for a rewrite in a corner of docs/fmt.md (its meaning is then checked by reading
    it): ``#``/``metrics`` or ``->`` before the trailing metrics comment, or a structured
    comment made of its keyword only. Everywhere else the rewrite means what the line did:
    only whitespace runs between items changed (each run still whitespace, quoted strings
    and lists as written), which ``tests/test_roundtrip_property.py`` checks against a
    reading of every rewrite."""
    if _CORNER.search(canonical, 0, metrics_at) is not None:
        return True
    return isinstance(node, Comment) and node.name is not None and len(node.text.split()) == 1


def canonical_line(event: Event) -> str:
    """The canonical rewrite of an event line, built from its parts, *without* the check
    of the corners where it may not mean the same (:func:`format_line` does that)."""
    return _canonical(event)[0]


def _canonical(event: Event) -> tuple[str, int]:
    """:func:`canonical_line` and the offset in it where its trailing metrics comment
    starts (its length when there is none)."""
    raw = event.raw
    match event:
        case Unknown(oversized=True):
            return raw, len(raw)
        case Unknown():
            stripped = raw.rstrip()
            # A body line never becomes a header fence by losing its trailing whitespace.
            text = raw if _is_fence(stripped) and not _is_fence(raw) else stripped
            return text, len(text)
        case Comment(name=None):
            return raw.rstrip(), len(raw.rstrip())
        case Comment(text=text, text_col=col):
            text = "# " + _words(raw, col - 1, len(text))
            return text, len(text)
        case Call(spaced_name=True, prefix=prefix) if raw[len(prefix) + 1 :].lstrip().startswith('"'):
            # `t: "read a.rs"`: the name is a quoted string's first word; `t:read` would drop
            # the rest of the string (the first argument).
            return raw, len(raw)
    head, head_end = _head(event)
    out = [head]
    end = head_end
    if event.text:
        start = event.text_col - 1
        # The text of `u a th td` lines keeps its inner spacing (docs/reference.md#fmt); the items of
        # a call part are separated by one space.
        if isinstance(event, Message):
            out += [" ", raw[start : start + len(event.text)]]
        else:
            out += [" ", _words(raw, start, len(event.text))]
        end = start + len(event.text)
    result = event.result
    if event.arrow is not None and event.arrow_col is not None:
        out.append(" " + ARROW)
        end = event.arrow_col - 1 + len(event.arrow)
        if result is not None and result.text:
            # Result text is never squeezed (tool output is often aligned): one space after
            # the arrow, the text as written.
            out += [" ", result.text]
            end = result.col - 1 + len(result.text)
    metrics_at = sum(map(len, out))
    if event.metrics is not None:
        tail = raw[end:]
        start = tail.find(_METRICS)
        if start < 0 or tail[:start].strip():
            return raw, len(raw)
        body_start = end + start + len(_METRICS)
        body = raw[body_start:]
        lead = len(body) - len(body.lstrip())
        words = _words(raw, body_start + lead, len(body.strip()))
        out.append(" " + _METRICS + (" " + words if words else ""))
    return "".join(out), metrics_at


def _head(event: Event) -> tuple[str, int]:
    """The canonical line head (``t:read``, ``u:``, ``@start``) and the offset in ``raw``
    where the source head ends."""
    match event:
        case Lifecycle(name=name):
            return "@" + (name or ""), 1 + len(name or "")
        case Call(prefix=prefix, name=str() as name, name_col=int() as col) if (
            prefix in vocabulary().named_prefixes
        ):
            return f"{prefix}:{name}", col - 1 + len(name)
    return f"{event.prefix}:", len(event.prefix) + 1


# -- words -----------------------------------------------------------------------------


@cache
def _openings() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Where whitespace belongs to a token, as the parser reads a text at its two levels:

    * the line grammar: a quoted string opens at the start of the text or after whitespace,
      ``=``, ``[`` or ``,`` (docs/reference.md#quotes), and protects what is inside it;
    * the ``items`` rule: fields, quoted strings, lists and words, one after the other
      (a quoted value or a list may hold whitespace).

    Every pattern is a terminal of ``grammar/bbox.lark``."""
    quoted = terminal_pattern("QUOTED")
    line_level = re.compile(rf"(?:^|(?<=[\s=\[,])){quoted}")
    alternatives = "|".join(terminal_pattern(name) for name in ("FIELD", "QUOTED", "LIST", "WORD"))
    items = re.compile(rf"(?:{terminal_pattern('ITEM_WS')})?({alternatives})")
    return line_level, items


def _protected(segment: str) -> list[tuple[int, int]]:
    """The spans of ``segment`` whose whitespace is kept, sorted, merged where they overlap."""
    line_level, items = _openings()
    spans = [m.span() for m in line_level.finditer(segment) if _WS.search(m[0])]
    spans += [m.span(1) for m in items.finditer(segment) if _WS.search(m[1])]
    spans.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def is_fence(text: str) -> bool:
    """True when ``text`` would be read as a header fence (``---``)."""
    return compiled("FENCE").fullmatch(text) is not None


_is_fence = is_fence


def single_spaced(text: str) -> str:
    """``text`` stripped, each whitespace run between words and fields made one space, as
    ``fmt`` does it: whitespace inside a quoted string, a quoted value or a list is kept."""
    stripped = text.strip()
    return _words(stripped, 0, len(stripped))


def _words(raw: str, start: int, length: int) -> str:
    """``raw[start:start + length]`` with each whitespace run between words and fields made
    one space. Whitespace inside a quoted string, a quoted field value or a list is kept as
    written."""
    segment = raw[start : start + length]
    if not _WS.search(segment):
        return segment
    # A whitespace run is either inside a protected span or outside all of them.
    protected = _protected(segment)
    out: list[str] = []
    last = index = 0
    for gap in _WS.finditer(segment):
        a, b = gap.span()
        while index < len(protected) and protected[index][1] <= a:
            index += 1
        if index < len(protected) and protected[index][0] < a:
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
        collapse_ws(node.text),
        tuple(field_signature(f) for f in node.field_nodes),
        node.args,
        node.arrow is not None,
        result_signature(node.result),
        None if node.metrics is None else tuple(field_signature(f) for f in node.metric_nodes),
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


# -- emit: a node's canonical text from its values ---------------------------------------


def emit(node: Line) -> str:
    """A node's canonical line(s), printed from its values (never from its source): the
    line of :func:`emit_line`, then each continuation line indented by two spaces, joined by
    ``"\\n"``, without a final line ending. ``parse(emit(node))`` gives back a node with the
    same :meth:`~bbox_lark.syntax.nodes.Event.values`; see ``docs/design.md``, "Nodes you can build",
    for the few parsed lines printed as written instead."""
    if isinstance(node, Continuation):
        return "  " + node.text
    if isinstance(node, BlankLine):
        return ""
    return "\n".join([emit_line(node), *("  " + c.text for c in node.continuation)])


@dataclass(frozen=True, slots=True)
class Layout:
    """A call-like or message line laid out from its parts, with the 0-based offset of each
    part (what a node built from values records as its columns)."""

    text: str
    #: Offset of each word of the call part (or of the message text).
    words: tuple[int, ...]
    arrow: int | None
    result: int | None
    #: Offset of each metrics item.
    metrics: tuple[int, ...]
    #: Offset of the whitespace that starts the trailing ``# metrics`` comment, or None.
    metrics_at: int | None = None


def _starts_metrics(text: str) -> bool:
    return compiled("METRICS").match(" " + text) is not None


def layout_line(
    head: str,
    words: list[str],
    result: str | None,
    metrics: list[str] | None,
) -> Layout:
    """``head word word → result # metrics item item`` with one space between parts. A
    message text or a result text that would otherwise start a metrics comment (``# metrics
    …``) follows its head or arrow without the space, as the parser reads it."""
    out = head
    offsets: list[int] = []
    for word in words:
        out += "" if len(words) == 1 and _starts_metrics(word) else " "
        offsets.append(len(out))
        out += word
    arrow = result_at = None
    if result is not None:
        out += " "
        arrow = len(out)
        out += ARROW
        if result:
            out += "" if _starts_metrics(result) else " "
            result_at = len(out)
            out += result
    metric_offsets: list[int] = []
    metrics_at = None
    if metrics is not None:
        metrics_at = len(out)
        out += " " + _METRICS
        for item in metrics:
            out += " "
            metric_offsets.append(len(out))
            out += item
    return Layout(out, tuple(offsets), arrow, result_at, tuple(metric_offsets), metrics_at)


def field_text(node: Field, *, arrow: bool = True) -> str:
    """``key=value`` as a node built from values writes it (the value quoted as the node
    says, or when it would not read back bare)."""

    value = node.value
    quoted = node.quoted or (isinstance(value, str) and needs_quotes(value, arrow=arrow))
    return f"{node.key}={render_value(value, quoted)}"


def _source_only(event: Event) -> bool:
    """The parsed lines :func:`emit_line` prints as written (``docs/design.md``): an
    oversized line, a call part with an unclosed quote (E012: closing it would change what
    the line says) and a named prefix whose call part has no name before it (``t: "``)."""
    if event.source is None:
        return False
    if event.oversized or any(not q.in_free_text for q in event.quote_faults):
        return True
    return (
        isinstance(event, Call)
        and event.name is None
        and event.prefix in vocabulary().named_prefixes
        and bool(event.args or any(not f.after_arrow for f in event.field_nodes))
    )


def _call_words(event: Event) -> list[str]:
    """The items of a call part as they are printed: its arguments, then its fields."""
    words = [render_arg(arg) for arg in event.args]
    return words + [field_text(f) for f in event.field_nodes if not f.after_arrow]


def emit_line(event: Event) -> str:
    """An event's canonical first line, from its values (see :func:`emit`)."""
    if _source_only(event):
        assert event.source is not None
        return event.source
    match event:
        case Unknown(text=text):
            stripped = text.rstrip()
            return text if _is_fence(stripped) and not _is_fence(text) else stripped
        case Comment(text=text):
            return "# " + text if text else "#"
        case Message(prefix=prefix, text=text):
            head, words = prefix + ":", [text] if text else []
        case Lifecycle(name=name):
            head, words = "@" + (name or ""), _call_words(event)
        case Call(prefix=prefix, name=str() as name) if prefix in vocabulary().named_prefixes:
            head, words = f"{prefix}:{name}", _call_words(event)
        case _:
            head, words = event.prefix + ":", _call_words(event)
    result = None
    if event.arrow is not None:
        result = event.result.text if event.result is not None else ""
    metrics = None
    if event.metrics is not None:
        metrics = [field_text(f, arrow=False) for f in event.metric_nodes]
    return layout_line(head, words, result, metrics).text
