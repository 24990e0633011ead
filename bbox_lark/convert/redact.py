"""``bbox-lark redact`` on a file in another format (docs/reference.md#secrets): a Claude Code session, an
ATIF trajectory, JSON Lines or a BB-7 chat is written back in its own format, each secret
replaced by ``[redacted:KIND]`` inside the JSON string that holds it and every other byte as
it was (no ``# redactions=N`` line: that is bbox's). A Lightbox chain is refused: each event
is hashed into the next, so editing one breaks the chain (convert it first, with
``--redact``).

Each JSON string value is found in the text as written (keys are left alone), decoded as a
reader would (:func:`json.loads`), scanned as decoded text (:func:`bbox_lark.secrets.scanner.find_secrets`:
escapes inside it too) and, when it held a secret, written again with :func:`json.dumps`
(ASCII-escaped when the original string was ASCII), so the file stays valid JSON whatever
the secret was next to. A string with a raw control character in it (not strict JSON) is
read as lenient readers read it. A provider key left in the text after that (in an object's
key, in a string that is not JSON, on a line that is not JSON) refuses the file: redacting in
place would carry it into the written file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

from bbox_lark._classes import dataclass
from bbox_lark.errors import WriteError
from bbox_lark.secrets.scanner import (
    SecretMatch,
    count_kinds,
    find_secrets,
    might_hold_secrets,
    redact_secrets,
)

#: The formats whose files ``redact`` rewrites in place (all JSON).
JSON_FORMATS = frozenset({"claude-code", "atif", "jsonl", "bb7"})
#: Formats ``redact`` refuses, and why.
REFUSED = {
    "lightbox": "a Lightbox chain is tamper-evident (each event is hashed into the next), so"
    " redacting it in place would break it; convert it with --redact instead"
    " (bbox-lark convert FILE --to lightbox --redact -o OUT)",
}

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_KEY_AFTER = re.compile(r"[ \t\r\n]*:")
_SURROGATE = re.compile("[\ud800-\udfff]")


class ForeignRedactError(WriteError):
    """The file cannot be redacted in its own format (the message says why)."""


@dataclass(frozen=True, slots=True)
class ForeignRedacted:
    """What :func:`redact_json` did."""

    text: str
    #: Each secret replaced, with the line and column (1-based) of the JSON string holding it.
    secrets: tuple[tuple[int, int, SecretMatch], ...] = ()

    @property
    def kinds(self) -> dict[str, int]:
        return count_kinds(secret for _, _, secret in self.secrets)

    @property
    def changed(self) -> bool:
        return bool(self.secrets)


def redact_json(text: str, *, allowed: Collection[str] = ()) -> ForeignRedacted:
    """``text`` (JSON or JSON Lines) with each secret inside a JSON string value replaced by
    ``[redacted:KIND]``; every byte outside the strings that held one is kept."""
    parts: list[str] = []
    found: list[tuple[int, int, SecretMatch]] = []
    at = 0
    line, counted = 1, 0  # the line of offset ``counted``
    for match in _STRING.finditer(text):
        token = match[0]
        if not might_hold_secrets(token) or _KEY_AFTER.match(text, match.end()):
            continue
        try:
            value = json.loads(token, strict=False)  # a raw tab or NUL, as lenient readers take it
        except ValueError:
            continue  # not JSON: the scan of what is left (below) refuses the file if it holds a key
        new, secrets = redact_secrets(value, allowed=allowed)
        if not secrets:
            continue
        line += text.count("\n", counted, match.start())
        counted = match.start()
        col = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
        found += [(line, col, secret) for secret in secrets]
        parts += [text[at : match.start()], _dumped(new, token)]
        at = match.end()
    parts.append(text[at:])
    done = "".join(parts)
    _refuse_what_is_left(done, allowed)
    return ForeignRedacted(done, tuple(found))  # ``text`` itself when nothing was found


def _dumped(value: str, token: str) -> str:
    """``value`` written again as a JSON string: ASCII-escaped when ``token`` (the string as it
    was) is ASCII; else as UTF-8, but with a surrogate that ``token`` held as an escape
    (``\\ud800``) escaped again: written raw, it could not be encoded (or would become an
    invalid byte). A surrogate held raw is an undecodable input byte, kept as it was."""
    if token.isascii():
        return json.dumps(value)
    written = json.dumps(value, ensure_ascii=False)
    raw = set(_SURROGATE.findall(token))
    return _SURROGATE.sub(lambda m: m[0] if m[0] in raw else f"\\u{ord(m[0]):04x}", written)


def _refuse_what_is_left(text: str, allowed: Collection[str]) -> None:
    """Raise :class:`ForeignRedactError` when ``text`` (redacted) still holds a provider
    credential: one in an object's key, in a string that is not valid JSON or in a line
    that is not JSON (where no string value holds it), which redacting in place would
    carry into the written file silently."""
    for number, line in enumerate(text.split("\n"), 1):
        if not might_hold_secrets(line):
            continue
        for secret in find_secrets(line, allowed_secrets=allowed):
            if secret.severity == "error":
                raise ForeignRedactError(
                    f"line {number}, column {secret.start + 1}: a {secret.kind} ({secret.masked}) outside"
                    " any JSON string value (an object's key, or text that is not valid JSON), which"
                    " redacting in place would keep; remove it first"
                )


def redact_foreign(text: str, fmt: str, *, allowed: Collection[str] = ()) -> ForeignRedacted:
    """``text``, a file in format ``fmt``, redacted in its own format; raises
    :class:`ForeignRedactError` for a format that cannot be (Lightbox, or one not JSON)."""
    if fmt in REFUSED:
        raise ForeignRedactError(REFUSED[fmt])
    if fmt not in JSON_FORMATS:
        raise ForeignRedactError(f"{fmt} files cannot be redacted in place; convert them with --redact")
    return redact_json(text, allowed=allowed)


def redact_path(path: str, fmt: str, *, allowed: Collection[str] = ()) -> tuple[str, ForeignRedacted]:
    """The file ``path`` (in format ``fmt``) as read, and redacted in its own format."""
    from bbox_lark.syntax.source import decode

    with open(path, "rb") as file:
        text = decode(file.read())
    return text, redact_foreign(text, fmt, allowed=allowed)
