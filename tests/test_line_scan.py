"""The one anchored line scan against the LALR driver (the reference path): equal nodes,
equal diagnostics.

``bbox_lark.syntax.scan.line_scanner`` reads the common line shapes in one regex composed of the
grammar's own terminals; a line it does not take goes to the LALR driver. Every line of the
corpus, the external real logs (when present), the generated benchmark session, the
fuzzer's generators (a fixed seed) and the grammar's Hypothesis strategies is read both
ways: the scan either declines it or gives the very node the driver gives (``==`` on the
frozen nodes: every value, position, field node, result part and quote fault), and whole
documents give the same nodes and the same diagnostics with the scan on and off.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import fuzz
import fuzzgen
import pytest
from hypothesis import example, given
from printer_support import any_lines, documents, external_files, fuzz_settings, golden_files
from test_bench_tool import bench

import bbox_lark
from bbox_lark.syntax import parser
from bbox_lark.syntax.grammar import vocabulary
from bbox_lark.syntax.scan import LINE_SCAN_MAX, classify_result, scan_item_loop, scan_items
from bbox_lark.syntax.shape import build_line, read_result, scanned_line
from bbox_lark.syntax.source import LineReader

#: Lines the quote and arrow rules make interesting (docs/reference.md#quotes).
TRICKY = [
    "",
    " ",
    "\t",
    "  continued",
    "\t-> x",
    't:read "a → b" → [ok]',
    't:read "a -> b" -> [ok]',
    "t:read a->b → [ok]",
    "t:read a ->b",
    "t:read a -> ",
    "t:read a ->",
    "t:read a\u00a0-> b",
    "u: a -> b",
    "u: a → b",
    'u: "quoted → arrow" → [ok]',
    'a: x"y → z" → [ok]',
    'o: id=1 → [ok] "unclosed',
    'o: id=1 → [ok] x="a # metrics b" # metrics step=3',
    "o: id=1 # metrics step=3",
    "o: id=1 #metrics step=3",
    "t: read a.rs",
    't: "read a.rs" → [ok]',
    't: "read',
    "m: auto",
    "m:",
    "m:   ",
    "@start id=s",
    "@startup x",
    "@wait-approval",
    "@",
    "@1",
    "t:",
    "t:→",
    "t:x→y",
    "th:",
    "th: x → y # metrics",
    "# metrics step=1",
    "tool: read",
    "t!:test span=t1 → [running]",
    't~:test span=t1 "[64/128 passed]"',
    'q: id=q_1 "Keep?" options=["yes", "no"] → [pending]',
    'c:github.issues q="login bug" state=open → [2 issues]',
    "t:read \x00 → [ok]",
    "t:read a\r",
    "t:read\u2028a → [ok]",
    "s:x → @blob sha256=ab bytes=3 mime=text/plain tail=1",
    "t:x a=b=c 1a=b a-b=c d= e.f= _=1 =x x= ==",
    "t:x a\u00a0b=c k=\u3000v w\x0bz=1 \x1cq=2",
    "a: so k=v and x!=y or é=1 → [ok] n=1 m==2",
    "o: id=1 → k=v k=w",
    "o: id=1 → [ok]k=v",
    "o: id=1 → [3 a[b] k=v",
    'o: id=1 → [auto: yes, reason="a]b"] k=v',
    "o: id=1 → [ok] [a k=v] j=1",
    "o: id=1 → [redacted:key] k=[redacted:x]",
    "o: → k=v",
    "o: →k=v [ok]",
    'o: → [ok]"k=v" j="a b" "q',
    'o: → [ok]"x y=1" [1 line] k=[a, "b"]',
]


def reference_node(raw: str) -> bbox_lark.Line:
    return build_line(parser.line_driver().parse(raw), raw, 7, "\n")


def assert_same_items(raw: str) -> None:
    """:func:`scan_items` (with its shortcut for text that holds no ``=``, quote or bracket)
    and the item loop agree on the line and on each of its words."""
    for text in (raw, *raw.split(" ")):
        for after_arrow, free_text, want_args in (
            (False, False, True),
            (True, True, False),
            (False, True, False),
        ):
            options = {"after_arrow": after_arrow, "free_text": free_text, "want_args": want_args}
            assert scan_items(text, 3, **options) == scan_item_loop(text, 3, **options), text


def assert_same_result(raw: str) -> None:
    """At every arrow of ``raw``: the result's items read after its head (:func:`read_result`)
    are those of the item scan over the whole result text."""
    for at in range(len(raw)):
        if raw[at] == "→" or raw.startswith(" ->", at):
            after = raw[at + 1 :] if raw[at] == "→" else raw[at + 3 :]
            fields, faults = [], []
            if "=" in after:
                scan = scan_items(after, 5, after_arrow=True, free_text=True, want_args=False)
                fields, faults = scan.fields, scan.faults
            result = classify_result(after, 5, 7, fields)
            if result.kind == "blob":
                fields = [f for f in fields if f.col >= result.col + len(result.head)]
            assert read_result(after, 5, 7) == (result, fields, faults), raw


def assert_same_line(raw: str) -> bool:
    """True when the scan took the line (and gave the driver's node); the item and result
    scans agree on it."""
    assert_same_items(raw)
    assert_same_result(raw)
    scanned = scanned_line(raw, 7, "\n")
    if scanned is None:
        return False
    expected = reference_node(raw)
    assert type(scanned) is type(expected), raw
    assert scanned == expected, raw
    return True


def body_lines(data: str | bytes) -> Iterator[str]:
    for raw, _eol, oversized in LineReader().lines(data):
        if not oversized:
            yield raw


def both_paths(data: str | bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole-document nodes and diagnostics are the same with the scan on and off."""
    fast_nodes = list(bbox_lark.iter_nodes(data))
    fast_attached = list(bbox_lark.iter_nodes(data, attach=False))
    fast_check = bbox_lark.check(data)
    with monkeypatch.context() as patch:
        patch.setattr(parser, "LINE_SCAN", False)
        assert list(bbox_lark.iter_nodes(data)) == fast_nodes
        assert list(bbox_lark.iter_nodes(data, attach=False)) == fast_attached
        assert bbox_lark.check(data) == fast_check


@pytest.mark.parametrize("raw", TRICKY)
def test_tricky_lines(raw: str) -> None:
    assert_same_line(raw)


def test_the_scan_takes_the_common_shapes() -> None:
    taken = [raw for raw in TRICKY if scanned_line(raw, 1, "") is not None]
    assert "t!:test span=t1 → [running]" in taken
    assert "u: a -> b" in taken and "@start id=s" in taken and "  continued" in taken and "" in taken
    assert "# metrics step=1" not in taken and "tool: read" not in taken  # the driver reads these


def test_the_switch_forces_the_reference_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    driver = parser.line_driver()
    original = type(driver).parse

    def counting(self: parser.LineDriver, text: str) -> parser.Parts:
        calls.append(text)
        return original(self, text)

    monkeypatch.setattr(parser.LineDriver, "parse", counting)
    bbox_lark.parse("t:read a.rs → [ok]\n")
    assert calls == []
    monkeypatch.setattr(parser, "LINE_SCAN", False)
    bbox_lark.parse("t:read a.rs → [ok]\n")
    assert calls == ["t:read a.rs → [ok]"]


def test_golden_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = total = 0
    for path in golden_files():
        data = path.read_bytes()
        for raw in body_lines(data):
            total += 1
            taken += assert_same_line(raw)
        both_paths(data, monkeypatch)
    assert total > 1000 and taken > total // 4  # header lines and comments are many here


@pytest.mark.skipif(not external_files(), reason="../shared/corpus-external is absent")
def test_external_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = total = 0
    for path in external_files():
        data = path.read_bytes()
        for raw in body_lines(data):
            total += 1
            taken += assert_same_line(raw)
        both_paths(data, monkeypatch)
    assert taken > total * 9 // 10  # the real logs are the common shapes


def test_generated_session(monkeypatch: pytest.MonkeyPatch) -> None:
    text = bench.generate_session(3000)
    lines = list(body_lines(text))
    taken = sum(assert_same_line(raw) for raw in lines)
    assert taken > len(lines) * 9 // 10
    both_paths(text, monkeypatch)


@pytest.mark.parametrize("name", sorted(fuzzgen.GENERATORS))
def test_fuzzer_inputs(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pool = fuzzgen.Pool.load(fuzzgen.default_folders())
    for index in range(25):
        data = fuzz.generate(name, 21, index, pool, 4096)
        for raw in body_lines(data):
            assert_same_line(raw)
        both_paths(data, monkeypatch)


def test_random_grammar_pieces() -> None:
    """Lines glued from the grammar's pieces, with many quotes and arrows (seeded)."""
    rng = random.Random(5)
    prefixes = [*(f"{p}:" for p in vocabulary().prefix_kinds), "@start", "@x", "#", "  ", ""]
    pieces = [
        " ",
        "  ",
        "\t",
        '"',
        "\\",
        "→",
        "->",
        " -> ",
        "=",
        "[",
        "]",
        ",",
        "x",
        "id=1",
        " # metrics",
        "#",
    ]
    pieces += ["\u00a0", "ab", '"a b"', "[a, b]", "k=v", 'k="v w"', "[ok]", "step=2", "\r"]
    for _ in range(3000):
        raw = rng.choice(prefixes) + rng.choice(["", "name", " name"])
        raw += "".join(rng.choice(pieces) for _ in range(rng.randrange(12)))
        assert_same_line(raw)


def test_long_lines_go_to_the_driver() -> None:
    raw = "t:read " + "x" * LINE_SCAN_MAX + " → [ok]"
    assert scanned_line(raw, 7, "\n") is None
    assert bbox_lark.parse("\n" * 6 + raw + "\n").lines[6] == reference_node(raw)


@fuzz_settings(400)
@given(any_lines())
@example('t:x "a → b" -> c')
def test_grammar_lines(raw: str) -> None:
    assert_same_line(raw)


@fuzz_settings(60)
@given(documents())
def test_documents(text: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        both_paths(text, monkeypatch)


def test_nodes_are_made_by_position_and_the_same_by_keyword(monkeypatch: pytest.MonkeyPatch) -> None:
    from bbox_lark.syntax import shape

    assert shape._positional()  # the node classes have the fields event_node passes in order
    by_position = [scanned_line(raw, 3, "\n") for raw in TRICKY]
    monkeypatch.setattr(shape, "_positional", lambda: False)
    assert [scanned_line(raw, 3, "\n") for raw in TRICKY] == by_position


def test_event_nodes_are_made_by_position() -> None:
    """The fast way to make an event node (by position) holds while the node classes have
    the fields it passes; a field added to ``Event`` must be added there too (it silently
    fell back to keywords when ``emitted`` was added)."""
    from bbox_lark.syntax.shape import _positional

    assert _positional()
