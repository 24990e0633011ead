"""The steps of a trajectory being written (``bbox_lark/convert/atif/steps.py``): which steps
stay held as dicts and which are put away, and that a step comes back as it was left, so
a late result or ``# metrics step=N`` lands in the step it names (docs/testing.md, "Mutation
scores"). A held step is the very dict :meth:`StepStore.get` gave before; one put away comes
back as a fresh copy."""

from __future__ import annotations

import pytest

from bbox_lark.convert.atif.steps import CallRef, FewValues, StepStore


def _store(monkeypatch: pytest.MonkeyPatch, held: int) -> StepStore:
    monkeypatch.setattr(StepStore, "HELD", held)
    return StepStore()


def test_steps_are_numbered_in_the_order_they_are_added(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(monkeypatch, 2)
    steps = [{"step_id": n + 1, "metrics": {"prompt_tokens": 10 * n}} for n in range(6)]
    assert [store.add(step) for step in steps] == [0, 1, 2, 3, 4, 5]
    assert len(store) == 6
    for n, step in enumerate(steps):
        assert store.load(n) == step  # held or put away, each as it was left
    store.close()


def test_the_oldest_step_is_put_away_beyond_the_held_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(monkeypatch, 2)  # two held, plus the one being added
    steps = [{"n": n} for n in range(4)]
    for step in steps[:3]:
        store.add(step)
    assert all(store.get(n) is steps[n] for n in range(3))  # three: still held
    store.add(steps[3])  # four: the least recently used (step 0) goes
    assert store.get(3) is steps[3] and store.get(2) is steps[2] and store.get(1) is steps[1]
    back = store.get(0)
    assert back == steps[0] and back is not steps[0]
    store.close()


def test_a_step_used_again_stays_held(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(monkeypatch, 1)
    first, second, third = {"n": 0}, {"n": 1}, {"n": 2}
    store.add(first)
    store.add(second)
    assert store.get(0) is first  # used last now: step 1 is the oldest
    store.add(third)
    assert store.get(0) is first and store.get(2) is third
    assert store.get(1) is not second and store.get(1) == second
    store.close()


def test_the_pinned_step_is_never_put_away(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(monkeypatch, 0)
    steps = [{"n": n} for n in range(5)]
    store.add(steps[0])
    store.pinned = 0
    for step in steps[1:]:
        store.add(step)
    assert store.get(0) is steps[0]  # the writer's current step, however many came after
    assert store.get(4) is steps[4]
    assert store.get(1) is not steps[1] and store.get(1) == steps[1]
    store.close()


def test_a_change_to_a_step_brought_back_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # A call's result arriving long after its step was left: the step is read back, changed,
    # and the change is what is written.
    store = _store(monkeypatch, 0)
    for n in range(4):
        store.add({"step_id": n + 1, "observation": None})
    step = store.get(1)
    step["observation"] = {"results": [{"content": "late"}]}
    store.get(3)
    store.get(2)
    store.put_away()
    assert store.load(1) == {"step_id": 2, "observation": {"results": [{"content": "late"}]}}
    assert store.load(0) == {"step_id": 1, "observation": None}
    assert store.index_of(store.get(1)) == 1
    store.close()


def test_a_loaded_step_is_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(monkeypatch, 8)
    step = {"metrics": {"prompt_tokens": 5}}
    store.add(step)
    copy = store.load(0)
    copy["metrics"]["prompt_tokens"] = 99
    assert step["metrics"]["prompt_tokens"] == 5 and store.get(0) is step
    store.close()


def test_put_away_writes_every_step_and_unpins(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(monkeypatch, 8)
    steps = [{"n": n} for n in range(3)]
    for step in steps:
        store.add(step)
    store.pinned = 1
    store.put_away()
    assert store.pinned == -1
    for n, step in enumerate(steps):
        back = store.get(n)
        assert back == step and back is not step
        assert store.index_of(back) == n
    with pytest.raises(KeyError):
        store.index_of(steps[0])  # put away: no longer held
    store.close()
    store.close()  # twice is harmless


def test_a_step_pickle_cannot_write_stays_held(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(monkeypatch, 0)
    odd = {"call": lambda: None}  # pickle cannot write a lambda; a deep copy keeps it
    store.add(odd)
    steps = [{"n": n} for n in range(4)]
    for step in steps:
        store.add(step)
    # The others are put away past it, as if it were not there.
    assert store.get(1) is not steps[0] and store.get(1) == steps[0]
    store.put_away()
    assert store.get(0) is odd and store.load(0)["call"] is odd["call"]
    assert store.load(0) is not odd
    assert all(store.get(n + 1) == step for n, step in enumerate(steps))
    store.close()


def test_a_store_that_puts_nothing_away_has_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(monkeypatch, 8)
    store.add({"n": 0})
    store.close()
    assert store._file is None


def test_a_call_ref_reads_the_step_the_id_and_the_kind() -> None:
    assert CallRef.of(3, {"tool_call_id": "t1", "extra": {"kind": "x"}}) == CallRef(3, "t1", "x")
    assert CallRef.of(0, {"tool_call_id": "t2"}) == CallRef(0, "t2", None)
    assert CallRef.of(0, {"tool_call_id": "t2", "extra": None}).kind is None


def test_few_values_keep_each_entry() -> None:
    values = FewValues()
    for value in ["main", "sub", "main", None, "sub"]:
        values.append(value)
    assert len(values) == 5
    assert [values[n] for n in range(5)] == ["main", "sub", "main", None, "sub"]
    values[0] = "other"
    values[3] = "main"
    assert [values[n] for n in range(5)] == ["other", "sub", "main", "main", "sub"]
    assert len(values._values) == 4  # each distinct value once


def test_a_step_pickle_cannot_write_does_not_take_a_held_place(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(monkeypatch, 1)  # one held, plus the one being added, plus the odd one
    odd = {"call": lambda: None}
    store.add(odd)
    store.add({"n": 0})
    store.put_away()  # the odd step stays, for good
    first, second = {"n": 1}, {"n": 2}
    store.add(first)
    store.add(second)
    assert store.get(2) is first and store.get(3) is second and store.get(0) is odd
