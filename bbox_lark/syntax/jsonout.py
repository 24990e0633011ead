"""Documents and diagnostics as JSON-ready values (``parse --json``, snapshots, converters).

The shape is described by ``docs/schema/parse.schema.json``. Field values stay source text
(``fields``); typed values (``step``, ``ts``, ``attempt``, ``latency_ms``, ``level``) are
given beside them under ``typed``, as docs/reference.md#api-values says.
"""

from __future__ import annotations

from typing import Any

from bbox_lark.syntax.nodes import BlankLine, Continuation, Diagnostic, Document, Event, Result

JSON_VERSION = 1


def diagnostic_to_json(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity,
        "line": diagnostic.line,
        "col": diagnostic.col,
        "message": diagnostic.message,
    }


def result_to_json(result: Result) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": result.kind, "text": result.text, "col": result.col}
    if result.head:
        out["head"] = result.head
    if result.rest:
        out["rest"] = result.rest
    for name in ("number", "unit", "total", "message"):
        value = getattr(result, name)
        if value is not None:
            out[name] = value
    if result.choices:
        out["choices"] = list(result.choices)
    if result.blob is not None:
        blob = result.blob
        out["blob"] = {"sha256": blob.sha256, "bytes": blob.size_int, "mime": blob.mime}
    return out


def _typed(event: Event) -> dict[str, Any]:
    typed: dict[str, Any] = {}
    if event.step is not None:
        typed["step"] = event.step
    if event.ts is not None:
        typed["ts"] = event.ts
    if event.latency_ms is not None:
        typed["latency_ms"] = event.latency_ms
    attempt = event.attempt
    if attempt is not None:
        typed["attempt"] = {"number": attempt[0], "of": attempt[1]}
    if event.level is not None:
        typed["level"] = event.level
    return typed


def _value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def event_to_json(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"line": event.line, "kind": event.kind}
    if event.prefix:
        out["prefix"] = event.prefix
    if event.name is not None:
        out["name"] = event.name
    if event.text:
        out["text"] = event.text
    if event.fields:
        out["fields"] = {key: _value(value) for key, value in event.fields.items()}
    typed = _typed(event)
    if typed:
        out["typed"] = typed
    if event.args:
        out["args"] = [_value(arg) for arg in event.args]
    if event.arrow is not None:
        out["arrow"] = event.arrow
    if event.result is not None:
        out["result"] = result_to_json(event.result)
    if event.metrics is not None:
        out["metrics"] = {key: _value(value) for key, value in event.metrics.items()}
    if event.continuation:
        out["continuation"] = [c.text for c in event.continuation]
    out["raw"] = event.raw
    return out


def line_to_json(node: Event | Continuation | BlankLine) -> dict[str, Any]:
    if isinstance(node, Event):
        return event_to_json(node)
    out: dict[str, Any] = {"line": node.line, "kind": node.kind}
    if isinstance(node, Continuation):
        out["owner"] = node.owner
    out["raw"] = node.raw
    return out


def document_to_json(
    document: Document, *, header: bool = True, body: bool = True, diagnostics: bool = True
) -> dict[str, Any]:
    """The document as JSON-ready values. ``body`` lists every body line (blank lines and
    continuations included), so line numbers are never ambiguous."""
    out: dict[str, Any] = {"version": JSON_VERSION}
    if header:
        info = document.header_info
        out["header"] = None if info is None else {"fields": info.fields, "lines": info.key_lines}
        out["bom"] = document.bom
    if body:
        out["body"] = [line_to_json(node) for node in document.lines]
    if diagnostics:
        out["diagnostics"] = [diagnostic_to_json(d) for d in document.diagnostics]
    return out
