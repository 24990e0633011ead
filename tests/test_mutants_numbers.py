"""The session numbers' building blocks (``bbox_lark/numbers/outcomes.py``, ``usage.py``,
``prices.py``), pinned down where mutation testing found nothing holding them: each result
kind's outcome, the values a count or a cost accepts, totals and usage added and shown, the
trailing run of fields a free-text line's numbers come from, and how lines group into
responses (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import sys
from decimal import Decimal

import pytest

import bbox_lark
from bbox_lark.numbers.outcomes import call_outcome
from bbox_lark.numbers.prices import Estimate, estimate_cost, format_usd
from bbox_lark.numbers.usage import (
    HEADER_TOTALS,
    Response,
    Responses,
    Totals,
    Usage,
    fields_inside_text,
    line_usage,
    number_fields,
    read_totals,
    response_usage,
)

HEADER = "---\nformat: bbox/1\nid: s1\nrepo_sha: 215db51\n---\n"


def events(body: str) -> list[bbox_lark.Event]:
    return list(bbox_lark.parse(HEADER + body).events)


def event(line: str) -> bbox_lark.Event:
    return events(line + "\n")[0]


# -- outcomes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "outcome"),
    [
        ("t:x →", "unknown"),  # an empty result
        ("t:x → ", "unknown"),
        ("t:x → [launched]", "pending"),  # every start status
        ("t:x → [started]", "pending"),
        ("t:x → [pending]", "pending"),
        ("t:x → error: bad", "error"),  # a text result that starts with "error:", any case
        ("t:x → ERROR:x", "error"),
        ("t:x → errors: x", "ok"),
        ("t:x → an error: x", "ok"),
        ("t:x → [empty]", "ok"),
    ],
)
def test_the_outcome_of_each_result_kind(line: str, outcome: str) -> None:
    assert call_outcome(event(line)) == outcome


def test_a_completion_without_a_result_is_unknown_and_a_start_alone_pending() -> None:
    start, done = events("t!:build id=b1\no: id=b1\n")
    assert call_outcome(start, done) == "unknown"
    assert call_outcome(start) == "pending"
    assert call_outcome(start, None) == "pending"
    assert call_outcome(done) == "unknown"


def test_a_completion_with_a_start_status_leaves_the_call_pending() -> None:
    start, running, started = events("t!:bash id=1\no: id=1 → [running]\nt:bash id=1 → [started]\n")
    assert call_outcome(start, running) == "pending"
    assert call_outcome(start, started) == "pending"


# -- the values a count or a cost accepts --------------------------------------------------


@pytest.mark.parametrize(
    ("value", "count"),
    [
        ("12", 12),
        (" 12 ", 12),
        ("12.0", 12),
        ("1e3", 1000),
        ("0", 0),
        (str(2**63 - 1), 2**63 - 1),  # the largest typed integer
        (str(2**63), None),
        ("12.5", None),
        ("-1", None),
        ("$12", None),  # a dollar sign only on a cost
        ("NaN", None),
        ("Infinity", None),
        ("x", None),
        ("", None),
        ("0" * 40 + "", 0),  # forty characters: read
        ("0" * 41, None),  # more: malformed, never converted
        (12, None),  # only text is read
        (None, None),
    ],
)
def test_a_token_count(value: object, count: int | None) -> None:
    assert read_totals({"tokens_in": value}).prompt == count
    assert read_totals({"tokens_out": value}).completion == count


@pytest.mark.parametrize(
    ("value", "cost"),
    [
        ("0.25", Decimal("0.25")),
        ("$0.25", Decimal("0.25")),
        (" $0.25 ", Decimal("0.25")),
        ("0", Decimal("0")),
        ("$$1", None),
        ("-0.25", None),
        ("$-1", None),
        ("NaN", None),
        ("sNaN", None),
        ("-Infinity", None),
        ("Infinity", None),
        ("free", None),
        (0.25, None),
    ],
)
def test_a_cost(value: object, cost: Decimal | None) -> None:
    assert read_totals({"cost": value}).cost == cost
    assert read_totals({"cost_usd": value}).cost == cost


def test_the_first_valid_value_of_each_quantity_wins() -> None:
    totals = read_totals(
        {"prompt": "x", "tokens_in": "5", "prompt_tokens": "7", "cost": "no", "cost_usd": "$1"}
    )
    assert (totals.prompt, totals.cost) == (5, Decimal(1))
    assert read_totals({"tokens_in": "5", "prompt": "7"}).prompt == 5
    assert read_totals({"tokens_total_in": "5", "tokens_in": "7"}, HEADER_TOTALS).prompt == 5
    assert read_totals({"tokens_total_out": "5", "tokens_cached": "2"}, HEADER_TOTALS) == Totals(None, 5, 2)
    assert read_totals({"cache_creation_input_tokens": "4", "total_tokens": "9"}) == Totals(
        tokens=9, cache_write=4
    )


# -- totals and usage --------------------------------------------------------------------


def test_totals_are_empty_only_without_any_quantity() -> None:
    assert Totals().empty
    for name in ("prompt", "completion", "cached", "tokens", "cache_write"):
        assert not Totals(**{name: 0}).empty, name
    assert not Totals(cost=Decimal(0)).empty


def test_the_usage_of_totals_takes_the_cache_reads_out_of_the_prompt() -> None:
    assert Totals(10, 2, 4, cache_write=3).usage == Usage(6, 2, 4, 3)
    assert Totals(10, 2, 10).usage == Usage(0, 2, 10)  # all cached
    assert Totals(10, 2, 11).usage == Usage(10, 2, 11)  # W028: the prompt as uncached
    assert Totals(None, 2, 4).usage == Usage(None, 2, 4)
    assert Totals(10, 2).usage == Usage(10, 2, None)
    assert [Totals(10, 2, c).cached_over_prompt for c in (9, 10, 11)] == [False, False, True]
    assert not Totals(None, 2, 11).cached_over_prompt
    assert not Totals(10, 2).cached_over_prompt


def test_totals_add_quantity_by_quantity_and_none_is_no_quantity() -> None:
    one = Totals(1, 2, None, 4, Decimal("0.5"), None)
    two = Totals(10, None, 30, 40, None, 6)
    assert one + two == Totals(11, 2, 30, 44, Decimal("0.5"), 6)
    assert two + one == Totals(11, 2, 30, 44, Decimal("0.5"), 6)
    assert Totals() + Totals() == Totals()
    assert Totals(cost=Decimal("0.25")) + Totals(cost=Decimal("0.5")) == Totals(cost=Decimal("0.75"))


def test_totals_as_json() -> None:
    assert Totals(1, 2, 3, 4, Decimal("0.5"), 6).to_json() == {
        "prompt": 1,
        "completion": 2,
        "cached": 3,
        "tokens": 4,
        "cost": 0.5,
        "cache_write": 6,
    }
    assert Totals().to_json() == dict.fromkeys(
        ("prompt", "completion", "cached", "tokens", "cost", "cache_write")
    )


def test_usage_is_empty_without_input_output_or_cache_reads() -> None:
    assert Usage().empty
    assert Usage(tokens_cache_write=5).empty  # cache writes are part of the input
    assert not Usage(0).empty and not Usage(None, 0).empty and not Usage(None, None, 0).empty


def test_the_input_with_cache_reads() -> None:
    assert Usage().input_with_cache is None
    assert Usage(None, 5).input_with_cache is None
    assert Usage(3).input_with_cache == 3
    assert Usage(None, 5, 4).input_with_cache == 4
    assert Usage(3, 5, 4).input_with_cache == 7


def test_usage_adds_and_shows_cache_writes_only_when_named() -> None:
    assert Usage(1, None, 3, None) + Usage(10, 20, None, 40) == Usage(11, 20, 3, 40)
    assert Usage(1, 2, 3, 4) + Usage(10, 20, 30, 40) == Usage(11, 22, 33, 44)
    assert Usage(1, 2, 3).to_json() == {"tokens_in": 1, "tokens_out": 2, "tokens_cached": 3}
    assert Usage(1, 2, 3, 0).to_json() == {
        "tokens_in": 1,
        "tokens_out": 2,
        "tokens_cached": 3,
        "tokens_cache_write": 0,
    }


# -- which fields a line's numbers come from ------------------------------------------------


@pytest.mark.parametrize(
    ("line", "fields"),
    [
        ("a: done tokens_in=5 tokens_out=9", {"tokens_in": "5", "tokens_out": "9"}),
        ("a: Set tokens_out=9 in the fixture. tokens_in=1", {"tokens_in": "1"}),
        ("a: Set tokens_out=9 in the fixture.", {}),
        ("a: tokens_in=5 tokens_out=9", {"tokens_in": "5", "tokens_out": "9"}),  # fields only
        ("a: tokens_in=5 x", {}),
        ("a: x tokens_in=1 tokens_in=2", {"tokens_in": "1"}),  # the first of a key wins
        ("t:read a → [ok] tokens_in=5 x", {"tokens_in": "5"}),  # not free text: every field
        ("a: done", {}),
    ],
)
def test_the_fields_a_number_is_read_from(line: str, fields: dict[str, str]) -> None:
    assert dict(number_fields(event(line))) == fields


@pytest.mark.parametrize(
    ("line", "inside"),
    [
        ("a: done tokens_in=5 tokens_out=9", []),
        ("a: Set tokens_out=9 in the fixture. tokens_in=1", ["tokens_out"]),
        ("a: cost=0.5 is what it cost, model=x", ["cost"]),
        ("a: model=x and cost_usd=1 then tokens_cached=2 end", ["model", "cost_usd", "tokens_cached"]),
        ("a: x tokens_in=1 tokens_in=2", []),  # the same key twice: the nodes decide
        ('a: q="a b" tokens_in=1', []),
        ("a: tags=[a, b] tokens_in=1", []),
        ("a: tokens_in=1 " + " ".join(f"k{i}=v" for i in range(70)), []),  # a run past 64 words
        ("a: tokens_in=1 y " + " ".join(f"k{i}=v" for i in range(70)), ["tokens_in"]),
        ("a: one=1 two", []),
        ("t:read a → [ok] tokens_in=5 x", []),  # not free text
        ("t:read tokens_in=5 x → [ok]", []),
        ("o: id=1 tokens_in=3 z → [ok]", []),
        ("# note tokens_in=1 more", []),
        ("@end tokens_in=1 x", []),
        ("th: model=x y", ["model"]),  # the field right before the last word
        ("a: tokens_in=1 words tokens_in=2", ["tokens_in"]),  # the key also in the trailing run
        ("a: tokens_in=1 9k=x", ["tokens_in"]),  # `9k=x` and `=x` are words, not fields
        ("a: tokens_in=1 =x", ["tokens_in"]),
    ],
)
def test_the_number_fields_inside_a_free_text_line(line: str, inside: list[str]) -> None:
    assert [node.key for node in fields_inside_text(event(line))] == inside


@pytest.mark.parametrize(
    ("line", "usage"),
    [
        ("a: x tokens_in=1", Usage(1)),
        ("a: x tokens_out=2", Usage(None, 2)),
        ("a: x tokens_cached=3", Usage(None, None, 3)),
        ("a: x tokens_in=1 tokens_cache_write=4", Usage(1, None, None, 4)),
        ("a: x tokens_cache_write=4", None),  # no usage stated
        ("a: x tokens_in=lots", None),  # stated, but no count
        ("a: Set tokens_in=9 in the fixture.", None),  # prose
        ("# note tokens_in=1", None),  # a comment is no response
        ("@end tokens_in=1", None),
        ("t:read a → [ok] tokens_in=1 tokens_out=2 tokens_cached=3", Usage(1, 2, 3)),
        ("u: hi tokens_in=1", Usage(1)),
    ],
)
def test_the_usage_a_line_states(line: str, usage: Usage | None) -> None:
    assert line_usage(event(line)) == usage


# -- responses ---------------------------------------------------------------------------


def test_a_response_keeps_its_first_step_and_model_and_the_largest_cache_write() -> None:
    lines = events(
        "a: one tokens_in=1 tokens_cached=2 tokens_out=5 tokens_cache_write=3\n"  # 6
        "a: two step=4 tokens_in=1 tokens_cached=2 tokens_out=9\n"  # 7
        "a: three step=5 tokens_in=1 tokens_cached=2 tokens_out=7 tokens_cache_write=8\n"  # 8
        "a: four step=6 tokens_in=1 tokens_cached=2\n"  # 9: no output stated
    )
    responses = Responses()
    responses.model = "m1"
    assert responses.feed(lines[0]) == ()
    responses.model = "m2"  # switched inside the response: the response keeps its first
    for line in lines[1:]:
        assert responses.feed(line) == ()
    assert responses.finish() == (Response(1, 6, 9, Usage(1, 9, 2, 8), "m1", 4),)
    assert responses.finish() == () and responses.current is None


def test_a_response_first_with_a_step_keeps_it() -> None:
    lines = events("a: one step=2 tokens_in=1 tokens_out=5\na: two step=3 tokens_in=1 tokens_out=4\n")
    assert response_usage(lines) == dict.fromkeys((6, 7), Response(1, 6, 7, Usage(1, 5), None, 2))


def test_a_break_ends_only_its_own_threads_response() -> None:
    lines = events(
        "a: main tokens_in=1\n"  # 6
        "a: sub tid=s tokens_in=2\n"  # 7
        "u: to sub tid=s\n"  # 8: ends the sub's response only
        "o: nothing open tid=t\n"  # 9: no response open in thread t
        "a: main again tokens_in=1 tokens_out=3\n"  # 10: still response 1
    )
    responses = Responses()
    got = [responses.feed(line) for line in lines]
    assert [[r.ordinal for r in ended] for ended in got] == [[], [], [2], [], []]
    assert responses.current is not None and responses.current.ordinal == 1
    assert responses.finish() == (Response(1, 6, 10, Usage(1, 3)),)


def test_a_line_without_usage_neither_joins_nor_ends_a_response() -> None:
    lines = events("a: one tokens_in=1\n# note\nt:read a → [ok]\na: two tokens_in=1 tokens_out=2\n")
    responses = Responses()
    assert [responses.feed(line) for line in lines] == [(), (), (), ()]
    assert responses.finish() == (Response(1, 6, 9, Usage(1, 2)),)


def test_a_new_input_ends_the_response_of_its_thread() -> None:
    lines = events("a: one tokens_in=1\na: two tid=x tokens_in=1\na: three tokens_in=2\n")
    responses = Responses()
    assert responses.feed(lines[0]) == ()
    assert responses.feed(lines[1]) == ()
    assert responses.feed(lines[2]) == (Response(1, 6, 6, Usage(1)),)
    assert [r.ordinal for r in responses.finish()] == [2, 3]


def test_the_oldest_thread_ends_when_too_many_are_open() -> None:
    class TwoThreads(Responses):
        THREADS = 2

    responses = TwoThreads()
    lines = events(
        "a: a tid=1 tokens_in=1\na: b tid=2 tokens_in=1\na: c tid=3 tokens_in=1\na: d tid=2 tokens_in=1\n"
    )
    assert [tuple(r.ordinal for r in responses.feed(line)) for line in lines] == [(), (), (1,), ()]
    assert [r.ordinal for r in responses.finish()] == [2, 3]
    assert Responses.THREADS == 1024


# -- estimated cost ----------------------------------------------------------------------

MODEL = "claude-sonnet-4-5-20250929"


def list_price(input_tokens: int, output_tokens: int, read: int = 0, write: int = 0) -> Decimal:
    """What ``genai-prices`` itself says one request costs."""
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    usage = PriceUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )
    return Decimal(str(calc_price(usage, model_ref=MODEL).total_price))


def test_each_request_is_priced_with_its_cache_reads_and_writes() -> None:
    pytest.importorskip("genai_prices")
    assert estimate_cost([(MODEL, Usage(1000, 200))]) == Estimate(list_price(1000, 200), None, True)
    assert estimate_cost([(MODEL, Usage(None, 200))]) == Estimate(list_price(0, 200), None, True)
    assert estimate_cost([(MODEL, Usage(1000, None, 50))]) == Estimate(list_price(1050, 0, 50), None, True)
    # cache writes are part of the input: never more of them than the input holds
    assert estimate_cost([(MODEL, Usage(1000, 200, None, 300))]) == Estimate(
        list_price(1000, 200, 0, 300), None, False
    )
    assert estimate_cost([(MODEL, Usage(100, 200, 7, 300))]) == Estimate(
        list_price(107, 200, 7, 100), None, False
    )
    assert estimate_cost([(MODEL, Usage(None, 200, 7, 300))]) == Estimate(list_price(7, 200, 7), None, False)


def test_a_request_without_cache_writes_makes_the_estimate_a_lower_bound() -> None:
    pytest.importorskip("genai_prices")
    with_writes, without = Usage(10, 20, None, 0), Usage(10, 20)
    assert estimate_cost([(MODEL, with_writes), (MODEL, with_writes)]).lower_bound is False
    both = estimate_cost([(MODEL, with_writes), (MODEL, without)])
    assert (both.cost_usd, both.lower_bound) == (2 * list_price(10, 20), True)
    # no estimate: no bound either
    assert estimate_cost([(MODEL, without), ("no-such-model-xyz", without)]) == Estimate(
        None, "no price for model no-such-model-xyz", False
    )


def test_an_empty_request_is_skipped_and_the_first_unknown_model_ends_the_estimate() -> None:
    pytest.importorskip("genai_prices")
    assert estimate_cost([(MODEL, Usage()), (None, Usage())]) == Estimate(None, "no usage", False)
    assert estimate_cost([(None, Usage()), (MODEL, Usage(1, 1, None, 0))]) == Estimate(
        list_price(1, 1), None, False
    )
    later = Usage(1, 1, None, 0)
    assert estimate_cost([(None, later), (MODEL, later)]) == Estimate(None, "no model named", False)
    assert estimate_cost([(MODEL, later), (None, later), (MODEL, later)]) == Estimate(
        None, "no model named", False
    )
    assert (
        estimate_cost([("no-such-model-xyz", later), (None, later)]).note
        == "no price for model no-such-model-xyz"
    )


def test_no_estimate_without_the_price_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "genai_prices", None)  # import fails
    assert estimate_cost([(MODEL, Usage(1, 1))]) == Estimate(
        None, "genai-prices is not installed (pip install 'bbox-lark[prices]')", False
    )
    assert estimate_cost([(None, Usage(1, 1))]).note == "no model named"  # no import needed


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("0.46238100000000004", "$0.462381"),  # a stated float's binary tail
        ("0.1234565", "$0.123456"),  # to a millionth, half to even
        ("0.0000015", "$0.000002"),
        ("0.000001", "$0.000001"),
        ("0.0000010", "$0.000001"),
        ("12.50", "$12.5"),
        ("100", "$100"),
        ("1E+2", "$100"),
        ("0", "$0"),
        ("0.00", "$0"),
        # longer than the default 28 digits: every whole dollar kept (quantize raised, and
        # `stats` failed with an internal error on such a stated cost)
        ("12345678901234567890123.1234567", "$12345678901234567890123.123457"),
        ("123456789012345678901234567890.12", "$123456789012345678901234567890.12"),
        ("123456789012345678901234567890", "$123456789012345678901234567890"),
    ],
)
def test_a_cost_as_shown(value: str, shown: str) -> None:
    assert format_usd(Decimal(value)) == shown


def test_a_cache_write_stated_on_a_later_line_of_a_response() -> None:
    lines = events("a: one tokens_in=1 tokens_out=2\na: two tokens_in=1 tokens_out=3 tokens_cache_write=6\n")
    assert response_usage(lines)[6] == Response(1, 6, 7, Usage(1, 3, None, 6))


def test_the_current_response_is_of_the_last_lines_thread() -> None:
    lines = events(
        "a: main tokens_in=1\n"  # 6: response 1
        "a: sub tid=s tokens_in=2\n"  # 7: response 2
        "a: main again tokens_in=1\n"  # 8: response 1
        "a: sub again tid=s tokens_in=2 tokens_out=4\n"  # 9: response 2
    )
    responses = Responses()
    current = []
    for line in lines:
        responses.feed(line)
        assert responses.current is not None
        current.append(responses.current.ordinal)
    assert current == [1, 2, 1, 2]
    assert {line: r.ordinal for line, r in response_usage(lines).items()} == {6: 1, 7: 2, 8: 1, 9: 2}


def test_a_new_input_in_a_thread_ends_that_threads_response_only() -> None:
    lines = events("a: main tokens_in=1\na: sub tid=x tokens_in=1\na: sub new tid=x tokens_in=2\n")
    responses = Responses()
    assert [tuple(r.ordinal for r in responses.feed(line)) for line in lines] == [(), (), (2,)]
    assert [r.ordinal for r in responses.finish()] == [1, 3]
