"""The header read with libyaml (``yaml.CSafeLoader``) means exactly what the pure parser reads.

``bbox_lark.syntax.header`` takes libyaml's event stream when PyYAML has it: its ``Mark.index`` must
count characters as the pure parser's does (``_Lines`` maps offsets to file lines), for
non-ASCII text and for the line breaks that bbox/1 treats as line content. Texts where the
two parsers differ take the pure parser; errors are always the pure parser's.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml

import bbox_lark
from bbox_lark.syntax import header

pytestmark = pytest.mark.skipif(header._C_LOADER is None, reason="PyYAML without libyaml")

HEADERS = [
    "format: bbox/1\nid: s\nrepo_sha: 215db51\n",
    "format: bbox/1\nid: sess_é\nrepo: acme/billing-app\nskills: [pricing-tiers, 😀]\n",
    "titre: « résumé »\n名前: 漢字テキスト\nemoji: 😀😀😀\nrepo_sha: 215db51\n",
    "id: 's\u2028\rx'\nrepo_sha: 215db51\nrunner: r\n",
    'note: "a\u2029b\u0085c"\nrepo_sha: 215db51\n',
    "note: plain\u2028folded\u0085text\nrepo_sha: 215db51\n",
    "note: one\rtwo\nrepo_sha: 215db51\n",
    "format: bbox/1\r\nid: s\r\nrepo_sha: 215db51\r\n",
    "é: 1\né: 2\nrepo_sha: 215db51\n",  # W026 at the second é
    "😀: &a 1\nb: *a\n",  # E008 after astral characters
    "k: [é, 😀, z]\nq: {a: 1, b: [x, y]}\nrepo_sha: 215db51\n",
    "list:\n  - é\n  - 😀\n  - k: v\nrepo_sha: 215db51\n",
    "é: 1\n---\nb: 2\n",  # a second document
    "- a\n- b\n",  # not a mapping
    "k: \ufffd\ufffd\nrepo_sha: 215db51\n",  # invalid bytes, as the parser hands them over
    'note: "unterminated\nrepo_sha: 215db51\n',
    "é: x\n  - bad: [\n",
    "k: [a, b\nrepo_sha: 215db51\n",
    "a: é\u0085b: 2\n",
    "é\u2028: 1\nk: 2\n",
    "k: \x07\n",
    "é: \x07\n",  # a reader error: libyaml would count bytes
    "k: ~\nz: null\ne:\n",
    "k: 'it''s'\nq: \"\\u00e9\\x41\\/\"\n",
]

#: Headers that libyaml reads differently: the pure parser must read them.
PURE_ONLY = [
    "é: \t1\n",  # libyaml accepts the tab
    "\ufeffa: 1\nb: 2\n",  # libyaml skips the U+FEFF: every offset one less
    "a: 1\n\ufeffb: 2\n",
    "k: !\n",  # implicit differs
    "a: >#\n",  # libyaml accepts
    "a: |#x\n  b\n",
    "k: {a ?}\n",
    "k: !!str 5\n",
    "k: \ud800\n",  # a lone surrogate: libyaml cannot even take it
]


def event_view(events: list[Any]) -> list[tuple[object, ...]]:
    return [
        (
            type(e).__name__,
            e.start_mark.index,
            e.end_mark.index,
            getattr(e, "value", None),
            getattr(e, "implicit", None),
            getattr(e, "tag", None),
            getattr(e, "anchor", None),
        )
        for e in events
    ]


def read(text: str, c_loader: Any) -> object:
    saved = header._C_LOADER
    header._C_LOADER = c_loader
    try:
        info = header.read_header(text, 2, 1, text.count("\n") + 2)
    finally:
        header._C_LOADER = saved
    return (info.fields, info.key_lines, info.null_keys, info.faults)


def pure_events(text: str) -> list[Any] | None:
    try:
        return list(yaml.parse(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return None


@pytest.mark.parametrize("text", HEADERS)
def test_libyaml_marks_count_characters_as_the_pure_parser_does(text: str) -> None:
    expected = pure_events(text)
    if expected is None:  # an error: both parsers fail, and the pure one says where
        with pytest.raises(yaml.YAMLError):
            list(yaml.parse(text, Loader=yaml.CSafeLoader))
        return
    assert not header._PURE_ONLY.search(text)
    assert event_view(list(yaml.parse(text, Loader=yaml.CSafeLoader))) == event_view(expected)


@pytest.mark.parametrize("text", HEADERS + PURE_ONLY)
def test_the_header_reads_the_same_with_or_without_libyaml(text: str) -> None:
    if "\ud800" in text:  # cannot be sized as UTF-8 either way; _events must not hand it on
        assert header._PURE_ONLY.search(text)
        return
    assert read(text, header._C_LOADER) == read(text, None)


@pytest.mark.parametrize("text", PURE_ONLY)
def test_texts_libyaml_reads_differently_take_the_pure_parser(text: str) -> None:
    assert header._PURE_ONLY.search(text)


def test_a_plain_header_is_read_by_libyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    loaders: list[object] = []
    real = yaml.parse

    def spy(stream: str, Loader: Any) -> Any:
        loaders.append(Loader)
        return real(stream, Loader=Loader)

    monkeypatch.setattr(yaml, "parse", spy)
    document = bbox_lark.parse("---\nformat: bbox/1\nid: sess_é\nrepo_sha: 215db51\nrunner: r\n---\nu: hi\n")
    assert loaders == [yaml.CSafeLoader]
    assert document.header == {"format": "bbox/1", "id": "sess_é", "repo_sha": "215db51", "runner": "r"}


PIECES = [
    *"ab:-[]{},#&*'\"%@`\\0~",
    "é",
    "😀",
    "漢",
    ": ",
    " ",
    "  ",
    "\n",
    "\n  ",
    "- ",
    " #",
    "&a ",
    "*a",
    "\r",
    "\r\n",
    "\u2028",
    "\u2029",
    "\x85",
    "...",
    "---",
    "null",
    "x: y\n",
    "k:\n  - v\n",
    '"\\u00e9"',
    "'a''b'",
    "\xa0",
    "\x7f",
    "\x01",
    "\ufffd",
]


def test_random_headers_read_the_same_with_or_without_libyaml() -> None:
    """A seeded sample of YAML-ish texts (a campaign of 300,000 found no other difference)."""
    rng = random.Random(2026)
    for _ in range(1500):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))
        assert read(text, header._C_LOADER) == read(text, None), repr(text)
