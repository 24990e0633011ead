"""The HTML report command: ``report`` (one page, a folder of pages, ``--watch``)."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bbox_lark.cli.console import (
    EXIT_FINDINGS,
    EXIT_OK,
    err,
    safe,
)
from bbox_lark.files.inputs import is_dir, why_not

if TYPE_CHECKING:
    pass


from bbox_lark.cli.commands.base import (
    MaxLine,
    app,
    fail_usage,
    max_line_option,
)


# -- report: the HTML session report (docs/report.md) -----------------------------------------
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
    from bbox_lark.convert.base import Skipped
    from bbox_lark.numbers.review import ReviewOptions
    from bbox_lark.report import default_output, write_report

    max_line = max_line_option(max_line)
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
    from bbox_lark.convert.many import convert_inputs
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
