"""The YAML header between the two ``---`` fences.

The YAML is read from PyYAML's *event* stream (SafeLoader's scanner and parser), never
constructed into Python objects: scalars keep their source text (``repo_sha: 0123456`` is
``"0123456"``), no tag is ever executed, and an alias is reported instead of expanded, so
an alias bomb costs nothing.
"""

from __future__ import annotations

from typing import Any

import yaml

from bbox_lark.ast import Header

#: Largest header the reader accepts, in bytes of UTF-8 (DECISIONS §2).
MAX_HEADER_BYTES = 64 * 1024

_CORE_TAGS = frozenset(
    "tag:yaml.org,2002:" + name
    for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp", "binary")
)
_NULL_TAG = "tag:yaml.org,2002:null"


class _Fault(Exception):
    def __init__(self, code: str, line: int, col: int, message: str) -> None:
        super().__init__(message)
        self.code, self.line, self.col, self.message = code, line, col, message


def _is_null(event: yaml.ScalarEvent) -> bool:
    return bool(event.implicit[0]) and event.value in ("", "~", "null", "Null", "NULL")


def read_header(yaml_text: str, first_line: int, open_line: int | None, close_line: int | None) -> Header:
    """Read the YAML text whose first line is file line ``first_line``."""
    faults: list[tuple[str, int, int, str]] = []
    size = len(yaml_text.encode("utf-8", "surrogateescape"))
    if size > MAX_HEADER_BYTES:
        faults.append(
            (
                "E009",
                open_line or first_line,
                1,
                f"header is {size} bytes, over the limit of {MAX_HEADER_BYTES}",
            )
        )
        return Header({}, {}, open_line, close_line, frozenset(), tuple(faults))
    fields: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    nulls: set[str] = set()
    duplicates: list[tuple[str, int, int, str]] = []
    try:
        events = list(yaml.parse(yaml_text, Loader=yaml.SafeLoader))
        value = _build(events, first_line, fields, key_lines, nulls, duplicates)
        if value is not None and not isinstance(value, dict):
            faults.append(("E007", first_line, 1, "the header is not a mapping of keys to values"))
    except _Fault as fault:
        faults.append((fault.code, fault.line, fault.col, fault.message))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = first_line + mark.line if mark else first_line
        col = mark.column + 1 if mark else 1
        problem = error.problem or error.context or "invalid YAML"
        faults.append(("E006", line, col, f"header YAML: {problem}"))
    except yaml.reader.ReaderError as error:
        # A character YAML does not accept (a control character; invalid bytes are E001).
        before = yaml_text[: error.position]
        line = first_line + before.count("\n")
        col = error.position - (before.rfind("\n") + 1) + 1
        char = error.character
        shown = f"U+{char:04X}" if isinstance(char, int) else f"U+{ord(char):04X}"
        faults.append(("E006", line, col, f"header YAML: character {shown} is not allowed"))
    except yaml.YAMLError as error:  # pragma: no cover - every other PyYAML error is marked
        faults.append(("E006", first_line, 1, f"header YAML: {str(error).splitlines()[0]}"))
    faults.extend(duplicates)
    return Header(fields, key_lines, open_line, close_line, frozenset(nulls), tuple(faults))


def _check_event(event: Any, first_line: int) -> None:
    line = first_line + event.start_mark.line
    col = event.start_mark.column + 1
    if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
        raise _Fault("E008", line, col, "anchors and aliases are not allowed in the header")
    tag = getattr(event, "tag", None)
    if tag and tag not in _CORE_TAGS and tag not in ("!", "?"):
        raise _Fault("E015", line, col, f"YAML tag {tag!r} is not allowed in the header")


def _build(
    events: list[Any],
    first_line: int,
    top: dict[str, Any],
    key_lines: dict[str, int],
    nulls: set[str],
    duplicates: list[tuple[str, int, int, str]],
) -> Any:
    """Turn the event stream into strings, lists and dicts; return the document's value."""
    position = 0

    def node(depth: int) -> Any:
        nonlocal position
        event = events[position]
        position += 1
        _check_event(event, first_line)
        if isinstance(event, yaml.ScalarEvent):
            return event.value  # the source text, even for null (``~`` stays "~")
        if isinstance(event, yaml.SequenceStartEvent):
            items = []
            while not isinstance(events[position], yaml.SequenceEndEvent):
                items.append(node(depth + 1))
            position += 1
            return items
        if isinstance(event, yaml.MappingStartEvent):
            mapping: dict[str, Any] = top if depth == 0 else {}
            while not isinstance(events[position], yaml.MappingEndEvent):
                key_event = events[position]
                key = node(depth + 1)
                key_text = key if isinstance(key, str) else str(key)
                value_start = events[position]
                value = node(depth + 1)
                if depth == 0:
                    line = first_line + key_event.start_mark.line
                    if key_text in mapping:
                        duplicates.append(
                            (
                                "W026",
                                line,
                                key_event.start_mark.column + 1,
                                f"header key {key_text!r} repeats; the first value is kept",
                            )
                        )
                        continue
                    key_lines[key_text] = line
                    if isinstance(value_start, yaml.ScalarEvent) and _is_null(value_start):
                        nulls.add(key_text)
                if key_text not in mapping:
                    mapping[key_text] = value
            position += 1
            return mapping
        raise _Fault(
            "E006",
            first_line + event.start_mark.line,
            event.start_mark.column + 1,
            "header YAML: unexpected content",
        )

    while position < len(events):
        event = events[position]
        if isinstance(event, yaml.DocumentStartEvent):
            position += 1
            value = node(0)
            if position < len(events) and isinstance(events[position], yaml.DocumentEndEvent):
                position += 1
            rest = [e for e in events[position:] if not isinstance(e, yaml.StreamEndEvent)]
            if rest:
                raise _Fault(
                    "E006", first_line + rest[0].start_mark.line, 1, "header YAML: more than one document"
                )
            return value
        position += 1
    return None
