"""The ATIF writer's spilled indices (``bbox_lark/convert/atif/spill.py``), pinned down where
mutation testing found nothing holding them: every key answered exactly once its entry moved
to the table (values, None, a value pickle cannot write, keys the table cannot hold, keys with
undecodable bytes), the size, ``setdefault`` and ``in``, what moves and what stays, and a
Python without ``sqlite3`` (docs/testing.md, "Mutation testing")."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from bbox_lark.convert.atif.spill import SpillMap, id_code, int_code, key_code


@pytest.fixture(autouse=True)
def _small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SpillMap, "RECENT", 3)


def _filled(code: Any, items: list[tuple[Any, Any]]) -> SpillMap:
    spill = SpillMap(code)
    for key, value in items:
        spill[key] = value
    return spill


def test_the_codes_name_what_the_table_can_hold() -> None:
    assert key_code(("id", "x")) == ("id", "x")
    assert id_code("call_1") == ("", "call_1") and id_code(7) is None and id_code(["a"]) is None
    assert int_code(7) == ("", "7") and int_code(-(2**63)) == ("", str(-(2**63)))
    assert int_code("7") is None and int_code(True) is None and int_code(7.0) is None


def test_entries_moved_to_the_table_are_answered_exactly() -> None:
    items: list[tuple[Any, Any]] = [
        (("id", "a"), {"step": 1}),
        (("id", "b"), None),  # None is a value, told apart from a missing key
        (("span", "a"), [1, 2]),
        (("id", "\udcff"), "undecodable"),
        (("id", "c"), 0),
        (("id", "d"), "last"),
    ]
    spill = _filled(key_code, items)
    assert len(spill) == 6 and len(spill._recent) == 0  # every entry moved, in two batches
    for key, value in items:
        assert spill.get(key, "missing") == value and key in spill
    assert spill.get(("id", "e"), "missing") == "missing" and ("id", "e") not in spill
    assert spill.get(("span", "b")) is None and ("span", "b") not in spill
    assert spill.get(("id", "A"), "missing") == "missing"  # no other key's entry
    spill.close()


def test_an_entry_set_again_after_it_moved_is_the_new_value() -> None:
    spill = _filled(key_code, [(("id", "x"), 1), (("id", "y"), 2), (("id", "z"), 3)])
    spill[("id", "x")] = 10  # recent again, over the table's
    assert spill.get(("id", "x")) == 10
    for n in range(3):
        spill[("id", f"w{n}")] = n  # the new value moves too, replacing the old one
    assert spill.get(("id", "x")) == 10 and len(spill._recent) == 1
    spill.close()


def test_keys_and_values_the_table_cannot_hold_stay_in_memory() -> None:
    def unpicklable() -> int:
        return 1

    items: list[tuple[Any, Any]] = [("a", 1), (7, 2), ("b", unpicklable), (("t",), 3), ("c", 4), ("d", 5)]
    spill = _filled(id_code, items)
    assert spill._kept == {7: 2, "b": unpicklable, ("t",): 3}
    assert len(spill) == 6
    for key, value in items:
        assert spill.get(key) is value and key in spill
    assert "7" not in spill and 8 not in spill and spill.get(("u",), "no") == "no"
    spill.close()
    # A value pickle cannot write first in its batch: the entries after it move all the same.
    first = _filled(id_code, [("f", unpicklable), ("g", 1), ("h", None)])
    assert first._kept == {"f": unpicklable} and first._recent == {}
    assert (first.get("f"), first.get("g"), first.get("h", "no")) == (unpicklable, 1, None)
    assert len(first) == 3
    first.close()


def test_setdefault_and_add() -> None:
    steps = SpillMap(int_code)
    assert steps.setdefault(1, "one") == "one"
    assert steps.setdefault(1, "uno") == "one"
    steps.add(2)
    steps.add(3)  # the third entry: all three move
    assert steps.setdefault(1, "uno") == "one" and steps.setdefault(2, "two") is None
    assert steps.setdefault(4, "four") == "four" and steps.get(4) == "four"
    assert 3 in steps and 5 not in steps and len(steps) == 4
    steps.close()


def test_nothing_moves_before_the_limit_and_a_closed_map_holds_no_table() -> None:
    spill = _filled(key_code, [(("id", "x"), 1), (("id", "y"), 2)])
    assert spill._db is None and len(spill._recent) == 2 and len(spill) == 2
    spill[("id", "z")] = 3
    assert spill._db is not None and spill._recent == {} and len(spill) == 3
    spill.close()
    assert spill._db is None
    spill.close()  # twice: nothing to close


def test_without_sqlite3_every_entry_stays_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlite3", None)  # what a Python built without it looks like
    items = [(("id", str(n)), n) for n in range(10)]
    spill = _filled(key_code, items)
    assert spill._db is None and len(spill._recent) == 10 and len(spill) == 10
    assert all(spill.get(key) == value for key, value in items)
    spill.close()
