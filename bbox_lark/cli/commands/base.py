"""The Typer application (:data:`app`) and what every command shares: the options declared as
annotated types, the usage failure, finding inputs, the version line and the root callback.
The commands themselves are in the sibling modules (:mod:`bbox_lark.cli.commands`)."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bbox_lark.cli.console import (
    CONFIG,
    EXCLUDE,
    EXIT_OK,
    EXIT_USAGE,
    EXTEND_EXCLUDE,
    ISOLATED,
    MAX_LINE,
    out,
    print_error,
    say,
)
from bbox_lark.cli.options import (
    Group,
    typer_option,
)
from bbox_lark.syntax.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.files.discover import FoundInput
    from bbox_lark.files.writepolicy import WriteVerdict


app = typer.Typer(
    name="bbox-lark",
    cls=Group,
    help="Check, inspect, format and convert BlackBox (bbox/1) session logs.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


MaxLine = Annotated[int | None, typer_option(MAX_LINE)]
ConfigFile = Annotated[Path | None, typer_option(CONFIG)]
Isolated = Annotated[bool, typer_option(ISOLATED)]
Exclude = Annotated[list[str] | None, typer_option(EXCLUDE)]
ExtendExclude = Annotated[list[str] | None, typer_option(EXTEND_EXCLUDE)]
#: The options of every command that searches folders as ``check`` does (``fmt``, ``fix``,
#: ``stats``, ``convert`` over many files): :func:`find_inputs_or_exit` takes them as they come.
DISCOVERY = (MAX_LINE, CONFIG, ISOLATED, EXCLUDE, EXTEND_EXCLUDE)
#: The PATHS argument of every command that searches folders.
Paths = Annotated[
    list[str],
    typer.Argument(help="Files, directories (every *.bbox, *.blackbox, *.rlog below) or - for stdin."),
]


def fail_usage(message: str) -> typer.Exit:
    """Print a usage or input problem and return the exit to raise."""
    print_error(message)
    return typer.Exit(EXIT_USAGE)


def find_inputs_or_exit(paths: list[str], **options: Any) -> "list[FoundInput]":
    """The inputs of a command that searches folders (:func:`bbox_lark.checks.workflow.find_inputs`);
    exits 2 on a bad option value or configuration file (one line naming it)."""
    from bbox_lark.checks.workflow import find_inputs

    return find_inputs(paths, **options)


def max_line_option(value: int | None) -> int:
    """``--max-line`` for a command that reads no configuration (exits 2 below 1)."""
    from bbox_lark.files.config import check_max_line

    if value is None:
        return DEFAULT_MAX_LINE
    return check_max_line(value, "--max-line")


def version_line() -> str:
    """``bbox-lark 0.2.0 (pure Python)``, or ``(compiled with mypyc)`` when the modules on
    ``check``'s line path are C extensions (``BBOX_LARK_COMPILE=1``; ``bbox_lark.syntax.parser`` is
    one of them). Found without importing the parser."""
    from importlib.machinery import EXTENSION_SUFFIXES
    from importlib.util import find_spec

    from bbox_lark import __version__

    spec = find_spec("bbox_lark.syntax.parser")
    origin = (spec.origin if spec else None) or ""
    build = "compiled with mypyc" if origin.endswith(tuple(EXTENSION_SUFFIXES)) else "pure Python"
    return f"bbox-lark {__version__} ({build})"


def _show_version(value: bool) -> None:
    if value:
        out.print(version_line(), markup=False)
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Check, inspect, format and convert BlackBox (bbox/1) session logs."""


#: ``fmt``/``fix``/``redact``: write in place; write even a refused file.
Write = Annotated[bool, typer.Option("--write", help="Rewrite each file in place (atomically).")]
Force = Annotated[bool, typer.Option("--force", help="Write even when the input cannot be read faithfully.")]

Jobs = Annotated[
    str | None,
    typer.Option(
        "--jobs",
        "-j",
        help="Read files in this many processes (a number, or auto: the number of cores, the default).",
        show_default=False,
    ),
]


def print_refused(shown: str, verdict: "WriteVerdict", what: str) -> None:
    """The line for an input the write policy refused (``what``: not written, ...)."""
    say((verdict.said(shown, what),))
