"""The grammar's root module: ``grammar/bbox.lark`` loaded, and every vocabulary derived from it.

Every set of words the package uses (the prefixes and their line kinds, the lifecycle
primitives and phases, the structured comment kinds, the result forms and status words, the
typed fields and their value syntax, the whitespace class) is read here from the grammar as
Lark compiled it, so the grammar is the only place that lists them. This module imports
nothing else from the package; everything else imports it (``tests/test_vocabulary.py``
fails when a module restates a vocabulary).

Nothing is built at import time. The Lark parser is made on first use, with its grammar
analysis cached on disk between runs (``Lark(cache=...)``).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

#: The grammar's start rules: one body line, the header fence, and the second-level rules
#: that describe the insides of the coarse tokens.
STARTS = [
    "line",
    "items",
    "result",
    "header_fence",
    "typed_field",
    "level",
    "redaction",
    "blob",
    "blob_part",
    "elapsed",
    "condense_range",
    "redaction_count",
    "phase",
    "quote_opener",
    "step_reference_comment",
    "written_text",
    "escape",
]


@cache
def grammar_text() -> str:
    """The text of ``grammar/bbox.lark`` as shipped in the package: read beside this module
    when the package is installed as files (``importlib.resources`` costs ~5 ms of
    start-up to import), else through ``importlib.resources`` (a zip, another loader)."""
    beside = Path(__file__).with_name("bbox.lark")
    try:
        return beside.read_text(encoding="utf-8")
    except OSError:
        from importlib.resources import files

        return files("bbox_lark.syntax").joinpath("bbox.lark").read_text(encoding="utf-8")


def _cache_file(text: str) -> str | bool:
    import lark

    key = hashlib.sha256(f"{lark.__version__}\0{text}".encode()).hexdigest()[:16]
    folder = os.environ.get("BBOX_LARK_CACHE") or tempfile.gettempdir()
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return str(Path(folder) / f"bbox-lark-{key}.lark-cache")


_OPTIONS: dict[str, Any] = {
    "parser": "lalr",
    "lexer": "contextual",
    "start": STARTS,
    "maybe_placeholders": False,
}


def build_lark(transformer: Any = None, *, cached: bool = True) -> Any:
    """A Lark parser for every start rule, with ``transformer`` inlined (none: parse trees).
    The grammar analysis is cached on disk (``cached=False`` loads the grammar afresh, which
    keeps ``Lark.grammar`` for the docs generator); an unwritable cache folder never stops
    parsing."""
    from lark import Lark

    text = grammar_text()
    options = dict(_OPTIONS)
    if transformer is not None:
        options["transformer"] = transformer
    if cached:
        try:
            return Lark(text, cache=_cache_file(text), **options)
        except OSError:
            pass
    return Lark(text, **options)


@cache
def plain_parser() -> Any:
    """The grammar without a transformer: parse trees, for vocabularies, tools and tests."""
    return build_lark()


@cache
def terminal_pattern(name: str) -> str:
    """The regular expression of one of the grammar's terminals, as Lark compiled it."""
    return str(plain_parser().get_terminal(name).pattern.to_regexp())


@cache
def possessive_pattern(name: str) -> str:
    """:func:`terminal_pattern` with its trailing group repetition made possessive
    (``(…)*`` → ``(…)*+``), when it has one. At the end of a terminal a repetition never
    gives anything back, so every match is the same; but Python's ``re`` keeps backtracking
    state for each repetition of a group, which for a 10 MB call part (``CALL_TEXT``: one
    iteration per word or field) was a gigabyte at the peak (docs/design.md, "Long lines
    and memory")."""
    pattern = terminal_pattern(name)
    backslashes = len(pattern[:-2]) - len(pattern[:-2].rstrip("\\"))
    if not pattern.endswith(")*") or backslashes % 2:
        return pattern  # no trailing group repetition (`\)*` is a literal bracket repeated)
    return pattern + "+"


@cache
def compiled(name: str) -> re.Pattern[str]:
    """The compiled pattern of terminal ``name``."""
    return re.compile(terminal_pattern(name))


def _string_value(name: str) -> str:
    """The text of a string terminal (``AT_START`` -> ``@start``)."""
    from lark.lexer import PatternStr

    pattern = plain_parser().get_terminal(name).pattern
    if not isinstance(pattern, PatternStr):
        raise ValueError(f"terminal {name} is not a string")
    return str(pattern.value)


def _alternatives(rule: str) -> list[tuple[list[str], str | None]]:
    """The expansions of ``rule`` as (symbol names, alias), in grammar order."""
    return [
        ([symbol.name for symbol in r.expansion], str(r.alias) if r.alias else None)
        for r in plain_parser().rules
        if r.origin.name == rule
    ]


def _words(rule: str, strip: str = "") -> tuple[str, ...]:
    """The string terminals ``rule`` lists, one per alternative (``strip`` removed)."""
    found = []
    for symbols, alias in _alternatives(rule):
        if len(symbols) == 1 and alias is None:
            found.append(_string_value(symbols[0]).removeprefix(strip))
    return tuple(found)


def _bracketed(name: str) -> str:
    return _string_value(name)[1:-1]


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Every vocabulary of the language, as the grammar names it."""

    #: Line prefix (``t!``) -> line kind (``tool_start``), for every prefixed event.
    prefix_kinds: dict[str, str]
    #: Head terminal (``TOOL_START``) -> line kind.
    head_kinds: dict[str, str]
    #: Prefixes whose name follows the colon (``t t! t~ s p x c m``).
    named_prefixes: frozenset[str]
    #: Prefixes whose text is free text (``u a th td``): only `→` splits, and fmt keeps
    #: their spacing.
    free_text_prefixes: frozenset[str]
    #: Every line kind, in grammar order (docs/reference.md#line-kinds): events, then comment, lifecycle,
    #: unknown (blank and continuation lines are not events).
    event_kinds: tuple[str, ...]
    #: The lifecycle primitives, without ``@``.
    primitives: frozenset[str]
    #: The phases ``@phase`` takes.
    phases: tuple[str, ...]
    #: Comment keyword terminal (``KW_FILE_SNAPSHOT``) -> comment kind (``file-snapshot``).
    comment_kinds: dict[str, str]
    #: Result-head terminal -> result kind (``R_COUNT`` -> ``count``, ``R_OK`` -> ``ok``).
    result_heads: dict[str, str]
    #: Status words that open a call (``running``, ...).
    start_statuses: frozenset[str]
    #: Status words that complete one (``ok``, ...).
    final_statuses: frozenset[str]
    #: Every result kind (docs/reference.md#api-values): the heads', then ``fields``, ``text``, ``empty``.
    result_kinds: tuple[str, ...]
    #: Typed field key -> the pattern its whole value must match.
    typed_fields: dict[str, re.Pattern[str]]
    #: Typed field key -> the name of the terminal that gives its syntax (``TS_VALUE``).
    typed_field_terminals: dict[str, str]
    #: The keys of free ``extra.*`` fields.
    extra_key: re.Pattern[str]
    #: ``level=`` values.
    levels: tuple[str, ...]
    #: Comment kinds whose ``step=`` refers to an event's step (``metrics``, ``anchor``).
    step_reference_comments: frozenset[str]
    #: Comment kinds whose keyword is the key of their first field (``# t=…``,
    #: ``# redactions=…``, ``# tokens=…``): the keyword is part of the fields.
    field_comment_kinds: frozenset[str]


_RESULT_TEXT_KINDS = ("fields", "text", "empty")


@cache
def vocabulary() -> Vocabulary:
    """Every vocabulary, derived from the compiled grammar (cached)."""
    prefix_kinds: dict[str, str] = {}
    head_kinds: dict[str, str] = {}
    named: set[str] = set()
    free: set[str] = set()
    kinds: list[str] = []
    for symbols, alias in _alternatives("line"):
        if alias is None:
            continue
        if alias not in kinds:
            kinds.append(alias)
        if len(symbols) != 2 or not symbols[0].isupper() or symbols[1] not in ("call_tail", "free_tail"):
            continue
        head = symbols[0]
        pattern = terminal_pattern(head)
        prefix = re.sub(r"\\(.)", r"\1", pattern.split(":", 1)[0])  # `t\~` is `t~`
        prefix_kinds[prefix] = alias
        head_kinds[head] = alias
        if pattern != prefix + ":":
            named.add(prefix)
        if symbols[1] == "free_tail":
            free.add(prefix)
    events = [k for k in kinds if k in prefix_kinds.values()]
    others = [k for k in ("comment", "lifecycle", "unknown") if k in kinds]
    comment_kinds = {
        name: name.removeprefix("KW_").lower().replace("_", "-")
        for symbols, _ in _alternatives("comment_keyword")
        for name in symbols
    }
    start = _statuses("start_status")
    final = _statuses("final_status")
    heads: dict[str, str] = {}
    for name in _result_head_terminals():
        if name in start or name in final:
            heads[name] = _bracketed(name)
        else:
            heads[name] = name.removeprefix("R_").lower()
    typed: dict[str, re.Pattern[str]] = {}
    typed_terminals: dict[str, str] = {}
    extra = re.compile(".+")
    for symbols, _ in _alternatives("typed_field"):
        key_terminal, _equals, value_terminal = symbols
        if key_terminal == "EXTRA_KEY":
            extra = compiled("EXTRA_KEY")
            continue
        typed[_string_value(key_terminal)] = compiled(value_terminal)
        typed_terminals[_string_value(key_terminal)] = value_terminal
    return Vocabulary(
        prefix_kinds=prefix_kinds,
        head_kinds=head_kinds,
        named_prefixes=frozenset(named),
        free_text_prefixes=frozenset(free),
        event_kinds=(*events, *others),
        primitives=frozenset(_words("primitive", strip="@")),
        phases=_words("phase"),
        comment_kinds=comment_kinds,
        result_heads=heads,
        start_statuses=frozenset(_bracketed(n) for n in start),
        final_statuses=frozenset(_bracketed(n) for n in final),
        result_kinds=(*dict.fromkeys(heads.values()), *_RESULT_TEXT_KINDS),
        typed_fields=typed,
        typed_field_terminals=typed_terminals,
        extra_key=extra,
        levels=_words("level"),
        field_comment_kinds=frozenset(
            kind for name, kind in comment_kinds.items() if terminal_pattern(name).endswith(("=", "(?==)"))
        ),
        step_reference_comments=frozenset(
            comment_kinds[symbols[0]] for symbols, _ in _alternatives("step_reference_comment")
        ),
    )


def _statuses(rule: str) -> list[str]:
    return [symbols[0] for symbols, _ in _alternatives(rule)]


def _result_head_terminals() -> list[str]:
    """The terminals a result may start with, in grammar order (status words first)."""
    names: list[str] = []
    for rule in ("start_status", "final_status"):
        names.extend(_statuses(rule))
    for symbols, _ in _alternatives("result_head"):
        if len(symbols) == 1 and symbols[0].isupper() and symbols[0] not in names:
            names.append(symbols[0])
    return names


def result_head_terminals() -> list[str]:
    """The terminals of the grammar's ``result_head`` (for the result scanner)."""
    return _result_head_terminals()


def is_space(char: str) -> bool:
    """The grammar's whitespace class (``\\s``, the WS terminal): ``str.isspace``, which is
    the same set (tests/test_vocabulary.py checks it over every code point)."""
    return char.isspace()


@cache
def _opener() -> re.Pattern[str]:
    return compiled("QUOTE_OPENER")


def opens_string(text: str, index: int) -> bool:
    """True when a ``"`` at ``text[index]`` stands where a quoted string may open: at the
    start of the text or after the grammar's QUOTE_OPENER (whitespace, ``=``, ``[``, ``,``;
    docs/reference.md#quotes)."""
    return index == 0 or _opener().fullmatch(text[index - 1]) is not None
