"""Second-level splitting of coarse tokens, with patterns read from ``grammar/bbox.lark``.

The line grammar keeps the call part, the result and the metrics comment as single tokens
(one token is far cheaper than ten). Their insides are described by the grammar's second
level start rules ``items`` and ``result``; this module compiles those rules' terminal
patterns, taken from the loaded grammar, into plain ``re`` scanners. No pattern here is
written by hand, so the grammar stays the single source of truth.

The first level has a scanner here too: :func:`line_scanner`, one anchored regex composed
of the ``line`` rule's terminals, which reads the common line shapes' tokens in one match
(the LALR driver reads the rest).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from functools import cache
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.syntax.grammar import opens_string, possessive_pattern, terminal_pattern, vocabulary
from bbox_lark.syntax.nodes import BlobPointer, Document, Event, Field, Line, QuoteFault, Redaction, Result
from bbox_lark.syntax.values import to_int


@dataclass(frozen=True, slots=True)
class Patterns:
    item: re.Pattern[str]
    quoted: re.Pattern[str]
    list_: re.Pattern[str]
    result_head: re.Pattern[str]
    redaction: re.Pattern[str]
    blob: re.Pattern[str]
    fence: re.Pattern[str]
    #: A ``FIELD`` item (the grammar's terminal), matched whole.
    field: re.Pattern[str]
    #: Result-head terminal name -> result kind.
    head_kinds: dict[str, str]
    #: The result kinds that are status words (they carry no values).
    statuses: frozenset[str]


@cache
def patterns() -> Patterns:
    def alternation(names: dict[str, str]) -> str:
        return "|".join(f"(?P<{group}>{terminal_pattern(name)})" for group, name in names.items())

    # One match per item, taking the whitespace before it; the groups are (whitespace, field,
    # quoted, list, word) so ``findall`` gives plain tuples (no match objects).
    parts = "|".join(f"({terminal_pattern(name)})" for name in ("FIELD", "QUOTED", "LIST", "WORD"))
    item = f"({terminal_pattern('ITEM_WS')})?(?:{parts})"
    head_kinds = vocabulary().result_heads
    heads = alternation({name: name for name in head_kinds})
    return Patterns(
        item=re.compile(item),
        quoted=re.compile(terminal_pattern("QUOTED")),
        list_=re.compile(terminal_pattern("LIST")),
        result_head=re.compile(rf"\s*(?:{heads})"),
        redaction=re.compile(terminal_pattern("REDACTION")),
        blob=re.compile(terminal_pattern("BLOB")),
        fence=re.compile(terminal_pattern("FENCE")),
        field=re.compile(terminal_pattern("FIELD")),
        head_kinds=dict(head_kinds),
        statuses=vocabulary().start_statuses | vocabulary().final_statuses,
    )


#: Lines longer than this are left to the LALR driver (the reference path): the one scan is
#: linear too (possessive repetitions, atomic tokens), but a line this long is rare and its
#: cost is the regex engine's, not the per-token work the scan saves.
LINE_SCAN_MAX = 64 * 1024


@cache
def line_scanner() -> re.Pattern[str]:
    """One anchored scan for the common line shapes, composed of the grammar's own terminals.

    A blank line (``BLANK?``), a continuation (``CONTINUATION``), or an event or lifecycle
    head (the prefix terminals of ``line``, ``AT_OTHER`` for ``@name``) followed by the
    tail the grammar gives it: ``call_tail`` (``CALL_TEXT? RESULT? METRICS?``) or
    ``free_tail`` (``FREE_TEXT? FREE_RESULT? METRICS?``), then the line's end. Each token is
    an atomic group: it matches exactly what the contextual lexer's scanner matches at that
    position and never gives anything back, so the groups are the lexer's tokens (the
    terminals of one tail are disjoint where they start: ``CALL_TEXT`` stops where ``RESULT``
    or ``METRICS`` would match, which is how the lexer's priorities split them). A line the
    scan does not take (a comment, an unknown line, anything it cannot prove) goes to the LALR
    driver; ``tests/test_line_scan.py`` checks that both give the same nodes.

    Groups: ``blank``, ``cont``; ``call`` or ``free`` (the head token), ``text``,
    ``result``, ``metrics``."""
    vocab = vocabulary()
    free_kinds = {vocab.prefix_kinds[prefix] for prefix in vocab.free_text_prefixes}
    call_heads = [name for name, kind in vocab.head_kinds.items() if kind not in free_kinds]
    free_heads = [name for name, kind in vocab.head_kinds.items() if kind in free_kinds]
    # `@name`: the lexer takes the longest name and looks the primitives up in it.
    call_heads.append("AT_OTHER")

    def token(name: str) -> str:
        return f"(?>{possessive_pattern(name)})"

    def heads(names: list[str]) -> str:
        return "(?>" + "|".join(terminal_pattern(name) for name in names) + ")"

    tail = (
        f"(?P<text>(?(call){token('CALL_TEXT')}|{token('FREE_TEXT')}))?"
        f"(?P<result>(?(call){token('RESULT')}|{token('FREE_RESULT')}))?"
        f"(?P<metrics>{token('METRICS')})?"
    )
    return re.compile(
        f"(?:(?P<blank>(?:{terminal_pattern('BLANK')})?)"
        f"|(?P<cont>{token('CONTINUATION')})"
        f"|(?:(?P<call>{heads(call_heads)})|(?P<free>{heads(free_heads)})){tail})\\Z"
    )


_ESCAPES = {'\\"': '"', "\\\\": "\\", "\\n": "\n", "\\t": "\t"}
#: An escape: a backslash pair, or ``\u{HEX}`` (a code point, 1 to 6 hex digits). The
#: pattern is the grammar's ESCAPE terminal.
_ESCAPE = re.compile(r"\\(?:u\{([0-9a-fA-F]{1,6})\}|.)")
_LIST_SPACE = re.compile(r"\s*")
_LIST_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def unquote(text: str) -> str:
    """The value of a complete double-quoted string (escapes ``\\" \\\\ \\n \\t``)."""
    inner = text[1:-1]
    if "\\" not in inner:
        return inner
    return _ESCAPE.sub(_unescape, inner)


def _unescape(match: re.Match[str]) -> str:
    code = match[1]
    if code is not None:
        point = int(code, 16)
        return chr(point) if point <= 0x10FFFF else match[0]
    return _ESCAPES.get(match[0], match[0])


def quoted_at(text: str, index: int) -> re.Match[str] | None:
    """The complete quoted string that starts at ``text[index]``, or None."""
    return patterns().quoted.match(text, index)


#: What a quoted string writes as ``\u{HEX}`` (docs/reference.md, "Any text"): control
#: characters other than tab and line feed (NUL and CR among them), the Unicode line and
#: paragraph separators, lone surrogates, and the ``@`` of ``@blob`` (which would otherwise
#: read as a blob pointer wherever it stands).
# The surrogates as regex escapes: mypyc (setup.py) compiles no literal lone surrogate.
UNWRITABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\\ud800-\\udfff]|@(?=blob)")
_QUOTE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}
_TO_ESCAPE = re.compile(f'[\\\\"\n\t]|{UNWRITABLE.pattern}')


#: A complete blob pointer (full sha256, a size, an optional mime type): a value that is
#: exactly one is quoted as a pointer, its ``@`` not escaped.
POINTER = re.compile(r'@blob sha256=[0-9a-f]{64} bytes=[0-9]+(?: mime=[^\s"\\]+)?')


def quote(value: str) -> str:
    """A double-quoted string for ``value`` that :func:`unquote` reads back: any string,
    written on one line (``\\" \\\\ \\n \\t``, and ``\\u{HEX}`` for :data:`UNWRITABLE`). A value
    that is exactly one complete blob pointer stays a pointer (its blob is checked)."""
    if value.startswith("@blob") and POINTER.fullmatch(value):
        return '"' + value + '"'
    written = _TO_ESCAPE.sub(_escape, value)
    if "[redacted:" in written:
        written = _unmarked(value, written)
    return '"' + written + '"'


def _unmarked(value: str, written: str) -> str:
    """``written`` (the escaped ``value``) with the ``[`` of each ``[redacted:`` that is no
    marker in ``value`` written ``\\u{5b}``: an escape can turn whitespace into a marker's
    characters (``[redacted:a\\nb]``), and a marker the value does not hold must not appear in
    the line (the count a writer states would be wrong)."""
    if len(find_redactions(written, 0)) == len(find_redactions(value, 0)):
        return written
    kept = {m[0] for m in patterns().redaction.finditer(value)}
    return patterns().redaction.sub(
        lambda m: m[0] if unquote('"' + m[0] + '"') in kept else "\\u{5b}" + m[0][1:], written
    )


def _escape(match: re.Match[str]) -> str:
    char = match[0]
    return _QUOTE_ESCAPES.get(char) or f"\\u{{{ord(char):x}}}"


def split_list(text: str) -> tuple[str, ...]:
    """The items of a bracketed list ``[a, "b c", d]``: split at commas, each item stripped;
    an item that is one complete quoted string (then only whitespace before its comma) is
    unquoted, and so is an unquoted item that starts and ends with a quote. Linear: every
    character is looked at a bounded number of times."""
    inner = text[1:-1]
    if not inner.strip():
        return ()
    items: list[str] = []
    end = len(inner)
    pos = 0
    while pos < end:
        start = _LIST_SPACE.match(inner, pos).end()  # type: ignore[union-attr]
        quoted = _LIST_QUOTED.match(inner, start)
        if quoted is not None:
            after = _LIST_SPACE.match(inner, quoted.end()).end()  # type: ignore[union-attr]
            if after == end or inner[after] == ",":
                items.append(unquote(quoted[0]))
                pos = after + 1 if after < end else end
                continue
        comma = inner.find(",", start)
        stop = end if comma < 0 else comma
        item = inner[start:stop].rstrip()
        if item.startswith('"') and len(item) > 1 and item.endswith('"'):
            item = unquote(item)
        items.append(item)
        pos = end if comma < 0 else comma + 1
    return tuple(items)


def list_quote_faults(text: str, col: int) -> list[int]:
    """Columns of the quotes in a bracketed list ``text`` (at column ``col``) that open an
    item and never close (docs/reference.md#quotes: E012 in a call part)."""
    if '"' not in text:
        return []
    inner, found = text[1:-1], []
    pos, end = 0, len(text) - 2
    while pos <= end:
        start = _LIST_SPACE.match(inner, pos).end()  # type: ignore[union-attr]
        quoted = _LIST_QUOTED.match(inner, start) if start < end and inner[start] == '"' else None
        if start < end and inner[start] == '"' and quoted is None:
            found.append(col + 1 + start)
        comma = inner.find(",", quoted.end() if quoted is not None else start)
        if comma < 0:
            break
        pos = comma + 1
    return found


@dataclass(slots=True)
class Scan:
    """What :func:`scan_items` found in one run of text."""

    fields: list[Field]
    args: list[Any]
    faults: list[QuoteFault]


def scan_items(
    text: str,
    col: int,
    *,
    after_arrow: bool = False,
    free_text: bool = False,
    want_args: bool = True,
    into: dict[str, Any] | None = None,
) -> Scan:
    """Split ``text`` (which starts at column ``col``) into fields, positional arguments and
    unterminated-quote faults, following the grammar's ``items`` rule.

    With ``into``, no :class:`Field` is made: each key not yet in ``into`` is added with its
    value (a list for a bracketed list: ``Event.fields``' form), the first occurrence
    winning, and ``Scan.fields`` stays empty (what the parser builds at once; the field
    nodes are built on first access, :class:`bbox_lark.syntax.nodes.Deferred`)."""
    if "=" not in text and '"' not in text and "[" not in text:
        # No FIELD, QUOTED or LIST can start here, and no fault: every item is a WORD, a run
        # of non-whitespace (`\s` is `str.isspace`, tests/test_vocabulary.py).
        return Scan([], text.split() if want_args else [], [])
    return scan_item_loop(
        text, col, after_arrow=after_arrow, free_text=free_text, want_args=want_args, into=into
    )


def scan_item_loop(
    text: str,
    col: int,
    *,
    after_arrow: bool = False,
    free_text: bool = False,
    want_args: bool = True,
    into: dict[str, Any] | None = None,
) -> Scan:
    """:func:`scan_items` item by item, whatever the text holds (the reference for its
    shortcut: ``tests/test_line_scan.py`` compares them)."""
    return Scan(*item_loop(text, col, after_arrow, free_text, want_args, into))


def item_loop(
    text: str, col: int, after_arrow: bool, free_text: bool, want_args: bool, into: dict[str, Any] | None
) -> tuple[list[Field], list[Any], list[QuoteFault]]:
    """:func:`scan_item_loop`'s loop, its options by position and its finds as a plain tuple
    ``(fields, args, faults)``: what the parser calls on every line when it makes no field
    nodes (``into``), where the keywords and the :class:`Scan` would be a tenth of its cost."""
    pats = patterns()
    fields: list[Field] = []
    args: list[Any] = []
    faults: list[QuoteFault] = []
    # Positions are kept by adding lengths: every item starts right after the whitespace
    # before it, and only trailing whitespace can fail to match (WORD takes any non-space).
    end = 0
    for space, field, quoted_token, list_token, word in pats.item.findall(text):
        start = end + len(space)
        if field:
            end = start + len(field)
            key, _, raw_value = field.partition("=")
            value_col = col + start + len(key) + 1
            value: str | tuple[str, ...] = raw_value
            quoted = False
            if raw_value:
                first = raw_value[0]
                if first == '"':
                    if pats.quoted.fullmatch(raw_value):
                        value, quoted = unquote(raw_value), True
                    else:
                        faults.append(QuoteFault(value_col, True, free_text or after_arrow))
                elif (
                    first == "["
                    and pats.list_.fullmatch(raw_value)
                    and not pats.redaction.fullmatch(raw_value)
                ):
                    # `KEY=[redacted:kind]` is a redacted value, not a one-item list.
                    value = split_list(raw_value)
                    if not (free_text or after_arrow):
                        faults.extend(
                            QuoteFault(c, False, False) for c in list_quote_faults(raw_value, value_col)
                        )
            if into is None:
                fields.append(Field(key, value, raw_value, col + start, value_col, quoted, after_arrow))
            elif key not in into:
                into[key] = list(value) if isinstance(value, tuple) else value
        elif quoted_token:
            end = start + len(quoted_token)
            if not want_args:
                continue
            if opens_string(text, start):
                args.append(unquote(quoted_token))
            else:
                # Right after another item (`[a]"b c"`) a quote opens nothing (docs/reference.md#quotes):
                # the span is plain words.
                args.extend(quoted_token.split())
        elif list_token:
            end = start + len(list_token)
            if not (free_text or after_arrow):
                faults.extend(QuoteFault(c, False, False) for c in list_quote_faults(list_token, col + start))
            if want_args:
                args.append(split_list(list_token))
        else:
            end = start + len(word)
            # A quote opens a string only at a token start (docs/reference.md#quotes): after whitespace,
            # `=`, `[` or `,`, or at the start of the text; elsewhere it is a character.
            if word[0] == '"' and not free_text and opens_string(text, start):
                faults.append(QuoteFault(col + start, False, after_arrow))
            if want_args:
                args.append(word)
    return fields, args, faults


def word_fields(text: str, into: dict[str, Any]) -> None:
    """:func:`item_loop`'s fields with ``into``, for a ``text`` that holds no ``"`` and no
    ``[``: then no QUOTED or LIST item can start, every item is a run of non-whitespace, and
    a FIELD is a whole word that starts with a ``KEY`` and ``=`` (its value the rest of the
    word, BARE); no quote fault can arise. A word split by ``str.split`` is the item the
    loop's ``findall`` takes (``\\s`` is ``str.isspace``, tests/test_vocabulary.py), and only
    the words with a ``=`` are looked at (``tests/test_records.py`` compares with the loop)."""
    field = patterns().field.fullmatch
    for word in [w for w in text.split() if "=" in w]:
        name, _, value = word.partition("=")
        if name not in into and field(word) is not None:
            into[name] = value


def find_redactions(text: str, line: int, col: int = 1) -> list[Redaction]:
    """Every ``[redacted:kind]`` marker in ``text``."""
    if "[redacted:" not in text:
        return []
    return [Redaction(m[0][10:-1], line, col + m.start()) for m in patterns().redaction.finditer(text)]


def parse_blob(token: str, line: int, col: int) -> BlobPointer:
    values: dict[str, str] = {}
    for part in token.split()[1:]:
        key, _, value = part.partition("=")
        values.setdefault(key, value)
    return BlobPointer(token, line, col, values.get("sha256"), values.get("bytes"), values.get("mime"))


def find_blobs(text: str, line: int, col: int = 1) -> list[BlobPointer]:
    """Every ``@blob ...`` pointer in ``text``."""
    if "@blob" not in text:
        return []
    return [parse_blob(m[0], line, col + m.start()) for m in patterns().blob.finditer(text)]


_COUNT = re.compile(r"\[(\d+)(?:\s+([^\]]*))?\]")
_RETRY = re.compile(r"\[retry\s+(\d+)/(\d+)\]")


def _choices(body: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in body.split(",") if part.strip())


def classify_result(raw: str, col: int, line: int, fields: list[Field]) -> Result:
    """Type the text after an arrow (``raw`` starts at column ``col``) following the
    grammar's ``result`` rule. ``fields`` are the fields scanned from the same text."""
    return typed_result(raw, col, line, fields, patterns().result_head.match(raw))


def result_items(
    raw: str, col: int, into: dict[str, Any] | None = None
) -> tuple[re.Match[str] | None, list[Field], list[QuoteFault]]:
    """The result head of the text after an arrow (``raw``, at column ``col``) and, when it
    holds a ``=``, its items (after the arrow: fields and quote faults, no arguments).

    A bracket head with no quote and no bracket inside is exactly one LIST item to the item
    scan, and the items after it do not depend on what stands before them (no item pattern
    looks behind, and after the arrow no quote looks at its opener), so only the text after
    the head is scanned (``tests/test_line_scan.py`` compares with the scan of the whole).
    ``into``: as :func:`scan_items`' (the fields then go there)."""
    pats = patterns()
    match = pats.result_head.match(raw)
    if "=" not in raw:
        return match, [], []
    text, at = raw, col
    if match is not None:
        head = match[match.lastgroup or 0]
        if head[0] == "[" and '"' not in head and "[" not in head[1:]:
            end = match.end()
            text, at = raw[end:], col + end
    fields, _, faults = item_loop(text, at, True, True, False, into)
    return match, fields, faults


def typed_result(
    raw: str, col: int, line: int, fields: Collection[Any], match: re.Match[str] | None
) -> Result:
    """:func:`classify_result` with the result head already matched (``match``: of
    ``patterns().result_head`` on ``raw``). Only whether ``fields`` (the fields scanned
    from ``raw``: nodes, or a dict of them) is empty matters."""
    text = raw.strip()
    if not text:
        return Result("empty", "", col)
    text_col = col + (len(raw) - len(raw.lstrip()))
    pats = patterns()
    if match is None:
        if fields and _only_fields(text):
            return Result("fields", text, text_col)
        return Result("text", text, text_col)
    group = match.lastgroup or ""
    head = match[group]
    rest = raw[match.end() :].strip()
    kind = pats.head_kinds[group]
    if kind in pats.statuses:  # `[ok]`, `[running]`, ...: nothing more to read
        return Result(kind, text, text_col, head, rest)
    if kind == "count":
        count = _COUNT.fullmatch(head)
        number = to_int(count[1]) if count else None
        unit = count[2].strip() if count and count[2] else None
        return Result(kind, text, text_col, head, rest, number=number, unit=unit)
    if kind == "error":
        _, colon, message = head[1:-1].partition(":")
        return Result(kind, text, text_col, head, rest, message=message.strip() if colon else None)
    if kind == "retry":
        retry = _RETRY.fullmatch(head)
        assert retry is not None
        return Result(kind, text, text_col, head, rest, number=to_int(retry[1]), total=to_int(retry[2]))
    if kind == "selected":
        return Result(kind, text, text_col, head, rest, choices=_choices(head[10:-1]))
    if kind == "auto_choice":
        choice_part, _, reason_part = head[6:-1].partition("reason=")
        reason = reason_part.strip() or None
        if reason is not None and pats.quoted.fullmatch(reason):
            reason = unquote(reason)
        choices = _choices(choice_part)
        return Result(kind, text, text_col, head, rest, message=reason, choices=choices)
    if kind == "redacted":
        return Result(kind, text, text_col, head, rest, message=head[10:-1])
    if kind == "blob":
        blob = parse_blob(head, line, col + match.start(group))
        return Result(kind, text, text_col, head, rest, blob=blob)
    return Result(kind, text, text_col, head, rest)


def _only_fields(text: str) -> bool:
    return all(field for _, field, *_ in patterns().item.findall(text))


# -- the inverse: values written as items (for nodes built from values) ---------------------

_SAFE_WORD = re.compile(r'[^\s"\[\]→#=,\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]+')


def needs_quotes(value: str, *, arrow: bool = True) -> bool:
    """True when ``value`` written bare after ``key=`` would not read back as itself: it
    holds whitespace, starts with a quote, reads as a bracketed list, or (with ``arrow``: in
    a call part) holds a result arrow. The empty value is written bare (``key=``)."""
    if not value:
        return False
    if value[0] == '"' or any(char.isspace() for char in value) or (arrow and "→" in value):
        return True
    if '"' in value and _opens_unclosed(value):
        return True
    if UNWRITABLE.search(value):
        return True
    # A value that starts with `[` is read as a bracketed list wherever a list matches at its
    # start (`[a]b` would be the list `[a]` and a word `b`; `[a` would take a later `]` of
    # the line): only a value that is exactly one redaction marker stays bare.
    return value[0] == "[" and not patterns().redaction.fullmatch(value)


def _opens_unclosed(value: str) -> bool:
    """True when a ``"`` inside ``value`` would open a string that never closes in it (``="``,
    ``a,"b``: a quote after ``=``, ``[`` or ``,`` opens one; docs/reference.md#quotes). A string
    that closes keeps the bare value as it is (``{"a":1,"b":2}`` reads back as itself)."""
    index = value.find('"', 1)
    while index != -1:
        if opens_string(value, index):
            quoted = quoted_at(value, index)
            if quoted is None:
                return True
            index = quoted.end() - 1
        index = value.find('"', index + 1)
    return False


def render_list(items: tuple[str, ...] | list[str]) -> str:
    """A bracketed list that :func:`split_list` reads back as ``items``."""
    words = [item if _safe_word(item) else quote(item) for item in items]
    text = "[" + ", ".join(words) + "]"
    if patterns().redaction.fullmatch(text):  # `[redacted:x]` is a marker, not a list
        text = "[" + ", ".join(quote(item) for item in items) + "]"
    return text


def render_value(value: str | tuple[str, ...] | list[str], quoted: bool) -> str:
    """A field value as written after ``key=``: a list in brackets, quoted when asked."""
    if not isinstance(value, str):
        return render_list(value)
    return quote(value) if quoted else value


def render_arg(value: str | tuple[str, ...] | list[str]) -> str:
    """A positional argument that :func:`scan_items` reads back as ``value``: a bare word
    when it is safe, else a quoted string; a list in brackets."""
    if not isinstance(value, str):
        return render_list(value)
    return value if _safe_word(value) else quote(value)


def _safe_word(value: str) -> bool:
    return _SAFE_WORD.fullmatch(value) is not None and value != "->" and "@blob" not in value


# -- every blob pointer and redaction marker of a document (checks and stats count them) ---


def iter_blobs(document: Document) -> Iterator[BlobPointer]:
    """Every blob pointer in the body: events, comments, continuations, unknown lines."""
    for node in document.lines:
        if "@blob" in node.raw:
            yield from find_blobs(node.raw, node.line)


def states_redaction_count(node: object) -> bool:
    """True for a comment that states the redaction count (``# redactions=N``, or the
    closing ``summary`` with ``redactions=``): its own markers are not counted."""
    return (
        isinstance(node, Event)
        and node.kind == "comment"
        and node.name in ("redactions", "summary")
        and "redactions" in node.fields
    )


def iter_redactions(document: Document) -> Iterator[Redaction]:
    """Every marker on every body line except the comments that state the count."""
    for node in document.lines:
        yield from line_redactions(node)


def line_redactions(node: Line) -> Iterator[Redaction]:
    """The markers of one body line (none for a comment that states the count)."""
    if "[redacted:" in node.raw and not states_redaction_count(node):
        yield from find_redactions(node.raw, node.line)
