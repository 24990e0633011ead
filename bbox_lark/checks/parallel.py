"""A large file checked in parts, in parallel (``check --jobs``), with the output of one pass.

The file's body is cut at lines that start a non-comment event (their first character is
a lowercase letter or ``@``): such a line is never a continuation, a blank or a comment, so
every continuation has its owner in its own part and a suppression comment's target is at
most the first line of the next part. Each part, in a worker process:

* runs the rules whose findings depend on each node alone (``scope = "line"``: bytes,
  line kinds, blobs, typed values) and keeps their findings;
* runs the rules whose state adds up (``scope = "file"``: session counts, redaction
  counts) and sends their state back;
* sends, for the rules that need the nodes in order (``scope = "sequence"``: correlation,
  step order, elapsed marks) and for the suppressions, only the nodes they want, slimmed
  (kind, line, names, result kind, comment text and the few fields they read).

The parent reads the header, then takes the parts in order: it adds their findings,
merges the ``file`` states and runs the ``sequence`` rules and the suppressions over the
slimmed nodes, exactly as over the whole file; so a call opened in one part and closed in
another pairs as in one pass, and the findings are the same, sorted the same way.

One thing the parent does not keep is the history of every call key (W002: an observation
whose key no earlier line had), which would grow with the file: it keeps the keys of the
last two parts (:class:`~bbox_lark.syntax.correlate.RecentKeys`). An observation whose key is
neither open nor recent is put aside, and once every part is read the earlier parts' bytes
are searched again for those keys' values, in the workers, and only the lines that hold one
are parsed (:func:`first_seen`). A clean log has no such observation and pays nothing; a
log that has them pays one more reading of the bytes before the last one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from bbox_lark._classes import dataclass
from bbox_lark.checks import Checker, Context, Dispatch, Rule
from bbox_lark.checks.base import SUPPRESSION_MARKER, PairsInParts
from bbox_lark.files.runner import in_order
from bbox_lark.syntax.correlate import FAMILIES, Key, RecentKeys, call_key
from bbox_lark.syntax.nodes import (
    BlankLine,
    Continuation,
    Diagnostic,
    Event,
    Field,
    Line,
    Result,
    SourceFault,
    frozen_fields,
)
from bbox_lark.syntax.parser import Head, NodeStream, iter_nodes
from bbox_lark.syntax.record import Record, iter_records
from bbox_lark.syntax.scan import UNWRITABLE
from bbox_lark.syntax.shape import family_node, node_class
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from concurrent.futures import Executor

#: A file is split when it has at least this many bytes.
SPLIT_MIN_BYTES = 8 << 20
#: About how many bytes a part has. Small parts keep the parent small: it holds the
#: results of the parts in flight (their slimmed nodes), about ten times a part's size.
PART_BYTES = 64 << 10

_STARTS_EVENT = frozenset(b"abcdefghijklmnopqrstuvwxyz@")


@dataclass(frozen=True, slots=True)
class Part:
    """Lines ``first_line`` onwards, from byte ``start`` to byte ``end`` of the file."""

    start: int
    end: int
    first_line: int


@dataclass(slots=True)
class PartResult:
    found: list[Diagnostic]
    #: The ``file`` rules, by class name, with this part's state.
    states: dict[str, Rule]
    #: Slimmed nodes for the ``sequence`` rules and the suppressions, in order, as plain
    #: tuples (:func:`_slim`; much cheaper to send between processes than nodes).
    nodes: list[Slim]


@dataclass(frozen=True, slots=True)
class Options:
    blobs: Path | None
    select: tuple[str, ...] | None
    ignore: tuple[str, ...] | None
    max_line: int = DEFAULT_MAX_LINE
    #: Values that are not secrets (``allowed-secrets``).
    allowed_secrets: frozenset[str] = frozenset()


def plan(
    path: str, max_line: int = DEFAULT_MAX_LINE, part_bytes: int | None = None
) -> tuple[Head, list[SourceFault], list[Part]] | None:
    """The header (and its lines' byte-level faults) and the parts of the body; None when
    the body cannot be cut (one part). ``part_bytes``: about how many bytes a part has
    (default :data:`PART_BYTES`)."""
    part_bytes = part_bytes or PART_BYTES
    with open(path, "rb") as file:
        stream = iter_nodes(file, max_line=max_line, attach=False)
        head = next(stream)
        assert isinstance(head, Head)
        faults = [f for f in stream.faults if f.line < head.body_start]
    parts: list[Part] = []
    with open(path, "rb") as file:
        offset = 0
        number = 1
        for line in itertools.islice(file, head.body_start - 1):
            offset += len(line)
            number += 1
        start, first = offset, number
        target = offset + part_bytes
        for line in file:
            if offset >= target and line[0] in _STARTS_EVENT:
                parts.append(Part(start, offset, first))
                start, first = offset, number
                target = offset + part_bytes
            offset += len(line)
            number += 1
        parts.append(Part(start, offset, first))
    if len(parts) < 2:
        return None
    return head, list(faults), parts


def _lines(path: str, part: Part) -> Iterator[bytes]:
    with open(path, "rb") as file:
        file.seek(part.start)
        left = part.end - part.start
        while left > 0:
            line = file.readline()
            if not line:
                return
            left -= len(line)
            yield line


def _body_nodes(lines: Iterable[bytes], first_line: int, max_line: int) -> NodeStream:
    """The nodes of body lines that start at line ``first_line`` (no header to look for),
    each as soon as its line is read; the stream's empty :class:`Head` already taken."""
    stream = iter_nodes(lines, max_line=max_line, attach=False, first_line=first_line, header=False)
    next(stream)
    return stream


def check_part(path: str, part: Part, options: Options) -> PartResult:
    """One part, in a worker process (see the module's notes)."""
    checker = Checker(
        path=Path(path),
        blobs=options.blobs,
        select=options.select,
        ignore=options.ignore,
        allowed_secrets=options.allowed_secrets,
    )
    ctx = Context(
        Head(False, (), None, part.first_line),
        Path(path),
        options.blobs,
        allowed_secrets=options.allowed_secrets,
    )
    line_rules = [r for r in checker.rules if r.scope == "line"]
    file_rules = [r for r in checker.rules if r.scope == "file"]
    sequence = [r for r in checker.rules if r.scope == "sequence"]
    keys = frozenset().union(*(r.keys for r in sequence))
    for rule in line_rules:
        rule.start(ctx)  # what a rule needs from the header (the blob folder); the parent
    ctx.found.clear()  # reports the header's findings
    node_rules = Dispatch((*line_rules, *file_rules))
    fault_rules = [r.fault for r in line_rules if type(r).fault is not Rule.fault]
    nodes: list[Slim] = []
    lines = _lines(path, part)
    stream = iter_records(lines, max_line=options.max_line, first_line=part.first_line, header=False)
    next(stream)  # the part's empty Head
    faults = stream.faults
    waiting = True  # the part's first line may be the target of the last part's suppression
    for item in stream:
        node = cast(Record, item)
        if faults:
            for fault in faults:
                for report in fault_rules:
                    report(fault, ctx)
            faults.clear()
        kind = node.kind
        for check in node_rules[kind]:
            check(node, ctx)
        marker = kind == "comment" and node.text.startswith(SUPPRESSION_MARKER)
        if marker or any(r.wants(node) for r in sequence):
            nodes.append(_slim(node, keys) if node.is_event else (node.kind, node.line))
        elif waiting and kind != "comment":
            nodes.append(("blank", node.line))  # a suppression's target
        if marker:
            waiting = True
        elif kind != "comment":
            waiting = False
    states = {type(r).__name__: r for r in file_rules}
    return PartResult(ctx.found, states, nodes)


#: A slimmed node: ``(kind, line)`` for a blank line or a continuation (a suppression's
#: target), else the event's kind, line, prefix, name, comment text and its column, the
#: kept fields (key, value, raw value, column, value column, quoted, after the arrow) and
#: the result's kind.
Slim = tuple[Any, ...]


def _slim(event: Record, keys: frozenset[str]) -> Slim:
    """What the ``sequence`` rules and the suppressions read of an event, and no more (its
    field nodes built only when it holds a kept key)."""
    kind = event.kind
    return (
        kind,
        event.line,
        event.prefix,
        event.name,
        event.text if kind == "comment" else "",
        event.text_col if kind == "comment" else 1,
        ()
        if keys.isdisjoint(event.fields)
        else tuple(
            (n.key, n.value, n.raw_value, n.col, n.value_col, n.quoted, n.after_arrow)
            for n in event.field_nodes
            if n.key in keys
        ),
        event.result_kind,
    )


def _unslim(slim: Slim) -> Record:
    if len(slim) == 2:
        kind, line = slim
        node: Line = Continuation(line, "", "") if kind == "continuation" else BlankLine(line, "", "")
        return Record.of(node)
    kind, line, prefix, name, text, text_col, kept, result = slim
    field_nodes = tuple(Field(*values) for values in kept)
    fields: dict[str, Any] = {}
    for field in field_nodes:
        fields.setdefault(field.key, field.value)
    event = family_node(
        node_class(kind),
        kind,
        line,
        "",
        "",
        prefix=prefix,
        name=name,
        text=text,
        text_col=text_col,
        fields=frozen_fields(fields),
        field_nodes=field_nodes,
        result=Result(result, "", 1) if result is not None else None,
    )
    return Record.of(event)


def check_split(
    path: str,
    options: Options,
    pool: Executor,
    window: int,
    planned: tuple[Head, list[SourceFault], list[Part]],
) -> list[Diagnostic]:
    """Every finding of the file at ``path``, its parts checked by ``pool`` (at most
    ``window`` parts in flight: memory stays bounded by the parts' size, not the file's)."""
    head, faults, parts = planned
    checker = Checker(
        path=Path(path),
        blobs=options.blobs,
        select=options.select,
        ignore=options.ignore,
        allowed_secrets=options.allowed_secrets,
    )
    checker.start(head)
    for fault in faults:
        checker.fault(fault)
    ctx = checker.context
    assert ctx is not None
    states = {type(r).__name__: r for r in checker.rules if r.scope == "file"}
    sequence = Dispatch(r for r in checker.rules if r.scope == "sequence")
    suppressions = checker.suppressions
    recent = RecentKeys()
    correlation = next((r for r in checker.rules if isinstance(r, PairsInParts)), None)
    if correlation is not None:
        correlation.defer_history(recent)
    results: Iterator[PartResult] = in_order(
        pool, window, parts, lambda part: (check_part, (path, part, options))
    )
    for result in results:
        ctx.found += result.found
        for name, state in result.states.items():
            states[name].merge(state)
        for slim in result.nodes:
            node = _unslim(slim)
            suppressions.node(node)
            for check in sequence[node.kind]:
                check(node, ctx)
        recent.next_part()
    if correlation is not None and correlation.deferred:
        correlation.settle(_first_seen(path, options, pool, window, parts, correlation.deferred), ctx)
    return checker.finish()


#: Above this many keys to look for, the earlier parts are read again here rather than in
#: the workers (each worker would be sent the whole set with every part).
FIRST_SEEN_IN_WORKERS = 2000


def _first_seen(
    path: str,
    options: Options,
    pool: Executor,
    window: int,
    parts: list[Part],
    deferred: list[tuple[int, int, Key]],
) -> dict[Key, int]:
    """The line where each deferred key was first seen, in the parts before the last
    deferred observation."""
    keys = frozenset(key for _, _, key in deferred)
    last = max(line for line, _, _ in deferred)
    earlier = [part for part in parts if part.first_line < last]
    found: dict[Key, int] = {}
    if len(keys) > FIRST_SEEN_IN_WORKERS:
        results: Iterator[dict[Key, int]] = (first_seen(path, part, keys, options) for part in earlier)
    else:
        results = in_order(pool, window, earlier, lambda part: (first_seen, (path, part, keys, options)))
    for seen in results:
        for key, line in seen.items():
            found.setdefault(key, line)  # parts come in order: the first one found is the first
    return found


def first_seen(path: str, part: Part, keys: frozenset[Key], options: Options) -> dict[Key, int]:
    """The first line of ``part`` with each of ``keys`` on a line that registers call keys
    (what :class:`~bbox_lark.syntax.correlate.Pairer` counts as seen).

    Only the lines that hold a key's value can register it, so the part's bytes are searched
    for the values first (a value written quoted holds its longest run without a character
    that a quoted string escapes) and only the lines found are parsed, each as
    :func:`~bbox_lark.syntax.parser.iter_nodes` would parse it. A value that is all such characters
    makes every line of the part be parsed."""
    finder = _value_finder(keys)
    found: dict[Key, int] = {}
    if finder is None:
        _note_registrations(_body_nodes(_lines(path, part), part.first_line, options.max_line), keys, found)
        return found
    with open(path, "rb") as file:
        file.seek(part.start)
        data = file.read(part.end - part.start)
    number, counted, done = part.first_line, 0, 0
    for match in finder.finditer(data):
        if match.start() < done:
            continue  # a second value on a line already read
        start = data.rfind(b"\n", 0, match.start()) + 1
        end = data.find(b"\n", match.start())
        end = len(data) if end < 0 else end + 1
        number += data.count(b"\n", counted, start)
        counted = start
        _note_registrations(_body_nodes([data[start:end]], number, options.max_line), keys, found)
        done = end
    return found


def _value_finder(keys: frozenset[Key]) -> re.Pattern[bytes] | None:
    runs: set[bytes] = set()
    for _, value in keys:
        run = max(_ESCAPED.split(value), key=len)
        if not run:
            return None
        runs.add(run.encode("utf-8", "surrogateescape"))
    return re.compile(b"|".join(re.escape(run) for run in sorted(runs, key=lambda run: -len(run))))


#: The characters a quoted value writes as escapes (``scan.quote``).
_ESCAPED = re.compile(r'["\\\n\t]|' + UNWRITABLE.pattern)


def _note_registrations(nodes: Iterable[Line | Head], keys: frozenset[Key], found: dict[Key, int]) -> None:
    """Add to ``found`` the first line of each of ``keys`` on a line that registers it."""
    for node in nodes:
        if isinstance(node, Event) and node.kind in FAMILIES:
            key = call_key(node)
            if key is not None and key in keys:
                found.setdefault(key, node.line)
