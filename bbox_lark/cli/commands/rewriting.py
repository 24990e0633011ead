"""The commands that rewrite files: ``fmt``, ``fix``, ``redact``."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bbox_lark.cli.console import (
    CommandOption,
    copy_bytes_out,
    out,
    say,
    tell,
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
    from bbox_lark.fix.runs import fmt_run

    inputs = find_inputs_or_exit(paths, **discovery)
    run = fmt_run(inputs, check=check_only, diff=diff, force=force, jobs=jobs_of(jobs, inputs))
    for done, told in run:
        tell(told)
        if done.output is not None:
            copy_bytes_out(done.output)  # stdout, byte for byte
    say(run.summary())
    raise typer.Exit(run.exit_code)


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
    from bbox_lark.fix.runs import fix_options, fix_run

    discovery = {o.name: chosen.pop(o.name) for o in DISCOVERY}
    fixers = [fixer for name, fixer in FIXERS.items() if chosen.get(name.replace("-", "_"))]
    fix_options(fixers, paths, write=write, output=output)
    inputs = find_inputs_or_exit(paths, **discovery)
    run = fix_run(inputs, fixers, write=write, output=output, force=force, jobs=jobs_of(jobs, inputs))
    for _done, told in run:
        tell(told)
    say(run.summary())
    raise typer.Exit(run.exit_code)


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
    from bbox_lark.fix.runs import list_options, list_run

    if not list_only:
        raise typer.Exit(_redact(paths, write, output, force, jobs, discovery))
    list_options(write=write, output=output)
    inputs = find_inputs_or_exit(paths, **discovery)
    run = list_run(inputs, jobs=jobs_of(jobs, inputs))
    for listed, said in run:
        for line in listed.lines:
            out.print(line, markup=False)
        say(said)
    raise typer.Exit(run.exit_code)


def _redact(
    paths: list[str], write: bool, output: Path | None, force: bool, jobs: str | None, discovery: Any
) -> int:
    """``redact`` without ``--list``: the files in other formats first, in their own format
    (:func:`bbox_lark.convert.redact_run.redact_foreign_paths`), then the bbox files with the
    ``redact`` fixer (:func:`bbox_lark.fix.runs.fix_run`, as ``fix --redact``); the exit code."""
    from bbox_lark.convert.files import foreign_format
    from bbox_lark.convert.redact_run import redact_foreign_paths
    from bbox_lark.fix import FIXERS
    from bbox_lark.fix.framework import unified_diff
    from bbox_lark.fix.runs import fix_options, fix_run

    foreign = {path: fmt for path in paths if (fmt := foreign_format(path)) is not None}
    others = redact_foreign_paths(foreign, write=write, output=output, diff=unified_diff)
    for told in others:
        tell(told)
    rest = [path for path in paths if path not in foreign]
    if not rest:
        return others.exit_code
    fixers = [FIXERS["redact"]]
    fix_options(fixers, rest, write=write, output=output)
    inputs = find_inputs_or_exit(rest, **discovery)
    run = fix_run(inputs, fixers, write=write, output=output, force=force, jobs=jobs_of(jobs, inputs))
    for _done, told in run:
        tell(told)
    say(run.summary())
    return max(others.exit_code, run.exit_code)
