"""How :meth:`warmbo.Optimizer.run` hands its objective to an executor (docs/scale.md, "Dask").

A ``concurrent.futures`` executor gets ``executor.submit(objective, params)`` for every evaluation.
For a ``dask.distributed`` client's executor (``client.get_executor()``) that serialises the objective,
and everything it holds, once per evaluation: a scikit-learn objective closing over its training
data sent the data with every trial (23 MiB per trial for a 60000 x 50 ``make_classification`` set,
with Dask's "Sending large graph" warning each time). The objective is instead sent once, as a task
whose result is the objective (each worker fetches it once), and each evaluation sends only the
parameters and a reference to that task, as Dask's best practices advise. Not scattered data: a
worker that dies takes scattered data with it for good (on a one-worker cluster every later
evaluation was then cancelled and the run crashed), while the scheduler computes a lost task's
result again. Every other executor is used as it is.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

__all__ = ["Submitter", "executor_slots"]


def _by_value():
    """The two functions the workers run, made inside a function so that cloudpickle sends them by
    value: a module-level function goes by reference (``warmbo._remote._call``), and a worker
    without warmbo installed (a cluster built for the objective's own libraries; before, the
    objective alone was sent, and a function of the user's script needs nothing more) could not
    load the task, and the run waited for it for ever."""

    def identity(objective: Callable[[dict], Any]) -> Callable[[dict], Any]:
        return objective

    def call(objective: Callable[[dict], Any], params: dict) -> Any:
        """Runs on a Dask worker, with the objective fetched once by that worker."""
        return objective(params)

    return identity, call


_identity, _call = _by_value()


def _dask_client(executor: Executor):
    """The ``dask.distributed`` client behind ``client.get_executor()``; None for any other executor."""
    client = getattr(executor, "_client", None)
    return client if type(executor).__module__.startswith("distributed.") else None


class Submitter:
    """``submit(params)`` starts ``objective(params)`` on ``executor``; ``close()`` releases what
    was sent ahead (the objective's task on a Dask cluster)."""

    def __init__(self, executor: Executor, objective: Callable[[dict], Any]):
        self.executor = executor
        self.objective = objective
        self.remote: Any = None
        self.client = _dask_client(executor)
        self.options = getattr(executor, "_kwargs", {})  # (get_executor's workers=, pure=, ...)

    def submit(self, params: dict) -> Future:
        if self.client is None:
            return self.executor.submit(self.objective, params)
        if self.remote is None or self.remote.cancelled():
            # at the first evaluation (a run with nothing to do sends nothing), and again after a
            # client.restart() forgot it. A task whose result is the objective, not scattered data: a
            # worker that dies (killed, out of memory) takes scattered data with it for good, and every
            # later evaluation was cancelled; a lost task result is computed again by the scheduler.
            # It goes where the executor sends evaluations (get_executor(workers=...)), and sending it
            # once is the remedy Dask's "Sending large graph" warning asks for, not its cause.
            where = {k: v for k, v in self.options.items() if k in ("workers", "allow_other_workers")}
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
                self.remote = self.client.submit(_identity, self.objective, pure=False, **where)
        # pure=False: Dask's default (pure=True) names a task by its arguments, and an evaluation of a
        # point evaluated just before (the repeats of a finite space, a noisy objective) got that
        # evaluation's result back without running the objective; every trial is an evaluation of
        # its own (unless the executor was made with pure= explicitly)
        pure = {} if "pure" in self.options else {"pure": False}
        return self.executor.submit(_call, self.remote, params, **pure)

    def close(self) -> None:
        remote, self.remote = self.remote, None
        if remote is not None:
            try:
                remote.release()
            except Exception:  # noqa: BLE001 - a closed client has released it already
                pass


def executor_slots(executor: Executor) -> int | None:
    """How many evaluations ``executor`` runs at once, when it says: a Dask client's executor, its
    cluster's threads now (those of its ``workers=`` only, unless ``allow_other_workers``); a
    thread or process pool, its ``max_workers``; else None."""
    client = _dask_client(executor)
    if client is not None:
        try:
            workers = client.scheduler_info().get("workers", {})
            options = getattr(executor, "_kwargs", {})
            chosen = options.get("workers")
            if chosen is not None and not options.get("allow_other_workers", False):
                # get_executor(workers=...): only those run its evaluations (named as Dask takes
                # them: an address, a host, or a worker's name)
                chosen = {chosen} if isinstance(chosen, str | int) else set(chosen)
                workers = {
                    address: w
                    for address, w in workers.items()
                    if chosen & {address, w.get("host"), w.get("name")}
                }
            return sum(int(w.get("nthreads", 1)) for w in workers.values()) or None
        except Exception:  # noqa: BLE001 - a client that cannot answer: nothing to say
            return None
    slots = getattr(executor, "_max_workers", None)
    return slots if isinstance(slots, int) else None
