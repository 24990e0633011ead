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

#: The public names, listed once: each name and where it lives (``module`` for a module,
#: ``module:attribute`` for a name in it). The ``TYPE_CHECKING`` imports and ``__all__`` below
#: are written from this table by ``tools/gen_public.py`` (``tests/test_api_surface.py`` fails
#: when they are stale); ``docs/api.md`` documents ``__all__``.
_PUBLIC: dict[str, str] = {
    "BboxLarkError": "bbox_lark.errors:BboxLarkError",
    "BlankLine": "bbox_lark.syntax.nodes:BlankLine",
    "BlobPointer": "bbox_lark.syntax.nodes:BlobPointer",
    "Call": "bbox_lark.syntax.nodes:Call",
    "CallHandle": "bbox_lark.write.writer:CallHandle",
    "CheckInfo": "bbox_lark.checks:CheckInfo",
    "Comment": "bbox_lark.syntax.nodes:Comment",
    "ConfigError": "bbox_lark.errors:ConfigError",
    "Continuation": "bbox_lark.syntax.nodes:Continuation",
    "Conversion": "bbox_lark.convert:Conversion",
    "ConversionError": "bbox_lark.errors:ConversionError",
    "ConvertError": "bbox_lark.convert:ConvertError",
    "Diagnostic": "bbox_lark.syntax.nodes:Diagnostic",
    "Document": "bbox_lark.syntax.nodes:Document",
    "Event": "bbox_lark.syntax.nodes:Event",
    "Field": "bbox_lark.syntax.nodes:Field",
    "Head": "bbox_lark.syntax.parser:Head",
    "Header": "bbox_lark.syntax.nodes:Header",
    "InputError": "bbox_lark.errors:InputError",
    "Lifecycle": "bbox_lark.syntax.nodes:Lifecycle",
    "Message": "bbox_lark.syntax.nodes:Message",
    "MissingExtraError": "bbox_lark.errors:MissingExtraError",
    "Observation": "bbox_lark.syntax.nodes:Observation",
    "QueryError": "bbox_lark.errors:QueryError",
    "Redacted": "bbox_lark.secrets.redaction:Redacted",
    "Redaction": "bbox_lark.syntax.nodes:Redaction",
    "Result": "bbox_lark.syntax.nodes:Result",
    "SecretMatch": "bbox_lark.secrets.scanner:SecretMatch",
    "Stats": "bbox_lark.numbers.stats:Stats",
    "Unknown": "bbox_lark.syntax.nodes:Unknown",
    "WriteError": "bbox_lark.errors:WriteError",
    "Writer": "bbox_lark.write.writer:Writer",
    "apply_fixes": "bbox_lark.fix:apply_fixes",
    "build": "bbox_lark.syntax.build",
    "build_document": "bbox_lark.api:build_document",
    "call_outcome": "bbox_lark.numbers.outcomes:call_outcome",
    "check": "bbox_lark.api:check",
    "compute_stats": "bbox_lark.numbers.stats:compute_stats",
    "convert_text": "bbox_lark.convert:convert",
    "detect_format": "bbox_lark.convert:detect_format",
    "document_numbers": "bbox_lark.numbers.session:document_numbers",
    "dumps": "bbox_lark.syntax.printer:dumps",
    "emit": "bbox_lark.syntax.printer:emit",
    "export_tables": "bbox_lark.numbers.export:export_tables",
    "find_secrets": "bbox_lark.secrets.scanner:find_secrets",
    "format_document": "bbox_lark.syntax.printer:format_document",
    "iter_check": "bbox_lark.api:iter_check",
    "iter_nodes": "bbox_lark.syntax.parser:iter_nodes",
    "parse": "bbox_lark.api:parse",
    "query_tables": "bbox_lark.numbers.query:query_tables",
    "read_session": "bbox_lark.numbers.session:read_session",
    "redact": "bbox_lark.secrets.redaction:redact",
    "registry": "bbox_lark.checks:registry",
    "render_report": "bbox_lark.report:render",
    "reparse": "bbox_lark.syntax.parser:reparse",
    "text_of": "bbox_lark.syntax.text:text_of",
}

# -- written by tools/gen_public.py from _PUBLIC; do not edit by hand --
if TYPE_CHECKING:  # what mypy and editors see; at run time each name loads on first use
    from bbox_lark.api import build_document as build_document
    from bbox_lark.api import check as check
    from bbox_lark.api import iter_check as iter_check
    from bbox_lark.api import parse as parse
    from bbox_lark.checks import CheckInfo as CheckInfo
    from bbox_lark.checks import registry as registry
    from bbox_lark.convert import Conversion as Conversion
    from bbox_lark.convert import ConvertError as ConvertError
    from bbox_lark.convert import convert as convert_text
    from bbox_lark.convert import detect_format as detect_format
    from bbox_lark.errors import BboxLarkError as BboxLarkError
    from bbox_lark.errors import ConfigError as ConfigError
    from bbox_lark.errors import ConversionError as ConversionError
    from bbox_lark.errors import InputError as InputError
    from bbox_lark.errors import MissingExtraError as MissingExtraError
    from bbox_lark.errors import QueryError as QueryError
    from bbox_lark.errors import WriteError as WriteError
    from bbox_lark.fix import apply_fixes as apply_fixes
    from bbox_lark.numbers.export import export_tables as export_tables
    from bbox_lark.numbers.outcomes import call_outcome as call_outcome
    from bbox_lark.numbers.query import query_tables as query_tables
    from bbox_lark.numbers.session import document_numbers as document_numbers
    from bbox_lark.numbers.session import read_session as read_session
    from bbox_lark.numbers.stats import Stats as Stats
    from bbox_lark.numbers.stats import compute_stats as compute_stats
    from bbox_lark.report import render as render_report
    from bbox_lark.secrets.redaction import Redacted as Redacted
    from bbox_lark.secrets.redaction import redact as redact
    from bbox_lark.secrets.scanner import SecretMatch as SecretMatch
    from bbox_lark.secrets.scanner import find_secrets as find_secrets
    from bbox_lark.syntax import build as build
    from bbox_lark.syntax.nodes import BlankLine as BlankLine
    from bbox_lark.syntax.nodes import BlobPointer as BlobPointer
    from bbox_lark.syntax.nodes import Call as Call
    from bbox_lark.syntax.nodes import Comment as Comment
    from bbox_lark.syntax.nodes import Continuation as Continuation
    from bbox_lark.syntax.nodes import Diagnostic as Diagnostic
    from bbox_lark.syntax.nodes import Document as Document
    from bbox_lark.syntax.nodes import Event as Event
    from bbox_lark.syntax.nodes import Field as Field
    from bbox_lark.syntax.nodes import Header as Header
    from bbox_lark.syntax.nodes import Lifecycle as Lifecycle
    from bbox_lark.syntax.nodes import Message as Message
    from bbox_lark.syntax.nodes import Observation as Observation
    from bbox_lark.syntax.nodes import Redaction as Redaction
    from bbox_lark.syntax.nodes import Result as Result
    from bbox_lark.syntax.nodes import Unknown as Unknown
    from bbox_lark.syntax.parser import Head as Head
    from bbox_lark.syntax.parser import iter_nodes as iter_nodes
    from bbox_lark.syntax.parser import reparse as reparse
    from bbox_lark.syntax.printer import dumps as dumps
    from bbox_lark.syntax.printer import emit as emit
    from bbox_lark.syntax.printer import format_document as format_document
    from bbox_lark.syntax.text import text_of as text_of
    from bbox_lark.write.writer import CallHandle as CallHandle
    from bbox_lark.write.writer import Writer as Writer

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
# -- end of what tools/gen_public.py writes --

#: Semantic versioning from 0.2.0 on (docs/status.md, "Versions"); CHANGELOG.md says what changed.
__version__ = "0.2.0"


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use, then keep it in the package."""
    try:
        module, _, attribute = _PUBLIC[name].partition(":")
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(import_module(module), attribute) if attribute else import_module(module)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
