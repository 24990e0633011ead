"""The analytics commands: ``export`` and ``query`` (docs/analytics.md)."""

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bbox_lark.cli.console import (
    ProgressBar,
    err,
    isatty,
    out,
    safe,
    say,
    write_json,
    write_out,
)
from bbox_lark.cli.options import (
    KeepSecrets,
    RedactSecrets,
)

if TYPE_CHECKING:
    pass


from bbox_lark.cli.commands.base import (
    ConfigFile,
    Exclude,
    ExtendExclude,
    Isolated,
    Jobs,
    app,
    fail_usage,
)

# -- analytics: export, query (docs/analytics.md) ----------------------------------------------

#: ``--jobs`` of ``export`` and ``query``.


def _analytics_resolver(
    jobs: str | None, config: Path | None, isolated: bool, exclude: list[str] | None, extend: list[str] | None
) -> Any:
    from bbox_lark.files.config import resolver_from_options

    return resolver_from_options(
        config=config, isolated=isolated, exclude=exclude, extend_exclude=extend, jobs=jobs
    )


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
    from bbox_lark.files.said import credentials_refused, unreadable
    from bbox_lark.numbers.export import export_tables

    # Arrow's system allocator, unless the environment names one: its default (mimalloc)
    # keeps about 20 MiB more resident at every size (docs/design.md, "Memory per command").
    # Arrow reads this once, when pyarrow is imported (below, in export_tables); after it,
    # pyarrow.set_memory_pool would leave the Parquet writer's own buffers on mimalloc.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

    resolver = _analytics_resolver(jobs, config, isolated, exclude, extend_exclude)
    bar = ProgressBar(enabled=isatty(sys.stderr), verb="exporting")
    try:
        with bar:
            summary = export_tables(
                paths,
                output,
                format=output_format.value,
                jobs=resolver.for_path("-").jobs,
                resolver=resolver,
                secrets="redact" if redact else "keep" if keep_secrets else "refuse",
                progress=bar.update,
            )
    except OSError as error:
        raise fail_usage(f"{output}: cannot write: {error.strerror or error}") from None
    say(unreadable(path, why) for path, why in summary.unreadable)
    for path, why in (*summary.crashed, *summary.failed):
        err.print(f"! {safe(path)}: {safe(why)}", markup=False)
    for path, credentials in summary.refused:
        for line in credentials:
            err.print(f"{safe(path)}:{line}", markup=False)
        say((credentials_refused(path, "exported", "exports"),))
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
    from bbox_lark.numbers.query import find_inputs, query_inputs

    resolver = _analytics_resolver(jobs, config, isolated, exclude, extend_exclude)
    result = query_inputs(find_inputs(paths, resolver), sql, jobs=resolver.for_path("-").jobs)
    say(result.said())
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
    raise typer.Exit(result.exit_code)
