"""bbox-lark: the BlackBox session-log format (bbox/1) as a formally specified language.

The public API is this module's ``__all__``; everything else is internal.

>>> from bbox_lark import parse
>>> doc = parse("---\\nformat: bbox/1\\nid: s\\nrepo_sha: 215db51\\n---\\nt:read a.rs → [3 lines]\\n")
>>> doc.events[0].name, doc.events[0].result.kind
('read', 'count')
>>> lines = build.result("count", number=3, unit="lines")
>>> emit(build.call("tool", "read", ["a.rs"], fields={"id": "c1"}, result=lines))
't:read a.rs id=c1 → [3 lines]'

Nodes are plain data: :mod:`bbox_lark.syntax.build` makes them from values (``build.call``,
``build.message``, …, ``build.edited`` for an edit) and :func:`reparse` reads an event again
from new source text.

Importing the package imports nothing else: each name of ``__all__`` is loaded from its
module on first use (PEP 562), so ``bbox-lark check`` never pays for ``fix``, ``convert`` or
``stats``, and ``import bbox_lark`` costs no YAML, Lark or Rich (``tests/test_startup.py``).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from bbox_lark._moved import install as _install_moved

_install_moved()  # the old module names, for one release

if TYPE_CHECKING:  # what mypy and editors see; at run time each name loads on first use
    from bbox_lark.api import build_document, check, iter_check, parse
    from bbox_lark.checks import CheckInfo, registry
    from bbox_lark.convert import Conversion, ConvertError, detect_format
    from bbox_lark.convert import convert as convert_text  # `bbox_lark.convert` stays the package
    from bbox_lark.errors import (
        BboxLarkError,
        ConfigError,
        ConversionError,
        InputError,
        MissingExtraError,
        QueryError,
        WriteError,
    )
    from bbox_lark.fix import apply_fixes
    from bbox_lark.numbers.export import export_tables
    from bbox_lark.numbers.query import query_tables
    from bbox_lark.numbers.session import call_outcome, document_numbers, read_session
    from bbox_lark.numbers.stats import Stats, compute_stats
    from bbox_lark.report import render as render_report  # `bbox_lark.report` stays the package
    from bbox_lark.secrets.redaction import Redacted, redact
    from bbox_lark.secrets.scanner import SecretMatch, find_secrets
    from bbox_lark.syntax import build
    from bbox_lark.syntax.nodes import (
        BlankLine,
        BlobPointer,
        Call,
        Comment,
        Continuation,
        Diagnostic,
        Document,
        Event,
        Field,
        Header,
        Lifecycle,
        Message,
        Observation,
        Redaction,
        Result,
        Unknown,
    )
    from bbox_lark.syntax.parser import Head, iter_nodes, reparse
    from bbox_lark.syntax.printer import dumps, emit, format_document
    from bbox_lark.syntax.text import text_of
    from bbox_lark.write.writer import CallHandle, Writer

#: Semantic versioning from 0.2.0 on (docs/status.md, "Versions"); CHANGELOG.md says what changed.
__version__ = "0.2.0"

__all__ = [
    "BboxLarkError",
    "BlankLine",
    "BlobPointer",
    "Call",
    "CallHandle",
    "CheckInfo",
    "Comment",
    "ConfigError",
    "Continuation",
    "Conversion",
    "ConversionError",
    "ConvertError",
    "Diagnostic",
    "Document",
    "Event",
    "Field",
    "Head",
    "Header",
    "InputError",
    "Lifecycle",
    "Message",
    "MissingExtraError",
    "Observation",
    "QueryError",
    "Redacted",
    "Redaction",
    "Result",
    "SecretMatch",
    "Stats",
    "Unknown",
    "WriteError",
    "Writer",
    "__version__",
    "apply_fixes",
    "build",
    "build_document",
    "call_outcome",
    "check",
    "compute_stats",
    "convert_text",
    "detect_format",
    "document_numbers",
    "dumps",
    "emit",
    "export_tables",
    "find_secrets",
    "format_document",
    "iter_check",
    "iter_nodes",
    "parse",
    "query_tables",
    "read_session",
    "redact",
    "registry",
    "render_report",
    "reparse",
    "text_of",
]

#: Where each public name lives: (module, attribute; "" for the module itself). Keep in step
#: with the imports above.
_LAZY: dict[str, tuple[str, str]] = {
    "build": ("bbox_lark.syntax.build", ""),
    "build_document": ("bbox_lark.api", "build_document"),
    "check": ("bbox_lark.api", "check"),
    "iter_check": ("bbox_lark.api", "iter_check"),
    "parse": ("bbox_lark.api", "parse"),
    "Head": ("bbox_lark.syntax.parser", "Head"),
    "iter_nodes": ("bbox_lark.syntax.parser", "iter_nodes"),
    "reparse": ("bbox_lark.syntax.parser", "reparse"),
    **{
        name: ("bbox_lark.syntax.nodes", name)
        for name in (
            "BlankLine",
            "BlobPointer",
            "Call",
            "Comment",
            "Continuation",
            "Diagnostic",
            "Document",
            "Event",
            "Field",
            "Header",
            "Lifecycle",
            "Message",
            "Observation",
            "Redaction",
            "Result",
            "Unknown",
        )
    },
    **{
        name: ("bbox_lark.errors", name)
        for name in (
            "BboxLarkError",
            "ConfigError",
            "ConversionError",
            "InputError",
            "MissingExtraError",
            "QueryError",
            "WriteError",
        )
    },
    "CheckInfo": ("bbox_lark.checks", "CheckInfo"),
    "registry": ("bbox_lark.checks", "registry"),
    "Conversion": ("bbox_lark.convert", "Conversion"),
    "ConvertError": ("bbox_lark.convert", "ConvertError"),
    "detect_format": ("bbox_lark.convert", "detect_format"),
    "convert_text": ("bbox_lark.convert", "convert"),
    "apply_fixes": ("bbox_lark.fix", "apply_fixes"),
    "call_outcome": ("bbox_lark.numbers.session", "call_outcome"),
    "document_numbers": ("bbox_lark.numbers.session", "document_numbers"),
    "read_session": ("bbox_lark.numbers.session", "read_session"),
    "dumps": ("bbox_lark.syntax.printer", "dumps"),
    "emit": ("bbox_lark.syntax.printer", "emit"),
    "format_document": ("bbox_lark.syntax.printer", "format_document"),
    "export_tables": ("bbox_lark.numbers.export", "export_tables"),
    "query_tables": ("bbox_lark.numbers.query", "query_tables"),
    "Redacted": ("bbox_lark.secrets.redaction", "Redacted"),
    "redact": ("bbox_lark.secrets.redaction", "redact"),
    "SecretMatch": ("bbox_lark.secrets.scanner", "SecretMatch"),
    "find_secrets": ("bbox_lark.secrets.scanner", "find_secrets"),
    "Stats": ("bbox_lark.numbers.stats", "Stats"),
    "compute_stats": ("bbox_lark.numbers.stats", "compute_stats"),
    "render_report": ("bbox_lark.report", "render"),
    "text_of": ("bbox_lark.syntax.text", "text_of"),
    "CallHandle": ("bbox_lark.write.writer", "CallHandle"),
    "Writer": ("bbox_lark.write.writer", "Writer"),
}


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use, then keep it in the package."""
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(import_module(module), attribute) if attribute else import_module(module)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
