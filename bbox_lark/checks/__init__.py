"""The checks: one registry of stable diagnostic codes, one module per family of checks.

Code scheme (codes are never reused; a retired code stays in the registry as a tombstone):

* ``W001``-``W009`` and ``I001``-``I004`` keep the meaning they had in the reference Rust
  ``blackbox validate``, so its users can switch.
* New warnings continue at ``W010``, new infos at ``I005``; errors are ``E001`` onwards.

Adding a check is one small addition to a family module: a :func:`describe` call (code,
kebab-case name, severity, summary, rationale, a failing and a passing example, and ``fix``:
what to do about a finding) and the code that reports it from a :func:`rule`. The registry
drives ``docs/checks.md``, the ``explain`` command, the ``full``, SARIF and JUnit outputs of
``check``, and the tests that run every example and that require an ``corpus/invalid`` file
for every code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bbox_lark.ast import Diagnostic, Document, Event

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True, slots=True)
class CheckInfo:
    """What a diagnostic code means."""

    code: str
    name: str
    severity: str
    #: One line: what the check finds.
    summary: str
    #: Why it matters.
    rationale: str
    #: A document that makes this check (and no other) report.
    bad: str
    #: The same document made right: no check reports anything.
    good: str
    #: The check module's family (``header``, ``lines``, ...).
    family: str = ""
    #: A retired code: kept so it is never reused.
    retired: bool = False
    #: Reported by the runner, not by a rule (an internal error): no document triggers it,
    #: so ``bad`` describes the situation instead of being an example to run.
    internal: bool = False
    #: One line: what to do about a finding (a command to run, what to write instead);
    #: empty when there is nothing to do. Shown by ``check --output-format full``, SARIF and
    #: JUnit output, and ``explain``.
    fix: str = ""


@dataclass(slots=True)
class Context:
    """What a rule sees: the document, where it came from, and where to report."""

    document: Document
    path: Path | None = None
    blobs: Path | None = None
    found: list[Diagnostic] = field(default_factory=list)
    #: ``document.events``, listed once for all the rules.
    events: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.events = self.document.events

    def report(self, code: str, line: int, col: int, message: str) -> None:
        info = REGISTRY[code]
        self.found.append(Diagnostic(code, info.severity, line, col, printable(message), info.name))


_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f\udc80-\udcff\n\t]")


def printable(text: str) -> str:
    """A message safe to print on one line: invalid bytes (lone surrogates from
    ``surrogateescape``), control characters and line breaks are shown as escapes."""
    if not _UNPRINTABLE.search(text):
        return text

    def escape(match: re.Match[str]) -> str:
        char = match[0]
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            return f"\\x{code - 0xDC00:02x}"
        return {"\n": "\\n", "\t": "\\t"}.get(char, f"\\x{code:02x}")

    return _UNPRINTABLE.sub(escape, text)


def shorten(text: str, limit: int = 100) -> str:
    """``text`` for a message: a long value is cut, with its length given."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}… ({len(text):,} characters)"


Rule = Callable[[Context], None]

REGISTRY: dict[str, CheckInfo] = {}
RULES: list[Rule] = []


def describe(
    code: str,
    name: str,
    severity: str,
    summary: str,
    rationale: str,
    bad: str,
    good: str,
    *,
    family: str,
    fix: str = "",
    internal: bool = False,
) -> None:
    """Register a diagnostic code."""
    if code in REGISTRY:
        raise ValueError(f"diagnostic code {code} registered twice")
    if severity not in SEVERITIES:
        raise ValueError(f"unknown severity {severity!r}")
    REGISTRY[code] = CheckInfo(
        code, name, severity, summary, rationale, bad, good, family, fix=fix, internal=internal
    )


def rule(function: Rule) -> Rule:
    """Register a function that reports diagnostics for a document."""
    RULES.append(function)
    return function


def run_checks(
    document: Document,
    *,
    path: Path | None = None,
    blobs: Path | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
) -> list[Diagnostic]:
    """Every diagnostic for ``document``, sorted by position then code.

    ``select`` keeps only the codes that start with one of its codes or prefixes; ``ignore``
    drops those that start with one of its (it wins over ``select``). Then the document's
    suppression comments silence what they name (``checks/suppressions.py``), and report
    the suppressions that silenced nothing or cannot be read (I010, I011) when those codes
    are selected."""
    from bbox_lark.checks.suppressions import apply_suppressions

    _load_families()
    context = Context(document, path, blobs)
    for check in RULES:
        check(context)
    enabled = selection(select, ignore)
    found = [d for d in context.found if enabled(d.code)]
    found = apply_suppressions(document, found, enabled, context.events)
    found.sort(key=lambda d: (d.line, d.col, d.code))
    return found


def selection(
    select: Iterable[str] | None = None, ignore: Iterable[str] | None = None
) -> Callable[[str], bool]:
    """Whether a code is reported under ``select`` and ``ignore`` (see :func:`run_checks`)."""
    chosen = _codes(select) if select is not None else None
    dropped = _codes(ignore) if ignore is not None else ()

    def enabled(code: str) -> bool:
        if chosen is not None and not code.startswith(chosen):
            return False
        return not code.startswith(dropped)

    return enabled


def _codes(values: Iterable[str]) -> tuple[str, ...]:
    """Codes or prefixes, given one per value or comma-separated (``W004,I007``), any case."""
    return tuple(part.strip().upper() for value in values for part in value.split(",") if part.strip())


def registry() -> dict[str, CheckInfo]:
    """Every registered code, sorted."""
    _load_families()
    return dict(sorted(REGISTRY.items()))


_loaded = False


def _load_families() -> None:
    global _loaded
    if _loaded:
        return
    from bbox_lark.checks import (  # noqa: F401  (registration happens on import)
        blobs,
        comments,
        correlation,
        fields,
        header,
        lines,
        redactions,
        runner,
        session,
        source,
        suppressions,
    )

    _loaded = True


# A header that makes no check report: the examples build on it.
CLEAN_HEADER = "---\nformat: bbox/1\nid: sess_demo\nrepo_sha: 215db51\nrunner: local\n---\n"


def example(body: str, header: str = CLEAN_HEADER) -> str:
    """A complete example document: the clean header plus ``body``."""
    return header + body
