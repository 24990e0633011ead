"""Writing a bbox/1 log as a session runs: :class:`Writer` (``docs/writing.md``).

The format's promise is "write as you go; the session can crash and you still have
everything up to that point". The Writer keeps it:

* **Any text.** Every string a harness hands over (a message, an argument, a field value, a
  result, an exception's message, a comment, a header value) is written so that it reads
  back exactly (:func:`bbox_lark.text_of`; ``docs/reference.md``, "Any text"), and text that
  would change what a line means (a comment ``metrics cost_usd=5``) is written text. Text
  too long for a line goes to the blob store, whatever the method. The Writer never raises
  on text; a value of the wrong type is a TypeError naming it, at the call.
* **Crash-safe.** Each line is built whole, written with one call and flushed (``fsync``
  syncs it), so a killed process leaves every complete line readable.
* **Redacted.** With ``redact=True`` (the default) every secret the scanner finds
  (:mod:`bbox_lark.secrets.scanner`) becomes ``[redacted:KIND]`` before it is written: a line's
  values are scanned together as the line shows them (a field value beside its key, an
  argument beside the one before it; docs/reference.md#secrets), and the closing ``# redactions=N``
  states how many markers the body holds, counted from the values written.
* **Blobs.** Bytes, and long results, arguments or field values, go to the blob store.
* **Thread-safe.** One lock serialises every line: tool calls may finish from several threads.
* **Errors.** A header without ``id`` or ``repo_sha``, or larger than bbox/1 allows, is a
  :class:`ValueError` from the constructor, before anything is written; a value of the
  wrong type is a :class:`TypeError` naming it. A failure to write (disk full, a closed
  stream) is reported once, as a :class:`WriterWarning` naming the target, and kept in
  :attr:`Writer.error`; the lines written before it stay readable, later ones are dropped.
  Writing after :meth:`close` is reported the same way.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from bbox_lark.files.blobs import FOLDER_NAME, BlobStore, StoredBlob
from bbox_lark.syntax import build
from bbox_lark.syntax.header import MAX_HEADER_BYTES
from bbox_lark.syntax.nodes import BlobPointer, Event, Result
from bbox_lark.syntax.printer import emit
from bbox_lark.syntax.scan import quote
from bbox_lark.syntax.source import DEFAULT_MAX_LINE
from bbox_lark.write.values import (  # noqa: F401 (MAX_NAME: documented here)
    KEY_UNSAFE,
    LINE_ROOM,
    MAX_NAME,
    METHODS,
    NAME_UNSAFE,
    PRIMITIVE_UNSAFE,
    Pointer,
    Resumed,
    Value,
    as_json,
    check_name,
    count_markers,
    header_value,
    is_binary,
    is_pointer,
    markers_of,
    need_str,
    parts_of,
    plain_comment,
    resume,
    safe_key,
    scalar,
    scan_counted,
    typename,
)

#: Results and arguments longer than this many characters go to the blob store (4 KiB).
DEFAULT_BLOB_THRESHOLD = 4096

#: Bytes with no blob store are written inline as text, each byte that is not UTF-8 as a lone
#: surrogate: ``text_of(...).encode("utf-8", "surrogateescape")`` gives them back.
_BYTES_INLINE = "surrogateescape"

#: The mime types of blobs the Writer makes from bytes and from text.
BINARY = "application/octet-stream"
TEXT = "text/plain"

#: The status a call's line is written with when it is written before its result: the call
#: is then open (docs/reference.md#correlation) until an ``o:`` line gives the result.
_OPEN_STATUS = {"subagent": "launched", "question": "pending"}


class WriterWarning(UserWarning):
    """A line the Writer could not write (disk full, a closed stream, a closed Writer)."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _warn(message: str) -> None:
    """A :class:`WriterWarning` pointing at the code that called the Writer, however deep
    inside it the warning came (a fixed ``stacklevel`` pointed inside this module for most
    methods)."""
    level, frame = 1, sys._getframe(0)
    while frame.f_back is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    warnings.warn(f"bbox_lark.Writer: {message}", WriterWarning, stacklevel=level)


class CallHandle:
    """A call the Writer has been told about (:meth:`Writer.call`): give its result with
    :meth:`finish`, report progress with :meth:`progress`. Its line is written inline with
    the result when it finishes before anything else is written, else as an open call
    (``→ [running]``) that an ``o: id=… → result`` line completes."""

    def __init__(
        self,
        writer: Writer,
        kind: str,
        name: str | None,
        args: tuple[Any, ...],
        fields: dict[str, Any],
        markers: int = 0,
        name_markers: int = 0,
    ):
        self._writer = writer
        self.kind = kind
        self.name = name
        #: The arguments as written (redacted; a long one as its blob pointer).
        self.args = args
        #: The fields as written (``id`` among them).
        self.fields = fields
        #: The call's id (``id=`` on its line and on its ``o:`` line).
        self.id: str = fields["id"]
        self.written = False
        self.finished = False
        #: The markers the call's line holds (its name's among them).
        self.markers = markers
        #: The markers its name holds (a ``t~:`` progress line writes the name again).
        self.name_markers = name_markers

    def progress(self, text: str, **fields: Any) -> None:
        """A progress line for this call (``t~:name id=… "text"``)."""
        self._writer._progress(self, need_str(text, "progress() text"), fields)

    def finish(self, result: Any = None, **fields: Any) -> None:
        """The call's result: a :class:`~bbox_lark.Result`, a string (free text; longer than
        the threshold: a blob), an exception (``[err: Type: message]``), bytes (a blob), a
        :class:`~bbox_lark.BlobPointer`, a number or a bool (its text), a mapping or a list
        (JSON), or None (``[ok]``); any other type is a TypeError. ``fields``
        (``latency_ms=…``) go on the result's line. A second finish is ignored."""
        self._writer._finish(self, result, fields)

    def __enter__(self) -> CallHandle:
        return self

    def __exit__(self, kind: Any, error: BaseException | None, _tb: Any) -> None:
        """Leaving a ``with`` block finishes the call: with the exception that left it, or
        ``[ok]`` when nothing finished it before."""
        if not self.finished:
            self.finish(error if error is not None else None)


class Writer:
    """Writes a bbox/1 log line by line as a session runs (``docs/writing.md``).

    ``target`` is a path (created with the header; a file that already has content is
    appended to and its session continued: no second header, no second ``@start``), a text
    stream or a binary stream (the header is written first; the stream is flushed after
    every line). ``header`` maps header keys to values; it needs ``id`` and ``repo_sha``
    (non-empty), and ``format: bbox/1`` is added. ``@start`` is written after the header
    and ``@end`` at :meth:`close` unless ``start``/``end`` is False.

    ``redact``: secrets become ``[redacted:KIND]`` (header values too) and ``# redactions=N``
    is written at close. ``blobs``: the blob folder (default ``.bbox-blobs/`` beside a path
    target; a stream target without ``blobs`` keeps everything inline, bytes as text that
    reads back to the same bytes: :data:`_BYTES_INLINE`).
    ``blob_threshold``: results and arguments longer than this go to the blob store.
    ``auto_step``: every message and call gets ``step=N``, counting up. ``clock``: every
    event gets ``ts=`` and a ``# t=HH:MM:SS`` mark is written whenever ``mark_every``
    seconds have passed; give a function returning an aware datetime to control time
    (tests). ``fsync``: sync every line to disk.

    Raises ValueError when the header lacks ``id`` or ``repo_sha`` or is larger than bbox/1
    allows (64 KiB), TypeError for a header value of a type YAML cannot carry; the methods
    raise TypeError (naming the argument) for a value of the wrong type and ValueError for a
    name longer than :data:`MAX_NAME`. Text never raises (see :attr:`error` and
    :class:`WriterWarning` for failures to write).
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | IO[str] | IO[bytes],
        header: Mapping[str, Any],
        *,
        redact: bool = True,
        blobs: str | os.PathLike[str] | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        fsync: bool = False,
        auto_step: bool = False,
        clock: bool | Callable[[], datetime] = False,
        mark_every: float = 60.0,
        start: bool = True,
        end: bool = True,
        id_prefix: str = "call_",
    ) -> None:
        if not isinstance(header, Mapping):
            raise TypeError(f"header must be a mapping, not {typename(header)}")
        fields = {need_str(k, "a header key"): header_value(v, f"header[{k!r}]") for k, v in header.items()}
        for key in ("id", "repo_sha"):
            value = fields.get(key)
            if value is None or not str(value).strip():
                raise ValueError(f"a bbox header needs a non-empty {key!r} (got {value!r})")
        fields = {"format": fields.pop("format", "bbox/1"), **fields}
        self.redact = redact
        if redact:
            fields = {k: self._redacted_value(v) for k, v in fields.items()}
        head_text = self._head_text(fields)
        self.blob_threshold = blob_threshold
        self.fsync = fsync
        self.auto_step = auto_step
        self._clock: Callable[[], datetime] | None = (
            clock if callable(clock) else (_utc_now if clock else None)
        )
        self._mark_every = mark_every
        self._end = end
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._id_prefix = id_prefix
        self._used_ids: set[str] = set()
        self._step = 0
        self._open: list[CallHandle] = []
        self._started_at: datetime | None = None
        self._last_mark = -1.0
        self._mark_base = 0
        self._started = False
        self._ended = False
        self._warned_long = False
        #: How many ``[redacted:…]`` markers the body holds (of a file appended to: its
        #: markers too), counted from what the Writer writes: what ``# redactions=N`` states.
        self.redactions = 0
        #: The first failure to write (None while every line has been written).
        self.error: BaseException | None = None
        self.closed = False
        self._blob_failed = False
        self._stream: Any = None
        self._binary = False
        self._file: Any = None
        resumed: Resumed | None = None
        if isinstance(target, (str, os.PathLike)):
            self.path: Path | None = Path(target)
            self.name = str(self.path)
            try:
                appending = self.path.is_file() and self.path.stat().st_size > 0
            except OSError:
                appending = False
            if appending:
                resumed = resume(self.path)
            try:
                self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 (closed by close())
            except OSError as error:
                self._failed(error)
            default_blobs: Path | None = self.path.parent / FOLDER_NAME
        else:
            if not callable(getattr(target, "write", None)):
                raise TypeError(f"target must be a path or a writable stream, not {typename(target)}")
            self.path = None
            self.name = str(getattr(target, "name", None) or "<stream>")
            self._stream = target
            self._binary = is_binary(target)
            default_blobs = None
        folder = Path(blobs) if blobs is not None else default_blobs
        self.blobs: BlobStore | None = BlobStore(folder) if folder is not None else None
        if resumed is not None:
            self._used_ids |= resumed.ids
            self._step = resumed.step
            self._started = resumed.started
            self.redactions = resumed.markers
            self._mark_base = resumed.last_mark
            if resumed.cut:
                self._write("\n")  # the crash cut the last line: new lines start on their own
        else:
            self._write(head_text)
        if start and not self._started:
            self.lifecycle("start", id=str(fields["id"]))

    @staticmethod
    def _head_text(fields: dict[str, Any]) -> str:
        """The header's text; ValueError when bbox/1 cannot hold it (over 64 KiB)."""
        head = build.head(fields)
        text = "".join(line.raw + line.eol for line in head.header_lines)
        size = len(text.encode("utf-8", "surrogatepass")) - 8  # without the two fences
        if size > MAX_HEADER_BYTES:
            raise ValueError(
                f"the header is {size} bytes of YAML, over bbox/1's limit of {MAX_HEADER_BYTES}"
                " (E009): keep large values out of the header (a body line, a comment or a blob)"
            )
        return text

    # -- lines ---------------------------------------------------------------------------

    def user(self, text: str, **fields: Any) -> None:
        """``u: text``."""
        self._message("user", need_str(text, "user() text"), fields)

    def agent(self, text: str, **fields: Any) -> None:
        """``a: text``."""
        self._message("agent", need_str(text, "agent() text"), fields)

    def thinking(self, text: str, **fields: Any) -> None:
        """``th: text``."""
        self._message("thinking", need_str(text, "thinking() text"), fields)

    def todos(self, items: str | Iterable[tuple[str, str]] | Mapping[str, str], **fields: Any) -> None:
        """``td: [pending] Read auth [done] Fix``: ``items`` as (status, text) pairs, a
        mapping of text to status, or the line's text."""
        if isinstance(items, str):
            text = items
        else:
            if isinstance(items, Mapping):
                pairs = [(status, text) for text, status in items.items()]
            elif isinstance(items, Iterable) and not isinstance(items, (bytes, bytearray)):
                pairs = list(items)
            else:
                raise TypeError(f"todos() items must be a str, pairs or a mapping, not {typename(items)}")
            for n, pair in enumerate(pairs):
                if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
                    raise TypeError(
                        f"todos() item {n + 1} must be a (status, text) pair of str, not {pair!r}"
                    )
            text = " ".join(f"[{status}] {item}" for status, item in pairs)
        self._message("todos", text, fields)

    def call(self, tool: str, *args: Any, **fields: Any) -> CallHandle:
        """A tool call (``t:tool args… id=…``); see :class:`CallHandle`. ``id=`` is generated
        (unique in this Writer) unless given."""
        return self._call("tool", need_str(tool, "call() tool"), args, fields)

    def mcp(self, method: str, *args: Any, **fields: Any) -> CallHandle:
        """An MCP call (``c:server.method``)."""
        return self._call("mcp", need_str(method, "mcp() method"), args, fields)

    def subagent(self, kind: str, *args: Any, **fields: Any) -> CallHandle:
        """A subagent (``x:kind``); written as ``[launched]`` until it finishes."""
        return self._call("subagent", need_str(kind, "subagent() kind"), args, fields)

    def skill(self, name: str, *args: Any, **fields: Any) -> CallHandle:
        """A skill (``s:name``)."""
        return self._call("skill", need_str(name, "skill() name"), args, fields)

    def plan(self, action: str, *args: Any, **fields: Any) -> CallHandle:
        """A plan action (``p:action``)."""
        return self._call("plan", need_str(action, "plan() action"), args, fields)

    def question(self, *args: Any, **fields: Any) -> CallHandle:
        """A question to the user (``q:``); written as ``[pending]`` until it is answered."""
        return self._call("question", None, args, fields)

    def metrics(self, step: int | None = None, **usage: Any) -> None:
        """``# metrics step=N key=value …`` (``step`` defaults to the current auto step)."""
        if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
            raise TypeError(f"metrics() step must be an int or None, not {typename(step)}")
        with self._lock:
            if step is None and self.auto_step and self._step:
                step = self._step
            given = {"step": step, **usage} if step is not None else usage
            _, _, _, values, markers = self._prepare("metrics()", (), (), given)
            self._emit(lambda: build.comment("metrics", fields=values), markers=markers)

    def lifecycle(self, name: str, *args: Any, **fields: Any) -> None:
        """``@name args… fields…`` (``@checkpoint``, ``@phase explore``, …). ``@end`` is
        written once: ``lifecycle("end", …)`` writes what :meth:`close` would before it
        (the calls still waiting, ``# redactions=N``), and :meth:`close` then writes no
        second ``@end``."""
        need_str(name, "lifecycle() name")
        with self._lock:
            (name,) = self._scan([("", name)]) if self.redact else (name,)
            primitive = PRIMITIVE_UNSAFE.sub("-", name.lstrip("@")) or "notify"
            if not primitive[0].isalpha():
                primitive = "x" + primitive
            check_name(primitive, "lifecycle() name")
            if primitive == "end":
                self._end_session(args, fields)
            else:
                self._lifecycle(primitive, args, fields)

    def comment(self, text: str) -> None:
        """``# text``: a plain comment whose :func:`~bbox_lark.text_of` is ``text``. Text a
        comment cannot carry as written, and text that would make it a structured comment
        (``metrics …``, ``redactions=3``, ``t=00:01:00``, ``model: …``) or text that is one
        quoted string, is written text (``# "metrics cost_usd=5"``)."""
        need_str(text, "comment() text")
        with self._lock:
            (written,), (put,) = self._scan_counted([("", text)])
            stored = self._long_text(written)
            markers = markers_of(text, put, written) if stored is written else 0  # a pointer: none
            self._emit(lambda: plain_comment(stored), markers=markers)

    def blob(self, data: bytes | str, mime: str | None = None) -> BlobPointer | None:
        """Store ``data`` in the blob store and return its pointer (to pass as a result or an
        argument; ``mime`` defaults to ``application/octet-stream`` for bytes, ``text/plain``
        for text, which is stored as UTF-8 unredacted); None when there is no store or it
        cannot be written (reported once)."""
        if not isinstance(data, (bytes, bytearray, memoryview, str)):
            raise TypeError(f"blob() data must be bytes or a str, not {typename(data)}")
        if mime is not None:
            need_str(mime, "blob() mime")
        raw = data if isinstance(data, str) else bytes(data)
        with self._lock:
            stored = self._store(raw, mime or (TEXT if isinstance(data, str) else BINARY))
        if stored is None:
            return None
        return BlobPointer(stored.pointer, 0, 0, stored.sha256, str(stored.size), stored.mime)

    def close(self) -> None:
        """Write what is left: calls still open stay open (their line says ``[running]``),
        then ``# redactions=N`` (with ``redact``) and ``@end`` (unless ``lifecycle("end")``
        wrote them already). Closes a path target (a stream stays open). A second close
        does nothing."""
        with self._lock:
            if self.closed:
                return
            if not self._ended:
                if self._end:
                    self._end_session((), {})
                else:
                    self._flush_open()
                    self._state_count()
            self.closed = True
            if self._file is not None:
                try:
                    self._file.close()
                except OSError as error:
                    self._failed(error)

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- building --------------------------------------------------------------------------

    def _end_session(self, args: tuple[Any, ...], fields: dict[str, Any]) -> None:
        self._flush_open()
        self._state_count()
        self._lifecycle("end", args, fields)
        self._ended = True

    def _state_count(self) -> None:
        if self.redact:
            count = self.redactions
            self._emit(lambda: build.comment(f"redactions={count}"))

    def _lifecycle(self, primitive: str, args: tuple[Any, ...], fields: dict[str, Any]) -> None:
        _, _, values, pairs, markers = self._prepare("lifecycle()", (), args, fields)
        self._emit(
            lambda: build.lifecycle(primitive, values, fields=pairs),
            markers=markers,  # the primitive holds letters, digits, `_` and `-` only: no marker
            start=primitive == "start",
        )
        if primitive == "start":
            self._started = True

    def _message(self, kind: str, text: str, fields: dict[str, Any]) -> None:
        with self._lock:
            stamped = self._stamped(fields, step=True)
            (written,), (held,), _, pairs, markers = self._prepare(f"{METHODS[kind]}()", (text,), (), stamped)
            stored = self._long_text(written)
            if stored is written:  # else a blob pointer: no marker on the line
                markers += held
            self._emit(lambda: build.message(kind, stored, fields=pairs, exact=True), markers=markers)

    def _call(self, kind: str, name: str | None, args: tuple[Any, ...], fields: dict[str, Any]) -> CallHandle:
        what = f"{METHODS[kind]}()"
        with self._lock:
            given = fields.pop("id", None)
            call_id = scalar(given, f"{what} id") if given is not None else self._new_id()
            self._used_ids.add(call_id)
            stamped = self._stamped({"id": call_id, **fields}, step=True)
            texts = (name,) if name is not None else ()
            named, held, values, pairs, markers = self._prepare(what, texts, args, stamped)
            name_markers = 0
            if name is not None:
                written = NAME_UNSAFE.sub("_", named[0]) or "_"
                check_name(written, f"{what} name")
                # held counts the scanned name; the replaced characters change it only
                # when the caller's name held a marker already (values.markers_of)
                name_markers = held[0] if "[redacted:" not in name else count_markers(written)
                markers += name_markers
                name = written
            handle = CallHandle(self, kind, name, values, pairs, markers, name_markers)
            self._open.append(handle)
            return handle

    def _new_id(self) -> str:
        while True:
            candidate = f"{self._id_prefix}{next(self._ids)}"
            if candidate not in self._used_ids:
                return candidate

    def _call_node(self, handle: CallHandle, result: Result | None) -> Event:
        return build.call(handle.kind, handle.name, handle.args, fields=handle.fields, result=result)

    def _progress(self, handle: CallHandle, text: str, fields: dict[str, Any]) -> None:
        with self._lock:
            args = (text,) if text else ()
            _, _, values, pairs, markers = self._prepare("progress()", (), args, {"id": handle.id, **fields})
            make: Callable[[], Event]
            if handle.kind == "tool":
                make = lambda: build.call("tool_progress", handle.name, values, fields=pairs)  # noqa: E731
                markers += handle.name_markers
            else:
                make = lambda: build.observation(values, fields=pairs, result=build.result("running"))  # noqa: E731
            self._emit(make, markers=markers)

    def _finish(self, handle: CallHandle, result: Any, fields: dict[str, Any]) -> None:
        with self._lock:
            if handle.finished:
                return
            built, markers = self._result(result)
            _, _, _, extra, field_markers = self._prepare("finish()", (), (), fields)
            markers += field_markers
            handle.finished = True
            if not handle.written:
                # Its line is not written yet: the calls made before it go first (open), then
                # this one with its result; calls made after it wait for their own.
                before = self._open[: self._open.index(handle)]
                self._open.remove(handle)
                self._flush_open(before)
                handle.fields.update(extra)
                handle.written = True
                self._emit(
                    lambda: self._call_node(handle, built), markers=markers + handle.markers, flush=False
                )
                return
            pairs = {"id": handle.id, **extra}
            self._emit(lambda: build.observation(fields=pairs, result=built), markers=markers)

    def _flush_open(self, handles: list[CallHandle] | None = None) -> None:
        """Write the line of each call not yet written (``handles``, else every one), as an
        open call."""
        waiting = list(self._open) if handles is None else handles
        self._open = [h for h in self._open if h not in waiting]
        for handle in waiting:
            if handle.written:
                continue
            handle.written = True
            status = build.result(_OPEN_STATUS.get(handle.kind, "running"))
            self._emit(
                lambda h=handle, s=status: self._call_node(h, s),  # type: ignore[misc]
                markers=handle.markers,
                flush=False,
            )

    def _result(self, value: Any) -> tuple[Result, int]:
        """A call's result and the redaction markers it puts on the line."""
        if value is None:
            return build.result("ok"), 0
        if isinstance(value, Result):
            return value, count_markers(value.text)
        if isinstance(value, BlobPointer):
            size = int(value.size) if value.size and value.size.isdigit() else None
            return build.result("blob", sha256=value.sha256, size=size, mime=value.mime), 0
        if isinstance(value, BaseException):
            said = str(value)  # kept as it is (written text carries any whitespace)
            given = f"{typename(value)}: {said}" if said else typename(value)
            (written,), (put,) = self._scan_counted([("", given)])
            message = self._long_text(written)
            held = markers_of(given, put, written) if message is written else 0  # a pointer: none
            return build.result("error", message=message), held
        if isinstance(value, (bytes, bytearray, memoryview)):
            stored = self._store(bytes(value), BINARY)
            if stored is not None:
                return build.result("blob", sha256=stored.sha256, size=stored.size, mime=stored.mime), 0
            text = bytes(value).decode("utf-8", _BYTES_INLINE)
        elif isinstance(value, (Mapping, list, tuple)):
            text = as_json(value, "finish() result")
        else:
            text = scalar(value, "finish() result")
        (written,), (put,) = self._scan_counted([("", text)])
        if len(written) > self.blob_threshold or is_pointer(written):
            stored = self._store(written, TEXT)
            if stored is not None:
                return build.result("blob", sha256=stored.sha256, size=stored.size, mime=stored.mime), 0
        return build.result("text", text=written), markers_of(text, put, written)

    # -- values ------------------------------------------------------------------------------

    def _prepare(
        self, what: str, texts: tuple[str, ...], args: Iterable[Any], fields: Mapping[str, Any]
    ) -> tuple[tuple[str, ...], tuple[int, ...], tuple[Value, ...], dict[str, Value], int]:
        """A line's values as the Writer writes them: ``texts`` (a name, a message) and the
        arguments and field values type-checked (TypeError naming the one at fault),
        converted to text, scanned for secrets together, as the line shows them (a value
        after its key, an argument after the one before it), and each argument or field
        value longer than the threshold stored as a blob. Returns the texts and the markers
        each holds (the caller may still store one, or change a name's characters), the
        arguments and fields, and the markers the arguments and fields put on the line: all
        counted from the scan's matches (:func:`~bbox_lark.write.values.markers_of`)."""
        values: list[Value | Pointer] = []
        for n, arg in enumerate(args, 1):
            values.append(self._arg(arg, f"{what} argument {n}"))
        pairs: dict[str, Value | Pointer] = {}
        for key, value in fields.items():
            if value is None:
                continue
            pairs[self._key(key, pairs)] = self._arg(value, f"{what} field {key!r}", bytes_ok=True)
        # One scan over the line's texts, in the order the line shows them.
        parts: list[tuple[str, str]] = [("", t) for t in texts]
        for value in values:
            parts += [] if isinstance(value, Pointer) else parts_of("", value)
        for key, value in pairs.items():
            parts += [] if isinstance(value, Pointer) else parts_of(key + "=", value)
        written, put = self._scan_counted(parts)
        # each part as (the caller's text, as scanned, the markers the scan put in it)
        scanned = zip([text for _, text in parts], written, put, strict=True)
        out_texts: list[str] = []
        held: list[int] = []
        for given, text, n in (next(scanned) for _ in texts):
            out_texts.append(text)
            held.append(markers_of(given, n, text))
        markers = 0

        def kept(given: str, text: str, n: int, stored: str) -> str:
            """``stored`` (``text``, or the pointer it was stored as), counting its markers."""
            nonlocal markers
            if stored is text:  # a pointer holds no marker
                markers += markers_of(given, n, text)
            return stored

        def rebuilt(value: Value | Pointer) -> Value:
            if isinstance(value, Pointer):
                return str(value)
            if isinstance(value, tuple):
                # Items stay inline whatever their length; one that is exactly a pointer is
                # stored (see _offloaded).
                return tuple(
                    kept(given, item, n, self._offloaded(item) if is_pointer(item) else item)
                    for given, item, n in (next(scanned) for _ in value)
                )
            given, text, n = next(scanned)
            return kept(given, text, n, self._offloaded(text))

        out_values = tuple(rebuilt(v) for v in values)
        out_pairs = {key: rebuilt(v) for key, v in pairs.items()}
        return tuple(out_texts), tuple(held), out_values, out_pairs, markers

    def _arg(self, value: Any, what: str, *, bytes_ok: bool = True) -> Value | Pointer:
        if isinstance(value, BlobPointer):
            return Pointer(value.raw)
        if isinstance(value, (bytes, bytearray, memoryview)) and bytes_ok:
            stored = self._store(bytes(value), BINARY)
            if stored is not None:
                return Pointer(stored.pointer)
            return bytes(value).decode("utf-8", _BYTES_INLINE)  # lossless: see _BYTES_INLINE
        if isinstance(value, Mapping):
            return as_json(value, what)
        if isinstance(value, (list, tuple)):
            return tuple(scalar(item, f"{what} item {n}") for n, item in enumerate(value, 1))
        return scalar(value, what)

    def _key(self, key: Any, taken: Mapping[str, Any]) -> str:
        """A field key the grammar reads (a secret in it redacted, other characters replaced
        by ``_``), not yet taken."""
        safe = safe_key(need_str(key, "a field key"), self.redact)
        unique, n = safe, 2
        while unique in taken:
            unique, n = f"{safe}_{n}", n + 1
        return unique

    def _scan(self, parts: list[tuple[str, str]]) -> list[str]:
        """Each part's text with its secrets replaced, the parts scanned as one text
        (:func:`~bbox_lark.write.values.scanned`)."""
        return self._scan_counted(parts)[0]

    def _scan_counted(self, parts: list[tuple[str, str]]) -> tuple[list[str], list[int]]:
        """:meth:`_scan`'s texts and the markers the scan put in each
        (:func:`~bbox_lark.write.values.scan_counted`)."""
        if self.redact:
            return scan_counted(parts)
        return [text for _, text in parts], [0] * len(parts)

    def _redacted_value(self, value: Any) -> Any:
        """A header value with the secrets in its strings replaced."""
        if isinstance(value, str):
            return self._scan([("", value)])[0]
        if isinstance(value, list):
            return [self._redacted_value(v) for v in value]
        if isinstance(value, dict):
            return {k: self._redacted_value(v) for k, v in value.items()}
        return value

    def _offloaded(self, text: str) -> str:
        """``text``, or the pointer of the blob it was stored as when it is too long (or is
        itself exactly a blob pointer: written as is, it would point at a blob that is not
        there)."""
        if len(text) > self.blob_threshold or is_pointer(text):
            stored = self._store(text, TEXT)
            if stored is not None:
                return stored.pointer
        return text

    def _long_text(self, text: str) -> str:
        """A message, comment or error message, or the pointer of the blob it was stored as
        when its line would be longer than the line limit ``check`` applies by default."""
        if (len(text) * 8 <= LINE_ROOM or len(quote(text)) <= LINE_ROOM) and not is_pointer(text):
            return text
        stored = self._store(text, TEXT)
        return stored.pointer if stored is not None else text

    def _stamped(self, fields: dict[str, Any], *, step: bool) -> dict[str, Any]:
        stamped = dict(fields)
        if step and self.auto_step and "step" not in stamped:
            self._step += 1
            stamped["step"] = self._step
        elif "step" in stamped and isinstance(stamped["step"], int) and not isinstance(stamped["step"], bool):
            self._step = max(self._step, stamped["step"])
        if self._clock is not None and "ts" not in stamped:
            stamped["ts"] = self._clock().isoformat().replace("+00:00", "Z")
        return stamped

    def _store(self, data: bytes | str, mime: str | None) -> StoredBlob | None:
        if self.blobs is None:
            return None
        # Text is stored as UTF-8; a surrogate code point, which UTF-8 cannot hold, as the
        # three bytes `surrogatepass` writes, which text_of reads back (bbox_lark.syntax.text.blob_text).
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        try:
            return self.blobs.put(raw, mime)
        except OSError as error:
            if not self._blob_failed:
                self._blob_failed = True
                _warn(f"cannot write to the blob store {self.blobs.folder}: {error}; the data stays inline")
            return None

    # -- writing ---------------------------------------------------------------------------

    def _emit(
        self, make: Callable[[], Event], *, markers: int = 0, flush: bool = True, start: bool = False
    ) -> None:
        """Build one line and write it: first the lines of calls still waiting (``flush``),
        and a ``# t=`` mark when one is due (after the line, for ``@start``). ``markers``:
        the redaction markers the line holds (counted from the values it was built from)."""
        if self.closed:
            self._failed(RuntimeError("the Writer is closed"), f"a line after close() of {self.name}")
            return
        if flush and self._open:
            self._flush_open()
        if self._clock is not None and not start:
            self._mark()
        try:
            node = make()
        except ValueError as error:  # never expected: any text has a written form
            _warn(f"a line could not be built ({error}); please report this bug")
            node, markers = build.comment(f"writer: a line could not be built: {type(error).__name__}"), 0
        # The line its builder printed (a built node's raw), never printed again.
        text = node.raw if not node.continuation else emit(node)
        if len(text) > DEFAULT_MAX_LINE and not self._warned_long:
            self._warned_long = True
            _warn(
                f"a line of {len(text)} characters, over the line limit of {DEFAULT_MAX_LINE},"
                f" in {self.name} (no blob store to move its long values to)"
            )
        self.redactions += markers
        self._write(text + "\n")
        if self._clock is not None and start:
            self._mark()

    def _mark(self) -> None:
        assert self._clock is not None
        now = self._clock()
        if self._started_at is None:
            self._started_at = now
        elapsed = max(0.0, (now - self._started_at).total_seconds())
        if self._last_mark >= 0 and elapsed - self._last_mark < self._mark_every:
            return
        self._last_mark = elapsed
        seconds = self._mark_base + int(elapsed)
        text = f"# t={seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}\n"
        self._write(text)

    def _write(self, text: str) -> None:
        """Write ``text`` whole and flush it (a path: one unbuffered write loop; a stream:
        ``write`` then ``flush``), synced to disk with ``fsync``."""
        if self.error is not None:
            return
        try:
            if self._file is not None:
                view = memoryview(text.encode("utf-8", "surrogateescape"))
                while view:
                    written = self._file.write(view)
                    view = view[written:]
                if self.fsync:
                    os.fsync(self._file.fileno())
            elif self._stream is not None:
                stream = self._stream
                stream.write(text.encode("utf-8", "surrogateescape") if self._binary else text)
                stream.flush()
                if self.fsync:
                    self._sync(stream)
        except (OSError, ValueError, TypeError) as error:
            self._failed(error)

    @staticmethod
    def _sync(stream: Any) -> None:
        try:
            number = stream.fileno()
        except (OSError, ValueError, AttributeError):
            return  # no file underneath (io.StringIO): nothing to sync
        os.fsync(number)

    def _failed(self, error: BaseException, what: str | None = None) -> None:
        """Report a failure once; later lines are dropped."""
        if self.error is not None:
            return
        self.error = error
        where = what or self.name
        _warn(f"cannot write {where}: {error}; lines from here on are dropped")
