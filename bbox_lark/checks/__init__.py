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
with :func:`rule`), which declares the kinds of line it sees (``sees = kinds(...)``), is
called for one such node at a time and reports at the end what only the whole file shows.
The registry
drives ``docs/checks.md``, the ``explain`` command, the ``full``, SARIF and JUnit outputs of
``check``, and the tests that run every example and that require an ``corpus/invalid`` file
for every code.

May import :mod:`bbox_lark.syntax`, :mod:`bbox_lark.files`, :mod:`bbox_lark.secrets.scanner` and
:mod:`bbox_lark.api` (``tools/layers.py``, ``PACKAGE_IMPORTS``); ``checks.usage`` also reads
:mod:`bbox_lark.numbers.usage`, the rules ``stats`` counts by (a listed exception).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from bbox_lark.checks.base import CLEAN_HEADER as CLEAN_HEADER
from bbox_lark.checks.base import EVERY_LINE as EVERY_LINE
from bbox_lark.checks.base import REGISTRY as REGISTRY
from bbox_lark.checks.base import RULES as RULES
from bbox_lark.checks.base import SEVERITIES as SEVERITIES
from bbox_lark.checks.base import CheckInfo as CheckInfo
from bbox_lark.checks.base import Context as Context
from bbox_lark.checks.base import Dispatch as Dispatch
from bbox_lark.checks.base import LineKinds as LineKinds
from bbox_lark.checks.base import Rule as Rule
from bbox_lark.checks.base import describe as describe
from bbox_lark.checks.base import example as example
from bbox_lark.checks.base import kinds as kinds
from bbox_lark.checks.base import printable as printable
from bbox_lark.checks.base import rule as rule
from bbox_lark.checks.base import shorten as shorten
from bbox_lark.syntax.nodes import Diagnostic, Head, Line, SourceFault
from bbox_lark.syntax.record import Record


def active_rules(enabled: Callable[[str], bool]) -> list[type[Rule]]:
    """The rules that can report a code ``enabled`` selects (the others are not run)."""
    _load_families()
    return [cls for cls in RULES if any(enabled(code) for code in cls.codes)]


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
        #: Each kind of line -> the rules that see it (their :attr:`Rule.sees`).
        self.dispatch = Dispatch(self.rules)
        self._fault_rules = [r.fault for r in self.rules if type(r).fault is not Rule.fault]
        self.path, self.blobs = path, blobs
        self.stream = stream
        self.suppressions = Suppressions(self.enabled)
        self.context: Context | None = None
        self.allowed_secrets = frozenset(allowed_secrets)

    def start(self, head: Head) -> None:
        self.context = Context(head, self.path, self.blobs, allowed_secrets=self.allowed_secrets)
        for check in self.rules:
            check.start(self.context)

    def node(self, node: Line) -> None:
        """One body line's node (as :func:`bbox_lark.syntax.parser.iter_nodes` gives it with
        ``attach=False``): the rules read it as a :class:`~bbox_lark.syntax.record.Record`."""
        self.record(Record.of(node))

    def record(self, record: Record) -> None:
        """One body line's record (:func:`bbox_lark.syntax.record.iter_records`), in file order."""
        ctx = self.context
        assert ctx is not None
        self.suppressions.node(record)
        for check in self.dispatch[record.kind]:
            check(record, ctx)

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
    """Whether a code is reported under ``select`` and ``ignore`` (see :class:`Checker`)."""
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
        usage,
    )

    _loaded = True
