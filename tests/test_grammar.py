"""The grammar is total, the lean driver agrees with Lark, and the second-level scanners
agree with the grammar's own second-level rules."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbox_lark.syntax.grammar import grammar_text, plain_parser, terminal_pattern
from bbox_lark.syntax.parser import lark_parser, line_driver, parse_line
from bbox_lark.syntax.scan import classify_result, patterns, scan_items

ROOT = Path(__file__).resolve().parent.parent
CORPUS_LINES = sorted(
    {
        line
        for path in [*sorted((ROOT / "corpus").rglob("*.bbox")), ROOT / "examples" / "demo.bbox"]
        for line in path.read_text(encoding="utf-8", errors="surrogateescape").split("\n")
    }
)

# Characters that matter to the grammar, plus ordinary ones.
SPECIAL = ["th:", "td:", "t!:", "t~:", " -> ", " # metrics ", "[ok]", "[redacted:k]", "@blob ", "\x00", "é"]
ALPHABET = st.sampled_from([*"abtuxmcqoprsd!~:=\"'[],.#@→->\\ \t\r/0123456789_", *SPECIAL])
LINES = st.lists(ALPHABET, max_size=40).map("".join)


def normal(value: Any) -> Any:
    """Tokens as (type, text, offset); containers recursively."""
    if isinstance(value, str) and hasattr(value, "type"):
        return (value.type, str(value), value.start_pos)
    if isinstance(value, tuple | list):
        return tuple(normal(v) for v in value)
    return value


def test_grammar_ships_in_the_package() -> None:
    assert grammar_text() == (ROOT / "grammar" / "bbox.lark").read_text(encoding="utf-8")


@pytest.mark.parametrize("line", CORPUS_LINES or [""])
def test_driver_agrees_with_lark_on_corpus_lines(line: str) -> None:
    assert normal(line_driver().parse(line)) == normal(lark_parser().parse(line, start="line"))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(LINES)
def test_grammar_is_total_and_driver_agrees(line: str) -> None:
    # Every string is a line: Lark never fails, and the lean driver gives the same parts.
    expected = lark_parser().parse(line, start="line")
    assert normal(line_driver().parse(line)) == normal(expected)
    node = parse_line(line)
    assert node.raw == line


@settings(max_examples=300)
@given(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=60))
def test_any_text_parses(line: str) -> None:
    assert parse_line(line).raw == line


def test_scanner_patterns_come_from_the_grammar() -> None:
    pats = patterns()
    for name in ("FIELD", "QUOTED", "LIST", "WORD"):
        assert terminal_pattern(name) in pats.item.pattern
    for name in ("R_OK", "R_RUNNING", "R_COUNT", "R_ERROR", "R_RETRY", "R_SELECTED", "R_AUTO_CHOICE"):
        assert re.escape(terminal_pattern(name)) in pats.result_head.pattern or (
            terminal_pattern(name) in pats.result_head.pattern
        )
    for name in ("R_REDACTED", "R_BLOB"):
        assert f"(?P<{name}>" in pats.result_head.pattern
    # and the grammar really defines them
    for name in ("FIELD", "QUOTED", "LIST", "R_OK", "BLOB", "REDACTION", "FENCE"):
        assert re.search(rf"^{name}(\.\d+)?:", grammar_text(), re.M)


ITEM = st.one_of(
    st.from_regex(r"[a-z_][a-z0-9_.]{0,5}=[a-z0-9/]{0,5}", fullmatch=True),
    st.from_regex(r'[a-z_]{1,4}="[a-z →]{0,6}"', fullmatch=True),
    st.from_regex(r'"[a-z →=]{0,6}"', fullmatch=True),
    st.from_regex(r"\[[a-z, ]{0,6}\]", fullmatch=True),
    st.from_regex(r"[a-z0-9/.:-]{1,6}", fullmatch=True),
)


@settings(max_examples=300)
@given(st.lists(ITEM, min_size=1, max_size=6))
def test_scanner_agrees_with_the_items_rule(items: list[str]) -> None:
    text = " " + " ".join(items)
    tree = plain_parser().parse(text, start="items")
    kinds = [t.type for t in tree.children if t.type != "ITEM_WS"]
    scan = scan_items(text, 1)
    assert [t for t in kinds if t == "FIELD"] == ["FIELD"] * len(scan.fields)
    assert len(kinds) == len(scan.fields) + len(scan.args)


RESULT_HEADS = {
    "[ok]": "ok",
    "[skip]": "skip",
    "[pending]": "pending",
    "[running]": "running",
    "[started]": "started",
    "[launched]": "launched",
    "[loaded]": "loaded",
    "[auto]": "auto",
    "[186 lines]": "count",
    "[4]": "count",
    "[err: permission denied]": "error",
    "[error]": "error",
    "[retry 2/3]": "retry",
    "[selected: OAuth, API]": "selected",
    '[auto: OAuth, reason="existing infra"]': "auto_choice",
    "[redacted:api_key]": "redacted",
    "@blob sha256=ab12cd34ef bytes=12 mime=text/plain": "blob",
}


@pytest.mark.parametrize("head, kind", RESULT_HEADS.items())
@pytest.mark.parametrize("tail", ["", " 128 tests passed"])
def test_result_classifier_agrees_with_the_result_rule(head: str, kind: str, tail: str) -> None:
    text = " " + head + tail
    tree = plain_parser().parse(text, start="result")
    # A status word is a `start_status`/`final_status` subtree; the other heads are tokens.
    types = [t.data if hasattr(t, "data") else t.type for t in tree.children]
    assert classify_result(text, 1, 1, []).kind == kind
    assert any(str(t).startswith(("R_", "start_status", "final_status")) for t in types)


@pytest.mark.parametrize(
    "text, kind", [("", "empty"), ("  ", "empty"), (" a=1 b=2", "fields"), (" done", "text")]
)
def test_results_without_a_head(text: str, kind: str) -> None:
    fields = scan_items(text, 1, after_arrow=True, free_text=True, want_args=False).fields
    assert classify_result(text, 1, 1, fields).kind == kind
