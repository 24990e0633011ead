"""Lightbox sessions (``../shared/spec/lightbox-event-format.md``): the hash chain, verified
(written: :mod:`bbox_lark.convert.lightbox.session`, whose names this module still answers to).

A Lightbox session is a folder holding ``events.jsonl`` (one JSON object a line, each event
hash-chained to the one before it) and ``meta.json``. :func:`verify` checks a session the way
the reference recorder (``lightbox-rec`` 0.1.0, ``lightbox verify``) does and gives the same
statuses and exit codes, with the first bad line, its invocation id and why
(``docs/formats/lightbox.md`` lists every check and where bbox-lark is stricter):

- ``VALID`` (exit 0): every hash matches its event and links to the one before;
- ``TAMPERED`` (1): an event's content or its place in the chain was changed;
- ``TRUNCATED`` (2): the last line was cut while being written, or events are missing at
  the end (the ``meta.json`` anchor);
- ``PARSE_ERROR`` (3): a line is not an event (not JSON, not UTF-8, a float, a missing
  field, ...);
- ``NOT_FOUND`` (4): no such session folder or events file.

The chain has no anchor at its head in the format: deleting the last events leaves a valid,
shorter chain. Sessions written by :func:`write_session` record their head in
``meta.json`` under :data:`ANCHOR_KEY` (a key the reference ignores), and :func:`verify`
reports a chain shorter than its anchor as truncated.

This module imports nothing heavy (no Lark, YAML, Rich or Typer) and, of bbox_lark, only the
session's files and hashes (:mod:`~bbox_lark.convert.lightbox.session`) and ``files.inputs``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any, BinaryIO

from bbox_lark.convert.lightbox.session import (
    ANCHOR_KEY,
    LIGHTBOX_VERSION,
    REQUIRED_FIELDS,
    SCHEMA_VERSION,
    CanonicalizationError,
    canonical_json,
    canonical_text,
    chain,
    event_hash,
    events_file,
    meta_file,
    write_session,
)

#: The optional fields of an event (the spec's table, in its order).
OPTIONAL_FIELDS = (
    "parent_invocation",
    "actor",
    "originating_actor",
    "error",
    "chunk_count",
    "total_bytes",
    "content_hashes",
    "retry_of",
)

_HEX = frozenset("0123456789abcdef")


class Status(IntEnum):
    """A verification's outcome; its value is the exit code (as ``lightbox verify``'s)."""

    VALID = 0
    TAMPERED = 1
    TRUNCATED = 2
    PARSE_ERROR = 3
    NOT_FOUND = 4


# -- verifying ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Anchor:
    """What ``meta.json`` records about the chain (:data:`ANCHOR_KEY`)."""

    head: str | None
    events: int

    def to_json(self) -> dict[str, Any]:
        return {"head": self.head, "events": self.events}


@dataclass(frozen=True)
class Verification:
    """The outcome of :func:`verify`.

    ``events`` counts the lines read as events (the reference's count, also when the
    verdict is not VALID); ``head`` is the last event's hash when the chain is valid.
    ``line`` (1-based, as ``sed -n Np`` counts) and ``invocation_id`` name the first bad
    event when there is one; ``reason`` says what is wrong with it; ``expected`` and
    ``actual`` are the hashes compared when a hash or a link did not match.
    """

    status: Status
    path: str
    events: int = 0
    head: str | None = None
    line: int | None = None
    invocation_id: str | None = None
    reason: str | None = None
    expected: str | None = None
    actual: str | None = None
    anchor: Anchor | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def valid(self) -> bool:
        return self.status is Status.VALID

    @property
    def exit_code(self) -> int:
        """0 VALID, 1 TAMPERED, 2 TRUNCATED, 3 PARSE_ERROR, 4 NOT_FOUND."""
        return int(self.status)

    def summary(self) -> str:
        """One line: ``VALID: 3 events, head 6548133d0f0b…`` or
        ``TAMPERED: line 2 (invocation inv_00002): hash does not match its content``."""
        if self.status is Status.VALID:
            head = f"head {self.head[:12]}…" if self.head else "no head"
            return f"VALID: {self.events} event{'' if self.events == 1 else 's'}, {head}"
        where: list[str] = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.invocation_id is not None:
            where.append(f"(invocation {self.invocation_id})")
        place = " ".join(where)
        return f"{self.status.name}: {place + ': ' if place else ''}{self.reason}"

    def to_json(self) -> dict[str, Any]:
        """The JSON form (``docs/schema/lightbox-verify.schema.json``)."""
        return {
            "path": self.path,
            "status": self.status.name,
            "exit_code": self.exit_code,
            "events": self.events,
            "head": self.head,
            "line": self.line,
            "invocation_id": self.invocation_id,
            "reason": self.reason,
            "expected": self.expected,
            "actual": self.actual,
            "anchor": self.anchor.to_json() if self.anchor else None,
            "notes": list(self.notes),
        }


def verify(path: str | Path) -> Verification:
    """Verify the session at ``path``: a session folder (its ``events.jsonl``) or an events
    file. The ``meta.json`` beside it (:func:`meta_file`) is read for the anchor only.

    Never raises on bad input: a missing or unreadable path is NOT_FOUND, and every byte
    sequence gets a status."""
    events_path, why = events_file(path)
    if events_path is None:
        return Verification(Status.NOT_FOUND, str(path), reason=why)
    shown = str(events_path)
    anchor: Anchor | None = None
    notes: list[str] = []
    meta_path = meta_file(events_path)
    anchor_problem: str | None = None
    if meta_path is not None and meta_path.exists():
        anchor, anchor_problem, note = _read_anchor(meta_path)
        if note:
            notes.append(note)
    try:
        with events_path.open("rb") as stream:
            result = verify_lines(_physical_lines(stream), path=shown, anchor=anchor)
    except OSError as error:
        return Verification(
            Status.NOT_FOUND, shown, reason=f"{shown}: cannot read: {error.strerror or error}"
        )
    if anchor_problem is not None and result.status in (Status.VALID, Status.TAMPERED):
        # The events themselves parse; the anchor we wrote does not.
        result = Verification(
            Status.PARSE_ERROR, shown, events=result.events, reason=anchor_problem, notes=result.notes
        )
    if notes:
        result = _with_notes(result, notes)
    return result


def verify_bytes(data: bytes, *, anchor: Anchor | None = None, path: str = "<bytes>") -> Verification:
    """Verify the content of an events file held in memory (see :func:`verify`)."""
    return verify_lines(iter(data.splitlines(keepends=True)), path=path, anchor=anchor)


def _with_notes(result: Verification, notes: list[str]) -> Verification:
    from dataclasses import replace

    return replace(result, notes=(*notes, *result.notes))


def _read_anchor(meta_path: Path) -> tuple[Anchor | None, str | None, str | None]:
    """(anchor, problem, note): the anchor in ``meta.json``; a problem when our key is there
    but malformed (a PARSE_ERROR); a note when the file cannot be read as JSON at all
    (the reference never reads it to verify, so neither do we beyond the anchor)."""
    try:
        meta = json.loads(meta_path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        return None, None, f"{meta_path.name}: not read ({type(error).__name__}); no anchor checked"
    if not isinstance(meta, dict) or ANCHOR_KEY not in meta:
        return None, None, None
    value = meta[ANCHOR_KEY]
    problem = f'{meta_path.name}: {ANCHOR_KEY} must be {{"head": <64 hex digits or null>, "events": <count>}}'
    if not isinstance(value, dict):
        return None, problem, None
    head, count = value.get("head"), value.get("events")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        return None, problem, None
    if (count == 0 and head is not None) or (count > 0 and not _is_hash(head)):
        return None, problem, None
    return Anchor(head, count), None, None


def _is_hash(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def _physical_lines(stream: BinaryIO) -> Iterator[bytes]:
    """The file's lines as Python's universal newlines split them (``\\n``, ``\\r\\n`` and a
    lone ``\\r`` end a line, as when the reference reads the file as text), each with its
    ending; one line held at a time."""
    for chunk in stream:  # binary iteration ends lines at \n only
        if b"\r" in chunk:
            yield from _split_cr(chunk)
        else:
            yield chunk


def _split_cr(chunk: bytes) -> Iterator[bytes]:
    # A \r at the very end of a chunk may be the first half of \r\n split across reads; binary
    # iteration only ends a chunk after \n or at end of file, so that cannot happen here.
    yield from chunk.splitlines(keepends=True)


class _Float(Exception):
    """A float literal in an event (raised from the JSON parser's hooks)."""

    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


def _reject_float(literal: str) -> Any:
    raise _Float(literal)


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return result


@dataclass
class _Problem:
    line: int
    reason: str
    invocation_id: str | None = None
    expected: str | None = None
    actual: str | None = None


class _BadLine(Exception):
    def __init__(self, reason: str, event: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.event = event


def _parse(raw: bytes) -> tuple[dict[str, Any], str]:
    """An event line (its ending removed) read: the event and its canonical text without
    ``hash``. Raises :class:`_BadLine`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _BadLine(f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at byte {error.start + 1})") from None
    try:
        event = json.loads(
            text, parse_float=_reject_float, parse_constant=_reject_float, object_pairs_hook=_unique_keys
        )
    except _Float as found:
        raise _BadLine(_float_reason(text, found.literal), _loose(text)) from None
    except _Duplicate as found:
        raise _BadLine(
            f"duplicate key {found.key!r}: readers disagree on which value counts", _loose(text)
        ) from None
    except json.JSONDecodeError as error:
        raise _BadLine(f"invalid JSON: {error.msg} (column {error.colno})") from None
    except (ValueError, RecursionError) as error:  # a number over 4300 digits; deep nesting
        if isinstance(error, RecursionError):
            reason = "nested too deeply"
        elif "digits" in str(error):
            reason = "a number with more digits than Python reads (4300)"
        else:
            reason = str(error)
        raise _BadLine(f"invalid JSON: {reason}") from None
    if not isinstance(event, dict):
        from bbox_lark.syntax.values import json_type

        raise _BadLine(f"a JSON {json_type(event)}, not an object")
    missing = [name for name in REQUIRED_FIELDS if name not in event]
    if missing:
        raise _BadLine(f"missing required field(s): {', '.join(missing)}", event)
    fields = {key: value for key, value in event.items() if key != "hash"}
    try:
        canonical = canonical_text(fields)
        canonical.encode("utf-8")
    except UnicodeEncodeError:
        raise _BadLine(
            "a string holds a lone surrogate (\\udXXX escape), which UTF-8 cannot encode", event
        ) from None
    except (ValueError, RecursionError) as error:
        raise _BadLine(f"cannot be canonicalized: {error}", event) from None
    return event, canonical


def _loose(text: str) -> Any:
    """The line read leniently (floats allowed, last key wins), to name its invocation."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _float_reason(text: str, literal: str) -> str:
    event = _loose(text)
    path = _find_float(event, "") if event is not None else None
    where = f" at {path}" if path else ""
    return f"float {literal}{where}: floats are prohibited (canonicalization rule 4), so it has no hash"


def _find_float(obj: Any, path: str) -> str | None:
    if isinstance(obj, float):
        return path or "(the line)"
    items: Iterable[tuple[str, Any]]
    if isinstance(obj, dict):
        items = ((f"{path}.{key}" if path else key, value) for key, value in obj.items())
    elif isinstance(obj, list):
        items = ((f"{path}[{index}]", value) for index, value in enumerate(obj))
    else:
        return None
    for where, value in items:
        found = _find_float(value, where)
        if found:
            return found
    return None


def _invocation(event: Any) -> str | None:
    if isinstance(event, dict):
        value = event.get("invocation_id")
        if isinstance(value, str):
            return value
    return None


def verify_lines(lines: Iterator[bytes], *, path: str, anchor: Anchor | None = None) -> Verification:
    """Verify an events file given as its physical lines (each with its line ending).

    The order of verdicts is the reference's: a cut last line (TRUNCATED) wins over a line
    that is not an event (PARSE_ERROR, the first one), which wins over a broken chain
    (TAMPERED, the first bad event); then the anchor, when there is one."""
    count = 0
    parse_problem: _Problem | None = None
    chain_problem: _Problem | None = None
    prev: str | None = None
    at_anchor: tuple[int, str | None] | None = (
        (0, None) if anchor is not None and anchor.events == 0 else None
    )
    last_raw: bytes | None = None
    last_number = 0
    last_problem: _BadLine | None = None
    notes: list[str] = []
    for number, raw in enumerate(lines, start=1):
        body = raw.rstrip(b"\r\n")
        if not body:
            continue
        try:
            event, canonical = _parse(body)
        except _BadLine as bad:
            last_raw, last_number, last_problem = raw, number, bad
            if parse_problem is None:
                parse_problem = _Problem(number, bad.reason, _invocation(bad.event))
            continue
        last_raw, last_number, last_problem = raw, number, None
        count += 1
        if parse_problem is not None or chain_problem is not None:
            continue
        stored = event["hash"]
        computed = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        if stored != computed:
            chain_problem = _Problem(
                number,
                "hash does not match its content (a field was changed, added or removed)",
                _invocation(event),
                computed,
                _text(stored),
            )
        elif event["prev_hash"] != prev:
            if prev is None:
                reason = "first event's prev_hash is not null (the events before it are missing)"
            else:
                reason = (
                    "prev_hash does not match the previous event's hash"
                    " (an event was removed, moved or inserted before it)"
                )
            chain_problem = _Problem(number, reason, _invocation(event), prev, _text(event["prev_hash"]))
        else:
            prev = stored
            if anchor is not None and count == anchor.events:
                at_anchor = (number, stored)
    # The last line without a line ending that is not an event: cut while being written.
    if last_raw is not None and not last_raw.endswith((b"\n", b"\r")):
        if last_problem is not None and _looks_cut(last_raw, last_problem):
            return Verification(
                Status.TRUNCATED,
                path,
                events=count,
                line=last_number,
                reason=f"last line is incomplete (cut while writing?): {last_problem.reason}",
                anchor=anchor,
            )
        if last_problem is None:
            notes.append(f"line {last_number}: the last line has no line ending (it is complete)")
    if parse_problem is not None:
        return Verification(
            Status.PARSE_ERROR,
            path,
            events=count,
            line=parse_problem.line,
            invocation_id=parse_problem.invocation_id,
            reason=parse_problem.reason,
            anchor=anchor,
            notes=tuple(notes),
        )
    if chain_problem is not None:
        return Verification(
            Status.TAMPERED,
            path,
            events=count,
            line=chain_problem.line,
            invocation_id=chain_problem.invocation_id,
            reason=chain_problem.reason,
            expected=chain_problem.expected,
            actual=chain_problem.actual,
            anchor=anchor,
            notes=tuple(notes),
        )
    if anchor is not None:
        verdict = _check_anchor(anchor, count, prev, at_anchor, path, notes)
        if verdict is not None:
            return verdict
    return Verification(Status.VALID, path, events=count, head=prev, anchor=anchor, notes=tuple(notes))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) or value is None else json.dumps(value)


def _looks_cut(raw: bytes, problem: _BadLine) -> bool:
    """Whether a last line without a line ending can be an event cut while it was written:
    invalid JSON, or an object missing fields (the reference's two cases), but not bytes
    that are invalid UTF-8 before their last character (a cut can only leave an incomplete
    character at the very end)."""
    if problem.reason.startswith("not valid UTF-8"):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as error:
            return error.reason == "unexpected end of data"
        return False
    return problem.reason.startswith(("invalid JSON", "missing required field"))


def _check_anchor(
    anchor: Anchor,
    count: int,
    head: str | None,
    at_anchor: tuple[int, str | None] | None,
    path: str,
    notes: list[str],
) -> Verification | None:
    """The verdict on a valid chain that ``meta.json`` anchors, when it is not VALID.
    ``at_anchor`` is the line and hash of the event the anchor counts up to (the
    ``anchor.events``-th), when the chain is that long."""
    if count < anchor.events:
        missing = anchor.events - count
        return Verification(
            Status.TRUNCATED,
            path,
            events=count,
            head=head,
            reason=(
                f"the chain ends after {count} event{'' if count == 1 else 's'} but meta.json's"
                f" {ANCHOR_KEY} records {anchor.events}: "
                + ("the last event is missing" if missing == 1 else f"the last {missing} events are missing")
            ),
            expected=anchor.head,
            actual=head,
            anchor=anchor,
            notes=tuple(notes),
        )
    line, hash_there = at_anchor if at_anchor is not None else (None, None)
    if hash_there != anchor.head:
        return Verification(
            Status.TAMPERED,
            path,
            events=count,
            line=line or None,
            reason=(
                f"event {anchor.events}'s hash differs from the head meta.json's {ANCHOR_KEY} records"
                " (the chain was rewritten)"
            ),
            expected=anchor.head,
            actual=hash_there,
            anchor=anchor,
            notes=tuple(notes),
        )
    if count > anchor.events:
        notes.append(
            f"meta.json's {ANCHOR_KEY} covers the first {anchor.events} of {count} events"
            " (events were appended after it was written)"
        )
    return None


__all__ = [
    "ANCHOR_KEY",
    "LIGHTBOX_VERSION",
    "OPTIONAL_FIELDS",
    "REQUIRED_FIELDS",
    "SCHEMA_VERSION",
    "Anchor",
    "CanonicalizationError",
    "Status",
    "Verification",
    "canonical_json",
    "chain",
    "event_hash",
    "events_file",
    "meta_file",
    "verify",
    "verify_bytes",
    "verify_lines",
    "write_session",
]
