"""The ``bbox-lark`` commands as a Typer application (:data:`app`): the one place a command
is declared.

Each command declares its options, calls one library function (``checks.workflow``,
``fix.rewrite``, ``convert.files``, ...), renders the result with :mod:`bbox_lark.cli.console`
and exits with its code; an error of the library's spine that it lets through becomes one line
and its exit code in one place (:class:`bbox_lark.cli.options.Group`). The application and
what every command shares are in ``base``; the commands are grouped by what they do:
``reading`` (``check``, ``parse``, ``stats``, ``explain``, ``docs``), ``rewriting`` (``fmt``,
``fix``, ``redact``), ``converting`` (``convert``, ``lightbox verify``, ``send``),
``reporting`` (``report``) and ``tables`` (``export``, ``query``). Importing this package
declares them all, in the order ``--help`` lists them.

:mod:`bbox_lark.cli` is the entry point; it imports this package only for a command line its
fast path does not take (``bbox-lark check`` with plain options never imports Typer). Like
:mod:`bbox_lark.cli`, these modules have no ``from __future__ import annotations``: Typer
evaluates string annotations with ``compile`` and ``eval`` on every run.
"""

from importlib import import_module

from bbox_lark.cli.commands.base import app, fail_usage, version_line

#: The modules that declare the commands, in the order ``--help`` lists them (a module's
#: commands are declared when it is imported).
GROUPS = ("reading", "rewriting", "converting", "reporting", "tables")
for _group in GROUPS:
    import_module(f"bbox_lark.cli.commands.{_group}")

__all__ = ["GROUPS", "app", "fail_usage", "version_line"]
