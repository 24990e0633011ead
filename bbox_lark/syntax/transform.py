"""How nodes are built from values: the machinery behind :mod:`bbox_lark.syntax.build` (docs/design.md,
"Nodes you can build"). A builder writes its node's line (:mod:`bbox_lark.syntax.printer`), reads it
back once with the parser (:func:`bbox_lark.syntax.parser.parse_line`) as a check and keeps the
line as the node's ``emitted`` text, so this module sits above both; the parse path itself is
:mod:`bbox_lark.syntax.shape`. Call the builders through :mod:`bbox_lark.syntax.build`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, TypeVar, cast

from bbox_lark.syntax.grammar import compiled, vocabulary
from bbox_lark.syntax.nodes import (
    Continuation,
    Emitted,
    Event,
    Field,
    QuoteFault,
    Result,
    node_values,
    printed_parts,
)
from bbox_lark.syntax.parser import parse_line
from bbox_lark.syntax.printer import ARROW, Layout, emit_line, field_text, layout_line
from bbox_lark.syntax.scan import UNWRITABLE, line_scanner, quote, render_arg, scan_items
from bbox_lark.syntax.shape import comment_node, family_node, field_dict

# The importers read these here; they belong to the parse path (:mod:`bbox_lark.syntax.shape`).
from bbox_lark.syntax.shape import node_class as node_class
from bbox_lark.syntax.shape import read_result as read_result
from bbox_lark.syntax.text import decode, text_of

# -- nodes from values (:mod:`bbox_lark.syntax.build`; docs/design.md "Nodes you can build") --

E = TypeVar("E", bound=Event)


def _kind(kind: str, cls: type[Event]) -> tuple[str, str]:
    """(line kind, prefix) for a kind or a prefix, checked against the builder's class."""
    prefixes = vocabulary().prefix_kinds
    if kind in prefixes:
        kind = prefixes[kind]
    if kind == "lifecycle":
        prefix = "@"
    else:
        prefix = next((p for p, k in prefixes.items() if k == kind), "")
        if not prefix:
            raise ValueError(f"unknown line kind {kind!r}")
    if node_class(kind) is not cls:
        raise ValueError(f"a {kind} line is a {node_class(kind).__name__}, not a {cls.__name__}")
    return kind, prefix


def _checked(node: E) -> E:
    """``node`` with its emitted line as its text, once that line has been read back whole to
    the same values: only for the lines whose validity is the grammar's whole-line judgement
    (an unknown line is one that reads as nothing else) and for a laid-out line the one
    anchored scan does not take (:func:`_laid_out`). Fields and arguments are quoted so that
    they always read back; free text that the line grammar reads otherwise is a
    ValueError, not a node that would print something else."""

    text = emit_line(node)
    again = parse_line(text, 0, node.eol)
    values = node_values(node)
    if not isinstance(again, Event) or node_values(replace(again, continuation=node.continuation)) != values:
        raise ValueError(f"{text!r} would not read back as the values it was built from")
    return _emitted(node, text)


def _emitted(node: E, text: str) -> E:
    """``node`` (just made here, seen by no one else yet) with ``text`` as its printed line."""
    object.__setattr__(node, "emitted", Emitted(text, printed_parts(node)))
    return node


def _holds(layout: Layout, head: str, *, free: bool) -> bool | None:
    """Whether the line grammar splits ``layout.text`` where the layout put its parts: the
    head ends where it was written, the result starts at the arrow written, the trailing
    metrics comment where it was written (each part was made by the printer's renderers from
    values, and each free-text part is read below by the parse side's own readers of that
    part). One anchored match of the parser's line scan (:func:`bbox_lark.syntax.scan.line_scanner`,
    the grammar's terminals as atomic groups: linear, nothing built); None when the scan does
    not take the line (the caller then reads the line back whole)."""
    match = line_scanner().match(layout.text)
    if match is None:
        return None
    return (
        match.end("free" if free else "call") == len(head)
        and match.start("result") == (-1 if layout.arrow is None else layout.arrow)
        and match.start("metrics") == (-1 if layout.metrics_at is None else layout.metrics_at)
    )


def _one_line(text: str, what: str) -> str:
    if "\n" in text or text != text.strip():
        raise ValueError(f"{what} must be one line without surrounding whitespace: {text!r}")
    return text


def _field_pairs(fields: Any) -> list[tuple[str, Any, bool]]:
    """(key, value, quoted) for each field a builder was given."""
    if fields is None:
        return []
    items = fields.items() if isinstance(fields, Mapping) else fields
    pairs: list[tuple[str, Any, bool]] = []
    for item in items:
        if isinstance(item, Field):
            key, value, quoted = item.key, item.value, item.quoted
        else:
            key, value = item
            quoted = False
        if not isinstance(key, str) or "=" in key or compiled("FIELD").fullmatch(key + "=") is None:
            raise ValueError(f"{key!r} is not a field key")
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (int, float)):
            value = str(value)  # a number is written as Python prints it (step=3, cost=0.5)
        elif not isinstance(value, str):
            value = tuple(
                str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in value
            )
            if not all(isinstance(v, str) for v in value):
                raise ValueError(f"field {key}: a list holds strings and numbers")
        pairs.append((key, value, quoted))
    return pairs


def _fields_text(pairs: list[tuple[str, Any, bool]], *, arrow: bool = True) -> list[str]:

    return [field_text(Field(k, v, "", 0, 0, q), arrow=arrow) for k, v, q in pairs]


def _placed(pairs: list[tuple[str, Any, bool]], texts: list[str], offsets: tuple[int, ...]) -> list[Field]:
    """Field nodes for ``pairs`` written as ``texts`` at ``offsets`` of the emitted line."""
    nodes = []
    for (key, value, _), text, offset in zip(pairs, texts, offsets, strict=True):
        raw_value = text[len(key) + 1 :]
        quoted = raw_value.startswith('"') and isinstance(value, str)
        nodes.append(Field(key, value, raw_value, offset + 1, offset + len(key) + 2, quoted))
    return nodes


def _continuation(lines: Any) -> tuple[Continuation, ...]:
    found = []
    for item in lines:
        if isinstance(item, Continuation):
            found.append(item)
            continue
        text = str(item)
        if not text.strip() or "\n" in text or text.endswith("\r"):
            # Blank text would make a blank line; a final "\r" would be read as the ending.
            raise ValueError(f"a continuation line needs text on one line: {text!r}")
        found.append(Continuation(0, "  " + text, "\n"))
    return tuple(found)


def _result_text(result: Result | None) -> str | None:
    if result is None:
        return None
    return _one_line(result.text, "a result") if result.text else ""


def _finish(
    cls: type[E],
    kind: str,
    prefix: str,
    name: str | None,
    head: str,
    words: list[str],
    call_fields: list[Field],
    args: tuple[Any, ...],
    text: str,
    result: Result | None,
    metrics: list[tuple[str, Any, bool]] | None,
    continuation: Any,
    *,
    free: bool = False,
) -> E:
    """The node of a call-like or message line, its columns those of its emitted line. A
    free-text result that the rest of the line would make read otherwise (an unclosed quote
    that a quoted metrics value closes) is written as written text instead."""

    def laid_out(with_result: Result | None) -> E:
        return _laid_out(
            cls,
            kind,
            prefix,
            name,
            head,
            words,
            call_fields,
            args,
            text,
            with_result,
            metrics,
            continuation,
            free=free,
        )

    try:
        return laid_out(result)
    except ValueError:
        if result is None or result.kind != "text" or result.text.startswith('"') or _REFUSING_TEXT.get():
            raise
    written, _, _ = read_result(quote(text_of(result)), 1, 0)
    return laid_out(written)


def _laid_out(
    cls: type[E],
    kind: str,
    prefix: str,
    name: str | None,
    head: str,
    words: list[str],
    call_fields: list[Field],
    args: tuple[Any, ...],
    text: str,
    result: Result | None,
    metrics: list[tuple[str, Any, bool]] | None,
    continuation: Any,
    *,
    free: bool = False,
) -> E:

    metric_texts = _fields_text(metrics, arrow=False) if metrics is not None else None
    result_text = _result_text(result)
    layout = layout_line(head, words, result_text, metric_texts)
    nodes = list(call_fields)
    faults: list[QuoteFault] = []
    if free and text:
        col = layout.words[0] + 1
        found = scan_items(text, col, free_text=True, want_args=False)
        nodes, faults = found.fields, found.faults
    elif call_fields:
        nodes = _placed(
            [(f.key, f.value, f.quoted) for f in call_fields], words[len(args) :], layout.words[len(args) :]
        )
    read = None
    if layout.arrow is not None:
        at = layout.arrow + len(ARROW)
        end = layout.result + len(result_text or "") if layout.result is not None else at
        read, after, after_faults = read_result(layout.text[at:end], at + 1, 0)
        nodes.extend(after)
        faults.extend(after_faults)
    metric_nodes: tuple[Field, ...] = ()
    if metrics is not None and metric_texts is not None:
        metric_nodes = tuple(_placed(metrics, metric_texts, layout.metrics))
    holds = _holds(layout, head, free=free)
    if holds is False:
        raise ValueError(f"{layout.text!r} would not read back as the values it was built from")
    node = family_node(
        cls,
        kind,
        0,
        None,
        prefix=prefix,
        name=name,
        name_col=len(prefix) + 2 if name is not None and kind != "lifecycle" else (2 if name else None),
        text=text,
        text_col=layout.words[0] + 1 if words else len(layout.text) + 1,
        fields=field_dict(nodes),
        field_nodes=tuple(nodes),
        args=args,
        arrow=ARROW if read is not None else None,
        arrow_col=layout.arrow + 1 if layout.arrow is not None else None,
        result=read,
        metrics=field_dict(list(metric_nodes)) if metrics is not None else None,
        metric_nodes=metric_nodes,
        continuation=_continuation(continuation),
        quote_faults=tuple(faults),
    )
    return _checked(node) if holds is None else _emitted(node, layout.text)


def build_message(
    cls: type[E],
    kind: str,
    text: str,
    fields: Any,
    result: Any,
    metrics: Any,
    continuation: Any,
    exact: bool = False,
) -> E:
    """A message node (:func:`bbox_lark.syntax.build.message`). Its text is written as is when
    the line reads it back as the same values (with ``exact``: when :func:`bbox_lark.text_of` gives ``text``
    back, no ``key=value`` in it is read as a field and it holds no character of
    :data:`~bbox_lark.syntax.scan.UNWRITABLE`), else as written text (a quoted string)."""

    kind, prefix = _kind(kind, cls)
    pairs = _field_pairs(fields)
    field_texts = _fields_text(pairs)
    metric_pairs = _field_pairs(metrics) if metrics is not None else None

    def make(written: str) -> E:
        full = " ".join([written, *field_texts]).strip()
        words = [full] if full else []
        return _finish(
            cls,
            kind,
            prefix,
            None,
            prefix + ":",
            words,
            [],
            (),
            full,
            result,
            metric_pairs,
            continuation,
            free=True,
        )

    # Without `exact`, text is written as is whenever the line reads it back as the same
    # values (what the builder always did); with it, also only when nothing in it is read
    # otherwise by text_of or as a field, and it holds nothing a line cannot hold.
    plain = not exact or (not UNWRITABLE.search(text) and decode(text) == text)
    # The line is read back to decide (no regular expression over the whole text: the
    # FREE_TEXT pattern backtracks exponentially on a text it does not match).
    if "\n" not in text and text == text.strip() and plain:
        try:
            node = make(text)
        except ValueError:
            pass
        else:
            if not exact:
                return node
            given = {key for key, _, _ in pairs}
            if text_of(node) == text and {f.key for f in node.field_nodes if not f.after_arrow} == given:
                return node
    _refused(text)
    return make(quote(text))


def build_call(
    cls: type[E],
    kind: str,
    name: str | None,
    args: Any,
    fields: Any,
    result: Any,
    metrics: Any,
    continuation: Any,
) -> E:

    kind, prefix = _kind(kind, cls)
    vocab = vocabulary()
    if kind == "lifecycle":
        if not name or compiled("AT_OTHER").fullmatch("@" + name) is None:
            raise ValueError(f"{name!r} is not a lifecycle primitive's name")
        head = "@" + name
    elif name is not None:
        head = f"{prefix}:{name}"
        terminal = next(t for t, k in vocab.head_kinds.items() if k == kind)
        if prefix not in vocab.named_prefixes or not name or compiled(terminal).fullmatch(head) is None:
            raise ValueError(f"{name!r} is not a name for a {kind} line")
    else:
        head = prefix + ":"
    values = tuple(a if isinstance(a, str) else tuple(a) for a in args)
    pairs = _field_pairs(fields)
    if name is None and prefix in vocab.named_prefixes and (values or pairs):
        raise ValueError(f"a {kind} line with arguments or fields needs a name")
    words = [render_arg(a) for a in values] + _fields_text(pairs)
    call_fields = [Field(k, v, "", 0, 0, q) for k, v, q in pairs]
    metric_pairs = _field_pairs(metrics) if metrics is not None else None
    return _finish(
        cls,
        kind,
        prefix,
        name,
        head,
        words,
        call_fields,
        values,
        " ".join(words),
        result,
        metric_pairs,
        continuation,
    )


def _comment_kind(text: str) -> str | None:
    for terminal, kind in vocabulary().comment_kinds.items():
        if compiled(terminal).match(text):
            return kind
    return None


def build_comment(cls: type[E], text: str, fields: Any, continuation: Any) -> E:
    full = " ".join([_one_line(text, "a comment"), *_fields_text(_field_pairs(fields), arrow=False)]).strip()
    node = comment_node(("comment", _comment_kind(full), 3 if full else 2, full), "", 0, "\n")
    # A ``#`` line is a comment whatever follows; its one-line text is read by the parse
    # side's own shaper of a comment body (keyword, fields), so nothing is read back.
    node = replace(node, source=None, continuation=_continuation(continuation))
    return cast(E, _emitted(node, emit_line(node)))


def build_unknown(cls: type[E], text: str, continuation: Any) -> E:
    if "\n" in text:
        raise ValueError(f"an unknown line is one line: {text!r}")
    return _checked(cls("unknown", 0, None, text=text, continuation=_continuation(continuation)))


_REFUSING_TEXT: ContextVar[bool] = ContextVar("refusing_text", default=False)


@contextmanager
def refusing_text() -> Iterator[None]:
    """Inside it, the builders refuse (ValueError) text a line cannot carry as written,
    instead of writing it as written text, as they did before any text could be written.
    The importers convert inside it: they keep their own documented fallbacks for such text
    (a continuation line, a skipped record) until each moves to written text."""
    token = _REFUSING_TEXT.set(True)
    try:
        yield
    finally:
        _REFUSING_TEXT.reset(token)


def _refused(what: str) -> None:
    if _REFUSING_TEXT.get():
        raise ValueError(f"{what!r} cannot be written as is (the builders refuse written text here)")


def _line_safe(text: str) -> bool:
    """True when ``text`` can stand in a line as written: one line, no character a line
    cannot hold (:data:`bbox_lark.syntax.scan.UNWRITABLE`), nothing that starts a metrics comment."""

    return (
        "\n" not in text
        and UNWRITABLE.search(text) is None
        and compiled("METRICS").search(" " + text) is None
    )


def _fits(written: str, wanted: Any, *, fields: str = "") -> bool:
    """True when a result written as ``written`` reads back as one that ``wanted`` accepts,
    with no unclosed quote, nothing a line cannot hold as written, and no field unless
    ``fields`` (the text after a bracket form) is nothing but ``key=value`` fields: then the
    caller means them as the line's fields after the arrow (an importer writing usage as
    real writers do: ``→ [running] tokens_in=10 tokens_out=20``)."""
    if not _line_safe(written) or written != written.strip():
        return False
    result, after, faults = read_result(written, 1, 0)
    only_fields = bool(fields) and len(after) == len(fields.split())
    return (not after or only_fields) and not faults and bool(wanted(result))


_STATUS_FORMS = ("count", "error", "retry", "selected", "auto_choice", "redacted", "blob")


def build_result(
    kind: str,
    *,
    number: int | None,
    unit: str | None,
    total: int | None,
    message: str | None,
    choices: tuple[str, ...],
    sha256: str | None,
    size: int | None,
    mime: str | None,
    fields: Any,
    text: str,
    rest: str,
) -> Result:
    """The typed result of ``kind`` from its values (:func:`bbox_lark.syntax.build.result`)."""

    vocab = vocabulary()
    if kind not in vocab.result_kinds:
        raise ValueError(f"unknown result kind {kind!r}")
    head = ""
    if kind in vocab.start_statuses or kind in vocab.final_statuses:
        head = f"[{kind}]"
    elif kind == "count":
        head = f"[{number}{' ' + unit if unit else ''}]"
    elif kind == "error":
        head = f"[err: {message}]" if message else "[error]"
        if message and not _fits(head, lambda r: r.message == message and not r.rest):
            _refused(message)
            head = "[error] " + quote(message)
    elif kind == "retry":
        head = f"[retry {number}/{total}]"
    elif kind == "selected":
        head = f"[selected: {', '.join(choices)}]"
    elif kind == "auto_choice":
        reason = f"reason={quote(message)}" if message is not None else ""
        head = "[auto: " + ", ".join([*choices, reason] if reason else choices) + "]"
    elif kind == "redacted":
        head = f"[redacted:{message or ''}]"
    elif kind == "blob":
        parts = [f"sha256={sha256}"] if sha256 is not None else []
        parts += [f"bytes={size}"] if size is not None else []
        parts += [f"mime={mime}"] if mime is not None else []
        head = " ".join(["@blob", *parts])
    elif kind == "fields":
        head = " ".join(_fields_text(_field_pairs(fields)))
    elif kind == "text":
        literal = bool(text) and decode(text) == text
        if literal and _fits(text, lambda r: r.kind == "text" and r.text == text):
            head = text
        else:
            _refused(text)
            head = quote(text)
    bracket_form = bool(head) and kind not in ("fields", "text")
    if (
        rest
        and bracket_form
        and (
            decode(rest) != rest
            or not _fits(f"{head} {rest}", lambda r: r.kind == kind and r.rest == rest, fields=rest)
        )
    ):
        _refused(rest)
        rest = quote(rest)
    written = " ".join(part for part in (head, rest) if part)
    _one_line(written, "a result") if written else None
    result, _, _ = read_result(written, 1, 0)
    wanted: dict[str, Any] = {"kind": kind}
    if head and kind not in ("fields", "text") and not head.startswith("[error] "):
        wanted["rest"] = rest
    if kind in ("count", "retry"):
        wanted.update(number=number, unit=unit or None, total=total)
    elif kind in ("auto_choice", "redacted"):
        wanted["message"] = message
    if kind in ("selected", "auto_choice"):
        wanted["choices"] = choices
    got = {key: getattr(result, key) for key in wanted}
    if kind == "text":
        wanted["text"], got["text"] = text, text_of(result)
    elif kind == "error":
        wanted["message"], got["message"] = message or "", text_of(result) if message else ""
    if kind == "blob" and result.blob is not None:
        blob = result.blob
        got["blob"] = (blob.sha256, blob.size, blob.mime)
        wanted["blob"] = (sha256, None if size is None else str(size), mime)
    if got != wanted:
        raise ValueError(f"{written!r} reads as {got}, not {wanted}")
    return result
