"""The commands that read and inspect: ``check``, ``parse``, ``stats``, ``explain``, ``docs``."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bbox_lark.cli.console import (
    CHECK_OPTIONS,
    EXIT_OK,
    ProgressBar,
    isatty,
    out,
    run_check,
    say,
    write_json,
    write_out,
)
from bbox_lark.cli.options import (
    with_options,
)

if TYPE_CHECKING:
    pass


from bbox_lark.cli.commands.base import (
    ConfigFile,
    Exclude,
    ExtendExclude,
    Isolated,
    MaxLine,
    app,
)


@app.command()
@with_options(*CHECK_OPTIONS)
def check(
    paths: Annotated[
        list[str],
        typer.Argument(help="Files, directories (every *.bbox, *.blackbox, *.rlog below) or - for stdin."),
    ],
    **options: Any,
) -> None:
    """Validate bbox/1 files and report every finding with its line and column."""
    raise typer.Exit(run_check(paths, **options))


# -- inspecting: parse, stats, explain, docs --------------------------------------------


@app.command("parse")
def parse_command(
    file: Annotated[str, typer.Argument(help="A bbox file, or - for stdin.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON (docs/schema/parse.schema.json).")] = False,
    header_only: Annotated[bool, typer.Option("--header", help="Only the header.")] = False,
    body_only: Annotated[bool, typer.Option("--body", help="Only the body.")] = False,
    max_line: MaxLine = None,
) -> None:
    """Show every line with its parsed kind, name, fields and result."""
    from bbox_lark.checks.workflow import parse_path
    from bbox_lark.cli.render import parse_rows

    parsed = parse_path(file, header_only=header_only, body_only=body_only, max_line=max_line)
    if as_json:
        write_json(parsed.json())
    else:
        for row in parse_rows(parsed.document, header=parsed.header, body=parsed.body):
            out.print(row)
    say(parsed.said)
    raise typer.Exit(parsed.exit_code)


@app.command()
def stats(
    paths: Annotated[
        list[str],
        typer.Argument(help="Files, directories (every *.bbox, *.blackbox, *.rlog below) or - for stdin."),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="JSON (docs/schema/stats.schema.json).")] = False,
    max_line: MaxLine = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
    exclude: Exclude = None,
    extend_exclude: ExtendExclude = None,
    jobs: Annotated[
        str | None,
        typer.Option(
            "--jobs",
            "-j",
            help="Count files in this many processes (a number, or auto: the number of cores,"
            " the default). The output does not depend on it.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Count lines, events, calls and their outcomes, steps, ids, blobs, redactions, usage
    and cost (stated, and estimated); over several files, each file and the totals."""
    from bbox_lark.cli.render import render_stats
    from bbox_lark.numbers.stats_run import stats_paths

    bar = ProgressBar(enabled=isatty(sys.stderr) and (as_json or not isatty(sys.stdout)), verb="counting")
    with bar:
        run = stats_paths(
            paths,
            jobs=jobs,
            progress=bar.update,
            config=config,
            isolated=isolated,
            exclude=exclude,
            extend_exclude=extend_exclude,
            max_line=max_line,
        )
    render_stats(run, as_json=as_json)
    raise typer.Exit(run.exit_code)


@app.command()
def explain(
    code: Annotated[
        str | None, typer.Argument(help="A diagnostic code (W003) or its name (unknown-line).")
    ] = None,
    list_all: Annotated[
        bool, typer.Option("--list", help="List every code with its severity, name and summary.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --list: a JSON list (code, name, severity, summary, fix).")
    ] = False,
) -> None:
    """Print what a diagnostic code means, why, what to do, and a failing and a passing example;
    --list lists every code."""
    from bbox_lark.checks import registry
    from bbox_lark.cli.docsgen import check_section, code_list, code_table, explain_check

    info = explain_check(code, list_all=list_all, as_json=as_json)
    if info is None:  # --list
        if as_json:
            write_json(code_list())
        else:
            write_out(code_table(registry().values()))
        raise typer.Exit(EXIT_OK)
    out.print(check_section(info).rstrip("\n"), markup=False)


@app.command()
def docs(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder to write into.")] = Path("docs"),
    check_only: Annotated[
        bool, typer.Option("--check", help="Write nothing; exit 1 when a file is missing or stale.")
    ] = False,
) -> None:
    """Generate checks.md (from the check registry) and grammar.html (railroad diagrams)."""
    from bbox_lark.cli.docsgen import check_docs, write_docs

    if check_only:
        found = check_docs(out_dir)
        say(found.said)
        raise typer.Exit(found.exit_code)
    for path in write_docs(out_dir):
        out.print(f"wrote {path}", markup=False)
