"""The reports of a ``check`` run, in every output format (``bbox-lark check --output-format``).

Each renderer takes the run's :class:`~bbox_lark.checks.workflow.FileReport` s (any iterable; read
once, in order) and :class:`ReportOptions`, and yields the text to write to standard output,
piece by piece:

* ``full``: each finding as ``path:line:col: CODE message``, its source line with a caret
  under the column, what to do about it and the ``explain`` command that tells more;
* ``concise``: ``path:line:col: CODE message``, one line each (named ``text`` before:
  docs/reference.md#output-formats);
* ``github``: GitHub Actions workflow commands (``::error file=…,line=…,col=…::message``);
* ``json``: the document described by ``docs/schema/check.schema.json``;
* ``sarif``: SARIF 2.1.0, with every code of the registry as a rule;
* ``junit``: JUnit XML, one test suite per file and a failing test case per failing finding.

The first three write each file's findings as soon as the file is checked; the others
describe the whole run and yield one document at the end. :func:`render_statistics` counts
findings per code instead. Unreadable inputs are listed by ``json``, ``sarif``, ``junit``
and ``github``; the other formats leave them to the caller (the command line prints them on
standard error). Nothing here prints or exits.

Text is always safe to write as UTF-8: input bytes that are not UTF-8 (kept as lone
surrogates, docs/reference.md#bytes-and-lines) are shown as ``\\xNN``, except in JSON and
SARIF strings, where they are ``\\udcNN`` escapes that read back to the same string.

>>> from bbox_lark.checks.workflow import FileReport
>>> from bbox_lark.syntax.nodes import Diagnostic
>>> found = Diagnostic("W003", "warning", 2, 1, "unknown line kind (kept verbatim)", "unknown-line")
>>> report = FileReport("a.bbox", (found,), text="---\\ntool: x\\n")
>>> print("".join(render_concise([report])), end="")
a.bbox:2:1: W003 unknown line kind (kept verbatim)
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field
from typing import Any

from bbox_lark._classes import dataclass
from bbox_lark.checks.workflow import EXIT_FINDINGS, EXIT_OK, FileReport
from bbox_lark.cli.ansi import BLUE, BOLD, SEVERITY_STYLE, paint
from bbox_lark.syntax.nodes import Diagnostic

#: Every output format, by name (``text`` is ``concise``'s old name, docs/reference.md#output-formats).
FORMATS = ("full", "concise", "json", "github", "sarif", "junit")

#: Lines of the ``full`` format longer than this (in code points) are shown as a window
#: around the column.
WINDOW = 100

TOOL_NAME = "bbox-lark"


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """What a report needs to know beyond the findings."""

    #: Warnings fail too (``--strict``); False: they never do (``--no-strict``); None: as
    #: each file's settings say (``strict`` in its configuration).
    strict: bool | None = False
    #: Findings never fail the run: exit code 1 becomes 0 (``--exit-zero``). An unreadable
    #: input or an internal error still gives 2.
    exit_zero: bool = False
    #: ANSI colours (``full`` and ``concise``).
    color: bool = False


def process_exit_code(code: int, options: ReportOptions) -> int:
    """The exit code of the process for a run whose files give ``code`` (the highest)."""
    return EXIT_OK if options.exit_zero and code == EXIT_FINDINGS else code


@dataclass(slots=True)
class Tally:
    """Totals over a run, counted as the reports stream past (:meth:`watch`)."""

    options: ReportOptions = field(default_factory=ReportOptions)
    #: Inputs seen, readable or not.
    files: int = 0
    #: Inputs that could not be read.
    unreadable: int = 0
    #: Findings per severity.
    severities: dict[str, int] = field(default_factory=lambda: {"error": 0, "warning": 0, "info": 0})
    #: The highest exit code of any file (before ``exit_zero``).
    worst: int = EXIT_OK

    def add(self, report: FileReport) -> None:
        self.files += 1
        self.worst = max(self.worst, report.exit_code(self.options.strict))
        if report.error is not None:
            self.unreadable += 1
        for diagnostic in report.diagnostics:
            self.severities[diagnostic.severity] += 1

    def watch(self, reports: Iterable[FileReport]) -> Iterator[FileReport]:
        """``reports``, passed through, each counted as it goes by."""
        for report in reports:
            self.add(report)
            yield report

    @property
    def exit_code(self) -> int:
        """The process's exit code (``exit_zero`` applied)."""
        return process_exit_code(self.worst, self.options)

    def summary(self) -> str:
        """One line: ``N file(s): E error(s), W warning(s), I info`` and the unreadable paths."""
        counts = self.severities
        text = (
            f"{self.files - self.unreadable} file(s): {counts['error']} error(s),"
            f" {counts['warning']} warning(s), {counts['info']} info"
        )
        if self.unreadable:
            text += f"; {self.unreadable} path(s) could not be read"
        return text


# -- shared helpers ---------------------------------------------------------------------


def safe(text: str) -> str:
    """``text`` with undecodable input bytes (lone surrogates, from ``surrogateescape``) as
    ``\\xNN``: they cannot be written as UTF-8, and a finding must never crash the output."""
    if text.isprintable() or not any(0xD800 <= ord(char) <= 0xDFFF for char in text):
        return text
    return "".join(_surrogate(c) if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def _surrogate(char: str) -> str:
    point = ord(char)
    return f"\\x{point - 0xDC00:02x}" if 0xDC80 <= point <= 0xDCFF else f"\\u{point:04x}"


def dumps_json(value: object) -> str:
    """JSON text (two-space indent, a final newline). Undecodable input bytes (lone
    surrogates) are written as ``\\udcNN`` escapes, which read back to the same string."""
    import json

    text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _help(code: str) -> tuple[str, str]:
    """A code's fix hint and name, from the registry (empty for an unknown code)."""
    from bbox_lark.checks import registry

    info = registry().get(code)
    return (info.fix, info.name) if info is not None else ("", "")


# -- concise ----------------------------------------------------------------------------


def render_concise(reports: Iterable[FileReport], options: ReportOptions | None = None) -> Iterator[str]:
    """``path:line:col: CODE message``, one finding a line, each file's as soon as it comes."""
    color = options is not None and options.color
    for report in reports:
        if report.error is not None or not report.diagnostics:
            continue
        shown = safe(report.shown)
        yield "".join(_concise_line(shown, d, color) + "\n" for d in report.diagnostics)


def _concise_line(shown: str, diagnostic: Diagnostic, color: bool) -> str:
    code = paint(diagnostic.code, SEVERITY_STYLE.get(diagnostic.severity, ""), color)
    return f"{shown}:{diagnostic.line}:{diagnostic.col}: {code} {safe(diagnostic.message)}"


# -- full -------------------------------------------------------------------------------


def render_full(reports: Iterable[FileReport], options: ReportOptions | None = None) -> Iterator[str]:
    """Each finding with its source line, a caret under its column, what to do about it and
    the command that explains its code; a blank line after each."""
    color = options is not None and options.color
    for report in reports:
        if report.error is not None or not report.diagnostics:
            continue
        shown = safe(report.shown)
        lines = _hidden(report.source(d.line for d in report.diagnostics))
        yield "".join(_full_block(shown, d, lines, color) for d in report.diagnostics)


def _hidden(lines: dict[int, str]) -> dict[int, str]:
    """Source lines as they may be shown: every secret starred out (same length, so a caret
    stays under its column; docs/reference.md#secrets: a secret is never printed whole)."""
    from bbox_lark.secrets.scanner import hide_secrets

    return {number: hide_secrets(text) for number, text in lines.items()}


def source_lines(text: str) -> list[str]:
    """The physical lines of ``text`` as the parser numbers them (BOM and endings removed)."""
    from bbox_lark.syntax.source import BOM, split_lines

    return [line for line, _ in split_lines(text.removeprefix(BOM))]


def _full_block(shown: str, diagnostic: Diagnostic, lines: Mapping[int, str], color: bool) -> str:
    style = SEVERITY_STYLE.get(diagnostic.severity, "")
    number = str(diagnostic.line)
    pad = " " * len(number)
    bar = paint("|", f"{BOLD};{BLUE}", color)
    out = [_concise_line(shown, diagnostic, color)]
    if diagnostic.line in lines:
        text, caret_pad = window(lines[diagnostic.line], diagnostic.col)
        gutter = paint(number, f"{BOLD};{BLUE}", color)
        out += [f"{pad} {bar}", f"{gutter} {bar} {text}".rstrip(" "), f"{pad} {bar} {caret_pad}"]
        out[-1] += paint("^", style, color)
        out.append(f"{pad} {bar}")
    fix, name = _help(diagnostic.code)
    equals = paint("=", f"{BOLD};{BLUE}", color)
    if fix:
        out.append(f"{pad} {equals} {paint('help', BOLD, color)}: {fix}")
    what = f"explains {name}, with examples" if name else "tells more"
    out.append(f"{pad} {equals} {paint('note', BOLD, color)}: `bbox-lark explain {diagnostic.code}` {what}")
    return "\n".join(out) + "\n\n"


def window(line: str, col: int) -> tuple[str, str]:
    """How ``line`` is shown, and the text that puts a caret under column ``col`` when
    printed below it at the same indent.

    Invisible characters and undecodable bytes are shown as escapes (``\\x00``, ``\\xe9``); a
    tab stays a tab and is copied into the caret's indent, so the caret lines up whatever the
    tab width; wide characters take two cells and combining marks none. A line longer than
    :data:`WINDOW` code points is cut to a window around the column, marked with ``…``."""
    index = min(max(col - 1, 0), len(line))
    start, end = 0, len(line)
    if len(line) > WINDOW:
        start = max(0, min(index - WINDOW // 2, len(line) - WINDOW))
        end = min(len(line), start + WINDOW)
    shown = ["…"] if start else []
    indent = [" "] if start else []
    for char in line[start:index]:
        text, cells = _cell(char)
        shown.append(text)
        indent.append(cells)
    shown.extend(_cell(char)[0] for char in line[index:end])
    if end < len(line):
        shown.append("…")
    return "".join(shown), "".join(indent)


def _cell(char: str) -> tuple[str, str]:
    """How one character is shown, and blanks as wide as that."""
    if char == "\t":
        return "\t", "\t"
    if char.isprintable():
        if char.isascii():
            return char, " "
        if unicodedata.combining(char):
            return char, ""
        return char, "  " if unicodedata.east_asian_width(char) in ("W", "F") else " "
    point = ord(char)
    if 0xD800 <= point <= 0xDFFF:
        text = _surrogate(char)
    else:
        text = f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"
    return text, " " * len(text)


# -- github -----------------------------------------------------------------------------

_GITHUB = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as the Actions toolkit does (``%``, CR, LF)."""
    return safe(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``), escaped as the Actions
    toolkit does: the message escapes plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(reports: Iterable[FileReport], options: ReportOptions | None = None) -> Iterator[str]:
    """One GitHub Actions annotation per finding: error → ``::error``, warning →
    ``::warning``, info → ``::notice`` (docs/reference.md#output-formats), with ``file``,
    ``line``, ``col`` and ``title`` (code and name). An unreadable input is an ``::error`` without a file."""
    for report in reports:
        if report.error is not None:
            yield f"::error title={escape_property(TOOL_NAME)}::{escape_data(report.error)}\n"
            continue
        where = escape_property(report.shown)
        lines = []
        for d in report.diagnostics:
            title = escape_property(f"{d.code} {d.name}")
            place = f"file={where},line={d.line},col={d.col},title={title}"
            lines.append(f"::{_GITHUB[d.severity]} {place}::{escape_data(d.message)}\n")
        if lines:
            yield "".join(lines)


# -- json -------------------------------------------------------------------------------


def render_json(reports: Iterable[FileReport], options: ReportOptions | None = None) -> Iterator[str]:
    """The whole run as the JSON document of ``docs/schema/check.schema.json``."""
    from bbox_lark.syntax.jsonout import diagnostic_to_json

    options = options or ReportOptions()
    tally = Tally(options)
    files: list[dict[str, Any]] = []
    strict_seen = bool(options.strict)
    for report in tally.watch(reports):
        strict_seen = strict_seen or (options.strict is None and report.strict)
        if report.error is not None:
            files.append({"path": report.path, "readable": False, "error": report.error, "diagnostics": []})
            continue
        diagnostics = [diagnostic_to_json(d) for d in report.diagnostics]
        files.append({"path": safe(report.shown), "readable": True, "diagnostics": diagnostics})
    document = {
        "version": 1,
        "exit_code": tally.exit_code,
        "strict": strict_seen,
        "files": files,
        "totals": {**tally.severities, "files": tally.files},
    }
    yield dumps_json(document)


# -- sarif ------------------------------------------------------------------------------

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def artifact_uri(path: str) -> str:
    """A SARIF ``artifactLocation.uri`` for a path as given: a relative reference (``/``
    separated, percent-encoded) for a relative path, a ``file://`` URI for an absolute one.
    Undecodable bytes of the name are percent-encoded as the bytes they are."""
    from pathlib import PurePath
    from urllib.parse import quote

    pure = PurePath(path)
    if pure.is_absolute():
        try:
            return pure.as_uri()
        except ValueError:  # pragma: no cover - an absolute path always has a URI
            pass
    return quote(pure.as_posix().encode("utf-8", "surrogateescape"), safe="/")


def _artifact(report: FileReport) -> dict[str, Any]:
    if report.path == "-":
        return {"description": {"text": "standard input"}}
    return {"uri": artifact_uri(report.path)}


def sarif_rules() -> list[dict[str, Any]]:
    """Every registered code as a SARIF ``reportingDescriptor``."""
    from bbox_lark.checks import registry

    rules = []
    for info in registry().values():
        if info.retired:
            continue
        explain = f"`bbox-lark explain {info.code}` explains it, with a failing and a passing example."
        rule: dict[str, Any] = {
            "id": info.code,
            "name": info.name,
            "shortDescription": {"text": info.summary},
            "fullDescription": {"text": info.rationale},
            "help": {"text": f"{info.fix} {explain}" if info.fix else explain},
            "defaultConfiguration": {"level": _SARIF_LEVEL[info.severity]},
        }
        if info.family:
            rule["properties"] = {"tags": [info.family]}
        rules.append(rule)
    return rules


def render_sarif(reports: Iterable[FileReport], options: ReportOptions | None = None) -> Iterator[str]:
    """The whole run as a SARIF 2.1.0 log: one run, the registry's codes as its rules, one
    result per finding (columns count code points), and the inputs that could not be read
    as error notifications of a failed invocation."""
    from bbox_lark import __version__

    options = options or ReportOptions()
    rules = sarif_rules()
    index = {rule["id"]: number for number, rule in enumerate(rules)}
    tally = Tally(options)
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for report in tally.watch(reports):
        location = _artifact(report)
        if report.error is not None:
            notifications.append(
                {
                    "level": "error",
                    "message": {"text": report.error},
                    "locations": [{"physicalLocation": {"artifactLocation": location}}],
                }
            )
            continue
        for d in report.diagnostics:
            result: dict[str, Any] = {"ruleId": d.code}
            if d.code in index:
                result["ruleIndex"] = index[d.code]
            region = {"startLine": d.line, "startColumn": d.col}
            result |= {
                "level": _SARIF_LEVEL[d.severity],
                "message": {"text": d.message},
                "locations": [{"physicalLocation": {"artifactLocation": location, "region": region}}],
            }
            results.append(result)
    invocation: dict[str, Any] = {
        "executionSuccessful": tally.worst < 2,
        "exitCode": tally.exit_code,
    }
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    driver = {
        "name": TOOL_NAME,
        "version": __version__,
        "semanticVersion": __version__,
        "rules": rules,
    }
    run = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    yield dumps_json({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]})


# -- junit ------------------------------------------------------------------------------


def xml_text(text: str) -> str:
    """``text`` escaped for XML character data, with what XML 1.0 cannot hold at all
    (control characters, undecodable bytes) shown as ``\\xNN`` escapes."""
    from xml.sax.saxutils import escape

    return escape(_xml_chars(text))


def xml_attr(text: str) -> str:
    """``text`` as a quoted XML attribute value (line breaks and tabs kept as references)."""
    from xml.sax.saxutils import quoteattr

    return quoteattr(_xml_chars(text))


def _xml_chars(text: str) -> str:
    def allowed(char: str) -> bool:
        point = ord(char)
        if point < 0x20:
            return char in "\t\n\r"
        return not (0xD800 <= point <= 0xDFFF or point in (0xFFFE, 0xFFFF))

    if all(allowed(c) for c in text):
        return text
    return "".join(c if allowed(c) else _cell(c)[0] for c in text)


def render_junit(reports: Iterable[FileReport], options: ReportOptions | None = None) -> Iterator[str]:
    """The whole run as JUnit XML: a ``<testsuite>`` per input; in it a ``<testcase>`` per
    failing finding, with a ``<failure>`` (an ``<error>`` for an internal error), or one
    passing ``<testcase>`` when nothing fails. Findings that do not fail (infos, and warnings
    without ``strict``) are listed in the suite's ``<system-out>``. An unreadable input is a
    suite whose one test case has an ``<error>``."""
    options = options or ReportOptions()
    suites: list[str] = []
    totals = Counter[str]()
    for report in reports:
        suite, counts = _junit_suite(report, options)
        suites.append(suite)
        totals.update(counts)
    head = (
        f'<testsuites name="{TOOL_NAME}" tests="{totals["tests"]}" failures="{totals["failures"]}"'
        f' errors="{totals["errors"]}">'
    )
    yield "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', head, *suites, "</testsuites>"]) + "\n"


def _junit_suite(report: FileReport, options: ReportOptions) -> tuple[str, Counter[str]]:
    from bbox_lark.checks.workflow import INTERNAL_ERROR, fails

    shown = safe(report.shown)
    where = xml_attr(shown)
    cases: list[str] = []
    counts = Counter[str]()
    quiet: list[str] = []
    if report.error is not None:
        message = xml_attr(report.error)
        cases.append(
            f'    <testcase name="read" classname={where} file={where}>\n'
            f'      <error message={message} type="unreadable">{xml_text(report.error)}</error>\n'
            "    </testcase>"
        )
        counts.update(tests=1, errors=1)
    for d in report.diagnostics:
        line = _concise_line(shown, d, color=False)
        if not fails([d], report.strict if options.strict is None else options.strict):
            quiet.append(line)
            continue
        fix, _name = _help(d.code)
        body = line + (f"\nhelp: {fix}" if fix else "") + f"\nmore: bbox-lark explain {d.code}"
        kind = "error" if d.code == INTERNAL_ERROR else "failure"
        name = xml_attr(f"{d.code} {d.name} at {d.line}:{d.col}")
        cases.append(
            f'    <testcase name={name} classname={where} file={where} line="{d.line}">\n'
            f"      <{kind} message={xml_attr(d.message)} type={xml_attr(d.code)}>{xml_text(body)}</{kind}>\n"
            "    </testcase>"
        )
        counts.update(tests=1, **{"errors" if kind == "error" else "failures": 1})
    if not cases:
        cases.append(f'    <testcase name="check" classname={where} file={where}/>')
        counts.update(tests=1)
    parts = [
        f'  <testsuite name={where} tests="{counts["tests"]}" failures="{counts["failures"]}"'
        f' errors="{counts["errors"]}" skipped="0">',
        *cases,
    ]
    if quiet:
        parts.append(f"    <system-out>{xml_text(chr(10).join(quiet))}</system-out>")
    parts.append("  </testsuite>")
    return "\n".join(parts), counts


# -- statistics -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Statistic:
    """How many findings a run has of one code."""

    code: str
    name: str
    severity: str
    count: int


def statistics(reports: Iterable[FileReport]) -> list[Statistic]:
    """Findings counted per code, the most frequent first (then by code)."""
    counts = Counter[str]()
    about: dict[str, Diagnostic] = {}
    for report in reports:
        for d in report.diagnostics:
            counts[d.code] += 1
            about.setdefault(d.code, d)
    rows = [Statistic(code, about[code].name, about[code].severity, n) for code, n in counts.items()]
    return sorted(rows, key=lambda row: (-row.count, row.code))


def render_statistics(
    reports: Iterable[FileReport], options: ReportOptions | None = None, *, as_json: bool = False
) -> Iterator[str]:
    """:func:`statistics` as aligned ``count  code  name`` lines, or as a JSON list of
    ``{code, name, severity, count}`` objects."""
    rows = statistics(reports)
    if as_json:
        yield dumps_json(
            [{"code": r.code, "name": r.name, "severity": r.severity, "count": r.count} for r in rows]
        )
        return
    if not rows:
        return
    color = options is not None and options.color
    width = len(str(rows[0].count))
    yield "".join(
        f"{r.count:>{width}}  {paint(r.code, SEVERITY_STYLE.get(r.severity, ''), color)}  {r.name}\n"
        for r in rows
    )


# -- choosing ---------------------------------------------------------------------------

Renderer = Callable[[Iterable[FileReport], ReportOptions | None], Iterator[str]]

#: The renderer of each format.
RENDERERS: dict[str, Renderer] = {
    "full": render_full,
    "concise": render_concise,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
    "junit": render_junit,
}


def render(
    reports: Iterable[FileReport], output_format: str, options: ReportOptions | None = None
) -> Iterator[str]:
    """The run in ``output_format`` (one of :data:`FORMATS`, or ``text`` for ``concise``)."""
    name = "concise" if output_format == "text" else output_format
    if name not in RENDERERS:
        raise ValueError(f"unknown output format {output_format!r}; known: {', '.join(FORMATS)}")
    return RENDERERS[name](reports, options)
