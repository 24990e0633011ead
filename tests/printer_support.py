"""Shared helpers for the printer, fmt, fix and convert tests: corpus discovery and the
grammar-driven Hypothesis strategies.

Corpus files are found by glob, never listed by hand, so a new file is tested the moment it
lands. ``ALPHABET`` and ``SEED_LINES`` live in ``tools/fuzzgen.py`` (on the test path through
``pythonpath`` in pyproject.toml), shared with the fuzzer. ``BBOX_LARK_FUZZ=N`` raises the
number of Hypothesis examples to N (the default profile keeps the suite fast).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

from fuzzgen import ALPHABET, SEED_LINES  # tools/fuzzgen.py: shared with tools/fuzz.py
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark

from bbox_lark.syntax.grammar import build_lark, terminal_pattern

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
EXTERNAL = ROOT.parent / "shared" / "corpus-external"
FMT_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "fmt"
SUFFIXES = (".bbox", ".blackbox", ".rlog")


def _bbox_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def golden_files() -> list[Path]:
    """Every bbox file of the project's own corpus, the bundled example, the documentation
    examples and the formatter fixtures (inputs and expected outputs)."""
    folders = (CORPUS, ROOT / "examples", ROOT / "docs" / "examples", FMT_FIXTURES)
    files = [path for folder in folders for path in _bbox_files(folder)]
    return sorted(set(files))


def external_files() -> list[Path]:
    """The bbox files of ``../shared/corpus-external`` (empty when it is absent)."""
    return _bbox_files(EXTERNAL)


def on_each_file(paths: Iterable[Path], same: Callable[[bytes], object]) -> int:
    """Run a differential check ``same`` on the bytes of each file; how many files it read
    (the tests assert a floor, so an empty folder cannot pass unnoticed)."""
    count = 0
    for path in paths:
        same(path.read_bytes())
        count += 1
    return count


def file_id(path: Path) -> str:
    for base in (ROOT, EXTERNAL):
        if path.is_relative_to(base):
            return str(path.relative_to(base))
    return path.name


# -- Hypothesis ------------------------------------------------------------------------

FUZZ_EXAMPLES = int(os.environ.get("BBOX_LARK_FUZZ", "0") or 0)


def fuzz_settings(default: int) -> settings:
    """``default`` examples, or ``BBOX_LARK_FUZZ`` of them when that is set. No deadline:
    a slow machine must never fail a test."""
    return settings(
        max_examples=FUZZ_EXAMPLES or default,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


_chars = st.sampled_from(ALPHABET)
_text_chars = st.sampled_from([c for c in ALPHABET if c not in "\t\u00a0"])


def _quoted() -> st.SearchStrategy[str]:
    inner = st.lists(
        st.one_of(
            st.sampled_from(['\\"', "\\\\", "\\n", "\\t", " ", "→", " -> ", " # metrics "]),
            _text_chars.filter(lambda c: c not in '"\\'),
        ),
        max_size=8,
    ).map("".join)
    return inner.map(lambda s: f'"{s}"')


def _pieces(*, arrows: bool) -> st.SearchStrategy[str]:
    words = st.text(
        st.sampled_from([c for c in ALPHABET if not c.isspace() and c not in "→"]), min_size=1, max_size=6
    )
    options = [
        words,
        _quoted(),
        st.sampled_from([" ", "  ", "\t", " \u00a0"]),
        st.sampled_from(
            [
                "id=call_1",
                "step=3",
                "step=12",
                'q="a  b"',
                "k=",
                'k="open',
                "[a,  b]",
                'l=["x", "y z"]',
                "ts=2025-06-18T09:00:00Z",
                "attempt=1/3",
                "[redacted:env]",
                "@blob sha256=9f86d08 bytes=4",
                "[ok]",
                "[186 lines]",
                "[err: boom]",
                "#",
                "-",
                "->",
                '"',
                "metrics",
            ]
        ),
    ]
    if arrows:
        options.append(st.sampled_from(["→", " → ", " -> ", " # metrics ", "\t# metrics"]))
    return st.one_of(*options)


def _whole(pattern: re.Pattern[str], text: str, pos: int) -> bool:
    """True when ``pattern`` matches ``text[pos:]`` in full, as the lexer takes it: a greedy
    ``match`` that reaches the end (``fullmatch`` would backtrack through every split of the
    text terminals' nested repetitions when it fails)."""
    match = pattern.match(text, pos)
    return match is not None and match.end() == len(text)


def _valid(
    strategy: st.SearchStrategy[str], name: str, fallback: str, lead: str = ""
) -> st.SearchStrategy[str]:
    """``strategy`` checked against the grammar's compiled pattern for terminal ``name``: a
    drawn string the terminal does not take in full is replaced by ``fallback`` (a filter
    would throw whole documents away and make generation slow). ``lead`` is put before the
    string when checking, for terminals whose lookbehind looks at the previous character."""
    pattern = re.compile(terminal_pattern(name))
    assert _whole(pattern, lead + fallback, len(lead)), (name, fallback)
    return strategy.map(lambda s: s if _whole(pattern, lead + s, len(lead)) else fallback)


def _matching(name: str, *, arrows: bool, fallback: str, lead: str = "") -> st.SearchStrategy[str]:
    """Strings the terminal ``name`` matches in full, built from pieces."""
    built = st.lists(_pieces(arrows=arrows), min_size=1, max_size=10).map("".join)
    return _valid(built, name, fallback, lead)


@cache
def explicit_terminals() -> dict[str, st.SearchStrategy[str]]:
    """Strategies for the terminals Hypothesis's regex strategy cannot draw (lookarounds,
    possessive quantifiers, ``$``), each checked against the terminal's real pattern."""
    keywords = {
        "KW_METRICS": "metrics",
        "KW_CONDENSE": "condense",
        "KW_ANCHOR": "anchor",
        "KW_MEMORY": "memory",
    }
    explicit: dict[str, st.SearchStrategy[str]] = {name: st.just(word) for name, word in keywords.items()}
    explicit["KW_SUMMARY"] = st.sampled_from(["tokens", "tokens_in", "tokens_out", "cost"])
    explicit["BLANK"] = st.text(st.sampled_from(" \t\u00a0\x0b"), min_size=1, max_size=4)
    explicit["CALL_TEXT"] = _matching("CALL_TEXT", arrows=False, fallback=" x", lead=" ")
    explicit["FREE_TEXT"] = _matching("FREE_TEXT", arrows=False, fallback=" x", lead=" ")
    arrow = st.sampled_from(["→", "→ ", "-> ", "->"])
    rest = st.lists(_pieces(arrows=True), max_size=8).map("".join)
    for name in ("RESULT", "FREE_RESULT"):
        explicit[name] = _valid(st.builds(lambda a, r: a + r, arrow, rest), name, "→ [ok]", lead=" ")
    body = st.lists(_pieces(arrows=True), max_size=6).map("".join)
    metrics = st.builds(lambda lead, rest: lead + "# metrics" + rest, st.sampled_from([" ", "\t"]), body)
    explicit["METRICS"] = _valid(metrics, "METRICS", " # metrics")
    return explicit


@cache
def grammar_lines() -> st.SearchStrategy[str]:
    """Body lines drawn from ``grammar/bbox.lark``'s ``line`` rule."""
    return from_lark(_uncached_parser(), start="line", explicit=explicit_terminals(), alphabet=_chars)


@cache
def mutated_lines() -> st.SearchStrategy[str]:
    """Real lines with characters inserted, deleted or duplicated (quotes, arrows, ``#``,
    tabs, ``\\r`` among them)."""
    specials = st.sampled_from(['"', "→", "->", "#", "\t", "\r", " ", "=", "[", "]", ":", "\\", " # metrics"])

    @st.composite
    def mutate(draw: st.DrawFn) -> str:
        line = draw(st.sampled_from(SEED_LINES))
        for _ in range(draw(st.integers(0, 4))):
            at = draw(st.integers(0, len(line)))
            action = draw(st.sampled_from(["insert", "delete", "duplicate"]))
            if action == "insert":
                line = line[:at] + draw(specials) + line[at:]
            elif action == "delete" and line:
                at = min(at, len(line) - 1)
                line = line[:at] + line[at + 1 :]
            elif line:
                at = min(at, len(line) - 1)
                line = line[:at] + line[at] + line[at:]
        return line.replace("\n", "")

    return mutate()


@cache
def any_lines() -> st.SearchStrategy[str]:
    return st.one_of(grammar_lines(), mutated_lines(), st.sampled_from(SEED_LINES))


HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\n"


@st.composite
def documents(draw: st.DrawFn) -> str:
    """Whole files: optional BOM, optional header, generated lines, each with a random
    ending (LF, CRLF, or none for the last line)."""
    lines = draw(st.lists(any_lines(), max_size=8))
    endings = [draw(st.sampled_from(["\n", "\r\n"])) for _ in lines]
    header = draw(st.sampled_from(["", HEADER, HEADER.replace("\n", "\r\n"), "\n" + HEADER]))
    text = header + "".join(line + end for line, end in zip(lines, endings, strict=True))
    if lines and draw(st.booleans()):
        text = text[: -len(endings[-1])]
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text


@cache
def _uncached_parser() -> Any:
    """The grammar loaded afresh: Hypothesis's Lark strategy reads ``Lark.grammar``, which a
    parser loaded from Lark's cache does not keep."""
    return build_lark(cached=False)
