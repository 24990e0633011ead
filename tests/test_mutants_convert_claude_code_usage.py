"""Claude Code's API usage on bbox lines (``bbox_lark/convert/claude_code/usage.py``), pinned
down where mutation testing found nothing holding it: which counters are read, ``tokens_in``
as input plus cache writes, a message's records merged (each counter's largest), a message id
counted once (and forgotten past the memory of recent ids), messages without an id, threads
held apart, the closing summary, and the fidelity rows with their lines (docs/testing.md,
"Mutation testing"). Through ``convert``, as a user runs it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bbox_lark.convert import convert


def assistant(message_id: Any, text: str, usage: Any, **record: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "usage": usage,
    }
    if message_id is not None:
        message["id"] = message_id
    return {"type": "assistant", "sessionId": "s", "message": message, **record}


def user(text: str) -> dict[str, Any]:
    return {"type": "user", "sessionId": "s", "message": {"role": "user", "content": text}}


def run(*records: dict[str, Any]) -> Any:
    return convert("\n".join(json.dumps(r) for r in records).encode(), "claude-code", to="bbox")


def body(result: Any) -> str:
    return result.text.split("---\n", 2)[2]


def rows(result: Any) -> dict[tuple[str, str], tuple[tuple[int, ...], int]]:
    return {(e.action, e.what): (e.lines, e.count) for e in result.fidelity.entries if e.stage == "read"}


KEPT = "API usage (tokens_in= tokens_out= tokens_cached= tokens_cache_write= on the message's lines)"
DUPLICATE = (
    "API usage restated by records of one message id"
    " (counted once: each record's lines carry the largest value of each counter so far)"
)
REPEATED = "API usage of a message id counted before (its lines carry none)"
SUMMARY = "closing token summary (# tokens_in=…, each message id once)"


def test_each_counter_under_the_writers_names() -> None:
    usage = {
        "input_tokens": 5,
        "output_tokens": 4,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 3,
    }
    result = run(assistant("m1", "one", usage))
    assert body(result) == (
        "a: one tokens_in=8 tokens_out=4 tokens_cached=100 tokens_cache_write=3\n"
        "# tokens_in=8 tokens_out=4 tokens_cached=100\n"
    )
    found = rows(result)
    assert found[("kept", KEPT)] == ((1,), 1)
    assert found[("synthesized", SUMMARY)] == ((0,), 1)


@pytest.mark.parametrize(
    ("usage", "fields", "summary"),
    [
        ({"input_tokens": 5}, "tokens_in=5", "tokens_in=5 tokens_out=0 tokens_cached=0"),
        (
            {"cache_creation_input_tokens": 3},
            "tokens_in=3 tokens_cache_write=3",
            "tokens_in=3 tokens_out=0 tokens_cached=0",
        ),
        ({"output_tokens": 0}, "tokens_out=0", "tokens_in=0 tokens_out=0 tokens_cached=0"),
        ({"cache_read_input_tokens": 7}, "tokens_cached=7", "tokens_in=0 tokens_out=0 tokens_cached=7"),
    ],
)
def test_a_message_names_only_the_counters_it_has(usage: dict[str, int], fields: str, summary: str) -> None:
    assert body(run(assistant("m1", "one", usage))) == f"a: one {fields}\n# {summary}\n"


@pytest.mark.parametrize(
    "value", [-1, True, 1.5, "5", None], ids=["negative", "bool", "float", "string", "null"]
)
def test_a_counter_that_is_no_count_is_left_out(value: Any) -> None:
    result = run(assistant("m1", "one", {"input_tokens": value, "output_tokens": 2}))
    assert body(result) == "a: one tokens_out=2\n# tokens_in=0 tokens_out=2 tokens_cached=0\n"
    assert not any(what.endswith("usage fields") for _, what in rows(result))


def test_usage_keys_claude_code_has_and_bbox_does_not_are_reported_dropped() -> None:
    long = "k" * 60
    result = run(
        user("hi"),
        assistant("m1", "one", {"output_tokens": 2, "service_tier": "standard", long: 1}),
    )
    found = rows(result)
    assert found[("dropped", "`service_tier` usage fields")] == ((2,), 1)
    assert [what for _, what in found if what.startswith("`kkk")] == ["`" + "k" * 39 + "…` usage fields"]


def test_a_message_without_usage_carries_none() -> None:
    result = run(assistant("m1", "one", None), assistant("m2", "two", "lots"))
    assert body(result) == "a: one\na: two\n"
    assert ("kept", KEPT) not in rows(result)
    assert ("synthesized", SUMMARY) not in rows(result)


def test_a_usage_with_no_counter_writes_no_fields_nor_summary() -> None:
    result = run(assistant("m1", "one", {}), assistant("m2", "two", {"input_tokens": -3}))
    assert body(result) == "a: one\na: two\n"
    assert ("kept", KEPT) not in rows(result)


def test_the_records_of_one_message_carry_each_counter_s_largest() -> None:
    result = run(
        user("hi"),
        assistant("m1", "one", {"input_tokens": 5, "output_tokens": 4, "cache_read_input_tokens": 9}),
        assistant("m1", "two", {"input_tokens": 2, "output_tokens": 9}),
        assistant("m1", "three", {"output_tokens": 7, "cache_creation_input_tokens": 1}),
        assistant("m2", "four", {"input_tokens": 1}),
    )
    assert body(result) == (
        "u: hi\n"
        "a: one tokens_in=5 tokens_out=4 tokens_cached=9\n"
        "a: two tokens_in=5 tokens_out=9 tokens_cached=9\n"
        "a: three tokens_in=6 tokens_out=9 tokens_cached=9 tokens_cache_write=1\n"
        "a: four tokens_in=1\n"
        "# tokens_in=7 tokens_out=9 tokens_cached=9\n"
    )
    found = rows(result)
    assert found[("dropped", DUPLICATE)] == ((3, 4), 2)
    assert found[("kept", KEPT)] == ((2, 3, 4, 5), 4)


def test_a_message_id_counted_before_carries_no_usage() -> None:
    result = run(
        assistant("m1", "one", {"input_tokens": 5}),
        assistant("m2", "two", {"input_tokens": 1}),
        assistant("m1", "again", {"input_tokens": 5}),
        assistant("m3", "three", {"input_tokens": 2}),
    )
    assert body(result) == (
        "a: one tokens_in=5\na: two tokens_in=1\na: again\na: three tokens_in=2\n"
        "# tokens_in=8 tokens_out=0 tokens_cached=0\n"
    )
    assert rows(result)[("dropped", REPEATED)] == ((3,), 1)


def test_only_recent_message_ids_are_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    import bbox_lark.convert.claude_code.usage as usage_module

    monkeypatch.setattr(usage_module, "REMEMBERED", 2)
    result = run(
        assistant("m1", "a", {"input_tokens": 1}),
        assistant("m2", "b", {"input_tokens": 10}),
        assistant("m3", "c", {"input_tokens": 100}),
        assistant("m2", "d", {"input_tokens": 10}),  # remembered: no usage
        assistant("m1", "e", {"input_tokens": 1}),  # forgotten: counted again
    )
    assert body(result) == (
        "a: a tokens_in=1\na: b tokens_in=10\na: c tokens_in=100\na: d\na: e tokens_in=1\n"
        "# tokens_in=112 tokens_out=0 tokens_cached=0\n"
    )


@pytest.mark.parametrize("message_id", [None, "", 7])
def test_messages_without_an_id_each_count(message_id: Any) -> None:
    result = run(
        assistant(message_id, "one", {"input_tokens": 5}),
        assistant(message_id, "two", {"input_tokens": 5}),
    )
    assert (
        body(result)
        == "a: one tokens_in=5\na: two tokens_in=5\n# tokens_in=10 tokens_out=0 tokens_cached=0\n"
    )
    assert ("dropped", DUPLICATE) not in rows(result)
    assert ("dropped", REPEATED) not in rows(result)


def test_a_message_without_an_id_ends_the_one_before() -> None:
    result = run(
        assistant("m1", "one", {"input_tokens": 5}),
        assistant(None, "two", {"input_tokens": 3}),
        assistant("m1", "three", {"input_tokens": 5}),
    )
    assert body(result) == (
        "a: one tokens_in=5\na: two tokens_in=3\na: three\n# tokens_in=8 tokens_out=0 tokens_cached=0\n"
    )


def test_threads_hold_their_messages_apart() -> None:
    side = {"isSidechain": True, "agentId": "x1"}
    result = run(
        assistant("m1", "main", {"input_tokens": 5, "output_tokens": 1}),
        assistant("s1", "side", {"input_tokens": 7, "output_tokens": 2}, **side),
        assistant("m1", "main again", {"input_tokens": 5, "output_tokens": 3}),
        assistant("s1", "side again", {"input_tokens": 7, "output_tokens": 4}, **side),
    )
    assert body(result) == (
        "a: main tokens_in=5 tokens_out=1\n"
        "a: side tid=x1 tokens_in=7 tokens_out=2\n"
        "a: main again tokens_in=5 tokens_out=3\n"
        "a: side again tid=x1 tokens_in=7 tokens_out=4\n"
        "# tokens_in=12 tokens_out=7 tokens_cached=0\n"
    )


def test_a_new_message_in_a_thread_ends_that_thread_s_message() -> None:
    side = {"isSidechain": True, "agentId": "x1"}
    result = run(
        assistant("m1", "main", {"input_tokens": 5}),
        assistant("s1", "side", {"input_tokens": 7}, **side),
        assistant("s2", "side two", {"input_tokens": 11}, **side),
        assistant("m2", "main two", {"input_tokens": 13}),
    )
    assert body(result).endswith("# tokens_in=36 tokens_out=0 tokens_cached=0\n")


def test_a_counter_a_later_record_adds_at_zero_stays_zero() -> None:
    result = run(
        assistant("m1", "one", {"input_tokens": 5}),
        assistant("m1", "two", {"output_tokens": 0}),
    )
    assert body(result) == (
        "a: one tokens_in=5\na: two tokens_in=5 tokens_out=0\n# tokens_in=5 tokens_out=0 tokens_cached=0\n"
    )


def test_the_usage_of_messages_without_an_id_is_reported_on_their_lines() -> None:
    result = run(
        user("hi"), assistant(None, "one", {"input_tokens": 5}), assistant("", "two", {"input_tokens": 5})
    )
    assert rows(result)[("kept", KEPT)] == ((2, 3), 2)
