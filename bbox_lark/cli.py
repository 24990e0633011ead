"""The ``bbox-lark`` command line: a thin shell over the library.

Every command parses its arguments, calls one library function and renders the result.
Exit codes (DECISIONS §8, §10): 0 clean, 1 findings that fail, 2 usage error or unreadable
input; over several files the highest code wins.

Start-up matters (``check`` on a small file should cost little more than importing Lark and
PyYAML): each command imports what it uses, Rich is imported only when output needs it
(:class:`_Output`), and this module has no ``from __future__ import annotations``, because
Typer evaluates string annotations with ``compile`` and ``eval`` on every run.
"""

import contextlib
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from bbox_lark.inputs import InputError, collect_inputs, read_input
from bbox_lark.source import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from rich.console import Console

    from bbox_lark.ast import Diagnostic


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

#: Rich markup tags this module writes, and what rich would make of text without colour.
_TAG = re.compile(r"\[(?:/|bold red|bold|red|green|yellow|cyan)\]")
_EMOJI_LIKE = re.compile(r":\S*?:")  # rich may turn `:name:` into an emoji: leave it to rich


class _Output:
    """``rich.console.Console(highlight=False, soft_wrap=True)`` on stdout or stderr, made on
    first need. Text for a stream that rich would not colour (not a terminal, no
    ``FORCE_COLOR`` or ``TTY_COMPATIBLE``) is written directly when rich would write it
    unchanged: importing Rich costs ~15 ms, a quarter of what ``check`` adds to the import
    of Lark and PyYAML.
    Anything else (a terminal, a renderable, text rich would transform) goes through Rich;
    ``tests/test_startup.py`` checks that both write the same bytes."""

    def __init__(self, stderr: bool) -> None:
        self.stderr = stderr
        self._consoles: dict[tuple[object, ...], Console] = {}

    @property
    def stream(self) -> Any:
        return sys.stderr if self.stderr else sys.stdout

    def _rich_key(self) -> tuple[object, ...]:
        """What rich reads when a Console is made: one Console per combination, so that a
        change of environment (tests) never reuses a Console made for another."""
        env = os.environ
        keys = ("TTY_COMPATIBLE", "FORCE_COLOR", "NO_COLOR", "TERM", "COLORTERM", "TTY_INTERACTIVE")
        return (_isatty(self.stream), *(env.get(key) for key in keys))

    @property
    def rich(self) -> "Console":
        """The Rich console for the current stream and environment."""
        key = self._rich_key()
        console = self._consoles.get(key)
        if console is None:
            from rich.console import Console

            console = Console(stderr=self.stderr, highlight=False, soft_wrap=True)
            self._consoles[key] = console
        return console

    def _plain(self, text: str, markup: bool) -> str | None:
        """``text`` as rich would write it without colour, or None when that takes Rich."""
        env = os.environ
        if "FORCE_COLOR" in env or env.get("TTY_COMPATIBLE") == "1" or _isatty(self.stream):
            return None
        if markup and "[" in text:
            text = _TAG.sub("", text)
            if "[" in text or "\\" in text:  # an escape, or markup of another kind
                return None
        if not text.isprintable() or (":" in text and _EMOJI_LIKE.search(text)):
            return None
        return text

    def print(self, *objects: Any, end: str = "\n", markup: bool = True) -> None:
        if len(objects) == 1 and isinstance(objects[0], str):
            plain = self._plain(objects[0], markup)
            if plain is not None and (not end or end == "\n"):
                stream = self.stream
                stream.write(plain + end)
                stream.flush()
                return
        self.rich.print(*objects, end=end, markup=markup)


out = _Output(stderr=False)
err = _Output(stderr=True)

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

#: ``--max-line``, shared by every command that parses.
MaxLine = Annotated[int, typer.Option(help="Longest line parsed, in characters.")]


class OutputFormat(StrEnum):
    """``check --output-format`` (``bbox_lark.report``); ``text`` is ``concise``'s old name."""

    full = "full"
    concise = "concise"
    json = "json"
    github = "github"
    sarif = "sarif"
    junit = "junit"
    text = "text"


def fail_usage(message: str) -> typer.Exit:
    """Print a usage or input problem and return the exit to raise."""
    err.print("[bold red]error:[/] ", end="")
    err.print(_safe(message), markup=False)  # a path may hold `[`: never markup
    return typer.Exit(EXIT_USAGE)


_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _safe(text: str) -> str:
    """``text`` with undecodable input bytes (lone surrogates, from ``surrogateescape``) as
    ``\\xNN``: they cannot be written as UTF-8, and a finding must never crash the output."""
    if text.isprintable() or not any(0xDC80 <= ord(char) <= 0xDCFF for char in text):
        return text
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


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
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too (exit 1).")] = False,
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
    max_line: MaxLine = DEFAULT_MAX_LINE,
) -> None:
    """Validate bbox/1 files and report every finding with its line and column."""
    from bbox_lark.workflow import check_paths

    reports = check_paths(paths, blobs=blobs, select=select, ignore=ignore, max_line=max_line)
    raise typer.Exit(
        _report_check(reports, output, strict=strict, statistics=statistics, quiet=quiet, exit_zero=exit_zero)
    )


def _report_check(
    reports: Iterator[Any],
    output: OutputFormat | None,
    *,
    strict: bool,
    statistics: bool,
    quiet: bool,
    exit_zero: bool,
) -> int:
    """Render a check run (``bbox_lark.report``) on stdout as it goes, unreadable inputs and the
    summary on stderr, a progress bar on a terminal; return the exit code."""
    from bbox_lark.ansi import wants_color
    from bbox_lark.report import ReportOptions, Tally, render, render_statistics

    if output is None:
        output = OutputFormat.full if _isatty(sys.stdout) else OutputFormat.concise
    options = ReportOptions(strict=strict, exit_zero=exit_zero, color=wants_color(sys.stdout))
    tally = Tally(options)
    progress = _Progress(enabled=not quiet and _isatty(sys.stderr))

    def watched() -> Iterator[Any]:
        for report in tally.watch(reports):
            if report.error is not None:
                err.print("[bold red]error:[/] ", end="")
                err.print(_safe(report.error), markup=False)
            progress.advance()
            yield report

    if statistics:
        chunks = render_statistics(watched(), options, as_json=output is OutputFormat.json)
    else:
        chunks = render(watched(), output.value, options)
    with progress:
        for chunk in chunks:
            _write_out(chunk)
    if not quiet and (statistics or output in (OutputFormat.full, OutputFormat.concise, OutputFormat.text)):
        err.print(("[red]✗[/] " if tally.worst else "[green]✓[/] ") + tally.summary())
    return tally.exit_code


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def _write_out(text: str) -> None:
    """Text on stdout, as it comes (``text`` never holds lone surrogates: renderers escape)."""
    sys.stdout.write(text)
    sys.stdout.flush()


class _Progress:
    """A progress bar on stderr for a run that takes more than a second: shown only when
    ``enabled`` (stderr is a terminal and the run is not ``--quiet``), from the first file
    done after the first second; removed when the run ends. While it shows, what is written
    on stdout goes above it when stdout is the terminal too, and straight to stdout otherwise
    (``check DIR > report.txt`` keeps every finding in the file)."""

    DELAY = 1.0

    def __init__(self, enabled: bool, console: "Console | None" = None) -> None:
        import time

        self.enabled = enabled
        self.console = console
        self.started = time.monotonic()
        self.done = 0
        self.bar: Any = None
        self.task: Any = None

    def advance(self) -> None:
        import time

        self.done += 1
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.started < self.DELAY:
                return
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                SpinnerColumn(),
                TextColumn("checking"),
                BarColumn(),
                TextColumn("{task.completed} file(s)"),
                TimeElapsedColumn(),
                console=self.console or err.rich,
                transient=True,
                redirect_stdout=_isatty(sys.stdout),
                redirect_stderr=False,
            )
            self.task = self.bar.add_task("check", total=None, completed=self.done)
            self.bar.start()
        self.bar.update(self.task, completed=self.done)

    def __enter__(self) -> "_Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


# -- inspecting: parse, stats, explain, docs --------------------------------------------


def _read_one(file: str) -> tuple[str, bytes]:
    """The shown name and bytes of one FILE argument (``-`` is stdin); exits 2 when the path
    is missing, unreadable or a directory."""
    if file != "-" and Path(file).is_dir():
        raise fail_usage(f"{file}: is a directory; give one file (or - for stdin)")
    try:
        items = collect_inputs([file])
        data = read_input(items[0])
    except InputError as error:
        raise fail_usage(str(error)) from None
    return ("<stdin>" if file == "-" else _safe(file)), data


def _write_json(value: object) -> None:
    """JSON on stdout. Undecodable bytes of the input (kept as lone surrogates) are written
    as ``\\udcNN`` escapes, which read back to the same string."""
    import json

    text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    try:
        text.encode(sys.stdout.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        # An output encoding without these characters: JSON's own escapes read back the same.
        text = json.dumps(value, ensure_ascii=True, indent=2) + "\n"
    sys.stdout.write(text)


def _errors_exit(diagnostics: "tuple[Diagnostic, ...]", shown: str) -> int:
    """Exit 1 (with a note on stderr) when the input has errors, as ``check`` would."""
    errors = sum(1 for d in diagnostics if d.severity == "error")
    if not errors:
        return EXIT_OK
    err.print("[red]✗[/] ", end="")
    err.print(f"{shown}: {errors} error(s); `bbox-lark check` lists them", markup=False)
    return EXIT_FINDINGS


@app.command("parse")
def parse_command(
    file: Annotated[str, typer.Argument(help="A bbox file, or - for stdin.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON (docs/schema/parse.schema.json).")] = False,
    header_only: Annotated[bool, typer.Option("--header", help="Only the header.")] = False,
    body_only: Annotated[bool, typer.Option("--body", help="Only the body.")] = False,
    max_line: MaxLine = DEFAULT_MAX_LINE,
) -> None:
    """Show every line with its parsed kind, name, fields and result."""
    from bbox_lark.api import parse
    from bbox_lark.jsonout import diagnostic_to_json, document_to_json
    from bbox_lark.render import in_header, parse_rows

    if header_only and body_only:
        raise fail_usage("--header and --body exclude each other; give one or neither")
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
    file: Annotated[str, typer.Argument(help="A bbox file, or - for stdin.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON (docs/schema/stats.schema.json).")] = False,
    max_line: MaxLine = DEFAULT_MAX_LINE,
) -> None:
    """Count lines, events, calls, steps, ids, blobs, redactions, tokens and cost."""
    from bbox_lark.api import parse
    from bbox_lark.render import stats_group
    from bbox_lark.stats import compute_stats

    shown, data = _read_one(file)
    document = parse(data, path=None if file == "-" else Path(file), max_line=max_line)
    result = compute_stats(document)
    if as_json:
        _write_json({"path": shown, **result.to_json()})
    else:
        out.print(stats_group(result, shown))
    raise typer.Exit(_errors_exit(document.diagnostics, shown))


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
        bool, typer.Option("--diff", help="Write nothing; print a unified diff instead.")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Rewrite files even when they have errors.")] = False,
    max_line: MaxLine = DEFAULT_MAX_LINE,
) -> None:
    """Rewrite files in canonical form (docs/fmt.md).

    → arrows, one space between words and fields, no trailing whitespace; the header,
    continuation lines, quoted text and line endings are kept. --check and --diff never
    write; - reads stdin and writes stdout."""
    from bbox_lark.atomic import write_atomic
    from bbox_lark.fix.framework import unified_diff
    from bbox_lark.printer import format_text
    from bbox_lark.source import encode

    code = EXIT_OK
    counts = {"changed": 0, "unchanged": 0, "refused": 0}
    for item in collect_inputs(paths):
        shown = "<stdin>" if item == "-" else _safe(item)
        try:
            data = read_input(item)
        except InputError as error:
            err.print("[bold red]error:[/] ", end="")
            err.print(_safe(str(error)), markup=False)
            code = max(code, EXIT_USAGE)
            continue
        result = format_text(data, path=None if item == "-" else Path(item), max_line=max_line)
        if check_only or diff:
            counts["changed" if result.changed else "unchanged"] += 1
            if result.changed and diff:
                _write_diff(unified_diff(result.old, result.new, shown))
            if result.changed and check_only:
                err.print(f"would reformat {shown}", markup=False)
                code = max(code, EXIT_FINDINGS)
            continue
        if result.errors and not force:
            for d in result.errors:
                out.print(f"{shown}:{d.line}:{d.col}: ", end="", markup=False)
                out.print(f"[{_STYLE[d.severity]}]{d.code}[/] ", end="")
                out.print(_safe(d.message), markup=False)
            err.print("[red]✗[/] ", end="")
            err.print(
                f"{shown}: {len(result.errors)} error(s); not formatted (fix them first, or pass --force)",
                markup=False,
            )
            counts["refused"] += 1
            code = max(code, EXIT_FINDINGS)
            continue
        counts["changed" if result.changed else "unchanged"] += 1
        if item == "-":
            _write_text(result.new)  # stdout, byte for byte
        elif result.changed:
            try:
                write_atomic(item, encode(result.new))
            except OSError as error:
                err.print("[bold red]error:[/] ", end="")
                err.print(f"{shown}: cannot write: {error.strerror or error}", markup=False)
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
    file: Annotated[str, typer.Argument(help="A bbox file, or - for stdin.")],
    write: Annotated[bool, typer.Option("--write", help="Rewrite FILE in place (atomically).")] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the fixed file to this path (atomically).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Write even when the input has errors.")] = False,
    max_line: MaxLine = DEFAULT_MAX_LINE,
    **chosen: bool,
) -> None:
    """Repair a file with the chosen fixers (docs/fix.md).

    A dry run by default: prints a unified diff and what would change; --write or --output
    applies it."""
    from bbox_lark.atomic import write_atomic
    from bbox_lark.fix import FIXERS, FixError, apply_fixes
    from bbox_lark.source import encode

    fixers = [fixer for name, fixer in FIXERS.items() if chosen.get(name.replace("-", "_"))]
    if not fixers:
        raise fail_usage("choose at least one fixer: " + ", ".join(f"--{name}" for name in FIXERS))
    if write and output is not None:
        raise fail_usage("--write and --output exclude each other; give one or neither")
    if write and file == "-":
        raise fail_usage("--write rewrites FILE in place; with - (stdin) use --output PATH")
    shown, data = _read_one(file)
    path = None if file == "-" else Path(file)
    try:
        outcome = apply_fixes(data, fixers, path=path, label=shown, max_line=max_line)
    except FixError as error:  # a fixer bug, never the input's fault: say so, write nothing
        err.print("[bold red]error:[/] ", end="")
        err.print(f"{shown}: {error}; nothing written", markup=False)
        raise typer.Exit(EXIT_FINDINGS) from None
    target = path if write else output
    errors = [d for d in outcome.document.diagnostics if d.severity == "error"]
    if target is not None and errors and not force:
        for d in errors:
            out.print(f"{shown}:{d.line}:{d.col}: ", end="", markup=False)
            out.print(f"[{_STYLE[d.severity]}]{d.code}[/] ", end="")
            out.print(_safe(d.message), markup=False)
        err.print("[red]✗[/] ", end="")
        err.print(
            f"{shown}: {len(errors)} error(s); not written (fix them first, or pass --force)", markup=False
        )
        raise typer.Exit(EXIT_FINDINGS)
    if target is None and outcome.diff:
        _write_diff(outcome.diff)
    for note in outcome.notes:
        err.print(f"{shown}:{note.line}:{note.col}: ", end="", markup=False)
        err.print("[cyan]note[/] ", end="")
        err.print(_safe(note.message), markup=False)
    for fixer in fixers:
        err.print("[green]✓[/] ", end="")
        err.print(fixer.summary(outcome.changes[fixer.name]), markup=False)
    if target is None:
        if outcome.changed:
            err.print("! Dry run: nothing written; --write or --output PATH applies it", markup=False)
        raise typer.Exit(EXIT_OK if force else _errors_exit(outcome.document.diagnostics, shown))
    if errors:
        err.print(f"! {shown}: {len(errors)} error(s); written anyway (--force)", markup=False)
    if write and not outcome.changed:
        err.print(f"{shown}: nothing to change; not rewritten", markup=False)
        raise typer.Exit(EXIT_OK)
    try:
        write_atomic(target, encode(outcome.new_text))
    except OSError as error:
        raise fail_usage(f"{_safe(str(target))}: cannot write: {error.strerror or error}") from None
    err.print(f"wrote {_safe(str(target))}", markup=False)


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


def _format_names() -> str:
    from bbox_lark.convert import formats

    return ", ".join(f.name for f in formats())


@app.command("convert")
def convert_command(
    file: Annotated[str, typer.Argument(help="The input file, or - for stdin.")],
    to: Annotated[
        str | None,
        typer.Option("--to", help="Output format (default: from the -o file name): bbox, compact."),
    ] = None,
    from_: Annotated[
        str | None,
        typer.Option("--from", help="Input format (default: from the file name, else the content)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this path (atomically); - or none: stdout."),
    ] = None,
    lossy: Annotated[
        bool, typer.Option("--lossy", help="compact: the spec's summary style; reports what it drops.")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Write even when the input has errors.")] = False,
    max_line: MaxLine = DEFAULT_MAX_LINE,
) -> None:
    """Convert between formats (bbox, compact). What each keeps: docs/compact.md."""
    from bbox_lark.atomic import write_atomic
    from bbox_lark.convert import ConvertError, convert, format_for_path
    from bbox_lark.source import encode

    if output is not None and str(output) == "-":
        output = None  # `-o -` is standard output
    if to is None:
        named = format_for_path(output) if output is not None else []
        if len(named) != 1:
            raise fail_usage(f"give --to FORMAT (one of: {_format_names()})")
        to = named[0].name
    shown, data = _read_one(file)
    try:
        result = convert(data, from_, to=to, path=file, max_line=max_line, lossy=lossy)
    except ConvertError as error:
        raise fail_usage(str(error)) from None
    errors = [d for d in result.diagnostics if d.severity == "error"]

    def show_errors() -> None:
        for d in errors:
            err.print(f"{shown}:{d.line}:{d.col}: ", end="", markup=False)
            err.print(f"[{_STYLE[d.severity]}]{d.code}[/] ", end="")
            err.print(_safe(d.message), markup=False)

    if output is not None and errors and not force:
        show_errors()
        err.print("[red]✗[/] ", end="")
        err.print(
            f"{shown}: {len(errors)} error(s); not written (fix them first, or pass --force)", markup=False
        )
        raise typer.Exit(EXIT_FINDINGS)
    if output is None:
        _write_text(result.text)
    else:
        try:
            write_atomic(output, encode(result.text))
        except OSError as error:
            raise fail_usage(f"{_safe(str(output))}: cannot write: {error.strerror or error}") from None
    show_errors()
    for entry in result.report:
        err.print(f"{shown}: ", end="", markup=False)
        err.print(entry.render(), markup=False)
    if output is not None:
        err.print(f"wrote {_safe(str(output))} ({result.source} → {result.target})", markup=False)
    if errors:
        written = "written anyway (--force)" if force else "converted anyway"
        err.print(f"! {shown}: {len(errors)} error(s); {written}", markup=False)
    raise typer.Exit(EXIT_FINDINGS if errors and not force else EXIT_OK)


def _escape_unencodable_output() -> None:
    """Text the terminal's encoding cannot show (``→`` under ``PYTHONIOENCODING=latin-1``)
    is written as a backslash escape instead of ending the command in a traceback."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # A closed or detached stream has nothing to protect.
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def main() -> None:
    """Console-script entry point. A bug that escapes every command's own handling still
    ends in one clear line and exit 2, never a traceback (the per-file handling in
    :mod:`bbox_lark.workflow` keeps ``check`` going file by file)."""
    _escape_unencodable_output()
    try:
        app()
    except Exception as error:  # the last resort: the bug is ours, say so
        from bbox_lark.workflow import internal_error

        err.print("[bold red]error:[/] ", end="")
        err.print(_safe(internal_error(error).message), markup=False)
        raise SystemExit(EXIT_USAGE) from None


if __name__ == "__main__":  # pragma: no cover
    main()
