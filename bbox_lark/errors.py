"""The errors bbox-lark raises: one base, :class:`BboxLarkError`, and a small hierarchy.

Every error a public function raises for a reason outside the caller's program (a path that
cannot be read, a bad configuration, a conversion that cannot be done as asked, a query that
cannot run, an output that cannot be written, an extra that is not installed) is a
:class:`BboxLarkError`; catching it catches them all. Programming errors (a wrong type, an
impossible argument) are ``TypeError``/``ValueError`` as in the standard library, and each
function's docstring names them. Bad *lines* are never raised: they are diagnostics.

==========================  =====================================================  =====
class                       raised when                                            exit
==========================  =====================================================  =====
:class:`InputError`         a path or stream cannot be read (missing, a folder,      2
                            too long a name, no permission, a loop of links)
:class:`ConfigError`        a configuration file or option value is wrong            2
:class:`ConversionError`    a conversion cannot be done as asked (unknown or         2
                            undetectable format, an option that does not apply,
                            an input the reader refuses as a whole)
:class:`QueryError`         a query cannot run (DuckDB's message)                    2
:class:`WriteError`         an output cannot be written where it was asked to go     2
:class:`MissingExtraError`  a feature needs an extra that is not installed           2
==========================  =====================================================  =====

The classes keep the standard bases callers caught before (``ConfigError`` and
``ConversionError`` are ``ValueError``\\s, ``MissingExtraError`` an ``ImportError``), so
existing ``except`` clauses go on working. This module imports nothing: every layer may
raise these.
"""

from __future__ import annotations

__all__ = [
    "BboxLarkError",
    "ConfigError",
    "ConversionError",
    "InputError",
    "MissingExtraError",
    "QueryError",
    "WriteError",
]


class BboxLarkError(Exception):
    """The base of every error bbox-lark raises on purpose."""


class InputError(BboxLarkError):
    """A path or stream that cannot be read: the command exits 2."""


class ConfigError(BboxLarkError, ValueError):
    """A bad configuration file or option value: a usage error (exit 2)."""


class ConversionError(BboxLarkError, ValueError):
    """A conversion that cannot be done as asked (a usage problem, never a bad input line)."""


class QueryError(BboxLarkError):
    """The query could not run: DuckDB's message (bad SQL, a missing column, ...), or
    paths that cannot be queried together."""


class WriteError(BboxLarkError):
    """An output that cannot be written where it was asked to go (the message says why)."""


class MissingExtraError(BboxLarkError, ImportError):
    """A feature needs a package of an extra that is not installed; the message is one line
    that says which and how to install it."""
