"""The check registry's building blocks: a code's description (:func:`describe`), a rule
(:class:`Rule`, registered with :func:`rule`), what a rule sees (:class:`Context`) and the
examples' clean header. The family modules import them from here; the package
(:mod:`bbox_lark.checks`) loads the families and runs them, so no family imports it back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import field
from functools import lru_cache
from pathlib import Path
from typing import ClassVar, Protocol, TypeVar, runtime_checkable

from bbox_lark._classes import dataclass
from bbox_lark.secrets.scanner import mask_secrets
from bbox_lark.syntax.correlate import Key, RecentKeys
from bbox_lark.syntax.nodes import Diagnostic, Head, SourceFault
from bbox_lark.syntax.record import Record

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


#: The kinds of line that are not events (:class:`~bbox_lark.syntax.nodes.Continuation`,
#: :class:`~bbox_lark.syntax.nodes.BlankLine`); every other kind is an event's (docs/reference.md#line-kinds).
NOT_EVENTS = frozenset({"continuation", "blank"})


@dataclass(frozen=True, slots=True)
class LineKinds:
    """The kinds of line a rule's :meth:`Rule.node` is called for (:attr:`Rule.sees`): the
    kinds named, and with ``events`` every event kind (``vocabulary().event_kinds``: the
    prefixed events, ``comment``, ``lifecycle``, ``unknown``) but those in ``but``. Build it
    with :func:`kinds`."""

    named: frozenset[str] = frozenset()
    events: bool = False
    but: frozenset[str] = frozenset()

    def __contains__(self, kind: object) -> bool:
        if kind in self.named:
            return True
        return self.events and kind not in self.but and kind not in NOT_EVENTS

    def names(self) -> frozenset[str]:
        """Every kind this names (to test against the grammar's kinds)."""
        return self.named | self.but


def kinds(*named: str, events: bool = False, but: Iterable[str] = ()) -> LineKinds:
    """What a rule sees: ``kinds("comment")``, ``kinds("continuation", events=True,
    but=["comment"])``; ``kinds()`` for a rule that sees no body line (the header only)."""
    return LineKinds(frozenset(named), events, frozenset(but))


#: Every line, whatever its kind.
EVERY_LINE = kinds(*NOT_EVENTS, events=True)


class Rule:
    """A check: it declares the codes it can report, sees the header (:meth:`start`), then
    each body line's node of the kinds it declares (:attr:`sees`) in file order
    (:meth:`node`), and reports what only the whole file shows at the end (:meth:`finish`).
    A rule keeps only the state it needs between nodes: nothing proportional to the file
    beyond its findings (see each rule's notes).

    Lines come as records (:class:`~bbox_lark.syntax.record.Record`, from
    :func:`bbox_lark.syntax.record.iter_records`): the values the checks read, each continuation
    with its ``owner`` line; a rule that needs more of a line (its field nodes, arguments)
    reads it through the record, which builds the node then.
    Rules are registered with :func:`rule`; a new instance checks each file. A run skips a
    rule none of whose :attr:`codes` is selected."""

    #: Every code the rule can report (by default: its family's codes).
    codes: ClassVar[frozenset[str]] = frozenset()
    #: The kinds of line :meth:`node` is called for, and only those (:func:`kinds`; every
    #: rule declares it, :func:`rule` refuses one that does not): the checker looks each
    #: kind up in a table of the selected rules that see it (:class:`Dispatch`).
    sees: ClassVar[LineKinds]
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

    def wants(self, node: Record) -> bool:
        """``sequence`` rules: whether :meth:`node` needs this node (False: it would do
        nothing with it). By default: whether the rule sees its kind."""
        return node.kind in self.sees

    def merge(self, part: Rule) -> None:
        """``file`` rules: add the state of the next part of the file."""
        raise NotImplementedError

    def start(self, ctx: Context) -> None:
        """The header has been read (``ctx.head``); no body line yet."""

    def node(self, node: Record, ctx: Context) -> None:
        """One body line's record, in file order."""

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
    if not isinstance(getattr(cls, "sees", None), LineKinds):
        raise ValueError(f"rule {cls.__name__} declares no line kinds (sees = kinds(...))")
    RULES.append(cls)
    return cls


class Dispatch(dict[str, tuple[Callable[[Record, Context], None], ...]]):
    """Each kind of line -> the :meth:`Rule.node` methods of the ``rules`` that see it, in
    the rules' order (so findings are reported in the same order as when every rule saw
    every line). A file's checker fills it as each kind first comes; which rules see a
    kind is worked out once a process for each selection of rules (:func:`_seeing`)."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        super().__init__()
        self.rules = tuple(r for r in rules if type(r).node is not Rule.node)
        self._nodes = tuple(r.node for r in self.rules)
        self._classes = tuple(type(r) for r in self.rules)
        self._seeing = _seeing(self._classes)

    def __missing__(self, kind: str) -> tuple[Callable[[Record, Context], None], ...]:
        seeing = self._seeing
        at = seeing.get(kind)
        if at is None:
            at = seeing[kind] = tuple(n for n, cls in enumerate(self._classes) if kind in cls.sees)
        methods = tuple(map(self._nodes.__getitem__, at))
        self[kind] = methods
        return methods


@lru_cache(maxsize=256)
def _seeing(classes: tuple[type[Rule], ...]) -> dict[str, tuple[int, ...]]:
    """For a selection of rules: each kind of line -> the positions of the rules that see
    it (:attr:`Rule.sees` is a class attribute, the same for every instance), filled by
    :meth:`Dispatch.__missing__` as kinds come."""
    return {}


#: The marker that opens a suppression comment's text (``# bbox-lark: ignore[...]``,
#: :mod:`bbox_lark.checks.suppressions`). Here, in a module that registers nothing, so that
#: a reader that only needs to spot suppressions (:mod:`bbox_lark.checks.parallel`) need not import
#: the rules.
SUPPRESSION_MARKER = "bbox-lark:"


@runtime_checkable
class PairsInParts(Protocol):
    """A rule that pairs lines across a file checked in parts (the correlation rule): it
    pairs with the last parts' keys only and settles the rest at the end. Declared here so
    that :mod:`bbox_lark.checks.parallel` finds it among a checker's rules without importing the
    module that registers it."""

    #: The lines whose finding waits for :meth:`settle`, as (line, column of the key, key).
    deferred: list[tuple[int, int, Key]]

    def defer_history(self, keys: RecentKeys) -> None: ...

    def settle(self, first_seen: dict[Key, int], ctx: Context) -> None: ...


# A header that makes no check report: the examples build on it.
CLEAN_HEADER = "---\nformat: bbox/1\nid: sess_demo\nrepo_sha: 215db51\nrunner: local\n---\n"


def example(body: str, header: str = CLEAN_HEADER) -> str:
    """A complete example document: the clean header plus ``body``."""
    return header + body
