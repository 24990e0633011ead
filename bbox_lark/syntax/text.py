"""Any text, written and read back (docs/reference.md#any-text).

A writer must be able to put *any* Python string into a message (``u a th td``), a
positional argument, a field value or a result, and a reader must get exactly that string
back. Text a line can carry as written is written as is (``a: Looking now.``); any other text
is one quoted string, the grammar's ``WRITTEN_TEXT`` (``a: "Line one.\\nLine two."``), whose
escapes (``\\" \\\\ \\n \\t`` and ``\\u{HEX}``) can say anything on one line.

:func:`text_of` is the one accessor that reads every such text back. Arguments and field
values need none: ``event.args`` and ``event.fields`` already hold their values with the
escapes resolved.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from bbox_lark.files.blobs import read_blob
from bbox_lark.syntax.grammar import compiled, vocabulary
from bbox_lark.syntax.nodes import Event, Result
from bbox_lark.syntax.scan import POINTER, parse_blob, unquote


@cache
def _written() -> Any:
    return compiled("WRITTEN_TEXT")


def decode(text: str) -> str:
    """``text`` read as written text: the value of one complete quoted string (escapes
    resolved), else ``text`` itself."""
    if text[:1] == '"' and text[-1:] == '"' and _written().fullmatch(text) is not None:
        return unquote(text)
    return text


def message_body(event: Event) -> str:
    """A message's text without its trailing fields, as written (``Fix it.`` in ``u: Fix it.
    step=2``): fields elsewhere in the text stay part of it."""
    text = event.text
    end = len(text)
    for field in reversed([f for f in event.field_nodes if not f.after_arrow]):
        start, stop = field.col - event.text_col, field.end_col - event.text_col
        if not (0 <= start <= stop <= end) or text[stop:end].strip():
            break
        end = start
    return text[:end].rstrip()


def text_of(node: Event | Result | str, *, blobs: str | Path | None = None) -> str:
    """The text a writer gave, read back exactly (``docs/reference.md``, "Any text").

    * A message or thinking line (``u a th td``): its text up to its trailing fields, a
      written-text string decoded (``a: "x\\ny" step=3`` gives ``"x\\ny"``); with
      ``blobs``, a text that is a blob pointer (a writer stored a message too long for a
      line) is the blob's content.
    * A result (``text_of(event.result)``, inline or an ``o:`` line's): for free text, the
      text, decoded; for an error, its message (``[err: msg]``, or the decoded string after
      a bare ``[error]``, with ``blobs`` the blob it points to); for a blob pointer with
      ``blobs`` (the blob folder), the blob's content (:func:`blob_text`); for any other form, the text
      after its bracket form (``128 tests passed`` in ``[ok] 128 tests passed``), decoded.
    * Any other line: its text (a comment's after ``#``, an unknown line's as written),
      decoded (with ``blobs``, a blob pointer read as for a message).
    * An argument or a field value (``event.args[0]``, ``event.fields["path"]``): the value
      itself, or with ``blobs``, when it is a blob pointer (a writer stored a long value as a
      blob), the blob's content.
    """
    if isinstance(node, str):
        return _value_text(node, blobs)
    if isinstance(node, Result):
        return _result_text(node, blobs)
    text = message_body(node) if node.prefix in vocabulary().free_text_prefixes else node.text
    # A message or comment too long for a line is stored as a blob by a writer: its text is
    # then the pointer, as written text.
    return _value_text(decode(text), blobs)


def _value_text(value: str, blobs: str | Path | None) -> str:
    if blobs is not None and value.startswith("@blob sha256=") and POINTER.fullmatch(value):
        pointer = parse_blob(value, 0, 0)
        content = _blob_text(pointer.sha256, blobs, pointer.mime)
        if content is not None:
            return content
    return value


def blob_text(data: bytes, mime: str | None) -> str:
    """A blob's content as text: UTF-8; in a ``text/…`` blob, a surrogate code point stored
    as the three bytes ``surrogatepass`` writes (how a writer stores a ``str`` holding one,
    which no UTF-8 text can) is read back as that code point; any other invalid byte is kept
    as a lone surrogate U+DC80–U+DCFF (``surrogateescape``, as in a binary blob)."""
    if mime is not None and mime.startswith("text/"):
        try:
            return data.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", "surrogateescape")


def _blob_text(sha256: str | None, blobs: str | Path, mime: str | None = None) -> str | None:
    """A blob's content as text (:func:`blob_text`), or None."""
    data = read_blob(Path(blobs), sha256) if sha256 else None
    return blob_text(data, mime) if data is not None else None


def _result_text(result: Result, blobs: str | Path | None) -> str:
    kind = result.kind
    if kind == "text":
        return decode(result.text)
    if kind == "error" and result.message is not None:
        return result.message
    if kind == "blob" and blobs is not None and result.blob is not None:
        content = _blob_text(result.blob.sha256, blobs, result.blob.mime)
        if content is not None:
            return content
    if kind in ("fields", "empty"):
        return result.text
    # An error message too long for a line is stored as a blob by a writer (``[error]`` and
    # the pointer as written text).
    return _value_text(decode(result.rest), blobs)
