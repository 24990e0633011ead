"""Applying fixers to a text: :func:`apply_fixes`, the library call behind ``fix`` (the machinery
is in :mod:`bbox_lark.fix.framework`; the built-in fixers run as a stream,
:mod:`bbox_lark.fix.stream`, as ``fix --write`` runs them)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from bbox_lark._renamed import renamed
from bbox_lark.api import parse
from bbox_lark.fix.framework import (
    Edit,
    Fixer,
    FixOutcome,
    Note,
    TextFixer,
    apply_edits,
    resolved_findings,
    unified_diff,
)
from bbox_lark.fix.stream import streams
from bbox_lark.syntax.nodes import Document, Line
from bbox_lark.syntax.printer import dumps
from bbox_lark.syntax.source import DEFAULT_MAX_LINE, decode


@renamed(data="source")
def apply_fixes(
    source: str | bytes,
    fixers: Iterable[Fixer],
    *,
    path: str | Path | None = None,
    label: str | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    allowed_secrets: Iterable[str] | None = None,
) -> FixOutcome:
    """Run ``fixers`` over a document and return the fixed text, the counts, the notes and a
    unified diff. Never raises on bad input (a document with errors is still fixed; whether
    to *write* it is the caller's choice); raises :class:`FixError` only on a fixer bug:
    edits that overlap, fall outside their line, touch a line that is not an event, comment
    or lifecycle line, or would change what kind of line it is.

    ``path`` is where the input came from (used for the blob checks, as by ``check``);
    ``label`` names the file in the diff headers (default: ``path``, else ``<stdin>``).
    ``allowed_secrets`` are the values of the ``allowed-secrets`` setting, the same for the
    findings and the fixers (None: those of the configuration that applies to ``path``).
    """
    if allowed_secrets is None:
        from bbox_lark.secrets.redaction import redact_file_settings

        allowed_secrets = redact_file_settings(Path(path) if path is not None else None)
    allowed = frozenset(allowed_secrets)
    chosen = list(fixers)
    shown = label if label is not None else (str(path) if path is not None else "<stdin>")
    old_text = decode(source)
    if streams(chosen):
        return _streamed(source, old_text, chosen, path=path, label=shown, max_line=max_line, allowed=allowed)
    document = parse(source, path=path, max_line=max_line, allowed_secrets=allowed)
    edits: list[Edit] = []
    changes: dict[str, int] = {}
    notes: list[Note] = []
    for fixer in chosen:
        if isinstance(fixer, TextFixer):
            continue
        result = fixer.edits(document)
        edits.extend(result.edits)
        changes[fixer.name] = result.changed
        notes.extend(replace(note, fixer=note.fixer or fixer.name) for note in result.notes)
    new_text = dumps(apply_edits(document, edits)) if edits else old_text
    for fixer in chosen:
        if isinstance(fixer, TextFixer):
            where = Path(path) if path is not None else None
            new_text, result = fixer.rewrite(new_text, where, allowed_secrets=allowed)
            changes[fixer.name] = result.changed
            notes.extend(replace(note, fixer=note.fixer or fixer.name) for note in result.notes)
    changes = {fixer.name: changes[fixer.name] for fixer in chosen}
    resolved = resolved_findings(document.diagnostics, chosen, notes)
    return FixOutcome(
        document=document,
        old_text=old_text,
        new_text=new_text,
        changes=changes,
        notes=tuple(sorted(notes, key=lambda n: (n.line, n.col))),
        diff=unified_diff(old_text, new_text, shown),
        resolved=resolved,
    )


def _streamed(
    source: str | bytes,
    old_text: str,
    fixers: list[Fixer],
    *,
    path: str | Path | None,
    label: str,
    max_line: int,
    allowed: frozenset[str],
) -> FixOutcome:
    """:func:`apply_fixes` through the stream (:mod:`bbox_lark.fix.stream`), as ``fix`` runs."""
    from bbox_lark.fix.stream import Body, fix_stream, in_memory

    nodes: list[Line] = []
    done, sink, stream = fix_stream(
        in_memory(source), fixers, Body(), path=path, max_line=max_line, allowed_secrets=allowed, keep=nodes
    )
    head = stream.head
    assert head is not None
    document = Document(
        bom=head.bom,
        header_lines=head.header_lines,
        header_info=head.header_info,
        lines=tuple(nodes),
        source_faults=tuple(stream.faults),
        diagnostics=done.diagnostics,
    )
    new_text = sink.text() if done.changed else old_text
    return FixOutcome(
        document=document,
        old_text=old_text,
        new_text=new_text,
        changes=done.changes,
        notes=done.notes,
        diff=unified_diff(old_text, new_text, label),
        resolved=done.resolved,
    )
