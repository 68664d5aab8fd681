"""Optimizer.run with a dask.distributed executor (issue 16, item 5): a real LocalCluster of two
single-threaded worker processes evaluates the objective; results come back, an objective that
raises marks its trial failed, and every trial is stored."""

from __future__ import annotations

import warnings

import pytest
from dask.distributed import Client, LocalCluster

import warmbo as wb
from warmbo.optimizer import TrialFailedWarning


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            yield client


def test_run_on_a_dask_cluster(client, tmp_path):
    def objective(params):  # nested: shipped to the workers by value
        from distributed import get_worker

        get_worker()  # raises ValueError outside a Dask worker: the evaluation ran on the cluster
        # x > 1 is the top quarter of x's range: the first 4 points of the scrambled Sobol design form
        # a (0, 2, 2)-net, one point in each quarter of each axis, so one design point always fails
        # (x > 1.5 was reached only by the model's later, completion-order-dependent suggestions)
        if params["x"] > 1.0:
            raise RuntimeError("diverged")
        return (params["x"] - 0.3) ** 2 + (params["y"] + 0.2) ** 2

    space = wb.Space([wb.Float("x", -2.0, 2.0), wb.Float("y", -2.0, 2.0)])
    url = f"sqlite:///{tmp_path / 'dask.db'}"
    opt = wb.Optimizer(space, seed=0, storage=url)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TrialFailedWarning)
        best = opt.run(objective, budget=16, n_workers=2, executor=client.get_executor(), progress=False)
    history = wb.Optimizer.load(url).history  # everything was committed to the store
    failed = [t for t in history if t.state == "failed"]
    assert len(history) == 16 and all(t.state in ("complete", "failed") for t in history)
    assert failed and all(t.params["x"] > 1.0 and "diverged" in t.error for t in failed)
    assert len(caught) == len(failed)
    assert all(t.params["x"] <= 1.0 for t in history if t.state == "complete")
    assert best.value < 0.01, best  # random search: P(loss < 0.01 in 16 draws) ~ 3%
