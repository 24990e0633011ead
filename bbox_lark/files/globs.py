"""gitignore-style patterns (through ``pathspec``): ``exclude``, ``extend-exclude``,
``per-file-ignores``, ``.gitignore`` files and quoted globs on the command line all use them.

A pattern is matched against a path relative to a base folder (the configuration file's
folder, the ``.gitignore`` file's folder, the current folder for command-line patterns),
with ``/`` as separator and a trailing ``/`` for folders. As in ``.gitignore``: a pattern
without a ``/`` (other than a trailing one) matches a name at any depth (``*.tmp.bbox``,
``.venv``); one with a ``/`` is anchored to the base (``logs/old/``, ``/scratch``); ``*``
stays inside one name, ``**`` crosses folders; a trailing ``/`` matches folders only; a
leading ``!`` re-includes what an earlier pattern excluded. A pattern that matches a
folder matches everything below it.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bbox_lark._classes import dataclass

if TYPE_CHECKING:
    from pathspec.pattern import Pattern as _PathspecPattern


@dataclass(frozen=True, slots=True)
class Glob:
    """A gitignore-style pattern and the folder it is relative to (None: the current folder
    at the time of matching)."""

    pattern: str
    base: Path | None = None


def pattern_error(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable gitignore-style pattern, or None when it is."""
    if not pattern.strip():
        return "an empty pattern matches nothing"
    if pattern.lstrip().startswith("#"):
        return "a pattern starting with # is a comment in gitignore syntax (write \\# for a literal #)"
    try:
        compiled = _compile(pattern)
    except (ValueError, re.error) as error:
        return f"invalid pattern ({error})"
    if compiled is None:
        return "invalid pattern (it matches nothing)"
    return None


class Pattern(Protocol):
    """What this module uses of a compiled pattern (a ``pathspec`` pattern, or a
    :class:`_Name`)."""

    include: bool | None

    def match_file(self, file: str) -> object: ...


#: A pattern that is one plain name (``.venv``, ``node_modules``: every default exclude).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+(?:[.-]+[A-Za-z0-9_]+)*|\.[A-Za-z0-9_]+(?:[.-]+[A-Za-z0-9_]+)*")


class _Name:
    """A pattern that is a plain name, matched without importing ``pathspec`` (about 10 ms
    of start-up): the regular expression is the one ``pathspec`` compiles for such a
    pattern (a file or folder of that name at any depth, and everything below a folder of
    that name; ``tests/test_globs.py`` compares them)."""

    __slots__ = ("_regex", "include", "pattern")

    def __init__(self, name: str) -> None:
        self.pattern = name
        self.include: bool | None = True
        self._regex = re.compile(rf"^(?:.+/)?{re.escape(name)}(?:(?P<ps_d>/)|$)")

    def match_file(self, file: str) -> object:
        return self._regex.match(file)


@cache
def _compile(pattern: str) -> Pattern | None:
    """One pattern, compiled; None when gitignore syntax makes it a no-op."""
    if _PLAIN_NAME.fullmatch(pattern):
        return _Name(pattern)
    from pathspec import GitIgnoreSpec

    patterns: list[_PathspecPattern] = list(GitIgnoreSpec.from_lines([pattern]).patterns)
    if not patterns or patterns[0].include is None:
        return None
    return patterns[0]


def compile_lines(lines: list[str]) -> tuple[Pattern, ...]:
    """The usable patterns of a ``.gitignore`` file, in order; lines git would skip (blank
    lines, comments, invalid patterns) are skipped."""
    out = []
    for line in lines:
        try:
            compiled = _compile(line)
        except (ValueError, re.error):
            continue
        if compiled is not None:
            out.append(compiled)
    return tuple(out)


def compile_glob(pattern: str) -> Pattern | None:
    """A validated pattern, compiled (None for a pattern :func:`pattern_error` rejects)."""
    try:
        return _compile(pattern)
    except (ValueError, re.error):
        return None


def relative(path: Path, base: Path) -> str | None:
    """``path`` relative to ``base`` with ``/`` separators, or None when it is not inside.
    Both must be absolute. ``""`` for ``base`` itself."""
    try:
        rel = path.relative_to(base)
    except ValueError:
        return None
    text = rel.as_posix()
    return "" if text == "." else text


def anchored(pattern: Pattern) -> bool:
    """True when the pattern is relative to its base (it has a ``/`` other than a trailing one)."""
    text = str(getattr(pattern, "pattern", ""))
    return "/" in text.rstrip("/").lstrip("!")


def decide(patterns: tuple[Pattern, ...], rel: str, is_dir: bool) -> bool | None:
    """The last matching pattern's verdict for ``rel``: True (matched), False (re-included by
    a ``!`` pattern), or None when no pattern matches."""
    text = rel + "/" if is_dir else rel
    verdict: bool | None = None
    for pattern in patterns:
        if pattern.match_file(text) is not None:
            verdict = bool(pattern.include)
    return verdict


def match_globs(globs: tuple[Glob, ...], path: Path, is_dir: bool, cwd: Path) -> bool | None:
    """The verdict of ``globs`` (in order, the last match wins) for the absolute ``path``.
    A path outside a pattern's base can only match an unanchored pattern, by its name."""
    verdict: bool | None = None
    for glob in globs:
        pattern = compile_glob(glob.pattern)
        if pattern is None:
            continue
        rel = relative(path, glob.base or cwd)
        if rel is None or rel == "":
            if anchored(pattern):
                continue
            rel = path.name
        found = decide((pattern,), rel, is_dir)
        if found is not None:
            verdict = found
    return verdict


def is_magic(text: str) -> bool:
    """True when a command-line path has glob characters (``*``, ``?``, ``[``)."""
    return any(char in text for char in "*?[")


def split_glob(text: str) -> tuple[str, str]:
    """A glob split into its literal leading folder and the pattern below it:
    ``logs/2024-*/*.bbox`` gives ``("logs", "2024-*/*.bbox")``; ``*.bbox`` gives ``("", "*.bbox")``."""
    parts = text.replace(os.sep, "/").split("/")
    literal: list[str] = []
    for index, part in enumerate(parts):
        if is_magic(part):
            rest = "/".join(parts[index:])
            base = "/".join(literal)
            if not base and text.startswith("/"):
                base = "/"
            return base, rest
        literal.append(part)
    return text, ""
