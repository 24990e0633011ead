"""The report's second pass: the page, written top to bottom as the input is read again.

Every piece of text from the log goes through :func:`esc` (HTML-escaped, lone surrogates
and NUL made visible) and nowhere else: the page never builds markup from log text in
JavaScript, and its script only reads ``textContent``. The timeline is cut into chunks
(``content-visibility: auto``) so that a browser lays out only what is on screen.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import TextIO

from bbox_lark.numbers.prices import format_usd
from bbox_lark.numbers.review import Costs, session_costs
from bbox_lark.report.assets import CSP, CSP_LIVE, SCRIPT, STYLE
from bbox_lark.report.survey import Survey, has_bit
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.nodes import Diagnostic, Event
from bbox_lark.syntax.parser import Head
from bbox_lark.syntax.record import Record

#: Rows per timeline chunk (the unit the browser skips laying out while off screen).
CHUNK = 200
#: Characters of a line shown before the rest is folded.
SHOWN = 2_000
#: Findings listed by the findings card (each is also shown at its line).
LISTED = 1_000
#: Line links per item of the "what went wrong" card.
LINKS = 12
#: Loops shown before the rest are folded.
LOOPS_SHOWN = 5
#: Codes about what happened in the session (the reader acts on them); every other finding is
#: about how the log was written (its writer fixes it): docs/report.md#findings.
READER_CODES = frozenset({"S001", "S002", "W007", "W024", "W025", "I002", "W018"})

#: Points of the usage chart (responses are grouped into this many buckets at most).
BUCKETS = 240

_UNSAFE = re.compile(r"[\x00\ud800-\udfff]")

#: Header keys the card shows first, with their labels.
CARD_KEYS = (
    ("id", "session"),
    ("model", "model"),
    ("agent", "agent"),
    ("runner", "runner"),
    ("client", "client"),
    ("repo", "repo"),
    ("branch", "branch"),
    ("repo_sha", "sha"),
    ("cwd", "cwd"),
    ("format", "format"),
)


def esc(text: object) -> str:
    """``text`` as HTML text or attribute value: escaped, with NUL and lone surrogates (bytes
    that were not UTF-8) shown as escapes instead of breaking the page's encoding."""
    value = str(text)
    if _UNSAFE.search(value):
        value = value.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")
    return html.escape(value, quote=True)


_CODE_SPAN = re.compile(r"`([^`]+)`")


def _prose(text: str) -> str:
    """A registry text (Markdown's code spans) as HTML: escaped first, then each code span
    wrapped (its content is already escaped text)."""
    return _CODE_SPAN.sub(r"<code>\1</code>", esc(text))


def duration_text(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{seconds:.1f} s"
    return str(timedelta(seconds=whole))


def _severity_text(found: Survey) -> str:
    parts = [f"{found.severities[s]} {s}" for s in ("error", "warning", "info") if found.severities[s]]
    return ", ".join(parts) if parts else "none"


def _calls_text(found: Survey) -> str:
    """``304 (4 failed, 1 pending)``: the calls, and how many did not end well."""
    from bbox_lark.numbers.outcomes import OUTCOMES

    totals = found.totals
    counts = dict(zip(OUTCOMES, totals.outcomes, strict=True)) if totals is not None else {}
    counts["error"] = found.errors
    words = {"error": "failed"}
    notes = [f"{counts[o]:,} {words.get(o, o)}" for o in OUTCOMES if o != "ok" and counts.get(o)]
    return f"{found.calls:,}" + (f" ({', '.join(notes)})" if notes else "")


def _count(value: int | None) -> str | None:
    return f"{value:,}" if value is not None else None


def _usage_rows(found: Survey) -> list[tuple[str, str]]:
    """Usage and cost as :mod:`bbox_lark.numbers.session` counts them, the file's own statements
    beside them (never added), and the estimate named as such."""
    totals = found.totals
    if totals is None:
        return []
    rows: list[tuple[str, str]] = []
    if len(totals.models) > 1:
        rows.append(("models", ", ".join(totals.models)))
    if totals.responses:
        rows.append(("model responses", f"{totals.responses:,}"))
    usage = totals.usage
    source = f" ({totals.usage_source})" if totals.usage_source else ""
    for label, value in (
        ("tokens_in", usage.tokens_in),
        ("tokens_out", usage.tokens_out),
        ("tokens_cached", usage.tokens_cached),
    ):
        shown = _count(value)
        if shown is not None:
            rows.append((label + source, shown))
    for where, stated in (("header", totals.header_totals), ("@end", totals.end_totals)):
        for label, value in (
            ("tokens_in", stated.prompt),
            ("tokens_out", stated.completion),
            ("tokens_cached", stated.cached),
        ):
            shown = _count(value)
            if shown is not None:
                rows.append((f"{label} ({where} states)", shown))
    rows.extend(cost_rows(session_costs(totals)))
    return rows


def cost_rows(costs: Costs) -> list[tuple[str, str]]:
    """The stated cost and the estimate, apart and named (the one place the page words them)."""
    rows: list[tuple[str, str]] = []
    if costs.stated_usd is not None:
        rows.append(("cost (stated)", format_usd(costs.stated_usd)))
    if costs.estimated_usd is not None:
        rows.append(("cost (estimated)", format_usd(costs.estimated_usd)))
    elif costs.estimate_note:
        rows.append(("cost (estimated)", f"none: {costs.estimate_note}"))
    return rows


class Page:
    """Writes one report to ``out``."""

    def __init__(self, out: TextIO, found: Survey, title: str, *, live: bool = False) -> None:
        self.out = out
        self.live = live
        self.found = found
        self.title = title
        self._rows = 0
        self._fold_until = 0  # last line of an open continuation fold
        self._previous = 0  # line of the previous event
        self._open_row = 0  # a call row waiting for its completion on the next line
        self._plain = False  # the card's item lists no failure text

    # -- the frame ----------------------------------------------------------------------------

    def write(self, stream: Iterator[Head | Record]) -> None:
        """The page of ``stream``: its head, then each body line's record
        (:func:`~bbox_lark.syntax.record.iter_records`, or the records the survey kept)."""
        w = self.out.write
        found = self.found
        session = found.header.get("id")
        heading = f"{session}" if isinstance(session, str) and session else self.title
        w("<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n")
        w(f'<meta http-equiv="Content-Security-Policy" content="{CSP_LIVE if self.live else CSP}">\n')
        w('<meta name=viewport content="width=device-width, initial-scale=1">\n')
        w('<meta name=referrer content="no-referrer">\n<link rel=icon href="data:,">\n')
        w(f"<title>bbox report · {esc(heading)}</title>\n<style>{STYLE}</style>\n</head>\n")
        w("<body data-live=1>\n" if self.live else "<body>\n")
        self._toolbar(heading)
        w("<main>\n")
        self._review()
        self._card()
        w("<div class=pair>\n")
        self._findings()
        self._tools()
        w("</div>\n")
        self._usage()
        w('<section id=timeline aria-label="Timeline">\n<h2>Timeline</h2>\n')
        head = next(stream)
        assert isinstance(head, Head)
        self._header_rows(head)
        w("<div class=ch>\n")
        for node in stream:
            self._node(node)  # type: ignore[arg-type]
        if self._open_row:
            self._close_row()
        self._close_fold()
        w("</div>\n</section>\n")
        self._codes()
        w(f"</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n")

    def _toolbar(self, heading: str) -> None:
        found = self.found
        errors = found.errors
        self.out.write(
            "<header class=bar>\n"
            f"<span class=brand>bbox report</span> <span class=what>{esc(heading)}</span>\n"
            '<input id=q type=search placeholder="Search lines… (Enter: next)" '
            'aria-label="Search the timeline" autocomplete=off>\n'
            '<select id=view aria-label="Show">'
            "<option value=all>every line</option><option value=messages>messages</option>"
            "<option value=calls>calls</option><option value=findings>lines with findings</option>"
            "</select>\n"
            f"<label class=errs><input id=only-errors type=checkbox> failed calls "
            f"<b id=error-count>{errors}</b></label>\n"
            f"<label class=errs><input id=only-pending type=checkbox> never finished "
            f"<b id=pending-count class=pend>{found.pending}</b></label>\n"
            + (
                f"<label class=errs><input id=show-bk type=checkbox> importer records "
                f"<i>{len(found.bookkeeping):,}</i></label>\n"
                if found.bookkeeping
                else ""
            )
            + "<span id=count aria-live=polite></span>\n"
            + ("<span id=live-msg class=live aria-live=polite>live</span>\n" if self.live else "")
            + "</header>\n"
        )

    # -- the summary cards ----------------------------------------------------------------------

    def _card(self) -> None:
        found = self.found
        header = found.header
        rows: list[tuple[str, str]] = []
        for key, label in CARD_KEYS:
            value = header.get(key)
            if isinstance(value, str) and value:
                rows.append((label, value))
        if found.duration is not None:
            rows.append(("duration", duration_text(found.duration)))
        rows.append(("lines", f"{found.lines:,}"))
        events = sum(found.kinds.values())
        rows.append(("events", f"{events:,}"))
        rows.append(("calls", _calls_text(found)))
        for kind, label in (("user", "user messages"), ("agent", "agent messages"), ("thinking", "thinking")):
            if found.kinds[kind]:
                rows.append((label, f"{found.kinds[kind]:,}"))
        rows.extend(_usage_rows(found))
        rows.append(("findings", _severity_text(found)))
        w = self.out.write
        w('<section class="card" id=summary aria-label="Session">\n<h2>Session</h2>\n<dl>\n')
        for label, value in rows:
            w(f"<div><dt>{esc(label)}</dt><dd>{esc(value)}</dd></div>\n")
        w("</dl>\n")
        if found.lanes:
            w("<p class=lanes>Lanes: ")
            for tid, lane in found.lanes.items():
                w(f'<span class="lane ln{lane}">{esc(tid)}</span> ')
            w("</p>\n")
        w("</section>\n")

    def _review(self) -> None:
        """The "what went wrong" card: each item counted, defined and linked to its lines."""
        review = self.found.review
        if review is None:
            return
        o = review.options
        w = self.out.write
        w('<section class="card ww" id=review aria-label="What went wrong">\n<h2>What went wrong</h2>\n')
        wrong = review.went_wrong
        if wrong is not None:
            w(
                f'<p class=wrong id=ww-wrong>It went wrong at <a href="#L{wrong.line}">L{wrong.line}</a>: '
                f"<b>{esc(wrong.tool)}</b> failed and no later {esc(wrong.tool)} call succeeded "
                f"<span class=snip>{esc(wrong.text)}</span></p>\n"
            )
        else:
            verdict = "every tool that failed succeeded later" if review.failed_count else "no call failed"
            w(f"<p class=fine id=ww-wrong>It never went wrong for good: {verdict}.</p>\n")
        w(
            "<p class=def>(Where it went wrong: the first failed call that no later call of the same tool"
            " made good.)</p>\n"
        )
        w("<div class=items>\n")
        self._item(
            "failed",
            "Failed calls",
            review.failed_count,
            "calls whose outcome is error.",
            [(c.line, c.tool, c.text) for c in review.failed],
        )
        self._item(
            "pending",
            "Never finished",
            review.pending_count,
            "calls started and never completed.",
            [(c.line, c.tool, c.text) for c in review.pending],
        )
        self._item(
            "retries",
            "Retries",
            review.retry_count,
            "a retry result, or the same call (tool and arguments) again right after it failed.",
            [(c.line, c.tool, "") for c in review.retries],
        )
        loops = review.loops
        w(f'<div class="it{" hot" if loops else ""}" id=ww-loops><h3>Loops <b>{len(loops):,}</b></h3>\n')
        w(
            f"<p class=def>the same call (tool and arguments, ids and times left out) made {o.loop_min} times"
            f" or more, each within {o.loop_window} calls of the one before.</p>\n"
        )
        if loops:
            w("<ul>\n")
            for index, loop in enumerate(loops):
                if index == LOOPS_SHOWN:
                    w(f"</ul>\n<details><summary>{len(loops) - LOOPS_SHOWN:,} more loops</summary><ul>\n")
                row = "in a row" if loop.in_a_row else f"L{loop.first_line}–L{loop.last_line}"
                w(
                    f"<li class=loop><b class=key>{esc(loop.key)}</b>"
                    f" <span class=times>× {loop.count:,}</span>"
                )
                w(f" <span class=gap>({row})</span>")
                w(f" <button type=button class=find data-q='{esc(loop.tool)}'>show them</button><br>")
                w(" ".join(f'<a href="#L{line}">L{line}</a>' for line in loop.lines[:LINKS]))
                if loop.count > LINKS:
                    w(f" <span class=gap>… {loop.count - LINKS:,} more</span>")
                w("</li>\n")
            w("</details>\n" if len(loops) > LOOPS_SHOWN else "</ul>\n")
        w("</div>\n")
        gap = duration_text(o.gap_seconds)
        self._item(
            "gaps",
            "Long gaps",
            review.gap_count,
            f"more than {gap} between two timed lines.",
            [(g.line, f"+{duration_text(g.seconds)}", f"after L{g.previous}") for g in review.gaps],
            hot=False,
        )
        costly = []
        for r in review.costliest:
            price = f"${r.estimated_usd:.4f} est." if r.estimated_usd is not None else "no estimate"
            costly.append(
                (r.line, price, f"out {r.tokens_out:,}, in {r.tokens_in:,}, cached {r.tokens_cached:,}")
            )
        self._plain = True
        self._item(
            "costly",
            "Costliest responses",
            len(costly),
            "the model responses with the most tokens (output ×5, input ×1, cache reads ×0.1).",
            costly,
            hot=False,
        )
        self._plain = False
        if review.ambiguous:
            self._item(
                "ambiguous",
                "Guessed pairs",
                len(review.ambiguous),
                "calls whose result could belong to another open call (paired in order).",
                [(line, "ambiguous", "") for line in review.ambiguous],
            )
        w("</div>\n</section>\n")

    def _item(
        self,
        key: str,
        title: str,
        count: int,
        definition: str,
        items: list[tuple[int, str, str]],
        hot: bool = True,
    ) -> None:
        w = self.out.write
        flag = " hot" if hot and count else ""
        w(f'<div class="it{flag}" id=ww-{key}><h3>{esc(title)} <b>{count:,}</b></h3>\n')
        w(f"<p class=def>{esc(definition)}</p>\n")
        if items:
            w("<ul>\n")
            for line, what, text in items[:LINKS]:
                kind = "tok" if self._plain else "snip"
                snip = f" <span class={kind}>{esc(text)}</span>" if text else ""
                w(f'<li><a href="#L{line}">L{line}</a> <b>{esc(what)}</b>{snip}</li>\n')
            w("</ul>\n")
            if count > LINKS:
                w(f"<p class=def>… {count - LINKS:,} more, each at its line.</p>\n")
        w("</div>\n")

    def _findings(self) -> None:
        found = self.found
        total = sum(found.severities.values())
        w = self.out.write
        w('<section class=card id=findings aria-label="Findings">\n')
        w(f"<h2>Findings <small>{total}</small></h2>\n")
        if not total:
            w("<p>No findings.</p>\n</section>\n")
            return
        groups: dict[bool, list[Diagnostic]] = {True: [], False: []}
        for line in sorted(found.diagnostics):
            for diagnostic in found.diagnostics[line]:
                groups[diagnostic.code in READER_CODES].append(diagnostic)
        listed = 0
        for reader, title in ((True, "About the session"), (False, "About how the log was written")):
            items = groups[reader]
            if not items:
                continue
            w(
                f"<h3 class=fg>{title} <small>{len(items):,}</small></h3>\n"
                f'<ul class="found{"" if reader else " writer"}">\n'
            )
            for diagnostic in items:
                if listed >= LISTED:
                    break
                listed += 1
                line = diagnostic.line
                w(f'<li class="sev-{esc(diagnostic.severity)}"><a href="#L{line}">L{line}</a> ')
                w(f"{self._code_link(diagnostic)} {esc(diagnostic.message)}</li>\n")
            w("</ul>\n")
        if listed < total:
            w(f"<p>{total - listed:,} more, each at its line.</p>\n")
        if not groups[True]:
            w("<p class=def>None the reader has to act on: the findings are the log writer's to fix.</p>\n")
        w("</section>\n")

    def _tools(self) -> None:
        found = self.found
        if not found.tools:
            return
        w = self.out.write
        w('<section class=card id=tools aria-label="Calls by tool">\n<h2>Calls by tool</h2>\n')
        timed = any(row.latencies for row in found.tools.values())
        w("<table>\n<thead><tr><th>tool</th><th>calls</th><th>failed</th><th>pending</th>")
        w("<th>median ms</th><th>max ms</th>" if timed else "")
        w("</tr></thead>\n<tbody>\n")
        for row in sorted(found.tools.values(), key=lambda r: (-r.calls, r.name)):
            failed = f'<td class="num o-error">{row.errors}</td>' if row.errors else "<td class=num>0</td>"
            pend = f'<td class="num o-pending">{row.pending}</td>' if row.pending else "<td class=num>0</td>"
            w(f"<tr><td>{esc(row.name)}</td><td class=num>{row.calls:,}</td>{failed}{pend}")
            if timed:
                latencies = sorted(row.latencies)
                median = f"{latencies[len(latencies) // 2]:,}" if latencies else "–"
                most = f"{latencies[-1]:,}" if latencies else "–"
                w(f"<td class=num>{median}</td><td class=num>{most}</td>")
            w("</tr>\n")
        w("</tbody>\n</table>\n</section>\n")

    def _usage(self) -> None:
        found = self.found
        count = len(found.usage_lines)
        if not count:
            return
        size = max(1, -(-count // BUCKETS))
        buckets = []
        for start in range(0, count, size):
            end = min(count, start + size)
            buckets.append(
                (
                    found.usage_lines[start],
                    max(found.usage_in[start:end]),
                    sum(found.usage_out[start:end]),
                    start + 1,
                    end,
                )
            )
        top_in = max(b[1] for b in buckets) or 1
        top_out = max(b[2] for b in buckets) or 1
        width, height, pad = 960, 170, 22
        step = width / len(buckets)
        w = self.out.write
        w('<section class=card id=usage aria-label="Usage over the session">\n')
        unit = "model responses" if found.usage_unit == "responses" else "steps (# metrics)"
        w(f"<h2>Usage over {count:,} {unit}</h2>\n")
        w(f'<svg viewBox="0 0 {width} {height + pad}" role=img aria-label="Usage chart">\n')
        w(f"<text x=2 y=12 class=ax>input ≤ {top_in:,} (line)</text>")
        w(f'<text x={width - 2} y=12 class="ax end">output ≤ {top_out:,} (bars)</text>\n')
        points = []
        for index, (line, tokens_in, tokens_out, first, last) in enumerate(buckets):
            x = index * step
            bar = (height - pad) * tokens_out / top_out
            points.append(f"{x + step / 2:.1f},{height - (height - pad) * tokens_in / top_in:.1f}")
            span = f"{found.usage_unit} {first}–{last} from L{line}"
            label = f"{span}: input ≤ {tokens_in:,}, output {tokens_out:,}"
            w(
                f'<a href="#L{line}"><rect class=out x="{x:.1f}" y="{height - bar:.1f}" '
                f'width="{max(step - 1, 0.5):.1f}" height="{bar:.1f}">'
                f"<title>{esc(label)}</title></rect></a>\n"
            )
        w(f'<polyline class=in points="{" ".join(points)}"/>\n')
        w(f"<text x=2 y={height + pad - 4} class=ax>L{buckets[0][0]}</text>")
        w(f'<text x={width - 2} y={height + pad - 4} class="ax end">L{buckets[-1][0]}</text>\n')
        w("</svg>\n</section>\n")

    def _codes(self) -> None:
        from bbox_lark.checks import registry

        codes = sorted({d.code for items in self.found.diagnostics.values() for d in items})
        if not codes:
            return
        known = registry()
        w = self.out.write
        w('<section class=card id=codes aria-label="What the codes mean">\n<h2>What the codes mean</h2>\n')
        for code in codes:
            info = known.get(code)
            w(f'<div class=code-doc id="code-{esc(code)}">\n<h3>{esc(code)}')
            if info is None:
                w("</h3>\n<p>Not a registered code.</p>\n</div>\n")
                continue
            w(f" <small>{esc(info.name)} · {esc(info.severity)}</small></h3>\n")
            w(f"<p>{_prose(info.summary)}</p>\n<p>{_prose(info.rationale)}</p>\n")
            if info.fix:
                w(f"<p><b>Fix:</b> {_prose(info.fix)}</p>\n")
            if info.bad:
                w(f"<p>Example:</p>\n<pre>{esc(info.bad)}</pre>\n")
            w("</div>\n")
        w("</section>\n")

    @staticmethod
    def _code_link(diagnostic: Diagnostic) -> str:
        return f'<a class=code href="#code-{esc(diagnostic.code)}">{esc(diagnostic.code)}</a>'

    # -- the timeline ---------------------------------------------------------------------------

    def _diagnostics(self, line: int) -> None:
        items = self.found.diagnostics.get(line)
        if not items:
            return
        w = self.out.write
        for diagnostic in items:
            w(
                f'<div class="dg sev-{esc(diagnostic.severity)}">{self._code_link(diagnostic)} '
                f"<span class=col>col {diagnostic.col}</span> {esc(diagnostic.message)}</div>\n"
            )

    def _header_rows(self, head: Head) -> None:
        lines = head.header_lines
        if not lines:
            return
        w = self.out.write
        w(f"<details class=hdr><summary>header · {len(lines)} lines</summary>\n")
        for line in lines:
            flagged = " has-dg" if line.line in self.found.diagnostics else ""
            w(f'<div class="r k-header{flagged}" id=L{line.line}>{self._number(line.line)}')
            w(f"<div class=b>{esc(line.raw)}</div></div>\n")
            self._diagnostics(line.line)
        w("</details>\n")
        opened = any(line in self.found.diagnostics for line in range(1, head.body_start))
        if opened:  # header findings are shown unfolded
            w("<p class=note>The header has findings: unfold it.</p>\n")

    @staticmethod
    def _number(line: int) -> str:
        return f"<a class=n href=#L{line}>{line}</a>"

    def _close_fold(self) -> None:
        if self._fold_until:
            self.out.write("</details>\n")
            self._fold_until = 0

    def _node(self, node: Record) -> None:
        w = self.out.write
        line = node.line
        kind = node.kind
        found = self.found
        if self._open_row:
            if node.is_event and found.completes.get(line) == self._open_row:
                self._joined(node)
                return
            self._close_row()
        if self._fold_until and line > self._fold_until:
            self._close_fold()
        if kind == "blank" and line not in found.diagnostics:
            w(f"<span class=bl id=L{line}></span>\n")  # an anchor for #L links, not a row
            return
        if not self._fold_until:
            self._rows += 1
            if self._rows >= CHUNK:
                self._rows = 0
                w("</div>\n<div class=ch>\n")
        if kind == "continuation":
            flagged = " has-dg" if line in found.diagnostics else ""
            if node.owner is not None and node.owner in found.bookkeeping:
                flagged += " bk"
            w(f'<div class="r cont{flagged}" id=L{line}>{self._number(line)}')
            w(f"<div class=b>{esc(node.raw)}</div></div>\n")
            self._diagnostics(line)
            return
        if kind == "blank":
            flagged = " has-dg" if line in found.diagnostics else ""
            w(f'<div class="r blank{flagged}" id=L{line}>{self._number(line)}</div>\n')
            self._diagnostics(line)
            return
        self._event(node)
        if has_bit(found.joined, line):
            self._open_row = line  # its completion, on the next line, joins this row
            return
        w("</div></div>\n")
        self._after(line)

    def _after(self, line: int) -> None:
        """What follows a line's row: its findings, and the fold of its output."""
        self._diagnostics(line)
        folded = self.found.continuation.get(line)
        if folded is not None:
            count, last = folded
            bk = " bk" if line in self.found.bookkeeping else ""
            self.out.write(f"<details class='cont{bk}'><summary>{count:,} lines of output</summary>\n")
            self._fold_until = last
        self._previous = line

    def _close_row(self) -> None:
        line, self._open_row = self._open_row, 0
        self.out.write("</div></div>\n")
        self._after(line)

    def _joined(self, event: Event | Record) -> None:
        """The completion of the open call row, on the next line: inside that row."""
        start, line = self._open_row, event.line
        outcome = self.found.outcomes.get(start, "unknown")
        self.out.write(
            f'<div class="jn o-{esc(outcome)}" id=L{line}>{self._number(line)} {self._marked(event)}</div>'
        )
        self._open_row = 0
        self.out.write("</div></div>\n")
        self._diagnostics(start)
        self._after(line)

    def _event(self, event: Event | Record) -> None:
        """The row of an event, left open after its text (the caller closes it)."""
        found = self.found
        line = event.line
        classes = ["r", f"k-{event.kind}"]
        if line in found.diagnostics:
            classes.append("has-dg")
        outcome = found.outcomes.get(line)
        start = found.completes.get(line)
        if outcome is not None:
            classes += ["call", f"o-{outcome}"]
        elif start is not None:
            classes += ["obs", "join", f"o-{found.outcomes.get(start, 'unknown')}"]
            if start in found.far:  # shown at its call: here one line
                classes.append("far-o")
        if event.kind in ("mode",) or (event.kind == "lifecycle" and event.name == "phase"):
            classes.append("sec")
        if line in found.bookkeeping:
            classes.append("bk")
        if line in found.ambiguous:
            classes.append("amb")
        tid = event.fields.get("tid")
        if isinstance(tid, str) and tid in found.lanes:
            classes.append(f"ln{found.lanes[tid]}")
        w = self.out.write
        w(f'<div class="{" ".join(classes)}" id=L{line}>{self._number(line)}<div class=b>')
        if start is not None:  # a late result: shown at its call; here one line, linked back
            w(f'<a class=back href="#L{start}" title="the call this completes">↰ call L{start}</a> ')
        if event.kind == "thinking":  # one line until opened (the summary is the whole line)
            w(f"<details class=th><summary>{self._marked(event)}</summary></details>")
        else:
            w(self._marked(event, done=outcome is not None and outcome != "pending"))
        if outcome is not None:
            w(f" <span class=badge>{esc(outcome)}</span>")
            if line in found.ambiguous:
                w(
                    ' <span class="badge amb" title="paired in order: the result could be'
                    " another call's\">ambiguous</span>"
                )
            far = found.far.get(line)
            if far is not None:
                gap = f"+{far.line - line:,} lines"
                if far.latency_ms is not None:
                    gap += f", {duration_text(far.latency_ms / 1000)}"
                w(
                    f'<div class="far o-{esc(far.outcome)}"><a href="#L{far.line}">o: L{far.line}</a> '
                    f"<span class=gap>({gap})</span> <span class=res>{esc(far.text)}</span></div>"
                )

    def _marked(self, event: Event | Record, done: bool = False) -> str:
        """The line's source with its parts marked: prefix and name, fields (dimmed), the
        result; beyond :data:`SHOWN` characters the rest is folded. ``done``: the call was
        completed, so a start placeholder (``→ [running]``) is marked to be hidden (the
        badge says how it ended)."""
        raw = event.raw
        marks: list[tuple[int, int, str]] = []
        prefix_end = len(event.prefix) + 1 if event.prefix else 0
        if event.kind == "lifecycle":
            prefix_end = 0
        if prefix_end:
            marks.append((0, prefix_end, "p"))
        if event.name and event.name_col is not None:
            begin = event.name_col - 1
            marks.append((begin, begin + len(event.name), "nm"))
        for node in event.field_nodes:
            marks.append((node.col - 1, node.end_col - 1, "f"))
        result = event.result
        if event.arrow_col is not None:
            if done and result is not None and result.head and result.kind in vocabulary().start_statuses:
                marks.append((event.arrow_col - 1, result.col - 1 + len(result.head), "ph"))
            else:
                marks.append((event.arrow_col - 1, len(raw), "res"))
        return _spans(raw, marks)


def _spans(raw: str, marks: list[tuple[int, int, str]]) -> str:
    """``raw`` escaped, with non-overlapping ``marks`` (start, end, class) wrapped in spans;
    a mark that overlaps an earlier one is dropped (the result mark keeps its fields)."""
    shown, rest = raw[:SHOWN], raw[SHOWN:]
    parts: list[str] = []
    at = 0
    for begin, end, name in sorted(marks):
        end = min(end, len(shown))
        if begin < at or begin >= end:
            continue
        parts.append(esc(shown[at:begin]))
        parts.append(f"<span class={name}>{esc(shown[begin:end])}</span>")
        at = end
    parts.append(esc(shown[at:]))
    if rest:
        parts.append(f"<details class=more><summary>{len(rest):,} more characters</summary>")
        parts.append(f"{esc(rest)}</details>")
    return "".join(parts)
