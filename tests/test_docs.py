"""Generated documentation: ``docs/checks.md`` and ``docs/grammar.html`` are current, and
every code's section has all its parts (ruff style: what it does, why, example, use instead).

When this fails because the docs are stale, run ``.venv/bin/python tools/gen_docs.py``.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import bbox_lark
from bbox_lark.cli import docsgen
from bbox_lark.syntax.grammar import build_lark

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
REGISTRY = bbox_lark.registry()


def committed(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_checks_md_is_current() -> None:
    assert committed("checks.md") == docsgen.checks_markdown(), "stale: run tools/gen_docs.py"


def test_grammar_html_is_current() -> None:
    assert committed("grammar.html") == docsgen.grammar_html(), "stale: run tools/gen_docs.py"


def test_the_format_pages_docsgen_links_are_the_pages_of_docs_formats() -> None:
    assert {page.stem for page in (DOCS / "formats").glob("*.md")} == docsgen.FORMAT_PAGES


def test_converter_page_is_current_and_lists_every_format() -> None:
    from bbox_lark.convert import formats

    text = committed("convert.md")
    assert text == docsgen.convert_markdown(), "stale: run tools/gen_docs.py"
    for fmt in formats():
        assert f"## {fmt.name}\n" in text
        for option in fmt.options:
            assert f"`{option.flag}`" in text
        rows = (*fmt.export_mapping, *(fmt.import_mapping if fmt.name != "bbox" else ()))
        for row in rows:
            assert docsgen._cell(row.source) in text


def test_gen_docs_tool_agrees(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "tools" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main(["--check"]) == 0
    assert tool.main(["--check", "--out", str(tmp_path)]) == 1  # nothing there yet
    assert tool.main(["--out", str(tmp_path)]) == 0
    assert (tmp_path / "checks.md").read_text(encoding="utf-8") == committed("checks.md")
    assert tool.main(["--check", "--out", str(tmp_path)]) == 0


# -- checks.md --------------------------------------------------------------------------


def sections(text: str) -> dict[str, str]:
    """Code -> its section (from its ``## CODE name`` heading to the next one)."""
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    return {part.split(" ", 1)[0]: "## " + part for part in parts}


CHECKS_MD = committed("checks.md")
SECTIONS = sections(CHECKS_MD)


def test_every_code_has_a_section_and_nothing_else_does() -> None:
    assert list(SECTIONS) == list(REGISTRY)


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_section_has_every_part(code: str) -> None:
    info = REGISTRY[code]
    section = SECTIONS[code]
    assert section.startswith(f"## {code} {info.name}\n")
    assert f"**Severity:** {info.severity}" in section
    positions = [section.find(f"\n{part}\n") for part in docsgen.SECTION_PARTS]
    assert all(p > 0 for p in positions), f"{code}: missing {docsgen.SECTION_PARTS}"
    assert positions == sorted(positions), f"{code}: parts out of order"
    what, why, example, use_instead = (
        section[start:end] for start, end in zip(positions, [*positions[1:], len(section)], strict=True)
    )
    assert info.summary in what
    assert info.rationale in why
    if info.internal:  # no document triggers it: the page shows what is reported instead
        assert re.search(rf"```text\n.+: {code} .+\n```", example)
        return
    for part in (example, use_instead):
        block = re.search(r"```bbox\n(.+?)\n```", part, re.S)
        assert block is not None and block[1].strip(), f"{code}: an example is empty"
    # The table at the top links to the section.
    assert f"| [{code}](#{docsgen.anchor(info)}) | {info.name} | {info.severity} |" in CHECKS_MD


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_examples_are_shown_as_written(code: str) -> None:
    # Unless a line had to be escaped or shortened, the page shows the registry text itself.
    info = REGISTRY[code]
    if info.internal:
        assert info.bad in SECTIONS[code]
        return
    for text in (info.bad, info.good):
        lines = text.splitlines()
        if all(line.isprintable() and len(line) <= docsgen.LONG_LINE for line in lines):
            assert docsgen.show_example(text) + "\n" == text


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_section_shows_what_check_reports(code: str) -> None:
    info = REGISTRY[code]
    if info.internal:
        return
    for d in bbox_lark.check(info.bad):
        assert f"{d.line}:{d.col}: {d.code} " in SECTIONS[code]


def test_show_example_escapes_and_shortens() -> None:
    assert docsgen.show_example("a: caf\udce9\x00\n") == "a: caf\\xe9\\x00"
    assert docsgen.show_example("\ufeff---\n") == "\\ufeff---"
    assert docsgen.show_example("a:\tb\n") == "a:\tb"
    long = docsgen.show_example("a: " + "x" * 500 + "\n")
    assert long.startswith("a: xxx") and long.endswith("… (503 characters in all)")
    assert len(long) < docsgen.LONG_LINE


def test_find_check() -> None:
    assert docsgen.find_check("w003") is REGISTRY["W003"]
    assert docsgen.find_check("unknown-line") is REGISTRY["W003"]
    assert docsgen.find_check("W999") is None


# -- grammar.html -----------------------------------------------------------------------


def test_every_rule_and_terminal_has_a_diagram() -> None:
    grammar = build_lark(cached=False).grammar
    names = [str(name) for name, *_ in grammar.rule_defs] + [str(name) for name, _ in grammar.term_defs]
    page = committed("grammar.html")
    for name in names:
        kind = "t" if name.isupper() else "r"
        assert f'<section id="{kind}-{name}">' in page, name
    assert page.count('<svg class="railroad-diagram"') == len(names)


def test_diagram_links_resolve() -> None:
    page = committed("grammar.html")
    ids = set(re.findall(r'id="([^"]+)"', page))
    links = set(re.findall(r'href="#([^"]+)"', page))
    assert links and links <= ids


def test_diagrams_follow_the_grammar() -> None:
    # `line` offers every line kind; `call_tail` is three optional parts in a row.
    definitions = {d.name: d for d in docsgen.grammar_definitions()}
    line = docsgen.grammar_svg(definitions["line"])
    for alias in ("blank", "continuation", "comment", "lifecycle", "tool", "tool_start", "user", "unknown"):
        assert f"→ {alias}" in line
    tail = docsgen.grammar_svg(definitions["call_tail"])
    for terminal in ("CALL_TEXT", "RESULT", "METRICS"):
        assert f'href="#t-{terminal}"' in tail
    assert definitions["AT_OTHER"].comment.startswith("Any other `@name`.")
    assert definitions["line"].source.startswith("line: BLANK?")


def test_every_rule_the_code_cites_is_a_section_of_the_reference() -> None:
    import re

    reference = (DOCS / "reference.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r"^#+ .*\{#([a-z0-9-]+)\}$", reference, re.M))
    package = REPO / "bbox_lark"
    cited: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "DECISIONS" not in text, f"{path.name} cites a file outside the project (docs/reference.md)"
        for anchor in re.findall(r"docs/reference\.md#([a-z0-9-]+)", text):
            cited.setdefault(anchor, path.name)
    assert len(cited) >= 15
    missing = {anchor: where for anchor, where in cited.items() if anchor not in anchors}
    assert not missing, f"cited but not in docs/reference.md: {missing}"
