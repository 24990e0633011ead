"""The one runner (``bbox_lark.files.runner``): every many-file command's job per input, in
order, on every core, with a bounded window, errors per input and progress."""

from __future__ import annotations

import os
from concurrent.futures import Executor
from typing import Any

import pytest

from bbox_lark.files import runner
from bbox_lark.files.runner import in_order, job_count, run_each


def square(n: int) -> int:
    return n * n


def pid_of(n: int) -> tuple[int, int]:
    return n, os.getpid()


def fail_on_three(n: int) -> int:
    if n == 3:
        raise ValueError("three")
    return n


def die_on_two(n: int) -> int:
    if n == 2:
        os._exit(7)  # the worker process dies: the pool is broken
    return n


def _here(n: int, pool: Executor | None) -> int:
    return -n


def _failed(n: int, error: BaseException) -> str:
    return f"{n}: {type(error).__name__}"


@pytest.fixture
def parallel_always(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)


def test_job_count() -> None:
    assert job_count(3) == 3
    assert job_count("auto") >= 1
    assert job_count(None) == job_count("auto")


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_results_come_in_the_inputs_order(parallel_always: None, jobs: int) -> None:
    items = list(range(40))
    got = list(run_each(items, lambda n: (square, (n,)), _here, _failed, jobs=jobs, size=lambda n: 1))
    # One job: every item done here (no pool); more: every item by a worker.
    assert got == ([-n for n in items] if jobs == 1 else [n * n for n in items])


def test_items_without_a_job_are_done_here_in_turn(parallel_always: None) -> None:
    items = list(range(12))
    far = lambda n: None if n % 3 == 0 else (square, (n,))  # noqa: E731
    got = list(run_each(items, far, _here, _failed, jobs=2, size=lambda n: 1))
    assert got == [-n if n % 3 == 0 else n * n for n in items]


def test_a_small_run_stays_in_this_process() -> None:
    # Below PARALLEL_MIN_BYTES: no worker process is started; `here` does every item.
    got = list(run_each(range(5), lambda n: (pid_of, (n,)), _here, _failed, jobs=4, size=lambda n: 10))
    assert got == [0, -1, -2, -3, -4]


def test_a_large_run_goes_to_worker_processes(parallel_always: None) -> None:
    got = list(run_each(range(6), lambda n: (pid_of, (n,)), _here, _failed, jobs=2, size=lambda n: 1))
    assert [n for n, _ in got] == list(range(6))
    assert all(pid != os.getpid() for _, pid in got)


def test_one_job_never_starts_a_pool(parallel_always: None) -> None:
    got = list(run_each(range(4), lambda n: (pid_of, (n,)), _here, _failed, jobs=1, size=lambda n: 1))
    assert got == [0, -1, -2, -3]


def test_a_failing_job_is_that_items_result_and_the_run_goes_on(parallel_always: None) -> None:
    got = list(run_each(range(6), lambda n: (fail_on_three, (n,)), _here, _failed, jobs=2, size=lambda n: 1))
    assert got == [0, 1, 2, "3: ValueError", 4, 5]


def test_a_dead_worker_fails_its_items_and_the_rest_are_done_here(parallel_always: None) -> None:
    got = list(run_each(range(20), lambda n: (die_on_two, (n,)), _here, _failed, jobs=2, size=lambda n: 1))
    assert len(got) == 20
    assert got[:2] == [0, 1]
    assert got[2] == "2: BrokenProcessPool"
    # Every later item has a result: from a worker, a failure, or done here once the pool broke.
    for n, result in enumerate(got[3:], 3):
        assert result in (n, -n) or result == f"{n}: BrokenProcessPool"


class _CountingPool:
    """A stand-in for the process pool that runs each job at once and counts how many were
    sent ahead of the results taken (the runner's window)."""

    def __init__(self, max_workers: int) -> None:
        self.max_workers = max_workers

    def __enter__(self) -> _CountingPool:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, function: Any, *arguments: Any) -> Any:
        from concurrent.futures import Future

        _SENT.append(arguments[0])
        future: Future[Any] = Future()
        future.set_result(function(*arguments))
        return future


_SENT: list[int] = []


def test_the_in_flight_window_is_bounded(parallel_always: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """No more than workers x in_flight_per_worker items are sent ahead of the one due."""
    import concurrent.futures

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", _CountingPool)
    _SENT.clear()
    ahead: list[int] = []
    for taken, _ in enumerate(
        run_each(
            range(40),
            lambda n: (square, (n,)),
            _here,
            _failed,
            jobs=2,
            size=lambda n: 1,
            in_flight_per_worker=3,
        ),
        1,
    ):
        ahead.append(len(_SENT) - taken)
    assert max(ahead) <= 2 * 3
    assert max(ahead) >= 2 * 3 - 1  # the window is used, not one at a time
    assert list(range(40)) == _SENT


def test_in_order_keeps_at_most_the_window_in_flight() -> None:
    from concurrent.futures import Future

    submitted: list[int] = []
    resolved: list[int] = []

    class Pool:
        def submit(self, function: Any, *arguments: Any) -> Future[Any]:
            submitted.append(arguments[0])
            # The window, plus the one result being handed over (taken, not yet received).
            assert len(submitted) - len(resolved) <= 3 + 1, "more than the window in flight"
            future: Future[Any] = Future()
            future.set_result(function(*arguments))
            return future

    for result in in_order(Pool(), 3, range(10), lambda n: (square, (n,))):  # type: ignore[arg-type]
        resolved.append(result)
    assert resolved == [n * n for n in range(10)]
    assert submitted == list(range(10))


def test_progress_is_told_after_each_result(parallel_always: None) -> None:
    seen: list[tuple[int, int]] = []
    list(
        run_each(
            range(5),
            lambda n: (square, (n,)),
            _here,
            _failed,
            jobs=2,
            size=lambda n: 1,
            progress=lambda d, t: seen.append((d, t)),
        )
    )
    assert seen == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    seen.clear()
    list(
        run_each(range(3), lambda n: None, _here, _failed, jobs=1, progress=lambda d, t: seen.append((d, t)))
    )
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_needs_pool_gives_here_the_pool(parallel_always: None) -> None:
    pools: list[object] = []

    def here(n: int, pool: Executor | None) -> int:
        pools.append(pool)
        return -n

    assert list(run_each(range(2), lambda n: None, here, _failed, jobs=2, needs_pool=True)) == [0, -1]
    assert all(pool is not None for pool in pools)
    pools.clear()
    assert list(run_each(range(2), lambda n: None, here, _failed, jobs=2)) == [0, -1]
    assert pools == [None, None]
