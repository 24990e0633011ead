"""The ``bbox-lark`` commands as a Typer application (:data:`app`): the one place a command
is declared.

Each command declares its options, calls one library function (``workflow``, ``rewrite``,
``conversion``, ...), renders the result with :mod:`bbox_lark.console` and exits with its
code. :mod:`bbox_lark.cli` is the entry point; it imports this module only for a command
line its fast path does not take (``bbox-lark check`` with plain options never imports
Typer). Options declared as data become Typer parameters through
:mod:`bbox_lark.command_options`. Like :mod:`bbox_lark.cli`, this module has no
``from __future__ import annotations``: Typer evaluates string annotations with ``compile``
and ``eval`` on every run.
"""

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bbox_lark.command_options import (
    ConvertCommand,
    Group,
    KeepSecrets,
    RedactSecrets,
    format_names,
    typer_option,
    with_options,
    without_var_keyword,
)
from bbox_lark.console import (
    CHECK_OPTIONS,
    CONFIG,
    EXCLUDE,
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    EXTEND_EXCLUDE,
    ISOLATED,
    MAX_LINE,
    CommandOption,
    copy_bytes_out,
    err,
    errors_exit,
    out,
    print_error,
    print_findings,
    print_marked,
    run_check,
    safe,
    write_diff,
    write_json,
    write_out,
)
from bbox_lark.inputs import InputError, is_dir, read_input, why_not
from bbox_lark.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from bbox_lark.discover import FoundInput
    from bbox_lark.writepolicy import WriteVerdict


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
#: ``stats``, ``convert`` over many files): :func:`_find_inputs` takes them as they come.
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


def _find_inputs(paths: list[str], **options: Any) -> "list[FoundInput]":
    """The inputs of a command that searches folders (:func:`bbox_lark.workflow.find_inputs`);
    exits 2 on a bad option value or configuration file (one line naming it)."""
    from bbox_lark.config import ConfigError
    from bbox_lark.workflow import find_inputs

    try:
        return find_inputs(paths, **options)
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


def version_line() -> str:
    """``bbox-lark 0.2.0 (pure Python)``, or ``(compiled with mypyc)`` when the modules on
    ``check``'s line path are C extensions (``BBOX_LARK_COMPILE=1``; ``bbox_lark.parser`` is
    one of them). Found without importing the parser."""
    from importlib.machinery import EXTENSION_SUFFIXES
    from importlib.util import find_spec

    from bbox_lark import __version__

    spec = find_spec("bbox_lark.parser")
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
    try:
        data = read_input(file)
    except InputError as error:
        raise fail_usage(str(error)) from None
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
    from bbox_lark.config import ConfigError, cli_overrides
    from bbox_lark.convert.atif.lines import expand_sessions
    from bbox_lark.discover import names_one_file
    from bbox_lark.render import stats_group
    from bbox_lark.stats import Stats, combine_stats, stats_run_json
    from bbox_lark.stats_run import stats_inputs

    inputs = _find_inputs(
        paths,
        sessions=True,
        config=config,
        isolated=isolated,
        exclude=exclude,
        extend_exclude=extend_exclude,
        max_line=max_line,
    )
    inputs = expand_sessions(inputs)  # ATIF JSON Lines: a session per trajectory
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
    merged: list[dict[str, str]] = []
    for item in stats_inputs(inputs, jobs=jobs_value):
        shown = safe("<stdin>" if item.path == "-" else item.path)
        if item.counted_in is not None:  # each session once, and said so
            into = safe(item.counted_in)
            err.print(f"{shown}: counted once, in {into} ({item.counted_why})", markup=False)
            merged.append({"path": shown, "counted_in": into, "why": item.counted_why or ""})
            continue
        if item.stats is None:
            problem = item.problem or "unreadable"
            if one_file:
                raise fail_usage(problem)
            print_error(problem)
            unreadable.append({"path": shown, "error": safe(problem)})
            code = EXIT_USAGE
            continue
        results.append((shown, item.stats))
        if item.read_as is not None:  # as report says it: counted through its bbox form
            err.print(f"{shown}: read as {item.read_as} (converted to bbox first)", markup=False)
        for record in item.skipped:
            err.print(safe(record), markup=False)
        if item.skipped:
            err.print(f"! {shown}: {len(item.skipped)} record(s) skipped (not counted)", markup=False)
            code = max(code, EXIT_FINDINGS)
        if not as_json:
            if len(results) > 1:
                out.print()
            out.print(stats_group(item.stats, shown))
        code = max(code, errors_exit(item.errors, shown))
    if as_json:  # one shape for one file or many (docs/schema/stats.schema.json)
        write_json(stats_run_json(results, unreadable, merged))
    elif results and not one_file:
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
    from bbox_lark.docsgen import stale_files, write_docs

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


# -- formatting: fmt ---------------------------------------------------------------------


@app.command("fmt")
@with_options(*DISCOVERY)
def fmt_command(
    paths: Paths,
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
    **discovery: Any,
) -> None:
    """Rewrite files in canonical form (docs/fmt.md).

    → arrows, one space between words and fields, no trailing whitespace; the header,
    continuation lines, quoted text and line endings are kept. --check and --diff never
    write (exit 1 when a file would change); - reads stdin and writes stdout.

    A file that cannot be read faithfully (invalid UTF-8, NUL, a line over the limit, an
    unterminated quote in a call, an unreadable header) is left alone unless --force; other
    errors are shown and the file is formatted."""
    from bbox_lark.rewrite import fmt_inputs

    code = EXIT_OK
    counts = {"changed": 0, "unchanged": 0, "refused": 0}
    for done in fmt_inputs(_find_inputs(paths, **discovery), check=check_only, diff=diff, force=force):
        code = max(code, done.exit_code)
        shown = safe(done.item.shown)
        if done.read_error is not None:
            print_error(done.read_error)
            continue
        verdict = done.verdict
        if verdict is None:  # --check, --diff
            counts["changed" if done.changed else "unchanged"] += 1
            if done.diff:
                write_diff(done.diff)
            if done.changed and check_only:
                err.print(f"would reformat {shown}", markup=False)
            continue
        print_findings(shown, verdict.errors)
        if verdict.refused:
            _print_refused(shown, verdict, "not formatted")
            counts["refused"] += 1
            continue
        if verdict.refusing:
            err.print(
                f"! {shown}: {len(verdict.refusing)} error(s); formatted anyway (--force)", markup=False
            )
        counts["changed" if done.changed else "unchanged"] += 1
        if done.output is not None:
            copy_bytes_out(done.output)  # stdout, byte for byte
        elif done.write_error is not None:
            print_error(done.write_error)
        elif done.wrote:
            err.print(f"reformatted {shown}", markup=False)
    would = "would be " if check_only or diff else ""
    summary = f"{counts['changed']} file(s) {would}reformatted, {counts['unchanged']} unchanged"
    if counts["refused"]:
        summary += f", {counts['refused']} not formatted (errors)"
    err.print(summary, markup=False)
    raise typer.Exit(code)


# -- fixing: fix ------------------------------------------------------------------------


def _fixer_flags() -> tuple[CommandOption, ...]:
    """One ``--NAME`` flag per registered fixer (``bbox_lark.fix.FIXERS``), passed to ``fix``
    in ``**chosen``: a new fixer needs no change here. The help is shown as Rich markup,
    so a description's ``[redacted:KIND]`` is escaped to show as written."""
    from rich.markup import escape

    from bbox_lark.fix import FIXERS

    return tuple(
        CommandOption(name.replace("-", "_"), (f"--{name}",), "flag", escape(fixer.description))
        for name, fixer in FIXERS.items()
    )


#: ``--write`` and ``--force`` of the commands that rewrite files (``fix``, ``redact``).
Write = Annotated[bool, typer.Option("--write", help="Rewrite each file in place (atomically).")]
Force = Annotated[bool, typer.Option("--force", help="Write even when the input cannot be read faithfully.")]


@app.command("fix")
@with_options(*_fixer_flags(), at=1)  # after PATHS
@with_options(*DISCOVERY)
def fix_command(
    paths: Paths,
    write: Write = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the fixed file to this path (atomically); one input only."
        ),
    ] = None,
    force: Force = False,
    **chosen: Any,
) -> None:
    """Repair files with the chosen fixers (docs/fix.md).

    A dry run by default: prints a unified diff and what would change; --write (each file
    in place) or --output (one file) applies it."""
    from bbox_lark.fix import FIXERS
    from bbox_lark.rewrite import fix_inputs

    discovery = {o.name: chosen.pop(o.name) for o in DISCOVERY}
    fixers = [fixer for name, fixer in FIXERS.items() if chosen.get(name.replace("-", "_"))]
    if not fixers:
        raise fail_usage("choose at least one fixer: " + ", ".join(f"--{name}" for name in FIXERS))
    if write and output is not None:
        raise fail_usage("--write and --output exclude each other; give one or neither")
    if write and "-" in paths:
        raise fail_usage("--write rewrites FILE in place; with - (stdin) use --output PATH")
    inputs = _find_inputs(paths, **discovery)
    if output is not None and len(inputs) != 1:
        raise fail_usage(
            f"--output writes one file, but {len(inputs)} inputs were given; --write rewrites each in place"
        )
    code = EXIT_OK
    totals = {fixer.name: 0 for fixer in fixers}
    dry_changes = False
    for done in fix_inputs(inputs, fixers, write=write, output=output, force=force):
        code = max(code, done.exit_code)
        shown = safe(done.item.shown)
        if done.read_error is not None:
            print_error(done.read_error)
            continue
        outcome, verdict = done.outcome, done.verdict
        if outcome is None or verdict is None:  # a fixer failed
            print_error(f"{shown}: {done.fix_error}; nothing written")
            continue
        target = done.target
        if target is not None and verdict.refused:
            print_findings(shown, verdict.errors)
            _print_refused(shown, verdict, "not written")
            continue
        if target is None and outcome.diff:
            write_diff(outcome.diff)
        for note in outcome.notes:
            err.print(f"{shown}:{note.line}:{note.col}: ", end="", markup=False)
            err.print("[cyan]note[/] ", end="")
            err.print(safe(note.message), markup=False)
        print_findings(shown, verdict.errors)
        for name, changed in outcome.changes.items():
            totals[name] += changed
        if len(inputs) == 1:
            for fixer in fixers:
                print_marked("[green]✓[/] ", fixer.summary(outcome.changes[fixer.name]))
        if target is None:
            dry_changes = dry_changes or outcome.changed
            if verdict.refused:
                print_marked(
                    "[red]✗[/] ",
                    f"{shown}: {len(verdict.refusing)} error(s); --write would not write it"
                    " (fix them first, or pass --force)",
                )
            continue
        if verdict.refusing:
            err.print(f"! {shown}: {len(verdict.refusing)} error(s); written anyway (--force)", markup=False)
        if write and not outcome.changed:
            err.print(f"{shown}: nothing to change; not rewritten", markup=False)
        elif done.write_error is not None:
            print_error(done.write_error)
        else:
            err.print(f"wrote {safe(str(target))}", markup=False)
    if len(inputs) > 1:
        for fixer in fixers:
            print_marked("[green]✓[/] ", f"{fixer.summary(totals[fixer.name])} in {len(inputs)} files")
    if not write and output is None and dry_changes:
        err.print("! Dry run: nothing written; --write or --output PATH applies it", markup=False)
    raise typer.Exit(code)


def _redact_foreign(files: dict[str, str], write: bool, output: Path | None) -> int:
    """``redact`` on files in other formats (docs/reference.md#secrets): each rewritten in its own
    format (:mod:`bbox_lark.foreign_redact`), or refused; the exit code."""
    from bbox_lark.fix.framework import unified_diff
    from bbox_lark.foreign_redact import ForeignRedactError, redact_path
    from bbox_lark.redaction import redact_file_settings
    from bbox_lark.source import encode
    from bbox_lark.workflow import write_file

    code = EXIT_OK
    for path, fmt in files.items():
        shown = safe(path)
        try:
            old, done = redact_path(path, fmt, allowed=redact_file_settings(Path(path)))
        except (ForeignRedactError, OSError) as error:
            print_error(f"{shown}: {getattr(error, 'strerror', None) or error}; not redacted")
            code = max(code, EXIT_FINDINGS)
            continue
        for line, col, secret in done.secrets:
            err.print(f"{shown}:{line}:{col}: note redacted {secret.kind} {secret.masked}", markup=False)
        print_marked("[green]✓[/] ", f"redact: {len(done.secrets)} secret(s) replaced ({fmt}, in place)")
        target = Path(path) if write else output
        if target is None:
            write_diff(unified_diff(old, done.text, path))
        elif done.changed or output is not None:
            problem = write_file(target, encode(done.text))
            if problem is not None:
                print_error(problem)
                code = max(code, EXIT_USAGE)
            else:
                err.print(f"wrote {safe(str(target))}", markup=False)
    return code


@app.command("redact")
@with_options(*DISCOVERY)
def redact_command(
    paths: Paths,
    write: Write = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the redacted file to this path (atomically); one input only."
        ),
    ] = None,
    force: Force = False,
    list_only: Annotated[
        bool,
        typer.Option("--list", help="Only list the secrets found (masked) and their count per kind."),
    ] = False,
    **discovery: Any,
) -> None:
    """Replace each secret with \\[redacted:KIND] (docs/fix.md): `fix --redact`, with the
    same dry run (a diff, secrets masked), --write, --output and refusals."""
    if not list_only:
        from bbox_lark.conversion import foreign_format

        foreign = {path: fmt for path in paths if (fmt := foreign_format(path)) is not None}
        code = _redact_foreign(foreign, write, output) if foreign else EXIT_OK
        rest = [path for path in paths if path not in foreign]
        if rest:
            try:
                fix_command(rest, write=write, output=output, force=force, redact=True, **discovery)
            except typer.Exit as done:
                code = max(code, done.exit_code)
        raise typer.Exit(code)
    if write or output is not None:
        raise fail_usage("--list writes nothing; leave out --write and --output")
    from bbox_lark.redaction import listing

    code = EXIT_OK
    for item in _find_inputs(paths, **discovery):
        try:
            if item.problem is not None:
                raise InputError(item.problem)
            data = read_input(item.path)
        except InputError as error:
            print_error(str(error))
            code = max(code, EXIT_USAGE)
            continue
        for line in listing(data, safe(item.shown), allowed=item.settings.allowed_secrets):
            out.print(line, markup=False)
    raise typer.Exit(code)


# -- converting: convert ------------------------------------------------------------------


@app.command("convert", cls=ConvertCommand)
@without_var_keyword
def convert_command(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="The input file (a folder for folder formats), or - for stdin; several files, or a"
            " folder no format reads (searched for bbox files as check does), convert each into -o DIR."
        ),
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
            help="Write to this path (atomically; a folder for folder formats); - or none: stdout."
            " With several inputs: the folder to write one output per input into.",
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
    jobs: Annotated[
        str | None,
        typer.Option(
            "--jobs",
            "-j",
            help="With several inputs: convert in this many processes (a number, or auto: the number"
            " of cores, the default). The outputs do not depend on it.",
            show_default=False,
        ),
    ] = None,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="Print no notes (what was dropped or skipped); findings and errors stay."
        ),
    ] = False,
    **options: Any,
) -> None:
    """Convert between formats, streaming. What each keeps: docs/convert.md."""
    from bbox_lark.conversion import (
        ConvertUsageError,
        convert_file,
        converts_many,
        target_format,
        write_report,
    )

    max_line = _max_line(max_line)
    if output is not None and str(output) == "-":
        output = None  # `-o -` is standard output
    if converts_many(paths, from_):
        if report or report_json is not None:
            raise fail_usage("--report and --report-json describe one conversion; give one input")
        raise typer.Exit(_convert_many(paths, to, from_, output, force, max_line, jobs, quiet, options))
    file = paths[0]
    try:
        to = target_format(to, output)
        done = convert_file(
            file,
            to=to,
            from_=from_,
            output=output,
            force=force,
            max_line=max_line,
            report_json=report_json,
            options=options,
        )
    except ConvertUsageError as error:
        raise fail_usage(str(error)) from None
    shown, verdict = safe(done.shown), done.verdict
    if done.output is not None and verdict.refused:
        print_findings(shown, verdict.errors)
        _print_refused(shown, verdict, "not written")
        raise typer.Exit(EXIT_FINDINGS)
    print_findings(shown, verdict.errors)
    if _print_credentials(shown, done):
        raise typer.Exit(EXIT_FINDINGS)
    if report:
        err.print(done.report, end="", markup=False)
    elif not quiet:
        _print_notes(shown, done.notes)
    if report_json is not None:
        if str(report_json) == "-":
            import json

            err.print(json.dumps(done.report_data, indent=2), markup=False)
        else:
            problem = write_report(done, report_json)
            if problem is not None:
                raise fail_usage(problem)
    if output is not None:
        err.print(f"wrote {safe(str(output))} ({done.source} → {done.target})", markup=False)
    if verdict.refusing:
        what = "written anyway (--force)" if force else "converted anyway; it cannot be read faithfully"
        err.print(f"! {shown}: {len(verdict.refusing)} error(s); {what}", markup=False)
    if done.notes.skipped:
        err.print(f"! {shown}: {len(done.notes.skipped)} record(s) skipped", markup=False)
    if done.notes.secrets:  # never silenced by --quiet: a secret must not leave unnoticed
        err.print(f"! {shown}: {done.notes.secrets}", markup=False)
    raise typer.Exit(done.exit_code)


def _print_refused(shown: str, verdict: "WriteVerdict", what: str) -> None:
    """The line for an input the write policy refused (``what``: not written, ...)."""
    print_marked(
        "[red]✗[/] ", f"{shown}: {len(verdict.refusing)} error(s); {what} (fix them first, or pass --force)"
    )


def _print_credentials(shown: str, done: Any) -> bool:
    """The provider credentials a conversion met, one line each (never the key), and whether
    it was refused for them (docs/reference.md#secrets)."""
    for line in done.credentials:
        err.print(f"{safe(line)}{'' if done.secrets_refused else ' (kept: --keep-secrets)'}", markup=False)
    if done.secrets_refused:
        print_marked(
            "[red]✗[/] ",
            f"{shown}: holds provider credentials (S001); not written (--redact replaces"
            " them, --keep-secrets writes them as they are)",
        )
    return bool(done.secrets_refused)


def _print_notes(shown: str, notes: Any) -> None:
    """A conversion's losses and skipped records, on stderr."""
    for loss in notes.losses:
        err.print(f"{shown}: ", end="", markup=False)
        err.print(loss, markup=False)
    for skipped in notes.skipped:
        err.print(skipped, markup=False)


def _convert_many(
    paths: list[str],
    to: str | None,
    from_: str | None,
    output: Path | None,
    force: bool,
    max_line: int,
    jobs: str | None,
    quiet: bool,
    options: dict[str, Any],
) -> int:
    """``convert PATH... -o DIR``: each input into DIR, rendered; the exit code."""
    from bbox_lark.conversion import ConvertUsageError, convert_files

    if output is None:
        raise fail_usage("several inputs convert into a folder: give -o DIR")
    if to is None:
        raise fail_usage(f"give --to FORMAT (one of: {format_names(writable=True)})")
    from bbox_lark.config import ConfigError
    from bbox_lark.conversion import convert_inputs

    try:
        inputs = convert_inputs(paths, from_)
    except ConfigError as error:
        raise fail_usage(str(error)) from None
    code = EXIT_OK
    counts = {"written": 0, "refused": 0, "failed": 0}
    try:
        for done in convert_files(
            inputs, output, to=to, from_=from_, force=force, max_line=max_line, jobs=jobs, options=options
        ):
            code = max(code, done.exit_code)
            shown, verdict = safe(done.shown), done.verdict
            if done.error is not None:
                print_error(done.error)
                counts["failed"] += 1
                continue
            print_findings(shown, verdict.errors)
            if verdict.refused or _print_credentials(shown, done):
                if verdict.refused:
                    _print_refused(shown, verdict, "not written")
                counts["refused"] += 1
                continue
            if not quiet:
                _print_notes(shown, done.notes)
            if verdict.refusing:
                err.print(
                    f"! {shown}: {len(verdict.refusing)} error(s); written anyway (--force)", markup=False
                )
            if done.notes.skipped:
                err.print(f"! {shown}: {len(done.notes.skipped)} record(s) skipped", markup=False)
            if done.notes.secrets:  # never silenced by --quiet
                err.print(f"! {shown}: {done.notes.secrets}", markup=False)
            counts["written"] += 1
    except ConvertUsageError as error:
        raise fail_usage(str(error)) from None
    summary = f"{counts['written']} file(s) converted to {safe(str(output))} ({to})"
    if counts["refused"]:
        summary += f", {counts['refused']} not written (errors)"
    if counts["failed"]:
        summary += f", {counts['failed']} could not be converted"
    err.print(summary, markup=False)
    return code


# -- foreign logs: lightbox verify ------------------------------------------------------------

lightbox_app = typer.Typer(
    name="lightbox",
    cls=Group,
    help="Lightbox sessions (events.jsonl + meta.json): verify their hash chain (docs/formats/lightbox.md).",
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
        write_json(result.to_json())
    else:
        out.print(safe(result.summary()), markup=False)
        for note in result.notes:
            err.print(f"note: {safe(note)}", markup=False)
    raise typer.Exit(result.exit_code)


# -- report: the HTML session report (docs/report.md) -----------------------------------------


@app.command("send")
def send_command(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Sessions in any format convert reads (bbox, Claude Code, ATIF, ATIF JSON Lines …), or"
            " folders (searched as check searches them)."
        ),
    ],
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint",
            help="The OTLP/HTTP traces URL (http://localhost:6006/v1/traces for Phoenix); default:"
            " OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces.",
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "--header",
            "-H",
            help="A request header KEY=VALUE (repeatable); added to OTEL_EXPORTER_OTLP_HEADERS.",
        ),
    ] = None,
    content: Annotated[
        bool,
        typer.Option("--content", help="Send message and tool text (secrets redacted); off by default."),
    ] = False,
    from_: Annotated[
        str | None,
        typer.Option("--from", help="Input format (default: from the file name, else the content)."),
    ] = None,
    retries: Annotated[
        int,
        typer.Option("--retries", help="Retries of a request answered 429/502/503/504 or not answered."),
    ] = 5,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds a request may take.")] = 30.0,
) -> None:
    """Send sessions to an OpenTelemetry collector, Arize Phoenix or Langfuse as OTLP/HTTP
    traces (protobuf, gzip; the mapping: docs/formats/otel.md). Exit 1 when a request was
    refused or the endpoint could not be reached, 2 for a usage problem."""
    from bbox_lark.convert.otlp.encode import MissingOtelExtra
    from bbox_lark.send import (
        SendUsageError,
        Sent,
        resolve_endpoint,
        resolve_headers,
        send_paths,
    )

    try:
        url = resolve_endpoint(endpoint)
        headers = resolve_headers(header or ())
    except SendUsageError as error:
        raise fail_usage(str(error)) from None
    if retries < 0 or timeout <= 0:
        raise fail_usage("--retries must be 0 or more and --timeout more than 0")

    def shown(sent: Sent) -> None:
        path = safe("<stdin>" if sent.path == "-" else sent.path)
        if sent.error is not None:
            print_error(sent.error)
            return
        for line in sent.skipped:
            err.print(f"! {safe(line)}", markup=False)
        retried = f", {sent.retries} retried" if sent.retries else ""
        if sent.refused:
            first = safe(sent.refused[0])
            more = f" (and {len(sent.refused) - 1} more request(s))" if len(sent.refused) > 1 else ""
            print_marked("[red]✗[/] ", f"{path}: refused: {first}{more}")
        if sent.requests or not sent.refused:
            print_marked(
                "[green]✓[/] ",
                f"{path}: {sent.spans} span(s) of {sent.sessions} session(s) in {sent.requests}"
                f" request(s){retried}",
            )

    try:
        result = send_paths(
            paths, url, headers, from_=from_, content=content, retries=retries, timeout=timeout, on_sent=shown
        )
    except MissingOtelExtra as error:
        raise fail_usage(str(error)) from None
    except SendUsageError as error:
        raise fail_usage(str(error)) from None
    if result.unreachable is not None:
        print_error(result.unreachable)
    raise typer.Exit(result.exit_code)


@app.command("report")
def report_command(
    files: Annotated[
        list[str],
        typer.Argument(
            help="Sessions in any format convert reads (bbox, Claude Code, ATIF …), folders, or -."
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="The HTML file (default: FILE's name + .html, here; - stdout); a folder for many.",
        ),
    ] = None,
    from_: Annotated[
        str | None,
        typer.Option("--from", help="Input format (default: from the file name, else the content)."),
    ] = None,
    open_: Annotated[bool, typer.Option("--open", help="Open the page in the web browser.")] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="Serve the page on 127.0.0.1 and update it as the file grows.")
    ] = False,
    port: Annotated[int, typer.Option("--port", help="--watch: the port (0: any free one).")] = 8765,
    jobs: Annotated[
        str | None, typer.Option("--jobs", "-j", help="Many sessions: processes (default: cores).")
    ] = None,
    loop_min: Annotated[
        int, typer.Option("--loop-min", min=2, help="A loop: the same call this many times.")
    ] = 5,
    loop_window: Annotated[
        int, typer.Option("--loop-window", min=1, help="A loop: each repeat within this many calls.")
    ] = 20,
    gap: Annotated[float, typer.Option("--gap", min=0, help="A long gap: more seconds than this.")] = 300,
    max_line: MaxLine = None,
    keep_secrets: Annotated[
        bool, typer.Option("--keep-secrets", help="Show secrets as the log has them (masked by default).")
    ] = False,
) -> None:
    """Write a self-contained HTML page of one session: what went wrong, header card,
    timeline, failed calls, calls by tool, usage chart, findings at their lines. It loads
    nothing and opens from disk. Many sessions (several paths, or a folder) need -o DIR: one
    page each and an index.html."""
    from bbox_lark.config import ConfigError
    from bbox_lark.convert import ConvertError
    from bbox_lark.convert.base import Skipped
    from bbox_lark.report import OutputError, default_output, write_report
    from bbox_lark.review import ReviewOptions

    max_line = _max_line(max_line)
    review = ReviewOptions(loop_min=loop_min, loop_window=loop_window, gap_seconds=gap)
    if watch:
        return _report_watch(files, from_, port, max_line, open_, review, keep_secrets)
    if len(files) > 1 or is_dir(files[0]):
        return _report_many(files, output, from_, jobs, max_line, open_, review, keep_secrets)
    file = files[0]
    from bbox_lark.convert.atif.lines import session_address

    refused = why_not(file)
    if refused is not None and session_address(file) is None:  # FILE#LINE: one ATIF trajectory
        raise fail_usage(safe(refused))
    target = default_output(file) if output is None else None if str(output) == "-" else output
    if open_ and target is None:
        raise fail_usage("--open needs a file: give -o OUT.html")
    skipped: list[Skipped] = []
    try:
        written = write_report(
            file,
            target,
            from_=from_,
            max_line=max_line,
            on_skipped=skipped.append,
            review=review,
            keep_secrets=keep_secrets,
        )
    except (ConvertError, OutputError, ConfigError) as error:
        raise fail_usage(safe(str(error))) from None
    except OSError as error:
        raise fail_usage(f"{safe(file)}: cannot read: {error.strerror or error}") from None
    if written is not None:
        err.print(f"wrote {safe(str(written))}", markup=False)
        if open_:
            import webbrowser

            webbrowser.open(written.resolve().as_uri())
    if skipped:  # as convert says it: records the importer could not read are not on the page
        shown = safe(file if file != "-" else "<stdin>")
        for record in skipped:
            err.print(safe(record.render(shown)), markup=False)
        err.print(f"! {shown}: {len(skipped)} record(s) skipped (not on the page)", markup=False)
        raise typer.Exit(EXIT_FINDINGS)
    raise typer.Exit(EXIT_OK)


def _report_many(
    files: list[str],
    output: Path | None,
    from_: str | None,
    jobs: str | None,
    max_line: int,
    open_: bool,
    review: Any,
    keep_secrets: bool = False,
) -> None:
    """``report PATH... -o DIR``: a page per session and an index (docs/report.md#many-sessions)."""
    from bbox_lark.config import ConfigError
    from bbox_lark.conversion import convert_inputs
    from bbox_lark.report.many import INDEX, write_many

    if output is None or str(output) == "-":
        shown = safe(files[0]) if len(files) == 1 else f"{safe(files[0])} and {len(files) - 1:,} more"
        raise fail_usage(f"{shown}: many sessions need an output folder: give -o DIR")
    try:
        inputs = []
        for item in convert_inputs(files, from_, sessions=True):
            if item.counted_in is not None:  # each session once (a subagent log is on its parent's page)
                shown, into = safe(item.path), safe(item.counted_in)
                err.print(f"{shown}: on the page of {into} ({item.counted_why})", markup=False)
                continue
            inputs.append(item)
        rows = write_many(
            inputs,
            output,
            from_=from_,
            max_line=max_line,
            jobs=_jobs_option(jobs),
            review=review,
            keep_secrets=keep_secrets,
        )
    except ConfigError as error:
        raise fail_usage(safe(str(error))) from None
    except OSError as error:
        raise fail_usage(f"{safe(str(output))}: cannot write: {error.strerror or error}") from None
    problems = [row for row in rows if row.problem]
    for row in problems:
        err.print(f"! {safe(row.source)}: {safe(row.problem or '')}", markup=False)
    err.print(
        f"wrote {len(rows) - sum(1 for r in rows if r.page is None):,} pages and {safe(str(output / INDEX))}"
    )
    if open_:
        import webbrowser

        webbrowser.open((output / INDEX).resolve().as_uri())
    raise typer.Exit(EXIT_FINDINGS if problems else EXIT_OK)


def _jobs_option(jobs: str | None) -> int | str | None:
    if jobs is None or jobs == "auto":
        return None
    if not jobs.isdigit() or int(jobs) < 1:
        raise fail_usage(f"--jobs {safe(jobs)}: give a number of processes, or auto")
    return int(jobs)


def _report_watch(
    files: list[str],
    from_: str | None,
    port: int,
    max_line: int,
    open_: bool,
    review: Any,
    keep_secrets: bool = False,
) -> None:
    """``report FILE --watch``: the live page (docs/report.md#live)."""
    from bbox_lark.report.live import serve

    if len(files) != 1 or files[0] == "-" or is_dir(files[0]):
        raise fail_usage("--watch follows one file: give its path")
    refused = why_not(files[0])
    if refused is not None:
        raise fail_usage(safe(refused))
    if not 0 <= port <= 65535:
        raise fail_usage(f"--port {port}: give 0 to 65535")

    def ready(url: str) -> None:
        err.print(f"serving {safe(files[0])} at {url} (Ctrl-C stops)", markup=False)
        if open_:
            import webbrowser

            webbrowser.open(url)

    try:
        serve(
            files[0],
            port=port,
            from_=from_,
            max_line=max_line,
            on_ready=ready,
            review=review,
            keep_secrets=keep_secrets,
        )
    except OSError as error:
        raise fail_usage(f"--port {port}: cannot listen on 127.0.0.1: {error.strerror or error}") from None
    err.print("stopped", markup=False)
    raise typer.Exit(EXIT_OK)


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
    redact: RedactSecrets = False,
    keep_secrets: KeepSecrets = False,
) -> None:
    """Write the sessions, events, calls and diagnostics tables of many sessions (Parquet or
    CSV, one file per table). A file that cannot be read still gets its sessions row; exit 1
    when a file was not read faithfully or holds a provider credential (not exported without
    --redact or --keep-secrets), 2 when one could not be read."""
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
            secrets="redact" if redact else "keep" if keep_secrets else "refuse",
        )
    except MissingExtra as error:
        raise fail_usage(str(error)) from None
    except OSError as error:
        raise fail_usage(f"{output}: cannot write: {error.strerror or error}") from None
    for path, why in summary.unreadable:
        print_error(why if why.startswith(path) else f"{path}: {why}")
    for path, why in (*summary.crashed, *summary.failed):
        err.print(f"! {safe(path)}: {safe(why)}", markup=False)
    for path, credentials in summary.refused:
        for line in credentials:
            err.print(f"{safe(path)}:{line}", markup=False)
        print_marked(
            "[red]✗[/] ",
            f"{safe(path)}: holds provider credentials (S001); not exported (--redact"
            " replaces them, --keep-secrets exports them as they are)",
        )
    err.print(safe(summary.line()), markup=False)
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
        print_error(why if why.startswith(path) else f"{path}: {why}")
    if output_format is QueryFormat.json:
        write_json(result.to_json())
    elif output_format is QueryFormat.csv:
        write_out(result.to_csv())
    else:
        from rich.table import Table

        table = Table(*result.columns)
        for row in result.rows:
            table.add_row(*("" if value is None else safe(str(value)) for value in row))
        out.print(table)
    raise typer.Exit(EXIT_USAGE if result.unreadable else EXIT_OK)
