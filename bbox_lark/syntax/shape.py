"""From Lark's view of one line to a typed AST node (the parse path; building nodes from
values is :mod:`bbox_lark.syntax.transform`, above the parser).

:func:`scanned_line` makes the node of a common line straight from the spans of the one
anchored scan (:func:`bbox_lark.syntax.scan.line_scanner`). Any other line goes through the LALR
driver, to which :class:`LineShaper` is passed as an inline transformer, so no parse tree is
ever built: each rule's callback turns its tokens into a small tuple, and :func:`build_line`
makes the frozen node. Both paths meet in :func:`event_node`, which splits the coarse tokens
with :mod:`bbox_lark.syntax.scan`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

from lark import Token, Transformer

from bbox_lark._classes import mypyc_attr
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import (
    EMPTY_PARTS,
    NO_FIELDS,
    BlankLine,
    Call,
    Comment,
    Continuation,
    Deferred,
    Event,
    Field,
    FrozenDict,
    Lifecycle,
    Line,
    Message,
    Observation,
    QuoteFault,
    Result,
    Unknown,
    frozen_fields,
)
from bbox_lark.syntax.scan import (
    LINE_SCAN_MAX,
    item_loop,
    line_scanner,
    quoted_at,
    result_items,
    scan_items,
    typed_result,
    unquote,
)


# A str subclass: a plain Python class in the compiled build (mypyc compiles no such class).
@mypyc_attr(native_class=False)
class LineToken(str):
    """A token of one line: its text, terminal name and 0-based offset in the line.

    Lark's ``Token`` carries much more (lines, end positions) and costs several times as much
    to make; one line needs none of it. Lark's own tokens (from the fallback path) have the
    same two attributes, so callbacks accept either.
    """

    __slots__ = ("start_pos", "type")
    type: str
    start_pos: int

    @classmethod
    def make(cls, kind: str, text: str, pos: int) -> LineToken:
        token = cls(text)
        token.type = kind
        token.start_pos = pos
        return token


# Parts of a line, as the shaper hands them over:
#   ("blank",) ("continuation",) ("unknown",)
#   ("comment", comment kind or None, column of the body, body text)
#   ("event", line kind, head token, (call text, result, metrics) tokens or None)
#   ("lifecycle", "lifecycle", primitive token, (call text, result, metrics))
Parts = tuple[Any, ...]


def _event_callback(kind: str) -> Callable[[list[Any]], Parts]:
    """:class:`LineShaper`'s callback for the prefixed lines of one kind."""

    def event(children: list[Any]) -> Parts:
        return ("event", kind, children[0], children[1])

    return event


class LineShaper(Transformer[Token, Parts]):
    """Inline transformer: one callback per line rule of ``grammar/bbox.lark``.

    Each prefixed alternative of ``line`` is aliased to its line kind (``tool``,
    ``user``, ...); each instance has a callback for every kind the grammar names, so a new
    prefix is a change to the grammar alone. (Instance attributes, not ``__getattr__``:
    the compiled build, ``setup.py``, has no ``__getattr__`` on a subclass of a Python class.)"""

    def __init__(self) -> None:
        super().__init__()
        for kind in vocabulary().head_kinds.values():
            setattr(self, kind, _event_callback(kind))

    def blank(self, _children: list[Any]) -> Parts:
        return ("blank",)

    def continuation(self, _children: list[Any]) -> Parts:
        return ("continuation",)

    def unknown(self, _children: list[Any]) -> Parts:
        return ("unknown",)

    def call_tail(self, children: list[Token]) -> Parts:
        text = result = metrics = None
        for token in children:
            kind = token.type
            if kind == "RESULT" or kind == "FREE_RESULT":
                result = token
            elif kind == "METRICS":
                metrics = token
            else:
                text = token
        return (text, result, metrics)

    def free_tail(self, children: list[Token]) -> Parts:
        # A method, not ``free_tail = call_tail``: the compiled build drops such aliases.
        return self.call_tail(children)

    def primitive(self, children: list[Token]) -> Token:
        return children[0]

    def unknown_primitive(self, children: list[Token]) -> Token:
        return children[0]

    def lifecycle(self, children: list[Any]) -> Parts:
        return ("lifecycle", "lifecycle", children[0], children[1])

    def comment_keyword(self, children: list[Token]) -> Token:
        return children[0]

    def comment_body(self, children: list[Token]) -> Parts:
        return tuple(children)

    def comment(self, children: list[Any]) -> Parts:
        body = children[-1] if len(children) > 1 and not _is_ws(children[-1]) else None
        if body is None:
            return ("comment", None, len(children[0]) + 1, "")
        if isinstance(body, str):
            # A lone keyword (`# metrics`, `# model:`) is still a structured comment.
            kind = vocabulary().comment_kinds.get(getattr(body, "type", ""))
            return ("comment", kind, (getattr(body, "start_pos", 0) or 0) + 1, str(body))
        keyword = body[0]
        text = "".join(body)
        return ("comment", vocabulary().comment_kinds[keyword.type], (keyword.start_pos or 0) + 1, text)


def _is_ws(child: Any) -> bool:
    return isinstance(child, str) and getattr(child, "type", None) == "WS"


def field_dict(nodes: list[Field]) -> FrozenDict[str, Any]:
    """Each key's value, the first occurrence winning (read-only; a list as a tuple)."""
    if not nodes:
        return NO_FIELDS
    fields: dict[str, Any] = {}
    for node in nodes:
        if node.key not in fields:
            fields[node.key] = node.value
    return FrozenDict(fields)


def build_line(parts: Parts, raw: str, line: int, eol: str) -> Line:
    """The AST node for one body line."""
    what = parts[0]
    if what == "event" or what == "lifecycle":
        return _build_event(parts, raw, line, eol)
    if what == "comment":
        return comment_node(parts, raw, line, eol)
    if what == "blank":
        return BlankLine(line, raw, eol)
    if what == "continuation":
        return Continuation(line, raw, eol)
    return Unknown("unknown", line, raw, eol, text=raw)


def comment_node(parts: Parts, raw: str, line: int, eol: str) -> Comment:
    _, name, body_col, body = parts
    text = body.rstrip()
    nodes: list[Field] = []
    if "=" in text:
        start = 0
        if name is not None and name not in vocabulary().field_comment_kinds:
            # Skip the keyword itself ("metrics", "budget:", ...).
            start = len(text.split(None, 1)[0])
        nodes = scan_items(text[start:], body_col + start, free_text=True, want_args=False).fields
    fields = field_dict(nodes)
    metrics = fields if name == "metrics" else None
    return Comment(
        "comment",
        line,
        raw,
        eol,
        prefix="#",
        name=name,
        text=text,
        text_col=body_col,
        fields=fields,
        field_nodes=tuple(nodes),
        metrics=metrics,
        metric_nodes=tuple(nodes) if name == "metrics" else (),
    )


E = TypeVar("E", bound=Event)

_NAME = re.compile(r"\s*([^\s→]+)")


def read_result(raw: str, col: int, line: int) -> tuple[Result, list[Field], list[QuoteFault]]:
    """The text after an arrow (``raw``, at column ``col``): its typed result, the fields
    it holds and its unclosed quotes."""
    head, after, faults = result_items(raw, col)
    result = typed_result(raw, col, line, after, head)
    if result.kind == "blob" and after:
        # A blob pointer's own attributes are not fields of the event.
        head_end = result.col + len(result.head)
        after = [f for f in after if f.col >= head_end]
    return result, after, faults


def read_result_into(
    raw: str, col: int, line: int, fields: dict[str, Any]
) -> tuple[Result, list[QuoteFault]]:
    """:func:`read_result` without field nodes: the result's fields are added to the line's
    ``fields`` (the keys not in it already: a field before the arrow wins), then the result
    and its unclosed quotes are returned.

    ``typed_result`` is given the line's dict: whether the result's own fields are empty
    matters only to a result without a head, and there a text made only of fields has
    some (``tests/test_deferred_parts.py`` compares with :func:`read_result`)."""
    known = len(fields)
    head, _, faults = result_items(raw, col, fields)
    result = typed_result(raw, col, line, fields, head)
    if result.kind == "blob" and len(fields) > known:
        # A blob pointer's own attributes are not fields of the event: their columns tell.
        for key in list(fields)[known:]:
            del fields[key]
        _, nodes, faults = read_result(raw, col, line)
        for key, value in field_dict(nodes).items():
            if key not in fields:
                fields[key] = value
    return result, faults


def _metric_fields(raw: str, metrics_start: int, into: dict[str, Any] | None = None) -> list[Field]:
    """The fields of the trailing ``# metrics`` comment at ``metrics_start`` (into ``into``,
    if given, instead)."""
    offset = raw.index("metrics", metrics_start) + len("metrics")
    return item_loop(raw[offset:], offset + 1, False, True, False, into)[0]


def deferred_parts(
    raw: str,
    call_start: int,
    call_end: int,
    free: bool,
    result_start: int,
    result_end: int,
    metrics_start: int,
    line: int,
) -> tuple[tuple[Field, ...], tuple[Any, ...], tuple[Field, ...]]:
    """An event's ``(field_nodes, args, metric_nodes)``, read again from its source ``raw`` and
    the spans :func:`event_node` found (its call part after the name, its result with the
    arrow, its ``# metrics`` tail; -1: absent): what a :class:`~bbox_lark.syntax.nodes.Deferred`
    builds on first access, equal to what :func:`event_node` builds at once with
    :data:`DEFER_PARTS` off (``tests/test_deferred_parts.py``)."""
    nodes: list[Field] = []
    args: list[Any] = []
    call = raw[call_start:call_end]
    if call and (not free or "=" in call):
        scan = scan_items(call, call_start + 1, free_text=free, want_args=not free)
        nodes, args = scan.fields, scan.args
    if result_start >= 0:
        arrow = 1 if raw[result_start] == "→" else 2
        nodes = nodes + read_result(raw[result_start + arrow : result_end], result_start + 1 + arrow, line)[1]
    metric_nodes = tuple(_metric_fields(raw, metrics_start)) if metrics_start >= 0 else ()
    return tuple(nodes), tuple(args), metric_nodes


#: True: :func:`event_node` builds at once only what ``check`` reads on every line
#: (``fields``, ``quote_faults``, ``result``, ``metrics``, the names and columns) and leaves
#: ``field_nodes``, ``args`` and ``metric_nodes`` to :func:`deferred_parts` on first access
#: (no :class:`Field` is made for a line nobody asks about); False builds them all at once,
#: the reference the tests compare with.
DEFER_PARTS = True


def _build_event(parts: Parts, raw: str, line: int, eol: str) -> Event:
    """The event of the LALR driver's parts: its tokens as spans of ``raw``."""
    what, kind, head, (text_token, result_token, metrics_token) = parts
    text_end = text_token.start_pos + len(text_token) if text_token is not None else -1
    return event_node(
        kind,
        what == "lifecycle",
        str(head),
        raw,
        text_token.start_pos if text_token is not None else -1,
        text_end,
        result_token.start_pos if result_token is not None else -1,
        result_token.start_pos + len(result_token) if result_token is not None else -1,
        metrics_token.start_pos if metrics_token is not None else -1,
        line,
        eol,
    )


def scanned_line(raw: str, line: int, eol: str) -> Line | None:
    """The node of ``raw`` from the one anchored scan (:func:`bbox_lark.syntax.scan.line_scanner`),
    or None when the scan does not take the line (the LALR driver then parses it)."""
    if len(raw) > LINE_SCAN_MAX:
        return None
    match = line_scanner().match(raw)
    if match is None:
        return None
    head = match["call"]
    if head is None:
        head = match["free"]
        if head is None:
            if match["blank"] is not None:
                return BlankLine(line, raw, eol)
            return Continuation(line, raw, eol)
    lifecycle = head[0] == "@"
    kind = "lifecycle" if lifecycle else _head_kinds()[head.partition(":")[0]]
    text_start, text_end = match.span("text")
    result_start, result_end = match.span("result")
    return event_node(
        kind,
        lifecycle,
        head,
        raw,
        text_start,
        text_end,
        result_start,
        result_end,
        match.start("metrics"),
        line,
        eol,
    )


@cache
def _head_kinds() -> dict[str, str]:
    return vocabulary().prefix_kinds


def event_node(
    kind: str,
    lifecycle: bool,
    head: str,
    raw: str,
    text_start: int,
    text_end: int,
    result_start: int,
    result_end: int,
    metrics_start: int,
    line: int,
    eol: str,
) -> Event:
    """The node of an event or lifecycle line from its tokens' spans in ``raw`` (-1: absent):
    the head (prefix and name, or ``@primitive``), the call text, the result (from its arrow)
    and a trailing ``# metrics`` comment."""
    spaced = False
    leading_args: list[Any] = []
    if text_start >= 0:
        call = raw[text_start:text_end]
    else:
        call, text_start = "", len(raw)
    if lifecycle:
        prefix, name, name_col = "@", head[1:], 2
    else:
        prefix, _, name = head.partition(":")
        name_col = len(prefix) + 2
        if kind == "mode":
            stripped = name.lstrip()
            name_col += len(name) - len(stripped)
            name = stripped
        elif name == "" and prefix in vocabulary().named_prefixes and call.strip():
            # `t: read ...`: a space before the name (warned about by a check).
            match = _NAME.match(call)
            if match is not None and match[1].startswith('"'):
                # `t: "read a.rs"`: the quote opens a string (docs/reference.md#quotes). The name is the
                # string's first word if the string closes (the rest of it is the first
                # argument); an unclosed one is E012 (from the item scanner) and no name.
                quoted = quoted_at(call, match.start(1))
                match = None
                if quoted is not None:
                    words = unquote(quoted[0]).split(None, 1)
                    if words:
                        name, spaced = words[0], True
                        inside = quoted[0][1:]
                        name_col = text_start + quoted.start() + 2 + len(inside) - len(inside.lstrip())
                        if len(words) > 1:
                            leading_args.append(words[1])
                        call = call[quoted.end() :]
                        text_start += quoted.end()
            if match is not None:
                name, name_col, spaced = match[1], text_start + match.start(1) + 1, True
                call = call[match.end() :]
                text_start += match.end()
        if not name:
            name, name_col = None, None
    free = prefix in vocabulary().free_text_prefixes
    text = call.strip()
    text_col = text_start + 1 + (len(call) - len(call.lstrip())) if text else len(raw) + 1
    result = None
    arrow_text = arrow_col = None
    metrics: dict[str, Any] | None = None
    field_nodes: tuple[Field, ...] = ()
    args: tuple[Any, ...] = ()
    metric_nodes: tuple[Field, ...] = ()
    if DEFER_PARTS and not leading_args:
        # The fields' dict and the quote faults from item scans that make no Field; a
        # Deferred (deferred_parts, from the same spans) in the slots of the parts left for
        # later, unless there is nothing in them (no field: the dict is empty; no call part).
        fields: dict[str, Any] = {}
        faults: list[QuoteFault] = []
        # What scan_items' shortcut skips here (only words: no field, no fault) is skipped.
        if "=" in call or (not free and ('"' in call or "[" in call)):
            faults = item_loop(call, text_start + 1, False, free, False, fields)[2]
        if result_start >= 0:
            arrow_text = "→" if raw[result_start] == "→" else "->"
            arrow_col = result_start + 1
            result_raw = raw[result_start + len(arrow_text) : result_end]
            result, after_faults = read_result_into(result_raw, arrow_col + len(arrow_text), line, fields)
            if after_faults:
                faults.extend(after_faults)
        if metrics_start >= 0:
            metrics = {}
            _metric_fields(raw, metrics_start, metrics)
        want_args = bool(call) and not free
        if fields or metrics or want_args:
            deferred = Deferred(
                (
                    deferred_parts,
                    raw,
                    text_start,
                    text_start + len(call),
                    free,
                    result_start,
                    result_end,
                    metrics_start,
                    line,
                )
            )
            if fields:
                field_nodes = deferred
            if want_args:
                args = deferred
            if metrics:
                metric_nodes = deferred
    else:
        nodes: list[Field] = []
        arg_list: list[Any] = list(leading_args)
        faults = []
        if call and (not free or "=" in call):
            scan = scan_items(call, text_start + 1, free_text=free, want_args=not free)
            nodes, arg_list, faults = scan.fields, leading_args + scan.args, scan.faults
        if result_start >= 0:
            arrow_text = "→" if raw[result_start] == "→" else "->"
            arrow_col = result_start + 1
            result_raw = raw[result_start + len(arrow_text) : result_end]
            result, after, after_faults = read_result(result_raw, arrow_col + len(arrow_text), line)
            faults.extend(after_faults)
            nodes.extend(after)
        if metrics_start >= 0:
            found = _metric_fields(raw, metrics_start)
            metric_nodes = tuple(found)
            metrics = field_dict(found)
        fields = field_dict(nodes)
        field_nodes = tuple(nodes)
        args = tuple(arg_list)
    frozen = frozen_fields(fields)
    frozen_metrics = frozen_fields(metrics) if metrics is not None else None
    cls = node_class(kind)
    faulted = tuple(faults)
    if _positional():
        # By position, in each family's field order (_FAMILY_FIELDS): a fifth of the cost
        # of making the node is matching keywords.
        if cls is Call:
            return Call(
                kind, line, raw, eol, 1, prefix, text, text_col, frozen, field_nodes, (), faulted, None,
                name, name_col, spaced, args, arrow_text, arrow_col, result, frozen_metrics, metric_nodes,
            )  # fmt: skip
        if cls is Observation:
            return Observation(
                kind, line, raw, eol, 1, prefix, text, text_col, frozen, field_nodes, (), faulted, None,
                args, arrow_text, arrow_col, result, frozen_metrics, metric_nodes,
            )  # fmt: skip
        if cls is Lifecycle:
            return Lifecycle(
                kind, line, raw, eol, 1, prefix, text, text_col, frozen, field_nodes, (), faulted, None,
                name, name_col, args, arrow_text, arrow_col, result, frozen_metrics, metric_nodes,
            )  # fmt: skip
        if cls is Message:
            return Message(
                kind, line, raw, eol, 1, prefix, text, text_col, frozen, field_nodes, (), faulted, None,
                arrow_text, arrow_col, result, frozen_metrics, metric_nodes,
            )  # fmt: skip
    return family_node(
        cls,
        kind,
        line,
        raw,
        eol,
        prefix=prefix,
        name=name,
        name_col=name_col,
        spaced_name=spaced,
        text=text,
        text_col=text_col,
        fields=frozen,
        field_nodes=field_nodes,
        args=args,
        arrow=arrow_text,
        arrow_col=arrow_col,
        result=result,
        metrics=frozen_metrics,
        metric_nodes=metric_nodes,
        quote_faults=faulted,
    )


def family_node(cls: type[E], kind: str, line: int, source: str | None, eol: str = "\n", **values: Any) -> E:
    """A node of family ``cls`` from values given by name, the parts it does not hold left
    out: they must be their empty value (:data:`~bbox_lark.syntax.nodes.EMPTY_PARTS`), else
    TypeError (a ``result`` for a :class:`~bbox_lark.syntax.nodes.Comment`, ...)."""
    own = cls.__dataclass_fields__
    for key in [key for key in values if key not in own]:
        value = values.pop(key)
        if key not in EMPTY_PARTS or value != EMPTY_PARTS[key] or type(value) is Deferred:
            raise TypeError(f"a {cls.__name__} line holds no {key} (given {value!r})")
    return cls(kind, line, source, eol, **values)


_BASE_FIELDS = (
    "kind",
    "line",
    "source",
    "eol",
    "col",
    "prefix",
    "text",
    "text_col",
    "fields",
    "field_nodes",
    "continuation",
    "quote_faults",
    "emitted",
)
_RESULT_FIELDS = ("arrow", "arrow_col", "result", "metrics", "metric_nodes")

#: The fields of the families :func:`event_node` makes by position, in order (as long as the
#: classes have exactly these: :func:`_positional`; else it passes keywords).
_FAMILY_FIELDS: dict[type[Event], tuple[str, ...]] = {
    Call: (*_BASE_FIELDS, "name", "name_col", "spaced_name", "args", *_RESULT_FIELDS),
    Observation: (*_BASE_FIELDS, "args", *_RESULT_FIELDS),
    Lifecycle: (*_BASE_FIELDS, "name", "name_col", "args", *_RESULT_FIELDS),
    Message: (*_BASE_FIELDS, *_RESULT_FIELDS),
}


@cache
def _positional() -> bool:
    """True when each family of :data:`_FAMILY_FIELDS` has exactly those fields, in that order."""
    return all(
        tuple(f.name for f in dataclasses.fields(cls)) == names for cls, names in _FAMILY_FIELDS.items()
    )


@cache
def _classes() -> dict[str, type[Event]]:
    vocab = vocabulary()
    classes: dict[str, type[Event]] = {}
    for prefix, kind in vocab.prefix_kinds.items():
        if prefix in vocab.free_text_prefixes:
            classes[kind] = Message
        else:
            classes[kind] = Call
    classes[vocab.prefix_kinds["o"]] = Observation
    classes.update(comment=Comment, lifecycle=Lifecycle, unknown=Unknown)
    return classes


def node_class(kind: str) -> type[Event]:
    """The node class of a line kind (:class:`~bbox_lark.syntax.nodes.Call` for ``tool``, ...)."""
    return _classes().get(kind, Event)
