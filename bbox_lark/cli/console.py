"""What the ``bbox-lark`` commands write: the two output streams (:data:`out`, :data:`err`)
and the renderers every command shares (errors, findings, JSON, diffs, converted text, the
``check`` run and its progress bar).

The library's workflows return results; :mod:`bbox_lark.cli` (the entry point and
``check``'s fast path) and :mod:`bbox_lark.cli.commands` (the Typer application) render them
with what is here. Rich is imported only when output needs it (:class:`Output`), Typer never.
Exit codes (docs/reference.md#exit-codes): 0 clean, 1 findings that fail, 2 usage error or
unreadable input; over several files the highest code wins.

No ``from __future__ import annotations``, like the command modules: Typer reads the
annotations of :class:`OutputFormat`'s users at run time.
"""

import os
import re
import sys
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bbox_lark._classes import dataclass
from bbox_lark.checks.workflow import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from bbox_lark.syntax.source import shown_text as safe

if TYPE_CHECKING:
    from rich.console import Console

    from bbox_lark.files.said import Finding, Said, Told

__all__ = ["EXIT_FINDINGS", "EXIT_OK", "EXIT_USAGE", "safe"]

#: Rich markup tags this module writes, and what rich would make of text without colour.
_TAG = re.compile(r"\[(?:/|bold red|bold|red|green|yellow|cyan)\]")
_EMOJI_LIKE = re.compile(r":\S*?:")  # rich may turn `:name:` into an emoji: leave it to rich


class Output:
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
        return (isatty(self.stream), *(env.get(key) for key in keys))

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
        if "FORCE_COLOR" in env or env.get("TTY_COMPATIBLE") == "1" or isatty(self.stream):
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


out = Output(stderr=False)
err = Output(stderr=True)


class OutputFormat(StrEnum):
    """``check --output-format`` (``bbox_lark.cli.check_output``); ``text`` is ``concise``'s old name."""

    full = "full"
    concise = "concise"
    json = "json"
    github = "github"
    sarif = "sarif"
    junit = "junit"
    text = "text"


@dataclass(frozen=True, slots=True)
class CommandOption:
    """One option of a command, declared once as data: the Typer command is built from it
    (:mod:`bbox_lark.cli.commands`) and so is ``check``'s fast path (:mod:`bbox_lark.cli`),
    which parses a plain ``check`` command line without importing Typer."""

    #: The parameter's name.
    name: str
    #: Its spellings, as ``typer.Option`` takes them (``"--strict/--no-strict"`` for a pair).
    spellings: tuple[str, ...]
    #: What it takes: ``flag`` (bool), ``pair`` (bool or None: ``--x/--no-x``), ``text``,
    #: ``int``, ``path``, ``list`` (repeatable text) or ``format`` (:class:`OutputFormat`).
    kind: str
    help: str
    show_default: bool = True

    @property
    def flags(self) -> dict[str, bool]:
        """The spellings of a flag or pair, each with the value it gives."""
        if self.kind == "flag":
            return dict.fromkeys(self.spellings, True)
        if self.kind == "pair":
            on, off = self.spellings[0].split("/")
            return {on: True, off: False}
        return {}


#: ``--max-line``, shared by every command that parses.
MAX_LINE = CommandOption(
    "max_line",
    ("--max-line",),
    "int",
    "Longest line parsed, in characters (default 1048576; check, fmt, fix and stats read"
    " max-line from the configuration).",
    show_default=False,
)
#: The configuration and discovery options of ``check``, ``fmt``, ``fix`` and ``stats``
#: (docs/configuration.md).
CONFIG = CommandOption(
    "config",
    ("--config",),
    "path",
    "Use this configuration file (a bbox-lark.toml, or a pyproject.toml with a tool.bbox-lark"
    " table) for every path instead of searching for one.",
)
ISOLATED = CommandOption("isolated", ("--isolated",), "flag", "Read no configuration file.")
EXCLUDE = CommandOption(
    "exclude",
    ("--exclude",),
    "list",
    "Skip these paths when searching folders (gitignore-style patterns, repeatable or"
    " comma-separated); replaces the default and configured exclude.",
)
EXTEND_EXCLUDE = CommandOption(
    "extend_exclude", ("--extend-exclude",), "list", "Skip these paths too (gitignore-style patterns)."
)

#: ``check``'s options, in the order its help lists them (after its PATHS argument).
CHECK_OPTIONS: tuple[CommandOption, ...] = (
    CommandOption(
        "strict",
        ("--strict/--no-strict",),
        "pair",
        "Warnings fail too (exit 1); --no-strict overrides strict = true in the configuration.",
        show_default=False,
    ),
    CommandOption(
        "output",
        ("--output-format", "--format", "-f"),
        "format",
        "full (the default on a terminal: each finding with its source line and what to do),"
        " concise (path:line:col: CODE message, the default otherwise; text is its old name),"
        " json, github, sarif or junit.",
        show_default=False,
    ),
    CommandOption(
        "statistics", ("--statistics",), "flag", "Count the findings per code instead of listing them."
    ),
    CommandOption(
        "quiet", ("--quiet", "-q"), "flag", "Print the findings only: no summary, no progress bar."
    ),
    CommandOption(
        "exit_zero",
        ("--exit-zero",),
        "flag",
        "Exit 0 even when findings fail (an unreadable input or a bbox-lark bug is still 2).",
    ),
    CommandOption(
        "blobs",
        ("--blobs",),
        "path",
        "Verify blob pointers against this folder (default: .bbox-blobs/ beside the file).",
    ),
    CommandOption("select", ("--select",), "list", "Only report these codes (or code prefixes, e.g. W0)."),
    CommandOption("ignore", ("--ignore",), "list", "Never report these codes (or prefixes)."),
    MAX_LINE,
    CONFIG,
    ISOLATED,
    EXCLUDE,
    EXTEND_EXCLUDE,
    CommandOption(
        "jobs",
        ("--jobs", "-j"),
        "text",
        "Check files in this many processes (a number, or auto: the number of cores,"
        " the default). The output does not depend on it.",
        show_default=False,
    ),
)


#: The exit code of each error of the library's spine that reaches the command line (the
#: most specific class listed wins; ``docs/reference.md#exit-codes``). Every one is a usage or
#: input problem: the command could not do what it was asked.
EXIT_CODES: dict[str, int] = {
    "BboxLarkError": EXIT_USAGE,
    "InputError": EXIT_USAGE,
    "ConfigError": EXIT_USAGE,
    "ConversionError": EXIT_USAGE,
    "QueryError": EXIT_USAGE,
    "WriteError": EXIT_USAGE,
    "MissingExtraError": EXIT_USAGE,
}


def exit_code_for(error: BaseException) -> int:
    """The exit code of ``error`` (:data:`EXIT_CODES`, by its nearest listed class)."""
    for cls in type(error).__mro__:
        if cls.__module__ == "bbox_lark.errors" and cls.__name__ in EXIT_CODES:
            return EXIT_CODES[cls.__name__]
    return EXIT_USAGE


def print_error(message: str) -> None:
    """A usage or input problem on stderr, as ``error: message`` (the command exits 2, at
    once or in the end); a path may hold ``[``: the message is never markup."""
    err.print("[bold red]error:[/] ", end="")
    err.print(safe(message), markup=False)


def print_findings(shown: str, diagnostics: "Iterable[Finding]") -> None:
    """Findings as ``check`` shows them, on stderr (writing commands keep stdout for data)."""
    for d in diagnostics:
        err.print(f"{shown}:{d.line}:{d.col}: ", end="", markup=False)
        err.print(f"[{STYLE[d.severity]}]{d.code}[/] ", end="")
        err.print(safe(d.message), markup=False)


STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def run_check(
    paths: list[str],
    *,
    strict: bool | None = None,
    output: OutputFormat | None = None,
    statistics: bool = False,
    quiet: bool = False,
    exit_zero: bool = False,
    blobs: Path | None = None,
    **settings: Any,
) -> int:
    """``bbox-lark check`` with its options as Typer hands them over: render the run, return
    the exit code (a bad option value or configuration file: one line on stderr, 2).
    ``settings`` are the options that choose each file's settings (``select``, ``ignore``,
    ``max_line``, ``config``, ``isolated``, ``exclude``, ``extend_exclude``, ``jobs``:
    :func:`bbox_lark.files.config.resolver_from_options`)."""
    from bbox_lark.checks.workflow import check_paths, stdin_streams, stream_input
    from bbox_lark.files.config import ConfigError, check_blobs, resolver_from_options

    try:
        resolver = resolver_from_options(strict=strict, **settings)
        streaming = paths == ["-"] and not statistics and line_based(output) and stdin_streams()
        if streaming:  # each finding as soon as its line has arrived (docs/design.md)
            reports = stream_input("-", blobs=check_blobs(blobs), settings=resolver.for_path("-"))
        else:
            reports = check_paths(paths, blobs=check_blobs(blobs), settings=resolver)
    except ConfigError as error:
        print_error(str(error))
        return EXIT_USAGE
    return report_check(
        reports,
        output,
        strict=strict,
        statistics=statistics,
        quiet=quiet,
        exit_zero=exit_zero,
        streaming=streaming,
    )


def line_based(output: OutputFormat | None) -> bool:
    """Formats that print each finding on its own (not one document for the run)."""
    return output in (None, OutputFormat.full, OutputFormat.concise, OutputFormat.text, OutputFormat.github)


def report_check(
    reports: Iterator[Any],
    output: OutputFormat | None,
    *,
    strict: bool | None,
    statistics: bool,
    quiet: bool,
    exit_zero: bool,
    streaming: bool = False,
) -> int:
    """Render a check run (``bbox_lark.cli.check_output``) on stdout as it goes, unreadable inputs and the
    summary on stderr, a progress bar on a terminal; return the exit code. ``streaming``:
    the reports are partial ones (one finding each, rendered and flushed at once) followed by
    each input's whole report (counted, not rendered again)."""
    from bbox_lark.cli.ansi import wants_color
    from bbox_lark.cli.check_output import ReportOptions, Tally, render, render_statistics

    if output is None:
        output = OutputFormat.full if isatty(sys.stdout) else OutputFormat.concise
    options = ReportOptions(strict=strict, exit_zero=exit_zero, color=wants_color(sys.stdout))
    tally = Tally(options)
    progress = ProgressBar(enabled=not quiet and not streaming and isatty(sys.stderr))

    def watched() -> Iterator[Any]:
        for report in reports:
            if report.partial:
                yield report
                continue
            tally.add(report)
            if report.error is not None:
                err.print("[bold red]error:[/] ", end="")
                err.print(safe(report.error), markup=False)
            progress.advance()
            if not streaming:
                yield report

    if statistics:
        chunks = render_statistics(watched(), options, as_json=output is OutputFormat.json)
    else:
        chunks = render(watched(), output.value, options)
    with progress:
        for chunk in chunks:
            write_out(chunk)
            if streaming:
                sys.stdout.flush()
    if not quiet and (statistics or output in (OutputFormat.full, OutputFormat.concise, OutputFormat.text)):
        err.print(("[red]✗[/] " if tally.worst else "[green]✓[/] ") + tally.summary())
    return tally.exit_code


def isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def write_out(text: str) -> None:
    """Text on stdout, as it comes (``text`` never holds lone surrogates: renderers escape)."""
    sys.stdout.write(text)
    sys.stdout.flush()


class ProgressBar:
    """A progress bar on stderr for a run that takes more than a second: shown only when
    ``enabled`` (stderr is a terminal and the run is not ``--quiet``), from the first file
    done after the first second; removed when the run ends. While it shows, what is written
    on stdout goes above it when stdout is the terminal too, and straight to stdout otherwise
    (``check DIR > report.txt`` keeps every finding in the file)."""

    DELAY = 1.0

    def __init__(self, enabled: bool, console: "Console | None" = None, verb: str = "checking") -> None:
        import time

        self.enabled = enabled
        self.console = console
        self.verb = verb
        self.started = time.monotonic()
        self.done = 0
        self.bar: Any = None
        self.task: Any = None

    def update(self, done: int, total: int) -> None:
        """The runner's progress callback (:data:`bbox_lark.files.runner.Progress`)."""
        self.advance()

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
                TextColumn(self.verb),
                BarColumn(),
                TextColumn("{task.completed} file(s)"),
                TimeElapsedColumn(),
                console=self.console or err.rich,
                transient=True,
                redirect_stdout=isatty(sys.stdout),
                redirect_stderr=False,
            )
            self.task = self.bar.add_task(self.verb, total=None, completed=self.done)
            self.bar.start()
        self.bar.update(self.task, completed=self.done)

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def write_json(value: object) -> None:
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


def write_bytes_out(text: str) -> None:
    """Text on stdout as UTF-8, byte for byte (CRLF and undecodable input bytes, kept as lone
    surrogates, go out as the bytes they came from)."""
    from bbox_lark.syntax.source import encode

    sys.stdout.flush()
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:  # a text-only stream (tests capturing stdout)
        sys.stdout.write(text.encode("utf-8", "backslashreplace").decode("utf-8"))
    else:
        stream.write(encode(text))
        stream.flush()


def copy_bytes_out(source: IO[bytes]) -> None:
    """A binary stream's bytes on stdout, as they are (:func:`write_bytes_out` for bytes
    spooled to a file: nothing is held whole)."""
    import shutil

    sys.stdout.flush()
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:  # a text-only stream (tests capturing stdout)
        for chunk in iter(lambda: source.read(1 << 20), b""):
            sys.stdout.write(chunk.decode("utf-8", "backslashreplace"))
    else:
        shutil.copyfileobj(source, stream, 1 << 20)
        stream.flush()


def write_diff(diff: str) -> None:
    """A unified diff on stdout, byte for byte, so that ``patch`` and ``git apply`` take it;
    coloured on a terminal (``bbox_lark.cli.ansi``)."""
    from bbox_lark.cli.ansi import color_diff, wants_color

    if wants_color(sys.stdout):
        diff = color_diff(diff)
    write_bytes_out(diff)


#: How each mark of a :class:`~bbox_lark.files.said.Said` line is shown: rich markup before
#: the text, which is never markup.
MARKS = {
    "": "",
    "!": "! ",
    "note": "note: ",
    "error": "[bold red]error:[/] ",
    "refused": "[red]✗[/] ",
    "done": "[green]✓[/] ",
}


def say(lines: "Iterable[Said]") -> None:
    """What the library said about a result (:class:`~bbox_lark.files.said.Said`), on stderr."""
    for line in lines:
        mark = MARKS[line.mark]
        if mark and "[" in mark:
            print_marked(mark, safe(line.text))
        else:
            err.print(mark + safe(line.text), markup=False)


def tell(told: "Told") -> None:
    """What the library tells of one input a command rewrote (:class:`~bbox_lark.files.said.Told`),
    in its order: what is said before, the diff on stdout, the fixers' notes and the findings
    on stderr, then what is said."""
    say(told.before)
    if told.diff:
        write_diff(told.diff)
    shown = safe(told.shown)
    for note in told.notes:
        err.print(f"{shown}:{note.line}:{note.col}: ", end="", markup=False)
        err.print("[cyan]note[/] ", end="")
        err.print(safe(note.message), markup=False)
    print_findings(shown, told.findings)
    say(told.said)


def print_marked(mark: str, message: str) -> None:
    """``mark`` (rich markup: a coloured ✓ or ✗) and a plain message on stderr."""
    err.print(mark, end="")
    err.print(message, markup=False)
