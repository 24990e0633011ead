"""Configuration: where settings come from, what they may say, and how they combine
(``docs/configuration.md``; the table's JSON Schema is ``docs/schema/config.schema.json``).

Settings for a path come from, lowest precedence first:

1. the defaults (:class:`Settings`);
2. one configuration file: the nearest ``.bbox-lark.toml``, ``bbox-lark.toml`` or
   ``pyproject.toml`` with a ``[tool.bbox-lark]`` table, found upward from the path's
   folder (in one folder, that order wins, as ruff does; a ``pyproject.toml`` without the
   table is passed over). ``--config PATH`` uses one file for every path instead;
   ``--isolated`` reads none. Files are not merged: the nearest one wins;
3. the command line (:class:`Overrides`).

Every problem (an unreadable file, invalid TOML, an unknown key, a value of the wrong type,
an unknown code, an invalid pattern) raises :class:`ConfigError` with one line that names
the value and where it came from; the command line turns it into exit 2.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import Any, Literal

from bbox_lark._classes import dataclass
from bbox_lark.errors import ConfigError as ConfigError  # its home is bbox_lark.errors
from bbox_lark.files.globs import Glob, match_globs, pattern_error
from bbox_lark.files.inputs import is_dir, is_regular
from bbox_lark.syntax.source import DEFAULT_MAX_LINE
from bbox_lark.syntax.values import parse_int

#: Configuration file names, in order of precedence within one folder.
CONFIG_FILES = (".bbox-lark.toml", "bbox-lark.toml", "pyproject.toml")
PYPROJECT = "pyproject.toml"
#: The table of ``pyproject.toml`` that holds the settings.
TABLE = "[tool.bbox-lark]"

#: Every key the configuration table accepts.
KEYS = (
    "select",
    "ignore",
    "strict",
    "exclude",
    "extend-exclude",
    "max-line",
    "per-file-ignores",
    "jobs",
    "allowed-secrets",
)

#: Folders never searched unless ``exclude`` says otherwise (``.git`` is never entered at all).
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pytest_cache",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pycache__",
    "node_modules",
    "venv",
)

Jobs = int | Literal["auto"]


# -- the settings ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PerFileIgnore:
    """Codes ignored in the files a pattern matches (a leading ``!`` matches the files the
    rest of the pattern does not)."""

    glob: Glob
    codes: tuple[str, ...]

    def matches(self, path: Path, cwd: Path) -> bool:
        negated = self.glob.pattern.startswith("!")
        glob = replace(self.glob, pattern=self.glob.pattern[1:]) if negated else self.glob
        return bool(match_globs((glob,), path, False, cwd)) != negated


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything configurable, resolved for one folder (a file uses its folder's)."""

    #: Codes or prefixes to report; None: every code.
    select: tuple[str, ...] | None = None
    #: Codes or prefixes never reported (wins over ``select``).
    ignore: tuple[str, ...] = ()
    #: Warnings fail too (``check`` exits 1).
    strict: bool = False
    #: Paths skipped when searching folders (gitignore-style, replaces the defaults).
    exclude: tuple[Glob, ...] = tuple(Glob(pattern) for pattern in DEFAULT_EXCLUDE)
    #: More paths to skip, on top of ``exclude``.
    extend_exclude: tuple[Glob, ...] = ()
    #: The longest line parsed, in characters.
    max_line: int = DEFAULT_MAX_LINE
    per_file_ignores: tuple[PerFileIgnore, ...] = ()
    #: Parallel jobs (a positive number, or ``"auto"``); None: the default.
    jobs: Jobs | None = None
    #: Values that look like credentials but are not secrets (fake keys in test fixtures):
    #: the S codes do not report them and ``redact`` keeps them.
    allowed_secrets: tuple[str, ...] = ()
    #: The configuration file these settings came from (None: defaults and options only).
    config: Path | None = None

    @property
    def excludes(self) -> tuple[Glob, ...]:
        return self.exclude + self.extend_exclude

    def ignore_for(self, path: str | Path | None, cwd: Path | None = None) -> tuple[str, ...]:
        """``ignore`` plus the codes of every ``per-file-ignores`` pattern that matches
        ``path`` (None, for standard input, matches none)."""
        if path is None or str(path) == "-" or not self.per_file_ignores:
            return self.ignore
        here = cwd or Path.cwd()
        absolute = _absolute(Path(path), here)
        extra = [
            code for entry in self.per_file_ignores if entry.matches(absolute, here) for code in entry.codes
        ]
        return self.ignore + tuple(code for code in extra if code not in self.ignore)

    def enabled(self, code: str, path: str | Path | None = None) -> bool:
        """True when ``code`` is reported for ``path`` under these settings."""
        if self.select is not None and not code.startswith(self.select):
            return False
        return not code.startswith(self.ignore_for(path))


@dataclass(frozen=True, slots=True)
class Overrides:
    """Settings given on the command line; None (or empty) where an option was not given.

    ``select`` replaces the configuration's ``select`` *and* ``ignore`` (as in ruff: the
    codes you name are what you get), ``ignore`` adds to the configuration's ``ignore``,
    ``exclude`` replaces ``exclude``, ``extend_exclude`` adds to ``extend-exclude``; the
    rest replace the configuration's value."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    strict: bool | None = None
    exclude: tuple[Glob, ...] | None = None
    extend_exclude: tuple[Glob, ...] = ()
    max_line: int | None = None
    jobs: Jobs | None = None


# -- values: one validator per key, shared by the file and the command line --------------


def _show(value: object) -> str:
    try:
        import json

        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        return repr(value)


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return "a date or time"


def _known_codes() -> tuple[str, ...]:
    from bbox_lark.checks import registry

    return tuple(registry())


def valid_selector(value: str) -> bool:
    """True when ``value`` (already upper-case) is a registered code or a prefix of one."""
    return bool(value) and any(code.startswith(value) for code in _known_codes())


def check_codes(values: Iterable[str], name: str) -> tuple[str, ...]:
    """Codes or code prefixes, upper-cased; :class:`ConfigError` naming ``name`` for one
    that no registered code starts with."""
    out: list[str] = []
    for raw in values:
        value = raw.strip().upper()
        if not valid_selector(value):
            import difflib

            close = difflib.get_close_matches(value, _known_codes(), n=1)
            hint = (
                f"; did you mean {close[0]}?"
                if close
                else "; `bbox-lark explain` and docs/checks.md list every code"
            )
            raise ConfigError(f"{name}: unknown code or prefix {raw.strip()!r}{hint}")
        if value not in out:
            out.append(value)
    return tuple(out)


def split_option(values: Iterable[str] | None) -> list[str] | None:
    """A repeatable command-line option's values, each possibly comma-separated."""
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


#: The highest ``max-line`` taken: 16 Mi characters. Parsing a line costs memory in
#: proportion to its length (about 90 bytes per character of a line of short ``k=v`` fields
#: for ``check``, more for ``fmt`` and ``convert``: docs/design.md, "Long lines and memory"),
#: so a limit raised without bound would let one line take every byte of the machine.
MAX_LINE_CAP = 16 * 1024 * 1024


def check_max_line(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name}: must be an integer of at least 1, not {_show(value)}")
    if value > MAX_LINE_CAP:
        raise ConfigError(
            f"{name}: at most {MAX_LINE_CAP:,} characters (a longer line costs gigabytes), not {value:,}"
        )
    return value


def check_jobs(value: object, name: str) -> Jobs:
    if value == "auto":
        return "auto"
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f'{name}: must be a positive integer or "auto", not {_show(value)}')
    return value


def check_patterns(values: Iterable[str], name: str, base: Path | None) -> tuple[Glob, ...]:
    out: list[Glob] = []
    for pattern in values:
        problem = pattern_error(pattern)
        if problem is not None:
            raise ConfigError(f"{name}: {_show(pattern)}: {problem}")
        out.append(Glob(pattern, base))
    return tuple(out)


def check_blobs(value: str | Path | None, name: str = "--blobs") -> Path | None:
    """A blob folder that must exist (docs/reference.md#options)."""
    if value is None:
        return None
    path = Path(value)
    if not path.exists():
        raise ConfigError(f"{name} {value}: no such directory")
    if not path.is_dir():
        raise ConfigError(f"{name} {value}: not a directory")
    return path


def _string_list(value: object, name: str, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{name}: must be an array of {what}, not {_kind(value)} ({_show(value)})")
    return value


def _code_list(value: object, name: str) -> tuple[str, ...]:
    items = _string_list(value, name, 'codes (e.g. ["W004", "I0"])')
    for item in items:
        if "," in item:
            raise ConfigError(f"{name}: one code per item, not {_show(item)}")
    return check_codes(items, name)


def _validate(table: Mapping[str, Any], label: str, base: Path) -> dict[str, Any]:
    """The table's values, checked and normalized (keys in snake_case)."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{label}{key}"
        if key == "select":
            out["select"] = _code_list(value, name)
        elif key == "ignore":
            out["ignore"] = _code_list(value, name)
        elif key == "strict":
            if not isinstance(value, bool):
                raise ConfigError(f"{name}: must be true or false, not {_show(value)}")
            out["strict"] = value
        elif key in ("exclude", "extend-exclude"):
            patterns = _string_list(value, name, 'gitignore-style patterns (e.g. ["logs/old/"])')
            out[key.replace("-", "_")] = check_patterns(patterns, name, base)
        elif key == "max-line":
            out["max_line"] = check_max_line(value, name)
        elif key == "jobs":
            out["jobs"] = check_jobs(value, name)
        elif key == "allowed-secrets":
            out["allowed_secrets"] = tuple(
                _string_list(value, name, 'values (e.g. ["AKIAIOSFODNN7EXAMPLE"])')
            )
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{name}: must be a table of pattern = [codes], not {_kind(value)}")
            entries = []
            for pattern, codes in value.items():
                where = f"{name}: {_show(pattern)}"
                problem = pattern_error(pattern.removeprefix("!"))
                if problem is not None:
                    raise ConfigError(f"{where}: {problem}")
                entries.append(PerFileIgnore(Glob(pattern, base), _code_list(codes, where)))
            out["per_file_ignores"] = tuple(entries)
        else:
            import difflib

            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(sorted(KEYS))
            raise ConfigError(f"{label}unknown key {key!r} ({hint})")
    return out


# -- files -------------------------------------------------------------------------------


def shown_path(path: Path, cwd: Path | None = None) -> str:
    """A path as messages show it: relative to the current folder when inside it."""
    here = cwd or Path.cwd()
    try:
        return path.relative_to(here).as_posix()
    except ValueError:
        return str(path)


def _absolute(path: Path, cwd: Path) -> Path:
    return Path(os.path.normpath(cwd / path))


@dataclass(frozen=True, slots=True)
class ConfigFile:
    """One configuration file, read and checked."""

    path: Path
    #: Checked values, snake_case keys (only the keys the file sets).
    values: dict[str, Any] = field(default_factory=dict)


def load_config(path: Path, *, cwd: Path | None = None, pyproject: bool | None = None) -> ConfigFile | None:
    """Read and check one configuration file. A ``pyproject.toml`` without a
    ``[tool.bbox-lark]`` table gives None (it is not a bbox-lark configuration); in any
    other file the keys are at the top level. Raises :class:`ConfigError`."""
    here = cwd or Path.cwd()
    absolute = _absolute(path, here)
    shown = shown_path(absolute, here)
    try:
        data = absolute.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{shown}: is a directory, not a configuration file") from None
    except OSError as error:
        raise ConfigError(f"{shown}: cannot read: {error.strerror or error}") from None
    import tomllib  # only when there is a configuration file to read

    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{shown}: not valid TOML: not UTF-8 (byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{shown}: not valid TOML: {error}") from None
    is_pyproject = absolute.name == PYPROJECT if pyproject is None else pyproject
    if is_pyproject:
        tool = document.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{shown}: [tool] must be a table")
        if "bbox-lark" not in tool:
            return None
        table = tool["bbox-lark"]
        if not isinstance(table, dict):
            raise ConfigError(f"{shown}: {TABLE} must be a table, not {_kind(table)}")
        label = f"{shown}: {TABLE} "
    else:
        table = document
        label = f"{shown}: "
        if "tool" in table and isinstance(table["tool"], dict) and "bbox-lark" in table["tool"]:
            raise ConfigError(
                f"{shown}: unknown key 'tool' (in {absolute.name} the keys are at the top level,"
                f" without {TABLE})"
            )
    return ConfigFile(absolute, _validate(table, label, absolute.parent))


def find_config(folder: Path) -> Path | None:
    """The configuration file that applies to ``folder``: the nearest of
    :data:`CONFIG_FILES` found upward (a ``pyproject.toml`` only with the table). Raises
    :class:`ConfigError` for a bad file on the way."""
    return Resolver(cwd=folder).config_for(folder)


# -- the command line --------------------------------------------------------------------


def cli_overrides(
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    strict: bool | None = None,
    exclude: Iterable[str] | None = None,
    extend_exclude: Iterable[str] | None = None,
    max_line: int | None = None,
    jobs: str | int | None = None,
    cwd: Path | None = None,
) -> Overrides:
    """Command-line values, checked (:class:`ConfigError` names the option). Codes and
    patterns may be repeated or comma-separated; patterns are relative to ``cwd``."""
    here = cwd or Path.cwd()
    selected = split_option(select)
    ignored = split_option(ignore)
    excluded = split_option(exclude)
    extended = split_option(extend_exclude) or []
    jobs_value: Jobs | None = None
    if jobs is not None:
        number = parse_int(jobs) if isinstance(jobs, str) else None
        jobs_value = check_jobs(number if number is not None else jobs, "--jobs")
    return Overrides(
        select=check_codes(selected, "--select") if selected is not None else None,
        ignore=check_codes(ignored, "--ignore") if ignored is not None else None,
        strict=strict,
        exclude=check_patterns(excluded, "--exclude", here) if excluded is not None else None,
        extend_exclude=check_patterns(extended, "--extend-exclude", here),
        max_line=check_max_line(max_line, "--max-line") if max_line is not None else None,
        jobs=jobs_value,
    )


def merge(config: ConfigFile | None, overrides: Overrides = Overrides()) -> Settings:
    """Defaults, then ``config``'s values, then ``overrides`` (see :class:`Overrides`)."""
    settings = Settings()
    if config is not None:
        settings = replace(settings, config=config.path, **config.values)
    o = overrides
    if o.select is not None:
        settings = replace(settings, select=o.select, ignore=o.ignore or ())
    elif o.ignore is not None:
        settings = replace(
            settings, ignore=settings.ignore + tuple(c for c in o.ignore if c not in settings.ignore)
        )
    if o.strict is not None:
        settings = replace(settings, strict=o.strict)
    if o.exclude is not None:
        settings = replace(settings, exclude=o.exclude)
    if o.extend_exclude:
        settings = replace(settings, extend_exclude=settings.extend_exclude + o.extend_exclude)
    if o.max_line is not None:
        settings = replace(settings, max_line=o.max_line)
    if o.jobs is not None:
        settings = replace(settings, jobs=o.jobs)
    return settings


class Resolver:
    """Settings for any path: finds, reads and checks configuration files once per folder.

    ``config`` names one file for every path (``--config``); ``isolated`` reads none
    (``--isolated``); the two exclude each other. Raises :class:`ConfigError`."""

    def __init__(
        self,
        overrides: Overrides = Overrides(),
        *,
        config: str | Path | None = None,
        isolated: bool = False,
        cwd: Path | None = None,
    ) -> None:
        if config is not None and isolated:
            raise ConfigError("--config and --isolated exclude each other; give one")
        self.overrides = overrides
        self.isolated = isolated
        self.cwd = cwd or Path.cwd()
        self._fixed: ConfigFile | None = None
        self._fixed_given = config is not None
        if config is not None:
            path = Path(config)
            if not _absolute(path, self.cwd).exists():
                raise ConfigError(f"--config {config}: no such file")
            try:
                self._fixed = load_config(path, cwd=self.cwd)
            except ConfigError as error:
                raise ConfigError(f"--config {error}") from None
        self._files: dict[Path, ConfigFile | None] = {}
        self._nearest: dict[Path, ConfigFile | None] = {}
        self._settings: dict[Path, Settings] = {}

    def absolute(self, path: str | Path) -> Path:
        return _absolute(Path(path), self.cwd)

    def config_for(self, folder: Path) -> Path | None:
        found = self._config_file(self.absolute(folder))
        return found.path if found is not None else None

    def _config_file(self, folder: Path) -> ConfigFile | None:
        if self.isolated:
            return None
        if self._fixed_given:
            return self._fixed
        if folder in self._nearest:
            return self._nearest[folder]
        found: ConfigFile | None = None
        for name in CONFIG_FILES:
            candidate = folder / name
            if is_regular(candidate):
                if candidate not in self._files:
                    self._files[candidate] = load_config(candidate, cwd=self.cwd)
                found = self._files[candidate]
                if found is not None:
                    break
        if found is None and folder.parent != folder:
            found = self._config_file(folder.parent)
        self._nearest[folder] = found
        return found

    def for_folder(self, folder: str | Path) -> Settings:
        """The settings for the files of ``folder``."""
        absolute = self.absolute(folder)
        settings = self._settings.get(absolute)
        if settings is None:
            settings = merge(self._config_file(absolute), self.overrides)
            self._settings[absolute] = settings
        return settings

    def for_path(self, path: str | Path) -> Settings:
        """The settings for a file (its folder's), a folder, or ``-`` (the current folder's)."""
        if str(path) == "-":
            return self.for_folder(self.cwd)
        absolute = self.absolute(path)
        return self.for_folder(absolute if is_dir(absolute) else absolute.parent)


def resolve(
    path: str | Path,
    cli_overrides: Overrides = Overrides(),
    config_path: str | Path | None = None,
    isolated: bool = False,
) -> Settings:
    """The settings for ``path`` (a file, a folder or ``-``): its configuration file (found
    upward, or ``config_path``, or none when ``isolated``) under ``cli_overrides``. For
    many paths, make one :class:`Resolver`: it reads each configuration file once."""
    return Resolver(cli_overrides, config=config_path, isolated=isolated).for_path(path)


def resolver_from_options(
    *,
    config: str | Path | None = None,
    isolated: bool = False,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    strict: bool | None = None,
    exclude: Iterable[str] | None = None,
    extend_exclude: Iterable[str] | None = None,
    max_line: int | None = None,
    jobs: str | int | None = None,
) -> Resolver:
    """A :class:`Resolver` for a command line's options (checked by :func:`cli_overrides`).
    Raises :class:`ConfigError`."""
    overrides = cli_overrides(
        select=select,
        ignore=ignore,
        strict=strict,
        exclude=exclude,
        extend_exclude=extend_exclude,
        max_line=max_line,
        jobs=jobs,
    )
    return Resolver(overrides, config=config, isolated=isolated)
