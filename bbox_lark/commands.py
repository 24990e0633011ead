"""The ``bbox-lark`` commands as a Typer application (:data:`app`).

:mod:`bbox_lark.cli` is the entry point and holds what the commands share (output, the
check run, the progress bar); it imports this module only for a command line its fast
path does not take (``bbox-lark check`` with plain options never imports Typer). Like
:mod:`bbox_lark.cli`, this module has no ``from __future__ import annotations``: Typer
evaluates string annotations with ``compile`` and ``eval`` on every run.
"""

import inspect
import os
import re
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from typer.core import TyperCommand, TyperGroup

from bbox_lark.cli import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    OutputFormat,
    _errors_exit,
    _print_error,
    _print_findings,
    _safe,
    _usage_error,
    _write_json,
    _write_out,
    err,
    out,
    run_check,
)
from bbox_lark.inputs import InputError, read_input
from bbox_lark.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.discover import Input


def _tidy_help(params: list[Any]) -> list[Any]:
    """Help pages without type noise: a flag shows no ``<bool>`` and a list of arguments no
    ``<list[str]>`` (its name already ends in ``...``); a repeatable option shows its item
    type. Applied to every command's parameters (help option included) as the group hands
    the command out, so a new option needs nothing here."""
    for param in params:
        if getattr(param, "metavar", None) is not None:
            continue
        if getattr(param, "is_flag", False) and not getattr(param, "count", False):
            param.metavar = ""
        elif getattr(param, "multiple", False) and hasattr(param, "display_type"):
            try:
                label = str(param.display_type(None))
            except Exception:  # another Typer: leave its help as it is
                continue
            param.metavar = re.sub(r"^<list\[(.*)\]>$", r"<\1>", label)
        elif getattr(param, "param_type_name", "") == "argument" and param.nargs != 1:
            setattr(param, "display_type_rich", lambda ctx: None)  # noqa: B010
    return params


class _Group(TyperGroup):
    """The root command: tidies each command's help page (:func:`_tidy_help`, paragraphs
    reflowed) as it hands the command out."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _tidy_help(super().get_params(ctx))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _tidy_help(command.get_params(ctx))
            if command.help:  # docstring paragraphs reflow to the terminal's width
                paragraphs = inspect.cleandoc(command.help).split("\n\n")
                command.help = "\n\n".join(" ".join(p.split()) for p in paragraphs)
        return command


app = typer.Typer(
    name="bbox-lark",
    cls=_Group,
    help="Check, inspect, format and convert BlackBox (bbox/1) session logs.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


#: ``--max-line``, shared by every command that parses.
MaxLine = Annotated[
    int | None,
    typer.Option(
        help="Longest line parsed, in characters (default 1048576; check, fmt, fix and stats read"
        " max-line from the configuration).",
        show_default=False,
    ),
]
#: The configuration and discovery options of ``check``, ``fmt``, ``fix`` and ``stats``
#: (docs/configuration.md).
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="Use this configuration file (a bbox-lark.toml, or a pyproject.toml with a tool.bbox-lark"
        " table) for every path instead of searching for one.",
    ),
]
Isolated = Annotated[bool, typer.Option("--isolated", help="Read no configuration file.")]
Exclude = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        help="Skip these paths when searching folders (gitignore-style patterns, repeatable or"
        " comma-separated); replaces the default and configured exclude.",
    ),
]
ExtendExclude = Annotated[
    list[str] | None,
    typer.Option("--extend-exclude", help="Skip these paths too (gitignore-style patterns)."),
]


def fail_usage(message: str) -> typer.Exit:
    """Print a usage or input problem and return the exit to raise."""
    _usage_error(message)
    return typer.Exit(EXIT_USAGE)


def _find_inputs(
    paths: list[str],
    *,
    config: Path | None,
    isolated: bool,
    exclude: list[str] | None,
    extend_exclude: list[str] | None,
    max_line: int | None,
) -> "list[Input]":
    """The inputs of a command that searches folders, each with its settings; exits 2 on a
    bad option value or configuration file (one line naming it)."""
    from bbox_lark.config import ConfigError, resolver_from_options
    from bbox_lark.discover import discover

    try:
        resolver = resolver_from_options(
            config=config,
            isolated=isolated,
            exclude=exclude,
            extend_exclude=extend_exclude,
            max_line=max_line,
        )
        return discover(paths, resolver)
    except ConfigError as error:
        raise fail_usage(str(error)) from None


def _max_line(value: int | None) -> int:
    """``--max-line`` for a command that reads no configuration (exits 2 below 1)."""
    from bbox_lark.config import ConfigError, check_max_line

    if value is None:
        return DEFAULT_MAX_LINE
    try:
        return check_max_line(value, "--max-line")
    except ConfigError as error:
        raise fail_usage(str(error)) from None


def _show_version(value: bool) -> None:
    if value:
        from bbox_lark import __version__

        out.print(f"bbox-lark {__version__}", markup=False)
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


@app.command()
def check(
    paths: Annotated[
        list[str],
        typer.Argument(help="Files, directories (every *.bbox, *.blackbox, *.rlog below) or - for stdin."),
    ],
    strict: Annotated[
        bool | None,
        typer.Option(
            "--strict/--no-strict",
            help="Warnings fail too (exit 1); --no-strict overrides strict = true in the configuration.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        OutputFormat | None,
        typer.Option(
            "--output-format",
            "--format",
            "-f",
            help="full (the default on a terminal: each finding with its source line and what to do),"
            " concise (path:line:col: CODE message, the default otherwise; text is its old name),"
            " json, github, sarif or junit.",
            show_default=False,
        ),
    ] = None,
    statistics: Annotated[
        bool, typer.Option("--statistics", help="Count the findings per code instead of listing them.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print the findings only: no summary, no progress bar.")
    ] = False,
    exit_zero: Annotated[
        bool,
        typer.Option(
            "--exit-zero",
            help="Exit 0 even when findings fail (an unreadable input or a bbox-lark bug is still 2).",
        ),
    ] = False,
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
            help="Check files in this many processes (a number, or auto: the number of cores,"
            " the default). The output does not depend on it.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Validate bbox/1 files and report every finding with its line and column."""
    raise typer.Exit(
        run_check(
            paths,
            strict=strict,
            output=output,
            statistics=statistics,
            quiet=quiet,
            exit_zero=exit_zero,
            blobs=blobs,
            select=select,
            ignore=ignore,
            max_line=max_line,
            config=config,
            isolated=isolated,
            exclude=exclude,
            extend_exclude=extend_exclude,
            jobs=jobs,
        )
    )


# -- inspecting: parse, stats, explain, docs --------------------------------------------


def _read_one(file: str) -> tuple[str, bytes]:
    """The shown name and bytes of one FILE argument (``-`` is stdin); exits 2 when the path
    is missing, unreadable or a directory."""
    if file != "-" and Path(file).is_dir():
        raise fail_usage(f"{file}: is a directory; give one file (or - for stdin)")
    try:
        data = read_input(file)
    except InputError as error:
        raise fail_usage(str(error)) from None
    return ("<stdin>" if file == "-" else _safe(file)), data


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
    from bbox_lark.jsonout import diagnostic_to_json, document_to_json
    from bbox_lark.render import in_header, parse_rows

    if header_only and body_only:
        raise fail_usage("--header and --body exclude each other; give one or neither")
    max_line = _max_line(max_line)
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
        _write_json({"path": shown, **value})
    else:
        for row in parse_rows(document, header=header, body=body):
            out.print(row)
    raise typer.Exit(_errors_exit(document.diagnostics, shown))


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
    from bbox_lark.config import ConfigError, cli_overrides
    from bbox_lark.discover import names_one_file
    from bbox_lark.render import stats_group
    from bbox_lark.stats import Stats, combine_stats, stats_inputs, stats_run_json

    inputs = _find_inputs(
        paths,
        config=config,
        isolated=isolated,
        exclude=exclude,
        extend_exclude=extend_exclude,
        max_line=max_line,
    )
    try:
        jobs_value = cli_overrides(jobs=jobs).jobs
    except ConfigError as error:
        raise fail_usage(str(error)) from None
    if jobs_value is None and inputs:  # the configuration's `jobs`, as `check` reads it
        jobs_value = inputs[0].settings.jobs
    one_file = names_one_file(paths)
    code = EXIT_OK
    results: list[tuple[str, Stats]] = []
    unreadable: list[dict[str, str]] = []
    for item in stats_inputs(inputs, jobs=jobs_value):
        shown = _safe("<stdin>" if item.path == "-" else item.path)
        if item.stats is None:
            problem = item.problem or "unreadable"
            if one_file:
                raise fail_usage(problem)
            _print_error(problem)
            unreadable.append({"path": shown, "error": _safe(problem)})
            code = EXIT_USAGE
            continue
        results.append((shown, item.stats))
        if not as_json:
            if len(results) > 1:
                out.print()
            out.print(stats_group(item.stats, shown))
        code = max(code, _errors_exit(item.errors, shown))
    if one_file and results:
        if as_json:
            shown, result = results[0]
            _write_json({"path": shown, **result.to_json()})
    elif as_json:
        _write_json(stats_run_json(results, unreadable))
    elif results:
        out.print()
        out.print(
            stats_group(
                combine_stats([result for _, result in results]), f"{len(results)} file(s)", title="Total"
            )
        )
    raise typer.Exit(code)


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
    from bbox_lark.docsgen import check_section, code_table, find_check

    if list_all:
        if code is not None:
            raise fail_usage("give a CODE or --list, not both")
        codes = list(registry().values())
        if as_json:
            keys = ("code", "name", "severity", "summary", "fix", "retired")
            _write_json([{key: getattr(info, key) for key in keys} for info in codes])
        else:
            _write_out(code_table(codes))
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
    from bbox_lark.docsgen import generated_files, write_docs

    if check_only:
        stale = []
        for name, content in generated_files().items():
            path = out_dir / name
            try:
                current = path.read_text(encoding="utf-8")
            except OSError:
                current = None
            if current != content:
                stale.append(str(path))
        for path_text in stale:
            err.print("[red]✗[/] ", end="")
            err.print(f"{path_text} is stale; run `bbox-lark docs --out {out_dir}`", markup=False)
        raise typer.Exit(EXIT_FINDINGS if stale else EXIT_OK)
    if out_dir.exists() and not out_dir.is_dir():
        raise fail_usage(f"{out_dir}: is not a directory")
    try:
        written = write_docs(out_dir)
    except OSError as error:
        raise fail_usage(f"{out_dir}: cannot write: {error.strerror or error}") from None
    for path in written:
        out.print(f"wrote {path}", markup=False)


# -- formatting: fmt ---------------------------------------------------------------------


@app.command("fmt")
def fmt_command(
    paths: Annotated[
        list[str],
        typer.Argument(help="Files, directories (every *.bbox, *.blackbox, *.rlog below) or - for stdin."),
    ],
    check_only: Annotated[
        bool, typer.Option("--check", help="Write nothing; list the files that would change and exit 1.")
    ] = False,
    diff: Annotated[
        bool,
        typer.Option(
            "--diff", help="Write nothing; print a unified diff instead (exit 1 when it shows a change)."
        ),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Rewrite files even when they cannot be read faithfully.")
    ] = False,
    max_line: MaxLine = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
    exclude: Exclude = None,
    extend_exclude: ExtendExclude = None,
) -> None:
    """Rewrite files in canonical form (docs/fmt.md).

    → arrows, one space between words and fields, no trailing whitespace; the header,
    continuation lines, quoted text and line endings are kept. --check and --diff never
    write (exit 1 when a file would change); - reads stdin and writes stdout.

    A file that cannot be read faithfully (invalid UTF-8, NUL, a line over the limit, an
    unterminated quote in a call, an unreadable header) is left alone unless --force; other
    errors are shown and the file is formatted."""
    from bbox_lark.atomic import write_atomic
    from bbox_lark.fix.framework import unified_diff
    from bbox_lark.printer import format_text
    from bbox_lark.source import encode
    from bbox_lark.writepolicy import write_verdict

    inputs = _find_inputs(
        paths,
        config=config,
        isolated=isolated,
        exclude=exclude,
        extend_exclude=extend_exclude,
        max_line=max_line,
    )
    code = EXIT_OK
    counts = {"changed": 0, "unchanged": 0, "refused": 0}
    for item in inputs:
        shown = _safe(item.shown)
        try:
            if item.problem is not None:
                raise InputError(item.problem)
            data = read_input(item.path)
        except InputError as error:
            _print_error(str(error))
            code = max(code, EXIT_USAGE)
            continue
        path = None if item.stdin else Path(item.path)
        result = format_text(data, path=path, max_line=item.settings.max_line)
        if check_only or diff:
            counts["changed" if result.changed else "unchanged"] += 1
            if result.changed and diff:
                _write_diff(unified_diff(result.old, result.new, shown))
            if result.changed and check_only:
                err.print(f"would reformat {shown}", markup=False)
            if result.changed:
                code = max(code, EXIT_FINDINGS)
            continue
        verdict = write_verdict(result.document.diagnostics, settings=item.settings, path=path, force=force)
        _print_findings(shown, verdict.errors)
        if verdict.refused:
            err.print("[red]✗[/] ", end="")
            err.print(
                f"{shown}: {len(verdict.refusing)} error(s); not formatted (fix them first, or pass --force)",
                markup=False,
            )
            counts["refused"] += 1
            code = max(code, EXIT_FINDINGS)
            continue
        if verdict.refusing:
            err.print(
                f"! {shown}: {len(verdict.refusing)} error(s); formatted anyway (--force)", markup=False
            )
        counts["changed" if result.changed else "unchanged"] += 1
        if item.stdin:
            _write_text(result.new)  # stdout, byte for byte
        elif result.changed:
            try:
                write_atomic(item.path, encode(result.new))
            except OSError as error:
                _print_error(f"{shown}: cannot write: {error.strerror or error}")
                code = max(code, EXIT_USAGE)
                continue
            err.print(f"reformatted {shown}", markup=False)
    would = "would be " if check_only or diff else ""
    summary = f"{counts['changed']} file(s) {would}reformatted, {counts['unchanged']} unchanged"
    if counts["refused"]:
        summary += f", {counts['refused']} not formatted (errors)"
    err.print(summary, markup=False)
    raise typer.Exit(code)


# -- fixing: fix ------------------------------------------------------------------------


def _with_fixer_flags(command: Callable[..., None]) -> Callable[..., None]:
    """Give ``command`` one ``--NAME`` flag per registered fixer (``bbox_lark.fix.FIXERS``),
    passed to it in ``**chosen``: a new fixer needs no change here."""
    from bbox_lark.fix import FIXERS

    signature = inspect.signature(command, eval_str=True)
    keyword = inspect.Parameter.KEYWORD_ONLY
    own = [p.replace(kind=keyword) for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    flags = [
        inspect.Parameter(
            name.replace("-", "_"),
            keyword,
            default=False,
            annotation=Annotated[bool, typer.Option(f"--{name}", help=fixer.description)],
        )
        for name, fixer in FIXERS.items()
    ]
    setattr(command, "__signature__", signature.replace(parameters=[own[0], *flags, *own[1:]]))  # noqa: B010
    return command


def _write_diff(diff: str) -> None:
    """The diff on stdout, byte for byte (CRLF and undecodable input bytes included), so that
    ``patch`` and ``git apply`` take it; coloured on a terminal (``bbox_lark.ansi``)."""
    from bbox_lark.ansi import color_diff, wants_color
    from bbox_lark.source import encode

    if wants_color(sys.stdout):
        diff = color_diff(diff)
    sys.stdout.flush()
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:  # a text-only stream (tests capturing stdout)
        sys.stdout.write(diff.encode("utf-8", "backslashreplace").decode("utf-8"))
    else:
        stream.write(encode(diff))
        stream.flush()


@app.command("fix")
@_with_fixer_flags
def fix_command(
    paths: Annotated[
        list[str],
        typer.Argument(help="Files, directories (every *.bbox, *.blackbox, *.rlog below) or - for stdin."),
    ],
    write: Annotated[bool, typer.Option("--write", help="Rewrite each file in place (atomically).")] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the fixed file to this path (atomically); one input only."
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Write even when the input cannot be read faithfully.")
    ] = False,
    max_line: MaxLine = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
    exclude: Exclude = None,
    extend_exclude: ExtendExclude = None,
    **chosen: bool,
) -> None:
    """Repair files with the chosen fixers (docs/fix.md).

    A dry run by default: prints a unified diff and what would change; --write (each file
    in place) or --output (one file) applies it."""
    from bbox_lark.atomic import write_atomic
    from bbox_lark.fix import FIXERS, FixError, apply_fixes
    from bbox_lark.source import encode
    from bbox_lark.writepolicy import write_verdict

    fixers = [fixer for name, fixer in FIXERS.items() if chosen.get(name.replace("-", "_"))]
    if not fixers:
        raise fail_usage("choose at least one fixer: " + ", ".join(f"--{name}" for name in FIXERS))
    if write and output is not None:
        raise fail_usage("--write and --output exclude each other; give one or neither")
    if write and "-" in paths:
        raise fail_usage("--write rewrites FILE in place; with - (stdin) use --output PATH")
    inputs = _find_inputs(
        paths,
        config=config,
        isolated=isolated,
        exclude=exclude,
        extend_exclude=extend_exclude,
        max_line=max_line,
    )
    if output is not None and len(inputs) != 1:
        raise fail_usage(
            f"--output writes one file, but {len(inputs)} inputs were given; --write rewrites each in place"
        )
    code = EXIT_OK
    totals = {fixer.name: 0 for fixer in fixers}
    dry_changes = False
    for item in inputs:
        shown = _safe(item.shown)
        try:
            if item.problem is not None:
                raise InputError(item.problem)
            data = read_input(item.path)
        except InputError as error:
            if len(inputs) == 1:
                raise fail_usage(str(error)) from None
            _print_error(str(error))
            code = max(code, EXIT_USAGE)
            continue
        path = None if item.stdin else Path(item.path)
        try:
            outcome = apply_fixes(data, fixers, path=path, label=shown, max_line=item.settings.max_line)
        except FixError as error:  # a fixer bug, never the input's fault: say so, write nothing
            err.print("[bold red]error:[/] ", end="")
            err.print(f"{shown}: {error}; nothing written", markup=False)
            code = max(code, EXIT_FINDINGS)
            continue
        verdict = write_verdict(outcome.document.diagnostics, settings=item.settings, path=path, force=force)
        target = path if write else output
        if target is not None and verdict.refused:
            _print_findings(shown, verdict.errors)
            err.print("[red]✗[/] ", end="")
            err.print(
                f"{shown}: {len(verdict.refusing)} error(s); not written (fix them first, or pass --force)",
                markup=False,
            )
            code = max(code, EXIT_FINDINGS)
            continue
        if target is None and outcome.diff:
            _write_diff(outcome.diff)
        for note in outcome.notes:
            err.print(f"{shown}:{note.line}:{note.col}: ", end="", markup=False)
            err.print("[cyan]note[/] ", end="")
            err.print(_safe(note.message), markup=False)
        _print_findings(shown, verdict.errors)
        for name, changed in outcome.changes.items():
            totals[name] += changed
        if len(inputs) == 1:
            for fixer in fixers:
                err.print("[green]✓[/] ", end="")
                err.print(fixer.summary(outcome.changes[fixer.name]), markup=False)
        if target is None:
            dry_changes = dry_changes or outcome.changed
            if verdict.refused:
                err.print("[red]✗[/] ", end="")
                err.print(
                    f"{shown}: {len(verdict.refusing)} error(s); --write would not write it"
                    " (fix them first, or pass --force)",
                    markup=False,
                )
                code = max(code, EXIT_FINDINGS)
            continue
        if verdict.refusing:
            err.print(f"! {shown}: {len(verdict.refusing)} error(s); written anyway (--force)", markup=False)
        if write and not outcome.changed:
            err.print(f"{shown}: nothing to change; not rewritten", markup=False)
            continue
        try:
            write_atomic(target, encode(outcome.new_text))
        except OSError as error:
            if len(inputs) == 1:
                raise fail_usage(f"{_safe(str(target))}: cannot write: {error.strerror or error}") from None
            _print_error(f"{_safe(str(target))}: cannot write: {error.strerror or error}")
            code = max(code, EXIT_USAGE)
            continue
        err.print(f"wrote {_safe(str(target))}", markup=False)
    if len(inputs) > 1:
        for fixer in fixers:
            err.print("[green]✓[/] ", end="")
            err.print(f"{fixer.summary(totals[fixer.name])} in {len(inputs)} files", markup=False)
    if not write and output is None and dry_changes:
        err.print("! Dry run: nothing written; --write or --output PATH applies it", markup=False)
    raise typer.Exit(code)


# -- converting: convert ------------------------------------------------------------------


def _write_text(text: str) -> None:
    """Converted text on stdout as UTF-8, byte for byte (undecodable input bytes, kept as
    lone surrogates, go out as the bytes they came from)."""
    from bbox_lark.source import encode

    sys.stdout.flush()
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:  # a text-only stream
        sys.stdout.write(text.encode("utf-8", "backslashreplace").decode("utf-8"))
    else:
        stream.write(encode(text))
        stream.flush()


def _format_names(writable: bool = False) -> str:
    """The registered formats' names (with ``writable``, only those ``--to`` can write)."""
    from bbox_lark.convert import formats

    return ", ".join(f.name for f in formats() if not writable or f.write is not None)


class _ConvertCommand(TyperCommand):
    """``convert``: its format options become flags (:func:`_format_options`) when the
    command is first parsed or shown, so that running another command imports no
    converter."""

    _extended = False

    def get_params(self, ctx: Any) -> list[Any]:
        if not self._extended:
            self._extended = True
            self.params.extend(_format_options())
            from typer.core import TyperOption

            from bbox_lark.convert import formats

            for param in self.params:  # --to and --from name the formats they take
                if isinstance(param, TyperOption) and param.name in ("to", "from_"):
                    able = (f for f in formats() if (f.write if param.name == "to" else f.read))
                    names = ", ".join(f.name for f in able)
                    param.help = f"{param.help} One of: {names}."
        return cast(list[Any], super().get_params(ctx))


def _format_options() -> list[Any]:
    """One click option per option a converter declares (``Format.options``), built by Typer
    from a signature: a new format or option needs no change here."""

    def options(**chosen: Any) -> None:  # pragma: no cover - never called
        del chosen

    setattr(options, "__signature__", _format_flags())  # noqa: B010
    holder = typer.Typer(add_completion=False)  # completion is the top-level command's
    holder.command()(options)
    return list(typer.main.get_command(holder).params)


def _format_flags() -> inspect.Signature:
    from bbox_lark.convert import formats

    keyword = inspect.Parameter.KEYWORD_ONLY
    declared: dict[str, list[tuple[str, Any]]] = {}
    for fmt in formats():
        for option in fmt.options:
            declared.setdefault(option.name, []).append((fmt.name, option))
    flags = []
    for name, owners in declared.items():
        option = owners[0][1]
        helps = " ".join(dict.fromkeys(o.help for _, o in owners))
        if option.choices:
            helps += f" One of: {', '.join(option.choices)}."
        annotation: Any = bool | None if isinstance(option.default, bool) else str | None
        flag = (
            option.flag if not isinstance(option.default, bool) else f"{option.flag}/--no-{option.flag[2:]}"
        )
        flags.append(
            inspect.Parameter(
                name,
                keyword,
                default=None,
                annotation=Annotated[annotation, typer.Option(flag, help=helps, show_default=False)],
            )
        )
    return inspect.Signature(flags)


def _without_var_keyword(command: Callable[..., None]) -> Callable[..., None]:
    """Hide ``**options`` from Typer: :class:`_ConvertCommand` adds those flags itself."""
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    setattr(command, "__signature__", signature.replace(parameters=own))  # noqa: B010
    return command


@app.command("convert", cls=_ConvertCommand)
@_without_var_keyword
def convert_command(
    file: Annotated[
        str, typer.Argument(help="The input file (a folder for folder formats), or - for stdin.")
    ],
    to: Annotated[
        str | None,
        typer.Option("--to", help="Output format (default: from the -o file name)."),
    ] = None,
    from_: Annotated[
        str | None,
        typer.Option("--from", help="Input format (default: from the file name, else the content)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write to this path (atomically; a folder for folder formats); - or none: stdout.",
        ),
    ] = None,
    report: Annotated[
        bool,
        typer.Option(
            "--report",
            help="Print the whole fidelity report on stderr: what was kept, moved to an extra,"
            " synthesized or dropped.",
        ),
    ] = False,
    report_json: Annotated[
        Path | None,
        typer.Option("--report-json", help="Write the fidelity report as JSON to this path (- for stderr)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Write even when the input cannot be read faithfully.")
    ] = False,
    max_line: MaxLine = None,
    **options: Any,
) -> None:
    """Convert between formats, streaming. What each keeps: docs/convert.md."""
    import io

    from bbox_lark.atomic import AtomicWriter
    from bbox_lark.convert import (
        ConvertError,
        Input,
        RefusedInputError,
        convert_stream,
        format_for_path,
        get_format,
    )
    from bbox_lark.writepolicy import write_verdict

    max_line = _max_line(max_line)
    if output is not None and str(output) == "-":
        output = None  # `-o -` is standard output
    if to is None:
        # A file name names a format that writes files (a folder format is named by --to).
        named = [f for f in format_for_path(output) if f.write and f.output == "text"] if output else []
        if len(named) != 1:
            raise fail_usage(f"give --to FORMAT (one of: {_format_names(writable=True)})")
        to = named[0].name
    try:
        target = get_format(to)
    except ConvertError as error:
        raise fail_usage(str(error)) from None
    if file != "-" and not Path(file).exists():
        raise fail_usage(f"{_safe(file)}: no such file or directory")
    shown = "<stdin>" if file == "-" else _safe(file)
    if report_json is not None and str(report_json) != "-":
        # Checked before converting: a report that cannot be written must not cost the output.
        where = report_json.parent
        if report_json.is_dir() or not where.is_dir() or not os.access(where, os.W_OK):
            raise fail_usage(f"{_safe(str(report_json))}: cannot write the report there")
    folder_out = target.output == "folder"
    if folder_out and output is None:
        raise fail_usage(f"{target.name} output is a folder: give -o DIR")
    writer: AtomicWriter | None = None
    if output is not None and not folder_out:
        try:
            writer = AtomicWriter(output)
        except OSError as error:
            raise fail_usage(f"{_safe(str(output))}: cannot write: {error.strerror or error}") from None
    # A folder is written to a staging folder beside it and its files moved in only when the
    # input is not refused, as a file is written atomically (DECISIONS §11).
    staging: Path | None = None
    if folder_out and output is not None:
        import tempfile

        try:
            if output.exists() and not output.is_dir():
                raise NotADirectoryError(20, "not a folder")
            staging = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
        except OSError as error:
            raise fail_usage(f"{_safe(str(output))}: cannot write: {error.strerror or error}") from None
    sys.stdout.flush()
    binary = writer.stream if writer is not None else getattr(sys.stdout, "buffer", None)
    text_out: Any
    if binary is not None:
        text_out = io.TextIOWrapper(binary, encoding="utf-8", errors="surrogateescape", newline="")
    else:  # a text-only stdout (tests capturing it)
        text_out = sys.stdout
    try:
        try:
            result = convert_stream(
                Input(file),
                None if folder_out else text_out,
                to=to,
                from_=from_,
                max_line=max_line,
                output_path=staging,
                **options,
            )
        except RefusedInputError as error:
            raise fail_usage(f"{shown}: {error}") from None
        except ConvertError as error:
            raise fail_usage(str(error)) from None
        except OSError as error:
            raise fail_usage(f"{shown}: cannot read: {error.strerror or error}") from None
        finally:
            if text_out is not sys.stdout:
                text_out.flush()
                text_out.detach()
        verdict = write_verdict(result.diagnostics, force=force)
        if (writer is not None or staging is not None) and verdict.refused:
            if writer is not None:
                writer.discard()
            _print_findings(shown, verdict.errors)
            err.print("[red]✗[/] ", end="")
            err.print(
                f"{shown}: {len(verdict.refusing)} error(s); not written (fix them first, or pass --force)",
                markup=False,
            )
            raise typer.Exit(EXIT_FINDINGS)
        if writer is not None:
            try:
                writer.commit()
            except OSError as error:
                raise fail_usage(f"{_safe(str(output))}: cannot write: {error.strerror or error}") from None
        if staging is not None and output is not None:
            try:
                output.mkdir(exist_ok=True)
                for made in sorted(staging.iterdir()):
                    os.replace(made, output / made.name)
            except OSError as error:
                raise fail_usage(f"{_safe(str(output))}: cannot write: {error.strerror or error}") from None
    finally:
        if writer is not None:
            writer.discard()
        if staging is not None:
            import shutil

            shutil.rmtree(staging, ignore_errors=True)
    _print_findings(shown, verdict.errors)
    fidelity = result.fidelity
    if report:
        err.print(fidelity.render(shown), end="", markup=False)
    else:
        for entry in fidelity.losses:
            err.print(f"{shown}: ", end="", markup=False)
            err.print(entry.render(), markup=False)
        for skipped in fidelity.skipped:
            err.print(skipped.render(shown), markup=False)
    if report_json is not None:
        import json

        data = json.dumps({"source": result.source, "target": result.target, **fidelity.to_dict()}, indent=2)
        if str(report_json) == "-":
            err.print(data, markup=False)
        else:
            try:
                report_json.write_text(data + "\n", encoding="utf-8")
            except OSError as error:
                raise fail_usage(
                    f"{_safe(str(report_json))}: cannot write: {error.strerror or error}"
                ) from None
    if output is not None:
        err.print(f"wrote {_safe(str(output))} ({result.source} → {result.target})", markup=False)
    if verdict.refusing:
        done = "written anyway (--force)" if force else "converted anyway; it cannot be read faithfully"
        err.print(f"! {shown}: {len(verdict.refusing)} error(s); {done}", markup=False)
    code = verdict.exit_code
    if fidelity.skipped:
        err.print(f"! {shown}: {len(fidelity.skipped)} record(s) skipped", markup=False)
        code = max(code, EXIT_FINDINGS)
    raise typer.Exit(code)


# -- foreign logs: lightbox verify ------------------------------------------------------------

lightbox_app = typer.Typer(
    name="lightbox",
    cls=_Group,
    help="Lightbox sessions (events.jsonl + meta.json): verify their hash chain (docs/lightbox.md).",
    no_args_is_help=True,
)
app.add_typer(lightbox_app)


class VerifyFormat(StrEnum):
    """``lightbox verify --format``."""

    text = "text"
    json = "json"


@lightbox_app.command("verify")
def lightbox_verify(
    path: Annotated[str, typer.Argument(help="A session folder (its events.jsonl) or an events file.")],
    output_format: Annotated[
        VerifyFormat, typer.Option("--format", help="text: one status line; json: every detail.")
    ] = VerifyFormat.text,
) -> None:
    """Verify a Lightbox session's hash chain. Exit codes are Lightbox's statuses: 0 VALID,
    1 TAMPERED, 2 TRUNCATED, 3 PARSE_ERROR, 4 NOT_FOUND.

    Prints one line: the status, then the event count and head, or the first bad line, its
    invocation id and why. A chain shorter than the head recorded in meta.json by bbox-lark
    (bbox_lark_anchor) is TRUNCATED."""
    from bbox_lark.lightbox import verify

    result = verify(path)
    if output_format is VerifyFormat.json:
        _write_json(result.to_json())
    else:
        out.print(_safe(result.summary()), markup=False)
        for note in result.notes:
            err.print(f"note: {_safe(note)}", markup=False)
    raise typer.Exit(result.exit_code)


# -- analytics: export, query (docs/analytics.md) ----------------------------------------------

#: ``--jobs`` of ``export`` and ``query``.
Jobs = Annotated[
    str | None,
    typer.Option(
        "--jobs",
        "-j",
        help="Read files in this many processes (a number, or auto: the number of cores, the default).",
        show_default=False,
    ),
]


def _analytics_resolver(
    jobs: str | None, config: Path | None, isolated: bool, exclude: list[str] | None, extend: list[str] | None
) -> Any:
    from bbox_lark.config import ConfigError, resolver_from_options

    try:
        return resolver_from_options(
            config=config, isolated=isolated, exclude=exclude, extend_exclude=extend, jobs=jobs
        )
    except ConfigError as error:
        raise fail_usage(str(error)) from None


class ExportFormat(StrEnum):
    """``export --format``."""

    parquet = "parquet"
    csv = "csv"


@app.command("export")
def export_command(
    paths: Annotated[
        list[str], typer.Argument(help="Files, directories (every *.bbox, *.blackbox, *.rlog below), globs.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Write the tables into this folder.")],
    output_format: Annotated[
        ExportFormat, typer.Option("--format", help="parquet (the default) or csv.")
    ] = ExportFormat.parquet,
    jobs: Jobs = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
    exclude: Exclude = None,
    extend_exclude: ExtendExclude = None,
) -> None:
    """Write the sessions, events, calls and diagnostics tables of many sessions (Parquet or
    CSV, one file per table). A file that cannot be read still gets its sessions row; exit 1
    when a file was not read faithfully, 2 when one could not be read."""
    from bbox_lark.export import export_tables
    from bbox_lark.tables import MissingExtra

    resolver = _analytics_resolver(jobs, config, isolated, exclude, extend_exclude)
    try:
        summary = export_tables(
            paths,
            output,
            format=output_format.value,
            jobs=resolver.for_path("-").jobs,
            resolver=resolver,
        )
    except MissingExtra as error:
        raise fail_usage(str(error)) from None
    except OSError as error:
        raise fail_usage(f"{output}: cannot write: {error.strerror or error}") from None
    for path, why in summary.unreadable:
        _print_error(why if why.startswith(path) else f"{path}: {why}")
    for path, why in (*summary.crashed, *summary.failed):
        err.print(f"! {_safe(path)}: {_safe(why)}", markup=False)
    err.print(_safe(summary.line()), markup=False)
    raise typer.Exit(summary.exit_code)


class QueryFormat(StrEnum):
    """``query --format``."""

    table = "table"
    csv = "csv"
    json = "json"


@app.command("query")
def query_command(
    paths: Annotated[
        list[str],
        typer.Argument(help="Session files, directories, globs, or folders written by bbox-lark export."),
    ],
    sql: Annotated[
        str, typer.Option("--sql", help="The query, over the views sessions, events, calls, diagnostics.")
    ],
    output_format: Annotated[
        QueryFormat, typer.Option("--format", help="table (the default), csv or json.")
    ] = QueryFormat.table,
    jobs: Jobs = None,
    config: ConfigFile = None,
    isolated: Isolated = False,
    exclude: Exclude = None,
    extend_exclude: ExtendExclude = None,
) -> None:
    """Run SQL (DuckDB) over the sessions, events, calls and diagnostics tables of session
    files, or of folders written by export. Bad SQL: DuckDB's message, exit 2."""
    from bbox_lark.query import QueryError, find_inputs, query_inputs
    from bbox_lark.tables import MissingExtra

    resolver = _analytics_resolver(jobs, config, isolated, exclude, extend_exclude)
    try:
        result = query_inputs(find_inputs(paths, resolver), sql, jobs=resolver.for_path("-").jobs)
    except (MissingExtra, QueryError) as error:
        raise fail_usage(str(error)) from None
    for path, why in result.unreadable:
        _print_error(why if why.startswith(path) else f"{path}: {why}")
    if output_format is QueryFormat.json:
        _write_json(result.to_json())
    elif output_format is QueryFormat.csv:
        _write_out(result.to_csv())
    else:
        from rich.table import Table

        table = Table(*result.columns)
        for row in result.rows:
            table.add_row(*("" if value is None else _safe(str(value)) for value in row))
        out.print(table)
    raise typer.Exit(EXIT_USAGE if result.unreadable else EXIT_OK)
