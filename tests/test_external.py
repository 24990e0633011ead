"""Real files nobody on this project wrote: ``../shared/corpus-external`` beside the repository.

Skipped when the folder is absent (a fresh clone has no ``shared/``). The line counts are
checked against a small classifier written here from DECISIONS §3, independent of bbox_lark.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

import bbox_lark

EXTERNAL = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus-external"
if not EXTERNAL.is_dir():
    pytest.skip(f"no external corpus at {EXTERNAL}", allow_module_level=True)


def files(folder: str) -> list[Path]:
    """Every file of an external folder, whatever its suffix."""
    return sorted(path for path in (EXTERNAL / folder).iterdir() if path.is_file())


DOCS = files("bbox-docs")
RLOG = files("rlog-real")
FRAGMENTS = files("bbox-fragments")
CHECKED = DOCS + RLOG

# The files that are invalid by DECISIONS, each with the error codes it must produce (one entry
# per diagnostic, sorted). Every other file in bbox-docs/ and rlog-real/ must have no error.
_ID_EMPTY = ["E010"]  # `id:` left empty by the writer: E010 (§9 "Empty values")
_ID_AND_SHA_EMPTY = ["E010", "E010"]  # `id:` and `repo_sha:` both empty
# `t!:Bash ... cmd="... \" → [running]`: the escaped quote never closes the string in the call
# part (§9 "Quotes"); the writer truncated the command. For 20251220__182019 the inner quotes
# are not escaped, so `grep "error\[E" "` leaves a last `"` that opens a string never closed.
_UNTERMINATED = ["E012"]
KNOWN_INVALID: dict[str, list[str]] = {
    # From blackbox-session.md: the header has no `format` and no `repo_sha` (§2 "Required").
    "bbox-docs/crates__blackbox__docs__blackbox-session.md__block06.bbox": ["E010", "E010"],
    "rlog-real/20251219__2205-start-working.rlog": _ID_EMPTY,
    "rlog-real/20251219__2302-start-working.rlog": _ID_EMPTY,
    "rlog-real/20251220__182019-call-issue-ready-now-to.rlog": _UNTERMINATED,  # line 403
    "rlog-real/20251221__153552-call-issue-ready-now-to.rlog": _UNTERMINATED,  # line 424
    "rlog-real/20251222__022126-begin-autonomous-work-call.rlog": _ID_EMPTY,
    "rlog-real/20251222__080515-call-issue-ready-now-to.rlog": _UNTERMINATED,  # line 694
    "rlog-real/20251222__090059-begin-autonomous-work-call.rlog": _ID_EMPTY,
    "rlog-real/20251222__094938-call-issue-ready-now-to.rlog": _UNTERMINATED,  # line 805
    "rlog-real/20251222__140431-call-issue-ready-now-to.rlog": _UNTERMINATED,  # line 108
    "rlog-real/20251223__024018-call-issue-ready-now-to.rlog": _UNTERMINATED,  # line 313
    "rlog-real/20251223__104224-call-issue-ready-now-to.rlog": _ID_EMPTY,
    "rlog-real/20251223__130835-call-issue-ready-now-to.rlog": _ID_EMPTY,
    "rlog-real/20251223__130906-call-issue-ready-now-to.rlog": _ID_EMPTY,
    "rlog-real/20251223__154703-process-issues-from-database.rlog": _ID_AND_SHA_EMPTY,
    "rlog-real/20251223__154714-process-issues-from-database.rlog": _ID_AND_SHA_EMPTY,
    "rlog-real/20251223__154722-process-issues-from-database.rlog": _ID_AND_SHA_EMPTY,
    "rlog-real/20251223__154738-process-issues-from-database.rlog": _ID_AND_SHA_EMPTY,
    "rlog-real/20251223__154803-process-issues-from-database.rlog": _ID_AND_SHA_EMPTY,
    "rlog-real/20251223__162157-call-issue-ready-now-to.rlog": _ID_EMPTY,
    "rlog-real/20251223__165700-call-issue-ready-now-to.rlog": _ID_EMPTY,
    "rlog-real/20251223__170739-call-issue-ready-now-to.rlog": _ID_EMPTY,
    "rlog-real/20251223__182350-call-issue-ready-now-to.rlog": _ID_EMPTY,
}


def name(path: Path) -> str:
    return path.relative_to(EXTERNAL).as_posix()


# ---------------------------------------------------------------- the independent classifier

#: DECISIONS §3: prefix -> event kind (§8 names).
KINDS = {
    "u": "user", "a": "agent", "t": "tool", "t!": "tool_start", "t~": "tool_progress",
    "o": "observation", "s": "skill", "p": "plan", "m": "mode", "r": "recall", "x": "subagent",
    "c": "mcp", "q": "question", "th": "thinking", "td": "todos",
}  # fmt: skip
_PREFIX = re.compile(r"(t!|t~|th|td|u|a|t|o|s|p|m|r|x|c|q):")
_LIFECYCLE = re.compile(r"@[A-Za-z]")
_FENCE = re.compile(r"---[ \t]*")


def classify(line: str) -> str:
    """The kind of one body line, by DECISIONS §3's table alone."""
    if not line.strip():
        return "blank"
    if line.startswith(("  ", "\t")):
        return "continuation"
    if line.startswith("#"):
        return "comment"
    if _LIFECYCLE.match(line):
        return "lifecycle"
    match = _PREFIX.match(line)
    return KINDS[match[1]] if match else "unknown"


def independent_counts(data: bytes) -> Counter[str]:
    """Body line kinds counted without bbox_lark: skip blank lines and the fenced header."""
    lines = [line.removesuffix("\r") for line in data.decode("utf-8").removeprefix("\ufeff").split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    assert start < len(lines) and _FENCE.fullmatch(lines[start]), "no opening fence"
    close = next(n for n in range(start + 1, len(lines)) if _FENCE.fullmatch(lines[n]))
    return Counter(classify(line) for line in lines[close + 1 :])


def parsed_counts(data: bytes) -> Counter[str]:
    doc = bbox_lark.parse(data)
    return Counter(line.kind for line in doc.lines)


def test_classifier() -> None:
    # The classifier itself, on the lines that are easy to get wrong.
    table = {
        "th: x": "thinking", "td: x": "todos", "t:h": "tool", "t!:x": "tool_start",
        "t~:x": "tool_progress", "m: auto": "mode", "@": "unknown", "@end": "lifecycle",
        "  x": "continuation", "\tx": "continuation", "   ": "blank", "#x": "comment",
        "tool: x": "unknown", "T:x": "unknown", "": "blank",
    }  # fmt: skip
    assert {line: classify(line) for line in table} == table


# ---------------------------------------------------------------- the tests


def test_external_corpus_is_there() -> None:
    # The counts in corpus-external/README.md: a file added there must be looked at (is it
    # valid?) and, if it is not, entered in KNOWN_INVALID.
    assert len(DOCS) == 11
    assert len(FRAGMENTS) == 15
    assert len(RLOG) == 115


def test_known_invalid_table_names_existing_files() -> None:
    names = {name(path) for path in CHECKED}
    assert sorted(set(KNOWN_INVALID) - names) == []


@pytest.mark.parametrize("path", CHECKED, ids=name)
def test_errors_are_exactly_the_known_ones(path: Path) -> None:
    diagnostics = bbox_lark.check(path.read_bytes())
    errors = sorted(d.code for d in diagnostics if d.severity == "error")
    assert errors == KNOWN_INVALID.get(name(path), [])


@pytest.mark.parametrize("path", CHECKED, ids=name)
def test_line_kinds_match_an_independent_count(path: Path) -> None:
    data = path.read_bytes()
    assert parsed_counts(data) == independent_counts(data)


@pytest.mark.parametrize("path", FRAGMENTS, ids=name)
def test_fragments_have_no_header(path: Path) -> None:
    doc = bbox_lark.parse(path.read_bytes())
    assert doc.header == {}
    codes = [d.code for d in doc.diagnostics]
    assert codes.count("E004") == 1
    assert next(d for d in doc.diagnostics if d.code == "E004").line == 1
    assert len(doc.events) > 0
