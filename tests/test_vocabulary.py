"""The grammar names the whole language, and only the grammar does.

``bbox_lark.syntax.grammar.vocabulary()`` derives every word set from ``grammar/bbox.lark``; these
tests pin what it derives to DECISIONS (§3-§5, §8, §10) and fail when a module of the
package writes one of those sets again instead of asking the grammar.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import bbox_lark
from bbox_lark.syntax.grammar import opens_string, vocabulary

PACKAGE = Path(bbox_lark.__file__).resolve().parent
HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\nrunner: local\n---\n"

V = vocabulary()


def test_prefixes_and_line_kinds_are_the_decisions() -> None:
    assert V.prefix_kinds == {
        "u": "user",
        "a": "agent",
        "t": "tool",
        "t!": "tool_start",
        "t~": "tool_progress",
        "o": "observation",
        "s": "skill",
        "p": "plan",
        "m": "mode",
        "r": "recall",
        "x": "subagent",
        "c": "mcp",
        "q": "question",
        "th": "thinking",
        "td": "todos",
    }
    assert V.named_prefixes == {"t", "t!", "t~", "s", "p", "x", "c", "m"}
    assert V.free_text_prefixes == {"u", "a", "th", "td"}
    assert V.event_kinds == (*V.prefix_kinds.values(), "comment", "lifecycle", "unknown")


def test_lifecycle_phases_comments_results_levels() -> None:
    assert V.primitives == set(
        [
            "start",
            "checkpoint",
            "pause",
            "resume",
            "end",
            "assess",
            "notify",
            "wait",
            "wait-approval",
            "escalate",
            "batch",
            "snapshot",
            "rotate",
            "compact",
            "phase",
            "init",
        ]
    )
    assert V.phases == ("explore", "design", "review", "final", "exit")
    assert set(V.comment_kinds.values()) == set(
        [
            "elapsed",
            "metrics",
            "budget",
            "notes",
            "model",
            "condense",
            "anchor",
            "memory",
            "redactions",
            "file-snapshot",
            "queue",
            "summary",
        ]
    )
    assert V.start_statuses == {"running", "pending", "started", "launched"}
    assert V.final_statuses == {"ok", "skip", "loaded", "auto"}
    assert set(V.result_kinds) == set(
        [
            "ok",
            "skip",
            "pending",
            "running",
            "started",
            "launched",
            "loaded",
            "auto",
            "count",
            "error",
            "retry",
            "selected",
            "auto_choice",
            "blob",
            "fields",
            "redacted",
            "text",
            "empty",
        ]
    )
    assert V.levels == ("debug", "info", "warn", "error")
    assert V.step_reference_comments == {"metrics", "anchor"}
    assert V.field_comment_kinds == {"elapsed", "redactions", "summary"}


@pytest.mark.parametrize(
    ("key", "good", "bad"),
    [
        ("step", "12", "twelve"),
        ("latency_ms", "340", "3.4"),
        ("ts", "2025-12-18T03:21:08Z", "2025-12-18T03:21:08"),
        ("attempt", "2/3", "2 of 3"),
        ("level", "warn", "warning"),
        ("id", "call_1", ""),
        ("span", "t1", ""),
    ],
)
def test_typed_field_syntax_comes_from_the_grammar(key: str, good: str, bad: str) -> None:
    pattern = V.typed_fields[key]
    assert pattern.fullmatch(good)
    assert not pattern.fullmatch(bad)


def test_whitespace_is_one_class() -> None:
    # The grammar's `\s` is `str.isspace` for every code point, and the quote-opening rule
    # uses the same class: a no-break space opens a quote like a space (DECISIONS §11).
    every = [chr(i) for i in range(0x110000) if not 0xD800 <= i < 0xE000]
    assert {c for c in every if re.fullmatch(r"\s", c)} == {c for c in every if c.isspace()}
    for space in (" ", "\t", "\u00a0", "\u2028", "\x1c"):
        assert opens_string(f"a{space}", 2)
    assert opens_string('"', 0)
    assert not opens_string('a"', 1)


@pytest.mark.parametrize(
    ("line", "kind", "name"),
    [
        ("@start id=s", "lifecycle", "start"),
        ("@wait-approval", "lifecycle", "wait-approval"),
        ("@startup now", "lifecycle", "startup"),
        ("@wait", "lifecycle", "wait"),
        ("t~:test span=t1", "tool_progress", "test"),
        ("th: hmm", "thinking", None),
        ("td: [pending] x", "todos", None),
        ("m:  auto", "mode", "auto"),
    ],
)
def test_heads_are_named_by_the_grammar(line: str, kind: str, name: str | None) -> None:
    event = bbox_lark.parse(HEADER + line + "\n").events[0]
    assert (event.kind, event.name) == (kind, name)


def test_an_unknown_primitive_is_its_own_alternative() -> None:
    found = [(d.code, d.line) for d in bbox_lark.check(HEADER + "@startup now\n@start\n@end\n")]
    assert found == [("W021", 7)]


# -- nothing restates a vocabulary ---------------------------------------------------------

#: The word sets a module must ask the grammar for instead of writing down.
VOCABULARIES: dict[str, frozenset[str]] = {
    "prefixes": frozenset(V.prefix_kinds),
    "primitives": frozenset(V.primitives),
    "phases": frozenset(V.phases),
    "comment kinds": frozenset(V.comment_kinds.values()),
    "status words": V.start_statuses | V.final_statuses,
    "levels": frozenset(V.levels),
    "typed fields": frozenset(V.typed_fields),
}

#: Deliberate subsets, each a documented choice rather than a copy of the grammar's list.
ALLOWED = {
    # The lossy compact form drops correlation ids and timing (docs/formats/compact.md).
    ("convert/compact.py", "typed fields"),
    # The comments that state the redaction count (scan.states_redaction_count).
    ("syntax/scan.py", "comment kinds"),
    # Header keys (`budget:`, `model:`, `notes:`), which only share names with comment kinds.
    ("checks/header.py", "comment kinds"),
    # The two fields a call key is read from (DECISIONS §6, §9), in order: one definition.
    ("syntax/correlate.py", "typed fields"),
    # The call outcomes of DECISIONS §12 (`ok error pending skipped retry unknown`): a
    # vocabulary of their own, which shares `ok` and `pending` with the result statuses.
    ("numbers/outcomes.py", "status words"),
    # The fields a snapshot masks as ids (docs/writing.md, "Testing"): a documented choice.
    ("testing.py", "typed fields"),
    # Which start status the Writer writes for a call still open (a subagent is `launched`, a
    # question `pending`, docs/writing.md): a choice per family, not a restated vocabulary.
    ("write/writer.py", "status words"),
    # The fields left out of a call's key when the review compares repeats (docs/report.md).
    ("numbers/review.py", "typed fields"),
}
#: Words a vocabulary shares with ordinary ones (severities are `error warning info`): a
#: collection counts for that vocabulary only when it also holds one of its own words.
OWN_WORDS = {"levels": frozenset({"debug", "warn"})}


def restatements(path: Path) -> list[str]:
    """Collection literals in ``path`` holding two or more words of one vocabulary (at
    least one of them longer than a letter, so `("a", "b")` is not taken for prefixes)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Set | ast.List | ast.Tuple):
            items = node.elts
        elif isinstance(node, ast.Dict) and all(isinstance(value, ast.Constant) for value in node.values):
            # A table (`{"t!": "tool_start", ...}`), not a JSON object being built: its keys and
            # its values.
            items = [key for key in node.keys if key is not None] + list(node.values)
        else:
            continue
        words = {
            item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)
        }
        relative = path.relative_to(PACKAGE).as_posix()
        for name, vocabulary_words in VOCABULARIES.items():
            shared = words & vocabulary_words
            own = OWN_WORDS.get(name, vocabulary_words)
            if (
                len(shared) >= 2
                and any(len(w) > 1 for w in shared)
                and shared & own
                and (relative, name) not in ALLOWED
            ):
                found.append(f"{relative}:{node.lineno}: {name} {sorted(shared)}")
    return found


def test_no_module_restates_a_vocabulary() -> None:
    modules = [p for p in sorted(PACKAGE.rglob("*.py")) if p.name != "grammar.py"]
    assert len(modules) > 20
    assert [line for path in modules for line in restatements(path)] == []


def restated_prefixes(path: Path) -> list[str]:
    """Tables in ``path`` that pair two or more line kinds with their prefixes (a converter's
    ``{"subagent": "x", "mcp": "c"}``, either way round): the grammar's prefix table again,
    which single-letter words alone would not show."""
    kinds = {kind: prefix for prefix, kind in V.prefix_kinds.items()}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Dict):
            continue
        pairs = [
            (key.value, value.value)
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and isinstance(value, ast.Constant)
        ]
        same = [(k, v) for k, v in pairs if kinds.get(k) == v or V.prefix_kinds.get(k) == v]
        if len(same) >= 2:
            found.append(f"{path.relative_to(PACKAGE).as_posix()}:{node.lineno}: prefix table {sorted(same)}")
    return found


def test_no_table_restates_the_prefixes_of_line_kinds() -> None:
    modules = [p for p in sorted(PACKAGE.rglob("*.py")) if p.name != "grammar.py"]
    assert [line for path in modules for line in restated_prefixes(path)] == []


def test_the_prefix_table_test_can_fail() -> None:
    copy = PACKAGE / "_restated_for_test.py"
    copy.write_text('KINDS = {"subagent": "x", "mcp": "c"}\nBACK = {"x": "subagent", "c": "mcp"}\n')
    try:
        assert len(restated_prefixes(copy)) == 2
    finally:
        copy.unlink()


def test_the_restatement_test_can_fail(tmp_path: Path) -> None:
    copy = PACKAGE / "_restated_for_test.py"
    copy.write_text('NAMED = frozenset({"t", "t!", "t~"})\nLEVELS = ("debug", "info")\n')
    try:
        assert len(restatements(copy)) == 2
    finally:
        copy.unlink()


def test_the_grammar_module_imports_nothing_from_the_package() -> None:
    source = (PACKAGE / "syntax" / "grammar.py").read_text(encoding="utf-8")
    imports = [
        node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module is not None
    ]
    imports += [
        alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert imports and not [name for name in imports if name.startswith("bbox_lark")]


# -- the railroad page's examples ----------------------------------------------------------


def test_every_line_kind_has_an_example_that_parses_to_it() -> None:
    from bbox_lark.cli.docsgen import line_examples
    from bbox_lark.syntax.parser import parse_line

    examples = line_examples()
    assert set(examples) == {*V.event_kinds, "blank", "continuation"}
    for kind, text in examples.items():
        if text.startswith("("):  # described, not shown (a blank line)
            assert kind == "blank"
            continue
        assert parse_line(text).kind == kind, (kind, text)
        if kind not in ("unknown", "continuation"):
            # A lone line may open a call nothing closes; anything else would be a bad example.
            found = bbox_lark.check(HEADER + text + "\n")
            correlation = {c for c, info in bbox_lark.registry().items() if info.family == "correlation"}
            assert not [d for d in found if d.severity != "info" and d.code not in correlation], text
