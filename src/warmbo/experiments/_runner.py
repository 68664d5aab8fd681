"""What every reproduction shares: runs on a process pool with BLAS on one thread, and figures.

Each run is a pure function of its keyword arguments (seeds included), so results do not depend on
how many workers run them; BLAS is held to one thread per run, which gives the same numbers in every
process and avoids oversubscribing the cores.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from multiprocessing.connection import wait

import numpy as np

__all__ = [
    "limited",
    "ProcessPool",
    "process_pool",
    "running",
    "close_pool",
    "execute",
    "figure",
    "warning_texts",
]


def limited(fn: Callable, kwargs: dict):
    """``fn(**kwargs)`` with BLAS on one thread (same numbers in every process, no oversubscription)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return fn(**kwargs)


class _RecordingSpawnContext(multiprocessing.context.SpawnContext):
    """The spawn context, recording every process made through it: the pool's workers and nothing
    else (the executor makes its workers with ``mp_context.Process``)."""

    def __init__(self):
        super().__init__()
        self.made: list = []

    def Process(self, *args, **kwargs):  # noqa: N802 - the context's name for it
        process = multiprocessing.context.SpawnProcess(*args, **kwargs)
        self.made.append(process)
        return process


class ProcessPool(ProcessPoolExecutor):
    """A pool of spawned processes (no state leaks from the parent) that knows its workers: those
    made through its own multiprocessing context (the pool starts them as runs arrive).
    :func:`close_pool` ends them at once on Ctrl-C, and no other child of the process."""

    def __init__(self, workers: int):
        self._context = _RecordingSpawnContext()
        super().__init__(max_workers=int(workers), mp_context=self._context)

    def worker_processes(self) -> list:
        """The pool's live worker processes (``multiprocessing.Process`` objects). Before, every child
        of this process started since the pool was made, so a Ctrl-C also ended another's."""
        return running([p for p in self._context.made if p.pid is not None])


def running(processes: list) -> list:
    """Those of the started ``processes`` that have not ended, read from their sentinels.

    Not ``Process.is_alive()``: once a worker ends, the executor's own thread reaps it too (it joins
    its workers when the pool breaks), and ``is_alive()`` in another thread reads "still running"
    from a process that thread has just reaped. That made a test see a SIGTERM-ed worker (exit code
    -15) "alive" after :func:`close_pool` (about 1 time in 15 here), and close_pool SIGKILL a
    process id already freed.
    """
    ended = set(wait([p.sentinel for p in processes], timeout=0)) if processes else set()
    return [p for p in processes if p.sentinel not in ended]


def _wait_ended(processes: list, timeout: float) -> list:
    """Wait up to ``timeout`` seconds for ``processes`` to end; those still running."""
    deadline = time.monotonic() + timeout
    left = running(processes)
    while left and (remaining := deadline - time.monotonic()) > 0:
        wait([p.sentinel for p in left], timeout=remaining)
        left = running(left)
    return left


def process_pool(workers: int) -> ProcessPool:
    """A process pool of ``workers`` spawned processes (:class:`ProcessPool`)."""
    return ProcessPool(workers)


def close_pool(pool, interrupted: bool = False) -> None:
    """Shut ``pool`` down (nothing for an integer or None). ``interrupted`` (Ctrl-C, an error): the
    queued runs are cancelled and the worker processes ended at once. A plain ``shutdown()`` waited
    for every queued run of the part, at full CPU, after a Ctrl-C: `warmbo reproduce --workers 2`
    went on for minutes before it stopped, its results thrown away."""
    if not isinstance(pool, Executor):
        return
    if not interrupted:
        pool.shutdown()
        return
    # (ProcessPoolExecutor has no public accessor of its processes before Python 3.14's
    # terminate_workers; ProcessPool records them as its context makes them)
    processes = pool.worker_processes() if isinstance(pool, ProcessPool) else []
    pool.shutdown(wait=False, cancel_futures=True)
    for process in running(processes):
        process.terminate()
    # a worker that outlives SIGTERM by 5 s (none seen: the worker "alive" after close_pool that CI
    # saw was is_alive() misreading one the executor's thread had reaped; see `running`) is SIGKILLed
    for process in _wait_ended(processes, timeout=5):
        process.kill()
    _wait_ended(processes, timeout=5)
    for process in processes:
        process.join(timeout=0)  # reap it here if the executor's thread has not


def execute(fn: Callable, jobs: list[dict], workers, progress, description: str) -> list:
    """``[fn(**job) for job in jobs]`` in order, inline or on a pool, advancing a rich ``progress``.

    ``workers`` is a positive integer (1: inline; more: a pool made here), an Executor, or None (inline).
    """
    task = progress.add_task(description, total=len(jobs)) if progress is not None else None
    if workers is None:
        pool, own = None, False
    elif isinstance(workers, Executor):
        pool, own = workers, False
    elif isinstance(workers, int | np.integer) and not isinstance(workers, bool) and workers >= 1:
        pool, own = (process_pool(workers), True) if workers > 1 else (None, False)
    else:
        raise ValueError(f"workers must be a positive integer or an Executor, got {workers!r}")
    results: list = [None] * len(jobs)
    try:
        if pool is None:
            for i, job in enumerate(jobs):
                results[i] = limited(fn, job)
                if task is not None:
                    progress.advance(task)
        else:
            futures = {pool.submit(limited, fn, job): i for i, job in enumerate(jobs)}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                if task is not None:
                    progress.advance(task)
    except BaseException:
        if own:
            close_pool(pool, interrupted=True)
        raise
    if own:
        close_pool(pool)
    return results


def figure(width: float, height: float, ncols: int):
    """A matplotlib Figure on the Agg canvas (no pyplot state) and its ``ncols`` axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig, fig.subplots(1, ncols)


def warning_texts(caught) -> list[str]:
    """Distinct warnings caught during a run, as ``Category: message`` strings."""
    return sorted({f"{w.category.__name__}: {w.message}" for w in caught})
