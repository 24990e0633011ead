"""The facade: bbox_lark's __all__ is the whole public surface, sorted and importable."""

from __future__ import annotations

import bbox_lark


def test_all_is_sorted_and_unique() -> None:
    assert list(bbox_lark.__all__) == sorted(set(bbox_lark.__all__))


def test_every_name_in_all_exists() -> None:
    for name in bbox_lark.__all__:
        assert hasattr(bbox_lark, name), name


def test_core_api_is_public() -> None:
    for name in ("parse", "check", "Document", "Event", "Diagnostic", "Result", "registry"):
        assert name in bbox_lark.__all__


def test_parse_never_raises_and_check_returns_diagnostics() -> None:
    for text in ("", "\x00", b"\xff\xfe", "---\n", "@", 't:"', "  x", "---\n- a\n---\n"):
        doc = bbox_lark.parse(text)
        assert isinstance(doc, bbox_lark.Document)
        assert all(isinstance(d, bbox_lark.Diagnostic) for d in bbox_lark.check(text))


def test_select_and_ignore_take_comma_separated_codes() -> None:
    text = "a: first step=2\na: second step=1 ts=nope\n"
    assert {d.code for d in bbox_lark.check(text, select=["W004,w005"])} == {"W004", "W005"}
    assert {d.code for d in bbox_lark.check(text, select=["W004"], ignore=["e,W005"])} == {"W004"}


def test_nodes_and_emit_are_public() -> None:
    for name in ("emit", "Call", "Comment", "Lifecycle", "Message", "Observation", "Unknown"):
        assert name in bbox_lark.__all__


def test_builders_and_reparse_are_public() -> None:
    """Nodes are data; the builders and the re-reading of an edited line are functions
    beside them (``bbox_lark.syntax.build``, ``bbox_lark.reparse``), never methods that reach up."""
    for name in ("build", "reparse"):
        assert name in bbox_lark.__all__
    for name in (
        "call",
        "comment",
        "edited",
        "head",
        "lifecycle",
        "message",
        "observation",
        "result",
        "unknown",
    ):
        assert callable(getattr(bbox_lark.syntax.build, name)), name
    for name in ("build", "with_", "with_source"):
        assert not hasattr(bbox_lark.Call, name), name
