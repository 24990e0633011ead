"""BB-7 ``chat.json`` (the bb7.nvim chat file, ``bb7-spec.md``) → bbox/1; read only.

The whole file is read (it is one JSON document), migrated as BB-7 migrates it on load
(a legacy v0/v1 message's non-empty ``content`` becomes one ``text`` part when the message
has no parts), then yielded as a document stream built from values. The mapping, what is
dropped and what is synthesized are in ``docs/formats/bb7.md`` and :data:`MAPPING`.

- A file that is not UTF-8 or not JSON (a JSON cut in the middle included), that is not a
  BB-7 chat (no ``messages`` list), or whose ``version`` this reader does not know is refused
  as a whole (:class:`~bbox_lark.convert.base.RefusedInputError`, exit 2), with the JSON line
  and column.
- A message of an unknown shape (not an object, an unknown role, ``parts`` not a list) or a
  part of an unknown type is skipped with its JSON line, column and index (exit 1); the rest
  is converted.

The pieces: :mod:`.tables` (names, keys, the mapping table), :mod:`.chat` (the JSON with its
positions, migration) and :mod:`.builder` (the document stream).
"""

from __future__ import annotations

import re

from bbox_lark.convert.base import REPO_SHA, Format
from bbox_lark.convert.bb7.builder import read
from bbox_lark.convert.bb7.chat import load_chat, migrate_chat, migrate_message
from bbox_lark.convert.bb7.tables import CURRENT_VERSION, LINE_LIMIT, MAPPING, TITLE_LIMIT, VERSIONS

__all__ = [
    "CURRENT_VERSION",
    "FORMAT",
    "LINE_LIMIT",
    "MAPPING",
    "TITLE_LIMIT",
    "VERSIONS",
    "load_chat",
    "migrate_chat",
    "migrate_message",
    "read",
    "sniff",
]

_ATIF = re.compile(r'"schema_version"\s*:\s*"ATIF')
_MESSAGES = re.compile(r'"messages"\s*:\s*\[')


def sniff(text: str) -> int:
    """3 for a JSON object with a ``messages`` array and BB-7's own keys (``context_files``,
    or messages with ``role`` and ``parts``/``content``); 0 for anything else (ATIF's
    ``schema_version: "ATIF…"`` included)."""
    start = text.lstrip("\ufeff \t\r\n")
    if not start.startswith("{") or _ATIF.search(text) or not _MESSAGES.search(text):
        return 0
    if '"context_files"' in text:
        return 3
    if '"role"' in text and ('"parts"' in text or '"content"' in text):
        return 2
    return 0


FORMAT = Format(
    name="bb7",
    description="BB-7 chat.json (bb7.nvim), read only; docs/formats/bb7.md",
    extensions=(".json",),
    sniff=sniff,
    read=read,
    write=None,
    fidelity="read only: messages, parts, context events, models and timestamps; see docs/formats/bb7.md",
    lossless=False,
    options=(REPO_SHA,),
    import_mapping=MAPPING,
)
