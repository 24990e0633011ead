"""The Pygments lexer: driven by the grammar's own terminals, lossless, no error tokens on
valid files, found by Pygments under its aliases and file patterns."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pygments")

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Error, Keyword, Name, Number, Operator, String, Token

from bbox_lark.syntax import pygments_lexer
from bbox_lark.syntax.grammar import STARTS
from bbox_lark.syntax.pygments_lexer import TOKENS, BboxLexer, Lead, Split, Sub, grammar_terminals

REPO = Path(__file__).resolve().parent.parent
VALID = sorted((REPO / "corpus" / "valid").glob("*.bbox"))
INVALID = sorted((REPO / "corpus" / "invalid").glob("*.bbox"))


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "surrogateescape")


def lex(text: str) -> list[tuple[int, object, str]]:
    return list(BboxLexer().get_tokens_unprocessed(text))


def assert_lossless(text: str, tokens: list[tuple[int, object, str]]) -> None:
    assert "".join(value for _, _, value in tokens) == text
    offset = 0
    for index, _, value in tokens:
        assert index == offset
        assert value, "empty token"
        offset += len(value)


# -- the table ---------------------------------------------------------------------------


def test_table_maps_every_terminal_of_the_grammar() -> None:
    missing = sorted(grammar_terminals() - set(TOKENS))
    assert not missing, (
        f"grammar/bbox.lark has terminals the lexer does not map: {missing}; add them to"
        " TOKENS in bbox_lark/syntax/pygments_lexer.py (one line each)"
    )


def test_table_names_no_terminal_the_grammar_lacks() -> None:
    stale = sorted(set(TOKENS) - grammar_terminals())
    assert not stale, (
        f"TOKENS in bbox_lark/syntax/pygments_lexer.py names terminals grammar/bbox.lark no longer has:"
        f" {stale}; rename or remove those lines"
    )


def test_table_start_rules_exist() -> None:
    starts = {pygments_lexer.LINE_START, pygments_lexer.FENCE_START}
    for spec in TOKENS.values():
        while isinstance(spec, Split | Lead):
            spec = spec.tail
        if isinstance(spec, Sub):
            starts.add(spec.start)
    assert starts <= set(STARTS)


# -- corpus ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_file_lexes_without_errors(path: Path) -> None:
    text = read(path)
    tokens = lex(text)
    assert_lossless(text, tokens)
    errors = [(index, value) for index, kind, value in tokens if kind in Error]
    assert not errors
    # Through Pygments' own front door too (it drops the BOM and normalises line endings).
    assert not [value for kind, value in BboxLexer().get_tokens(text) if kind in Error]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_file_is_still_lexed_losslessly(path: Path) -> None:
    text = read(path)
    assert_lossless(text, lex(text))


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('tuao!~:@#-→> "=[],\\\n\r\tk1x.'))))
def test_any_text_is_lexed_losslessly(text: str) -> None:
    assert_lossless(text, lex(text))


# -- token types -------------------------------------------------------------------------


def kinds(line: str) -> list[tuple[object, str]]:
    return [(kind, value) for _, kind, value in lex(line) if value.strip()]


def test_a_tool_call() -> None:
    assert kinds('t:read id=c1 "a b.rs" → [186 lines]') == [
        (Keyword, "t:"),
        (Name.Function, "read"),
        (Name.Attribute, "id"),
        (Operator, "="),
        (String, "c1"),
        (String.Double, '"a b.rs"'),
        (Operator, "→"),
        (Number, "[186 lines]"),
    ]


def test_lines_of_every_kind() -> None:
    text = (
        "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\n"
        "@start id=s\nu: hello\nm: auto\nt!:test span=t1 → [running]\n"
        "o: id=t1 → [err: boom]\n# metrics step=1\n  continued\n"
    )
    found = dict((value, kind) for kind, value in kinds(text))
    assert found["---"] is Token.Comment.Preproc
    assert found["format"] is Name.Tag  # the header's YAML, by Pygments' YAML lexer
    assert found["@start"] is Name.Decorator
    assert found["u:"] is Keyword
    assert found["auto"] is Name.Constant
    assert found["t!:"] is Keyword
    assert found["[running]"] is Name.Constant
    assert found["[err: boom]"] is Name.Exception
    assert found["metrics"] is Token.Comment.Special
    assert found["  continued"] is Token.Text


def test_crlf_and_bom_are_kept() -> None:
    text = "\ufeff---\r\nformat: bbox/1\r\nid: s\r\nrepo_sha: 215db51\r\n---\r\nu: hi\r\n"
    tokens = lex(text)
    assert_lossless(text, tokens)
    assert not [value for _, kind, value in tokens if kind in Error]


# -- Pygments finds it -------------------------------------------------------------------


@pytest.mark.parametrize("alias", ["bbox", "blackbox", "rlog"])
def test_found_by_alias(alias: str) -> None:
    assert isinstance(get_lexer_by_name(alias), BboxLexer)


@pytest.mark.parametrize("name", ["session.bbox", "session.blackbox", "session.rlog"])
def test_found_by_file_name(name: str) -> None:
    assert isinstance(get_lexer_for_filename(name), BboxLexer)


def test_highlight_to_html() -> None:
    html = highlight("t:read a.rs → [ok]\n", get_lexer_by_name("bbox"), HtmlFormatter())
    assert '<span class="nf">read</span>' in html
    assert '<span class="no">[ok]</span>' in html


def test_package_import_does_not_load_pygments() -> None:
    code = "import sys, bbox_lark, bbox_lark.cli; sys.exit('pygments' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
