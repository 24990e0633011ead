"""The parser: ``grammar/bbox.lark`` through Lark (LALR, contextual lexer).

Nothing here is built at import time. The Lark parser is made on first use, with its
grammar analysis cached on disk between runs (``Lark(cache=...)``).
"""

from __future__ import annotations

import gc
import itertools
import re
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import replace
from functools import cache
from typing import Any, cast

from lark import Lark
from lark.parsers.lalr_analysis import Shift

from bbox_lark._classes import dataclass
from bbox_lark.syntax.grammar import build_lark, compiled, plain_parser, possessive_pattern, terminal_pattern
from bbox_lark.syntax.header import MAX_HEADER_BYTES, read_header
from bbox_lark.syntax.nodes import (
    Comment,
    Continuation,
    Document,
    Event,
    Header,
    HeaderLine,
    Line,
    SourceFault,
    Unknown,
)

# Read here by the importers and the workflows; a node, so it lives with the nodes.
from bbox_lark.syntax.nodes import Head as Head
from bbox_lark.syntax.shape import LineShaper, LineToken, Parts, build_line, scanned_line
from bbox_lark.syntax.source import DEFAULT_MAX_LINE, LineReader, Source

# The surrogates as regex escapes: mypyc (setup.py) compiles no literal lone surrogate.
_SURROGATES = re.compile("[\\udc80-\\udcff]")


#: The private parts of Lark that :class:`LineDriver` reads, as attribute paths from a ``Lark``
#: object. ``pyproject.toml`` bounds Lark to ``>=1.2.2,<2`` for them; a release that moves one
#: makes :func:`lark_private_problems` (and ``tests/test_lark_private.py``) name it.
LARK_PRIVATE_PARTS: tuple[str, ...] = (
    "parser.parser.parser.parse_table.states",
    "parser.parser.parser.parse_table.start_states",
    "parser.parser.parser.parse_table.end_states",
    "parser.parser.parser.callbacks",
    "_parse_tree_builder.create_callback",
    "parser.lexer.lexers",
)

#: What each contextual-lexer state holds that the driver reads (per state, from
#: ``parser.lexer.lexers[state]``).
LARK_LEXER_PARTS: tuple[str, ...] = ("scanner._mres", "callback")


def _walk(root: Any, path: str) -> Any:
    value = root
    for name in path.split("."):
        value = getattr(value, name)
    return value


def lark_private_problems(lark: Any) -> list[str]:
    """What of :data:`LARK_PRIVATE_PARTS` and :data:`LARK_LEXER_PARTS` the installed Lark
    lacks or holds in another shape, one sentence each (empty when the fast path can run)."""
    import lark as lark_module

    version = getattr(lark_module, "__version__", "?")
    problems: list[str] = []

    def missing(path: str, error: Exception) -> None:
        problems.append(
            f"lark {version}: `Lark.{path}` is not there ({type(error).__name__}: {error}); "
            "bbox_lark.syntax.parser.LineDriver reads it (bbox-lark supports lark>=1.2.2,<2)"
        )

    for path in LARK_PRIVATE_PARTS:
        try:
            _walk(lark, path)
        except AttributeError as error:
            missing(path, error)
    try:
        table = _walk(lark, "parser.parser.parser.parse_table")
        actions = next(iter(table.states.values()))
        action, arg = next(iter(actions.values()))
        if action is not Shift:
            _rule = (arg.expansion, arg.origin.name)  # a reduce's rule, as the driver reads it
        lexers = _walk(lark, "parser.lexer.lexers")
        lexer = next(iter(lexers.values()))
    except (AttributeError, StopIteration, TypeError, ValueError) as error:
        missing("parser.parser.parser.parse_table.states[state][symbol] (action, rule)", error)
        return problems
    for path in LARK_LEXER_PARTS:
        try:
            _walk(lexer, path)
        except AttributeError as error:
            missing(f"parser.lexer.lexers[state].{path}", error)
    return problems


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
    back to ``Lark.parse`` of :func:`lark_parser`; ``tests/test_grammar.py`` checks that
    both agree.

    ``lark`` may be the grammar's plain parser (:func:`bbox_lark.syntax.grammar.plain_parser`,
    which the vocabulary is read from anyway) with ``shaper`` given: the callbacks are then
    made from its rules as Lark makes them for an inline transformer, and the second Lark
    parser (the fallback) is loaded only when a line needs it.
    """

    __slots__ = ("_end", "_fallback", "_lexers", "_start", "_states", "_table")

    def __init__(self, lark: Lark, start: str = "line", shaper: LineShaper | None = None) -> None:
        try:
            self._read_lark(lark, start, shaper)
        except (AttributeError, KeyError, TypeError) as error:
            problems = lark_private_problems(lark) or [f"{type(error).__name__}: {error}"]
            raise RuntimeError("; ".join(problems)) from error

    def _read_lark(self, lark: Lark, start: str, shaper: LineShaper | None) -> None:
        frontend = lark.parser
        table = frontend.parser.parser.parse_table
        if shaper is None:
            callbacks = frontend.parser.parser.callbacks
        else:
            builder: Any = lark._parse_tree_builder  # what Lark makes callbacks with
            callbacks = builder.create_callback(shaper)
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
        self._fallback = lark if shaper is None else None

    def _state_lexer(self, state: int) -> tuple[tuple[Any, ...], dict[str, dict[str, str]] | None]:
        """The scanners of ``state`` and its keywords: strings Lark embedded in a wider
        pattern (``@start`` in AT_OTHER's ``@name``), looked up after a match as Lark's
        UnlessCallback does."""
        lexer = self._lexers[state]
        scanners = tuple(_possessive(scanner) for scanner in lexer.scanner._mres)
        keywords = {
            name: {term.pattern.value: term.name for term in callback.scanner.terminals}
            for name, callback in lexer.callback.items()
        }
        found = self._states[state] = (scanners, keywords or None)
        return found

    def _parse_fallback(self, text: str) -> Parts:
        if self._fallback is None:
            self._fallback = lark_parser()
        return cast(Parts, self._fallback.parse(text, start="line"))

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
                    return self._parse_fallback(text)
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
                    return self._parse_fallback(text)
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
    """The driver, on the grammar's plain parser (one Lark parser loaded, not two)."""
    return LineDriver(plain_parser(), shaper=LineShaper())


def _possessive(scanner: re.Pattern[str]) -> re.Pattern[str]:
    """A contextual lexer's scanner (``(?P<NAME>pattern)|…``) with the trailing group
    repetition of each terminal made possessive (:func:`bbox_lark.syntax.grammar.possessive_pattern`):
    the same matches, without a gigabyte of backtracking state on a 10 MB line."""
    source = scanner.pattern
    changed = source
    for name in scanner.groupindex:
        try:
            pattern = terminal_pattern(name)
            possessive = possessive_pattern(name)
        except (KeyError, ValueError, AttributeError):
            continue
        whole = f"(?P<{name}>{pattern})"
        if possessive != pattern and whole in changed:
            changed = changed.replace(whole, f"(?P<{name}>{possessive})")
    return scanner if changed == source else re.compile(changed, scanner.flags)


#: Body lines are read by the one anchored scan first (:func:`bbox_lark.syntax.shape.scanned_line`)
#: and by the LALR driver when the scan does not take them. False: every line goes through
#: the driver, the reference path (``tests/test_line_scan.py`` compares the two).
LINE_SCAN = True


def _line_parser() -> Callable[[str, int, str], Line]:
    """The function that parses one body line (``raw, line, eol``) into its node."""
    if not LINE_SCAN:
        parse = line_driver().parse
        return lambda raw, line, eol: build_line(parse(raw), raw, line, eol)

    def parse_one(raw: str, line: int, eol: str) -> Line:
        node = scanned_line(raw, line, eol)
        if node is not None:
            return node
        # The driver is made when a line first needs it (a file the scan reads whole never
        # builds its tables).
        return build_line(line_driver().parse(raw), raw, line, eol)

    return parse_one


def parse_line(raw: str, line: int = 1, eol: str = "") -> Line:
    """Parse one body line's text (without its ending) into its AST node."""
    return _line_parser()(raw, line, eol)


def reparse(node: Event, text: str) -> Event:
    """``node``'s line with new source text, its values read again from it (positions too);
    ``line``, ``eol`` and continuation lines are kept (this was ``node.with_source(text)``).
    ``fix`` and ``redact`` edit lines this way, so their output keeps the writer's spacing
    and no value is stale. Raises ValueError when ``text`` is not an event, comment or
    lifecycle line."""
    again = parse_line(text, node.line, node.eol)
    if not isinstance(again, Event):
        raise ValueError(f"line {node.line}: {text!r} is not an event, comment or lifecycle line")
    return replace(again, continuation=node.continuation)


def _is_fence(raw: str) -> bool:
    return compiled("FENCE").fullmatch(raw) is not None


def _starts_like_body(raw: str) -> bool:
    node = parse_line(raw)
    return isinstance(node, Event) and not isinstance(node, (Comment, Unknown))


def iter_body(
    lines: list[tuple[str, str]], start: int, oversized: frozenset[int] = frozenset()
) -> Iterator[Line]:
    """Parse body lines one by one (``start`` is the index of the first), streaming."""
    parse = _line_parser()
    for index in range(start, len(lines)):
        raw, eol = lines[index]
        number = index + 1
        if number in oversized:
            yield Unknown("unknown", number, raw, eol, oversized=True)
            continue
        yield parse(raw, number, eol)


def attach_continuations(nodes: list[Line]) -> tuple[Line, ...]:
    """Give each event its continuation lines (across blank lines, docs/reference.md#continuations)."""
    return tuple(iter_attached(iter(nodes)))


# -- streaming ---------------------------------------------------------------------------

#: How far the reader looks ahead for the header's closing fence, in characters. A header
#: is at most ``MAX_HEADER_BYTES`` (64 KiB, E009); past this much text without a closing
#: fence the header is taken as unclosed (E005) and ends at its first blank or body-like
#: line, as it does when no fence follows at all.
HEADER_LOOKAHEAD = 16 * MAX_HEADER_BYTES

#: Lines parsed between two young-generation garbage collections while a document is read
#: (the cyclic collector is off inside the reader: its pause is per batch, not per file).
GC_BATCH = 50_000


class NodeStream(Iterator[Head | Line]):
    """The iterator :func:`iter_nodes` returns: a :class:`Head`, then every body line.

    :attr:`faults` collects the byte-level problems (E001 invalid UTF-8, E002 NUL, E003
    oversized line) of every line read so far, in line order; a line's faults are there
    before its node is yielded. A consumer may empty the list as it goes."""

    def __init__(
        self,
        source: Source,
        *,
        max_line: int = DEFAULT_MAX_LINE,
        attach: bool = True,
        first_line: int = 1,
        header: bool = True,
    ) -> None:
        self._reader = LineReader(max_line, first_line)
        self.faults: list[SourceFault] = self._reader.faults
        #: The :class:`Head`, once it has been yielded.
        self.head: Head | None = None
        self._header = header
        self._nodes = self._generate(source, attach)

    def __iter__(self) -> NodeStream:
        return self

    def __next__(self) -> Head | Line:
        return next(self._nodes)

    def close(self) -> None:
        self._nodes.close()

    @property
    def bom(self) -> bool:
        """True when the text started with a byte order mark (known once the first line is read)."""
        return self._reader.bom

    @property
    def lines_read(self) -> int:
        """The number of the last physical line read so far."""
        return self._reader.lines_read

    def _generate(self, source: Source, attach: bool) -> Generator[Head | Line, None, None]:
        lines = self._reader.lines(source)
        if self._header:
            buffered, head = read_head(lines)
        else:  # a part of a body (``check --jobs``): no header to look for
            buffered, head = [], HeadParts((), None, self._reader.first_line)
        self.head = Head(self.bom, head.header_lines, head.header_info, head.body_start)
        yield self.head
        body = _parse_body(buffered, lines, head.body_start)
        yield from iter_attached(body) if attach else _own(body)


def iter_nodes(
    source: Source,
    *,
    max_line: int = DEFAULT_MAX_LINE,
    attach: bool = True,
    first_line: int = 1,
    header: bool = True,
) -> NodeStream:
    """Read a bbox/1 document as it comes: a :class:`Head` first, then each body line's
    node (:class:`~bbox_lark.syntax.nodes.Event`, :class:`~bbox_lark.syntax.nodes.Continuation` or
    :class:`~bbox_lark.syntax.nodes.BlankLine`) in file order.

    ``source`` is the whole text (``str`` or ``bytes``), a file object (binary, or text
    opened with ``newline=""``) or any iterable of lines or pieces of text. Nothing is read
    before the first item is asked for, and the header is read with a bounded look-ahead
    (:data:`HEADER_LOOKAHEAD`); after it, each line is parsed when it arrives.

    Continuations: with ``attach`` (the default) an event is yielded once its continuation
    lines are complete (when the next event arrives, or at the end), with
    ``Event.continuation`` filled in, so the nodes are those of :func:`bbox_lark.parse`. With
    ``attach=False`` every node is yielded as soon as its line is read: an event without
    its ``continuation`` tuple, each continuation with its ``owner`` set (what the checks
    use, so that ``check -`` reports a line as soon as it arrives).

    Byte-level faults (E001-E003) are collected in the returned stream's ``faults``.

    ``first_line`` and ``header=False`` read a part of a body that starts at that line
    (``check --jobs`` splits a large file so); the :class:`Head` is then empty."""
    return NodeStream(source, max_line=max_line, attach=attach, first_line=first_line, header=header)


@dataclass(frozen=True, slots=True)
class HeadParts:
    header_lines: tuple[HeaderLine, ...]
    header_info: Header | None
    body_start: int


def read_head(
    lines: Iterator[tuple[str, str, bool]],
) -> tuple[list[tuple[str, str, bool]], HeadParts]:
    """Read the header block, looking ahead as far as needed (and no further than
    :data:`HEADER_LOOKAHEAD`). Returns the lines read past the header (to parse as body)
    and the header."""
    buffered: list[tuple[str, str, bool]] = []
    for item in lines:
        buffered.append(item)
        if not item[2] and item[0].strip():
            break
    # Oversized lines are never handed to the parser, not even to find the header: they
    # count as blank lines there.
    if not buffered or buffered[-1][2] or not _is_fence(buffered[-1][0]):
        return buffered, HeadParts((), None, 1)
    open_index = len(buffered) - 1
    size = 0
    close: int | None = None
    for item in lines:
        buffered.append(item)
        if not item[2] and _is_fence(item[0]):
            close = len(buffered) - 1
            break
        size += len(item[0]) + 1
        if size > HEADER_LOOKAHEAD:
            break
    if close is not None:
        end = close + 1
    else:
        # No closing fence: the header ends at the first blank line or body-like line.
        end = open_index + 1
        while end < len(buffered):
            raw, _, oversized = buffered[end]
            if oversized or not raw.strip() or _starts_like_body(raw):
                break
            end += 1

    def role(n: int) -> str:
        return "blank" if n < open_index else "fence" if n in (open_index, close) else "yaml"

    header_lines = tuple(
        HeaderLine(n + 1, raw, eol, role(n)) for n, (raw, eol, _) in enumerate(buffered[:end])
    )
    # An oversized header line is kept verbatim but, like a body line, never parsed: it
    # reaches the YAML reader as an empty line.
    yaml_text = "".join(
        ("" if buffered[h.line - 1][2] else h.raw) + "\n" for h in header_lines if h.role == "yaml"
    )
    # Invalid bytes are reported once, as E001 at their column; YAML reads them as U+FFFD.
    yaml_text = _SURROGATES.sub("\ufffd", yaml_text)
    info = read_header(yaml_text, open_index + 2, open_index + 1, None if close is None else close + 1)
    return buffered[end:], HeadParts(header_lines, info, end + 1)


def _parse_body(
    buffered: list[tuple[str, str, bool]], rest: Iterator[tuple[str, str, bool]], number: int
) -> Iterator[Line]:
    """Parse each body line as it comes (line ``number`` first), with the cyclic garbage
    collector paused; it collects the young generation once per :data:`GC_BATCH` lines."""
    parse = _line_parser()
    enabled = gc.isenabled()
    gc.disable()  # millions of small objects: the cyclic GC would run constantly
    try:
        countdown = GC_BATCH
        for raw, eol, oversized in itertools.chain(buffered, rest):
            if oversized:
                yield Unknown("unknown", number, raw, eol, oversized=True)
            else:
                yield parse(raw, number, eol)
            number += 1
            countdown -= 1
            if not countdown:
                countdown = GC_BATCH
                if enabled:
                    gc.collect(0)
    finally:
        if enabled:
            gc.enable()


def _own(nodes: Iterable[Line]) -> Iterator[Line]:
    """Each node as it comes, continuations with their owner's line number."""
    owner: int | None = None
    for node in nodes:
        if isinstance(node, Event):
            owner = node.line
        elif owner is not None and isinstance(node, Continuation):
            node = Continuation(node.line, node.raw, node.eol, owner)  # replace() costs 6x this
        yield node


def iter_attached(nodes: Iterator[Line]) -> Iterator[Line]:
    """Each event with its continuation lines (across blank lines, docs/reference.md#continuations), yielded
    once the next event (or the end) shows they are complete."""
    owner: Event | None = None
    held: list[Line] = []  # what follows ``owner``: blank lines and its continuations
    for node in nodes:
        if isinstance(node, Event):
            if owner is not None:
                yield from _release(owner, held)
                held = []
            owner = node
        elif owner is None:
            yield node
        elif isinstance(node, Continuation):
            held.append(Continuation(node.line, node.raw, node.eol, owner.line))
        else:
            held.append(node)
    if owner is not None:
        yield from _release(owner, held)


def _release(owner: Event, held: list[Line]) -> Iterator[Line]:
    conts = tuple(node for node in held if isinstance(node, Continuation))
    yield replace(owner, continuation=conts) if conts else owner
    yield from held


def parse_document(data: Source, *, max_line: int = DEFAULT_MAX_LINE) -> Document:
    """Parse a whole file into a :class:`Document` (diagnostics not yet computed)."""
    stream = iter_nodes(data, max_line=max_line)
    head = next(stream)
    assert isinstance(head, Head)
    nodes = cast(tuple[Line, ...], tuple(stream))
    return Document(
        bom=head.bom,
        header_lines=head.header_lines,
        header_info=head.header_info,
        lines=nodes,
        source_faults=tuple(stream.faults),
    )
