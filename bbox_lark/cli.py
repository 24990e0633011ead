"""The ``bbox-lark`` command line: a thin shell over the library.

Every command parses its arguments, calls one library function and renders the result.
Exit codes (DECISIONS §8, §10): 0 clean, 1 findings that fail, 2 usage error or unreadable
input; over several files the highest code wins.

Start-up matters (``check`` on a small file should cost little more than importing Lark and
PyYAML): each command imports what it uses, Rich is imported only when output needs it
(:class:`_Output`), and Typer only when the command line needs it. The commands are a Typer
application in :mod:`bbox_lark.commands` (``bbox_lark.cli.app`` and every name of that
module are reachable from here, imported on first use); this module is the entry point and
holds what the commands share. A plain ``check`` command line (known options in their
usual spellings, paths that do not start with ``-``) is parsed here and run without
Typer (:func:`check_arguments`); it writes the same bytes and exits with the same code as
through Typer (``tests/test_startup.py`` compares both over a table of command lines).
Neither module has ``from __future__ import annotations``, because Typer evaluates string
annotations with ``compile`` and ``eval`` on every run.
"""

import contextlib
import os
import re
import sys
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from rich.console import Console

    from bbox_lark.ast import Diagnostic


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


class OutputFormat(StrEnum):
    """``check --output-format`` (``bbox_lark.check_output``); ``text`` is ``concise``'s old name."""

    full = "full"
    concise = "concise"
    json = "json"
    github = "github"
    sarif = "sarif"
    junit = "junit"
    text = "text"


def _usage_error(message: str) -> None:
    """A usage or input problem, on stderr (the caller exits 2)."""
    err.print("[bold red]error:[/] ", end="")
    err.print(_safe(message), markup=False)  # a path may hold `[`: never markup


def _print_error(message: str) -> None:
    """One input problem on stderr (the command goes on; it exits 2 in the end)."""
    err.print("[bold red]error:[/] ", end="")
    err.print(_safe(message), markup=False)


def _print_findings(shown: str, diagnostics: "Iterable[Diagnostic]") -> None:
    """Findings as ``check`` shows them, on stderr (writing commands keep stdout for data)."""
    for d in diagnostics:
        err.print(f"{shown}:{d.line}:{d.col}: ", end="", markup=False)
        err.print(f"[{_STYLE[d.severity]}]{d.code}[/] ", end="")
        err.print(_safe(d.message), markup=False)


_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _safe(text: str) -> str:
    """``text`` with undecodable input bytes (lone surrogates, from ``surrogateescape``) as
    ``\\xNN``: they cannot be written as UTF-8, and a finding must never crash the output."""
    if text.isprintable() or not any(0xDC80 <= ord(char) <= 0xDCFF for char in text):
        return text
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


def run_check(
    paths: list[str],
    *,
    strict: bool | None = None,
    output: OutputFormat | None = None,
    statistics: bool = False,
    quiet: bool = False,
    exit_zero: bool = False,
    blobs: Path | None = None,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    max_line: int | None = None,
    config: Path | None = None,
    isolated: bool = False,
    exclude: list[str] | None = None,
    extend_exclude: list[str] | None = None,
    jobs: str | None = None,
) -> int:
    """``bbox-lark check`` with its options as Typer hands them over: render the run, return
    the exit code (a bad option value or configuration file: one line on stderr, 2)."""
    from bbox_lark.config import ConfigError, check_blobs, resolver_from_options
    from bbox_lark.workflow import check_paths, stdin_streams, stream_input

    try:
        resolver = resolver_from_options(
            config=config,
            isolated=isolated,
            select=select,
            ignore=ignore,
            strict=strict,
            exclude=exclude,
            extend_exclude=extend_exclude,
            max_line=max_line,
            jobs=jobs,
        )
        streaming = paths == ["-"] and not statistics and _line_based(output) and stdin_streams()
        if streaming:  # each finding as soon as its line has arrived (docs/design.md)
            reports = stream_input("-", blobs=check_blobs(blobs), settings=resolver.for_path("-"))
        else:
            reports = check_paths(paths, blobs=check_blobs(blobs), settings=resolver)
    except ConfigError as error:
        _usage_error(str(error))
        return EXIT_USAGE
    return _report_check(
        reports,
        output,
        strict=strict,
        statistics=statistics,
        quiet=quiet,
        exit_zero=exit_zero,
        streaming=streaming,
    )


def _line_based(output: OutputFormat | None) -> bool:
    """Formats that print each finding on its own (not one document for the run)."""
    return output in (None, OutputFormat.full, OutputFormat.concise, OutputFormat.text, OutputFormat.github)


def _report_check(
    reports: Iterator[Any],
    output: OutputFormat | None,
    *,
    strict: bool | None,
    statistics: bool,
    quiet: bool,
    exit_zero: bool,
    streaming: bool = False,
) -> int:
    """Render a check run (``bbox_lark.check_output``) on stdout as it goes, unreadable inputs and the
    summary on stderr, a progress bar on a terminal; return the exit code. ``streaming``:
    the reports are partial ones (one finding each, rendered and flushed at once) followed by
    each input's whole report (counted, not rendered again)."""
    from bbox_lark.ansi import wants_color
    from bbox_lark.check_output import ReportOptions, Tally, render, render_statistics

    if output is None:
        output = OutputFormat.full if _isatty(sys.stdout) else OutputFormat.concise
    options = ReportOptions(strict=strict, exit_zero=exit_zero, color=wants_color(sys.stdout))
    tally = Tally(options)
    progress = _Progress(enabled=not quiet and not streaming and _isatty(sys.stderr))

    def watched() -> Iterator[Any]:
        for report in reports:
            if report.partial:
                yield report
                continue
            tally.add(report)
            if report.error is not None:
                err.print("[bold red]error:[/] ", end="")
                err.print(_safe(report.error), markup=False)
            progress.advance()
            if not streaming:
                yield report

    if statistics:
        chunks = render_statistics(watched(), options, as_json=output is OutputFormat.json)
    else:
        chunks = render(watched(), output.value, options)
    with progress:
        for chunk in chunks:
            _write_out(chunk)
            if streaming:
                sys.stdout.flush()
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


def _escape_unencodable_output() -> None:
    """Text the terminal's encoding cannot show (``→`` under ``PYTHONIOENCODING=latin-1``)
    is written as a backslash escape instead of ending the command in a traceback."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # A closed or detached stream has nothing to protect.
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


#: ``check``'s flags: option -> (parameter, value).
_CHECK_FLAGS = {
    "--strict": ("strict", True),
    "--no-strict": ("strict", False),
    "--statistics": ("statistics", True),
    "--quiet": ("quiet", True),
    "-q": ("quiet", True),
    "--exit-zero": ("exit_zero", True),
    "--isolated": ("isolated", True),
}
#: ``check``'s options that take a value: option -> parameter.
_CHECK_OPTIONS = {
    "--output-format": "output",
    "--format": "output",
    "-f": "output",
    "--blobs": "blobs",
    "--select": "select",
    "--ignore": "ignore",
    "--max-line": "max_line",
    "--config": "config",
    "--exclude": "exclude",
    "--extend-exclude": "extend_exclude",
    "--jobs": "jobs",
    "-j": "jobs",
}
_REPEATABLE = frozenset({"select", "ignore", "exclude", "extend_exclude"})


def check_arguments(argv: list[str]) -> dict[str, Any] | None:
    """The parameters of :func:`run_check` for ``argv`` (without the program name) when it
    is a plain ``check`` command line, converted as Typer converts them; None for anything
    else (another command, ``--help``, an unknown or repeated option, a value that starts
    with ``-`` or is empty, a number that is not plain digits, no path, a shell-completion
    request...): Typer then parses it, errors and help included."""
    if not argv or argv[0] != "check":
        return None
    if any(key.startswith("_") and key.endswith("_COMPLETE") for key in os.environ):
        return None
    values: dict[str, Any] = {}
    paths: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        if arg == "-" or not arg.startswith("-"):
            paths.append(arg)
            continue
        name, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        flag = _CHECK_FLAGS.get(name)
        if flag is not None and not equals:
            if flag[0] in values:
                return None
            values[flag[0]] = flag[1]
            continue
        key = _CHECK_OPTIONS.get(name)
        if key is None:
            return None
        if not equals:
            value = next(args, "")
        if not value or value.startswith("-"):
            return None
        if key in _REPEATABLE:
            values.setdefault(key, []).append(value)
            continue
        if key in values:
            return None
        if key == "output":
            if value not in OutputFormat.__members__.values():
                return None
            values[key] = OutputFormat(value)
        elif key == "max_line":
            if not (value.isascii() and value.isdigit()):
                return None
            values[key] = int(value)
        elif key in ("blobs", "config"):
            values[key] = Path(value)
        else:
            values[key] = value
    if not paths:
        return None
    return {"paths": paths, **values}


def _run_check(arguments: dict[str, Any]) -> NoReturn:
    """:func:`run_check`, ending as the Typer application ends a command."""
    try:
        code = run_check(**arguments)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except EOFError:  # as Typer's main: an empty line and "Aborted!" on stderr, exit 1
        from typer import _click, core

        _click.echo(file=sys.stderr)
        if core.HAS_RICH and core.DEFAULT_MARKUP_MODE is not None:
            from typer import rich_utils

            rich_utils.rich_abort_error()
        else:
            _click.echo("Aborted!", file=sys.stderr)
        raise SystemExit(1) from None
    except OSError as error:
        import errno

        if error.errno != errno.EPIPE:
            raise
        from typer._click.utils import PacifyFlushWrapper

        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        raise SystemExit(1) from None
    raise SystemExit(code)


def _warm_up() -> None:
    """Load what every check run needs (the check modules, the Lark parser and its line
    driver, the check families) with the cyclic garbage collector paused, then put all of it
    out of the collector's sight (``gc.freeze``). Those thousands of objects live as long as
    the process: collections that walk them while they are made are wasted (~7 ms of
    ``check``'s start-up), and ``--jobs`` workers, forked later, leave their pages shared.
    A failure here is left to the run itself, which reports it where it always did."""
    import gc

    if not gc.isenabled():
        return
    gc.disable()
    try:
        from bbox_lark.check_output import render  # noqa: F401
        from bbox_lark.checks import registry
        from bbox_lark.config import resolver_from_options  # noqa: F401  (the run's modules)
        from bbox_lark.parser import line_driver
        from bbox_lark.workflow import check_paths  # noqa: F401

        line_driver()
        registry()
    except Exception:  # pragma: no cover - the run meets it again and reports it
        pass
    finally:
        gc.enable()
    gc.freeze()


def main() -> None:
    """Console-script entry point. A bug that escapes every command's own handling still
    ends in one clear line and exit 2, never a traceback (the per-file handling in
    :mod:`bbox_lark.workflow` keeps ``check`` going file by file)."""
    _escape_unencodable_output()
    try:
        arguments = check_arguments(sys.argv[1:])
        if arguments is not None:
            _warm_up()
            _run_check(arguments)
        from bbox_lark.commands import app

        app()
    except Exception as error:  # the last resort: the bug is ours, say so
        from bbox_lark.workflow import internal_error

        err.print("[bold red]error:[/] ", end="")
        err.print(_safe(internal_error(error).message), markup=False)
        raise SystemExit(EXIT_USAGE) from None


def __getattr__(name: str) -> Any:
    """The Typer application (``app``) and the other names of :mod:`bbox_lark.commands`,
    imported on first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    from bbox_lark import commands

    try:
        return getattr(commands, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


if __name__ == "__main__":  # pragma: no cover
    main()
