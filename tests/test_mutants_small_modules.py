"""The small modules no other mutation test file covers: the Claude Code reader's shared
helpers (``convert/claude_code/values.py``), the JSON Lines sniffer
(``convert/jsonl/__init__.py``) and the packages' old names (``secrets``, ``numbers``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bbox_lark.convert.claude_code.values import as_arg, as_json, first_record, image_placeholder, short
from bbox_lark.convert.jsonl import sniff

# -- convert/claude_code/values.py ---------------------------------------------------------------


def test_first_record(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_text('\n  \n{"type": "user"}\n{"type": "assistant"}\n', encoding="utf-8")
    assert first_record(log) == {"type": "user"}
    log.write_text("[1, 2]\n", encoding="utf-8")
    assert first_record(log) is None  # a record is an object
    log.write_text("not json\n", encoding="utf-8")
    assert first_record(log) is None
    log.write_text("[" * 100_000 + "\n", encoding="utf-8")
    assert first_record(log) is None  # too deep: not a record, no crash
    log.write_text("\n\n", encoding="utf-8")
    assert first_record(log) is None
    assert first_record(tmp_path / "missing.jsonl") is None


def test_as_json_is_compact_and_keeps_text() -> None:
    assert as_json({"a": [1, "é"], "b": None}) == '{"a":[1,"é"],"b":null}'


def test_as_arg_is_the_scanner_s_argument() -> None:
    from bbox_lark.syntax.scan import render_arg

    for text in ("a.rs", "a b", 'say "hi"', ""):
        assert as_arg(text) == render_arg(text)


@pytest.mark.parametrize(
    ("text", "limit", "shown"),
    [
        ("short", 120, "short"),
        ("two\nlines", 120, "two lines"),
        ("x" * 120, 120, "x" * 120),
        ("x" * 121, 120, "x" * 119 + "…"),
        ("abcdef", 4, "abc…"),
        ("a\x00b", 120, "a\ufffdb"),
    ],
)
def test_short(text: str, limit: int, shown: str) -> None:
    assert short(text, limit) == shown


def test_short_s_default_limit() -> None:
    assert short("y" * 200) == "y" * 119 + "…"


@pytest.mark.parametrize(
    ("block", "shown"),
    [
        ({"source": {"media_type": "image/png"}}, "[image image/png]"),
        ({"source": {"media_type": ""}}, "[image unknown]"),
        ({"source": {"media_type": "image/png x"}}, "[image unknown]"),
        ({"source": {"media_type": 7}}, "[image unknown]"),
        ({"source": "data"}, "[image unknown]"),
        ({}, "[image unknown]"),
        ({"source": {"media_type": "image/\x00png"}}, "[image image/png]"),
    ],
)
def test_image_placeholder(block: dict[str, object], shown: str) -> None:
    assert image_placeholder(block) == shown


# -- convert/jsonl/__init__.py -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ('{"record": "header", "bbox": "1", "format": "bbox/1"}\n', 10),
        ('\ufeff\n  {"record": "header", "bbox": "1"}\n', 10),
        ('{"record":"header","bbox":"1"}', 10),
        ('{"record": "header", "bbox": "2"}\n', 0),
        ('{"record": "event", "bbox": "1"}\n', 0),
        ('{"type": "user"}\n', 0),
        ("[1]\n", 0),
        ('{"record": "header", "bbox": "1"\n', 0),  # cut short
        ("{" * 10_000 + "\n", 0),
        ("plain\n", 0),
        ("", 0),
        ('X{"record": "header", "bbox": "1"}\n', 0),
        ('\x0c{"record": "header", "bbox": "1"}\n', 0),  # not JSON's whitespace
        ('{"record": "header", "bbox": "1"}\n{"record": "event"}\n', 10),
    ],
)
def test_jsonl_sniff(text: str, score: int) -> None:
    assert sniff(text) == score


def test_jsonl_sniff_reads_the_first_line_only() -> None:
    header = json.dumps({"record": "header", "bbox": "1"})
    assert sniff("{}\n" + header + "\n") == 0


# -- the packages' old names ----------------------------------------------------------------------


def test_the_secrets_package_answers_with_the_scanner_s_names() -> None:
    import bbox_lark.secrets as secrets
    from bbox_lark.secrets import scanner

    assert secrets.find_secrets is scanner.find_secrets
    with pytest.raises(
        AttributeError, match=re.escape("module 'bbox_lark.secrets' has no attribute 'nothing_here'")
    ):
        secrets.nothing_here  # noqa: B018
    with pytest.raises(AttributeError) as dunder:
        secrets.__wrapped__  # noqa: B018
    assert str(dunder.value) == "__wrapped__"  # a dunder is never looked up in the scanner


def test_the_numbers_package_answers_with_the_old_module_s_names() -> None:
    import bbox_lark.numbers as numbers
    from bbox_lark.numbers import outcomes, prices, session, usage

    for module in (session, usage, prices, outcomes):
        name = next(n for n in vars(module) if not n.startswith("_") and callable(getattr(module, n)))
        assert getattr(numbers, name) is getattr(module, name)
    with pytest.raises(
        AttributeError, match=re.escape("module 'bbox_lark.numbers' has no attribute 'nothing_here'")
    ):
        numbers.nothing_here  # noqa: B018
    with pytest.raises(AttributeError) as dunder:
        numbers.__wrapped__  # noqa: B018
    assert str(dunder.value) == "__wrapped__"
