"""The numbers of sessions: call outcomes, usage, estimated and stated cost, step and session
totals (``session``), the ``stats`` command's counts (``stats``, ``stats_run`` over many
files), what went wrong in a session (``review``), the four tables (``tables``) with their
Parquet export (``export``) and SQL (``query``).

May import :mod:`bbox_lark.syntax`, :mod:`bbox_lark.secrets`, :mod:`bbox_lark.files`,
:mod:`bbox_lark.checks` and :mod:`bbox_lark.convert` (a foreign file is read through its
converter); never the CLI or the report.

The names of ``session`` are reachable here as before the move (``from bbox_lark.numbers
import read_session``).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any


def __getattr__(name: str) -> Any:
    """The names of ``session``, loaded on first use (the package's old module)."""
    if name.startswith("__"):
        raise AttributeError(name)
    # import_module, not `from ... import`: that would ask this function for the submodule.
    module = import_module("bbox_lark.numbers.session")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
