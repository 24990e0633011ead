"""``--redact``: every secret becomes ``[redacted:KIND]`` (docs/reference.md#secrets; the work is
:func:`bbox_lark.secrets.redaction.redact`). A text fixer: a private key block over continuation
lines becomes one marker, header values are redacted, and ``# redactions=N`` is inserted or
updated, none of which is an edit inside one body line."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from bbox_lark.fix.framework import FixError, FixResult, Note, TextFixer, plural


class Redact(TextFixer):
    name = "redact"
    description = "Replace each secret (the S codes) with [redacted:KIND] and keep # redactions=N true."
    resolves = frozenset({"S001", "S002"})

    def rewrite(
        self, text: str, path: Path | None, *, allowed_secrets: Collection[str] = ()
    ) -> tuple[str, FixResult]:
        from bbox_lark.secrets.redaction import line_kinds, locate, redact

        done = redact(text, allowed_secrets=allowed_secrets)
        if not done.changed:
            return text, FixResult()
        if line_kinds(done.text) != line_kinds(text):
            raise FixError("redacting would change what kind of line one is")
        notes = tuple(
            Note(line, col, f"redacted {secret.kind} {secret.masked}")
            for line, col, secret in locate(text, done.secrets)
        )
        return done.text, FixResult(changed=len(done.secrets), notes=tuple(notes))

    def summary(self, changed: int) -> str:
        return f"{self.name}: {plural(changed, 'secret')} replaced"
