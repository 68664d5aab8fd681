"""BLAS threads in warmbo's hot paths: one thread unless the user asks for more.

A Bayesian-optimisation step factorises and multiplies matrices of a few hundred to a few thousand
rows, many times. Multi-threaded OpenBLAS on matrices that small gains little on an idle machine and
loses badly on a busy one, where its threads spin waiting for cores other processes hold (measured
both ways by ``bench/blas_threads.py``; figures in ``docs/optimizer.md``).

So every public entry point that does linear algebra (``Optimizer.ask``, ``fit_model``,
``predict``, ``GP.fit``/``add``/``predict``, the demo, and each ask inside ``Optimizer.run``, which
calls the undecorated ``_ask_one``, so that is decorated too) runs under :func:`blas_limited`, which holds
the BLAS libraries loaded in the process (through threadpoolctl) at ``WARMBO_BLAS_THREADS`` threads,
default 1. ``WARMBO_BLAS_THREADS=0`` leaves the BLAS as it is. The limit is process-wide while it
holds (that is how BLAS libraries work) and is restored when the outermost call returns; objective
evaluations in :meth:`Optimizer.run` run outside it.

threadpoolctl's controller sees the BLAS libraries loaded when it is made. NumPy and SciPy wheels each
bundle their own OpenBLAS, and ``import warmbo`` does not load SciPy (issue 15: import cost), so the
controller is made after ``scipy.linalg`` is imported: made earlier, it held NumPy's BLAS at one
thread and left SciPy's, which runs the Cholesky factorisations and triangular solves, at its
default (two threads on a 2-core machine, found by a fresh-process test).

What is written by hand here is only the nesting: nested calls (``ask`` calls ``GP.fit``, which is
also public) reuse the outer limit through a thread-local depth, so an inner call costs next to
nothing instead of a threadpoolctl call.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["blas_limited", "blas_threads", "limit_blas"]

F = TypeVar("F", bound=Callable)

_state = threading.local()
_controller = None


def blas_threads() -> int:
    """The number of BLAS threads warmbo's hot paths use: ``WARMBO_BLAS_THREADS`` (default 1; 0 means
    the BLAS library's own setting)."""
    return _env_count("WARMBO_BLAS_THREADS", 1, 0)


def _env_count(name: str, default: int, least: int) -> int:
    """The integer environment variable ``name`` (``default`` when unset or blank), at least ``least``."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    kind = "non-negative" if least == 0 else "positive"
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a {kind} integer, got {raw!r}") from None
    if value < least:
        raise ValueError(f"{name} must be a {kind} integer, got {raw!r}")
    return value


@contextmanager
def limit_blas():
    """Hold BLAS at :func:`blas_threads` threads for the duration of the block (outermost block only)."""
    depth = getattr(_state, "depth", 0)
    if depth:
        _state.depth = depth + 1
        try:
            yield
        finally:
            _state.depth = depth
        return
    threads = blas_threads()
    if threads == 0:
        _state.depth = 1
        try:
            yield
        finally:
            _state.depth = 0
        return
    global _controller
    if _controller is None:
        import scipy.linalg  # noqa: F401  (loads SciPy's own BLAS, so that the controller sees it)
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    with _controller.limit(limits=threads, user_api="blas"):
        _state.depth = 1
        try:
            yield
        finally:
            _state.depth = 0


def blas_limited(fn: F) -> F:
    """Decorator: run ``fn`` under :func:`limit_blas`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with limit_blas():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def source_threads() -> int:
    """Threads that condition independent GPs at once (RGPE's one GP per source, on hyperparameters
    fitted or restored before): ``WARMBO_SOURCE_THREADS`` (0 or unset: the default), by default the
    cores this process may use (at most 8) when BLAS runs on one thread (``WARMBO_BLAS_THREADS`` 1,
    the default), else 1 (threads times BLAS threads would oversubscribe the cores); 1 conditions
    them one after another. A GP's conditioning (kernel matrix, Cholesky factor, solves) runs in
    NumPy and LAPACK without the GIL, so the threads use the cores."""
    given = _env_count("WARMBO_SOURCE_THREADS", 0, 0)  # (0, as unset: the default)
    if given:
        return given
    if blas_threads() != 1:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # (not on Linux)
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


def map_limited(fn: Callable, items: list, threads: int) -> list:
    """``[fn(item) for item in items]`` on up to ``threads`` threads, in order, under one BLAS limit
    held by the calling thread (the workers' nested :func:`blas_limited` calls reuse it rather than
    calling threadpoolctl from several threads at once). What the workers warn through
    :func:`warmbo._warnings.warn` is said afterwards by the calling thread, in the items' order, at
    its caller's line. An exception (or Ctrl-C) cancels the items not started and is raised once the
    running ones end. ``fn`` must not change ``warnings`` filters (``catch_warnings`` is not
    thread-safe): only conditioning runs here, not a hyperparameter fit."""
    if threads <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    from ._warnings import held_warnings, warn

    with limit_blas():
        depth = getattr(_state, "depth", 0)

        def nested() -> None:
            _state.depth = depth  # (the limit is process-wide: held here while the pool runs)

        def run(item):
            with held_warnings() as said:
                return fn(item), said

        pool = ThreadPoolExecutor(min(threads, len(items)), initializer=nested)
        try:
            results = list(pool.map(run, items))
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    for _, said in results:
        for message, category in said:
            warn(message, category)
    return [value for value, _ in results]
