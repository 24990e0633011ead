"""Claude Code's detection and reading loop (``bbox_lark/convert/claude_code/__init__.py``:
``sniff``, ``read``), pinned down where mutation testing found nothing holding them: which
lines of a file's head are read and how many, what makes a line count, where the header is
written when the first records do not give its values (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import json

from bbox_lark.convert import convert
from bbox_lark.convert.claude_code import LOOKAHEAD, sniff

RECORD = '{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"}}'
OTHER = '{"a":1}'


def test_a_record_of_claude_codes_types_with_any_one_id_key_scores_four() -> None:
    for key in ("sessionId", "uuid", "leafUuid", "messageId"):
        assert sniff(json.dumps({"type": "summary", key: "x"}) + "\n") == 4, key
    # An id that is no text, a type that is not Claude Code's, an id nested deeper: no.
    assert sniff('{"type":"user","sessionId":5}\n') == 0
    assert sniff('{"type":"odd","sessionId":"s"}\n') == 0
    assert sniff('{"type":"user"}\n{"x":{"sessionId":"s"}}\n') == 0


def test_lines_that_are_no_record_are_passed_over_not_the_end_of_the_search() -> None:
    for before in ("\n", "not json\n", "[1]\n", '{"type":"odd"}\n', OTHER + "\n"):
        assert sniff(before + RECORD + "\n") == 4, before


def test_a_byte_order_mark_before_the_first_record_is_no_part_of_it() -> None:
    assert sniff("\ufeff" + RECORD + "\n") == 4


def test_only_the_first_fifty_lines_with_text_are_read() -> None:
    blank_between = "\n".join([OTHER, ""] * 49) + "\n"
    assert sniff(blank_between + RECORD + "\n") == 4  # the 50th line with text
    assert sniff((OTHER + "\n") * 50 + RECORD + "\n") == 0  # the 51st


def test_only_the_first_two_hundred_lines_are_read() -> None:
    assert sniff("\n" * 199 + RECORD + "\n") == 4
    assert sniff("\n" * 200 + RECORD + "\n") == 0
    # The first line is read on its own, whatever follows it.
    assert sniff(RECORD + "\n" + "x\n" * 250) == 4


def test_a_record_cut_short_counts_only_as_the_last_line_read() -> None:
    cut = RECORD[:40]
    assert sniff(OTHER + "\n" + cut) == 4
    # A record and a cut one: both count, the cut one as much as the other.
    assert sniff(RECORD + "\n" + cut) == 4
    # Cut, but a line follows: a line that is no JSON, not the head's end.
    assert sniff(cut + "\n" + OTHER + "\n") == 0


def test_the_header_is_written_after_the_lookahead_without_values_found_later() -> None:
    """The first ``LOOKAHEAD`` records (200) give no model: the header is written then,
    without one; the model a later record names is no header value (the header is out)."""
    users = [json.loads(RECORD)] * LOOKAHEAD
    model = {
        "type": "assistant",
        "sessionId": "s",
        "message": {"id": "m", "role": "assistant", "model": "mod-x", "content": "a"},
    }
    text = "\n".join(json.dumps(r) for r in [*users, model]).encode()
    header = convert(text, "claude-code", to="bbox").text.split("---\n")[1]
    assert "model" not in header
    early = "\n".join(json.dumps(r) for r in [*users[:-1], model]).encode()
    assert "model: mod-x" in convert(early, "claude-code", to="bbox").text.split("---\n")[1]
