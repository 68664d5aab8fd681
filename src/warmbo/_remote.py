"""How :meth:`warmbo.Optimizer.run` hands its objective to an executor (docs/scale.md, "Dask").

A ``concurrent.futures`` executor gets ``executor.submit(objective, params)`` for every evaluation.
For a ``dask.distributed`` client's executor (``client.get_executor()``) that serialises the objective,
and everything it holds, once per evaluation: a scikit-learn objective closing over its training
data sent the data with every trial (23 MiB per trial for a 60000 x 50 ``make_classification`` set,
with Dask's "Sending large graph" warning each time). The objective is instead sent once, as a
worker plugin (``client.register_plugin``): every worker loads it once, a worker that joins or is
restarted later gets it from the scheduler before its first task, and each evaluation sends only the
parameters and the plugin's name. Two ways that were tried and left: scattered data (a worker that
dies takes it with it for good: on a one-worker cluster every later evaluation was cancelled), and a
task whose result is the objective, which every evaluation depended on (Dask then placed the
evaluations by data locality on the worker holding it, so a harmless evaluation queued behind one
that killed that worker, was counted among the tasks at each of its deaths, and failed with
``KilledWorker``). Every other executor is used as it is. Written here because Dask has no
"send this function once" call of its own for futures (its advice is to scatter, which is the first
of the two above).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

__all__ = ["ObjectiveNotSentError", "Submitter", "executor_slots"]


class ObjectiveNotSentError(RuntimeError):
    """:meth:`warmbo.Optimizer.run` could not send its objective to a Dask cluster's workers (it does
    not pickle, or a worker cannot load it): no evaluation could run, and the run stops before any."""


def _by_value(plugin_base: type):
    """The plugin class and the function the workers run, made inside a function so that
    cloudpickle sends them by value: a module-level one goes by reference (``warmbo._remote.call``),
    and a worker without warmbo installed (a cluster built for the objective's own libraries; a
    function of the user's script needs nothing more) could not load it. ``plugin_base`` is Dask's
    ``WorkerPlugin``, passed in so that importing this module does not import Dask."""

    class ObjectivePlugin(plugin_base):  # type: ignore[misc, valid-type]
        """Holds one run's objective on a worker."""

        def __init__(self, objective: Callable[[dict], Any]):
            self.objective = objective

    def call(name: str, params: dict) -> Any:
        """Runs on a Dask worker: the objective its plugin ``name`` holds, at ``params``."""
        from distributed import get_worker

        plugin = get_worker().plugins.get(name)
        if plugin is None:  # (its run has ended, or this worker joined and could not load it)
            raise RuntimeError(
                f"this worker holds no objective named {name!r}: its run has ended, or the worker "
                "joined during the run and could not load the objective (its log says why: a module "
                "it lacks?)"
            )
        return plugin.objective(params)

    return ObjectivePlugin, call


#: the objective plugins' names: ``warmbo-objective|<client id>|<uuid>``
_PREFIX = "warmbo-objective"


def _release_orphans(client) -> None:
    """Unregister the objective plugins of runs whose client has gone (a driver killed, a kernel
    restarted): ``close()`` never ran for them, and the scheduler keeps a plugin, with everything
    its objective holds, for every worker that joins (the review: 8 MB left behind per killed run).
    Done at each run's first evaluation; a plugin of a client still connected is left alone."""
    try:
        names, clients = client.run_on_scheduler(
            lambda dask_scheduler: (list(dask_scheduler.worker_plugins), list(dask_scheduler.clients))
        )
    except Exception:  # noqa: BLE001 - a scheduler that cannot say: nothing released
        return
    for name in names:
        parts = str(name).split("|")
        if len(parts) == 3 and parts[0] == _PREFIX and parts[1] not in clients:
            with contextlib.suppress(Exception):
                client.unregister_worker_plugin(name)


def _dask_client(executor: Executor):
    """The ``dask.distributed`` client behind ``client.get_executor()``; None for any other executor."""
    client = getattr(executor, "_client", None)
    return client if type(executor).__module__.startswith("distributed.") else None


class Submitter:
    """``submit(params)`` starts ``objective(params)`` on ``executor``; ``close()`` releases what
    was sent ahead (the objective's plugin on a Dask cluster)."""

    def __init__(self, executor: Executor, objective: Callable[[dict], Any]):
        self.executor = executor
        self.objective = objective
        self.name: str | None = None
        self.client = _dask_client(executor)
        self.options = getattr(executor, "_kwargs", {})  # (get_executor's workers=, pure=, ...)
        self._call: Callable[[str, dict], Any] | None = None

    def submit(self, params: dict) -> Future:
        if self.client is None:
            return self.executor.submit(self.objective, params)
        if self.name is None:  # at the first evaluation: a run with nothing to do sends nothing
            from distributed.diagnostics.plugin import WorkerPlugin

            plugin_class, self._call = _by_value(WorkerPlugin)
            _release_orphans(self.client)
            name = f"{_PREFIX}|{self.client.id}|{uuid.uuid4().hex}"
            try:
                self.client.register_plugin(plugin_class(self.objective), name=name)
            except Exception as exc:
                with contextlib.suppress(Exception):  # (the workers that did load it)
                    self.client.unregister_worker_plugin(name)
                raise ObjectiveNotSentError(
                    f"the objective could not be sent to the Dask cluster's workers: "
                    f"{type(exc).__name__}: {exc}. An objective evaluated on a cluster is pickled "
                    "(cloudpickle: a function of your script goes by value, but what it holds must "
                    "pickle too: no locks, open files or connections; open them inside the function) "
                    "and loaded on each worker, so every module it imports must be installed there"
                ) from exc
            self.name = name
        # pure=False: Dask's default (pure=True) names a task by its arguments, and an evaluation of a
        # point evaluated just before (the repeats of a finite space, a noisy objective) got that
        # evaluation's result back without running the objective; every trial is an evaluation of
        # its own (unless the executor was made with pure= explicitly)
        pure = {} if "pure" in self.options else {"pure": False}
        return self.executor.submit(self._call, self.name, params, **pure)

    def workers(self) -> int | None:
        """How many workers the cluster has now (those the executor may use); None when this is no
        Dask executor or the scheduler cannot say."""
        if self.client is None:
            return None
        try:
            workers = self.client.scheduler_info().get("workers", {})
        except Exception:  # noqa: BLE001 - a client that cannot answer: nothing to say
            return None
        chosen = self.options.get("workers")
        if chosen is not None and not self.options.get("allow_other_workers", False):
            chosen = {chosen} if isinstance(chosen, str | int) else set(chosen)
            workers = {a: w for a, w in workers.items() if chosen & {a, w.get("host"), w.get("name")}}
        return len(workers)

    def close(self) -> None:
        name, self.name = self.name, None
        if name is not None:
            try:
                self.client.unregister_worker_plugin(name)
            except Exception:  # noqa: BLE001 - a closed client, a restarted scheduler: nothing to release
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
