"""Finding the files a command works on: one discovery for ``check``, ``fmt``, ``fix`` and
``stats`` (``docs/configuration.md``, "File discovery").

* A file named on the command line is always read, whatever its name and whatever the
  exclusions say (as in ruff). A missing one is reported when it is read.
* A folder means every ``*.bbox``, ``*.blackbox`` and ``*.rlog`` file below it, except what
  ``exclude`` / ``extend-exclude`` (of the configuration that applies to each folder, or
  the command line) and, inside a git work tree, ``.gitignore`` files and
  ``.git/info/exclude`` skip. Rules that would skip the named folder itself are not used
  inside it: a folder you name is searched. Symbolic links to folders are not followed.
* ``.git`` is never entered, inside a work tree or not.
* A glob the shell did not expand (``'logs/**/*.bbox'``, quoted) is expanded here, with
  gitignore semantics: ``*`` within a name, ``**`` across folders. The files it matches are
  taken whatever their suffix, folders it matches are searched as above, and exclusions
  and ``.gitignore`` apply to both.
* A path found twice (named twice, or inside two named folders) is read once: the first
  time. ``-`` (standard input) is read once too.
* A folder with nothing to check, a glob that matches nothing, or a folder that cannot be
  listed is an input problem (exit 2); the other paths are still used.

**Sessions** (``discover(..., sessions=True)``: the commands that count sessions, ``stats``,
``export``, ``query``): each session is counted once.

* A folder also yields its ``*.jsonl`` and ``*.json`` files whose content is a format
  ``convert`` reads (a Claude Code session, an ATIF trajectory, bbox JSON Lines …), sniffed
  from their first 64 KiB.
* A path found twice stays in the list the second time with :attr:`FoundInput.counted_in`
  naming the first, so the command says so and counts it once.
* A Claude Code subagent log (``<session>/subagents/agent-*.jsonl``) found beside its parent
  (``<session>.jsonl``, also an input) is read as part of the parent, which embeds it: it
  stays in the list with :attr:`FoundInput.counted_in` naming the parent.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from bbox_lark._classes import dataclass
from bbox_lark.files.config import Resolver, Settings
from bbox_lark.files.globs import (
    Glob,
    Pattern,
    compile_glob,
    compile_lines,
    decide,
    is_magic,
    match_globs,
    relative,
    split_glob,
)
from bbox_lark.files.inputs import SUFFIXES, exists, is_dir

__all__ = ["SUFFIXES", "FoundInput", "GitIgnores", "Walker", "collect_inputs", "discover"]

#: The one folder never entered.
GIT_DIR = ".git"


@dataclass(frozen=True, slots=True)
class FoundInput:
    """One input of a command found by :func:`discover`: a path (as given or found; ``-`` is
    standard input) and the settings that apply to it. (A converter's reader reads a
    :class:`bbox_lark.convert.Input`.)"""

    path: str
    settings: Settings
    #: Why the input cannot be used (a folder with nothing to check, a glob that matches
    #: nothing); the command reports it and exits 2 in the end.
    problem: str | None = None
    #: With ``sessions=True``: the input this one is counted in (the same file found
    #: before, or the Claude Code session a subagent log belongs to); it is not read again.
    counted_in: str | None = None
    #: Why it is counted there (``the same file`` or ``a subagent log of its parent``).
    counted_why: str | None = None

    @property
    def shown(self) -> str:
        return "<stdin>" if self.path == "-" else self.path

    @property
    def stdin(self) -> bool:
        return self.path == "-"


Layer = tuple[Path, tuple[Pattern, ...]]


class GitIgnores:
    """The ``.gitignore`` rules that apply in each folder of a git work tree, read once."""

    def __init__(self) -> None:
        self._roots: dict[Path, Path | None] = {}
        self._layers: dict[Path, tuple[Layer, ...]] = {}

    def work_tree(self, folder: Path) -> Path | None:
        """The root of the git work tree ``folder`` is in (where ``.git`` is), or None."""
        if folder not in self._roots:
            if exists(folder / GIT_DIR):
                self._roots[folder] = folder
            elif folder.parent == folder:
                self._roots[folder] = None
            else:
                self._roots[folder] = self.work_tree(folder.parent)
        return self._roots[folder]

    def layers(self, folder: Path) -> tuple[Layer, ...]:
        """The rules for the entries of ``folder``, lowest precedence first: the work
        tree's ``.git/info/exclude``, then each ``.gitignore`` from the root down."""
        found = self._layers.get(folder)
        if found is not None:
            return found
        root = self.work_tree(folder)
        layers: tuple[Layer, ...] = ()
        if root is not None:
            if folder == root:
                git = root / GIT_DIR
                if is_dir(git):  # a plain repository (a worktree's .git is a file)
                    layers += _read_rules(root, git / "info" / "exclude")
            else:
                layers = self.layers(folder.parent)
            layers += _read_rules(folder, folder / ".gitignore")
        self._layers[folder] = layers
        return layers


def _read_rules(base: Path, file: Path) -> tuple[Layer, ...]:
    try:
        text = file.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return ()
    patterns = compile_lines(text.splitlines())
    return ((base, patterns),) if patterns else ()


def _without_rules_matching(layers: tuple[Layer, ...], root: Path) -> tuple[Layer, ...]:
    """``layers`` without the patterns that exclude ``root`` itself."""
    out = []
    for base, patterns in layers:
        rel = relative(root, base)
        if rel:
            patterns = tuple(p for p in patterns if not (p.include and decide((p,), rel, True)))
        out.append((base, patterns))
    return tuple(out)


class Walker:
    """Searches folders with the exclusions of :class:`Resolver`'s settings and of git."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.git = GitIgnores()
        #: Folders that could not be listed, as (shown path, why), in the order met.
        self.unreadable: list[tuple[str, str]] = []

    def _excluded(
        self, path: Path, is_dir: bool, excludes: tuple[Glob, ...], layers: tuple[Layer, ...]
    ) -> bool:
        if match_globs(excludes, path, is_dir, self.resolver.cwd):
            return True
        verdict: bool | None = None
        for base, patterns in layers:
            rel = relative(path, base)
            if rel:
                found = decide(patterns, rel, is_dir)
                if found is not None:
                    verdict = found
        return bool(verdict)

    def walk(
        self, root: Path, shown_root: str, pattern: str | None = None, *, sessions: bool = False
    ) -> tuple[list[tuple[str, Path]], int]:
        """The files to use below the folder ``root`` (absolute), shown below
        ``shown_root``, and how many entries the exclusions skipped. With ``pattern`` (a
        glob relative to ``root``), only what it matches."""
        glob = compile_glob("/" + pattern) if pattern is not None else None
        found: list[tuple[str, Path]] = []
        skipped = 0
        excludes_for: dict[tuple[Glob, ...], tuple[Glob, ...]] = {}
        stack: list[tuple[Path, Path, bool]] = [(root, Path(shown_root), pattern is None)]
        while stack:
            folder, shown, in_match = stack.pop()
            settings = self.resolver.for_folder(folder)
            excludes = excludes_for.get(settings.excludes)
            if excludes is None:
                cwd = self.resolver.cwd
                excludes = tuple(g for g in settings.excludes if not match_globs((g,), root, True, cwd))
                excludes_for[settings.excludes] = excludes
            layers = _without_rules_matching(self.git.layers(folder), root)
            try:
                with os.scandir(folder) as listing:
                    entries = sorted(listing, key=lambda entry: entry.name)
            except OSError as error:
                self.unreadable.append((str(shown), error.strerror or str(error)))
                continue
            for entry in entries:
                if entry.name == GIT_DIR:
                    continue
                path = folder / entry.name
                try:
                    is_dir = entry.is_dir() and not entry.is_symlink()
                    is_file = not is_dir and entry.is_file()
                except OSError:
                    continue
                if not is_dir and not is_file:
                    continue
                if self._excluded(path, is_dir, excludes, layers):
                    if is_dir or path.suffix in SUFFIXES:
                        skipped += 1
                    continue
                rel = relative(path, root) or ""
                if is_dir:
                    matched = in_match or (glob is not None and decide((glob,), rel, True) is True)
                    stack.append((path, shown / entry.name, matched))
                elif (
                    (in_match and path.suffix in SUFFIXES)
                    or (glob is not None and not in_match and decide((glob,), rel, False) is True)
                    or (in_match and sessions and path.suffix in SESSION_SUFFIXES and session_format(path))
                ):
                    found.append((str(shown / entry.name), path))
        found.sort(key=lambda item: item[0])
        return found, skipped


def _nothing(skipped: int) -> str:
    return f" ({skipped} skipped by exclude patterns or .gitignore)" if skipped else ""


#: The suffixes of the foreign session files a folder yields with ``sessions=True``.
SESSION_SUFFIXES = frozenset({".jsonl", ".json"})


def session_format(path: Path) -> str | None:
    """The format ``convert`` reads that the content of ``path`` is in, other than bbox (by
    its first 64 KiB, never by its name alone: any ``package.json`` is no session); None
    when none, or when it cannot be read."""
    from bbox_lark.convert import detect_format

    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return None
    found = detect_format(None, head)
    return None if found in (None, "bbox") else found


def _parent_session(path: Path) -> Path | None:
    """The Claude Code session ``<S>.jsonl`` that a ``<S>/subagents/agent-*.jsonl`` log
    belongs to (None for any other path)."""
    if path.parent.name != "subagents" or not path.name.startswith("agent-") or path.suffix != ".jsonl":
        return None
    session = path.parent.parent
    return session.parent / (session.name + ".jsonl")


def discover(
    paths: Iterable[str], resolver: Resolver | None = None, *, sessions: bool = False
) -> list[FoundInput]:
    """The inputs named by ``paths``, each with its settings, in order, each once (with
    ``sessions``: each session counted once, see the module's docstring).

    Raises :class:`~bbox_lark.files.config.ConfigError` for a bad configuration file met on the
    way (before anything is read). A path that cannot be used stays in the list with its
    :attr:`FoundInput.problem` (a missing file is left to the reader, which says so)."""
    resolver = resolver or Resolver()
    walker = Walker(resolver)
    seen: dict[str, str] = {}
    out: list[FoundInput] = []

    def add(shown: str, path: Path) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen[key] = shown
            out.append(FoundInput(shown, resolver.for_folder(path.parent)))
        elif sessions:
            settings = resolver.for_folder(path.parent)
            out.append(FoundInput(shown, settings, counted_in=seen[key], counted_why="the same file"))

    for raw in paths:
        if raw == "-":
            if "-" not in seen:
                seen["-"] = "-"
                out.append(FoundInput("-", resolver.for_path("-")))
            continue
        path = resolver.absolute(raw)
        if is_dir(path):
            if GIT_DIR in path.parts:
                out.append(
                    FoundInput(
                        raw, resolver.for_folder(path), f"{raw}: inside {GIT_DIR}, which is never searched"
                    )
                )
                continue
            files, skipped = walker.walk(path, raw, sessions=sessions)
            if not files and not walker.unreadable:
                problem = f"{raw}: no *.bbox, *.blackbox or *.rlog files in this directory{_nothing(skipped)}"
                out.append(FoundInput(raw, resolver.for_folder(path), problem))
            for shown, file in files:
                add(shown, file)
            for shown, why in walker.unreadable:
                out.append(FoundInput(shown, resolver.for_folder(path), f"{shown}: cannot read: {why}"))
            walker.unreadable.clear()
        elif is_magic(raw) and not exists(path):
            base, rest = split_glob(raw)
            folder = resolver.absolute(base or ".")
            files = walker.walk(folder, base, rest, sessions=sessions)[0] if is_dir(folder) else []
            if not files:
                problem = f"{raw}: no such file or directory, and no file matches it as a pattern"
                out.append(FoundInput(raw, resolver.for_path("-"), problem))
            for shown, file in files:
                add(shown, file)
            for shown, why in walker.unreadable:
                out.append(FoundInput(shown, resolver.for_path("-"), f"{shown}: cannot read: {why}"))
            walker.unreadable.clear()
        else:
            add(raw, path)
    return _attach_continuations(_attach_subagents(out, seen), seen) if sessions else out


def _attach_continuations(found: list[FoundInput], seen: dict[str, str]) -> list[FoundInput]:
    """Each ATIF continuation file (named by another input's ``continued_trajectory_ref``)
    marked as counted in the trajectory that names it: reading that trajectory reads its
    whole chain (:func:`bbox_lark.convert.atif.lines.merge_chain`)."""
    from bbox_lark.convert.atif.lines import chain_files

    heads: dict[str, str] = {}
    for item in found:
        if item.stdin or item.counted_in or item.problem or not item.path.endswith(".json"):
            continue
        for part in chain_files(Path(item.path)):
            heads.setdefault(os.path.realpath(part), item.path)
    if not heads:
        return found
    out: list[FoundInput] = []
    for item in found:
        head = None if item.stdin or item.counted_in else heads.get(os.path.realpath(item.path))
        if head is not None and head != item.path:
            item = FoundInput(item.path, item.settings, item.problem, head, "an ATIF continuation of it")
        out.append(item)
    return out


def _attach_subagents(found: list[FoundInput], seen: dict[str, str]) -> list[FoundInput]:
    """Each Claude Code subagent log whose parent session is an input too, marked as counted
    in it (the parent's conversion reads it in)."""
    out: list[FoundInput] = []
    for item in found:
        parent = None if item.stdin or item.counted_in else _parent_session(Path(item.path))
        held = seen.get(os.path.realpath(parent)) if parent is not None else None
        if held is not None:
            item = FoundInput(
                item.path, item.settings, item.problem, held, "a subagent log of its parent session"
            )
        out.append(item)
    return out


def collect_inputs(paths: list[str]) -> list[str]:
    """The paths :func:`discover` finds for ``paths`` (no configuration file read), as
    strings. Kept for callers of the first release; new code uses :func:`discover`, which
    also gives each input its settings.

    A path that cannot be used (missing, or a directory without bbox files) stays in the
    list: :func:`bbox_lark.files.inputs.read_input` reports it, so the other paths are still read
    and the run ends with exit 2 (the highest code wins)."""
    return [item.path for item in discover(paths, Resolver(isolated=True))]


def names_one_file(paths: list[str]) -> bool:
    """True when the command line names exactly one file (or ``-``): no folder, no glob.
    Commands whose output has a one-file form (``stats --json``) use it then."""
    if len(paths) != 1:
        return False
    raw = paths[0]
    if raw == "-":
        return True
    return not is_dir(raw) and (exists(raw) or not is_magic(raw))
