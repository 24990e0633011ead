"""A Pygments lexer for bbox/1, driven by the project's own parser.

There is no second, hand-written lexer here: every body line is lexed by the Lark parser
built from ``grammar/bbox.lark`` (the same grammar, start rules and contextual lexer that
:mod:`bbox_lark.syntax.parser` uses), and each terminal the parser produces is given a Pygments
token type by :data:`TOKENS`, the one table that knows the grammar's terminal names. Coarse
terminals (the call part, the result) are lexed again from the grammar's second-level start
rules ``items`` and ``result``. The header is split from the body by
:func:`bbox_lark.syntax.parser.parse_document`; its fences are lexed from the start rule
``header_fence`` and the YAML between them is handed to Pygments' YAML lexer.

``tests/test_lexer.py`` fails when the grammar has a terminal :data:`TOKENS` does not map
(or the table names one the grammar no longer has): renaming a terminal in the grammar is a
one-line change here.

Pygments finds the lexer through the ``pygments.lexers`` entry point (aliases ``bbox``,
``blackbox``, ``rlog``). Pygments is an optional dependency (the ``docs`` and ``test``
extras); ``bbox_lark`` itself never imports this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from pygments.lexer import Lexer
from pygments.token import Comment, Keyword, Literal, Name, Number, Operator, String, Text, Whitespace
from pygments.token import _TokenType as TokenType

from bbox_lark._classes import dataclass

__all__ = ["TOKENS", "BboxLexer", "Lead", "Split", "Sub", "grammar_terminals", "lex_terminals"]


@dataclass(frozen=True, slots=True)
class Sub:
    """Lex the token's text again from one of the grammar's start rules."""

    start: str


@dataclass(frozen=True, slots=True)
class Split:
    """Cut the token at the first ``sep``. The text before it is ``head``; ``sep`` is ``sep_type``
    (or part of the head when that is None); the rest, after its leading whitespace, is
    ``tail``."""

    sep: str
    head: TokenType
    tail: Spec
    sep_type: TokenType | None = None


@dataclass(frozen=True, slots=True)
class Lead:
    """The token starts with one of ``starts`` (typed ``head``); the rest is ``tail``."""

    starts: tuple[str, ...]
    head: TokenType
    tail: Spec


Spec = TokenType | Sub | Split | Lead

#: Grammar terminal -> Pygments token type (or how to split it). Every terminal the parser
#: can produce is here, and nothing else (``tests/test_lexer.py``).
_NAMED = Split(":", Keyword, Name.Function)
_PREFIX = Keyword
_PRIMITIVE = Name.Decorator
_STATUS = Name.Constant
_VALUE = String

TOKENS: dict[str, Spec] = {
    # one body line (start rule `line`): heads
    "BLANK": Whitespace,
    "CONTINUATION": Text,
    "HASH": Comment.Single,
    "WS": Whitespace,
    "TOOL": _NAMED,
    "TOOL_START": _NAMED,
    "TOOL_PROGRESS": _NAMED,
    "SKILL": _NAMED,
    "PLAN": _NAMED,
    "SUBAGENT": _NAMED,
    "MCP": _NAMED,
    "MODE": Split(":", Keyword, Name.Constant),
    "OBSERVATION": _PREFIX,
    "RECALL": _PREFIX,
    "QUESTION": _PREFIX,
    "USER": _PREFIX,
    "AGENT": _PREFIX,
    "THINKING": _PREFIX,
    "TODOS": _PREFIX,
    "AT_START": _PRIMITIVE,
    "AT_CHECKPOINT": _PRIMITIVE,
    "AT_PAUSE": _PRIMITIVE,
    "AT_RESUME": _PRIMITIVE,
    "AT_END": _PRIMITIVE,
    "AT_ASSESS": _PRIMITIVE,
    "AT_NOTIFY": _PRIMITIVE,
    "AT_WAIT": _PRIMITIVE,
    "AT_WAIT_APPROVAL": _PRIMITIVE,
    "AT_ESCALATE": _PRIMITIVE,
    "AT_BATCH": _PRIMITIVE,
    "AT_SNAPSHOT": _PRIMITIVE,
    "AT_ROTATE": _PRIMITIVE,
    "AT_COMPACT": _PRIMITIVE,
    "AT_PHASE": _PRIMITIVE,
    "AT_INIT": _PRIMITIVE,
    "AT_OTHER": _PRIMITIVE,
    "UNKNOWN": Text,
    # one body line: the coarse parts
    "QUOTE_OPENER": Text,
    "CALL_TEXT": Sub("items"),
    "FREE_TEXT": Sub("items"),
    "RESULT": Lead(("→", "->"), Operator, Sub("result")),
    "FREE_RESULT": Lead(("→",), Operator, Sub("result")),
    "METRICS": Comment.Special,
    "KW_ELAPSED": Comment.Special,
    "KW_METRICS": Comment.Special,
    "KW_BUDGET": Comment.Special,
    "KW_NOTES": Comment.Special,
    "KW_MODEL": Comment.Special,
    "KW_CONDENSE": Comment.Special,
    "KW_ANCHOR": Comment.Special,
    "KW_MEMORY": Comment.Special,
    "KW_REDACTIONS": Comment.Special,
    "KW_FILE_SNAPSHOT": Comment.Special,
    "KW_QUEUE": Comment.Special,
    "KW_SUMMARY": Comment.Special,
    "COMMENT_TEXT": Comment.Single,
    # header fences (start rule `header_fence`)
    "FENCE": Comment.Preproc,
    # inside a call part or free text (start rule `items`)
    "ITEM_WS": Whitespace,
    "FIELD": Split("=", Name.Attribute, String, Operator),
    "QUOTED": String.Double,
    # written text and its escapes (start rules `written_text`, `escape`; docs/reference.md)
    "WRITTEN_TEXT": String.Double,
    "ESCAPE": String.Escape,
    "LIST": Literal,
    "WORD": Text,
    # typed fields (start rule `typed_field`; the lexer shows them as any field)
    "KEY_ID": Name.Attribute,
    "KEY_STEP": Name.Attribute,
    "KEY_TS": Name.Attribute,
    "KEY_TID": Name.Attribute,
    "KEY_SPAN": Name.Attribute,
    "KEY_PARENT": Name.Attribute,
    "KEY_LATENCY_MS": Name.Attribute,
    "KEY_ATTEMPT": Name.Attribute,
    "KEY_LEVEL": Name.Attribute,
    "EXTRA_KEY": Name.Attribute,
    "EQUAL": Operator,
    "INT": Number,
    "ID_VALUE": _VALUE,
    "STEP_VALUE": Number,
    "TS_VALUE": _VALUE,
    "TID_VALUE": _VALUE,
    "SPAN_VALUE": _VALUE,
    "PARENT_VALUE": _VALUE,
    "LATENCY_MS_VALUE": Number,
    "ATTEMPT_VALUE": Number,
    "LEVEL_VALUE": _STATUS,
    "LEVEL_DEBUG": _STATUS,
    "LEVEL_INFO": _STATUS,
    "LEVEL_WARN": _STATUS,
    "LEVEL_ERROR": _STATUS,
    "EXTRA_VALUE": _VALUE,
    # the text after the arrow (start rule `result`)
    "RESULT_WS": Whitespace,
    "R_OK": _STATUS,
    "R_SKIP": _STATUS,
    "R_PENDING": _STATUS,
    "R_RUNNING": _STATUS,
    "R_STARTED": _STATUS,
    "R_LAUNCHED": _STATUS,
    "R_LOADED": _STATUS,
    "R_AUTO": _STATUS,
    "R_COUNT": Number,
    "R_ERROR": Name.Exception,
    "R_RETRY": Number,
    "R_SELECTED": _STATUS,
    "R_AUTO_CHOICE": _STATUS,
    "R_REDACTED": String.Other,
    "R_BLOB": Name.Label,
    "RESULT_REST": Sub("items"),
    # markers, blob parts, structured comment values, phases (second-level rules)
    "REDACTION": String.Other,
    "BLOB": Name.Label,
    "BLOB_SHA256": _VALUE,
    "BLOB_MIME": _VALUE,
    "ELAPSED_VALUE": Number,
    "RANGE_VALUE": Number,
    "PHASE_EXPLORE": _STATUS,
    "PHASE_DESIGN": _STATUS,
    "PHASE_REVIEW": _STATUS,
    "PHASE_FINAL": _STATUS,
    "PHASE_EXIT": _STATUS,
}

#: Start rules the lexer uses: a body line and a header fence.
LINE_START = "line"
FENCE_START = "header_fence"


def grammar_terminals() -> set[str]:
    """The names of every named terminal the grammar's parser can produce (Lark's anonymous
    ones, ``__ANON_n`` for punctuation such as ``sha256=`` in second-level rules, have no
    stable name; the lexer shows them as text)."""
    from bbox_lark.syntax.grammar import plain_parser

    return {terminal.name for terminal in plain_parser().terminals if not terminal.name.startswith("__")}


def lex_terminals(text: str, start: str) -> Iterator[tuple[int, str | None, str]]:
    """``(offset, terminal name, text)`` covering ``text``, as the grammar's parser lexes it
    from the start rule ``start``.

    Where the parser stops (a second-level rule such as ``items`` is not total: ``"a"b``), the
    rest is lexed again from the same start rule. Text no terminal covers comes out with the
    name None; it never happens on a valid file.
    """
    from lark.exceptions import UnexpectedInput

    from bbox_lark.syntax.grammar import plain_parser

    parser = plain_parser()
    pos = 0
    while pos < len(text):
        rest = text[pos:]
        tokens: list[tuple[int, str, str]] = []
        stop = len(rest)
        try:
            for token in parser.parse_interactive(rest, start=start).iter_parse():
                tokens.append((token.start_pos or 0, token.type, str(token)))
        except UnexpectedInput as error:
            stop = error.pos_in_stream or 0
        at = 0
        for offset, name, value in tokens:
            if offset >= stop:
                break
            if offset > at:
                yield pos + at, None, rest[at:offset]
            yield pos + offset, name, value
            at = offset + len(value)
        if stop == 0:  # no progress: the rest is not the grammar's
            yield pos, None, rest
            return
        if at < stop:
            yield pos + at, None, rest[at:stop]
        pos += stop


def _spec_tokens(spec: Spec | None, text: str, pos: int) -> Iterator[tuple[int, TokenType, str]]:
    if not text:
        return
    if spec is None:
        yield pos, Text, text
    elif isinstance(spec, Sub):
        for offset, name, value in lex_terminals(text, spec.start):
            yield from _spec_tokens(TOKENS.get(name) if name else None, value, pos + offset)
    elif isinstance(spec, Split):
        head, sep, tail = text.partition(spec.sep)
        if spec.sep_type is None:
            head, sep = head + sep, ""
        yield from _spec_tokens(spec.head, head, pos)
        yield from _spec_tokens(spec.sep_type, sep, pos + len(head))
        yield from _tail(spec.tail, tail, pos + len(head) + len(sep))
    elif isinstance(spec, Lead):
        lead = next((s for s in spec.starts if text.startswith(s)), "")
        yield from _spec_tokens(spec.head, lead, pos)
        yield from _tail(spec.tail, text[len(lead) :], pos + len(lead))
    else:
        yield pos, spec, text


def _tail(spec: Spec, text: str, pos: int) -> Iterator[tuple[int, TokenType, str]]:
    stripped = text.lstrip()
    space = len(text) - len(stripped)
    yield from _spec_tokens(Whitespace, text[:space], pos)
    yield from _spec_tokens(spec, stripped, pos + space)


class BboxLexer(Lexer):
    """BlackBox session logs (bbox/1), lexed by bbox-lark's own grammar."""

    name = "bbox"
    aliases: ClassVar[list[str]] = ["bbox", "blackbox", "rlog"]
    filenames: ClassVar[list[str]] = ["*.bbox", "*.blackbox", "*.rlog"]
    mimetypes: ClassVar[list[str]] = ["text/x-bbox"]

    def get_tokens_unprocessed(self, text: str) -> Iterator[tuple[int, Any, str]]:
        from bbox_lark.syntax.nodes import Event
        from bbox_lark.syntax.parser import parse_document
        from bbox_lark.syntax.source import BOM

        pos = 0
        if text.startswith(BOM):
            yield 0, Whitespace, BOM
            pos = len(BOM)
        doc = parse_document(text[pos:])
        yaml: list[tuple[str, str]] = []
        for header_line in doc.header_lines:
            if header_line.role == "yaml":
                yaml.append((header_line.raw, header_line.eol))
                continue
            if yaml:
                yield from self._yaml(yaml, pos)
                pos += sum(len(raw) + len(eol) for raw, eol in yaml)
                yaml = []
            start = FENCE_START if header_line.role == "fence" else LINE_START
            yield from _spec_tokens(Sub(start), header_line.raw, pos)
            yield from _spec_tokens(Whitespace, header_line.eol, pos + len(header_line.raw))
            pos += len(header_line.raw) + len(header_line.eol)
        if yaml:
            yield from self._yaml(yaml, pos)
            pos += sum(len(raw) + len(eol) for raw, eol in yaml)
        for line in doc.lines:
            if isinstance(line, Event) and line.oversized:
                yield from _spec_tokens(Text, line.raw, pos)  # over the line limit: never parsed
            else:
                yield from _spec_tokens(Sub(LINE_START), line.raw, pos)
            yield from _spec_tokens(Whitespace, line.eol, pos + len(line.raw))
            pos += len(line.raw) + len(line.eol)

    def _yaml(self, lines: list[tuple[str, str]], pos: int) -> Iterator[tuple[int, Any, str]]:
        """The header's YAML, lexed by Pygments' YAML lexer (with ``\\n`` line endings, as
        Pygments expects; the file's own endings are put back)."""
        from pygments.lexers.data import YamlLexer

        text = "".join(raw + "\n" for raw, _ in lines)
        kinds: list[Any] = []
        for _, kind, value in YamlLexer().get_tokens_unprocessed(text):  # type: ignore[no-untyped-call]
            kinds.extend([kind] * len(value))
        kinds.extend([Text] * (len(text) - len(kinds)))
        at = 0
        for raw, eol in lines:
            run_start = 0
            for index in range(1, len(raw) + 1):
                if index == len(raw) or kinds[at + index] is not kinds[at + run_start]:
                    yield pos + run_start, kinds[at + run_start], raw[run_start:index]
                    run_start = index
            if eol:
                yield pos + len(raw), Whitespace, eol
            at += len(raw) + 1
            pos += len(raw) + len(eol)
