"""The commands that read and inspect: ``check``, ``parse``, ``stats``, ``explain``, ``docs``."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bbox_lark.cli.console import (
    CHECK_OPTIONS,
    EXIT_FINDINGS,
    EXIT_OK,
    ProgressBar,
    errors_exit,
    isatty,
    out,
    print_marked,
    run_check,
    safe,
    write_json,
    write_out,
)
from bbox_lark.cli.options import (
    with_options,
)
from bbox_lark.files.inputs import is_dir, read_input

if TYPE_CHECKING:
    pass


from bbox_lark.cli.commands.base import (
    ConfigFile,
    Exclude,
    ExtendExclude,
    Isolated,
    MaxLine,
    app,
    fail_usage,
    max_line_option,
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


def _read_one(file: str) -> tuple[str, bytes]:
    """The shown name and bytes of one FILE argument (``-`` is stdin); exits 2 when the path
    is missing, unreadable or a directory."""
    if is_dir(file):
        raise fail_usage(f"{file}: is a directory; give one file (or - for stdin)")
    data = read_input(file)
    return ("<stdin>" if file == "-" else safe(file)), data


@app.command("parse")
def parse_command(
    file: Annotated[str, typer.Argument(help="A bbox file, or - for stdin.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON (docs/schema/parse.schema.json).")] = False,
    header_only: Annotated[bool, typer.Option("--header", help="Only the header.")] = False,
    body_only: Annotated[bool, typer.Option("--body", help="Only the body.")] = False,
    max_line: MaxLine = None,
) -> None:
    """Show every line with its parsed kind, name, fields and result."""
    from bbox_lark.api import parse
    from bbox_lark.cli.render import in_header, parse_rows
    from bbox_lark.syntax.jsonout import diagnostic_to_json, document_to_json

    if header_only and body_only:
        raise fail_usage("--header and --body exclude each other; give one or neither")
    max_line = max_line_option(max_line)
    shown, data = _read_one(file)
    document = parse(data, path=None if file == "-" else Path(file), max_line=max_line)
    header, body = not body_only, not header_only
    if as_json:
        value = document_to_json(document, header=header, body=body, diagnostics=False)
        value["diagnostics"] = [
            diagnostic_to_json(d)
            for d in document.diagnostics
            if (header if in_header(document, d) else body)  # findings about the part shown
        ]
        write_json({"path": shown, **value})
    else:
        for row in parse_rows(document, header=header, body=body):
            out.print(row)
    raise typer.Exit(errors_exit(document.diagnostics, shown))


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
    import difflib

    from bbox_lark.checks import registry
    from bbox_lark.cli.docsgen import check_section, code_table, find_check

    if list_all:
        if code is not None:
            raise fail_usage("give a CODE or --list, not both")
        codes = list(registry().values())
        if as_json:
            keys = ("code", "name", "severity", "summary", "fix", "retired")
            write_json([{key: getattr(info, key) for key in keys} for info in codes])
        else:
            write_out(code_table(codes))
        raise typer.Exit(EXIT_OK)
    if as_json:
        raise fail_usage("--json goes with --list")
    if code is None:
        raise fail_usage("give a diagnostic CODE (or its name), or --list for every code")
    info = find_check(code)
    if info is None:
        known = [*registry(), *(i.name for i in registry().values())]
        close = difflib.get_close_matches(code.upper() if code[:1].isalpha() else code, known, n=3)
        close += [c for c in difflib.get_close_matches(code.lower(), known, n=3) if c not in close]
        hint = (
            f"; did you mean {', '.join(close)}?"
            if close
            else "; `bbox-lark explain --list` lists every code"
        )
        raise fail_usage(f"unknown diagnostic code {code!r}{hint}")
    out.print(check_section(info).rstrip("\n"), markup=False)


@app.command()
def docs(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder to write into.")] = Path("docs"),
    check_only: Annotated[
        bool, typer.Option("--check", help="Write nothing; exit 1 when a file is missing or stale.")
    ] = False,
) -> None:
    """Generate checks.md (from the check registry) and grammar.html (railroad diagrams)."""
    from bbox_lark.cli.docsgen import stale_files, write_docs

    if check_only:
        if not out_dir.is_dir():
            print_marked(
                "[red]✗[/] ",
                f"{safe(str(out_dir))}: no such folder; --check compares the generated pages of a"
                " checkout's docs folder (run it there, or give --out DIR)",
            )
            raise typer.Exit(EXIT_FINDINGS)
        found = stale_files(out_dir)
        for path, why in found:
            print_marked("[red]✗[/] ", f"{safe(str(path))} is {why}; run `bbox-lark docs --out {out_dir}`")
        raise typer.Exit(EXIT_FINDINGS if found else EXIT_OK)
    if out_dir.exists() and not out_dir.is_dir():
        raise fail_usage(f"{out_dir}: is not a directory")
    try:
        written = write_docs(out_dir)
    except OSError as error:
        raise fail_usage(f"{out_dir}: cannot write: {error.strerror or error}") from None
    for path in written:
        out.print(f"wrote {path}", markup=False)
