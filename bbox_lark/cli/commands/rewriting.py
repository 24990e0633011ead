"""The commands that rewrite files: ``fmt``, ``fix``, ``redact``."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bbox_lark.cli.console import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    CommandOption,
    copy_bytes_out,
    err,
    out,
    print_error,
    print_findings,
    print_marked,
    safe,
    write_diff,
)
from bbox_lark.cli.options import (
    with_options,
)

if TYPE_CHECKING:
    from bbox_lark.files.runner import Jobs as Jobs_


from bbox_lark.cli.commands.base import (
    DISCOVERY,
    Force,
    Jobs,
    Paths,
    Write,
    app,
    fail_usage,
    find_inputs_or_exit,
    print_refused,
)

# -- formatting: fmt ---------------------------------------------------------------------


def jobs_of(jobs: str | None, inputs: list[Any]) -> "Jobs_ | None":
    """``--jobs``, else the configuration's ``jobs`` (as ``check`` and ``stats`` read it)."""
    from bbox_lark.files.config import ConfigError, cli_overrides

    try:
        value = cli_overrides(jobs=jobs).jobs
    except ConfigError as error:
        raise fail_usage(str(error)) from None
    if value is None and inputs:
        value = inputs[0].settings.jobs
    return value


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
    jobs: Jobs = None,
    **discovery: Any,
) -> None:
    """Rewrite files in canonical form (docs/fmt.md).

    → arrows, one space between words and fields, no trailing whitespace; the header,
    continuation lines, quoted text and line endings are kept. --check and --diff never
    write (exit 1 when a file would change); - reads stdin and writes stdout.

    A file that cannot be read faithfully (invalid UTF-8, NUL, a line over the limit, an
    unterminated quote in a call, an unreadable header) is left alone unless --force; other
    errors are shown and the file is formatted."""
    from bbox_lark.fix.rewrite import fmt_inputs

    code = EXIT_OK
    counts = {"changed": 0, "unchanged": 0, "refused": 0}
    inputs = find_inputs_or_exit(paths, **discovery)
    chosen = jobs_of(jobs, inputs)
    for done in fmt_inputs(inputs, check=check_only, diff=diff, force=force, jobs=chosen):
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
            print_refused(shown, verdict, "not formatted")
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
    jobs: Jobs = None,
    **chosen: Any,
) -> None:
    """Repair files with the chosen fixers (docs/fix.md).

    A dry run by default: prints a unified diff and what would change; --write (each file
    in place) or --output (one file) applies it."""
    from bbox_lark.fix import FIXERS
    from bbox_lark.fix.rewrite import fix_inputs

    discovery = {o.name: chosen.pop(o.name) for o in DISCOVERY}
    fixers = [fixer for name, fixer in FIXERS.items() if chosen.get(name.replace("-", "_"))]
    if not fixers:
        raise fail_usage("choose at least one fixer: " + ", ".join(f"--{name}" for name in FIXERS))
    if write and output is not None:
        raise fail_usage("--write and --output exclude each other; give one or neither")
    if write and "-" in paths:
        raise fail_usage("--write rewrites FILE in place; with - (stdin) use --output PATH")
    inputs = find_inputs_or_exit(paths, **discovery)
    if output is not None and len(inputs) != 1:
        raise fail_usage(
            f"--output writes one file, but {len(inputs)} inputs were given; --write rewrites each in place"
        )
    code = EXIT_OK
    totals = {fixer.name: 0 for fixer in fixers}
    dry_changes = False
    workers = jobs_of(jobs, inputs)
    for done in fix_inputs(inputs, fixers, write=write, output=output, force=force, jobs=workers):
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
            print_refused(shown, verdict, "not written")
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
    format (:mod:`bbox_lark.convert.redact`), or refused; the exit code."""
    from bbox_lark.checks.workflow import write_file
    from bbox_lark.convert.redact import ForeignRedactError, redact_path
    from bbox_lark.fix.framework import unified_diff
    from bbox_lark.secrets.redaction import redact_file_settings
    from bbox_lark.syntax.source import encode

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
    jobs: Jobs = None,
    **discovery: Any,
) -> None:
    """Replace each secret with \\[redacted:KIND] (docs/fix.md): `fix --redact`, with the
    same dry run (a diff, secrets masked), --write, --output and refusals."""
    if not list_only:
        from bbox_lark.convert.files import foreign_format

        foreign = {path: fmt for path in paths if (fmt := foreign_format(path)) is not None}
        code = _redact_foreign(foreign, write, output) if foreign else EXIT_OK
        rest = [path for path in paths if path not in foreign]
        if rest:
            try:
                fix_command(
                    rest, write=write, output=output, force=force, jobs=jobs, redact=True, **discovery
                )
            except typer.Exit as done:
                code = max(code, done.exit_code)
        raise typer.Exit(code)
    if write or output is not None:
        raise fail_usage("--list writes nothing; leave out --write and --output")
    from bbox_lark.fix.rewrite import list_inputs

    code = EXIT_OK
    inputs = find_inputs_or_exit(paths, **discovery)
    for listed in list_inputs(inputs, jobs=jobs_of(jobs, inputs)):
        for line in listed.lines:
            out.print(line, markup=False)
        if listed.read_error is not None:
            print_error(listed.read_error)
            code = max(code, EXIT_USAGE)
    raise typer.Exit(code)
