"""Redacting the secrets of a bbox/1 text (docs/reference.md#secrets): ``bbox_lark.redact``, the
``redact`` fixer (``bbox-lark redact``, ``fix --redact``) and ``convert --redact``.

The text is scanned a part at a time (:func:`text_parts`): the header, then each body event
with the continuation and blank lines after it, so a long log is redacted as it is read and
the parts are those the checks scan. Each secret
:func:`bbox_lark.secrets.scanner.find_secrets` finds in a part becomes ``[redacted:KIND]``;
only the secret is replaced, so a line keeps its kind, name and other
fields. A private key block over continuation lines is one secret, so it becomes one marker
on its first line (its continuation lines go). A secret that is a whole header value
becomes a quoted marker (``key: "[redacted:github_token]"``): YAML would read a bare
``[...]`` as a list. ``# redactions=N`` stays true: every comment that states the count
(``# redactions=N``, the closing summary's ``redactions=``) gets the new number of body
markers, and a text that states none gets a ``# redactions=N`` line as its first body line.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bbox_lark._classes import dataclass
from bbox_lark._renamed import renamed
from bbox_lark.secrets.scanner import (
    SecretMatch,
    count_kinds,
    find_secrets,
    marker,
    might_hold_secrets,
    replace_secrets,
)
from bbox_lark.syntax import build
from bbox_lark.syntax.nodes import Continuation, Event, Field, Line
from bbox_lark.syntax.parser import Head, reparse

if TYPE_CHECKING:
    from bbox_lark.convert.base import Fidelity, Item

BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Redacted:
    """What :func:`redact` did."""

    #: The redacted text.
    text: str
    #: The secrets replaced, with offsets into the input text.
    secrets: tuple[SecretMatch, ...] = ()

    @property
    def kinds(self) -> dict[str, int]:
        """How many secrets of each kind were replaced, kinds sorted."""
        return count_kinds(self.secrets)

    @property
    def changed(self) -> bool:
        return bool(self.secrets)


@renamed(text="source", allowed="allowed_secrets")
def redact(source: str, *, allowed_secrets: Collection[str] = ()) -> Redacted:
    """``source`` (a bbox/1 document) with every secret replaced by ``[redacted:KIND]`` and
    ``# redactions=N`` kept true (see the module's notes); values in ``allowed_secrets`` (the
    ``allowed-secrets`` setting) are kept. Never raises on text; a text without secrets comes
    back unchanged. Redacting again changes nothing."""
    redactor = PartRedactor(allowed_secrets)
    parts: list[str] = []
    found: list[SecretMatch] = []
    at = 0
    for part in text_parts(source):
        new, secrets = redactor.part(part)
        parts.append(new)
        found.extend(replace(s, start=s.start + at, end=s.end + at) for s in secrets)
        at += len(part.text)
    if not found:
        return Redacted(source)
    return Redacted(_keep_count_true("".join(parts)), tuple(found))


@dataclass(frozen=True, slots=True)
class TextPart:
    """A part of a bbox/1 text the scanner reads on its own (:func:`text_parts`)."""

    #: The part's text, line endings included (the header's with the byte order mark).
    text: str
    #: The line its text starts on (1-based).
    line: int
    #: The header (and byte order mark), which may be empty: its values are YAML.
    header: bool = False


def text_parts(source: object, *, max_line: int | None = None) -> Iterator[TextPart]:
    """``source`` (anything :func:`~bbox_lark.syntax.parser.iter_nodes` reads) in the parts the
    secrets are found in, in order, their texts joined the whole text: the header with the
    byte order mark (always, even empty), then each body event with the continuation and
    blank lines that follow it (lines before the first event make a part of their own).
    Only one part is held at a time, and no node is built: the parts are read from the
    records ``check`` reads (:func:`~bbox_lark.syntax.record.iter_records`)."""
    from bbox_lark.syntax.record import Record, iter_records
    from bbox_lark.syntax.source import DEFAULT_MAX_LINE

    stream = iter_records(source, max_line=max_line or DEFAULT_MAX_LINE)  # type: ignore[arg-type]
    head = next(stream)
    assert isinstance(head, Head)
    yield TextPart(
        (BOM if head.bom else "") + "".join(line.raw + line.eol for line in head.header_lines), 1, True
    )
    lines: list[str] = []
    first = head.body_start
    for record in stream:
        assert isinstance(record, Record)
        if record.is_event and lines:  # an event, comment, lifecycle or unknown line
            yield TextPart("".join(lines), first)
            lines = []
        if not lines:
            first = record.line
        lines.append(record.raw + record.eol)
    if lines:
        yield TextPart("".join(lines), first)


class PartRedactor:
    """Find and replace the secrets of one :class:`TextPart` at a time (what :func:`redact`
    and ``fix --redact`` share): a secret that is a whole header value becomes a quoted
    marker; values in ``allowed_secrets`` are kept."""

    def __init__(self, allowed_secrets: Collection[str] = ()) -> None:
        self.allowed = frozenset(allowed_secrets)

    def find(self, text: str) -> list[SecretMatch]:
        """The secrets of one part's text."""
        if not might_hold_secrets(text):
            return []
        return find_secrets(text, allowed_secrets=self.allowed)

    def part(self, part: TextPart) -> tuple[str, list[SecretMatch]]:
        """The part's text redacted, and the secrets replaced (offsets into the part)."""
        found = self.find(part.text)
        if not found:
            return part.text, found
        return _replace(part.text, found, len(part.text) if part.header else 0), found


def _starts_yaml_value(text: str, offset: int) -> bool:
    """Whether ``offset`` starts a bare YAML value (after ``key:`` or ``-`` on its line)."""
    line_start = text.rfind("\n", 0, offset) + 1
    return re.fullmatch(r"\ufeff?[ \t]*(?:[^\s:#][^:#]*:|-)[ \t]+", text[line_start:offset]) is not None


def _line_offsets(text: str, last: int) -> dict[int, int]:
    """The offset of each line 1..``last`` (only ``\\n`` ends a line, as for the parser; line
    1 starts after a byte order mark); a line past the end starts at the end."""
    offsets = {1: 1 if text.startswith(BOM) else 0}
    at = 0
    for number in range(2, last + 1):
        found = text.find("\n", at)
        at = len(text) if found < 0 else found + 1
        offsets[number] = at
    return offsets


def states_count(node: Line) -> Field | None:
    """The ``redactions=`` field of a comment that states the count (``# redactions=N``, the
    closing summary: the structured comments with fields), else None."""
    from bbox_lark.syntax.grammar import vocabulary

    if (
        isinstance(node, Event)
        and node.kind == "comment"
        and "redactions" in node.fields
        and node.name in vocabulary().field_comment_kinds
    ):
        return next((f for f in node.field_nodes if f.key == "redactions"), None)
    return None


def _keep_count_true(text: str) -> str:
    """``text`` with every stated redaction count set to its number of body markers, or a
    ``# redactions=N`` line inserted first in the body when none is stated."""
    from bbox_lark.syntax.parser import iter_nodes
    from bbox_lark.syntax.scan import line_redactions

    stream = iter_nodes(text, attach=False)
    head = next(stream)
    assert isinstance(head, Head)
    count = 0
    stated: list[tuple[int, Field]] = []
    for node in _lines(stream):
        if "[redacted:" in node.raw:
            count += sum(1 for _ in line_redactions(node))
        field = states_count(node)
        if field is not None:
            stated.append((node.line, field))
    if not stated:
        at = _line_offsets(text, head.body_start)[head.body_start]
        eol = "\r\n" if "\r\n" in text[: text.find("\n") + 1] else "\n"
        if at == len(text) and text and not text.endswith("\n"):
            return f"{text}{eol}# redactions={count}{eol}"
        return f"{text[:at]}# redactions={count}{eol}{text[at:]}"
    offsets = _line_offsets(text, max(line for line, _ in stated))
    for line, field in reversed(stated):
        start = offsets[line] + field.value_col - 1
        text = text[:start] + str(count) + text[start + len(field.raw_value) :]
    return text


def _lines(stream: Iterator[object]) -> Iterator[Line]:
    for node in stream:
        if isinstance(node, (Event, Continuation)):
            yield node


def line_kinds(text: str) -> list[str]:
    """The kind of every body line but continuations and the comments that state a count, in
    order: what redacting must not change."""
    from bbox_lark.syntax.parser import iter_nodes

    stream = iter_nodes(text, attach=False)
    next(stream)
    return part_kinds(list(stream))


def part_kinds(lines: Iterable[object]) -> list[str]:
    """:func:`line_kinds` of nodes already read (a part's, :class:`PartRedactor`)."""
    return [node.kind for node in lines if isinstance(node, Event) and states_count(node) is None]


def locate(text: str, secrets: Iterable[SecretMatch]) -> list[tuple[int, int, SecretMatch]]:
    """Each secret with its line and column (1-based, as the parser counts them: only
    ``\n`` ends a line, a byte order mark is not a column)."""
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    bom = 1 if text.startswith(BOM) else 0
    out = []
    for secret in secrets:
        index = bisect.bisect_right(starts, secret.start) - 1
        col = secret.start - starts[index] + 1 - (bom if index == 0 else 0)
        out.append((index + 1, col, secret))
    return out


def listing(data: str | bytes, shown: str, *, allowed: Collection[str] = ()) -> list[str]:
    """:func:`iter_listing` as a list."""
    return list(iter_listing(data, shown, allowed=allowed))


def iter_listing(data: object, shown: str, *, allowed: Collection[str] = ()) -> Iterator[str]:
    """``redact --list``: one line per secret (``path:line:col: kind masked``), then the
    count per kind (``path: 3 secrets: aws_access_key 1, github_token 2``). ``data`` is the
    text, its bytes or an open binary file, read a part at a time (:func:`text_parts`)."""
    redactor = PartRedactor(allowed)
    kinds: dict[str, int] = {}
    total = 0
    for part in text_parts(data):
        found = redactor.find(part.text)
        for line, col, s in locate(part.text, found):
            yield f"{shown}:{part.line + line - 1}:{col}: {s.kind} {s.masked}"
            kinds[s.kind] = kinds.get(s.kind, 0) + 1
        total += len(found)
    counted = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))
    yield f"{shown}: {total} secret(s)" + (f": {counted}" if counted else "")


def redact_file_settings(path: Path | None) -> tuple[str, ...]:
    """The ``allowed-secrets`` of the configuration that applies to ``path`` (none for
    standard input or a configuration that cannot be read)."""
    if path is None:
        return ()
    from bbox_lark.files.config import ConfigError, Resolver

    try:
        return Resolver().for_path(path).allowed_secrets
    except (ConfigError, OSError):
        return ()


# -- conversions: the node stream --------------------------------------------------------


class StreamScan:
    """The secrets of a document stream (the items a reader yields and a writer takes,
    :mod:`bbox_lark.convert`), counted per kind and noted in the fidelity report; with
    ``redact``, replaced as they pass (the writer never sees one). Lines are scanned one by
    one, as the checks scan them: a private key block's continuation lines after its
    ``BEGIN`` line belong to it (dropped with it when redacting).

    With ``keep_count`` (an output in bbox text: bbox, compact), a redacting scan keeps
    ``# redactions=N`` true: every comment that states the count gets the number of markers
    of the whole output, so the stream is held from the first such comment to its end (the
    spec puts the count at the end of the session, so that is usually one line); when none
    states it, a ``# redactions=N`` line is appended (the count is known only at the end)."""

    def __init__(
        self,
        report: Fidelity | None,
        *,
        redact: bool = False,
        allowed: Collection[str] = (),
        keep_count: bool = False,
    ) -> None:
        self.report = report
        self.redact = redact
        self.keep_count = redact and keep_count
        self.allowed = frozenset(allowed)
        self.found: list[SecretMatch] = []
        #: Each secret with its line and column (1-based) in the bbox form.
        self.located: list[tuple[int, int, SecretMatch]] = []
        self._in_key_block = False
        #: What became of each continuation line attached to the last event (by identity:
        #: a stream that attaches them may yield the same nodes again after it, as
        #: ``iter_nodes`` does; built nodes may share a line number).
        self._attached: dict[int, tuple[Continuation, Continuation | None]] = {}
        #: Every continuation line attached to the last event (their keys are joined there).
        self._attached_seen: set[int] = set()

    @property
    def kinds(self) -> dict[str, int]:
        """How many secrets of each kind passed (or were replaced), kinds sorted."""
        return count_kinds(self.found)

    def items(self, stream: Iterable[Item]) -> Iterator[Item]:
        scanned = self._items(stream)
        return _counted(scanned, self) if self.keep_count else scanned

    def _items(self, stream: Iterable[Item]) -> Iterator[Item]:
        held: Item | None = None  # the last line, held back: a key may go on over the next one
        for item in stream:
            done = self._item(item)
            if done is None:
                continue
            joins = isinstance(held, (Event, Continuation)) and isinstance(done, Continuation)
            if joins and id(item) not in self._attached_seen:
                held, done = self._across(held, done)  # type: ignore[arg-type]
            if held is not None:
                yield held
            held = done
        if held is not None:
            yield held

    def _item(self, item: Item) -> Item | None:
        if isinstance(item, Head):
            return self._head(item)
        if isinstance(item, Event):
            self._in_key_block = False
            originals = item.continuation
            if originals and not might_hold_secrets("\n".join([item.raw, *(c.raw for c in originals)])):
                # No hint in the event's lines joined (a long tool output, most often): none in
                # any of them alone either (each is a piece of the joined text between line
                # breaks, which no hint or escape holds), so only the event line is scanned.
                self._attached = {id(old): (old, old) for old in originals}
                self._attached_seen = set(self._attached)
                return self._event(item)
            event = self._event(self._wrapped(item) if originals else item)
            self._attached = {
                id(old): (old, self._continuation(c))
                for old, c in zip(originals, event.continuation, strict=True)
            }
            self._attached_seen = set(self._attached)
            if event.continuation:
                kept = tuple(new for _, new in self._attached.values() if new is not None)
                event = replace(event, continuation=kept)
            return event
        if isinstance(item, Continuation):
            if id(item) in self._attached:
                return self._attached.pop(id(item))[1]
            return self._continuation(item)
        # A blank line: the continuation lines attached to the last event may go on after it
        # (each is taken once, from :attr:`_attached`, when the stream yields it again).
        self._in_key_block = False
        return item

    def _across(self, before: Line, line: Continuation) -> tuple[Line, Continuation]:
        """A key that starts at the end of ``before`` and goes on at the start of ``line``
        (a continuation read on its own): counted, and replaced when redacting (the marker
        where it starts, the rest gone from ``line``)."""
        raw = before.raw
        if not raw[-1:].strip() or not line.raw[2:3].strip():
            return before, line
        cut = max(0, len(raw) - 600)
        text = f"{raw[cut:]}\n{line.raw}"
        if not might_hold_secrets(text):
            return before, line
        join = len(raw) - cut
        for secret in find_secrets(text, allowed_secrets=self.allowed):
            if not secret.start < join < secret.end or secret.kind == "private_key":
                continue
            self.found.append(secret)
            self.located.append((before.line, cut + secret.start + 1, secret))
            self._note(secret, before.line)
            if not self.redact:
                continue
            head = raw[: cut + secret.start] + marker(secret.kind)
            indent = 1 if line.raw.startswith("\t") else 2
            rest = line.raw[:indent] + line.raw[secret.end - join - 1 :]
            before = self._event_raw(before, head) if isinstance(before, Event) else replace(before, raw=head)
            return before, replace(line, raw=rest)
        return before, line

    def _note(self, secret: SecretMatch, line: int) -> None:
        """The fidelity report's row for a secret passing (kept, or replaced)."""
        if self.report is None:
            return
        if self.redact:
            self.report.dropped(f"secrets ({secret.kind}), replaced by {marker(secret.kind)}", line)
        else:
            self.report.kept(f"secrets ({secret.kind}; convert --redact replaces them)", line)

    def _scan(self, text: str, line: int) -> tuple[str, list[SecretMatch]]:
        found = find_secrets(text, allowed_secrets=self.allowed)
        if not found:
            return text, found
        for secret in found:
            self.found.append(secret)
            self.located.append((line, secret.start + 1, secret))
            self._note(secret, line)
            if secret.kind == "private_key" and "-----END" not in text[secret.start :]:
                self._in_key_block = True
        if not self.redact:
            return text, found
        return _replace(text, found, 0), found

    def _head(self, head: Head) -> Head:
        text = "".join(line.raw + line.eol for line in head.header_lines)
        found = find_secrets(text, allowed_secrets=self.allowed)
        if not found:
            return head
        for line, col, secret in locate(text, found):
            self.found.append(secret)
            self.located.append((line, col, secret))
            self._note(secret, line)
        if not self.redact:
            return head
        from bbox_lark.syntax.parser import iter_nodes

        redacted = next(iter_nodes(("\ufeff" if head.bom else "") + _replace(text, found, len(text))))
        assert isinstance(redacted, Head)
        return replace(redacted, body_start=head.body_start)

    def _wrapped(self, event: Event) -> Event:
        """``event`` with each key wrapped from one of its lines onto the next (a
        continuation) counted, and replaced when redacting: the marker where it starts,
        the rest of it gone from the lines it goes on over (the lines stay)."""
        lines: list[Line] = [event, *event.continuation]
        block = "\n".join(line.raw for line in lines)
        if not might_hold_secrets(block):
            return event
        starts = [0]
        for line in lines[:-1]:
            starts.append(starts[-1] + len(line.raw) + 1)
        wrapped = []
        for secret in find_secrets(block, allowed_secrets=self.allowed):
            first = bisect.bisect_right(starts, secret.start) - 1
            last = bisect.bisect_right(starts, secret.end - 1) - 1
            if first != last and secret.kind != "private_key":
                wrapped.append((first, last, secret))
        if not wrapped:
            return event
        raws = [line.raw for line in lines]
        for first, last, secret in reversed(wrapped):
            line_no = lines[first].line
            self.found.append(secret)
            self.located.append((line_no, secret.start - starts[first] + 1, secret))
            self._note(secret, line_no)
            if not self.redact:
                continue
            for index in range(first, last + 1):
                raw, at = raws[index], starts[index]
                indent = 0 if index == first else (1 if raw.startswith("\t") else 2)
                cut_from = secret.start - at if index == first else indent
                cut_to = min(len(raw), secret.end - at)
                keep = marker(secret.kind) if index == first else ""
                raws[index] = raw[:cut_from] + keep + raw[cut_to:] if index == last else raw[:cut_from] + keep
        if not self.redact:
            return event
        head = self._event_raw(event, raws[0])
        kept = tuple(replace(line, raw=raw) for line, raw in zip(event.continuation, raws[1:], strict=True))
        return replace(head, continuation=kept)

    # A marker in place of a secret keeps an event line an event (``reparse`` cannot raise
    # here): the line's text before the secret stays, and the marker is not whitespace, so
    # the line neither turns blank nor starts like a continuation (two spaces or a tab) when
    # it did not before (tests/test_mutants_redaction.py, the marker keeps an event an event).
    def _event_raw(self, event: Event, raw: str) -> Event:
        return event if raw == event.raw else reparse(event, raw)

    def _event(self, event: Event) -> Event:
        new_raw, found = self._scan(event.raw, event.line)
        if not found or new_raw == event.raw:
            return event
        return reparse(event, new_raw)

    def _continuation(self, line: Continuation) -> Continuation | None:
        if self._in_key_block:
            if "-----END" in line.raw:
                self._in_key_block = False
            return None if self.redact else line
        if not might_hold_secrets(line.raw):  # the prefilter alone: most lines hold no hint
            return line
        new_raw, found = self._scan(line.raw, line.line)
        return replace(line, raw=new_raw) if found and self.redact else line


def _counted(items: Iterator[Item], scan: StreamScan) -> Iterator[Item]:
    """``items`` with ``# redactions=N`` kept true (:class:`StreamScan`'s ``keep_count``)."""
    from bbox_lark.syntax.scan import line_redactions

    markers = 0
    attached: set[int] = set()
    held: list[Item] | None = None  # from the first comment that states the count on
    last: Item | None = None  # the last line, held back: it may need a line ending
    for item in items:
        if isinstance(item, Event):
            attached = {id(c) for c in item.continuation}
            lines: tuple[Line, ...] = (item, *item.continuation)
            markers += sum(1 for line in lines for _ in line_redactions(line))
            if held is None and states_count(item) is not None:
                held = []
        elif isinstance(item, Continuation) and id(item) not in attached:
            markers += sum(1 for _ in line_redactions(item))
        if held is not None:
            held.append(item)
            continue
        if last is not None:
            yield last
        last = item
    if held is not None:
        if last is not None:
            yield last
        for item in held:
            field = states_count(item) if scan.found and isinstance(item, Event) else None
            if field is not None and isinstance(item, Event):
                start = field.value_col - 1
                item = reparse(
                    item, item.raw[:start] + str(markers) + item.raw[start + len(field.raw_value) :]
                )
            yield item
        return
    if not scan.found:
        if last is not None:
            yield last
        return
    number = 1
    if isinstance(last, (Event, Continuation)):
        number = last.line + 1
        if not last.eol and not (isinstance(last, Event) and last.continuation):
            last = replace(last, eol="\n")
    if last is not None:
        yield last
    yield replace(build.comment(f"redactions={markers}"), line=number)


def _replace(text: str, found: Iterable[SecretMatch], body_at: int) -> str:
    """``text`` with each secret replaced by its marker (quoted where it starts a YAML value
    before ``body_at``)."""

    def replacement(secret: SecretMatch) -> str:
        if secret.start < body_at and _starts_yaml_value(text, secret.start):
            return f'"{marker(secret.kind)}"'
        return ""

    return replace_secrets(text, found, replacement)
