"""Nodes from values: one builder function per family of line kinds, the result, the head, and
the edit of a node's values (docs/design.md, "Nodes you can build").

>>> from bbox_lark import build, emit
>>> emit(build.call("tool", "read", ["a.rs"], result=build.result("count", number=3, unit="lines")))
't:read a.rs → [3 lines]'

The nodes (:mod:`bbox_lark.syntax.nodes`) are plain data and import none of this: building prints a
node's line (:mod:`bbox_lark.syntax.printer`) and reads it back once with the parser as a check, so
the builders sit above both, as sqlglot's builder functions sit beside its expressions and
LibCST's nodes never import its parser. Each function here takes the arguments the node
classes' ``build`` classmethods took before (``Call.build(...)`` is ``build.call(...)``,
``Result.build(...)`` is ``build.result(...)``, ``Head.build(...)`` is ``build.head(...)``,
``node.with_(...)`` is ``build.edited(node, ...)``); re-reading an event from new source text
(``node.with_source(text)`` before) is :func:`bbox_lark.syntax.parser.reparse`. The machinery (laying
a line out, the read-back check, written text) is :mod:`bbox_lark.syntax.transform`.

A built node has no source (``source`` is None, ``line`` is 0): its ``raw`` is the canonical
text the builder printed, kept in ``emitted``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import yaml

from bbox_lark.syntax.nodes import (
    Call,
    Comment,
    Continuation,
    Event,
    Field,
    Head,
    Lifecycle,
    Message,
    Observation,
    Result,
    Unknown,
)
from bbox_lark.syntax.parser import iter_nodes
from bbox_lark.syntax.shape import node_class
from bbox_lark.syntax.transform import build_call, build_comment, build_message, build_result, build_unknown

#: Fields as a builder takes them: a mapping (``{"id": "call_1"}``; a list value is a
#: bracketed list), or a sequence of ``(key, value)`` pairs or :class:`~bbox_lark.syntax.nodes.Field` s
#: (which keeps repeated keys and the writer's quoting).
FieldsIn = Mapping[str, Any] | Sequence[Field | tuple[str, Any]] | None
#: Positional arguments: strings, and sequences of strings for bracketed lists.
ArgsIn = Sequence[str | Sequence[str]]
#: Continuation lines: their text (without indentation) or parsed continuation nodes.
ContinuationIn = Sequence[str | Continuation]


def result(
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
    (``build.result("ok")``), ``count`` (``number``, ``unit``), ``error`` (``message``),
    ``retry`` (``number``, ``total``), ``selected`` (``choices``), ``auto_choice``
    (``choices``, ``message``: the reason), ``redacted`` (``message``: the kind), ``blob``
    (``sha256``, ``size``, ``mime``), ``fields`` (``fields``), ``text`` (``text``) or
    ``empty``. ``rest`` is text after a bracket form (``[ok] 128 tests passed``).
    Any ``text``, error ``message`` or ``rest`` is accepted: what a result cannot carry
    as written becomes written text (``→ "[ok] is text here"``, ``→ [error] "a]b"``;
    ``docs/reference.md``, "Any text"), which :func:`bbox_lark.text_of` reads back.
    Raises ValueError when the other values do not read back as that kind."""
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


def message(
    kind: str,
    text: str = "",
    *,
    fields: FieldsIn = None,
    result: Result | None = None,
    metrics: FieldsIn = None,
    continuation: ContinuationIn = (),
    exact: bool = False,
) -> Message:
    """A message (``u a th td``) from values. ``kind`` is a line kind or its prefix (``user``,
    ``u``); ``fields`` are written after the text. Any text is accepted: text the line cannot
    carry as written (a line break, an arrow, `` # metrics ``, a control character, ...)
    is written as written text, a quoted string (``docs/reference.md``, "Any text").

    By default ``text`` is the line's text and may hold fields of its own (``Fix it
    step=2``), as :attr:`~bbox_lark.syntax.nodes.Event.text` gives it. With ``exact``, ``text`` is the
    message exactly: a ``key=value`` in it is never read as a field, and
    :func:`bbox_lark.text_of` gives ``text`` back."""
    return build_message(Message, kind, text, fields, result, metrics, continuation, exact)


def call(
    kind: str,
    name: str | None = None,
    args: ArgsIn = (),
    *,
    fields: FieldsIn = None,
    result: Result | None = None,
    metrics: FieldsIn = None,
    continuation: ContinuationIn = (),
) -> Call:
    """A call-like line (``t t! t~ s p m r x c q``) from values: ``build.call("tool", "read",
    ["src/a.rs"], fields={"id": "call_1"}, result=build.result("count", number=186,
    unit="lines"))``."""
    return build_call(Call, kind, name, args, fields, result, metrics, continuation)


def observation(
    args: ArgsIn = (),
    *,
    fields: FieldsIn = None,
    result: Result | None = None,
    metrics: FieldsIn = None,
    continuation: ContinuationIn = (),
) -> Observation:
    """An ``o:`` line from values: ``build.observation(fields={"id": "call_1"},
    result=build.result("ok"))``."""
    return build_call(Observation, "observation", None, args, fields, result, metrics, continuation)


def lifecycle(
    name: str,
    args: ArgsIn = (),
    *,
    fields: FieldsIn = None,
    result: Result | None = None,
    metrics: FieldsIn = None,
    continuation: ContinuationIn = (),
) -> Lifecycle:
    """A lifecycle line (``@start``, ``@end``, ...; ``name`` without the ``@``) from values."""
    return build_call(Lifecycle, "lifecycle", name, args, fields, result, metrics, continuation)


def comment(text: str = "", *, fields: FieldsIn = None, continuation: ContinuationIn = ()) -> Comment:
    """A comment from its text (``fields`` are written after it): ``build.comment("metrics",
    fields={"step": "3"})`` is ``# metrics step=3``."""
    return build_comment(Comment, text, fields, continuation)


def unknown(text: str, *, continuation: ContinuationIn = ()) -> Unknown:
    """A line that is nothing else (W003), written as given."""
    return build_unknown(Unknown, text, continuation)


class _HeaderDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, but a string holding U+0085, U+2028 or U+2029 is written
    double-quoted (``\\N``, ``\\L``, ``\\P``): in a plain or single-quoted scalar YAML folds
    them as line breaks, and the value would read back changed."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if _YAML_BREAKS.search(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_YAML_BREAKS = re.compile("[\x85\u2028\u2029]")
_HeaderDumper.add_representer(str, _represent_str)


def head(fields: dict[str, Any], *, bom: bool = False) -> Head:
    """The head of a header with these keys, in order (values: strings, numbers, lists and
    maps of them; None writes an empty value), as block YAML between ``---`` fences.
    Importers keep the header small (docs/reference.md#importers): large structures go in
    body lines or blobs."""
    text = "---\n"
    for key, value in fields.items():
        if value is None:
            text += f"{key}:\n"
            continue
        text += yaml.dump(
            {key: value},
            Dumper=_HeaderDumper,
            default_flow_style=False,
            allow_unicode=True,
            sort_keys=False,
            width=1 << 30,
        )
    text += "---\n"
    first = next(iter_nodes(text))
    assert isinstance(first, Head)
    return Head(bom, first.header_lines, first.header_info, first.body_start)


# -- editing a node's values ----------------------------------------------------------


def values_of(node: Event) -> dict[str, Any]:
    """The values a node's family builds it from (what :func:`edited` changes): the
    keyword arguments of its builder function, ``kind`` included where it takes one."""
    metrics = node.metric_nodes if node.metrics is not None else None
    match node:
        case Unknown(oversized=True):
            # An oversized line was never parsed: its text is its source.
            return {"text": node.raw, "continuation": node.continuation}
        case Unknown():
            return {"text": node.text, "continuation": node.continuation}
        case Message():
            return {
                "kind": node.kind,
                "text": node.text,
                "fields": None,
                "result": node.result,
                "metrics": metrics,
                "continuation": node.continuation,
            }
        case Comment():
            return {"text": node.text, "fields": None, "continuation": node.continuation}
    values: dict[str, Any] = {"kind": node.kind}
    if not isinstance(node, Observation):
        values["name"] = node.name
    values.update(
        args=node.args,
        fields=tuple(f for f in node.field_nodes if not f.after_arrow),
        result=node.result,
        metrics=metrics,
        continuation=node.continuation,
    )
    return values


def from_values(kind: str, values: dict[str, Any]) -> Event:
    """A node of line kind ``kind`` (or the ``kind`` in ``values``) from ``values``, the
    keyword arguments of its family's builder (:func:`values_of`)."""
    values = dict(values)
    kind = values.pop("kind", kind)
    cls = node_class(kind)
    if cls is Message:
        return message(kind, **values)
    if cls is Observation:
        return observation(**values)
    if cls is Lifecycle:
        return lifecycle(**values)
    if cls is Comment:
        return comment(**values)
    if cls is Unknown:
        return unknown(**values)
    if cls is Call:
        return call(kind, **values)
    raise ValueError(f"a {kind} line cannot be built from values")


def edited(node: Event, **changes: Any) -> Event:
    """A copy of ``node`` with some values changed (the keyword arguments of its family's
    builder), and without source: it prints its values canonically, so an edited node never
    carries stale text. ``line`` and ``eol`` are kept. (This was ``node.with_(**changes)``;
    to edit the text instead and keep the writer's spacing, use
    :func:`bbox_lark.syntax.parser.reparse`.)"""
    values = values_of(node)
    unknown_values = set(changes) - set(values)
    if unknown_values:
        raise TypeError(
            f"edited() of a {type(node).__name__} got unexpected values: {sorted(unknown_values)}"
        )
    values.update(changes)
    return replace(from_values(node.kind, values), line=node.line, eol=node.eol)
