"""ATIF JSON Lines (one trajectory per line, as agentpile writes them) and ATIF
``continued_trajectory_ref`` chains: inputs that hold several sessions, or one session in
several files.

- **JSON Lines.** A file whose first line is a whole JSON object with ``schema_version``
  ``ATIF…`` is ATIF JSON Lines (:func:`sniff_lines`), never bbox JSON Lines: each non-blank
  line is a session of its own (:func:`split_sessions`), addressed as ``FILE#LINE``
  (:func:`session_address`) by ``stats``, ``export``, ``query`` and ``report``.
- **Chains.** A trajectory whose ``continued_trajectory_ref`` names another file (beside it;
  a sibling whose name ends with the reference when the files were renamed with a common
  prefix) is read with its continuations as one trajectory (:func:`merge_chain`): the steps
  one after the other, renumbered, the final metrics summed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bbox_lark.convert.base import Input, RefusedInputError, load_json
from bbox_lark.files.inputs import exists, is_regular

#: The ATIF schema version key, as the first line of an ATIF JSON Lines file holds it.
_SCHEMA = re.compile(r'"schema_version"\s*:\s*"ATIF')
#: A session address: ``FILE#LINE`` (the line of a trajectory in an ATIF JSON Lines file).
_ADDRESS = re.compile(r"\A(.*)#([1-9][0-9]{0,9})\Z", re.S)
#: The longest chain followed (a loop of references ends there too).
MAX_CHAIN = 1000
#: The key that names a continuation.
CONTINUED = "continued_trajectory_ref"


def sniff_lines(text: str) -> int:
    """4 when the first line of ``text`` is a whole JSON object with an ATIF
    ``schema_version`` (ATIF JSON Lines, even of one line), else 0."""
    first, newline, _ = text[: 1 << 16].partition("\n")
    if not first.lstrip("\ufeff \t\r").startswith("{") or not _SCHEMA.search(first):
        return 0
    # A whole object on the line, or a line longer than the sniffed start.
    return 4 if not newline or first.rstrip().endswith("}") else 0


def is_lines(source: Input) -> bool:
    """True when ``source`` is ATIF JSON Lines."""
    head = source.head()
    return bool(sniff_lines(head.decode("utf-8", "replace")))


def session_address(path: str) -> tuple[str, int] | None:
    """``(FILE, LINE)`` for a session address ``FILE#LINE`` whose file exists, else None."""
    found = _ADDRESS.match(path)
    if found is None or exists(path) or not is_regular(found[1]):
        return None
    return found[1], int(found[2])


def trajectory_lines(source: Input) -> Iterator[tuple[int, bytes]]:
    """Each non-blank line of an ATIF JSON Lines input, with its 1-based line number."""
    for number, line in enumerate(source.lines(), 1):
        if line.strip():
            yield number, line


def line_input(path: str, line: int) -> Input:
    """The trajectory on line ``line`` of the ATIF JSON Lines file ``path``, as an input."""
    for number, data in trajectory_lines(Input(path)):
        if number == line:
            return Input(None, data)
    raise RefusedInputError(f"{path}: no trajectory on line {line}")


def split_sessions(source: Input, from_: str | None) -> Iterator[tuple[Input, str | None, str]]:
    """The sessions of one input: ``(input, format, name)``. ATIF JSON Lines gives one per
    line (named ``FILE#LINE``), a chained trajectory one merged input, anything else itself."""
    shown = source.shown
    if from_ in (None, "atif") and (source.path is None or not source.path.is_dir()):
        if is_lines(source):
            for number, data in trajectory_lines(source):
                yield Input(None, data), "atif", f"{shown}#{number}"
            return
        merged = merge_chain(source) if source.path is not None else None
        if merged is not None:
            yield Input(source.path, merged), "atif", shown
            return
    yield source, from_, shown


def _continuation(path: Path, ref: str) -> Path | None:
    """The file a ``continued_trajectory_ref`` names, beside ``path``."""
    if not ref or "\x00" in ref:
        return None
    direct = path.parent / ref
    if direct.is_file():
        return direct
    name = Path(ref).name
    best: tuple[int, Path] | None = None
    for sibling in path.parent.iterdir():
        if sibling.name.endswith(name) and sibling != path and sibling.is_file():
            common = len(_common_prefix(sibling.name, path.name))
            if best is None or common > best[0]:
                best = (common, sibling)
    return best[1] if best is not None else None


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _names_continuation(path: Path) -> bool:
    """True when the file's first or last 64 KiB hold the key (it ends a harbor trajectory)."""
    try:
        with path.open("rb") as file:
            start = file.read(1 << 16)
            size = file.seek(0, 2)
            file.seek(max(0, size - (1 << 16)))
            end = file.read()
    except OSError:
        return False
    key = CONTINUED.encode()
    return key in start or key in end


def chain_files(path: Path) -> list[Path]:
    """The continuation files a trajectory file names, in chain order (none when it names
    none or is not a trajectory): the files :func:`merge_chain` reads in, which discovery
    counts as part of ``path`` (docs/analytics.md, "Each session once"). Never raises."""
    if not path.name.endswith(".json") or not _names_continuation(path):
        return []
    found: list[Path] = []
    seen = {path.resolve()}
    try:
        ref = json.loads(path.read_bytes().decode("utf-8-sig")).get(CONTINUED)
        while isinstance(ref, str) and len(found) < MAX_CHAIN:
            following = _continuation(path, ref)
            if following is None or following.resolve() in seen:
                break
            seen.add(following.resolve())
            found.append(following)
            path = following
            part = json.loads(following.read_bytes().decode("utf-8-sig"))
            ref = part.get(CONTINUED) if isinstance(part, dict) else None
    except (OSError, ValueError, AttributeError):
        pass
    return found


def merge_chain(source: Input) -> bytes | None:
    """The trajectory of ``source`` with every continuation it names merged in (JSON bytes),
    or None when it names none (or is not a trajectory)."""
    if source.path is None or not _names_continuation(source.path):
        return None
    try:
        # From the file itself: the input's own stream stays unread for the reader.
        first = load_json(source.path.read_bytes().decode("utf-8-sig"), "an ATIF trajectory")
    except (RefusedInputError, UnicodeDecodeError, OSError):
        return None
    if not isinstance(first, dict) or not isinstance(first.get(CONTINUED), str) or source.path is None:
        return None
    merged: dict[str, Any] = dict(first)
    steps = list(merged.get("steps") or [])
    totals: dict[str, Any] = dict(merged.get("final_metrics") or {})
    seen = {source.path.resolve()}
    path = source.path
    ref = merged.pop(CONTINUED)
    chain = [path.name]
    while isinstance(ref, str) and len(chain) < MAX_CHAIN:
        following = _continuation(path, ref)
        if following is None or following.resolve() in seen:
            break  # not beside it (a trajectory copied alone), or a loop
        seen.add(following.resolve())
        part = load_json(following.read_bytes().decode("utf-8-sig"), "an ATIF trajectory")
        if not isinstance(part, dict):
            raise RefusedInputError(f"{following.name}: not an ATIF trajectory")
        offset = len(steps)
        for step in part.get("steps") or []:
            if isinstance(step, dict) and isinstance(step.get("step_id"), int):
                step = {**step, "step_id": step["step_id"] + offset}
            steps.append(step)
        for key, value in (part.get("final_metrics") or {}).items():
            if isinstance(value, int | float) and isinstance(totals.get(key), int | float):
                totals[key] = totals[key] + value
            elif key not in totals:
                totals[key] = value
        chain.append(following.name)
        path = following
        ref = part.get(CONTINUED)
    if len(chain) == 1:
        return None  # its continuation is not there: the trajectory alone, as it is
    if isinstance(ref, str):
        # A continuation not beside it, a loop, or a chain longer than MAX_CHAIN: the chain is
        # read as far as it goes; the reference stays in the output, so nothing is lost.
        merged[CONTINUED] = ref
    merged["steps"] = steps
    if totals:
        if "total_steps" in totals:
            totals["total_steps"] = len(steps)
        merged["final_metrics"] = totals
    extra = dict(merged.get("extra") or {})
    extra["continued_from_files"] = chain
    merged["extra"] = extra
    return json.dumps(merged, ensure_ascii=False).encode("utf-8")


def expand_sessions(items: list[Any]) -> list[Any]:
    """The inputs of ``stats``, ``export``, ``query`` and ``convert -o DIR`` with each ATIF
    JSON Lines file replaced by one input per trajectory, at its address ``FILE#LINE`` (an
    input is anything with a ``path`` and a ``problem``, as :class:`bbox_lark.files.discover.FoundInput`)."""
    from dataclasses import replace

    out: list[Any] = []
    for item in items:
        path = item.path
        if item.problem is None and path != "-" and is_lines_file(path):
            numbers = [number for number, _ in trajectory_lines(Input(path))]
            out.extend(replace(item, path=f"{path}#{number}") for number in numbers)
        else:
            out.append(item)
    return out


def is_lines_file(path: str) -> bool:
    """True when the file ``path`` is ATIF JSON Lines of more than one trajectory. A file of
    one (a trajectory written on one line, as ``json.dumps`` writes it) is an ATIF file like
    any other: its name stays its address, and a chain it starts is followed."""
    try:
        if not (is_regular(path) and is_lines(Input(path))):
            return False
        lines = trajectory_lines(Input(path))
        return next(lines, None) is not None and next(lines, None) is not None
    except OSError:
        return False


def address_input(path: str) -> Input | None:
    """The input a session address ``FILE#LINE`` names, or None when ``path`` is none."""
    found = session_address(path)
    return line_input(*found) if found is not None else None
