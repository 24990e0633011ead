"""The parser: ``grammar/bbox.lark`` through Lark (LALR, contextual lexer).

Nothing here is built at import time. The Lark parser is made on first use, with its
grammar analysis cached on disk between runs (``Lark(cache=...)``).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from functools import cache
from typing import Any, cast

from lark import Lark
from lark.parsers.lalr_analysis import Shift

from bbox_lark.ast import BlankLine, Continuation, Document, Event, HeaderLine, Line
from bbox_lark.grammar import build_lark, compiled
from bbox_lark.header import read_header
from bbox_lark.source import DEFAULT_MAX_LINE, read_source
from bbox_lark.transform import LineShaper, LineToken, Parts, build_line

_SURROGATES = re.compile("[\udc80-\udcff]")


@cache
def lark_parser() -> Lark:
    """The Lark parser for every start rule, with the line shaper inlined."""
    return cast(Lark, build_lark(LineShaper()))


class LineDriver:
    """Lark's LALR loop for one line, without Lark's per-call machinery.

    It runs the parse table, the contextual lexer's per-state scanners and the inline
    callbacks of :func:`lark_parser` exactly as ``Lark.parse`` does (same grammar, same
    tables, same callbacks), but makes light tokens and skips the generic setup Lark does
    for every call, which costs more than parsing a short line. Anything unexpected falls
    back to ``Lark.parse``; ``tests/test_grammar.py`` checks that both agree.
    """

    __slots__ = ("_end", "_fallback", "_lexers", "_start", "_states", "_table")

    def __init__(self, lark: Lark, start: str = "line") -> None:
        frontend = lark.parser
        table = frontend.parser.parser.parse_table
        callbacks = frontend.parser.parser.callbacks
        self._start = table.start_states[start]
        self._end = table.end_states[start]
        # The parse table with every reduce resolved once: (shift?, state or callback,
        # number of children, rule name). Looking rules up at parse time would hash them.
        self._table: dict[int, dict[str, tuple[bool, Any, int, str]]] = {
            state: {
                symbol: (True, arg, 0, "")
                if action is Shift
                else (False, callbacks[arg], len(arg.expansion), arg.origin.name)
                for symbol, (action, arg) in actions.items()
            }
            for state, actions in table.states.items()
        }
        # The contextual lexer's scanners, compiled per parser state on first use: the
        # second-level start rules add states a body line never reaches, and compiling them
        # all would cost start-up time.
        self._lexers = frontend.lexer.lexers
        self._states: dict[int, tuple[tuple[Any, ...], dict[str, dict[str, str]] | None]] = {}
        self._fallback = lark

    def _state_lexer(self, state: int) -> tuple[tuple[Any, ...], dict[str, dict[str, str]] | None]:
        """The scanners of ``state`` and its keywords: strings Lark embedded in a wider
        pattern (``@start`` in AT_OTHER's ``@name``), looked up after a match as Lark's
        UnlessCallback does."""
        lexer = self._lexers[state]
        scanners = tuple(lexer.scanner._mres)
        keywords = {
            name: {term.pattern.value: term.name for term in callback.scanner.terminals}
            for name, callback in lexer.callback.items()
        }
        found = self._states[state] = (scanners, keywords or None)
        return found

    def parse(self, text: str) -> Parts:
        table, states = self._table, self._states
        stack = [self._start]
        values: list[Any] = []
        pos, end = 0, len(text)
        make_token = LineToken.make
        while True:
            state = stack[-1]
            if pos < end:
                lexer = states.get(state) or self._state_lexer(state)
                for scanner in lexer[0]:
                    match = scanner.match(text, pos)
                    if match is not None:
                        break
                else:
                    return cast(Parts, self._fallback.parse(text, start="line"))
                kind = match.lastgroup
                value = match.group()
                renames = lexer[1]
                if renames is not None and kind in renames:
                    kind = renames[kind].get(value, kind)
                token = make_token(kind, value, pos)
                pos = match.end()
            else:
                token = _END
            while True:
                try:
                    shift, target, size, origin = table[state][token.type]
                except KeyError:
                    return cast(Parts, self._fallback.parse(text, start="line"))
                if shift:
                    stack.append(target)
                    values.append(token)
                    break
                if size:
                    children = values[-size:]
                    del stack[-size:]
                    del values[-size:]
                else:
                    children = []
                values.append(target(children))
                state = table[stack[-1]][origin][1]
                stack.append(state)
                if token is _END and state == self._end:
                    return cast(Parts, values[-1])


_END = LineToken.make("$END", "", 0)


@cache
def line_driver() -> LineDriver:
    return LineDriver(lark_parser())


def parse_line(raw: str, line: int = 1, eol: str = "") -> Line:
    """Parse one body line's text (without its ending) into its AST node."""
    return build_line(line_driver().parse(raw), raw, line, eol)


def _is_fence(raw: str) -> bool:
    return compiled("FENCE").fullmatch(raw) is not None


def _starts_like_body(raw: str) -> bool:
    node = parse_line(raw)
    return isinstance(node, Event) and node.kind not in ("comment", "unknown")


def _split_header(
    lines: list[tuple[str, str]],
) -> tuple[list[HeaderLine], int | None, int | None, int]:
    """Find the header block. Returns its lines, the opening and closing fence line numbers
    and the index of the first body line."""
    index = 0
    while index < len(lines) and not lines[index][0].strip():
        index += 1
    if index == len(lines) or not _is_fence(lines[index][0]):
        return [], None, None, 0
    open_index = index
    for close in range(open_index + 1, len(lines)):
        if _is_fence(lines[close][0]):
            header = [
                HeaderLine(
                    n + 1,
                    raw,
                    eol,
                    "blank" if n < open_index else "fence" if n in (open_index, close) else "yaml",
                )
                for n, (raw, eol) in enumerate(lines[: close + 1])
            ]
            return header, open_index + 1, close + 1, close + 1
    # No closing fence: the header ends at the first blank line or body-like line.
    end = open_index + 1
    while end < len(lines) and lines[end][0].strip() and not _starts_like_body(lines[end][0]):
        end += 1
    header = [
        HeaderLine(n + 1, raw, eol, "blank" if n < open_index else "fence" if n == open_index else "yaml")
        for n, (raw, eol) in enumerate(lines[:end])
    ]
    return header, open_index + 1, None, end


def iter_body(
    lines: list[tuple[str, str]], start: int, oversized: frozenset[int] = frozenset()
) -> Iterator[Line]:
    """Parse body lines one by one (``start`` is the index of the first), streaming."""
    parse = line_driver().parse
    for index in range(start, len(lines)):
        raw, eol = lines[index]
        number = index + 1
        if number in oversized:
            yield Event("unknown", number, raw, eol, oversized=True)
            continue
        yield build_line(parse(raw), raw, number, eol)


def attach_continuations(nodes: list[Line]) -> tuple[Line, ...]:
    """Give each event its continuation lines (across blank lines, DECISIONS §10)."""
    from dataclasses import replace

    result: list[Line] = list(nodes)
    owner_index: int | None = None
    pending: list[int] = []

    def flush() -> None:
        if owner_index is not None and pending:
            owner = result[owner_index]
            assert isinstance(owner, Event)
            conts = tuple(cast(Continuation, result[i]) for i in pending)
            result[owner_index] = replace(owner, continuation=conts)

    for index, node in enumerate(nodes):
        if isinstance(node, Continuation):
            if owner_index is not None:
                owner = result[owner_index]
                result[index] = replace(node, owner=owner.line)
                pending.append(index)
        elif isinstance(node, BlankLine):
            continue
        else:
            flush()
            owner_index, pending = index, []
    flush()
    return tuple(result)


def parse_document(data: bytes | str, *, max_line: int = DEFAULT_MAX_LINE) -> Document:
    """Parse a whole file into a :class:`Document` (diagnostics not yet computed)."""
    source = read_source(data, max_line)
    lines = source.lines
    oversized = frozenset(f.line for f in source.faults if f.code == "E003")
    # Oversized lines are never handed to the parser, not even to find the header.
    safe = [("", eol) if n + 1 in oversized else (raw, eol) for n, (raw, eol) in enumerate(lines)]
    header_lines, open_line, close_line, body_index = _split_header(safe)
    # An oversized header line is kept verbatim but, like a body line, never parsed: it
    # reaches the YAML reader as an empty line.
    yaml_text = "".join(h.raw + "\n" for h in header_lines if h.role == "yaml")
    # Invalid bytes are reported once, as E001 at their column; YAML reads them as U+FFFD.
    yaml_text = _SURROGATES.sub("\ufffd", yaml_text)
    header_lines = [HeaderLine(h.line, lines[h.line - 1][0], h.eol, h.role) for h in header_lines]
    header_info = None
    if open_line is not None:
        header_info = read_header(yaml_text, open_line + 1, open_line, close_line)
    enabled = gc.isenabled()
    gc.disable()  # millions of small objects: the cyclic GC would run constantly
    try:
        nodes = list(iter_body(lines, body_index, oversized))
    finally:
        if enabled:
            gc.enable()
    return Document(
        bom=source.bom,
        header_lines=tuple(header_lines),
        header_info=header_info,
        lines=attach_continuations(nodes),
        source_faults=tuple(source.faults),
    )
