"""``bbox-lark report FILE --watch``: the page of a log that is still being written, served
on 127.0.0.1 and kept up to date (docs/report.md#live).

A :class:`Watcher` looks at the file every :data:`INTERVAL` seconds. When it grew, the page
is made again from its whole lines (a line being written, without its newline yet, waits);
when it shrank or another file took its name (rotation), it is read again from the start and
the page says so; a file that is gone, unreadable or that cannot be rendered leaves the last
page in place with a message. The server answers three paths: ``/`` (the page),
``/version`` (JSON: a number that changes with the page, the lines, the message) and
``/page`` (the page again, for the script to swap in). Nothing the file holds can stop it.
"""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["INTERVAL", "Watcher", "serve"]

#: Seconds between two looks at the file.
INTERVAL = 0.5


class Watcher:
    """The page of ``path`` as it grows (``from_``: its format, as ``convert`` names it)."""

    def __init__(
        self,
        path: str,
        *,
        from_: str | None = None,
        max_line: int | None = None,
        review: Any = None,
        keep_secrets: bool = False,
    ) -> None:
        self.path = path
        self.keep_secrets = keep_secrets
        self.review = review
        self.from_ = from_
        self.max_line = max_line
        self.version = 0
        self.lines = 0
        self.message: str | None = None
        self.page = ""
        self._lock = threading.Lock()
        self._identity: tuple[int, int] | None = None
        self._size = 0
        self._whole = b""

    def state(self) -> dict[str, Any]:
        with self._lock:
            return {"version": self.version, "lines": self.lines, "message": self.message}

    def current(self) -> str:
        with self._lock:
            return self.page

    def _say(self, message: str | None) -> None:
        with self._lock:
            if message != self.message:
                self.message = message
                self.version += 1

    def poll(self) -> None:
        """Look at the file once; make the page again when its whole lines changed."""
        try:
            self._poll()
        except Exception as error:  # whatever the file holds, the server stays up
            self._say(f"cannot show the file: {type(error).__name__}: {error}")

    def _poll(self) -> None:
        try:
            stat = os.stat(self.path)
            with open(self.path, "rb") as stream:
                data = stream.read()
        except FileNotFoundError:
            self._say(f"{self.path} is gone; waiting for it to come back")
            return
        except OSError as error:
            self._say(f"{self.path}: cannot read: {error.strerror or error}")
            return
        identity = (stat.st_dev, stat.st_ino)
        note: str | None = None
        if self._identity is not None and identity != self._identity:
            note = "the file was replaced (rotated): read again from the start"
        elif len(data) < self._size:
            note = "the file was truncated: read again from the start"
        elif self._whole and not data.startswith(self._whole):
            note = "the file changed above its end: read again from the start"
        self._identity, self._size = identity, len(data)
        cut = data.rfind(b"\n") + 1
        whole = data[:cut]
        if whole == self._whole and note is None:
            if self.version == 0:  # an empty file, or one line being written: a page all the same
                self._render(whole, None)
            return
        if b"\x00" in whole[len(self._whole) :] and note is None:
            note = "binary data (NUL bytes) was appended; it is shown escaped"
        self._whole = whole
        self._render(whole, note)

    def _render(self, whole: bytes, note: str | None) -> None:
        from bbox_lark.report import render
        from bbox_lark.syntax.source import DEFAULT_MAX_LINE

        out = io.StringIO()
        try:
            render(
                whole or b"---\nformat: bbox/1\n---\n",
                out,
                from_=self.from_,
                name=self.path,
                max_line=self.max_line or DEFAULT_MAX_LINE,
                live=True,
                review=self.review,
                keep_secrets=self.keep_secrets,
            )
        except Exception as error:  # a format that cannot be read yet (a cut JSON record …)
            self._say(f"cannot show the file as it is now: {error}")
            return
        with self._lock:
            self.page = out.getvalue()
            self.lines = whole.count(b"\n")
            self.message = note
            self.version += 1


class _Handler(BaseHTTPRequestHandler):
    watcher: Watcher

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("/", "/page", "/index.html"):
            self._send(200, "text/html; charset=utf-8", self.watcher.current().encode("utf-8"))
        elif path == "/version":
            self._send(200, "application/json", json.dumps(self.watcher.state()).encode("utf-8"))
        else:
            self._send(404, "text/plain; charset=utf-8", b"not found\n")

    def _send(self, status: int, kind: str, body: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the browser went away
            pass

    def log_message(self, format: str, *args: Any) -> None:
        return


def serve(
    path: str,
    *,
    port: int = 0,
    from_: str | None = None,
    max_line: int | None = None,
    on_ready: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
    review: Any = None,
    keep_secrets: bool = False,
) -> None:
    """Serve the live page of ``path`` on 127.0.0.1:``port`` (0: any free port) until
    ``stop`` is set or Ctrl-C; ``on_ready`` is given the page's address. Raises
    :class:`OSError` when the port cannot be had."""
    watcher = Watcher(path, from_=from_, max_line=max_line, review=review, keep_secrets=keep_secrets)
    watcher.poll()
    handler = type("Handler", (_Handler,), {"watcher": watcher})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    done = stop or threading.Event()

    def watch() -> None:
        while not done.wait(INTERVAL):
            watcher.poll()

    looker = threading.Thread(target=watch, name="bbox-lark-watch", daemon=True)
    looker.start()
    runner = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    runner.start()
    try:
        if on_ready is not None:
            on_ready(f"http://127.0.0.1:{server.server_address[1]}/")
        while not done.wait(0.5):
            pass
    except KeyboardInterrupt:  # Ctrl-C: stop cleanly
        pass
    finally:
        done.set()
        server.shutdown()
        server.server_close()
