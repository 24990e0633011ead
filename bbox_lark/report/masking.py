"""The report shows no secret unless asked (docs/reference.md#secrets, "Nothing made for others"):
the session is masked before the page is rendered, and the page says so.

:func:`masked_copy` gives the page a copy of the session's bbox form with every secret
starred out (``•``) but for its provider prefix and last characters
(:func:`bbox_lark.secrets.scanner.hide_secrets`: the same length and the same lines, so every line
number and column on the page is still the source's). :class:`Banner` puts one line at the
top of the page's body naming what was masked (kind, line, masked form; never a key) and how
to see it (``--keep-secrets``).
"""

from __future__ import annotations

import contextlib
import html
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from bbox_lark.secrets.redaction import PartRedactor, locate, text_parts
from bbox_lark.secrets.scanner import SecretMatch, hide_secrets, might_hold_secrets


@contextlib.contextmanager
def masked_copy(path: Path, allowed: tuple[str, ...] = ()) -> Iterator[tuple[Path, list[str]]]:
    """``path`` itself and no note when it holds no secret; else a temporary copy with each
    secret starred out (removed afterwards) and one note per secret (``line 8:
    anthropic_key sk-ant-…4R``)."""
    if not _may_hold_secrets(path):  # the usual case, read line by line: the page streams
        yield path, []
        return
    # Read a part at a time (the header, an event with its continuation lines), as redact does.
    redactor = PartRedactor(allowed)
    notes: list[str] = []
    handle, name = tempfile.mkstemp(suffix=".bbox", prefix="bbox-lark-masked-")
    try:
        with os.fdopen(handle, "wb") as file, path.open("rb") as source:
            for part in text_parts(source):
                found = redactor.find(part.text)
                for line, _, secret in locate(part.text, found):
                    notes.append(f"line {part.line + line - 1}: {secret.kind} {secret.masked}")
                file.write(_hidden(part.text, found).encode("utf-8", "surrogateescape"))
        yield (Path(name), notes) if notes else (path, [])
    finally:
        Path(name).unlink(missing_ok=True)


def _may_hold_secrets(path: Path) -> bool:
    """The prefilter over each line of ``path``, and over each line joined to the one before
    (a hint wrapped onto a continuation line)."""
    tail = ""  # the last line's trailing run of key characters
    with path.open("rb") as file:
        for raw in file:
            line = raw.decode("utf-8", "surrogateescape")
            if might_hold_secrets(line):
                return True
            if tail and line[:1] in " \t":
                head = _HEAD.match(line)
                if head is not None and might_hold_secrets(tail + head[1]):
                    return True
            tail = _TAIL.search(line.rstrip("\r\n"))[0]  # type: ignore[index]
    return False


_TAIL = re.compile(r"[A-Za-z0-9_\-]{0,200}$")
_HEAD = re.compile(r"(?:  |\t)([A-Za-z0-9_\-]{1,200})")


def _hidden(text: str, found: list[SecretMatch]) -> str:
    """``text`` with each secret starred out, with ``•`` (a header value that starts with
    ``*`` would read as a YAML alias)."""
    hidden = hide_secrets(text)
    parts = []
    at = 0
    for secret in found:
        parts += [hidden[at : secret.start], hidden[secret.start : secret.end].replace("*", "•")]
        at = secret.end
    parts.append(hidden[at:])
    return "".join(parts)


class Banner:
    """A text stream that writes through to ``out`` and puts the masking banner right after
    the page's ``<body>`` tag."""

    def __init__(self, out: TextIO, notes: list[str]) -> None:
        self.out = out
        self.notes = notes
        self.pending = ""
        self.done = False

    def write(self, text: str) -> int:
        if self.done:
            return self.out.write(text)
        self.pending += text
        at = self.pending.find("<body")
        end = self.pending.find(">", at) if at >= 0 else -1
        if end >= 0:
            self.out.write(self.pending[: end + 1] + "\n" + banner(self.notes))
            self.out.write(self.pending[end + 1 :])
            self.pending = ""
            self.done = True
        return len(text)

    def flush(self) -> None:
        if self.pending:  # a page without a body tag: the banner goes first
            self.out.write(banner(self.notes) + self.pending)
            self.pending = ""
            self.done = True
        self.out.flush()


def banner(notes: list[str]) -> str:
    """The banner's HTML: how many secrets are masked, each named (never whole)."""
    items = "".join(f"<li>{html.escape(note)}</li>" for note in notes)
    return (
        # Styled by the page's stylesheet (.secrets-masked): its CSP allows no style attribute.
        '<div class="secrets-masked" role="alert">'
        f"<strong>{len(notes)} secret(s) masked on this page</strong> (shown as <code>sk-ant-••••…AA</code>;"
        " <code>bbox-lark report --keep-secrets</code> shows them as the log has them):"
        f"<ul>{items}</ul></div>\n"
    )
