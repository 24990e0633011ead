"""The commands that convert and send: ``convert``, ``lightbox verify``, ``send``."""

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from bbox_lark.cli.commands.base import Force, MaxLine, app, max_line_option
from bbox_lark.cli.console import err, out, print_findings, safe, say, write_json
from bbox_lark.cli.options import ConvertCommand, Group, without_var_keyword

# -- converting: convert ------------------------------------------------------------------

ConvertPaths = Annotated[
    list[str],
    typer.Argument(
        help="The input file (a folder for folder formats), or - for stdin; several files, or a"
        " folder no format reads (searched for bbox files as check does), convert each into -o DIR."
    ),
]
To = Annotated[str | None, typer.Option("--to", help="Output format (default: from the -o file name).")]
From = Annotated[
    str | None, typer.Option("--from", help="Input format (default: from the file name, else the content).")
]
ConvertOutput = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write to this path (atomically; a folder for folder formats); - or none: stdout."
        " With several inputs: the folder to write one output per input into.",
    ),
]
FidelityReport = Annotated[
    bool,
    typer.Option(
        "--report",
        help="Print the whole fidelity report on stderr: what was kept, moved to an extra,"
        " synthesized or dropped.",
    ),
]
ReportJson = Annotated[
    Path | None,
    typer.Option("--report-json", help="Write the fidelity report as JSON to this path (- for stderr)."),
]
ConvertJobs = Annotated[
    str | None,
    typer.Option(
        "--jobs",
        "-j",
        help="With several inputs: convert in this many processes (a number, or auto: the number"
        " of cores, the default). The outputs do not depend on it.",
        show_default=False,
    ),
]
Quiet = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="Print no notes (what was dropped or skipped); findings and errors stay."
    ),
]


@app.command("convert", cls=ConvertCommand)
@without_var_keyword
def convert_command(
    paths: ConvertPaths,
    to: To = None,
    from_: From = None,
    output: ConvertOutput = None,
    report: FidelityReport = False,
    report_json: ReportJson = None,
    force: Force = False,
    max_line: MaxLine = None,
    jobs: ConvertJobs = None,
    quiet: Quiet = False,
    **options: Any,
) -> None:
    """Convert between formats, streaming. What each keeps: docs/convert.md."""
    from bbox_lark.convert.many import convert_paths

    max_line = max_line_option(max_line)
    run = convert_paths(
        paths,
        to=to,
        from_=from_,
        output=output,
        force=force,
        quiet=quiet,
        report=report,
        report_json=report_json,
        max_line=max_line,
        jobs=jobs,
        options=options,
    )
    for done, said in run:
        print_findings(safe(done.shown), done.verdict.errors)
        say(said)
    say(run.summary())
    raise typer.Exit(run.exit_code)


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
    from bbox_lark.convert.lightbox.chain import verify

    result = verify(path)
    if output_format is VerifyFormat.json:
        write_json(result.to_json())
    else:
        out.print(safe(result.summary()), markup=False)
        for note in result.notes:
            err.print(f"note: {safe(note)}", markup=False)
    raise typer.Exit(result.exit_code)


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
    from_: From = None,
    retries: Annotated[
        int,
        typer.Option("--retries", help="Retries of a request answered 429/502/503/504 or not answered."),
    ] = 5,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds a request may take.")] = 30.0,
) -> None:
    """Send sessions to an OpenTelemetry collector, Arize Phoenix or Langfuse as OTLP/HTTP
    traces (protobuf, gzip; the mapping: docs/formats/otel.md). Exit 1 when a request was
    refused or the endpoint could not be reached, 2 for a usage problem."""
    from bbox_lark.convert.otlp.send import Sent, send_sessions

    def shown(sent: Sent) -> None:
        say(sent.said())

    result = send_sessions(
        paths,
        endpoint=endpoint,
        headers=header or (),
        from_=from_,
        content=content,
        retries=retries,
        timeout=timeout,
        on_sent=shown,
    )
    say(result.said())
    raise typer.Exit(result.exit_code)
