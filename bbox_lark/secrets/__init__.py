"""Secrets: the scanner (``scanner``: one table of credential shapes), text as a reader
decodes it (``decoded``), and redaction of a bbox text (``redaction``).

``scanner`` and ``decoded`` may import only :mod:`bbox_lark._classes`; ``redaction`` reads
and prints lines, so it may import :mod:`bbox_lark.syntax` and :mod:`bbox_lark.files` too.

The scanner's public names are reachable here as before the move (``from bbox_lark.secrets
import find_secrets``).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any


def __getattr__(name: str) -> Any:
    """The scanner's names, loaded on first use (the package's old module was the scanner)."""
    if name.startswith("__"):
        raise AttributeError(name)
    # import_module, not `from ... import`: that would ask this function for the submodule.
    module = import_module("bbox_lark.secrets.scanner")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
