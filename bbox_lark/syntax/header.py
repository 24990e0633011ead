"""The YAML header between the two ``---`` fences.

The YAML is read from PyYAML's *event* stream (SafeLoader's scanner and parser), never
constructed into Python objects: scalars keep their source text (``repo_sha: 0123456`` is
``"0123456"``), no tag is ever executed, and an alias is reported instead of expanded, so
an alias bomb costs nothing.

The events come from libyaml (``yaml.CSafeLoader``, ~14× faster: 0.3 ms instead of 4 ms
for a typical header) when PyYAML has it, and from the pure-Python parser otherwise. The
two agree on what every header means, with these exceptions, so those headers always take
the pure parser (:func:`_events`, ``tests/test_header_libyaml.py``):

* libyaml accepts tabs where the pure parser refuses them, skips a leading U+FEFF (every
  offset then differs by one) and refuses one inside the text;
* it reads a bare ``!`` tag as not implicit, and accepts ``|#`` / ``>#`` block scalar
  headers and a ``?`` closing a flow mapping, which the pure parser refuses;
* it cannot take a lone surrogate (only a ``str`` given to the API holds one);
* its error messages differ, and a reader error's offset counts UTF-8 bytes: on any error
  the pure parser reads the text again, so findings are the same as without libyaml.

Otherwise libyaml's ``Mark.index`` counts characters from the start of the text, as the pure
parser's does (non-ASCII text and ``\r``, U+0085, U+2028, U+2029 included), so
:class:`_Lines` maps both the same way.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import yaml

from bbox_lark.syntax.nodes import NO_FIELDS, FrozenDict, Header

#: Largest header the reader accepts, in bytes of UTF-8 (docs/reference.md#header).
MAX_HEADER_BYTES = 64 * 1024
#: Deepest nesting of lists and maps the header may have. Real headers are flat; a deeply
#: nested one is an attack (the YAML library recurses per level and slows down
#: quadratically with open flow brackets), so it is refused before the YAML is read.
MAX_HEADER_DEPTH = 64

_CORE_TAGS = frozenset(
    "tag:yaml.org,2002:" + name
    for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp", "binary")
)
_NULL_TAG = "tag:yaml.org,2002:null"


class _Fault(Exception):
    def __init__(self, code: str, line: int, col: int, message: str) -> None:
        super().__init__(message)
        self.code, self.line, self.col, self.message = code, line, col, message


class _Lines:
    """File line and column of an offset into the YAML text, counting only ``\\n`` as a line
    break: PyYAML also breaks lines at ``\\r``, U+0085, U+2028 and U+2029, which are line
    content in bbox/1 (docs/reference.md#bytes-and-lines), so its own line numbers can point past the file."""

    def __init__(self, text: str, first_line: int) -> None:
        self.first_line = first_line
        self.starts = [0]
        self.starts.extend(m.end() for m in re.finditer("\n", text))
        if len(self.starts) > 1 and self.starts[-1] == len(text):
            # The text ends with its last line's "\n": the end of the input is the end of
            # that line, never a line after it (an unclosed header ends the file there).
            self.starts.pop()
        #: Where each line's text ends (its "\n" excluded).
        self.ends = [start - 1 for start in self.starts[1:]] + [len(text) - text.endswith("\n")]

    def at(self, index: int) -> tuple[int, int]:
        """File line and column of ``index``; an index past a line's end (PyYAML points at
        the end of the input) is the column just after the line's last character."""
        row = bisect.bisect_right(self.starts, index) - 1
        index = min(index, self.ends[row])
        return self.first_line + row, index - self.starts[row] + 1

    def mark(self, mark: Any) -> tuple[int, int]:
        return self.at(mark.index) if mark is not None else (self.first_line, 1)


_FLOW = re.compile(r"""[\[\]{}"'#]""")
_BLOCK_ENTRY = re.compile(r"(?:[-?:][ \t]+)+")


def _too_deep(text: str) -> tuple[int, int, int] | None:
    """Where the nesting of ``text`` first goes past :data:`MAX_HEADER_DEPTH`, as (offset,
    depth) plus the limit, or None. A conservative, linear estimate made before any YAML
    is read: block levels by indentation and by ``- ``/``? ``/``: `` entries at a line's
    start, flow levels by brackets outside quotes and comments."""
    indents: list[int] = []
    flow = 0
    offset = 0
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if body and not body.startswith("#") and flow == 0:
            indent = len(line) - len(body)
            while indents and indents[-1] >= indent:
                indents.pop()
            indents.append(indent)
            entries = _BLOCK_ENTRY.match(body)
            depth = len(indents) + (entries[0].count(" ") + entries[0].count("\t") if entries else 0)
            if depth > MAX_HEADER_DEPTH:
                return offset + indent, depth, MAX_HEADER_DEPTH
        quote = ""
        for match in _FLOW.finditer(line):
            char = match[0]
            if quote:
                if char == quote:
                    quote = ""
                continue
            if char in "\"'":
                quote = char
            elif char == "#":
                if match.start() == 0 or line[match.start() - 1] in " \t":
                    break
            elif char in "[{":
                flow += 1
                if flow + len(indents) > MAX_HEADER_DEPTH:
                    return offset + match.start(), flow + len(indents), MAX_HEADER_DEPTH
            elif flow:
                flow -= 1
        offset += len(line) + 1
    return None


#: libyaml's loader, when PyYAML was built with it.
_C_LOADER: Any = getattr(yaml, "CSafeLoader", None)
#: Characters of a header that libyaml may read differently from the pure parser.
#: (A lone surrogate, which only a ``str`` passed to the API can hold, cannot reach libyaml.)
# The surrogates as regex escapes: mypyc (setup.py) compiles no literal lone surrogate.
_PURE_ONLY = re.compile("[\t\ufeff!|>?\\ud800-\\udfff]")


def _events(text: str) -> list[Any]:
    """The YAML event stream of ``text``: from libyaml when it reads ``text`` as the pure
    parser would (see the module's docstring), else from the pure parser, which also gives
    every error, so its messages and positions are the same with or without libyaml."""
    if _C_LOADER is not None and not _PURE_ONLY.search(text):
        try:
            return list(yaml.parse(text, Loader=_C_LOADER))
        except yaml.YAMLError:
            pass  # read again below for the pure parser's message and position
    return list(yaml.parse(text, Loader=yaml.SafeLoader))


def _is_null(event: yaml.ScalarEvent) -> bool:
    return bool(event.implicit[0]) and event.value in ("", "~", "null", "Null", "NULL")


def read_header(yaml_text: str, first_line: int, open_line: int | None, close_line: int | None) -> Header:
    """Read the YAML text whose first line is file line ``first_line``."""
    faults: list[tuple[str, int, int, str]] = []
    # Bytes from the file come back as they were (surrogateescape); a lone surrogate in a
    # `str` given to the API has no byte form and counts as the three it would take.
    try:
        size = len(yaml_text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        size = len(yaml_text.encode("utf-8", "surrogatepass"))
    if size > MAX_HEADER_BYTES:
        faults.append(
            (
                "E009",
                open_line or first_line,
                1,
                f"header is {size} bytes, over the limit of {MAX_HEADER_BYTES}",
            )
        )
        return Header(NO_FIELDS, FrozenDict(), open_line, close_line, frozenset(), tuple(faults))
    fields: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    nulls: set[str] = set()
    duplicates: list[tuple[str, int, int, str]] = []
    lines = _Lines(yaml_text, first_line)
    deep = _too_deep(yaml_text)
    if deep is not None:
        offset, depth, limit = deep
        line, col = lines.at(offset)
        message = f"header nesting goes {depth} levels deep here, over the limit of {limit}; not read"
        faults.append(("E017", line, col, message))
        return Header(NO_FIELDS, FrozenDict(), open_line, close_line, frozenset(), tuple(faults))
    try:
        events = _events(yaml_text)
        value = _build(events, lines, fields, key_lines, nulls, duplicates)
        if value is not None and not isinstance(value, dict):
            faults.append(("E007", first_line, 1, "the header is not a mapping of keys to values"))
    except _Fault as fault:
        faults.append((fault.code, fault.line, fault.col, fault.message))
    except yaml.MarkedYAMLError as error:
        line, col = lines.mark(error.problem_mark or error.context_mark)
        problem = error.problem or error.context or "invalid YAML"
        faults.append(("E006", line, col, f"header YAML: {problem}"))
    except yaml.reader.ReaderError as error:
        # A character YAML does not accept (a control character; invalid bytes are E001).
        line, col = lines.at(error.position)
        char = error.character
        shown = f"U+{char:04X}" if isinstance(char, int) else f"U+{ord(char):04X}"
        faults.append(("E006", line, col, f"header YAML: character {shown} is not allowed"))
    except yaml.YAMLError as error:  # pragma: no cover - every other PyYAML error is marked
        faults.append(("E006", first_line, 1, f"header YAML: {str(error).splitlines()[0]}"))
    faults.extend(duplicates)
    return Header(
        FrozenDict(fields), FrozenDict(key_lines), open_line, close_line, frozenset(nulls), tuple(faults)
    )


def _check_event(event: Any, lines: _Lines) -> None:
    if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
        line, col = lines.mark(event.start_mark)
        raise _Fault("E008", line, col, "anchors and aliases are not allowed in the header")
    tag = getattr(event, "tag", None)
    if tag and tag not in _CORE_TAGS and tag not in ("!", "?"):
        line, col = lines.mark(event.start_mark)
        raise _Fault("E015", line, col, f"YAML tag {tag!r} is not allowed in the header")


class _Mapping:
    """A mapping being built: its dict, and the key whose value comes next."""

    __slots__ = ("key", "key_event", "value")

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value
        self.key: str | None = None
        self.key_event: Any = None


def _build(
    events: list[Any],
    lines: _Lines,
    top: dict[str, Any],
    key_lines: dict[str, int],
    nulls: set[str],
    duplicates: list[tuple[str, int, int, str]],
) -> Any:
    """Turn the event stream into strings, lists and dicts; return the document's value.
    Built with an explicit stack, never recursion: depth costs nothing but memory."""
    documents = 0
    result: Any = None
    # Open containers: a list, or a _Mapping. The outermost mapping is ``top``.
    stack: list[list[Any] | _Mapping] = []

    def add(value: Any, event: Any) -> None:
        nonlocal result
        if not stack:
            result = value
            return
        parent = stack[-1]
        if isinstance(parent, list):
            parent.append(value)
            return
        if parent.key is None:
            parent.key = value if isinstance(value, str) else str(value)
            parent.key_event = event
            return
        key, key_event = parent.key, parent.key_event
        parent.key = None
        if len(stack) == 1:  # a top-level key
            line, col = lines.mark(key_event.start_mark)
            if key in parent.value:
                message = f"header key {key!r} repeats; the first value is kept"
                duplicates.append(("W026", line, col, message))
                return
            key_lines[key] = line
            if isinstance(event, yaml.ScalarEvent) and _is_null(event):
                nulls.add(key)
        parent.value.setdefault(key, value)

    for event in events:
        if isinstance(event, (yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentEndEvent)):
            continue
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                line, _ = lines.mark(event.start_mark)
                raise _Fault("E006", line, 1, "header YAML: more than one document")
            continue
        _check_event(event, lines)
        if isinstance(event, yaml.ScalarEvent):
            add(event.value, event)  # the source text, even for null (``~`` stays "~")
        elif isinstance(event, yaml.SequenceStartEvent):
            stack.append([])
        elif isinstance(event, yaml.MappingStartEvent):
            stack.append(_Mapping(top if not stack and result is None else {}))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            done = stack.pop()
            add(done if isinstance(done, list) else done.value, event)
        else:
            line, col = lines.mark(event.start_mark)
            raise _Fault("E006", line, col, "header YAML: unexpected content")
    return result
