"""A BB-7 chat file read as JSON (with the line and column of every value) and migrated as BB-7
migrates it on load."""

from __future__ import annotations

import bisect
import contextlib
import json
import re
from typing import Any

from bbox_lark.convert.base import (
    RefusedInputError,
    clean_json,
    json_type,
    load_json,
)
from bbox_lark.convert.bb7.tables import CURRENT_VERSION, VERSIONS

_WS = re.compile(r"[ \t\n\r]*")


# -- reading the JSON ------------------------------------------------------------------------


def _position(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start].decode("utf-8", "replace")
        line, col = _position(before, len(before))
        raise RefusedInputError(
            f"not UTF-8 text (byte {error.start}, line {line}, column {col}): a BB-7 chat is UTF-8 JSON"
        ) from None
    return text.removeprefix("\ufeff")


class Locator:
    """The JSON line and column of each message and part (``json`` keeps no positions): a
    walk of the object's ``messages`` array that reads every other value with the decoder."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offsets: dict[tuple[int, ...], int] = {}
        self._breaks: list[int] | None = None
        self._decoder = json.JSONDecoder()
        # The text is valid JSON (it was loaded first); a failure leaves positions unknown (0).
        with contextlib.suppress(ValueError, IndexError, RecursionError):
            self._object(_WS.match(text, 0).end(), ())  # type: ignore[union-attr]

    def at(self, *path: int) -> tuple[int, int]:
        offset = self.offsets.get(path)
        if offset is None:
            return 0, 0
        if self._breaks is None:  # where each line starts, found once (not per message)
            self._breaks = [found.start() for found in re.finditer("\n", self.text)]
        line = bisect.bisect_left(self._breaks, offset)
        start = self._breaks[line - 1] + 1 if line else 0
        return line + 1, offset - start + 1

    def _skip(self, i: int) -> int:
        return _WS.match(self.text, i).end()  # type: ignore[union-attr]

    def _value(self, i: int, path: tuple[int, ...], key: str | None) -> int:
        i = self._skip(i)
        here = (path == () and key == "messages") or (len(path) == 1 and key == "parts")
        if here and self.text.startswith("[", i):
            return self._array(i, path)
        if len(path) == 1 and key is None and self.text.startswith("{", i):
            return self._object(i, path)
        return int(self._decoder.raw_decode(self.text, i)[1])

    def _object(self, i: int, path: tuple[int, ...]) -> int:
        i = self._skip(i + 1)
        if self.text.startswith("}", i):
            return i + 1
        while True:
            key, i = self._decoder.raw_decode(self.text, i)
            i = self._skip(i) + 1  # the colon
            i = self._skip(self._value(i, path, str(key)))
            if self.text.startswith(",", i):
                i = self._skip(i + 1)
                continue
            return i + 1

    def _array(self, i: int, path: tuple[int, ...]) -> int:
        i = self._skip(i + 1)
        index = 0
        if self.text.startswith("]", i):
            return i + 1
        while True:
            self.offsets[(*path, index)] = i
            i = self._skip(self._value(i, (*path, index), None))
            index += 1
            if self.text.startswith(",", i):
                i = self._skip(i + 1)
                continue
            return i + 1


def chat_version(chat: dict[str, Any]) -> int:
    version = chat.get("version")
    if version is None:  # absent: BB-7 reads a v0 chat (Go's zero value)
        return 0
    if isinstance(version, bool) or not isinstance(version, int):
        raise RefusedInputError(f"chat version {json.dumps(version)} is not an integer")
    if version not in VERSIONS:
        known = ", ".join(str(v) for v in VERSIONS)
        raise RefusedInputError(f"unknown BB-7 chat version {version} (this reader knows {known})")
    return version


def load_chat(data: bytes | str) -> tuple[dict[str, Any], Locator, int]:
    """The chat object of a ``chat.json``, its locator and how many characters were replaced;
    :class:`RefusedInputError` for a file that is not a BB-7 chat."""
    text = data if isinstance(data, str) else _decode(data)
    value = load_json(text, "a BB-7 chat")
    if not isinstance(value, dict):
        raise RefusedInputError(
            f"not a BB-7 chat: the JSON is {json_type(value, article=True)}, not an object"
        )
    if not isinstance(value.get("messages"), list) and value.get("messages", 0) is not None:
        what = "has no messages list" if "messages" not in value else "has messages that are not a list"
        raise RefusedInputError(f"not a BB-7 chat: the JSON object {what}")
    chat_version(value)
    chat, replaced = clean_json(value)  # without recursion: any nesting json loads is fine
    return chat, Locator(text), replaced


# -- migration -------------------------------------------------------------------------------


def migrate_message(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` as BB-7 loads it (``Message.UnmarshalJSON``): a non-empty legacy
    ``content`` string becomes one ``text`` part when the message has no parts; the
    ``content`` key is gone either way (a v2 message has none)."""
    migrated = {key: value for key, value in message.items() if key != "content"}
    content = message.get("content")
    if isinstance(content, str) and content and not message.get("parts"):
        migrated["parts"] = [{"type": "text", "content": content}]
    return migrated


def migrate_chat(chat: dict[str, Any]) -> dict[str, Any]:
    """``chat`` migrated to version 2 (``migrateChat``): every message migrated, the version
    bumped. Messages that are not objects are left as they are."""
    messages = [migrate_message(m) if isinstance(m, dict) else m for m in chat.get("messages") or []]
    return {**chat, "version": max(CURRENT_VERSION, chat_version(chat)), "messages": messages}
