"""The fixers' own words and counts (``bbox_lark/fix``), pinned down where mutation testing
found nothing holding them: the one-line summary the CLI prints (tested there only in a child
process, which a mutation run cannot see), the count beside several arrows on several lines,
and the redact fixer's notes (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import pytest

from bbox_lark.fix import FIXERS, FixError, apply_fixes

HEAD = "---\nformat: bbox/1\nid: s\n---\n"
KEY = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 6


def test_the_arrows_summary_counts_in_words() -> None:
    arrows = FIXERS["arrows"]
    assert arrows.summary(1) == "Rewrote 1 ASCII arrow as →"
    assert arrows.summary(3) == "Rewrote 3 ASCII arrows as →"
    assert arrows.summary(0) == "Rewrote 0 ASCII arrows as →"


def test_every_result_arrow_of_every_line_is_rewritten_and_counted() -> None:
    text = HEAD + "t:read a -> [1 line]\nu: a -> b\nt:read b ->[2 lines]\no: id=x  ->  [ok]\n"
    outcome = apply_fixes(text, [FIXERS["arrows"]])
    # `->[` is no result arrow (the arrow needs a space after it): it stays.
    assert (
        outcome.new_text == HEAD + "t:read a → [1 line]\nu: a -> b\nt:read b ->[2 lines]\no: id=x  →  [ok]\n"
    )
    assert outcome.changes == {"arrows": 2}
    assert outcome.notes == ()


def test_an_arrow_at_the_end_of_a_line_keeps_what_follows() -> None:
    outcome = apply_fixes(HEAD + "t!:test id=c1 ->\na: next\n", [FIXERS["arrows"]])
    assert outcome.new_text == HEAD + "t!:test id=c1 →\na: next\n"


def test_the_redact_summary_counts_in_words() -> None:
    redact = FIXERS["redact"]
    assert redact.summary(1) == "redact: 1 secret replaced"
    assert redact.summary(2) == "redact: 2 secrets replaced"


def test_redact_notes_each_secret_where_it_was() -> None:
    text = HEAD + f"a: the key is {KEY}\nu: nothing here\nt:env → TOKEN={KEY}\n"
    outcome = apply_fixes(text, [FIXERS["redact"]], allowed_secrets=())
    assert KEY not in outcome.new_text and outcome.new_text.count("[redacted:") == 2
    assert outcome.changes == {"redact": 2}
    assert [(note.line, note.col, note.fixer) for note in outcome.notes] == [
        (5, 15, "redact"),
        (7, 15, "redact"),
    ]
    assert all(note.message.startswith("redacted ") and KEY not in note.message for note in outcome.notes)
    # The findings the fixer repaired are the secret findings at the noted places.
    assert {(d.line, d.code) for d in outcome.resolved} == {(5, "S001"), (7, "S001")}


def test_redact_leaves_a_clean_text_and_an_allowed_secret_alone() -> None:
    text = HEAD + f"a: the key is {KEY}\n"
    outcome = apply_fixes(text, [FIXERS["redact"]], allowed_secrets=[KEY])
    assert outcome.new_text == text
    assert outcome.changes == {"redact": 0} and outcome.notes == ()


def test_redact_refuses_a_rewrite_that_changes_what_kind_a_line_is(monkeypatch: pytest.MonkeyPatch) -> None:
    # The guard against a redaction bug: were a marker ever to turn a line into another kind
    # (a continuation into an event, say), the fixer stops with a clear message.
    import bbox_lark.secrets.redaction

    kinds = iter([("event",), ("continuation",)])
    monkeypatch.setattr(bbox_lark.secrets.redaction, "part_kinds", lambda lines: next(kinds))
    with pytest.raises(FixError, match=r"^redacting would change what kind of line one is$"):
        apply_fixes(HEAD + f"a: the key is {KEY}\n", [FIXERS["redact"]], allowed_secrets=())
