"""A Lightbox session on disk (``../shared/spec/lightbox-event-format.md``): its files
(``events.jsonl`` and ``meta.json``), the canonical form and hash of an event, the chain, and
writing a session the reference reads and verifies. :mod:`bbox_lark.convert.lightbox.chain`
verifies one (and still answers to these names).

Canonical form (the spec's rules, as the reference computes them): keys sorted at every
level, no whitespace, UTF-8 without ASCII escaping (stored lines may be ASCII-escaped: the
hash is over the canonical form, not the stored bytes), no floats. An event's hash covers
every field of the stored line except ``hash`` itself, so a field added to a line is
tampering.

This module imports nothing heavy (no Lark, YAML, Rich or Typer).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bbox_lark.files.inputs import exists, is_dir, is_regular, kind_of, why_not

#: The ``schema_version`` this module reads and writes.
SCHEMA_VERSION = "1"

#: The ``meta.json`` key holding a session's anchor: ``{"head": <hash of the last event, or
#: null>, "events": <number of events>}``. Written by :func:`write_session`; the reference
#: ignores keys it does not know.
ANCHOR_KEY = "bbox_lark_anchor"

#: The ``lightbox_version`` :func:`write_session` puts in ``meta.json``: the reference release
#: whose format it writes (and whose ``verify`` accepts the result).
LIGHTBOX_VERSION = "0.1.0"

#: The fields every event must have (the reference's reader raises on a missing one; it
#: defaults ``schema_version``, which the spec says writers must never omit).
REQUIRED_FIELDS = (
    "schema_version",
    "session_id",
    "invocation_id",
    "tool",
    "input",
    "output",
    "status",
    "timestamp_start",
    "timestamp_end",
    "prev_hash",
    "hash",
)

#: A session folder's files.
EVENTS = "events.jsonl"
META = "meta.json"


class CanonicalizationError(ValueError):
    """A value that has no canonical form: a float (the spec prohibits them), a key that is
    not a string, a type JSON does not have, or text that is not encodable as UTF-8."""


# -- canonical form and hashes -----------------------------------------------------------


def canonical_json(obj: Any) -> str:
    """The spec's canonical JSON text of ``obj``: keys sorted at every level, separators
    ``,`` and ``:`` without spaces, non-ASCII characters as themselves (``ensure_ascii`` off),
    no Unicode normalization.

    Raises :class:`CanonicalizationError` for a float (NaN and infinities included), a
    mapping key that is not a string, or a value of a type JSON does not have.
    """
    _check_canonical(obj, "")
    return canonical_text(obj)


def canonical_text(obj: Any) -> str:
    """``obj`` as canonical JSON text, unchecked (:func:`canonical_json` checks it first)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _check_canonical(obj: Any, path: str) -> None:
    if obj is None or isinstance(obj, str | int):  # bool is an int
        return
    if isinstance(obj, float):
        raise CanonicalizationError(
            f"{_where(path)}: float {obj!r}: floats are prohibited; write decimals as strings"
        )
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if not isinstance(key, str):
                raise CanonicalizationError(f"{_where(path)}: key {key!r} is not a string")
            _check_canonical(value, f"{path}.{key}" if path else key)
        return
    if isinstance(obj, list | tuple):
        for index, value in enumerate(obj):
            _check_canonical(value, f"{path}[{index}]")
        return
    raise CanonicalizationError(f"{_where(path)}: {type(obj).__name__} is not a JSON value")


def _where(path: str) -> str:
    return f"at {path}" if path else "the value"


def _digest(canonical: str) -> str:
    try:
        data = canonical.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = canonical[error.start]
        raise CanonicalizationError(
            f"text holds U+{ord(bad):04X}, a lone surrogate, which UTF-8 cannot encode"
        ) from None
    return hashlib.sha256(data).hexdigest()


def event_hash(event: Mapping[str, Any], prev_hash: str | None) -> str:
    """The spec's hash of ``event`` chained after ``prev_hash`` (None for the first event):
    SHA-256, in lowercase hex, of the canonical JSON of every field but ``hash``, with
    ``prev_hash`` set to the value given.

    Raises :class:`CanonicalizationError` when the event has no canonical form.
    """
    fields = {key: value for key, value in event.items() if key != "hash"}
    fields["prev_hash"] = prev_hash
    return _digest(canonical_json(fields))


def chain(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """New events, in order, with ``prev_hash`` and ``hash`` filled in: the first event's
    ``prev_hash`` is None, every other's the hash of the one before. Any ``prev_hash`` or
    ``hash`` already present is replaced.

    Raises :class:`CanonicalizationError` (naming the event by its 0-based index) when an
    event has no canonical form.
    """
    chained: list[dict[str, Any]] = []
    prev: str | None = None
    for index, event in enumerate(events):
        linked = {key: value for key, value in event.items() if key != "hash"}
        linked["prev_hash"] = prev
        try:
            linked["hash"] = prev = event_hash(linked, prev)
        except CanonicalizationError as error:
            raise CanonicalizationError(f"event {index}: {error}") from None
        chained.append(linked)
    return chained


# -- writing ------------------------------------------------------------------------------


def write_session(
    directory: str | Path,
    events: Iterable[Mapping[str, Any]],
    meta: Mapping[str, Any] | None = None,
    *,
    overwrite: bool = False,
) -> list[dict[str, Any]]:
    """Write a session the reference reads and verifies: ``directory/events.jsonl`` (the
    events chained with :func:`chain`, one line each, keys sorted, ASCII-escaped as the
    reference writes them) and ``directory/meta.json``, which records the chain's head
    under :data:`ANCHOR_KEY`. Both files are written atomically; the folder is created.

    ``events`` need every field of :data:`REQUIRED_FIELDS` but ``prev_hash`` and ``hash``
    (``schema_version`` defaults to ``"1"``). ``meta`` adds to or overrides the defaults:
    ``session_id`` (the first event's), ``schema_version``, ``lightbox_version``
    (:data:`LIGHTBOX_VERSION`) and ``created_at`` (the first event's ``timestamp_start``, so
    the same events give the same bytes; now when there are none).

    Returns the chained events. Raises :class:`ValueError` (:class:`CanonicalizationError`
    included) for an event without a required field or without a canonical form, or a
    session without a ``session_id``; :class:`FileExistsError` when ``events.jsonl`` exists
    and ``overwrite`` is false; :class:`OSError` when a file cannot be written.
    """
    from bbox_lark.files.atomic import write_atomic

    prepared: list[dict[str, Any]] = []
    for index, event in enumerate(events):
        if not isinstance(event, Mapping):
            raise ValueError(f"event {index}: not a mapping but {type(event).__name__}")
        filled = {"schema_version": SCHEMA_VERSION, **event}
        missing = [name for name in REQUIRED_FIELDS[:-2] if name not in filled]
        if missing:
            raise ValueError(f"event {index}: missing required field(s): {', '.join(missing)}")
        prepared.append(filled)
    chained = chain(prepared)

    document: dict[str, Any] = {
        "session_id": chained[0]["session_id"] if chained else None,
        "schema_version": SCHEMA_VERSION,
        "lightbox_version": LIGHTBOX_VERSION,
        "created_at": chained[0]["timestamp_start"] if chained else _now(),
    }
    document.update(meta or {})
    if not isinstance(document.get("session_id"), str) or not document["session_id"]:
        raise ValueError("no session_id: give it in meta (a session without events has none)")
    document[ANCHOR_KEY] = {"head": chained[-1]["hash"] if chained else None, "events": len(chained)}

    folder = Path(directory)
    events_path = folder / EVENTS
    if events_path.exists() and not overwrite:
        raise FileExistsError(f"{events_path}: already exists (pass overwrite=True to replace it)")
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n" for e in chained)
    write_atomic(events_path, lines.encode("ascii"))
    write_atomic(folder / META, (json.dumps(document, indent=2) + "\n").encode("ascii"))
    return chained


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def events_file(path: str | Path) -> tuple[Path | None, str | None]:
    """The events file of ``path`` (a session folder or an events file) and, when there is
    none, why not."""
    given = Path(path)
    if is_dir(given):
        candidate = given / EVENTS
        if is_regular(candidate):
            return candidate, None
        if exists(candidate):
            return None, f"{candidate}: is not a file"
        try:
            others = sorted(p.name for p in given.glob("*.events.jsonl"))
        except OSError:
            others = []
        hint = f" (found {', '.join(others[:3])}: give the file)" if others else ""
        return None, f"{given}: no {EVENTS} in this folder{hint}"
    kind = kind_of(given)
    if kind in ("file", "stream"):  # a stream (a FIFO, <(…)) is read once
        return given, None
    if kind == "missing":
        return None, f"{given}: no such file or folder"
    return None, why_not(given) or f"{given}: not a file or folder"


def meta_file(events_path: Path) -> Path | None:
    """The ``meta.json`` beside an events file: ``meta.json`` for ``events.jsonl``,
    ``NAME.meta.json`` for ``NAME.events.jsonl``; None for any other name."""
    name = events_path.name
    if name == EVENTS:
        return events_path.with_name(META)
    if name.endswith("." + EVENTS):
        return events_path.with_name(name[: -len(EVENTS)] + META)
    return None


__all__ = [
    "ANCHOR_KEY",
    "EVENTS",
    "LIGHTBOX_VERSION",
    "META",
    "REQUIRED_FIELDS",
    "SCHEMA_VERSION",
    "CanonicalizationError",
    "canonical_json",
    "canonical_text",
    "chain",
    "event_hash",
    "events_file",
    "meta_file",
    "write_session",
]
