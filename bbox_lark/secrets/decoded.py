"""Text as a reader gets it back, with a map to where each character was written
(docs/reference.md#secrets, "Judged on decoded text"): the scanner
(:func:`bbox_lark.secrets.scanner.find_secrets`) reads these views of a text and reports what it finds
at its place in the text as written.

Pure functions over ``str``. A view maps each of its offsets back to the text: a literal
run one to one, an escape's one character to its whole escape sequence, so a secret found
in a view spans its escapes in the text (and is replaced whole).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator

#: One escape of any of the forms a log writes text in: bbox written text (``\u{2d}``), JSON
#: (``\u002d``, ``\/``), YAML double-quoted (``\x2d``, ``\U0000002d``), a letter escape
#: (``\n``), and URL percent-encoding (``%2D``).
_ESCAPE = re.compile(
    r"\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\x([0-9a-fA-F]{2})"
    r"|\\([nrtbfae0\"\\/' _N])|%([0-9a-fA-F]{2})"
)
_LETTERS = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "a": "\a", "e": "\x1b", "0": "\0"}
_LETTERS.update({"_": "\xa0", "N": "\x85"})
#: Where the prefilter must look further than the hints: an escape that can hide a hint's
#: character (``sk\u002dant``, ``%2D``, ``:\/\/``). A letter escape (``\n``) hides none.
HIDING = re.compile(r"\\[uUx/]|%[0-9a-fA-F]{2}")
#: A line break and a continuation line's indent (two spaces or a tab): where a key wrapped
#: over continuation lines is joined.
JOIN = re.compile(r"\r?\n(?:  |\t)")
#: How many times escapes are resolved (a JSON string inside a written text is escaped twice).
_DEPTH = 3


class _Map:
    """Offsets of a view of a text back to the text: each segment starts at ``view[i]`` in
    the view and ``source[i]`` in the text; a literal segment maps one to one, an escape's
    one character maps to its whole escape sequence."""

    __slots__ = ("literal", "source", "view")

    def __init__(self) -> None:
        self.view: list[int] = []
        self.source: list[int] = []
        self.literal: list[bool] = []

    def add(self, view: int, source: int, literal: bool) -> None:
        self.view.append(view)
        self.source.append(source)
        self.literal.append(literal)

    def __call__(self, at: int) -> int:
        i = bisect.bisect_right(self.view, at) - 1
        if i < 0:
            return at
        return self.source[i] + (at - self.view[i] if self.literal[i] else 0)


def _decoded(text: str) -> tuple[str, _Map] | None:
    """``text`` with every escape resolved once, and the map back; None when none is."""
    parts: list[str] = []
    offsets = _Map()
    at = 0
    size = 0
    for match in _ESCAPE.finditer(text):
        start = match.start()
        if start > at:
            offsets.add(size, at, True)
            parts.append(text[at:start])
            size += start - at
        char = _escaped(match)
        if char is None:  # not a character (a surrogate pair half is kept, a bad code point is not)
            offsets.add(size, start, True)
            parts.append(match[0])
            size += len(match[0])
        else:
            offsets.add(size, start, False)
            parts.append(char)
            size += 1
        at = match.end()
    if not parts:
        return None
    offsets.add(size, at, True)
    parts.append(text[at:])
    return "".join(parts), offsets


def _escaped(match: re.Match[str]) -> str | None:
    letter = match[5]
    if letter is not None:
        return _LETTERS.get(letter, letter)
    digits = next(group for group in (match[1], match[2], match[3], match[4], match[6]) if group)
    point = int(digits, 16)
    return chr(point) if point <= 0x10FFFF else None


def joined(text: str, every: int = 1, first: int = 0) -> tuple[str, _Map, list[int]] | None:
    """``text`` with each line break before a continuation line taken out (a key wrapped
    over two lines reads whole), the map back and where the joins are in the view. With
    ``every=2``, only every other such break from the ``first`` (0 or 1): a key wrapped over
    one break then ends where its line does, not run into the next line's text."""
    parts: list[str] = []
    offsets = _Map()
    joins: list[int] = []
    at = 0
    size = 0
    for n, match in enumerate(JOIN.finditer(text)):
        if n % every != first:
            continue
        offsets.add(size, at, True)
        parts.append(text[at : match.start()])
        size += match.start() - at
        joins.append(size)
        at = match.end()
    if not parts:
        return None
    offsets.add(size, at, True)
    parts.append(text[at:])
    return "".join(parts), offsets, joins


def views(text: str) -> Iterator[tuple[str, Callable[[int], int], list[int] | None]]:
    """The texts the scanner reads for ``text``: the text as written, the text decoded
    (each escape resolved, up to :data:`_DEPTH` times), and the text with continuation
    lines joined (only matches across a join count there); each with its offset map."""
    yield text, same, None
    if "\\" in text or "%" in text:
        view, maps = text, []
        for _ in range(_DEPTH):
            decoded = _decoded(view)
            if decoded is None:
                break
            view, step = decoded
            maps.append(step)
            yield view, _chain(tuple(reversed(maps))), None
    if "\n" in text:
        joined_view = joined(text)
        if joined_view is not None:
            yield joined_view
            if len(joined_view[2]) > 1:
                # Every other break too: in the view of all of them joined, a key wrapped
                # over one break runs into the next line's text (``AKIAF`` / ``AKE…AB`` /
                # ``Bearer …``: ``…ABBearer``, no key's end); here it ends with its line.
                for first in (0, 1):
                    alternate = joined(text, 2, first)
                    if alternate is not None:
                        yield alternate


def same(at: int) -> int:
    """The map of the text as written: each offset is itself."""
    return at


def _chain(maps: tuple[_Map, ...]) -> Callable[[int], int]:
    """The map of a view decoded several times: the last decoding's map first."""

    def chained(at: int) -> int:
        for step in maps:
            at = step(at)
        return at

    return chained
