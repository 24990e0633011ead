"""Any text survives a writer (DECISIONS §12; docs/reference.md "Any text").

Every Python string, given as a message, a positional argument, a field value, a result or
an error message, is built into a node, printed, parsed and read back exactly through
``text_of`` (or ``args``/``fields``); the document it makes has no error or warning, and
``fmt`` leaves it as it is. The corpus differential (every existing file reads as before)
is in ``test_any_text_corpus``.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st
from printer_support import ROOT, external_files, fuzz_settings, golden_files

from bbox_lark import build, check, emit, parse
from bbox_lark.syntax.printer import format_document
from bbox_lark.syntax.text import text_of

HEADER = "---\nformat: bbox/1\nid: any-text\nrepo_sha: 215db51\n---\n"

#: The texts DECISIONS §12 and issue 18 name, each an explicit example.
HARD = [
    "Looking now.",
    "line one\nline two",
    "para\n\nafter a blank line",
    "cr\rin the middle",
    "crlf\r\n",
    "\r",
    "sep\u2028and\u2029and\u0085",
    "nul\x00and\x07bell\x1b[31m",
    "lone \ud800 surrogate \udcff",
    "map a → b",
    "map a -> b",
    " -> ",
    "key=value",
    "set x=1 and y=2 now",
    "API_KEY=[redacted:env_var]",
    "[redacted:anthropic_key]",
    "a # metrics step=3",
    "# metrics step=3",
    "[ok]",
    "[ok] 128 tests passed",
    "[3 lines]",
    "[err: boom]",
    "list index [3] out of range",
    "  leading and trailing  ",
    "\t",
    "",
    " ",
    'unbalanced "quote',
    '"fully quoted"',
    '"',
    "[ ( { unbalanced",
    "]",
    "@blob sha256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 bytes=4",
    "\\u{41} is not an A",
    'back\\slash \\n \\t \\"',
    "---",
    "#203 and issue # 5",
    "tab\there",
    "\u00a0no-break spaces\u00a0",
    "ünïcödé 🎉",
]

texts = st.text(
    alphabet=st.one_of(
        st.characters(codec=None),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
        st.characters(max_codepoint=0x9F),  # control characters
        st.sampled_from(["\n", "\r", "\u2028", "\x00", "→", "=", '"', "[", "]", " ", "#", "@", "\\"]),
    )
) | st.sampled_from(HARD)


def _document(*nodes: object) -> str:
    return HEADER + "\n".join(emit(node) for node in nodes) + "\n"  # type: ignore[arg-type]


def _clean(text: str) -> None:
    """No error or warning (``check --strict`` passes) and ``fmt`` changes nothing."""
    found = [d for d in check(text) if d.severity != "info"]
    assert found == [], found
    assert format_document(parse(text)) == text


def _with_examples(test):  # type: ignore[no-untyped-def]
    for text in HARD:
        test = example(text)(test)
    return test


@fuzz_settings(300)
@_with_examples
@given(texts)
def test_a_message_reads_back_exactly(text: str) -> None:
    nodes = [build.message(kind, text, fields={"step": 3}, exact=True) for kind in ("u", "a", "th", "td")]
    document = _document(*nodes)
    events = parse(document).events
    assert [text_of(e) for e in events] == [text] * 4
    assert all(e.fields == {"step": "3"} for e in events)
    _clean(document)


@fuzz_settings(300)
@_with_examples
@given(texts)
def test_arguments_fields_and_results_read_back_exactly(text: str) -> None:
    call = build.call(
        "tool",
        "bash",
        [text, [text, "b"]],
        fields={"id": "c1", "cmd": text},
        result=build.result("text", text=text),
    )
    error = build.observation(fields={"id": "c2"}, result=build.result("error", message=text or "x"))
    started = build.call("tool", "grep", [text], fields={"id": "c2"}, result=build.result("running"))
    rest = build.call("tool", "test", fields={"id": "c3"}, result=build.result("ok", rest=text))
    document = _document(call, started, error, rest)
    first, _, observed, last = parse(document).events
    assert first.args == (text, (text, "b"))
    assert first.fields == {"id": "c1", "cmd": text}
    assert first.result is not None and text_of(first.result) == text
    assert observed.result is not None and text_of(observed.result) == (text or "x")
    assert last.result is not None and last.result.kind == "ok" and text_of(last.result) == text
    _clean(document)


def test_text_a_line_can_carry_stays_as_written() -> None:
    assert (
        emit(build.message("a", "Looking now.", fields={"step": 3}, exact=True)) == "a: Looking now. step=3"
    )
    assert emit(build.message("a", "see #203", exact=True)) == "a: see #203"
    assert emit(build.call("tool", "read", ["src/a.rs"], result=build.result("text", text="done"))) == (
        "t:read src/a.rs → done"
    )
    assert build.result("error", message="timeout").text == "[err: timeout]"


def test_text_a_line_cannot_carry_is_written_text() -> None:
    assert emit(build.message("a", "one\ntwo", exact=True)) == 'a: "one\\ntwo"'
    assert emit(build.message("u", "map a → b", exact=True)) == 'u: "map a → b"'
    assert emit(build.message("u", "x=1", exact=True)) == 'u: "x=1"'
    assert emit(build.message("th", "nul\x00 cr\r", exact=True)) == 'th: "nul\\u{0} cr\\u{d}"'
    assert build.result("text", text="[ok]").text == '"[ok]"'
    assert build.result("error", message="list index [3] out of range").text == (
        '[error] "list index [3] out of range"'
    )


def test_by_default_a_message_text_may_hold_fields() -> None:
    node = build.message("u", "Fix it step=2")
    assert emit(node) == "u: Fix it step=2"
    assert node.fields == {"step": "2"}
    assert text_of(node) == "Fix it"


def test_text_of_reads_existing_lines() -> None:
    doc = parse(
        HEADER + "u: Fix the login bug. It fails twice. step=2\n"
        "a: I'll look at auth step=3 ts=2025-01-01T00:00:00Z\n"
        "t:test → [ok] 128 tests passed\n"
        "t:read → [err: no such file]\n"
        "t:read → some text\n"
        "# a comment\n"
    )
    texts = [text_of(e) if e.result is None else text_of(e.result) for e in doc.events]
    assert texts == [
        "Fix the login bug. It fails twice.",
        "I'll look at auth",
        "128 tests passed",
        "no such file",
        "some text",
        "a comment",
    ]


#: Pages whose examples show the written form on purpose.
WRITTEN_FORM_PAGES = {"reference.md", "writing.md"}


def _markdown_examples(*, written_form: bool = False) -> list[str]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    blocks = []
    for page in pages:
        if (page.name in WRITTEN_FORM_PAGES) == written_form:
            blocks += re.findall(r"```bbox\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    return blocks


def test_no_existing_file_reads_differently() -> None:
    """The written form changes how one thing reads: ``\\u{HEX}`` inside a quoted string,
    which was kept as written before. No corpus file, real log, docs example or fixture holds
    it, so every one of them parses to the same nodes as before (measured once against the
    previous parser over 305 files and 32,906 lines: identical node values and findings)."""
    texts = [p.read_bytes().decode("utf-8", "surrogateescape") for p in golden_files() + external_files()]
    texts += _markdown_examples()
    assert len(texts) > 100
    assert [t for t in texts if "\\u{" in t] == []


def test_the_reference_example_is_clean_and_reads_back() -> None:
    block = next(b for b in _markdown_examples(written_form=True) if "Two lines" in b)
    document = HEADER + block
    _clean(document)
    events = parse(document).events
    assert text_of(events[1]) == "Two lines:\nthe second."
    assert events[4].args == ("printf 'a\rb'",)
    assert events[4].result is not None and text_of(events[4].result) == "[ok] is the program's output here"
    assert events[5].result is not None and text_of(events[5].result) == "list index [3] out of range"


def test_a_long_text_with_an_arrow_builds() -> None:
    """The builder decides by reading its line back, never by matching the whole text with
    FREE_TEXT, whose pattern backtracks exponentially on a text it does not match."""
    text = "word " * 5000 + "→ then # metrics x=1"
    node = parse(HEADER + emit(build.message("th", text, exact=True)) + "\n").events[0]
    assert text_of(node) == text
