"""Surrogates through every converter (issue 26 point 5).

A ``str`` holding a surrogate code point outside U+DC80–U+DCFF (a lone ``\\udfff``, an
emoji as two UTF-16 code units) has no UTF-8 bytes: ``convert`` refuses it as input, naming
the code point and its place. Such text written as written text (the Writer, the node
builders) survives every lossless round trip: JSON Lines and compact exactly, ATIF for every
message, result and comment, and for a lone surrogate anywhere; a pair in an argument or a
field value comes back from ATIF's JSON as the one character it encodes, and the fidelity
report says so.
"""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from bbox_lark import Writer, parse, text_of
from bbox_lark.convert import RefusedInputError, convert

HEADER = "---\nformat: bbox/1\nid: s\nrepo_sha: 215db51\n---\n"
TEXTS = ["a\udfffb", "x\ud83c\udf89y", "\ud800", "é\udc80", "\udbff\udfff", "\udc00"]


@pytest.mark.parametrize("target", ["bbox", "jsonl", "compact", "atif"])
@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("u: \udfff\n", "6:4: the text holds U+DFFF"),
        ("t:x a\ud83c\udf89 → ok\n", "6:6: the text holds U+D83C"),
    ],
)
def test_a_str_holding_a_surrogate_code_point_is_refused(target: str, body: str, where: str) -> None:
    with pytest.raises(RefusedInputError, match=re.escape(where)) as refused:
        convert(HEADER + body, "bbox", to=target)
    assert "give the input as bytes" in str(refused.value)


@pytest.mark.parametrize("target", ["jsonl", "compact", "atif"])
def test_undecodable_bytes_survive_every_round_trip(target: str) -> None:
    data = (HEADER + "u: a\udc80b\nt:read x\udcff → ok\udcfe\n").encode("utf-8", "surrogateescape")
    there = convert(data, "bbox", to=target)
    back = convert(there.text.encode("utf-8", "surrogateescape"), target, to="bbox")
    assert _values(back.text) == _values(data.decode("utf-8", "surrogateescape"))


def _written() -> str:
    out = io.StringIO()
    with Writer(out, {"id": "s", "repo_sha": "215db51"}, redact=False) as log:
        for text in TEXTS:
            log.user(text)
            log.agent(text, k=text)
            log.call("bash", text, k=text).finish(text)
            log.call("x").finish(RuntimeError(text))
            log.comment(text)
    return out.getvalue()


def _values(text: str) -> list[Any]:
    return [
        (e.kind, text_of(e), e.args, dict(e.fields), text_of(e.result) if e.result else None)
        for e in parse(text).events
        if e.kind != "comment" or e.name is None
    ]


@pytest.mark.parametrize("target", ["jsonl", "compact"])
def test_written_surrogates_survive_a_lossless_round_trip(target: str) -> None:
    source = _written()
    there = convert(source, "bbox", to=target)
    back = convert(there.text.encode("utf-8"), target, to="bbox")
    assert _values(back.text) == _values(source)
    assert [text_of(e) for e in parse(back.text).events if e.kind == "user"] == TEXTS


def test_written_surrogates_through_atif() -> None:
    source = _written()
    there = convert(source, "bbox", to="atif")
    back = convert(there.text.encode("utf-8"), "atif", to="bbox")
    got, want = _values(back.text), _values(source)
    assert len(got) == len(want)
    pairs = 0
    for (kind, text, args, fields, result), (kind2, text2, args2, fields2, result2) in zip(
        got, want, strict=True
    ):
        assert (kind, result) == (kind2, result2)
        if kind != "tool":
            assert text == text2
        assert args in (args2, tuple(_joined(a) for a in args2))
        assert fields in (fields2, {k: _joined(v) for k, v in fields2.items()})
        pairs += args != args2
    assert pairs == 2  # the two pairs of TEXTS, in an argument
    assert "surrogate pairs as two code units (read back as one character)" in there.fidelity.render()


def _joined(text: str) -> str:
    """``text`` with each surrogate pair joined into the character it encodes."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
