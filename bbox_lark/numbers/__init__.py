"""The numbers of sessions: call outcomes (``outcomes``), usage (``usage``), estimated and
stated cost (``prices``), step and session totals (``session``), the ``stats`` command's
counts (``stats``, ``stats_run`` over many files), what went wrong in a session
(``review``), the four tables (``tables``) with their Parquet export (``export``) and SQL (``query``).

May import :mod:`bbox_lark.syntax`, :mod:`bbox_lark.secrets`, :mod:`bbox_lark.files`,
:mod:`bbox_lark.checks` and :mod:`bbox_lark.convert` (a foreign file is read through its
converter); never the CLI or the report.

The old module's names are reachable here as before the move (``from bbox_lark.numbers
import read_session``).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: The modules the package's old module (``bbox_lark/numbers.py``) was split into.
_SPLIT = ("session", "usage", "prices", "outcomes")


def __getattr__(name: str) -> Any:
    """The old module's names, loaded on first use from the module that now holds them."""
    if name.startswith("__") or name in _SPLIT:
        raise AttributeError(name)
    for part in _SPLIT:
        # import_module, not `from ... import`: that would ask this function for the submodule.
        module = import_module(f"bbox_lark.numbers.{part}")
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
