"""The ``bbox-lark`` command line's entry point: :func:`main`.

Every command parses its arguments, calls one library function and renders the result
(:mod:`bbox_lark.cli.console`). The commands are a Typer application in
:mod:`bbox_lark.cli.commands` (``bbox_lark.cli.app`` and every name of that module are
reachable from here, imported on first use).

Start-up matters (``check`` on a small file should cost little more than importing Lark and
PyYAML): each command imports what it uses, Rich is imported only when output needs it, and
Typer only when the command line needs it. A plain ``check`` command line (known options in
their usual spellings, paths that do not start with ``-``) is parsed here and run without
Typer (:func:`check_arguments`); it writes the same bytes and exits with the same code as
through Typer (``tests/test_startup.py`` compares both over a table of command lines).
The options it knows are the ``check`` command's own (:data:`bbox_lark.cli.console.CHECK_OPTIONS`,
from which the Typer command is declared too).

May import every subpackage; nothing imports it (``tools/layers.py``). It declares and
renders: the work is the library's, and an error of the library's spine becomes one line and
its exit code in one place (:class:`bbox_lark.cli.options.Group`).
"""

import contextlib
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from bbox_lark.cli.console import CHECK_OPTIONS, EXIT_USAGE, OutputFormat, err, run_check, safe


def _escape_unencodable_output() -> None:
    """Text the terminal's encoding cannot show (``→`` under ``PYTHONIOENCODING=latin-1``)
    is written as a backslash escape instead of ending the command in a traceback."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # A closed or detached stream has nothing to protect.
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


#: ``check``'s options by spelling: a flag gives (parameter, value), an option that takes a
#: value gives its declaration.
_FLAGS = {spelling: (o.name, value) for o in CHECK_OPTIONS for spelling, value in o.flags.items()}
_VALUED = {spelling: o for o in CHECK_OPTIONS if not o.flags for spelling in o.spellings}


def check_arguments(argv: list[str]) -> dict[str, Any] | None:
    """The parameters of :func:`run_check` for ``argv`` (without the program name) when it
    is a plain ``check`` command line, converted as Typer converts them; None for anything
    else (another command, ``--help``, an unknown or repeated option, a value that starts
    with ``-`` or is empty, a number that is not plain digits, no path, a shell-completion
    request...): Typer then parses it, errors and help included."""
    if not argv or argv[0] != "check":
        return None
    if any(key.startswith("_") and key.endswith("_COMPLETE") for key in os.environ):
        return None
    values: dict[str, Any] = {}
    paths: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        if arg == "-" or not arg.startswith("-"):
            paths.append(arg)
            continue
        name, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        flag = _FLAGS.get(name)
        if flag is not None and not equals:
            if flag[0] in values:
                return None
            values[flag[0]] = flag[1]
            continue
        option = _VALUED.get(name)
        if option is None:
            return None
        key, kind = option.name, option.kind
        if not equals:
            value = next(args, "")
        if not value or value.startswith("-"):
            return None
        if kind == "list":
            values.setdefault(key, []).append(value)
            continue
        if key in values:
            return None
        if kind == "format":
            if value not in OutputFormat.__members__.values():
                return None
            values[key] = OutputFormat(value)
        elif kind == "int":
            if not (value.isascii() and value.isdigit()):
                return None
            values[key] = int(value)
        elif kind == "path":
            values[key] = Path(value)
        else:
            values[key] = value
    if not paths:
        return None
    return {"paths": paths, **values}


def _run_check(arguments: dict[str, Any]) -> NoReturn:
    """:func:`run_check`, ending as the Typer application ends a command."""
    try:
        code = run_check(**arguments)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except EOFError:  # as Typer's main: an empty line and "Aborted!" on stderr, exit 1
        from typer import _click, core

        _click.echo(file=sys.stderr)
        if core.HAS_RICH and core.DEFAULT_MARKUP_MODE is not None:
            from typer import rich_utils

            rich_utils.rich_abort_error()
        else:
            _click.echo("Aborted!", file=sys.stderr)
        raise SystemExit(1) from None
    except OSError as error:
        import errno

        if error.errno != errno.EPIPE:
            raise
        from typer._click.utils import PacifyFlushWrapper

        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        raise SystemExit(1) from None
    raise SystemExit(code)


def _warm_up() -> None:
    """Load what every check run needs (the check modules, the Lark parser and its line
    driver, the check families) with the cyclic garbage collector paused, then put all of it
    out of the collector's sight (``gc.freeze``). Those thousands of objects live as long as
    the process: collections that walk them while they are made are wasted (~7 ms of
    ``check``'s start-up), and ``--jobs`` workers, forked later, leave their pages shared.
    A failure here is left to the run itself, which reports it where it always did."""
    import gc

    if not gc.isenabled():
        return
    gc.disable()
    try:
        from bbox_lark.checks import registry
        from bbox_lark.checks.workflow import check_paths  # noqa: F401
        from bbox_lark.cli.check_output import render  # noqa: F401
        from bbox_lark.files.config import resolver_from_options  # noqa: F401  (the run's modules)
        from bbox_lark.syntax.parser import line_driver

        line_driver()
        registry()
    except Exception:  # pragma: no cover - the run meets it again and reports it
        pass
    finally:
        gc.enable()
    gc.freeze()


def main() -> None:
    """Console-script entry point. A bug that escapes every command's own handling still
    ends in one clear line and exit 2, never a traceback (the per-file handling in
    :mod:`bbox_lark.checks.workflow` keeps ``check`` going file by file)."""
    _escape_unencodable_output()
    try:
        arguments = check_arguments(sys.argv[1:])
        if arguments is not None:
            _warm_up()
            _run_check(arguments)
        from bbox_lark.cli.commands import app

        app()
    except Exception as error:  # the last resort: the bug is ours, say so
        from bbox_lark.checks.workflow import internal_error

        err.print("[bold red]error:[/] ", end="")
        err.print(safe(internal_error(error).message), markup=False)
        raise SystemExit(EXIT_USAGE) from None


def __getattr__(name: str) -> Any:
    """The Typer application (``app``) and the other names of :mod:`bbox_lark.cli.commands`,
    imported on first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    from importlib import import_module

    # import_module, not `from bbox_lark.cli import commands`: that asks this function first.
    commands = import_module("bbox_lark.cli.commands")
    try:
        return getattr(commands, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
