"""The HTML report command: ``report`` (one page, many pages and ``--watch``:
:mod:`bbox_lark.report.run`)."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bbox_lark.cli.commands.base import MaxLine, app, max_line_option
from bbox_lark.cli.console import say

if TYPE_CHECKING:
    from bbox_lark.files.said import Said


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
    import webbrowser

    from bbox_lark.numbers.review import ReviewOptions
    from bbox_lark.report.run import report_paths, watch_session

    def said(line: "Said") -> None:
        say((line,))

    chosen: dict[str, Any] = {
        "from_": from_,
        "max_line": max_line_option(max_line),
        "keep_secrets": keep_secrets,
    }
    chosen["review"] = ReviewOptions(loop_min=loop_min, loop_window=loop_window, gap_seconds=gap)
    if watch:
        ready = webbrowser.open if open_ else None
        raise typer.Exit(watch_session(files, said, port=port, on_ready=ready, **chosen).exit_code)
    done = report_paths(files, said, output=output, jobs=jobs, open_=open_, **chosen)
    if open_ and done.written is not None:
        webbrowser.open(done.written.resolve().as_uri())
    raise typer.Exit(done.exit_code)
