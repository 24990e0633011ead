"""Writing a bbox/1 log as a session runs: :class:`Writer` (``docs/writing.md``).

The format's promise is "write as you go; the session can crash and you still have
everything up to that point". The Writer keeps it:

* **Any text.** Every string a harness hands over (a message, an argument, a field value, a
  result, an exception's message) is written so that it reads back exactly
  (:func:`bbox_lark.text_of`; ``docs/reference.md``, "Any text"). The Writer never raises on
  text.
* **Crash-safe.** Each line is built whole, written with one call and flushed (``fsync=True``
  also syncs it to disk), so a process killed at any moment leaves a file whose every
  complete line reads back; at worst the last line is cut. Nothing is held in memory but
  the calls still waiting for their result (their line is written as soon as anything else
  is).
* **Redacted.** With ``redact=True`` (the default) every secret the scanner finds
  (:mod:`bbox_lark.secrets`) becomes ``[redacted:KIND]`` before it is written, and the
  closing ``# redactions=N`` states how many markers the body holds.
* **Blobs.** Bytes, and results, arguments or field values longer than ``blob_threshold``
  characters, go to the blob store (``.bbox-blobs/`` beside the file); the line carries ``@blob sha256=…
  bytes=… mime=…``.
* **Thread-safe.** One lock serialises every line: tool calls may finish from several threads.
* **Errors.** A header without ``id`` or ``repo_sha`` is a :class:`ValueError` from the
  constructor, before anything is written: that is the only exception the Writer raises.
  A failure to write (disk full, a closed stream) is reported once, as a
  :class:`WriterWarning` naming the target, and kept in :attr:`Writer.error`; the lines
  written before it stay readable, later ones are dropped. Writing after :meth:`close` is
  reported the same way.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from bbox_lark import build
from bbox_lark.ast import BlobPointer, Event, Result
from bbox_lark.blobs import FOLDER_NAME, BlobStore, StoredBlob

#: Results and arguments longer than this many characters go to the blob store (4 KiB of
#: text: a screenful of tool output stays in the log, a whole file does not).
DEFAULT_BLOB_THRESHOLD = 4096

#: Bytes with no blob store to go to (a stream target without ``blobs=``) are written inline
#: as text, each byte that is not UTF-8 as a lone surrogate (``\\u{dcXX}`` in written text), so
#: ``text_of(...).encode("utf-8", "surrogateescape")`` gives the bytes back exactly.
_BYTES_INLINE = "surrogateescape"

#: The mime types of blobs the Writer makes from bytes and from text.
BINARY = "application/octet-stream"
TEXT = "text/plain"

#: The status a call's line is written with when it is written before its result: the call
#: is then open (docs/reference.md#correlation) until an ``o:`` line gives the result.
_OPEN_STATUS = {"subagent": "launched", "question": "pending"}

_NAME_UNSAFE = re.compile(r"[\s→\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class WriterWarning(UserWarning):
    """A line the Writer could not write (disk full, a closed stream, a closed Writer)."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class CallHandle:
    """A call the Writer has been told about (:meth:`Writer.call`): give its result with
    :meth:`finish`, report progress with :meth:`progress`. Its line is written inline with
    the result when it finishes before anything else is written, else as an open call
    (``→ [running]``) that an ``o: id=… → result`` line completes."""

    def __init__(
        self, writer: Writer, kind: str, name: str | None, args: tuple[Any, ...], fields: dict[str, Any]
    ):
        self._writer = writer
        self.kind = kind
        self.name = name
        self.args = args
        self.fields = fields
        #: The call's id (``id=`` on its line and on its ``o:`` line).
        self.id: str = fields["id"]
        self.written = False
        self.finished = False

    def progress(self, text: str, **fields: Any) -> None:
        """A progress line for this call (``t~:name id=… "text"``)."""
        self._writer._progress(self, text, fields)

    def finish(self, result: Any = None, **fields: Any) -> None:
        """The call's result: a :class:`~bbox_lark.Result`, a string (free text; longer than
        the threshold: a blob), an exception (``[err: Type: message]``), bytes (a blob), a
        :class:`~bbox_lark.BlobPointer`, or None (``[ok]``). ``fields`` (``latency_ms=…``)
        go on the result's line. A second finish is ignored."""
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
    appended to, without a second header, as after ``@rotate``) or a text stream (the header
    is written first). ``header`` maps header keys to values; it needs ``id`` and
    ``repo_sha`` (non-empty), and ``format: bbox/1`` is added. ``@start`` is written after the
    header and ``@end`` at :meth:`close` unless ``start``/``end`` is False.

    ``redact``: secrets become ``[redacted:KIND]`` (header values too) and ``# redactions=N``
    is written at close. ``blobs``: the blob folder (default ``.bbox-blobs/`` beside a path
    target; a stream target without ``blobs`` keeps everything inline, bytes as text that
    reads back to the same bytes: :data:`_BYTES_INLINE`).
    ``blob_threshold``: results and arguments longer than this go to the blob store.
    ``auto_step``: every message and call gets ``step=N``, counting up. ``clock``: every
    event gets ``ts=`` and a ``# t=HH:MM:SS`` mark is written whenever ``mark_every``
    seconds have passed; give a function returning an aware datetime to control time
    (tests). ``fsync``: sync every line to disk.

    Raises ValueError when the header lacks ``id`` or ``repo_sha``: the only exception the
    Writer raises (see :attr:`error` and :class:`WriterWarning` for the rest).
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | IO[str],
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
        fields = dict(header)
        for key in ("id", "repo_sha"):
            value = fields.get(key)
            if value is None or not str(value).strip():
                raise ValueError(f"a bbox header needs a non-empty {key!r} (got {value!r})")
        fields = {"format": fields.pop("format", "bbox/1"), **fields}
        self.redact = redact
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
        #: How many ``[redacted:…]`` markers the Writer has written in the body.
        self.redactions = 0
        #: The first failure to write (None while every line has been written).
        self.error: BaseException | None = None
        self.closed = False
        self._blob_failed = False
        self._stream: IO[str] | None = None
        self._file: Any = None
        if isinstance(target, (str, os.PathLike)):
            self.path: Path | None = Path(target)
            self.name = str(self.path)
            appending = self.path.is_file() and self.path.stat().st_size > 0
            try:
                self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 (closed by close())
            except OSError as error:
                self._failed(error)
            default_blobs: Path | None = self.path.parent / FOLDER_NAME
        else:
            self.path = None
            self.name = getattr(target, "name", None) or "<stream>"
            self._stream = target
            appending = False
            default_blobs = None
        folder = Path(blobs) if blobs is not None else default_blobs
        self.blobs: BlobStore | None = BlobStore(folder) if folder is not None else None
        if appending and self.path is not None:
            self._resume(self.path)
        if not appending:
            self._write_header(fields)
        if start:
            self.lifecycle("start", id=str(fields["id"]))

    def _resume(self, path: Path) -> None:
        """Before appending to ``path``: the call ids it already holds are taken (a new id never
        repeats one) and, with ``auto_step``, steps go on from its highest. Read as a stream;
        a file that cannot be read is appended to all the same (its ids are then unknown)."""
        from bbox_lark.parser import iter_nodes

        try:
            with open(path, "rb") as existing:
                for node in iter_nodes(existing):
                    if not isinstance(node, Event):
                        continue
                    call_id = node.fields.get("id")
                    if isinstance(call_id, str):
                        self._used_ids.add(call_id)
                    step = node.step
                    if isinstance(step, int):
                        self._step = max(self._step, step)
        except (OSError, ValueError):
            pass

    # -- lines ---------------------------------------------------------------------------

    def user(self, text: str, **fields: Any) -> None:
        """``u: text``."""
        self._message("user", text, fields)

    def agent(self, text: str, **fields: Any) -> None:
        """``a: text``."""
        self._message("agent", text, fields)

    def thinking(self, text: str, **fields: Any) -> None:
        """``th: text``."""
        self._message("thinking", text, fields)

    def todos(self, items: str | Iterable[tuple[str, str]] | Mapping[str, str], **fields: Any) -> None:
        """``td: [pending] Read auth [done] Fix``: ``items`` as (status, text) pairs, a
        mapping of text to status, or the line's text."""
        if isinstance(items, Mapping):
            items = [(status, text) for text, status in items.items()]
        text = items if isinstance(items, str) else " ".join(f"[{status}] {text}" for status, text in items)
        self._message("todos", text, fields)

    def call(self, tool: str, *args: Any, **fields: Any) -> CallHandle:
        """A tool call (``t:tool args… id=…``); see :class:`CallHandle`. ``id=`` is generated
        (unique in this Writer) unless given."""
        return self._call("tool", tool, args, fields)

    def mcp(self, method: str, *args: Any, **fields: Any) -> CallHandle:
        """An MCP call (``c:server.method``)."""
        return self._call("mcp", method, args, fields)

    def subagent(self, kind: str, *args: Any, **fields: Any) -> CallHandle:
        """A subagent (``x:kind``); written as ``[launched]`` until it finishes."""
        return self._call("subagent", kind, args, fields)

    def skill(self, name: str, *args: Any, **fields: Any) -> CallHandle:
        """A skill (``s:name``)."""
        return self._call("skill", name, args, fields)

    def plan(self, action: str, *args: Any, **fields: Any) -> CallHandle:
        """A plan action (``p:action``)."""
        return self._call("plan", action, args, fields)

    def question(self, *args: Any, **fields: Any) -> CallHandle:
        """A question to the user (``q:``); written as ``[pending]`` until it is answered."""
        return self._call("question", None, args, fields)

    def metrics(self, step: int | None = None, **usage: Any) -> None:
        """``# metrics step=N key=value …`` (``step`` defaults to the current auto step)."""
        if step is None and self.auto_step and self._step:
            step = self._step
        fields = {"step": step, **usage} if step is not None else usage
        with self._lock:
            self._emit(lambda: build.comment("metrics", fields=self._fields(fields)))

    def lifecycle(self, name: str, *args: Any, **fields: Any) -> None:
        """``@name args… fields…`` (``@checkpoint``, ``@phase explore``, …)."""
        primitive = _KEY_UNSAFE.sub("-", name.lstrip("@")) or "notify"
        if not primitive[0].isalpha():
            primitive = "x" + primitive
        with self._lock:
            self._emit(lambda: build.lifecycle(primitive, self._args(args), fields=self._fields(fields)))

    def comment(self, text: str) -> None:
        """``# text``; text a comment cannot carry as written is written text."""
        from bbox_lark.scan import UNWRITABLE, quote

        with self._lock:
            text = self._redacted(text)

            def make() -> Event:
                if "\n" not in text and not UNWRITABLE.search(text) and text == text.strip():
                    try:
                        return build.comment(text)
                    except ValueError:
                        pass
                return build.comment(quote(text))

            self._emit(make)

    def blob(self, data: bytes | str, mime: str | None = None) -> BlobPointer | None:
        """Store ``data`` in the blob store and return its pointer (to pass as a result or an
        argument; ``mime`` defaults to ``application/octet-stream`` for bytes, ``text/plain``
        for text, which is stored as UTF-8 unredacted); None when there is no store or it
        cannot be written (reported once)."""
        with self._lock:
            stored = self._store(data, mime or (TEXT if isinstance(data, str) else BINARY))
        if stored is None:
            return None
        return BlobPointer(stored.pointer, 0, 0, stored.sha256, str(stored.size), stored.mime)

    def close(self) -> None:
        """Write what is left: calls still open stay open (their line says ``[running]``),
        then ``# redactions=N`` (with ``redact``) and ``@end``. Closes a path target (a
        stream stays open). A second close does nothing."""
        with self._lock:
            if self.closed:
                return
            self._flush_open()
            if self.redact:
                count = self.redactions
                self._emit(lambda: build.comment(f"redactions={count}"))
            if self._end:
                self.lifecycle("end")
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

    def _message(self, kind: str, text: str, fields: dict[str, Any]) -> None:
        with self._lock:
            text = self._redacted(text)
            stamped = self._stamped(fields, step=True)
            self._emit(lambda: build.message(kind, text, fields=self._fields(stamped), exact=True))

    def _call(self, kind: str, name: str | None, args: tuple[Any, ...], fields: dict[str, Any]) -> CallHandle:
        with self._lock:
            given = fields.pop("id", None)
            call_id = str(given) if given is not None else self._new_id()
            self._used_ids.add(call_id)
            clean = self._stamped({"id": call_id, **fields}, step=True)
            if name is not None:
                name = _NAME_UNSAFE.sub("_", name) or "_"
            handle = CallHandle(self, kind, name, self._args(args), clean)
            self._open.append(handle)
            return handle

    def _new_id(self) -> str:
        while True:
            candidate = f"{self._id_prefix}{next(self._ids)}"
            if candidate not in self._used_ids:
                return candidate

    def _call_node(self, handle: CallHandle, result: Result | None) -> Event:
        return build.call(
            handle.kind, handle.name, handle.args, fields=self._fields(handle.fields), result=result
        )

    def _progress(self, handle: CallHandle, text: str, fields: dict[str, Any]) -> None:
        with self._lock:
            text = self._redacted(text)
            args = (text,) if text else ()
            pairs = self._fields({"id": handle.id, **fields})
            if handle.kind == "tool":
                self._emit(lambda: build.call("tool_progress", handle.name, args, fields=pairs))
            else:
                self._emit(lambda: build.observation(args, fields=pairs, result=build.result("running")))

    def _finish(self, handle: CallHandle, result: Any, fields: dict[str, Any]) -> None:
        with self._lock:
            if handle.finished:
                return
            handle.finished = True
            built = self._result(result)
            extra = self._fields(fields)
            if not handle.written:
                # Its line is not written yet: the calls made before it go first (open), then
                # this one with its result; calls made after it wait for their own.
                before = self._open[: self._open.index(handle)]
                self._open.remove(handle)
                self._flush_open(before)
                handle.fields.update(extra)
                handle.written = True
                self._emit(lambda: self._call_node(handle, built), flush=False)
                return
            self._emit(lambda: build.observation(fields={"id": handle.id, **extra}, result=built))

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
            self._emit(lambda h=handle, s=status: self._call_node(h, s), flush=False)  # type: ignore[misc]

    def _result(self, value: Any) -> Result:
        if value is None:
            return build.result("ok")
        if isinstance(value, Result):
            return value
        if isinstance(value, BlobPointer):
            size = int(value.size) if value.size and value.size.isdigit() else None
            return build.result("blob", sha256=value.sha256, size=size, mime=value.mime)
        if isinstance(value, BaseException):
            said = str(value)  # kept as it is (written text carries any whitespace)
            message = self._redacted(f"{type(value).__name__}: {said}" if said else type(value).__name__)
            return build.result("error", message=message)
        if isinstance(value, (bytes, bytearray, memoryview)):
            stored = self._store(bytes(value), BINARY)
            if stored is not None:
                return build.result("blob", sha256=stored.sha256, size=stored.size, mime=stored.mime)
            value = bytes(value).decode("utf-8", "surrogateescape")  # lossless: see _BYTES_INLINE
        text = self._redacted(str(value))
        if len(text) > self.blob_threshold:
            stored = self._store(text, TEXT)
            if stored is not None:
                return build.result("blob", sha256=stored.sha256, size=stored.size, mime=stored.mime)
        return build.result("text", text=text)

    def _args(self, args: Iterable[Any]) -> tuple[Any, ...]:
        out: list[Any] = []
        for value in args:
            if isinstance(value, BlobPointer):
                out.append(value.raw)
            elif isinstance(value, (bytes, bytearray, memoryview)):
                stored = self._store(bytes(value), BINARY)
                inline = bytes(value).decode("utf-8", "surrogateescape")  # lossless: see _BYTES_INLINE
                out.append(stored.pointer if stored is not None else inline)
            elif isinstance(value, (list, tuple)):
                out.append(tuple(self._redacted(str(v)) for v in value))
            else:
                out.append(self._offloaded(self._redacted(str(value))))
        return tuple(out)

    def _offloaded(self, text: str) -> str:
        """``text``, or the pointer of the blob it was stored as when it is too long."""
        if len(text) > self.blob_threshold:
            stored = self._store(text, TEXT)
            if stored is not None:
                return stored.pointer
        return text

    def _fields(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Fields with safe keys and redacted values; None values are left out."""
        out: dict[str, Any] = {}
        for key, value in fields.items():
            if value is None:
                continue
            safe = _KEY_UNSAFE.sub("_", str(key)) or "_"
            if not (safe[0].isalpha() or safe[0] == "_"):
                safe = "_" + safe
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, BlobPointer):
                value = value.raw
            elif isinstance(value, (list, tuple)):
                value = tuple(self._redacted(str(v)) for v in value)
            elif not isinstance(value, (int, float)):
                value = self._offloaded(self._redacted(str(value)))
            out[safe] = value
        return out

    def _stamped(self, fields: dict[str, Any], *, step: bool) -> dict[str, Any]:
        stamped = dict(fields)
        if step and self.auto_step and "step" not in stamped:
            self._step += 1
            stamped["step"] = self._step
        elif "step" in stamped and isinstance(stamped["step"], int):
            self._step = max(self._step, stamped["step"])
        if self._clock is not None and "ts" not in stamped:
            stamped["ts"] = self._clock().isoformat().replace("+00:00", "Z")
        return stamped

    def _redacted(self, text: str) -> str:
        if not self.redact or not text:
            return text
        from bbox_lark.secrets import redact_secrets

        return redact_secrets(text)[0]

    def _store(self, data: bytes | str, mime: str | None) -> StoredBlob | None:
        if self.blobs is None:
            return None
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        try:
            return self.blobs.put(raw, mime)
        except OSError as error:
            if not self._blob_failed:
                self._blob_failed = True
                warnings.warn(
                    f"bbox_lark.Writer: cannot write to the blob store {self.blobs.folder}: {error};"
                    " the data stays inline",
                    WriterWarning,
                    stacklevel=4,
                )
            return None

    # -- writing ---------------------------------------------------------------------------

    def _write_header(self, fields: dict[str, Any]) -> None:
        if self.redact:
            fields = {k: self._redacted(v) if isinstance(v, str) else v for k, v in fields.items()}
        try:
            head = build.head(fields)
        except Exception as error:  # a value YAML cannot write: keep the required keys
            self._failed(error, f"header of {self.name}")
            head = build.head({k: str(fields[k]) for k in ("format", "id", "repo_sha")})
        self._write("".join(line.raw + line.eol for line in head.header_lines))

    def _emit(self, make: Callable[[], Event], *, flush: bool = True) -> None:
        """Build one line and write it: first the lines of calls still waiting (``flush``),
        and a ``# t=`` mark when one is due."""
        if self.closed:
            self._failed(RuntimeError("the Writer is closed"), f"a line after close() of {self.name}")
            return
        if flush and self._open:
            self._flush_open()
        if self._clock is not None:
            self._mark()
        try:
            node = make()
        except ValueError as error:  # never expected: any text has a written form
            node = build.comment(f"writer: a line could not be built: {type(error).__name__}")
        from bbox_lark.printer import emit
        from bbox_lark.scan import find_redactions

        text = emit(node)
        self.redactions += len(find_redactions(text, 0)) if node.name != "redactions" else 0
        self._write(text + "\n")

    def _mark(self) -> None:
        assert self._clock is not None
        now = self._clock()
        if self._started_at is None:
            self._started_at = now
        elapsed = max(0.0, (now - self._started_at).total_seconds())
        if self._last_mark >= 0 and elapsed - self._last_mark < self._mark_every:
            return
        self._last_mark = elapsed
        seconds = int(elapsed)
        text = f"# t={seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}\n"
        self._write(text)

    def _write(self, text: str) -> None:
        if self.error is not None:
            return
        data = text.encode("utf-8", "surrogateescape")
        try:
            if self._file is not None:
                view = memoryview(data)
                while view:
                    written = self._file.write(view)
                    view = view[written:]
                if self.fsync:
                    os.fsync(self._file.fileno())
            elif self._stream is not None:
                self._stream.write(text)
                self._stream.flush()
                if self.fsync and hasattr(self._stream, "fileno"):
                    os.fsync(self._stream.fileno())
        except (OSError, ValueError) as error:
            self._failed(error)

    def _failed(self, error: BaseException, what: str | None = None) -> None:
        """Report a failure once; later lines are dropped."""
        if self.error is not None:
            return
        self.error = error
        where = what or self.name
        warnings.warn(
            f"bbox_lark.Writer: cannot write {where}: {error}; lines from here on are dropped",
            WriterWarning,
            stacklevel=4,
        )
