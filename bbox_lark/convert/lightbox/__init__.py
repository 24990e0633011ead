"""Lightbox sessions (``../shared/spec/lightbox-event-format.md``) to bbox/1 and back.

``convert --from lightbox PATH`` reads a session folder (its ``events.jsonl`` and
``meta.json``) or an events file; ``convert --to lightbox -o DIR`` writes a hash-chained
``events.jsonl`` and a ``meta.json`` (with bbox-lark's anchor) that the reference recorder
verifies. ``docs/formats/lightbox.md`` ("Converting") shows both directions with real output; the
mapping tables (:mod:`.tables`) are what ``docs/convert.md`` shows.

Reading, one call line per event:

- ``status=complete`` → ``t:TOOL id=INVOCATION ts=START latency_ms=N … → RESULT``;
  ``status=pending`` → ``t!:TOOL id=… → [running]``; the resolved event of a pending one (the
  same invocation id) → ``t:TOOL id=…`` again, which completes the start (docs/reference.md#correlation);
  ``status=error`` → ``→ [err: MESSAGE]``.
- ``latency_ms`` is ``timestamp_end - timestamp_start`` when that gives ``timestamp_end``
  back exactly (written in the start's style); else the end goes in ``ts_end=``.
- ``input``: each entry with a plain key and a string, integer, boolean or null value (or a
  list of strings) is a field; ``input.args`` (a list of strings) gives the positional
  arguments; every other entry (nested values, keys that cannot be field keys, keys this
  converter writes itself) goes into one field ``input=`` holding their JSON.
- ``output``: ``{"result": TEXT, "text": LINES}`` (what the writer makes of a bbox result)
  gives that result and continuation lines back; a flat object → a fields result
  (``→ conditions="Partly cloudy" humidity=65``); anything else → its JSON as the result
  when it fits on a short line, else as continuation lines (indented JSON).
- Redacted values (``"[REDACTED]"``, ``{"_redacted": true, "_reason": R, "_bytes": N}``) →
  ``[redacted:secret]`` / ``[redacted:R]`` markers; ``content_hashes`` →
  ``content_hashes.PATH=HASH`` fields, ``_bytes`` → ``redacted_bytes.PATH=N``.
- ``retry_of`` → ``retry_of=INV`` and ``attempt=N`` (1 + the attempt it retries);
  ``actor``, ``originating_actor``, ``parent_invocation``, ``chunk_count``,
  ``total_bytes`` → fields of the same names; ``error`` beyond ``{"message": …}`` →
  ``error=JSON``.
- ``session_id`` → the header's ``id`` (an event of another session gets ``session_id=``);
  ``meta.json``'s ``created_at`` and ``lightbox_version`` → header keys
  ``extra.lightbox_created_at`` and ``extra.lightbox_version`` (the whole bbox header when
  the writer saved it there, :data:`HEADER_KEY`); ``repo_sha:
  unknown`` unless ``--repo-sha`` (docs/reference.md#importers).
- The chain is verified (:func:`bbox_lark.convert.lightbox.chain.verify_bytes`) while reading: a chain that
  is not VALID is reported as a skipped record at its line (exit 1) and the events are
  converted as they stand. A line that is not an event (not JSON, not an object, no
  ``tool``/``invocation_id``, an unknown ``status``, a cut last line) is skipped with its
  line; the rest is converted.

Writing: every call (``t t! x c s p q``; lines of the kinds :data:`bbox_lark.syntax.correlate.FAMILIES`
names) is an event; a completion (a ``t:`` with the id of an open ``t!``, an ``o:`` with a
final result) is the resolved event of its start. Other lines (messages, comments,
lifecycle, ``m:`` ``r:`` ``t~``, unknown lines) have no place in Lightbox: dropped, counted
in the report.

The pieces: :mod:`.tables` (names, field lists, the mapping tables), :mod:`.values` (JSON and
timestamp helpers both directions share), :mod:`.reader` and :mod:`.writer`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "EPOCH",
    "EXPORT_MAPPING",
    "EXTENSIONS",
    "FORMAT",
    "HEADER_KEY",
    "HEADER_TIMES",
    "IMPORT_MAPPING",
    "INLINE_LIMIT",
    "OWN_FIELDS",
    "PLAIN_FIELDS",
    "PREFIXED_KINDS",
    "STATUSES",
    "read",
    "sniff",
    "write",
]


def __getattr__(name: str) -> Any:
    """The format's names, loaded on first use: the hash chain (``lightbox verify``,
    :mod:`bbox_lark.convert.lightbox.chain`) needs neither the mapping tables (which read the
    grammar) nor the reader and writer (which parse)."""
    if name == "FORMAT":
        value: Any = _format()
    elif name in ("read", "sniff"):
        from bbox_lark.convert.lightbox import reader

        value = getattr(reader, name)
    elif name == "write":
        from bbox_lark.convert.lightbox.writer import write as value
    elif name in __all__:
        from bbox_lark.convert.lightbox import tables

        value = getattr(tables, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def _format() -> Any:
    from bbox_lark.convert.base import REPO_SHA, Format
    from bbox_lark.convert.lightbox.reader import read, sniff
    from bbox_lark.convert.lightbox.tables import EXPORT_MAPPING, EXTENSIONS, IMPORT_MAPPING
    from bbox_lark.convert.lightbox.writer import write

    return Format(
        name="lightbox",
        description="Lightbox sessions: hash-chained events.jsonl + meta.json (a folder)",
        extensions=EXTENSIONS,
        sniff=sniff,
        read=read,
        write=write,
        fidelity=(
            "calls only (names, ids, arguments, fields, results, timing); messages, comments and"
            " lifecycle lines are dropped and reported"
        ),
        lossless=False,
        options=(REPO_SHA,),
        output="folder",
        reads_folders=True,
        export_mapping=EXPORT_MAPPING,
        import_mapping=IMPORT_MAPPING,
    )
