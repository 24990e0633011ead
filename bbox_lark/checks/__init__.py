"""The checks: one registry of stable diagnostic codes, one module per family of checks.

Code scheme (codes are never reused; a retired code stays in the registry as a tombstone):

* ``W001``-``W009`` and ``I001``-``I004`` keep the meaning they had in the reference Rust
  ``blackbox validate``, so its users can switch.
* New warnings continue at ``W010``, new infos at ``I005``; errors are ``E001`` onwards.
* Credentials in a log have a family and letter of their own, ``S`` (``--select S``):
  ``S001`` a provider's credential (error), ``S002`` a generic secret (warning).

Adding a check is one small addition to a family module: a :func:`describe` call (code,
kebab-case name, severity, summary, rationale, a failing and a passing example, and ``fix``:
what to do about a finding) and the code that reports it from a :class:`Rule` (registered
with :func:`rule`), which sees one node at a time and reports at the end what only the
whole file shows. The registry
drives ``docs/checks.md``, the ``explain`` command, the ``full``, SARIF and JUnit outputs of
``check``, and the tests that run every example and that require an ``corpus/invalid`` file
for every code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

from bbox_lark._classes import dataclass
from bbox_lark.ast import Diagnostic, Document, Event, Line, SourceFault
from bbox_lark.secrets import mask_secrets

if TYPE_CHECKING:
    from bbox_lark.parser import Head

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
    """What a rule sees besides the nodes: the header, where the file came from, and where
    to report."""

    head: Head
    path: Path | None = None
    blobs: Path | None = None
    found: list[Diagnostic] = field(default_factory=list)
    #: Values that are not secrets though they look like one (``allowed-secrets``).
    allowed_secrets: frozenset[str] = frozenset()

    def report(self, code: str, line: int, col: int, message: str) -> None:
        info = REGISTRY[code]
        message = mask_secrets(message)  # a message that quotes a value never leaks a secret
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


class Rule:
    """A check: it declares the codes it can report, sees the header (:meth:`start`), then
    each body line's node in file order (:meth:`node`), and reports what only the whole file
    shows at the end (:meth:`finish`). A rule keeps only the state it needs between nodes:
    nothing proportional to the file beyond its findings (see each rule's notes).

    Nodes come as :func:`bbox_lark.parser.iter_nodes` gives them with ``attach=False``: an
    event without its ``continuation`` tuple, each continuation with its ``owner`` line.
    Rules are registered with :func:`rule`; a new instance checks each file. A run skips a
    rule none of whose :attr:`codes` is selected."""

    #: Every code the rule can report (by default: its family's codes).
    codes: ClassVar[frozenset[str]] = frozenset()
    #: The family module (``header``, ``lines``, ...).
    family: ClassVar[str] = ""
    #: What a rule's findings depend on, for a file checked in parts (``check --jobs``):
    #: ``line``: each node alone (and the header): each part runs the rule; ``file``:
    #: state that parts can add up (:meth:`merge`); ``sequence``: the nodes in order: the
    #: parts send the nodes it :meth:`wants`, slimmed to their kind, names, result kind,
    #: comment text and the fields named in :attr:`keys`, and the rule runs over them.
    scope: ClassVar[str] = "sequence"
    #: ``sequence`` rules: the fields they read.
    keys: ClassVar[frozenset[str]] = frozenset()

    def wants(self, node: Line) -> bool:
        """``sequence`` rules: whether :meth:`node` needs this node (False: it would do
        nothing with it)."""
        return True

    def merge(self, part: Rule) -> None:
        """``file`` rules: add the state of the next part of the file."""
        raise NotImplementedError

    def start(self, ctx: Context) -> None:
        """The header has been read (``ctx.head``); no body line yet."""

    def node(self, node: Line, ctx: Context) -> None:
        """One body line, in file order."""

    def fault(self, fault: SourceFault, ctx: Context) -> None:
        """A byte-level problem of a line (E001-E003), before that line's node."""

    def finish(self, ctx: Context) -> None:
        """The end of the file."""


REGISTRY: dict[str, CheckInfo] = {}
RULES: list[type[Rule]] = []


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


R = TypeVar("R", bound=type[Rule])


def rule(cls: R) -> R:
    """Register a rule class. Without its own ``codes`` it reports its family's codes (those
    registered by :func:`describe` with ``family=cls.family`` before it)."""
    if not cls.codes:
        cls.codes = frozenset(code for code, info in REGISTRY.items() if info.family == cls.family)
    if not cls.codes:
        raise ValueError(f"rule {cls.__name__} declares no codes")
    RULES.append(cls)
    return cls


def active_rules(enabled: Callable[[str], bool]) -> list[type[Rule]]:
    """The rules that can report a code ``enabled`` selects (the others are not run)."""
    _load_families()
    return [cls for cls in RULES if any(enabled(code) for code in cls.codes)]


def run_checks(
    document: Document,
    *,
    path: Path | None = None,
    blobs: Path | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
) -> list[Diagnostic]:
    """Every diagnostic for an already parsed ``document``, sorted by position then code
    (:class:`Checker` over its nodes; ``bbox_lark.check`` reads and checks in one pass)."""
    from bbox_lark.parser import Head

    checker = Checker(path=path, blobs=blobs, select=select, ignore=ignore)
    head = Head(document.bom, document.header_lines, document.header_info, document.body_start)
    checker.start(head)
    faults = iter(document.source_faults)
    pending = next(faults, None)
    for node in document.lines:
        while pending is not None and pending.line <= node.line:
            checker.fault(pending)
            pending = next(faults, None)
        if isinstance(node, Event) and node.continuation:
            node = replace(node, continuation=())
        checker.node(node)
    while pending is not None:
        checker.fault(pending)
        pending = next(faults, None)
    return checker.finish()


class Checker:
    """Runs the selected rules over one document as it is read.

    ``select`` keeps only the codes that start with one of its codes or prefixes; ``ignore``
    drops those that start with one of its (it wins over ``select``); rules that can report
    no kept code are not run. Then the document's suppression comments silence what they
    name (``checks/suppressions.py``), and the suppressions that silenced nothing or cannot
    be read are reported (I010, I011) when those codes are selected.

    Whole-file use: :meth:`start`, :meth:`node` and :meth:`fault` for each item,
    :meth:`finish` returns every diagnostic sorted by line, column and code. Streaming use
    (``stream=True``): :meth:`take` after each item returns the findings known so far and
    not yet taken (those of the lines read so far, in line, column, code order per batch);
    :meth:`finish` returns the rest (the findings only the end of the file shows), and an
    ``ignore-file[...]`` suppression then applies from its own line on (it cannot take back
    what was already given)."""

    def __init__(
        self,
        *,
        path: Path | None = None,
        blobs: Path | None = None,
        select: Iterable[str] | None = None,
        ignore: Iterable[str] | None = None,
        stream: bool = False,
        allowed_secrets: Iterable[str] = (),
    ) -> None:
        from bbox_lark.checks.suppressions import Suppressions

        self.enabled = selection(select, ignore)
        self.rules = [cls() for cls in active_rules(self.enabled)]
        self._node_rules = [r.node for r in self.rules if type(r).node is not Rule.node]
        self._fault_rules = [r.fault for r in self.rules if type(r).fault is not Rule.fault]
        self.path, self.blobs = path, blobs
        self.stream = stream
        self.suppressions = Suppressions(self.enabled, stream=stream)
        self.context: Context | None = None
        self.allowed_secrets = frozenset(allowed_secrets)

    def start(self, head: Head) -> None:
        self.context = Context(head, self.path, self.blobs, allowed_secrets=self.allowed_secrets)
        for check in self.rules:
            check.start(self.context)

    def node(self, node: Line) -> None:
        ctx = self.context
        assert ctx is not None
        self.suppressions.node(node)
        for check in self._node_rules:
            check(node, ctx)

    def fault(self, fault: SourceFault) -> None:
        ctx = self.context
        assert ctx is not None
        for check in self._fault_rules:
            check(fault, ctx)

    def take(self) -> list[Diagnostic]:
        """Streaming: the findings reported since the last call, selected and suppressed."""
        ctx = self.context
        assert ctx is not None and self.stream
        if not ctx.found and not self.suppressions.invalid:
            return []
        enabled = self.enabled
        fresh = [d for d in ctx.found if enabled(d.code)]
        ctx.found.clear()
        fresh = self.suppressions.silence(fresh)
        fresh.sort(key=_order)
        return fresh

    def finish(self) -> list[Diagnostic]:
        """Whole-file: every finding, sorted. Streaming: the findings not yet taken."""
        ctx = self.context
        assert ctx is not None
        for check in self.rules:
            check.finish(ctx)
        if self.stream:
            rest = self.take() + self.suppressions.finish([])
            rest.sort(key=_order)
            return rest
        enabled = self.enabled
        found = [d for d in ctx.found if enabled(d.code)]
        found = self.suppressions.finish(found)
        found.sort(key=_order)
        return found


def _order(d: Diagnostic) -> tuple[int, int, str]:
    return (d.line, d.col, d.code)


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
        secrets,
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
