"""The typed syntax tree of a bbox/1 document.

Conventions, stated once for the whole package:

* ``line`` numbers count from 1, from the file's first physical line (header included).
* ``col`` numbers count from 1 and count code points, not bytes.
* ``raw`` is a node's exact source text without its line ending; ``eol`` is that ending
  (``"\\n"``, ``"\\r\\n"`` or ``""`` for a last line without one). Printing a document is the
  concatenation of ``raw + eol`` over its lines, which is what makes it lossless.
* A node built from values (``Call.build(...)``, ``node.with_(...)``; see
  ``docs/design.md``, "Nodes you can build") has no source: its ``source`` is None, its
  ``raw`` is :func:`bbox_lark.printer.emit` of its values, and it has no position (``line``
  and every column are 0).

Nodes are frozen, slotted dataclasses. Edit an event's values with :meth:`Event.with_`
(which drops the source, so no stale text survives an edit) or its source text with
:meth:`Event.with_source` (which reads the values again).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.grammar import vocabulary
from bbox_lark.values import parse_attempt, parse_int, parse_timestamp

FieldValue = str | tuple[str, ...]

#: Fields as a builder takes them: a mapping (``{"id": "call_1"}``; a list value is a
#: bracketed list), or a sequence of ``(key, value)`` pairs or :class:`Field` s (which keeps
#: repeated keys and the writer's quoting).
FieldsIn = Mapping[str, Any] | Sequence["Field | tuple[str, Any]"] | None
#: Positional arguments: strings, and sequences of strings for bracketed lists.
ArgsIn = Sequence[str | Sequence[str]]
#: Continuation lines: their text (without indentation) or parsed continuation nodes.
ContinuationIn = Sequence["str | Continuation"]


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

    #: One of ``bbox_lark.grammar.vocabulary().result_kinds`` (docs/reference.md#api-values).
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

    @classmethod
    def build(
        cls,
        kind: str,
        *,
        number: int | None = None,
        unit: str | None = None,
        total: int | None = None,
        message: str | None = None,
        choices: Sequence[str] = (),
        sha256: str | None = None,
        size: int | None = None,
        mime: str | None = None,
        fields: FieldsIn = None,
        text: str = "",
        rest: str = "",
    ) -> Result:
        """A result from values. ``kind`` is one of ``vocabulary().result_kinds``: a status
        (``Result.build("ok")``), ``count`` (``number``, ``unit``), ``error`` (``message``),
        ``retry`` (``number``, ``total``), ``selected`` (``choices``), ``auto_choice``
        (``choices``, ``message``: the reason), ``redacted`` (``message``: the kind), ``blob``
        (``sha256``, ``size``, ``mime``), ``fields`` (``fields``), ``text`` (``text``) or
        ``empty``. ``rest`` is text after a bracket form (``[ok] 128 tests passed``).
        Any ``text``, error ``message`` or ``rest`` is accepted: what a result cannot carry
        as written becomes written text (``→ "[ok] is text here"``, ``→ [error] "a]b"``;
        ``docs/reference.md``, "Any text"), which :func:`bbox_lark.text_of` reads back.
        Raises ValueError when the other values do not read back as that kind."""
        from bbox_lark.transform import build_result

        return build_result(
            kind,
            number=number,
            unit=unit,
            total=total,
            message=message,
            choices=tuple(choices),
            sha256=sha256,
            size=size,
            mime=mime,
            fields=fields,
            text=text,
            rest=rest,
        )


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
class Event:
    """A body line that is not blank and not a continuation.

    ``kind`` is an event kind, ``comment``, ``lifecycle`` or ``unknown`` (docs/reference.md#line-kinds).
    """

    kind: str
    line: int
    #: The exact source text (without the line ending); None for a node built from values
    #: or edited through :meth:`with_` (``raw`` then prints its values).
    source: str | None
    eol: str = "\n"
    col: int = 1
    #: ``t!``, ``u``, ... for events; ``#`` for comments; ``@`` for lifecycle; "" otherwise.
    prefix: str = ""
    #: Tool, skill, plan action, subagent type, ``server.method``, mode word, lifecycle
    #: primitive, structured comment kind; else None.
    name: str | None = None
    name_col: int | None = None
    #: True when a space stood between a named prefix and its name (``t: read``).
    spaced_name: bool = False
    #: The call part (or message, or comment text), stripped.
    text: str = ""
    #: Column of ``text``'s first character.
    text_col: int = 1
    #: Each key's source value; the first occurrence wins, before the arrow over after.
    fields: dict[str, Any] = field(default_factory=dict)
    field_nodes: tuple[Field, ...] = ()
    #: Positional arguments: quoted strings (unquoted), bare words, lists (tuples).
    args: tuple[FieldValue, ...] = ()
    #: The result arrow as written (``→`` or ``->``), or None.
    arrow: str | None = None
    arrow_col: int | None = None
    result: Result | None = None
    #: Values of a trailing ``# metrics`` comment (or of a ``# metrics`` comment line).
    metrics: dict[str, Any] | None = None
    metric_nodes: tuple[Field, ...] = ()
    continuation: tuple[Continuation, ...] = ()
    quote_faults: tuple[QuoteFault, ...] = ()
    #: True when the line was too long to parse and is kept verbatim.
    oversized: bool = False

    # -- source and values -----------------------------------------------------------

    @property
    def raw(self) -> str:
        """The line's text: its source when it has one, else :func:`bbox_lark.printer.emit`
        of its values (the first line, without continuation lines)."""
        if self.source is not None:
            return self.source
        from bbox_lark.printer import emit_line

        return emit_line(self)

    def values(self) -> tuple[Any, ...]:
        """What the line says, without positions, source or trivia: two nodes with equal
        values print the same canonical text (:func:`bbox_lark.printer.emit`), and
        ``parse(emit(node))`` gives a node with the same values."""
        from bbox_lark.printer import node_values

        return node_values(self)

    def same_as(self, other: Event) -> bool:
        """True when ``other`` has the same :meth:`values` (positions and source ignored)."""
        return self.values() == other.values()

    def with_(self, **changes: Any) -> Event:
        """A copy with some values changed (the keyword arguments of this family's
        ``build``), and without source: it prints its values canonically, so an edited node
        never carries stale text. ``line`` and ``eol`` are kept."""
        from bbox_lark.transform import build_values, values_of

        values = values_of(self)
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"{type(self).__name__}.with_() got unexpected values: {sorted(unknown)}")
        values.update(changes)
        node = build_values(self.kind, values)
        return replace(node, line=self.line, eol=self.eol)

    def with_source(self, text: str) -> Event:
        """This line with new source text, its values read again from it (positions too);
        ``line``, ``eol`` and continuation lines are kept. ``fix`` edits lines this way, so
        its output keeps the writer's spacing and no value is stale."""
        from bbox_lark.parser import parse_line

        node = parse_line(text, self.line, self.eol)
        if not isinstance(node, Event):
            raise ValueError(f"line {self.line}: {text!r} is not an event, comment or lifecycle line")
        return replace(node, continuation=self.continuation)

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
    message with its fields (``Fix the login bug step=2``)."""

    @classmethod
    def build(
        cls,
        kind: str,
        text: str = "",
        *,
        fields: FieldsIn = None,
        result: Result | None = None,
        metrics: FieldsIn = None,
        continuation: ContinuationIn = (),
        exact: bool = False,
    ) -> Message:
        """A message from values. ``kind`` is a line kind or its prefix (``user``, ``u``);
        ``fields`` are written after the text. Any text is accepted: text the line cannot
        carry as written (a line break, an arrow, `` # metrics ``, a control character, ...)
        is written as written text, a quoted string (``docs/reference.md``, "Any text").

        By default ``text`` is the line's text and may hold fields of its own (``Fix it
        step=2``), as :attr:`Event.text` gives it. With ``exact``, ``text`` is the message
        exactly: a ``key=value`` in it is never read as a field, and
        :func:`bbox_lark.text_of` gives ``text`` back."""
        from bbox_lark.transform import build_message

        return build_message(cls, kind, text, fields, result, metrics, continuation, exact)


@dataclass(frozen=True, slots=True)
class Call(Event):
    """A call-like line: ``t t! t~ s p m r x c q`` (``name`` for the named prefixes and the
    mode word for ``m``). Its call part is positional ``args`` and ``fields``."""

    @classmethod
    def build(
        cls,
        kind: str,
        name: str | None = None,
        args: ArgsIn = (),
        *,
        fields: FieldsIn = None,
        result: Result | None = None,
        metrics: FieldsIn = None,
        continuation: ContinuationIn = (),
    ) -> Call:
        """A call from values: ``Call.build("tool", "read", ["src/a.rs"], fields={"id":
        "call_1"}, result=Result.build("count", number=186, unit="lines"))``."""
        from bbox_lark.transform import build_call

        return build_call(cls, kind, name, args, fields, result, metrics, continuation)


@dataclass(frozen=True, slots=True)
class Observation(Event):
    """``o:``: the result of an earlier call (``o: id=call_1 → [ok]``)."""

    @classmethod
    def build(
        cls,
        args: ArgsIn = (),
        *,
        fields: FieldsIn = None,
        result: Result | None = None,
        metrics: FieldsIn = None,
        continuation: ContinuationIn = (),
    ) -> Observation:
        from bbox_lark.transform import build_call

        return build_call(cls, "observation", None, args, fields, result, metrics, continuation)


@dataclass(frozen=True, slots=True)
class Lifecycle(Event):
    """``@start``, ``@end``, ... (``name`` is the primitive without ``@``)."""

    @classmethod
    def build(
        cls,
        name: str,
        args: ArgsIn = (),
        *,
        fields: FieldsIn = None,
        result: Result | None = None,
        metrics: FieldsIn = None,
        continuation: ContinuationIn = (),
    ) -> Lifecycle:
        from bbox_lark.transform import build_call

        return build_call(cls, "lifecycle", name, args, fields, result, metrics, continuation)


@dataclass(frozen=True, slots=True)
class Comment(Event):
    """A ``#`` line; ``name`` is its structured kind (``metrics``, ``budget``, ...) or None.
    Its ``text`` starts with the keyword (``metrics step=3 cost_usd=0.01``)."""

    @classmethod
    def build(cls, text: str = "", *, fields: FieldsIn = None, continuation: ContinuationIn = ()) -> Comment:
        """A comment from its text (``fields`` are written after it): ``Comment.build(
        "metrics", fields={"step": "3"})`` is ``# metrics step=3``."""
        from bbox_lark.transform import build_comment

        return build_comment(cls, text, fields, continuation)


@dataclass(frozen=True, slots=True)
class Unknown(Event):
    """A line that is nothing else (W003), kept as written."""

    @classmethod
    def build(cls, text: str, *, continuation: ContinuationIn = ()) -> Unknown:
        from bbox_lark.transform import build_unknown

        return build_unknown(cls, text, continuation)


@dataclass(frozen=True, slots=True)
class Head:
    """What :func:`bbox_lark.iter_nodes` yields first: the header block, read before any body line."""

    #: True when the text started with a byte order mark.
    bom: bool
    header_lines: tuple[HeaderLine, ...]
    header_info: Header | None
    #: Line number of the first body line.
    body_start: int

    @classmethod
    def build(cls, fields: dict[str, Any], *, bom: bool = False) -> Head:
        """The head of a header with these keys, in order (values: strings, numbers, lists and
        maps of them; None writes an empty value), as block YAML between ``---`` fences.
        Importers keep the header small (docs/reference.md#importers): large structures go in body lines
        or blobs."""
        import yaml

        from bbox_lark.parser import iter_nodes

        text = "---\n"
        for key, value in fields.items():
            if value is None:
                text += f"{key}:\n"
                continue
            text += yaml.safe_dump(
                {key: value}, default_flow_style=False, allow_unicode=True, sort_keys=False, width=1 << 30
            )
        text += "---\n"
        head = next(iter_nodes(text))
        assert isinstance(head, Head)
        return cls(bom, head.header_lines, head.header_info, head.body_start)


Line = Event | Continuation | BlankLine


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
    #: dicts of such strings. Nothing is dropped; unknown keys are kept.
    fields: dict[str, Any]
    #: Line number of each top-level key.
    key_lines: dict[str, int]
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
    def header(self) -> dict[str, Any]:
        """Header keys mapped to their values ({} when there is no header)."""
        return self.header_info.fields if self.header_info is not None else {}

    @property
    def events(self) -> list[Event]:
        """Every body line that is not blank or a continuation, in order."""
        return [line for line in self.lines if isinstance(line, Event)]

    @property
    def body_start(self) -> int:
        """Line number of the first body line."""
        return len(self.header_lines) + 1
