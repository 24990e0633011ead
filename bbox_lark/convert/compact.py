"""The compact form: one line per event (bbox-format-full.md, "COMPACT FORMAT").

The full specification, with examples, is ``docs/formats/compact.md``; the mapping table below is
the one that page shows (a test keeps the two equal).

By default the conversion is lossless: ``read_compact(write_compact(doc))`` means the same
as ``doc`` line for line (every event, field, result, metrics comment, continuation text,
comment, unknown line and blank line, at the same line numbers), and
``write_compact(read_compact(c)) == c`` for every ``c`` that ``write_compact`` wrote. Only
whitespace trivia is normalised, as listed in the table. With ``lossy=True`` the writer
produces the spec's summary style and records in the report what it dropped.

Mapping table:

| bbox | compact |
| --- | --- |
| byte order mark | kept |
| header lines (blank lines before `---`, fences, YAML) | one line each, unchanged |
| `t:read  src/a.rs  →  [186 lines]` | `t:read src/a.rs→[186 lines]` |
| `u: Add ads`, `o: id=x → [ok]`, `m: auto` | `u:Add ads`, `o:id=x→[ok]`, `m:auto` |
| `t: read` (spaced name), ` -> ` (ASCII arrow) | `t:read`, `→` |
| `… → [ok]  # metrics  prompt=5` | `…→[ok] # metrics prompt=5` |
| `@start  id=s` | `@start id=s` |
| `#  t=00:05:00` (structured comment) | `# t=00:05:00` |
| `# plain   comment  `, unknown line | trailing whitespace removed |
| continuation `␠␠text`, `⇥text` | ` ⏎ text`, ` ⏎⇥text` appended to its owner's line |
| blank line | ` ⏎` appended to the line before it |
| blank or continuation lines before the first event | the first starts a line (1) |
| `⏎` anywhere, header included | `⏎⏎` |
| carriage return that does not end a line | `⏎r` |
| line endings (LF, CRLF) | a compact line ends like its last bbox line (2) |
| no newline at the end of the file | kept |
| whitespace-only last line without a line ending | dropped |
| a line whose rewrite would read differently | kept as written |

(1) an empty line for a blank line, the line as written for a continuation; the lines after
it, up to the first event, are appended to it. (2) The bbox lines a compact line holds all take its
line ending (the file's first line ending when it has none: the last line of the file);
CRLF when one of them ends in a carriage return before its own CRLF (docs/formats/compact.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bbox_lark.api import parse
from bbox_lark.convert.base import (
    Format,
    Input,
    MappingRow,
    Option,
    ReadContext,
    Report,
    WriteContext,
    collect,
    flatten,
)
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import (
    BlankLine,
    Call,
    Comment,
    Continuation,
    Document,
    Event,
    Lifecycle,
    Line,
    Unknown,
)
from bbox_lark.syntax.printer import format_line, is_fence, single_spaced
from bbox_lark.syntax.source import BOM, DEFAULT_MAX_LINE, decode, split_lines

if TYPE_CHECKING:
    from bbox_lark.convert.base import Item

#: The escape character; `` ⏎`` (space, U+23CE) separates a compact line's bbox lines.
MARK = "\u23ce"
SEPARATOR = " " + MARK
#: File name ending of a compact file.
EXTENSION = ".cbox"
#: Fields the lossy summary drops: correlation ids and timing.
LOSSY_FIELDS = ("id", "step", "ts", "tid", "span", "parent", "latency_ms")

_ARROW = "→"
_METRICS = "# metrics"
_WS = re.compile(r"\s+")
_NON_WS = re.compile(r"\S+")
# A separator (` ⏎` before a space, a tab or the line's end) or an escape (`⏎⏎`, `⏎r`).
_TOKEN = re.compile(f"{SEPARATOR}(?=[ \t]|$)|{MARK}{MARK}|{MARK}r")
# A separator or escape on a line that does not start with whitespace (sniffing).
_SNIFF = re.compile(f"(?m)^\\S[^\\n]*?(?:{SEPARATOR}(?=[ \t]|\\r?$)|{MARK}{MARK}|{MARK}r)")


# -- escapes ---------------------------------------------------------------------------


def escape(text: str) -> str:
    """``text`` with ``⏎`` doubled and carriage returns written ``⏎r``."""
    if MARK not in text and "\r" not in text:
        return text
    return text.replace(MARK, MARK + MARK).replace("\r", MARK + "r")


def split_compact_line(line: str) -> list[tuple[str, int]]:
    """The pieces of one compact line (without its ending), unescaped, each with the index
    in ``line`` where it starts. The first piece is a bbox line; every other piece is
    ``""`` (a blank line), ``" " + text`` (a continuation indented by two spaces, without
    its first space) or ``"\\t" + text`` (a continuation indented by a tab)."""
    pieces: list[tuple[str, int]] = []
    buffer: list[str] = []
    start = pos = 0
    for match in _TOKEN.finditer(line):
        buffer.append(line[pos : match.start()])
        token = match[0]
        if token == MARK + MARK:
            buffer.append(MARK)
        elif token == MARK + "r":
            buffer.append("\r")
        else:
            pieces.append(("".join(buffer), start))
            buffer, start = [], match.end()
        pos = match.end()
    buffer.append(line[pos:])
    pieces.append(("".join(buffer), start))
    return pieces


# -- reading ---------------------------------------------------------------------------


def expand(text: str) -> tuple[str, dict[int, tuple[int, int]]]:
    """The bbox text a compact text stands for, and for each bbox line the compact line it
    came from with the column shift (``bbox col + shift = compact col``, exact unless an
    escape stands before it on the line)."""
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    lines = split_lines(text)
    style = next((eol for _, eol in lines if eol), "\n")
    parts = [BOM] if bom else []
    origin: dict[int, tuple[int, int]] = {}
    number = 0
    for index, (raw, eol) in enumerate(lines, 1):
        pieces = split_compact_line(raw)
        last = len(pieces) - 1
        for at, (piece, start) in enumerate(pieces):
            number += 1
            if at == 0:
                physical, shift = piece, 0
            else:
                # " text" -> "  text"; "\ttext" and "" (a blank line) stay as they are.
                physical, shift = (" " + piece, start - 1) if piece[:1] == " " else (piece, start)
            origin[number] = (index, shift)
            parts.append(physical + (eol if at == last else eol or style))
    return "".join(parts), origin


def read_compact(
    text: str,
    *,
    report: Report | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    path: str | Path | None = None,
) -> Document:
    """The document a compact text stands for (lossy compact is read the same way: it is
    compact without separators). Never raises; the document carries its diagnostics, at the
    lines of the bbox text (``report.origin`` maps them to compact lines)."""
    bbox, origin = expand(text)
    if report is not None:
        report.origin = lambda line: origin.get(line, (line, 0))
    return parse(bbox, path=path, max_line=max_line)


# -- writing ---------------------------------------------------------------------------


def _groups(lines: tuple[Line, ...]) -> Iterator[list[Line]]:
    """Body lines grouped by compact line: each event with the continuation and blank lines
    after it; the lines before the first event form a group of their own."""
    group: list[Line] = []
    for node in lines:
        if isinstance(node, Event) and group:
            yield group
            group = []
        group.append(node)
    if group:
        yield group


def _trimmed(document: Document) -> tuple[Line, ...]:
    """The body without a whitespace-only last line that has no line ending (trailing
    whitespace of the file, dropped as ``fmt`` drops it)."""
    lines = document.lines
    if lines and isinstance(lines[-1], BlankLine) and not lines[-1].eol:
        return lines[:-1]
    return lines


def write_compact(document: Document, *, lossy: bool = False, report: Report | None = None) -> str:
    """The compact form of a document (``lossy``: the spec's summary style, recording in
    ``report`` what it drops)."""
    report = report if report is not None else Report()
    out = [BOM] if document.bom else []
    out.extend(escape(line.raw) + line.eol for line in document.header_lines)
    lines = _trimmed(document)
    if lossy:
        out.extend(_lossy_lines(lines, report))
        return "".join(out)
    out.extend(_group_text(group) for group in _groups(lines))
    return "".join(out)


def _group_text(group: list[Line]) -> str:
    """One compact line: an event (or the lines before the first) with the continuation
    and blank lines after it."""
    parts = [escape(_head_text(group[0]))]
    for node in group[1:]:
        if isinstance(node, Continuation):
            indented = node.raw if node.raw.startswith("\t") else node.raw[1:]
            parts.append(SEPARATOR + escape(indented))
        else:
            parts.append(SEPARATOR)
    ending = group[-1].eol
    if any(node.raw.endswith("\r") for node in group[:-1]):
        # A line ending in a carriage return (before its own CRLF) followed by "\n"
        # would read as a CRLF: the line would lose its CR, and `---\r` become a fence.
        ending = "\r\n"
    return "".join(parts) + ending


def _head_text(node: Line) -> str:
    if isinstance(node, BlankLine):
        return ""
    if isinstance(node, Continuation):
        return node.raw
    return compact_line(node)


# -- one line --------------------------------------------------------------------------


def _head(event: Event) -> str:
    """``t:read``, ``u:``, ``@start``, and the separator before the call text."""
    match event:
        case Lifecycle(name=name):
            return "@" + (name or "")
        case Call(prefix=prefix, name=str() as name) if prefix in vocabulary().named_prefixes:
            return f"{prefix}:{name}"
    return f"{event.prefix}:"


def _text_gap(event: Event) -> str:
    return " " if isinstance(event, Lifecycle) or event.prefix in vocabulary().named_prefixes else ""


def _metrics_tail(event: Event) -> str | None:
    """`` # metrics k=v …`` single-spaced, or None when the source cannot be cut cleanly."""
    raw = event.raw
    ends = [1 + len(event.name or "") if isinstance(event, Lifecycle) else len(event.prefix) + 1]
    if event.name is not None and event.name_col is not None:
        ends.append(event.name_col - 1 + len(event.name))
    if event.text:
        ends.append(event.text_col - 1 + len(event.text))
    if event.arrow is not None and event.arrow_col is not None:
        ends.append(event.arrow_col - 1 + len(event.arrow))
    if event.result is not None and event.result.text:
        ends.append(event.result.col - 1 + len(event.result.text))
    end = max(ends)
    start = raw.find(_METRICS, end)
    if start < 0 or raw[end:start].strip():
        return None
    body = single_spaced(raw[start + len(_METRICS) :])
    return " " + _METRICS + (" " + body if body else "")


def _assemble(event: Event, text: str, result: str | None, metrics: str | None) -> str:
    out = _head(event)
    if text:
        out += _text_gap(event) + text
    if result is not None:
        out += _ARROW + result
    if metrics:
        out += metrics
    return out


def _same(a: Line, b: Line) -> bool:
    from bbox_lark.syntax.printer import line_signature

    return line_signature(a) == line_signature(b)


def compact_line(event: Event) -> str:
    """An event, comment, lifecycle or unknown line in compact style. A rewrite that would
    read differently is not used: the line is kept as written."""
    from bbox_lark.syntax.parser import parse_line

    raw = event.raw
    match event:
        case Unknown(oversized=True):
            return raw
        case Unknown():
            stripped = raw.rstrip()
            # A body line never becomes a header fence by losing its trailing whitespace.
            candidate = raw if is_fence(stripped) and not is_fence(raw) else stripped
        case Comment(name=None):
            candidate = raw.rstrip()
        case Comment(text=text):
            candidate = "# " + single_spaced(text)
        case _:
            result = None
            if event.arrow is not None:
                result = single_spaced(event.result.text) if event.result is not None else ""
            metrics = None
            if event.metrics is not None:
                metrics = _metrics_tail(event)
                if metrics is None:
                    return raw
            candidate = _assemble(event, single_spaced(event.text), result, metrics)
    if candidate == raw:
        return raw
    if "\r" in raw.rstrip() and candidate.count("\r") < format_line(event).count("\r"):
        # A carriage return `fmt` keeps (inside free text) is content, not spacing to
        # normalise: the line is kept as written (`u: a\rb` never becomes `u:a b`).
        return raw
    # A structured comment gains the space after `#`; never past the default line limit.
    too_long = len(candidate) > DEFAULT_MAX_LINE >= len(raw)
    if too_long or not _same(parse_line(candidate), event):
        return raw
    return candidate


# -- lossy -----------------------------------------------------------------------------


def _without_fields(text: str, text_col: int, event: Event, after_arrow: bool) -> tuple[str, list[str]]:
    """``text`` (starting at column ``text_col``) without the :data:`LOSSY_FIELDS` fields it
    holds, single-spaced, and the keys cut."""
    cuts: list[tuple[int, int, str]] = []
    for node in event.field_nodes:
        if node.after_arrow != after_arrow or node.key not in LOSSY_FIELDS:
            continue
        start, end = node.col - text_col, node.end_col - text_col
        if start >= 0 and end <= len(text):
            cuts.append((start, end, node.key))
    if not cuts:
        return single_spaced(text), []
    pieces, last = [], 0
    for start, end, _ in sorted(cuts):
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return single_spaced(" ".join(pieces)), [key for _, _, key in cuts]


def _kept_fields(event: Event) -> list[tuple[str, object]]:
    return [(f.key, f.value) for f in event.field_nodes if not f.after_arrow and f.key not in LOSSY_FIELDS]


def lossy_line(event: Event, report: Report) -> str:
    """An event in the spec's summary style, recording in ``report`` what it drops or
    synthesizes (its continuation lines are the caller's: see :func:`_lossy_event`)."""
    return _lossy_event(event, report)[0]


def _lossy_event(event: Event, report: Report) -> tuple[str, int | None]:
    """The summary line and the continuation line it took its result from, if any. Falls
    back to :func:`compact_line` when the summary would read as another kind of line."""
    from bbox_lark.syntax.parser import parse_line

    if isinstance(event, Unknown):
        return compact_line(event), None
    drops: list[str] = []
    made: str | None = None
    moved: int | None = None
    text, cut = _without_fields(event.text, event.text_col, event, after_arrow=False)
    drops += [f"{key}= fields" for key in cut]
    result_text: str | None = None
    result = event.result
    if event.arrow is not None:
        result_text = ""
        if result is not None and result.head:
            if result.kind == "count" and result.number is not None:
                result_text = f"[{result.number}]"
                if result.unit:
                    drops.append("count units")
            else:
                result_text = single_spaced(result.head)
            if result.rest:
                drops.append("text after a result's bracket form")
        elif result is not None and result.text:
            result_text, cut = _without_fields(result.text, result.col, event, after_arrow=True)
            drops += [f"{key}= fields" for key in cut]
        elif len(event.continuation) == 1:
            # `c:github.pr create →` + `  PR #203 created` -> `c:github.pr create→PR #203 created`
            result_text = single_spaced(event.continuation[0].text)
            made, moved = "results from a single continuation line", event.continuation[0].line
        elif event.continuation:
            result_text = f"[{len(event.continuation)}]"
            made = "count results (the number of continuation lines)"
    if event.metrics is not None:
        drops.append("trailing # metrics comments")
    candidate = _assemble(event, text, result_text, None)
    parsed = parse_line(candidate)
    same = (
        isinstance(parsed, Event)
        and (parsed.kind, parsed.prefix, parsed.name, parsed.args)
        == (event.kind, event.prefix, event.name, event.args)
        and _kept_fields(parsed) == _kept_fields(event)
        and parsed.metrics is None
        and (parsed.result is None) == (result is None)
        and (made is not None or result is None or parsed.result is None or parsed.result.kind == result.kind)
    )
    if not same:
        return compact_line(event), None
    for what in drops:
        report.drop(what, event.line)
    if made is not None:
        report.synthesize(made, event.line)
    return candidate, moved


def _lossy_lines(lines: tuple[Line, ...], report: Report) -> list[str]:
    kept: list[tuple[str, str]] = []
    moved: int | None = None
    for node in lines:
        if isinstance(node, BlankLine):
            report.drop("blank lines", node.line)
        elif isinstance(node, Continuation):
            if node.line != moved:
                report.drop("continuation lines", node.line)
        elif isinstance(node, Comment):
            report.drop("comment lines", node.line)
        else:
            text, moved = _lossy_event(node, report)
            kept.append((escape(text), node.eol))  # only the file's last line has none
    # The file's final-newline state is kept (an event before a last line without one has one).
    if kept and lines and not lines[-1].eol:
        kept[-1] = (kept[-1][0], "")
    return [text + eol for text, eol in kept]


# -- the format ------------------------------------------------------------------------


def sniff(text: str) -> int:
    """3 when a line holds a compact separator or escape, else 0 (compact without them is
    lossy compact, which reads the same as bbox)."""
    return 3 if _SNIFF.search(text[:1_000_000]) else 0


def _read(source: Input, ctx: ReadContext) -> Iterator[Item]:
    """The bbox document a compact text stands for, checked on the way (compact needs the
    whole text: a compact line's bbox lines are known only once it has been read)."""
    from bbox_lark.convert import bbox

    text, origin = expand(decode(source.read_bytes()))
    ctx.report.origin = lambda line: origin.get(line, (line, 0))
    yield from bbox.read(Input(source.path, text), ctx)


def _write(items: Iterable[Item], out: TextIO, ctx: WriteContext) -> None:
    """Compact is written as the nodes come (:func:`write_compact` line for line): one
    compact line is held at a time, and the last node until the end (a whitespace-only last
    line without a line ending is dropped). ``lossy`` needs the whole document (the line
    ending it writes is the file's first)."""
    if ctx.options.get("lossy"):
        head, body = collect(flatten(items))
        document = Document(head.bom, head.header_lines, head.header_info, tuple(body))
        out.write(write_compact(document, lossy=True, report=ctx.report))
        return
    iterator: Iterator[Any] = iter(flatten(items))
    head = next(iterator)
    out.write("".join([BOM] if head.bom else []) + "".join(escape(h.raw) + h.eol for h in head.header_lines))
    group: list[Line] = []
    held: Line | None = None
    for node in iterator:
        ctx.report.kept(f"{node.kind} lines", node.line)
        if held is not None:
            if isinstance(held, Event) and group:
                out.write(_group_text(group))
                group = []
            group.append(held)
        held = node
    if held is not None and not (isinstance(held, BlankLine) and not held.eol):
        if isinstance(held, Event) and group:
            out.write(_group_text(group))
            group = []
        group.append(held)
    if group:
        out.write(_group_text(group))


def _docstring_rows() -> tuple[MappingRow, ...]:
    """The mapping table of this module's docstring (the one docs/formats/compact.md shows)."""
    text = __doc__ or ""
    start = text.index("| bbox | compact |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        bbox_side, compact_side = (cell.strip() for cell in line.strip().strip("|").split(" | ", 1))
        fate = "dropped" if compact_side.startswith("dropped") else "kept"
        rows.append(MappingRow(bbox_side, compact_side, fate))
    return tuple(rows)


FORMAT = Format(
    name="compact",
    description="one line per event (bbox-format-full.md COMPACT FORMAT); docs/formats/compact.md",
    extensions=(EXTENSION,),
    sniff=sniff,
    read=_read,
    write=_write,
    fidelity=(
        "lossless up to whitespace trivia (docs/formats/compact.md); --lossy writes the spec's summary"
        " style and reports what it drops"
    ),
    lossless=True,
    options=(Option("lossy", "compact output: the spec's summary style; reports what it drops."),),
    export_mapping=_docstring_rows(),
    import_mapping=(MappingRow("a compact line", "its bbox lines, split at ` ⏎` (escapes undone)"),),
)
