"""bbox-lark: the BlackBox session-log format (bbox/1) as a formally specified language.

The public API is this module's ``__all__``; everything else is internal.

>>> doc = parse("---\\nformat: bbox/1\\nid: s\\nrepo_sha: 215db51\\n---\\nt:read a.rs → [3 lines]\\n")
>>> doc.events[0].name, doc.events[0].result.kind
('read', 'count')
"""

from bbox_lark.api import check, iter_check, parse
from bbox_lark.ast import (
    BlankLine,
    BlobPointer,
    Continuation,
    Diagnostic,
    Document,
    Event,
    Field,
    Header,
    Redaction,
    Result,
)
from bbox_lark.checks import CheckInfo, registry
from bbox_lark.convert import Conversion, ConvertError, detect_format
from bbox_lark.convert import convert as convert_text  # `bbox_lark.convert` stays the package
from bbox_lark.fix import apply_fixes
from bbox_lark.parser import Head, iter_nodes
from bbox_lark.printer import dumps, format_document
from bbox_lark.stats import Stats, compute_stats

__version__ = "0.1.0"

__all__ = [
    "BlankLine",
    "BlobPointer",
    "CheckInfo",
    "Continuation",
    "Conversion",
    "ConvertError",
    "Diagnostic",
    "Document",
    "Event",
    "Field",
    "Head",
    "Header",
    "Redaction",
    "Result",
    "Stats",
    "__version__",
    "apply_fixes",
    "check",
    "compute_stats",
    "convert_text",
    "detect_format",
    "dumps",
    "format_document",
    "iter_check",
    "iter_nodes",
    "parse",
    "registry",
]
