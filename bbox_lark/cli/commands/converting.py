"""The commands that convert and send: ``convert``, ``lightbox verify``, ``send``."""

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bbox_lark.cli.console import (
    EXIT_FINDINGS,
    EXIT_OK,
    err,
    out,
    print_error,
    print_findings,
    print_marked,
    safe,
    write_json,
)
from bbox_lark.cli.options import (
    ConvertCommand,
    Group,
    format_names,
    without_var_keyword,
)

if TYPE_CHECKING:
    pass


from bbox_lark.cli.commands.base import (
    MaxLine,
    app,
    fail_usage,
    max_line_option,
    print_refused,
)

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
    from bbox_lark.convert.files import (
        convert_file,
        converts_many,
        target_format,
        write_report,
    )

    max_line = max_line_option(max_line)
    if output is not None and str(output) == "-":
        output = None  # `-o -` is standard output
    if converts_many(paths, from_):
        if report or report_json is not None:
            raise fail_usage("--report and --report-json describe one conversion; give one input")
        raise typer.Exit(_convert_many(paths, to, from_, output, force, max_line, jobs, quiet, options))
    file = paths[0]
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
    shown, verdict = safe(done.shown), done.verdict
    if done.output is not None and verdict.refused:
        print_findings(shown, verdict.errors)
        print_refused(shown, verdict, "not written")
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
    _print_warnings(shown, done, force)
    raise typer.Exit(done.exit_code)


def _print_warnings(shown: str, done: Any, force: bool) -> None:
    """What a written conversion still warns about, one ``!`` line each, never silenced by
    ``--quiet``: errors it was written despite, records skipped, secrets met."""
    verdict = done.verdict
    if verdict.refusing:
        what = "written anyway (--force)" if force else "converted anyway; it cannot be read faithfully"
        err.print(f"! {shown}: {len(verdict.refusing)} error(s); {what}", markup=False)
    if done.notes.skipped:
        err.print(f"! {shown}: {len(done.notes.skipped)} record(s) skipped", markup=False)
    if done.notes.secrets:  # a secret must not leave unnoticed
        err.print(f"! {shown}: {done.notes.secrets}", markup=False)


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
    from bbox_lark.convert.files import convert_files

    if output is None:
        raise fail_usage("several inputs convert into a folder: give -o DIR")
    if to is None:
        raise fail_usage(f"give --to FORMAT (one of: {format_names(writable=True)})")
    from bbox_lark.convert.files import convert_inputs

    inputs = convert_inputs(paths, from_)
    code = EXIT_OK
    counts = {"written": 0, "refused": 0, "failed": 0}
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
                print_refused(shown, verdict, "not written")
            counts["refused"] += 1
            continue
        if not quiet:
            _print_notes(shown, done.notes)
        _print_warnings(shown, done, force)
        counts["written"] += 1
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
    from bbox_lark.convert.otlp.send import (
        Sent,
        resolve_endpoint,
        resolve_headers,
        send_paths,
    )

    url = resolve_endpoint(endpoint)
    headers = resolve_headers(header or ())
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
    if result.unreachable is not None:
        print_error(result.unreachable)
    raise typer.Exit(result.exit_code)
