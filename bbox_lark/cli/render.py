"""Text rendering for the CLI's ``parse`` and ``stats`` commands (rich renderables).

Everything a file contributes is shown through :func:`bbox_lark.syntax.source.visible`, so bytes
that are not UTF-8, NUL bytes and other control characters print as escapes and never
break the terminal (or the encoder).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from bbox_lark.numbers.stats import CallCounts, Stats
from bbox_lark.numbers.usage import Totals
from bbox_lark.syntax.nodes import (
    BlankLine,
    Comment,
    Continuation,
    Diagnostic,
    Document,
    Event,
    HeaderLine,
    Message,
    Result,
    Unknown,
)
from bbox_lark.syntax.source import visible

if TYPE_CHECKING:
    from bbox_lark.numbers.stats_run import StatsRun

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_KIND_WIDTH = 13
_NAME_WIDTH = 16
_PLAIN_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/:$@+~!%^*&?<>")


def quote(text: str) -> str:
    """``text`` in double quotes with ``\\`` ``"`` and invisible characters escaped."""
    return '"' + visible(text.replace("\\", "\\\\").replace('"', '\\"')) + '"'


def show_value(value: Any) -> str:
    """A field value or argument: bare when it is one plain word, else quoted; lists as
    ``[a, b]``."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(show_value(item) for item in value) + "]"
    text = str(value)
    if text and all(char in _PLAIN_WORD for char in text):
        return text
    return quote(text)


def _fields(values: dict[str, Any]) -> str:
    return " ".join(f"{key}={show_value(value)}" for key, value in values.items())


def _result(result: Result) -> Text:
    text = Text("→ ", style="bold")
    text.append(result.kind, style="magenta")
    if result.text:
        text.append(" " + quote(result.text))
    return text


def _row(line: int, kind: str, name: str, details: Text | str, kind_style: str = "bold") -> Text:
    text = Text(f"{line:>5}  ", style="dim")
    text.append(f"{kind:<{_KIND_WIDTH}}", style=kind_style)
    text.append(" ")
    text.append(f"{visible(name):<{_NAME_WIDTH}}", style="green")
    if details:
        text.append(" ")
        text.append(details)
    text.rstrip()
    return text


def _event_details(event: Event) -> Text:
    parts: list[Text] = []
    match event:
        case Unknown(oversized=True):
            return Text(f"<{len(event.raw):,} characters: over the line limit, not parsed>", style="italic")
        case Unknown():
            return Text(quote(event.raw))
        case Comment(fields=fields, name=str()) if fields:
            parts.append(Text(_fields(fields)))
        case Comment(text=text):
            if text:
                parts.append(Text(quote(text)))
        case Message(text=text, fields=fields):
            if text:
                parts.append(Text(quote(text)))
            if fields:
                parts.append(Text(_fields(fields), style="cyan"))
        case _:
            if event.args:
                parts.append(Text(" ".join(show_value(arg) for arg in event.args)))
            # Fields after the arrow are shown as part of the result.
            before = [node for node in event.field_nodes if not node.after_arrow]
            if before:
                shown = " ".join(f"{node.key}={show_value(node.value)}" for node in before)
                parts.append(Text(shown, style="cyan"))
    if event.result is not None:
        parts.append(_result(event.result))
    elif event.arrow is not None:
        parts.append(Text("→ empty", style="magenta"))
    if event.metrics is not None and not isinstance(event, Comment):
        parts.append(Text("# metrics " + _fields(event.metrics), style="dim"))
    return Text("  ").join(parts)


def _header_row(line: HeaderLine, keys: dict[int, str], fields: dict[str, Any]) -> Text:
    if line.role == "fence":
        return _row(line.line, "header", "fence", Text(visible(line.raw)), "blue")
    if line.role == "blank" or not line.raw.strip():
        return _row(line.line, "header", "blank", "", "blue")
    key = keys.get(line.line)
    if key is not None and key in fields:
        value = json.dumps(fields[key], ensure_ascii=False)
        return _row(line.line, "header", key, Text(visible(value)), "blue")
    return _row(line.line, "header", "", Text(visible(line.raw), style="dim"), "blue")


def _body_row(node: Event | Continuation | BlankLine) -> Text:
    if isinstance(node, BlankLine):
        return _row(node.line, "blank", "", "", "dim")
    if isinstance(node, Continuation):
        owner = f"↳ {node.owner}" if node.owner is not None else "↳ (none)"
        return _row(node.line, "continuation", owner, Text(quote(node.text)), "dim")
    style = "yellow" if node.kind == "unknown" else "bold"
    return _row(node.line, node.kind, node.name or "", _event_details(node), style)


def _diagnostic_row(diagnostic: Diagnostic) -> Text:
    text = Text(" " * 7)
    text.append(diagnostic.code, style=_SEVERITY_STYLE[diagnostic.severity])
    text.append(f" {diagnostic.severity} at {diagnostic.line}:{diagnostic.col}: ", style="dim")
    text.append(visible(diagnostic.message))
    return text


def parse_rows(document: Document, *, header: bool = True, body: bool = True) -> Iterator[Text]:
    """One row per physical line (``line kind name details``), each followed by the
    diagnostics reported on it; findings about no line that exists come last."""
    from bbox_lark.checks.workflow import in_header

    by_line: dict[int, list[Diagnostic]] = {}
    for diagnostic in document.diagnostics:
        if (header and in_header(document, diagnostic)) or (body and not in_header(document, diagnostic)):
            by_line.setdefault(diagnostic.line, []).append(diagnostic)

    def with_diagnostics(line: int, row: Text) -> Iterator[Text]:
        yield row
        for diagnostic in by_line.pop(line, ()):
            yield _diagnostic_row(diagnostic)

    if header:
        info = document.header_info
        keys = {number: key for key, number in info.key_lines.items()} if info is not None else {}
        fields = info.fields if info is not None else {}
        if not document.header_lines:
            yield Text("(no header)", style="dim italic")
        for header_line in document.header_lines:
            yield from with_diagnostics(header_line.line, _header_row(header_line, keys, fields))
    if body:
        for node in document.lines:
            yield from with_diagnostics(node.line, _body_row(node))
    for line in sorted(by_line):
        for diagnostic in by_line[line]:
            yield _diagnostic_row(diagnostic)


# -- stats ------------------------------------------------------------------------------


def _grid(rows: Iterable[tuple[str, str] | tuple[str, str, str]], *, left: bool = False) -> Text:
    """An indented block of aligned rows: label, value (right-aligned unless ``left``), note."""
    table = [(row[0], row[1], row[2] if len(row) > 2 else "") for row in rows]
    label_width = max((len(label) for label, _, _ in table), default=0)
    value_width = max((len(value) for _, value, _ in table), default=0)
    lines = []
    for label, value, note in table:
        line = Text("  " + label.ljust(label_width) + "  ")
        line.append(value.ljust(value_width) if left else value.rjust(value_width), style="bold")
        if note:
            line.append("  " + note, style="dim")
        line.rstrip()
        lines.append(line)
    return Text("\n").join(lines)


def _section(title: str, body: RenderableType) -> Group:
    return Group(Text(""), Text(f"{title}:", style="bold"), body)


def _number(value: int | Decimal | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, Decimal):
        from bbox_lark.numbers.prices import format_usd

        return format_usd(value)
    return f"{value:,}"


def _outcomes_note(counts: tuple[int, ...]) -> str:
    """``3 error, 1 pending``: the outcomes other than ok (docs/reference.md#outcomes)."""
    from bbox_lark.numbers.outcomes import OUTCOMES

    return ", ".join(
        f"{n:,} {outcome}" for outcome, n in zip(OUTCOMES, counts, strict=True) if n and outcome != "ok"
    )


def _calls(label: str, calls: CallCounts) -> list[tuple[str, str, str]]:
    rows = [(label, f"{calls.total:,}", _outcomes_note(calls.outcomes))]
    per_tool = dict(calls.by_tool)
    rows += [
        (f"  {visible(name)}", f"{count:,}", _outcomes_note(per_tool.get(name, ())))
        for name, count in calls.by_name
    ]
    return rows


def _totals_row(table: Table, source: str, totals: Totals, note: str = "") -> None:
    table.add_row(
        source,
        _number(totals.prompt),
        _number(totals.completion),
        _number(totals.cached),
        _number(totals.tokens),
        _number(totals.cost),
        note,
    )


def stats_renderables(stats: Stats, path: str, title: str = "File") -> list[RenderableType]:
    """``bbox-lark stats`` as text: labelled blocks and one table of token totals. ``title``
    heads the first line (``File: PATH``; ``Total: 3 file(s)`` over several files)."""
    out: list[RenderableType] = [Text(f"{title}: {visible(path)}", style="bold")]
    if stats.header:
        out.append(
            _section("Header", _grid(((key, visible(value)) for key, value in stats.header), left=True))
        )
    out.append(_lines_section(stats))
    out.append(_section("Events", _grid((kind, f"{count:,}") for kind, count in stats.events if count)))
    if stats.lifecycle:
        out.append(
            _section(
                "Lifecycle", _grid((f"@{visible(name)}", f"{count:,}") for name, count in stats.lifecycle)
            )
        )
    out.append(_calls_section(stats))
    out.append(_metadata_section(stats))
    out.append(_tokens_section(stats))
    usage = stats.usage
    if usage.source is not None or stats.cost.stated is not None:
        out.append(_usage_section(stats))
    return out


def _lines_section(stats: Stats) -> Group:
    counts = stats.lines
    return _section(
        "Lines",
        _grid(
            [
                ("total", f"{counts.total:,}", f"header {counts.header:,}, body {counts.body:,}"),
                ("content", f"{counts.content:,}", "not blank, not comment"),
                ("blank", f"{counts.blank:,}", ""),
                ("comment", f"{counts.comment:,}", ""),
                ("continuation", f"{counts.continuation:,}", "part of content"),
                ("unknown", f"{counts.unknown:,}", "part of content"),
            ]
        ),
    )


def _calls_section(stats: Stats) -> Group:
    calls = (
        _calls("tool calls", stats.tools)
        + _calls("MCP calls", stats.mcp)
        + _calls("subagents", stats.subagents)
    )
    by_order, ambiguous = stats.pairing[1], stats.pairing[2]
    if by_order or ambiguous:
        calls.append(
            (
                "paired",
                "",
                f"{by_order:,} by order, {ambiguous:,} ambiguous (a guess: results paired in order)",
            )
        )
    return _section("Calls (a start and its completion count once)", _grid(calls))


def _metadata_section(stats: Stats) -> Group:
    steps = stats.steps
    redactions = ", ".join(f"{visible(kind)} {count}" for kind, count in stats.redactions.by_kind)
    meta = [
        ("call ids", f"{stats.call_ids:,}", "unique"),
        ("spans", f"{stats.spans:,}", "unique"),
        (
            "step range",
            f"{steps.min}-{steps.max}" if steps.min is not None else "-",
            f"{steps.lines:,} with step=",
        ),
        ("timestamps", f"{stats.timestamps:,}", "with a valid ts="),
        ("blob references", f"{stats.blobs.count:,}", f"{stats.blobs.bytes:,} bytes"),
        ("redacted values", f"{stats.redactions.total:,}", redactions),
    ]
    return _section("Metadata", _grid(meta))


def _tokens_section(stats: Stats) -> Group:
    tokens = Table(box=box.SIMPLE_HEAD, padding=(0, 1), show_edge=False)
    for index, column in enumerate(("source", "prompt", "completion", "cached", "total", "cost", "")):
        tokens.add_column(column, justify="left" if index in (0, 6) else "right", no_wrap=True)
    metrics = stats.metrics
    note = f"{metrics.counted} counted"
    if metrics.skipped:
        note += f", {metrics.skipped} skipped"
    _totals_row(tokens, "# metrics", metrics.totals, note)
    for source, totals in (
        ("header", stats.header_totals),
        ("@end", stats.end_totals),
        ("summary", stats.summary_totals),
    ):
        if not totals.empty:
            _totals_row(tokens, source, totals, "stated")
    title = "Tokens and cost (# metrics once per step; stated totals shown beside, never added)"
    return _section(title, tokens)


def _usage_section(stats: Stats) -> Group:
    usage, cost = stats.usage, stats.cost
    rows = [
        (name, _number(value), "")
        for name, value in (
            ("tokens_in", usage.usage.tokens_in),
            ("tokens_out", usage.usage.tokens_out),
            ("tokens_cached", usage.usage.tokens_cached),
        )
    ]
    sources = {"metrics": "from # metrics", "responses": f"{usage.responses:,} model responses"}
    rows[0] = (*rows[0][:2], sources.get(usage.source or "", usage.source or ""))
    rows.append(("stated cost", _number(cost.stated), "as the file states it"))
    estimate_note = cost.estimate_note or "genai-prices list prices"
    if cost.lower_bound and cost.estimated is not None:
        estimate_note += " (a lower bound: no cache writes stated)"
    rows.append(("estimated cost", _number(cost.estimated), estimate_note))
    if stats.metrics_cached_over_prompt:
        rows.append(
            (
                "cached > prompt",
                f"{stats.metrics_cached_over_prompt:,}",
                "# metrics whose prompt was taken as uncached (W028)",
            )
        )
    if stats.models:
        rows.append(("models", visible(", ".join(stats.models)), ""))
    return _section("Usage (each model response once)", _grid(rows))


def stats_group(stats: Stats, path: str, title: str = "File") -> Group:
    return Group(*stats_renderables(stats, path, title))


def render_stats(run: StatsRun, *, as_json: bool = False) -> None:
    """``bbox-lark stats``: each input's notes and table (``as_json``: the notes, then the
    JSON), and the totals over several files."""
    from bbox_lark.cli.console import out, say, write_json

    tables = 0
    for shown in run.shown:
        say(shown.before)
        if shown.stats is not None and not as_json:
            if tables:
                out.print()
            tables += 1
            out.print(stats_group(shown.stats, shown.path))
        say(shown.after)
    if run.json is None:  # the run stopped at an input that could not be read
        return
    if as_json:  # one shape for one file or many (docs/schema/stats.schema.json)
        write_json(run.json)
    elif run.total is not None:
        out.print()
        out.print(stats_group(run.total, f"{tables} file(s)", title="Total"))
