"""The typed syntax tree of a bbox/1 document.

Conventions, stated once for the whole package:

* ``line`` numbers count from 1, from the file's first physical line (header included).
* ``col`` numbers count from 1 and count code points, not bytes.
* ``raw`` is a node's exact source text without its line ending; ``eol`` is that ending
  (``"\\n"``, ``"\\r\\n"`` or ``""`` for a last line without one). Printing a document is the
  concatenation of ``raw + eol`` over its lines, which is what makes it lossless.
* A node built from values (:mod:`bbox_lark.syntax.build`: ``build.call(...)``,
  ``build.edited(node, ...)``; see ``docs/design.md``, "Nodes you can build") has no source:
  its ``source`` is None, its ``raw`` is the canonical text the builder printed
  (:func:`bbox_lark.syntax.printer.emit_line` of its values, kept in ``emitted``), and it has no
  position (``line`` and every column are 0).

This module is the leaf of the core: it imports only the foundation (the grammar's
vocabulary, the typed values), never the parser, the printer or the builders (LibCST's
nodes never import its parser). Nodes are frozen, slotted dataclasses; what makes, edits or
prints them lives in the modules that own it: :mod:`bbox_lark.syntax.build` builds and edits
(``build.edited``, which drops the source, so no stale text survives an edit),
:func:`bbox_lark.syntax.parser.reparse` reads an event again from new source text, and
:mod:`bbox_lark.syntax.printer` prints.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.syntax.deferred import DEFERRED_PARTS as DEFERRED_PARTS
from bbox_lark.syntax.deferred import Deferred as Deferred
from bbox_lark.syntax.deferred import build_on_read
from bbox_lark.syntax.frozen import NO_FIELDS as NO_FIELDS
from bbox_lark.syntax.frozen import FrozenDict as FrozenDict
from bbox_lark.syntax.frozen import frozen_fields as frozen_fields
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.values import parse_attempt, parse_int, parse_timestamp

FieldValue = str | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Field:
    """One ``key=value`` on a line."""

    key: str
    #: The source value: quotes removed, escapes resolved; a list is a tuple of strings.
    value: FieldValue
    #: The exact source text of the value (quotes and brackets included).
    raw_value: str
    #: Column of the key's first character.
    col: int
    #: Column of the value's first character.
    value_col: int
    #: True when the value was a complete double-quoted string.
    quoted: bool = False
    #: True when the field stands after the result arrow.
    after_arrow: bool = False

    @property
    def end_col(self) -> int:
        """Column just past the value."""
        return self.value_col + len(self.raw_value)


@dataclass(frozen=True, slots=True)
class BlobPointer:
    """``@blob sha256=<hex> bytes=<int> [mime=<type/subtype>]``."""

    raw: str
    line: int
    col: int
    sha256: str | None
    size: str | None
    mime: str | None

    @property
    def size_int(self) -> int | None:
        return parse_int(self.size)


@dataclass(frozen=True, slots=True)
class Redaction:
    """``[redacted:kind]``."""

    kind: str
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class Result:
    """What stands after the result arrow."""

    #: One of ``bbox_lark.syntax.grammar.vocabulary().result_kinds`` (docs/reference.md#api-values).
    kind: str
    #: The raw text after the arrow, stripped, without a trailing ``# metrics`` comment.
    text: str
    #: Column of the first character of ``text`` (of the arrow when ``text`` is empty).
    col: int
    #: The bracket form, blob pointer or marker the result starts with ("" if none).
    head: str = ""
    #: What follows the head (``128 tests passed`` in ``[ok] 128 tests passed``), stripped.
    rest: str = ""
    #: ``count``: the number; ``retry``: the attempt.
    number: int | None = None
    #: ``count``: the unit (``lines`` in ``[186 lines]``), or None.
    unit: str | None = None
    #: ``retry``: the number of attempts allowed.
    total: int | None = None
    #: ``error``: the message; ``auto_choice``: the reason; ``redacted``: the kind.
    message: str | None = None
    #: ``selected`` / ``auto_choice``: the chosen options.
    choices: tuple[str, ...] = ()
    #: ``blob``: the pointer.
    blob: BlobPointer | None = None


@dataclass(frozen=True, slots=True)
class QuoteFault:
    """A double quote that opens a string and never closes."""

    col: int
    #: True when it opens a field value (``key="...``).
    in_field: bool
    #: True when it stands in free text (``u a th td`` lines or after the arrow).
    in_free_text: bool


@dataclass(frozen=True, slots=True)
class Continuation:
    """A line indented by two spaces or a tab, belonging to the preceding line."""

    line: int
    raw: str
    eol: str
    #: Line number of the owning event (None for an orphan).
    owner: int | None = None

    kind = "continuation"

    @property
    def text(self) -> str:
        """The text without its indentation."""
        return self.raw[1:] if self.raw.startswith("\t") else self.raw[2:]


@dataclass(frozen=True, slots=True)
class BlankLine:
    """A line holding only whitespace."""

    line: int
    raw: str
    eol: str

    kind = "blank"


@dataclass(frozen=True, slots=True)
class HeaderLine:
    """A physical line of the header block: leading blank, fence or YAML."""

    line: int
    raw: str
    eol: str
    #: ``blank``, ``fence`` or ``yaml``.
    role: str


@dataclass(frozen=True, slots=True)
class Emitted:
    """The canonical line a builder printed for a node without source, and the parts it
    printed it from (:func:`printed_parts`): the node's ``raw`` while it still has those
    parts. The parts are the node's own objects, so the test is a few identity checks
    (``==`` compares tuples item by item, same objects first)."""

    text: str
    values: tuple[Any, ...]


def printed_parts(node: Event) -> tuple[Any, ...]:
    """The parts of an event its canonical line is printed from (positions, source,
    line ending and continuation lines left out): what :class:`Emitted` keeps."""
    return (
        node.kind,
        node.prefix,
        node.name,
        node.text,
        node.field_nodes,
        node.args,
        node.arrow is None,
        node.result,
        node.metrics is None,
        node.metric_nodes,
        node.quote_faults,
        node.oversized,
    )


@dataclass(frozen=True, slots=True)
class Event:
    """A body line that is not blank and not a continuation: what the six families
    (:data:`FAMILY_CLASSES`) share. ``kind`` is an event kind, ``comment``, ``lifecycle`` or
    ``unknown`` (docs/reference.md#line-kinds). Each family adds only the fields its lines can
    fill; a part a family does not hold reads here as its empty value (:data:`EMPTY_PARTS`),
    so code that does not know the family reads any event alike (docs/design.md, "Nodes")."""

    kind: str
    line: int
    #: The exact source text (without the line ending); None for a node built from values
    #: or edited through them (:mod:`bbox_lark.syntax.build`; ``raw`` then gives ``emitted``).
    source: str | None
    eol: str = "\n"
    col: int = 1
    #: ``t!``, ``u``, ... for events; ``#`` for comments; ``@`` for lifecycle; "" otherwise.
    prefix: str = ""
    #: The call part (or message, or comment text), stripped.
    text: str = ""
    #: Column of ``text``'s first character.
    text_col: int = 1
    #: Each key's source value (a list as a tuple); the first occurrence wins, before the
    #: arrow over after. Read-only (:class:`FrozenDict`).
    fields: FrozenDict[str, Any] = NO_FIELDS
    field_nodes: tuple[Field, ...] = ()
    continuation: tuple[Continuation, ...] = ()
    quote_faults: tuple[QuoteFault, ...] = ()

    #: For a node without source: the canonical line its builder printed (what ``raw``
    #: gives; :mod:`bbox_lark.syntax.build` sets it); None for a parsed node. Not a value: it is
    #: left out of ``==``, so a built node equals what the parser makes of its line.
    emitted: Emitted | None = field(default=None, compare=False, repr=False)

    # -- the parts some families hold (their slot wins over these), empty in the others ---

    @property
    def name(self) -> str | None:
        """Tool, skill, plan action, subagent type, ``server.method``, mode word (:class:`Call`),
        lifecycle primitive (:class:`Lifecycle`), comment kind (:class:`Comment`); else None."""
        return None

    @property
    def name_col(self) -> int | None:
        return None

    @property
    def spaced_name(self) -> bool:
        """True when a space stood between a named prefix and its name (``t: read``)."""
        return False

    @property
    def args(self) -> tuple[FieldValue, ...]:
        """Positional arguments: quoted strings (unquoted), bare words, lists (tuples)."""
        return ()

    @property
    def arrow(self) -> str | None:
        """The result arrow as written (``→`` or ``->``), or None."""
        return None

    @property
    def arrow_col(self) -> int | None:
        return None

    @property
    def result(self) -> Result | None:
        return None

    @property
    def metrics(self) -> FrozenDict[str, Any] | None:
        """Values of a trailing ``# metrics`` comment (or of a ``# metrics`` comment line)."""
        return None

    @property
    def metric_nodes(self) -> tuple[Field, ...]:
        return ()

    @property
    def oversized(self) -> bool:
        """True when the line was too long to parse and is kept verbatim (an :class:`Unknown`)."""
        return False

    # -- source and values -----------------------------------------------------------

    @property
    def raw(self) -> str:
        """The line's text: its source when it has one, else the canonical text of its values
        that its builder printed (:func:`bbox_lark.syntax.printer.emit_line`; the first line, without
        continuation lines). Raises ValueError for a node without source whose values were
        changed after it was built (``dataclasses.replace(node, text=...)``): its text would
        be stale; :func:`bbox_lark.syntax.build.edited` makes the changed node."""
        if self.source is not None:
            return self.source
        emitted = self.emitted
        if emitted is None or printed_parts(self) != emitted.values:
            what = "was never printed" if emitted is None else "was printed before its values changed"
            raise ValueError(
                f"a {self.kind} line without source whose text {what}: make it with"
                " bbox_lark.syntax.build (build.edited(node, ...) to change a node's values)"
            )
        return emitted.text

    def values(self) -> tuple[Any, ...]:
        """What the line says, without positions, source or trivia (:func:`node_values`): two
        nodes with equal values print the same canonical text (:func:`bbox_lark.syntax.printer.emit`),
        and ``parse(emit(node))`` gives a node with the same values."""
        return node_values(self)

    def same_as(self, other: Event) -> bool:
        """True when ``other`` has the same :meth:`values` (positions and source ignored)."""
        return node_values(self) == node_values(other)

    # -- typed accessors (docs/reference.md#api-values): None when absent or malformed ---------------

    def _get(self, key: str) -> str | None:
        value = self.fields.get(key)
        return value if isinstance(value, str) else None

    @property
    def step(self) -> int | None:
        return parse_int(self._get("step"))

    @property
    def latency_ms(self) -> int | None:
        return parse_int(self._get("latency_ms"))

    @property
    def attempt(self) -> tuple[int, int | None] | None:
        """``(N, M)`` for ``attempt=N/M`` with N <= M, ``(N, None)`` for ``attempt=N``."""
        return parse_attempt(self._get("attempt"))

    @property
    def ts(self) -> str | None:
        value = self._get("ts")
        return value if value is not None and parse_timestamp(value) is not None else None

    @property
    def level(self) -> str | None:
        value = self._get("level")
        return value if value is not None and value in vocabulary().levels else None

    @property
    def id(self) -> str | None:
        return self._get("id")

    @property
    def span(self) -> str | None:
        return self._get("span")

    @property
    def tid(self) -> str | None:
        return self._get("tid")

    @property
    def parent(self) -> str | None:
        return self._get("parent")

    @property
    def is_event(self) -> bool:
        """True for prefixed event lines (not comments, lifecycle or unknown lines)."""
        return self.kind not in ("comment", "lifecycle", "unknown")


@dataclass(frozen=True, slots=True)
class Message(Event):
    """A free-text line: ``u a th td`` (user, agent, thinking, todos). Its ``text`` is the
    message with its fields (``Fix the login bug step=2``). No name and no arguments."""

    arrow: str | None = None
    arrow_col: int | None = None
    result: Result | None = None
    metrics: FrozenDict[str, Any] | None = None
    metric_nodes: tuple[Field, ...] = ()


@dataclass(frozen=True, slots=True)
class Call(Event):
    """A call-like line: ``t t! t~ s p m r x c q`` (``name`` for the named prefixes and the
    mode word for ``m``). Its call part is positional ``args`` and ``fields``."""

    name: str | None = None
    name_col: int | None = None
    spaced_name: bool = False
    args: tuple[FieldValue, ...] = ()
    arrow: str | None = None
    arrow_col: int | None = None
    result: Result | None = None
    metrics: FrozenDict[str, Any] | None = None
    metric_nodes: tuple[Field, ...] = ()


@dataclass(frozen=True, slots=True)
class Observation(Event):
    """``o:``: the result of an earlier call (``o: id=call_1 → [ok]``). No name."""

    args: tuple[FieldValue, ...] = ()
    arrow: str | None = None
    arrow_col: int | None = None
    result: Result | None = None
    metrics: FrozenDict[str, Any] | None = None
    metric_nodes: tuple[Field, ...] = ()


@dataclass(frozen=True, slots=True)
class Lifecycle(Event):
    """``@start``, ``@end``, ... (``name`` is the primitive without ``@``)."""

    name: str | None = None
    name_col: int | None = None
    args: tuple[FieldValue, ...] = ()
    arrow: str | None = None
    arrow_col: int | None = None
    result: Result | None = None
    metrics: FrozenDict[str, Any] | None = None
    metric_nodes: tuple[Field, ...] = ()


@dataclass(frozen=True, slots=True)
class Comment(Event):
    """A ``#`` line; ``name`` is its structured kind (``metrics``, ``budget``, ...) or None.
    Its ``text`` starts with the keyword (``metrics step=3 cost_usd=0.01``); a ``# metrics``
    line's values are also its ``metrics``."""

    name: str | None = None
    metrics: FrozenDict[str, Any] | None = None
    metric_nodes: tuple[Field, ...] = ()


@dataclass(frozen=True, slots=True)
class Unknown(Event):
    """A line that is nothing else (W003), kept as written."""

    #: True when the line was too long to parse and is kept verbatim.
    oversized: bool = False


#: The event families, each holding only its own fields (:class:`Event`).
FAMILY_CLASSES: tuple[type[Event], ...] = (Message, Call, Observation, Lifecycle, Comment, Unknown)

#: The parts only some families hold, and the empty value :class:`Event` reads for the rest.
EMPTY_PARTS: dict[str, Any] = dict.fromkeys(("name", "name_col", "arrow", "arrow_col", "result", "metrics"))
EMPTY_PARTS.update(spaced_name=False, args=(), metric_nodes=(), oversized=False)


@dataclass(frozen=True, slots=True)
class Head:
    """What :func:`bbox_lark.iter_nodes` yields first: the header block, read before any body line.
    :func:`bbox_lark.syntax.build.head` makes one from header keys."""

    #: True when the text started with a byte order mark.
    bom: bool
    header_lines: tuple[HeaderLine, ...]
    header_info: Header | None
    #: Line number of the first body line.
    body_start: int


Line = Event | Continuation | BlankLine

for _family in (Message, Call, Observation, Lifecycle):
    build_on_read(_family)


# -- what a line says (``Event.values``): data reads only, no printing --------------------


def collapse_ws(text: str | None) -> str | None:
    """``text`` with each whitespace run made one space, stripped (None stays None)."""
    return " ".join(text.split()) if text is not None else None


def field_signature(node: Field) -> tuple[Any, ...]:
    """What a field says: its key, value, quoting and side of the arrow (not its columns)."""
    return (node.key, node.value, node.quoted, node.after_arrow)


def result_signature(result: Result | None) -> tuple[Any, ...] | None:
    """What a result says, whitespace runs in its texts made one space (not its columns)."""
    if result is None:
        return None
    blob = result.blob
    return (
        result.kind,
        collapse_ws(result.text),
        collapse_ws(result.head),
        collapse_ws(result.rest),
        result.number,
        collapse_ws(result.unit),
        result.total,
        collapse_ws(result.message),
        tuple(collapse_ws(c) for c in result.choices),
        (blob.sha256, blob.size, blob.mime) if blob is not None else None,
    )


def node_values(node: Line) -> tuple[Any, ...]:
    """What a line says, without positions, source or trivia (``Event.values``): like
    :func:`bbox_lark.syntax.printer.line_signature`, but a call part is its arguments and fields
    (their order between each other and their spacing are trivia) and a text is compared
    as written."""
    if isinstance(node, Continuation):
        return ("continuation", node.text)
    if isinstance(node, BlankLine):
        return ("blank",)
    continuation = tuple(c.text for c in node.continuation)
    match node:
        case Unknown(oversized=True, source=str() as source):
            return ("unknown", source, True, continuation)
        case Unknown(oversized=oversized, text=text):
            return ("unknown", text.rstrip(), oversized, continuation)
    free = isinstance(node, (Comment, Message))
    return (
        node.kind,
        node.prefix,
        node.name,
        node.text if free else None,
        tuple(field_signature(f) for f in node.field_nodes),
        node.args,
        node.arrow is not None,
        result_signature(node.result),
        None if node.metrics is None else tuple(field_signature(f) for f in node.metric_nodes),
        tuple((q.in_field, q.in_free_text) for q in node.quote_faults),
        continuation,
    )


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A finding about a document."""

    code: str
    #: ``error``, ``warning`` or ``info``.
    severity: str
    line: int
    col: int
    message: str
    #: The check's kebab-case name.
    name: str = ""

    def format(self, path: str = "<stdin>") -> str:
        return f"{path}:{self.line}:{self.col}: {self.code} {self.message}"


@dataclass(frozen=True, slots=True)
class Header:
    """The YAML header block."""

    #: Each top-level key's value: scalars as source text, lists and maps as lists and
    #: dicts of such strings. Nothing is dropped; unknown keys are kept. Read-only at the top
    #: level (:class:`FrozenDict`).
    fields: FrozenDict[str, Any]
    #: Line number of each top-level key.
    key_lines: FrozenDict[str, int]
    #: Line number of the opening fence, or None when there is none.
    open_line: int | None
    #: Line number of the closing fence, or None when it is missing.
    close_line: int | None
    #: Keys whose value was YAML null (empty, ``~`` or ``null``).
    null_keys: frozenset[str] = frozenset()
    #: Problems found while reading it: (code, line, col, message).
    faults: tuple[tuple[str, int, int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class SourceFault:
    """A byte-level problem on a line: invalid UTF-8, a NUL byte, an oversized line."""

    code: str
    line: int
    col: int
    message: str


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed bbox/1 file. ``dumps(doc)`` gives back the exact input."""

    #: True when the text started with a byte order mark.
    bom: bool
    header_lines: tuple[HeaderLine, ...]
    header_info: Header | None
    #: Every body line in order: events, continuations and blank lines.
    lines: tuple[Line, ...]
    source_faults: tuple[SourceFault, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def header(self) -> FrozenDict[str, Any]:
        """Header keys mapped to their values ({} when there is no header)."""
        return self.header_info.fields if self.header_info is not None else NO_FIELDS

    @property
    def events(self) -> list[Event]:
        """Every body line that is not blank or a continuation, in order."""
        return [line for line in self.lines if isinstance(line, Event)]

    @property
    def body_start(self) -> int:
        """Line number of the first body line."""
        return len(self.header_lines) + 1
