"""Suppression comments: ``# bbox-lark: ignore[CODES]`` and ``# bbox-lark: ignore-file[CODES]``
(``docs/configuration.md``, "Suppressions").

A suppression is an ordinary comment line of the body: every other reader of the format
sees a plain comment, and the printer keeps it byte for byte.

* ``# bbox-lark: ignore[W024,W002]`` silences those codes on the next line that is not a
  comment line (a blank line counts: put the comment right above the line it is about);
* ``# bbox-lark: ignore-file[W010]``, anywhere in the body, silences them in the whole file.

Codes may be given in any case, separated by commas, and may be prefixes (``W0``), as for
``--select``; text after the closing ``]`` is a free reason. The directive must open the
comment (``# bbox-lark: ...``). A suppression applies after ``select``/``ignore``: it can only
silence what would be reported.

Two infos keep suppressions honest (ruff's RUF100): **I010** for a code in a suppression
that silenced nothing (only for codes that are enabled: a suppression of a code left out
by ``--select`` is not "unused"), and **I011** for a suppression that cannot be read (no
``[codes]``, an empty list, an unknown code). Neither makes a run fail. ``ignore-file[I010]``
silences I010 in a file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from bbox_lark.ast import Diagnostic, Document, Event
from bbox_lark.checks import REGISTRY, describe, example, printable

FAMILY = "suppressions"

#: The marker that opens a suppression comment's text.
MARKER = "bbox-lark:"

describe(
    "I010",
    "unused-suppression",
    "info",
    "A code in a `# bbox-lark: ignore[...]` or `ignore-file[...]` comment silenced nothing.",
    "A suppression that silences nothing is stale: the line was fixed or moved, or the code is"
    " wrong. Left in place, it would hide the next real finding there. Only codes that are"
    " enabled are reported (a suppression of a code left out by --select is not unused).",
    example("# bbox-lark: ignore[W003]\na: hello\n"),
    example("# bbox-lark: ignore[W003] a writer's own line kind\nstatus: ok\n"),
    family=FAMILY,
    fix="Remove the code from the suppression comment (or the whole comment when nothing is left).",
)
describe(
    "I011",
    "invalid-suppression",
    "info",
    "A `# bbox-lark: ignore` comment cannot be read: no `[codes]`, an empty list, or an unknown code.",
    "A suppression that cannot be read silences nothing, and the finding it was meant for"
    " still shows up with no hint why. Write `# bbox-lark: ignore[CODE,...]` (or"
    " `ignore-file[...]`) with registered codes or code prefixes.",
    example("# bbox-lark: ignore[W999]\na: hello\n"),
    example("# bbox-lark: ignore[W003]\nstatus: ok\n"),
    family=FAMILY,
    fix="Write `# bbox-lark: ignore[CODE,...]` or `ignore-file[CODE,...]` with registered codes.",
)

_DIRECTIVE = re.compile(r"bbox-lark:\s*(?P<kind>ignore-file|ignore)(?![\w-])")
_CODES = re.compile(r"\s*\[(?P<codes>[^\]]*)\]")


@dataclass(slots=True)
class Suppression:
    """One suppression comment."""

    #: The comment's line.
    line: int
    #: True for ``ignore-file``.
    file_wide: bool
    #: The line it silences (None for ``ignore-file``, or when no line follows).
    target: int | None
    #: (code or prefix, its column) for each valid code.
    codes: list[tuple[str, int]] = field(default_factory=list)
    #: The codes that silenced something.
    used: set[str] = field(default_factory=set)


def _known(code: str) -> bool:
    return any(known.startswith(code) for known in REGISTRY)


def read_suppressions(
    document: Document, events: list[Event] | None = None
) -> tuple[list[Suppression], list[Diagnostic]]:
    """Every suppression comment of the body, and an I011 for each one that cannot be read
    (or for each unknown code in one). ``events`` is ``document.events`` when the caller
    has it already."""
    every = document.events if events is None else events
    comments = [e for e in every if e.kind == "comment" and e.text.startswith(MARKER)]
    if not comments:
        return [], []
    found: list[Suppression] = []
    invalid: list[Diagnostic] = []
    info = REGISTRY["I011"]

    def bad(line: int, col: int, message: str) -> None:
        invalid.append(Diagnostic("I011", info.severity, line, col, printable(message), info.name))

    targets = _targets(document, {e.line for e in comments})
    for event in comments:
        directive = _DIRECTIVE.match(event.text)
        if directive is None:
            continue  # `# bbox-lark: some note` is a plain comment
        kind = directive["kind"]
        listed = _CODES.match(event.text, directive.end())
        col = event.text_col + directive.start()
        if listed is None:
            bad(event.line, col, f"suppression without codes; write `# bbox-lark: {kind}[CODE,...]`")
            continue
        suppression = Suppression(
            event.line, kind == "ignore-file", None if kind == "ignore-file" else targets.get(event.line)
        )
        start = event.text_col + listed.start("codes")
        offset = 0
        for part in listed["codes"].split(","):
            stripped = part.strip()
            where = start + offset + (len(part) - len(part.lstrip()))
            offset += len(part) + 1
            if not stripped:
                continue
            code = stripped.upper()
            if _known(code):
                suppression.codes.append((code, where))
            else:
                bad(event.line, where, f"unknown code {stripped!r} in a suppression; it silences nothing")
        if not suppression.codes:
            if not any(d.line == event.line for d in invalid):
                bad(
                    event.line,
                    col,
                    f"suppression with an empty list of codes; write `# bbox-lark: {kind}[CODE,...]`",
                )
            continue
        found.append(suppression)
    return found, invalid


def _targets(document: Document, lines: set[int]) -> dict[int, int]:
    """For each suppression comment's line, the next body line that is not a comment."""
    targets: dict[int, int] = {}
    waiting: list[int] = []
    for node in document.lines:
        if isinstance(node, Event) and node.kind == "comment":
            if node.line in lines:
                waiting.append(node.line)
            continue
        for line in waiting:
            targets[line] = node.line
        waiting = []
    return targets


def _silence(found: list[Diagnostic], suppressions: list[Suppression]) -> list[Diagnostic]:
    by_line: dict[int, list[Suppression]] = {}
    file_wide = [s for s in suppressions if s.file_wide]
    for s in suppressions:
        if s.target is not None:
            by_line.setdefault(s.target, []).append(s)
    kept = []
    for diagnostic in found:
        silenced = False
        for s in (*file_wide, *by_line.get(diagnostic.line, ())):
            for code, _ in s.codes:
                if diagnostic.code.startswith(code):
                    s.used.add(code)
                    silenced = True
        if not silenced:
            kept.append(diagnostic)
    return kept


def apply_suppressions(
    document: Document,
    found: list[Diagnostic],
    enabled: Callable[[str], bool],
    events: list[Event] | None = None,
) -> list[Diagnostic]:
    """``found`` without what the document's suppression comments silence, plus I010 for
    each enabled code that silenced nothing and I011 for each suppression that cannot be
    read (when those codes are enabled themselves). ``enabled(code)`` tells whether a code
    is reported at all under the run's selection."""
    suppressions, invalid = read_suppressions(document, events)
    if not suppressions and not invalid:
        return found
    kept = _silence(found, suppressions)
    meta = [d for d in invalid if enabled(d.code)]
    if not enabled("I010"):
        return kept + _silence(meta, suppressions)
    # A code that covers I010 itself (`ignore-file[I010]`) is judged last, once the other
    # I010s are known: it is used when it silences one of them.
    deferred = []
    for s in suppressions:
        for code, col in s.codes:
            if code in s.used or not any(enabled(known) for known in REGISTRY if known.startswith(code)):
                continue
            if "I010".startswith(code):
                deferred.append((s, code, col))
            else:
                meta.append(_unused(s, code, col))
    meta = _silence(meta, suppressions)
    meta += [_unused(s, code, col) for s, code, col in deferred if code not in s.used]
    return kept + meta


def _unused(s: Suppression, code: str, col: int) -> Diagnostic:
    if s.file_wide:
        message = f"file-wide suppression of {code} silenced nothing"
    elif s.target is None:
        message = f"suppression of {code} silenced nothing: no line follows it"
    else:
        message = f"suppression of {code} silenced nothing on line {s.target}"
    info = REGISTRY["I010"]
    return Diagnostic("I010", info.severity, s.line, col, message, info.name)
