"""The ``bbox-lark`` command line: a thin shell over the library.

Every command parses its arguments, calls one library function and renders the result.
Exit codes (DECISIONS §8, §10): 0 clean, 1 findings that fail, 2 usage error or unreadable
input; over several files the highest code wins.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from bbox_lark.api import parse
from bbox_lark.ast import Diagnostic
from bbox_lark.inputs import InputError, collect_inputs, read_input
from bbox_lark.jsonout import diagnostic_to_json
from bbox_lark.source import DEFAULT_MAX_LINE

app = typer.Typer(
    name="bbox-lark",
    help="Check, inspect, format and convert BlackBox (bbox/1) session logs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    github = "github"


def fail_usage(message: str) -> typer.Exit:
    """Print a usage or input problem and return the exit to raise."""
    err.print(f"[bold red]error:[/] {message}", markup=True)
    return typer.Exit(EXIT_USAGE)


def _fails(diagnostics: list[Diagnostic], strict: bool) -> bool:
    failing = ("error", "warning") if strict else ("error",)
    return any(d.severity in failing for d in diagnostics)


_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_GITHUB = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_github(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


@app.callback()
def _root() -> None:
    """Check, inspect, format and convert BlackBox (bbox/1) session logs."""


@app.command()
def check(
    paths: Annotated[
        list[str],
        typer.Argument(help="Files, directories (every *.bbox, *.blackbox, *.rlog below) or - for stdin."),
    ],
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too (exit 1).")] = False,
    output: Annotated[
        OutputFormat,
        typer.Option("--format", "-f", help="text (path:line:col: CODE message), json or github."),
    ] = OutputFormat.text,
    blobs: Annotated[
        Path | None,
        typer.Option(
            help="Verify blob pointers against this folder (default: .bbox-blobs/ beside the file)."
        ),
    ] = None,
    select: Annotated[
        list[str] | None, typer.Option(help="Only report these codes (or code prefixes, e.g. W0).")
    ] = None,
    ignore: Annotated[list[str] | None, typer.Option(help="Never report these codes (or prefixes).")] = None,
    max_line: Annotated[int, typer.Option(help="Longest line parsed, in characters.")] = DEFAULT_MAX_LINE,
) -> None:
    """Validate bbox/1 files and report every finding with its line and column."""
    try:
        inputs = collect_inputs(paths)
    except InputError as error:
        raise fail_usage(str(error)) from None
    code = EXIT_OK
    report: list[dict[str, object]] = []
    totals = {"error": 0, "warning": 0, "info": 0}
    for item in inputs:
        try:
            data = read_input(item)
        except InputError as error:
            err.print(f"[bold red]error:[/] {error}")
            report.append({"path": item, "readable": False, "error": str(error), "diagnostics": []})
            code = max(code, EXIT_USAGE)
            continue
        path = None if item == "-" else Path(item)
        document = parse(data, path=path, blobs=blobs, max_line=max_line, select=select, ignore=ignore)
        diagnostics = list(document.diagnostics)
        for diagnostic in diagnostics:
            totals[diagnostic.severity] += 1
        if _fails(diagnostics, strict):
            code = max(code, EXIT_FINDINGS)
        shown = "<stdin>" if item == "-" else item
        if output is OutputFormat.json:
            report.append(
                {"path": shown, "readable": True, "diagnostics": [diagnostic_to_json(d) for d in diagnostics]}
            )
        elif output is OutputFormat.github:
            for d in diagnostics:
                kind = _GITHUB[d.severity]
                title = f"{d.code} {d.name}"
                where = f"file={shown},line={d.line},col={d.col},title={title}"
                out.print(f"::{kind} {where}::{_escape_github(d.message)}", markup=False)
        else:
            for d in diagnostics:
                out.print(f"{shown}:{d.line}:{d.col}: ", end="", markup=False)
                out.print(f"[{_STYLE[d.severity]}]{d.code}[/] ", end="")
                out.print(d.message, markup=False)
    if output is OutputFormat.json:
        document_json = {
            "version": 1,
            "exit_code": code,
            "strict": strict,
            "files": report,
            "totals": {**totals, "files": len(inputs)},
        }
        sys.stdout.write(json.dumps(document_json, ensure_ascii=False, indent=2) + "\n")
    elif output is OutputFormat.text:
        summary = (
            f"{len(inputs)} file(s): {totals['error']} error(s), {totals['warning']} warning(s),"
            f" {totals['info']} info"
        )
        err.print(("[red]✗[/] " if code else "[green]✓[/] ") + summary)
    raise typer.Exit(code)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
