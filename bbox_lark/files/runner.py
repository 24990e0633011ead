"""The one runner: a job per input over many inputs, on every core, results in the inputs'
order (docs/design.md, "One runner").

``check``, ``convert``, ``stats``, ``export``, ``report`` and ``fmt``/``fix``/``redact`` run
their files through :func:`run_each`. It decides once, for all of them, whether worker
processes pay (:data:`PARALLEL_MIN_BYTES` of files to share, or a caller that needs the pool
for one large file), keeps at most :data:`IN_FLIGHT_PER_WORKER` inputs per worker in flight
(memory does not grow with the number of files), turns a worker's failure into that input's
result (the run goes on), does in this process, in turn, what cannot go to a worker (standard
input, an unusable path, a file streamed here), and tells a ``progress`` callback after each
result. The output is the same whatever the number of jobs.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

T = TypeVar("T")
R = TypeVar("R")

#: ``--jobs``: a number of worker processes, or ``auto`` (the cores available).
Jobs = int | Literal["auto"]

#: Below this many bytes of files to share, a run stays in this process: starting worker
#: processes would cost more than they save (one threshold for every command).
PARALLEL_MIN_BYTES = 1 << 20

#: Inputs in flight per worker process: enough to keep the workers busy, few enough that
#: memory stays bounded by a few files' results, not by the number of files.
IN_FLIGHT_PER_WORKER = 4

#: A job a worker process can do: a module-level function and its (picklable) arguments.
Job = tuple[Callable[..., Any], tuple[Any, ...]]

#: Called after each result: (results so far, inputs in all).
Progress = Callable[[int, int], None]


def job_count(jobs: Jobs | None) -> int:
    """Worker processes for ``jobs`` (a number, or ``"auto"``/None: the cores available)."""
    if isinstance(jobs, int):
        return jobs
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def file_size(path: str) -> int:
    """The size of ``path`` in bytes; 0 when it cannot be read (it is reported when read)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def run_each(
    items: Iterable[T],
    far: Callable[[T], Job | None],
    here: Callable[[T, Executor | None], R],
    failed: Callable[[T, BaseException], R],
    *,
    jobs: Jobs | None = 1,
    size: Callable[[T], int] | None = None,
    needs_pool: bool = False,
    in_flight_per_worker: int = IN_FLIGHT_PER_WORKER,
    progress: Progress | None = None,
) -> Iterator[R]:
    """Each item's result, in the items' order.

    ``far(item)`` is the :data:`Job` a worker process may do for ``item``, or None when the
    item is done here, in turn, by ``here(item, pool)`` (``pool`` is the worker pool when the
    run is parallel, for a job that spreads its own parts over it, else None); ``here`` is
    also how a far item is done when the run stays in this process or the pool broke.
    ``failed(item, error)`` is the item's result when its job raised in a worker (a worker
    that died included). The run is parallel when ``jobs`` gives more than one worker and
    either ``needs_pool`` or the far items are at least two and hold
    :data:`PARALLEL_MIN_BYTES` (``size(item)``, default: none counted). At most
    ``in_flight_per_worker`` items per worker are sent ahead of the one whose result is due."""
    listed: Sequence[T] = items if isinstance(items, Sequence) else list(items)
    total = len(listed)
    plans = [far(item) for item in listed]
    far_count = sum(1 for plan in plans if plan is not None)
    workers = job_count(jobs) if needs_pool else min(job_count(jobs), far_count)
    shared = sum(size(item) for item, plan in zip(listed, plans, strict=True) if plan) if size else 0
    parallel = workers > 1 and (needs_pool or (far_count >= 2 and shared >= PARALLEL_MIN_BYTES))
    if not parallel:
        for done, item in enumerate(listed, 1):
            result = here(item, None)
            if progress is not None:
                progress(done, total)
            yield result
        return
    yield from _in_pool(listed, plans, here, failed, workers, workers * in_flight_per_worker, progress)


def _in_pool(
    items: Sequence[T],
    plans: list[Job | None],
    here: Callable[[T, Executor | None], R],
    failed: Callable[[T, BaseException], R],
    workers: int,
    window: int,
    progress: Progress | None,
) -> Iterator[R]:
    from concurrent.futures import ProcessPoolExecutor

    total = len(items)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        queue: deque[tuple[T, Future[Any] | None]] = deque()
        todo = iter(zip(items, plans, strict=True))
        broken = False  # a worker died and took the pool: the items not yet sent are done here

        def submit() -> bool:
            nonlocal broken
            entry = next(todo, None)
            if entry is None:
                return False
            item, plan = entry
            future = None
            if plan is not None and not broken:
                function, arguments = plan
                try:
                    future = pool.submit(function, *arguments)
                except RuntimeError:  # BrokenProcessPool, or the pool shutting down
                    broken = True
            queue.append((item, future))
            return True

        while len(queue) < window and submit():
            pass
        done = 0
        while queue:
            item, future = queue.popleft()
            submit()
            if future is None:
                result = here(item, None if broken else pool)
            else:
                try:
                    result = future.result()
                except Exception as error:  # its worker failed: this item says so, the run goes on
                    result = failed(item, error)
            done += 1
            if progress is not None:
                progress(done, total)
            yield result


def in_order(pool: Executor, window: int, parts: Iterable[T], job: Callable[[T], Job]) -> Iterator[Any]:
    """Each part's result, in order, at most ``window`` parts in flight on an existing
    ``pool`` (the parts of one large file, :mod:`bbox_lark.checks.parallel`)."""
    queue: deque[Future[Any]] = deque()
    todo = iter(parts)

    def submit() -> bool:
        part = next(todo, None)
        if part is None:
            return False
        function, arguments = job(part)
        queue.append(pool.submit(function, *arguments))
        return True

    while len(queue) < window and submit():
        pass
    while queue:
        done = queue.popleft().result()
        submit()
        yield done
