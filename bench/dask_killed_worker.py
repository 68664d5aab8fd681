"""Harmless evaluations failed with ``KilledWorker`` beside one that kills its worker (session 50).

A Ray/Dask user's scenario: a ``LocalCluster`` of 2 single-threaded worker processes, Dask's
``allowed-failures`` 3, an objective that calls ``os._exit`` (a worker killed, out of memory) for
x > 1 on [-2, 2]^2, ``Optimizer(seed=0, n_initial=6)``, budget 14, 2 evaluations at once. A run
counts as *wrong* when a trial with x <= 1 (one that cannot kill) ends failed. Each run gets a fresh
cluster (``--reuse``: one cluster for every run, whose workers die and restart run after run).

Before session 50 every evaluation depended on a task holding the objective and Dask queued them on
the worker holding it; since, the objective is a worker plugin and evaluations go to a free worker.
Each arm runs in its own process on the ``src`` it is given::

    python bench/dask_killed_worker.py --src /path/to/old/src --label before --runs 4
    python bench/dask_killed_worker.py --label after --runs 15
    python bench/dask_killed_worker.py --label after-reused --runs 14 --reuse

Results: ``bench/results/dask_killed_worker.json`` (one entry per label, with the load average),
written after each run: with ``--reuse`` the ``LocalCluster`` can lose every worker for good after
many deaths (Dask's nanny, with the code before and after alike), and the runs then wait.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import warnings
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "dask_killed_worker.json"


def objective(params):
    if params["x"] > 1.0:
        import os

        os._exit(1)  # the worker process dies
    return (params["x"] - 0.3) ** 2 + (params["y"] + 0.2) ** 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    parser.add_argument("--label", default="after")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--reuse", action="store_true", help="one cluster for every run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    sys.path.insert(0, str(args.src))
    import dask
    from dask.distributed import Client, LocalCluster

    import warmbo as wb

    options = {
        "n_workers": 2,
        "threads_per_worker": 1,
        "processes": True,
        "dashboard_address": None,
        "silence_logs": logging.CRITICAL,
    }
    load = os.getloadavg()
    failed_harmless = []
    with contextlib.ExitStack() as stack:
        stack.enter_context(dask.config.set({"distributed.scheduler.allowed-failures": 3}))
        shared = (
            stack.enter_context(Client(stack.enter_context(LocalCluster(**options)))) if args.reuse else None
        )
        for run in range(args.runs):
            with contextlib.ExitStack() as own:
                client = shared or own.enter_context(Client(own.enter_context(LocalCluster(**options))))
                space = wb.Space([wb.Float("x", -2.0, 2.0), wb.Float("y", -2.0, 2.0)])
                opt = wb.Optimizer(space, seed=0, n_initial=6)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    opt.run(objective, budget=14, n_workers=2, executor=client.get_executor(), progress=False)
            wrong = [t.id for t in opt.history if t.state == "failed" and t.params["x"] <= 1.0]
            failed_harmless.append(wrong)
            print(f"{args.label} run {run}: harmless trials failed: {wrong or 'none'}", flush=True)
            _write(args, failed_harmless, load)  # (after each run: a cluster that loses every worker
            # for good, as a reused LocalCluster did after many deaths, leaves the runs waiting)
    print(
        f"{args.label}: {sum(bool(w) for w in failed_harmless)} of {len(failed_harmless)} runs failed a "
        f"harmless trial; wrote {args.out}"
    )


def _write(args, failed_harmless: list, load) -> None:
    stored = json.loads(args.out.read_text()) if args.out.exists() else {}
    stored[args.label] = {
        "src": str(args.src),
        "reuse": args.reuse,
        "runs": len(failed_harmless),
        "runs_with_a_harmless_trial_failed": sum(bool(w) for w in failed_harmless),
        "harmless_trials_failed": failed_harmless,
        "load_average_start": load,
        "load_average_end": os.getloadavg(),
    }
    args.out.write_text(json.dumps(stored, indent=1) + "\n")


if __name__ == "__main__":
    main()
