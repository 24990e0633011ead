"""What every converter is made of.

A converter is one module with a :class:`Format`:

- a **reader** ``read(source, ctx) -> Iterator[Item]`` that yields a document as a stream:
  a :class:`~bbox_lark.syntax.parser.Head` first, then body nodes (events, continuations, blank
  lines), as :func:`bbox_lark.iter_nodes` does for bbox text. Foreign readers build their
  nodes from values (``build.call``, ``build.message`` …, ``build.head``), never by
  writing bbox text and parsing it back;
- a **writer** ``write(items, out, ctx)`` that takes such a stream and writes the format to
  ``out`` (a text stream, or a folder for formats stored as several files);
- its **options**, declared once (:class:`Option`): ``bbox-lark convert`` builds its flags
  from them, and :func:`bbox_lark.convert.convert` takes them as keyword arguments;
- its **mapping tables** (:class:`MappingRow`), which ``docs/`` renders: what each construct
  of bbox becomes in the format and back.

While converting, reader and writer record what they kept, moved to an extra, synthesized,
dropped and skipped in a fidelity report (:mod:`bbox_lark.convert.fidelity`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO

from bbox_lark.convert.fidelity import FATES as FATES
from bbox_lark.convert.fidelity import Fidelity as Fidelity
from bbox_lark.convert.fidelity import Report as Report
from bbox_lark.convert.fidelity import ReportEntry as ReportEntry
from bbox_lark.convert.fidelity import Skipped as Skipped
from bbox_lark.errors import ConversionError
from bbox_lark.files.inputs import is_dir
from bbox_lark.syntax.nodes import Diagnostic
from bbox_lark.syntax.values import json_type as json_type  # the converters take it from here

if TYPE_CHECKING:
    from bbox_lark.syntax.nodes import Line
    from bbox_lark.syntax.parser import Head

    #: What a document stream holds: the head, then body nodes.
    Item = Head | Line


class ConvertError(ConversionError):
    """A conversion that cannot be done as asked (a usage problem, never a bad input line);
    the converters' own name for :class:`bbox_lark.errors.ConversionError`."""


class UnknownFormatError(ConvertError):
    """A format name no converter is registered for."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        self.known = tuple(known)
        super().__init__(f"unknown format {name!r}; known formats: {', '.join(self.known)}")


class UndetectableFormatError(ConvertError):
    """Neither the file name nor the content tells the input's format."""

    def __init__(self, shown: str, known: Iterable[str]) -> None:
        self.known = tuple(known)
        super().__init__(
            f"{shown}: cannot tell the input format from its name or content;"
            f" give --from (one of: {', '.join(self.known)})"
        )


class UnsupportedOptionError(ConvertError):
    """An option neither the source's reader nor the target's writer takes."""

    def __init__(self, option: str, target: str, supported_by: Iterable[str]) -> None:
        by = tuple(supported_by)
        where = f"; it applies to: {', '.join(by)}" if by else ""
        super().__init__(f"option {option!r} does not apply to {target}{where}")


class RefusedInputError(ConvertError):
    """An input the reader refuses as a whole (an invalid ATIF trajectory, a chat file of an
    unknown version): nothing is written, the command exits 2 with this message."""


# -- options and mapping tables ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a reader or writer. ``bbox-lark convert`` shows it as ``--name`` (``_``
    as ``-``): a flag when the default is a bool, else a value (one of ``choices`` when
    given)."""

    name: str
    help: str
    default: Any = False
    choices: tuple[str, ...] = ()
    #: ``read`` (the option is the reader's) or ``write``.
    applies: str = "write"

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, value: Any) -> Any:
        """The value, or :class:`ConvertError` naming the bad value."""
        if self.choices and value not in self.choices:
            raise ConvertError(f"{self.flag}: {value!r} is not one of {', '.join(self.choices)}")
        return value


#: The option every importer of a foreign format takes (docs/reference.md#importers): a source
#: without a repo sha writes ``repo_sha: unknown`` (a W009, not an error) unless it is given.
REPO_SHA = Option(
    "repo_sha",
    "Foreign input: the header's repo_sha (default: unknown, a W009 warning).",
    default=None,
    applies="read",
)


#: The JSON types :func:`type_problem` can ask for (``integer``: a number without a fraction).
_JSON_TYPES = {
    "string": str,
    "array": list,
    "object": dict,
    "boolean": bool,
    "null": type(None),
}


def type_problem(what: str, value: Any, *expected: str) -> str | None:
    """None when ``value`` is one of the ``expected`` JSON types (``string``, ``array``,
    ``object``, ``number``, ``integer``, ``boolean``, ``null``), else the message a reader
    reports: "`text` must be a string, got an array". Readers call it once per value at
    their edge, so that no value of the wrong type gets further in."""
    for name in expected:
        if name in ("number", "integer"):
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if name == "number" or isinstance(value, int):
                return None
        elif isinstance(value, _JSON_TYPES[name]):
            return None
    wanted = " or ".join(("an " if n[0] in "aeiou" else "a " if n != "null" else "") + n for n in expected)
    return f"`{what}` must be {wanted}, got {json_type(value, article=True)}"


def nesting_depth(value: Any, limit: int) -> int:
    """How deeply ``value`` nests arrays and objects (a scalar is 0), counted without
    recursion and only up to ``limit + 1`` (a value nested deeper than any reader takes
    costs no more than one nested just too deep)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            if depth > limit:
                return depth
            stack.extend((child, depth) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def long_number(text: str) -> tuple[int, int] | None:
    """The line and column (1-based) of the first number in ``text`` with more digits than
    Python's ``json`` reads (``sys.get_int_max_str_digits``; it raises a plain ValueError
    without a position), or None."""
    import re
    import sys

    limit = sys.get_int_max_str_digits()
    found = re.search(f"[0-9]{{{limit + 1},}}", text) if limit else None
    if found is None:
        return None
    line = text.count("\n", 0, found.start()) + 1
    return line, found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1


def load_json(text: str, what: str) -> Any:
    """The JSON value of a whole document, or :class:`RefusedInputError` naming the line
    and column and, for a file cut short, saying so. ``what`` names the document for an
    empty file (``a BB-7 chat``)."""
    import json

    if not text.strip():
        raise RefusedInputError(f"empty file: {what} is a JSON object")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg.startswith("Unterminated string"):  # the string runs to the end
            why = "a string that never closes (cut short?)"
        elif error.pos >= len(text.rstrip()):
            why = "the JSON ends too early (cut short?)"
        else:
            why = error.msg
        raise RefusedInputError(
            f"not valid JSON at line {error.lineno}, column {error.colno}: {why}"
        ) from None
    except RecursionError:
        raise RefusedInputError("not readable JSON: nested too deeply") from None
    except ValueError:  # an integer with more digits than Python reads
        line, col = long_number(text) or (1, 1)
        raise RefusedInputError(
            f"not valid JSON at line {line}, column {col}: a number too long to read"
        ) from None


def importer_header(ctx: ReadContext, session_id: str | None, **fields: Any) -> Head:
    """The :class:`~bbox_lark.syntax.parser.Head` an importer writes: ``format: bbox/1``, ``id``
    (the source's session id; synthesized, and reported so, when it has none), ``repo_sha``
    (``--repo-sha``, else ``unknown``), then ``fields`` (None values are left out). Keep it
    small: large structures go in body lines or blobs (docs/reference.md#importers)."""
    import uuid

    if session_id and not header_safe(session_id):
        _overflow(ctx, "id", session_id)
        session_id = None
    if not session_id:
        session_id = f"imported-{uuid.uuid4()}"
        ctx.report.synthesized("session ids (the source has none)", 0)
    values: dict[str, Any] = {"format": "bbox/1", "id": session_id}
    repo_sha = ctx.options.get("repo_sha")
    if repo_sha:
        values["repo_sha"] = repo_sha
    else:
        values["repo_sha"] = "unknown"
        ctx.report.synthesized("repo_sha: unknown (the source has none; give --repo-sha)", 0)
    for key, value in fields.items():
        if value is None:
            continue
        if isinstance(value, str) and not header_safe(value):
            _overflow(ctx, key, value)
        else:
            values[key] = value
    from bbox_lark.syntax import build  # here: importing the converters' base costs no parser

    return build.head(values)


#: The longest string value an importer writes in the header (docs/reference.md#importers: it stays small).
HEADER_VALUE_MAX = 1024
#: What a header value an importer writes may not hold: what YAML or a bbox line reads
#: otherwise (line breaks of either, controls, NUL, lone surrogates, a byte order mark).
_HEADER_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff]")
#: How many characters of a moved header value go on one continuation line.
_OVERFLOW_PIECE = 4096


def header_safe(value: str) -> bool:
    """True when an importer may write ``value`` as a header value: one line, at most
    :data:`HEADER_VALUE_MAX` characters, no surrounding whitespace, nothing YAML would read
    as something else."""
    return len(value) <= HEADER_VALUE_MAX and value.strip() == value and not _HEADER_UNSAFE.search(value)


def _overflow(ctx: ReadContext, key: str, value: str) -> None:
    """A header value an importer cannot keep in the header goes to a body line instead
    (docs/reference.md#importers): ``# notes: header KEY`` with the value as a JSON string (ASCII only)
    on its continuation lines; the reader's stream carries it right after the head."""
    text = json.dumps(value)
    pieces = [text[i : i + _OVERFLOW_PIECE] for i in range(0, len(text), _OVERFLOW_PIECE)]
    from bbox_lark.syntax import build

    ctx.overflow.append(build.comment(f"notes: header {key} (a JSON string)", continuation=pieces))
    ctx.report.note("extra", f"header values too long or not one line (as # notes: header lines): {key}", 0)


def with_overflow(items: Iterator[Item], ctx: ReadContext) -> Iterator[Item]:
    """A reader's stream with the header values :func:`importer_header` moved out of the
    header (``ctx.overflow``) as body lines right after the head."""
    for number, item in enumerate(items):
        yield item
        if number == 0:
            yield from ctx.overflow


def overflow_lines(ctx: ReadContext) -> int:
    """How many lines the moved header values take after the head (for readers that map
    their output lines back to input lines)."""
    return sum(1 + len(node.continuation) for node in ctx.overflow)


#: What no bbox line may hold and a JSON string can: NUL and lone surrogates (a JSON
#: ``\\udc80`` escape is a character, not an undecodable byte of the file).
_JSON_UNSAFE = re.compile("[\x00\ud800-\udfff]")


def clean_json(value: Any) -> tuple[Any, int]:
    """``value`` (loaded JSON) with every NUL and lone surrogate in its strings, keys
    included, replaced by U+FFFD, and how many were; walked without recursion, so any
    nesting ``json`` loads is fine. Readers call it once on each record they load."""
    if isinstance(value, str):
        return _JSON_UNSAFE.subn("\ufffd", value) if _JSON_UNSAFE.search(value) else (value, 0)
    if not isinstance(value, dict | list):
        return value, 0
    count = 0

    def clean(text: str) -> str:
        nonlocal count
        if not _JSON_UNSAFE.search(text):
            return text
        text, found = _JSON_UNSAFE.subn("\ufffd", text)
        count += found
        return text

    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            for index, child in enumerate(item):
                if isinstance(child, str):
                    item[index] = clean(child)
                elif isinstance(child, dict | list):
                    stack.append(child)
        else:
            for key in [k for k in item if _JSON_UNSAFE.search(k)]:
                item[clean(key)] = item.pop(key)
            for key, child in item.items():
                if isinstance(child, str):
                    item[key] = clean(child)
                elif isinstance(child, dict | list):
                    stack.append(child)
    return value, count


@dataclass(frozen=True, slots=True)
class MappingRow:
    """A row of a converter's mapping table: what ``source`` becomes."""

    source: str
    target: str
    #: One of :data:`FATES`.
    fate: str = "kept"
    note: str = ""


# -- reading and writing -----------------------------------------------------------------


def encode_text(text: str) -> bytes:
    """A ``str`` given to the API as the bytes a reader reads: UTF-8, undecodable bytes
    (U+DC80–U+DCFF from ``surrogateescape``) back as they were.

    Any other surrogate code point (a lone one, or a UTF-16 pair such as an emoji given as
    two code units) has no UTF-8 bytes, so no round trip through a file format (JSON Lines,
    compact, ATIF) could give it back: such text is refused with a
    :class:`RefusedInputError` naming the code point and its line and column. Give the
    input as bytes, write such text with a writer (``\\u{dfff}`` written text,
    docs/reference.md#any-text), or join a surrogate pair first
    (``text.encode("utf-16", "surrogatepass").decode("utf-16")``)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        found = _UNWRITABLE.search(text)
        assert found is not None
        at = found.start()
        line = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        raise RefusedInputError(
            f"<input>:{line}:{col}: the text holds U+{ord(found[0]):04X}, a surrogate code point,"
            " which no UTF-8 file can hold (only U+DC80-U+DCFF, undecodable bytes, can be read);"
            " give the input as bytes, write such text as written text (\\u{...}), or join a"
            " surrogate pair with text.encode('utf-16', 'surrogatepass').decode('utf-16')"
        ) from None


def writable(text: str) -> tuple[str, int]:
    """``text`` as it can be written to a UTF-8 file: every lone surrogate that stands for
    no byte (outside U+DC80–U+DCFF; only a ``str`` given to the API or a JSON ``\\ud800``
    escape holds one) becomes U+FFFD; and how many did. Writers of text call it on what they
    write, so that writing never fails on what reading accepted."""
    if not _UNWRITABLE.search(text):
        return text, 0
    return _UNWRITABLE.subn("\ufffd", text)


#: Lone surrogates that ``surrogateescape`` cannot write as a byte.
_UNWRITABLE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


class WritableText:
    """A text stream that passes what is written to it through :func:`writable` (a lone
    surrogate no byte stands for becomes U+FFFD, reported as dropped): what a converter
    writes can always be encoded, whatever its input held."""

    def __init__(self, out: TextIO, report: Fidelity) -> None:
        self.out = out
        self.report = report

    def write(self, text: str) -> int:
        fixed, replaced = writable(text)
        if replaced:
            self.report.dropped("lone surrogates UTF-8 cannot encode (written as U+FFFD)", 0, replaced)
        return self.out.write(fixed)

    def __getattr__(self, name: str) -> Any:  # flush, fileno ... of the stream underneath
        return getattr(self.out, name)


class Input:
    """What a reader reads: a file (or standard input) given by path, or bytes in memory.

    :meth:`lines` streams it; :meth:`read_bytes` reads it whole (JSON documents);
    :attr:`path` is the path given (a folder, for formats stored as several files)."""

    def __init__(
        self, path: str | Path | None = None, data: bytes | str | None = None, stream: IO[bytes] | None = None
    ) -> None:
        self.path = None if path is None or str(path) == "-" else Path(path)
        self._data = encode_text(data) if isinstance(data, str) else data
        self._stream = stream
        self._head: bytes | None = None

    @property
    def shown(self) -> str:
        return str(self.path) if self.path is not None else "<stdin>"

    def _open(self) -> IO[bytes]:
        if self._stream is not None:
            return self._stream
        if self.path is None:
            import sys

            return sys.stdin.buffer
        return self.path.open("rb")

    def head(self, size: int = 1 << 16) -> bytes:
        """The first ``size`` bytes (for sniffing); the stream still yields them."""
        if self._data is not None:
            return self._data[:size]
        if self._head is None:
            if self.path is not None and is_dir(self.path):
                self._head = b""
            else:
                stream = self._open()
                self._stream = stream
                self._head = stream.read(size)
        return self._head[:size]

    def chunks(self) -> Iterator[bytes]:
        """The content, in pieces (each byte once, from the start)."""
        if self._data is not None:
            yield self._data
            return
        if self._head is not None:
            yield self._head
        stream = self._open()
        try:
            while True:
                piece = stream.read(1 << 16)
                if not piece:
                    break
                yield piece
        finally:
            if self.path is not None:
                stream.close()

    def lines(self) -> Iterator[bytes]:
        """The content's lines, each with its ``\\n`` (the last may lack one). A long line is
        joined once from its pieces, and not held here while it is read
        (:func:`~bbox_lark.syntax.source.byte_lines`)."""
        from bbox_lark.syntax.source import byte_lines

        return byte_lines(self.chunks())

    def read_bytes(self) -> bytes:
        return b"".join(self.chunks())


@dataclass(slots=True)
class ReadContext:
    """What a reader is given, and where it records what it found."""

    report: Fidelity
    options: dict[str, Any] = field(default_factory=dict)
    max_line: int = 0
    #: The input's findings as bbox (only readers of bbox text fill this), at input lines.
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: Run the bbox checks on what is read (bbox sources); off for a plain stream.
    check: bool = True
    #: Values the ``S`` checks keep quiet on (the ``allowed-secrets`` setting).
    allowed_secrets: frozenset[str] = frozenset()
    #: Header values :func:`importer_header` moved to body lines, yielded after the head.
    overflow: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class WriteContext:
    """What a writer is given."""

    report: Fidelity
    options: dict[str, Any] = field(default_factory=dict)
    #: True when the document came from another format (bbox output is then canonical).
    foreign: bool = False
    #: Where the output goes, for writers that write a folder (``--to lightbox -o DIR``).
    path: Path | None = None


Reader = Callable[[Input, ReadContext], "Iterator[Item]"]
Writer = Callable[["Iterable[Item]", TextIO, WriteContext], None]


@dataclass(frozen=True, slots=True)
class Format:
    """A format ``bbox-lark convert`` reads and writes."""

    name: str
    #: One line for ``--help`` and the docs.
    description: str
    #: File name endings that mean this format (lower case, with the dot).
    extensions: tuple[str, ...]
    #: How sure the start of the content looks like this format: 0 no, higher is surer.
    sniff: Callable[[str], int]
    read: Reader | None
    write: Writer | None
    #: What survives ``bbox → this format → bbox`` (docs/reference.md#round-trip), in a sentence.
    fidelity: str
    #: True when ``bbox → this format → bbox`` gives an equal document.
    lossless: bool = True
    options: tuple[Option, ...] = ()
    #: bbox → this format, and this format → bbox.
    export_mapping: tuple[MappingRow, ...] = ()
    import_mapping: tuple[MappingRow, ...] = ()
    #: ``text`` (written to a stream) or ``folder`` (written to ``-o DIR``).
    output: str = "text"
    #: True when the reader takes a folder as well as a file.
    reads_folders: bool = False
    #: True when the reader yields bbox lines with their source text (a lossless carrier of
    #: bbox such as ``jsonl``): the bbox writer then writes them as they are, not in
    #: canonical form, so ``bbox → this format → bbox`` is byte for byte.
    keeps_source: bool = False

    def option(self, name: str, applies: str) -> Option | None:
        return next((o for o in self.options if o.name == name and o.applies == applies), None)


@dataclass(frozen=True, slots=True)
class Conversion:
    """The result of :func:`bbox_lark.convert.convert` (or, with ``text`` empty, of
    :func:`bbox_lark.convert.convert_stream`)."""

    #: The output text (write it with :func:`bbox_lark.syntax.source.encode` to get bytes back).
    text: str
    #: What was kept, moved to an extra, synthesized, dropped or skipped.
    fidelity: Fidelity
    #: The input's findings as bbox, at the input's own line numbers (bbox sources).
    diagnostics: tuple[Diagnostic, ...]
    source: str
    target: str
    #: The secrets the input held, per kind (docs/reference.md#secrets): carried over into the output,
    #: or replaced by ``[redacted:KIND]`` when :attr:`redacted`.
    secrets: dict[str, int] = field(default_factory=dict)
    #: The conversion ran with ``redact=True``: the output holds no secret.
    redacted: bool = False
    #: Each provider credential (an S001 finding) as (line, column, kind), at its place in the
    #: bbox form (the input's own lines for a bbox input), masked nowhere: no secret in it.
    credentials: tuple[tuple[int, int, str], ...] = ()

    @property
    def report(self) -> tuple[ReportEntry, ...]:
        """The rows that say something was dropped or synthesized."""
        return self.fidelity.losses

    @property
    def skipped(self) -> tuple[Skipped, ...]:
        return tuple(self.fidelity.skipped)

    @property
    def errors(self) -> int:
        """How many of the input's findings are errors."""
        return sum(1 for d in self.diagnostics if d.severity == "error")


# -- building documents from values ------------------------------------------------------


def collect(items: Iterable[Item]) -> tuple[Any, list[Any]]:
    """A whole stream as (head, body nodes), for formats that need the whole document."""
    iterator = iter(items)
    head = next(iterator)
    return head, list(iterator)


def flatten(items: Iterable[Item]) -> Iterator[Item]:
    """The stream with the continuation lines of each event built from values as items of
    their own, after it (a parsed stream has them so already)."""
    from bbox_lark.syntax.nodes import Event

    for item in items:
        yield item
        if isinstance(item, Event) and item.source is None and item.continuation:
            yield from item.continuation
