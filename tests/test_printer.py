"""The lossless printer: ``dumps(parse(x)) == x``, byte for byte, for every input.

Run on the whole golden corpus, the bundled example, the formatter fixtures and (when it is
there) ``../shared/corpus-external``, plus a table of inputs that printers usually get
wrong. The grammar-driven property tests are in ``test_roundtrip_property.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from printer_support import external_files, file_id, golden_files

import bbox_lark
from bbox_lark import dumps
from bbox_lark.syntax.source import encode

GOLDEN = golden_files()
EXTERNAL = external_files()


def test_golden_files_are_found() -> None:
    # A glob that silently finds nothing would make every parametrized test vanish.
    assert len(GOLDEN) >= 40
    assert any(p.name.endswith(".in.bbox") for p in GOLDEN)


@pytest.mark.parametrize("path", GOLDEN, ids=[file_id(p) for p in GOLDEN])
def test_golden_file_prints_back(path: Path) -> None:
    data = path.read_bytes()
    assert encode(dumps(bbox_lark.parse(data))) == data


@pytest.mark.skipif(not EXTERNAL, reason="../shared/corpus-external is absent")
@pytest.mark.parametrize("path", EXTERNAL, ids=[file_id(p) for p in EXTERNAL])
def test_external_file_prints_back(path: Path) -> None:
    data = path.read_bytes()
    assert encode(dumps(bbox_lark.parse(data))) == data


HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\n"

CASES = {
    "empty": "",
    "newline only": "\n",
    "bom only": "\ufeff",
    "bom and crlf": "\ufeff" + HEADER.replace("\n", "\r\n") + "u: hi\r\n",
    "no final newline": HEADER + "u: hi",
    "crlf without final newline": HEADER.replace("\n", "\r\n") + "t:x → [ok]",
    "mixed endings": HEADER + "u: a\r\nu: b\nu: c\r\n",
    "lone carriage return inside a line": HEADER + "u: a\rb\n",
    "carriage return at the very end": HEADER + "u: a\r",
    "odd spacing": HEADER + "t:read    x   ->   [1]    # metrics   a=1   \n",
    "tabs": HEADER + "\tcontinuation\nu:\thi\t\n\t\n",
    "unknown lines": HEADER + "hello world\n@\n:x\n---\n",
    "comments": HEADER + "#\n# \n#metrics a=1\n# plain  text  \n",
    "blank lines": HEADER + "\n   \n\t\n\n",
    "continuations": HEADER + "t:read x →\n  line 1\n\n\tline 2\n",
    "orphan continuation": "  orphan\nu: hi\n",
    "unterminated quotes": HEADER + 't:x "open → [ok]\nu: k="open\na: "\n',
    "no header": "u: hi\nt:x → [ok]\n",
    "header without closing fence": "---\nformat: bbox/1\n\nu: hi\n",
    "header only, no final newline": "---\nformat: bbox/1\n---",
    "leading blank lines before the header": "\n  \n" + HEADER + "u: hi\n",
    "NUL byte": HEADER + "u: a\x00b\n",
    "whitespace-only last line": HEADER + "u: hi\n  \t ",
}


@pytest.mark.parametrize("text", list(CASES.values()), ids=list(CASES))
def test_text_prints_back(text: str) -> None:
    assert dumps(bbox_lark.parse(text)) == text


@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xfe\x00garbage\n",
        b"---\nformat: bbox/1\nid: \xe9\nrepo_sha: 215db51\n---\na: caf\xe9\r\n",
        b"\xef\xbb\xbfu: bom as bytes\n",
        b"u: ends in a broken sequence \xe2\x86",
    ],
    ids=["binary", "latin-1 bytes", "bom bytes", "truncated arrow"],
)
def test_bytes_print_back(data: bytes) -> None:
    # Invalid UTF-8 survives as lone surrogates (surrogateescape) and encodes back.
    assert encode(dumps(bbox_lark.parse(data))) == data


def test_oversized_line_prints_back() -> None:
    text = HEADER + "u: " + "x" * 50 + "\nu: short\n"
    document = bbox_lark.parse(text, max_line=20)
    assert any(line.kind == "unknown" for line in document.events)
    assert dumps(document) == text


def test_dumps_is_concatenation_of_raw_and_eol() -> None:
    document = bbox_lark.parse("\ufeff" + HEADER + "u: a\r\n  b")
    parts = [line.raw + line.eol for line in (*document.header_lines, *document.lines)]
    assert dumps(document) == "\ufeff" + "".join(parts)
    assert document.lines[-1].eol == ""
