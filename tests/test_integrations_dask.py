"""Optimizer.run with a dask.distributed executor (issue 16, item 5): a real LocalCluster of two
single-threaded worker processes evaluates the objective; results come back, an objective that
raises marks its trial failed, and every trial is stored."""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from dask.distributed import Client, LocalCluster

import warmbo as wb
import warmbo.optimizer
from warmbo.optimizer import (
    InterruptedRunWarning,
    NoWorkersWarning,
    ObjectiveNotSentError,
    TrialFailedWarning,
)


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


def test_the_objective_and_its_data_reach_each_worker_once(client):
    # a scikit-learn objective closes over its training data; submitted with every evaluation, the
    # 16 MB array below was serialised into each trial's task (Dask's "Sending large graph" warning,
    # once per trial), 20 times for 20 trials. Scattered once, the tasks carry only the parameters.
    features = np.random.default_rng(0).standard_normal((40_000, 50))  # 16 MB

    def objective(params):
        from distributed import get_worker

        get_worker()  # evaluated on the cluster
        return float(features[:100, 0].mean()) + (params["alpha"] - 0.01) ** 2 + params["depth"] * 0.01

    space = wb.Space([wb.Float("alpha", 1e-4, 1.0, log=True), wb.Int("depth", 1, 4)])
    opt = wb.Optimizer(space, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        best = opt.run(objective, budget=12, n_workers=2, executor=client.get_executor(), progress=False)
    large = [w for w in caught if "large graph" in str(w.message)]
    assert not large, f"{len(large)} evaluations shipped the data: {large[0].message}"
    assert len(opt.history) == 12 and all(t.state == "complete" for t in opt.history)
    expected = float(features[:100, 0].mean())
    for t in opt.history:  # the values are the objective's, computed with the data
        assert t.value == pytest.approx(expected + (t.params["alpha"] - 0.01) ** 2 + t.params["depth"] * 0.01)
    assert best.value == min(t.value for t in opt.history)


def _dies_above(params):
    if params["x"] > 0.8:
        import os

        os._exit(1)  # the worker process dies (killed, out of memory)
    return params["x"]


def test_a_killed_worker_fails_its_trial_and_the_run_goes_on():
    # the objective is sent once as a worker plugin (not with every evaluation): when the only worker
    # dies, the restarted worker gets it from the scheduler. Scattered instead, it was lost with the
    # worker, every later evaluation was cancelled and the run raised CancelledError
    import dask

    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Int("k", 1, 3)])
    opt = wb.Optimizer(space, seed=0)
    one = {"n_workers": 1, "threads_per_worker": 1, "processes": True, "dashboard_address": None}
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), LocalCluster(**one) as cluster:
        with Client(cluster) as one_worker, warnings.catch_warnings():
            warnings.simplefilter("ignore", TrialFailedWarning)
            opt.run(_dies_above, budget=8, executor=one_worker.get_executor(), progress=False)
    failed = [t for t in opt.history if t.state == "failed"]
    assert len(opt.history) == 8
    assert failed and all(t.params["x"] > 0.8 and "KilledWorker" in t.error for t in failed)
    assert all(t.value == t.params["x"] for t in opt.history if t.state == "complete")


def _killer_at_the_top(params):
    import os
    import time

    if params["x"] > 0.8:
        time.sleep(1.0)  # still running when the harmless evaluations are submitted
        os._exit(1)
    time.sleep(0.2)
    return params["x"]


def test_a_harmless_evaluation_is_not_queued_behind_one_that_kills_its_worker():
    # (Ray/Dask user) every evaluation depended on one task holding the objective, and Dask placed
    # them by data locality on the worker holding it: a harmless evaluation queued behind one that
    # killed that worker and failed with KilledWorker (3 of 5 runs of this test before, 0 of 29 after;
    # with allowed-failures 0 one death is enough). Evaluations now depend on nothing and go to the
    # worker with a free thread.
    import dask

    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0)
    opt.enqueue([{"x": 0.9}, {"x": 0.1}, {"x": 0.2}, {"x": 0.3}])
    two = {"n_workers": 2, "threads_per_worker": 1, "processes": True, "dashboard_address": None}
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), LocalCluster(**two) as cluster:
        with Client(cluster) as dying, warnings.catch_warnings():
            warnings.simplefilter("ignore", TrialFailedWarning)
            opt.run(_killer_at_the_top, budget=4, n_workers=2, executor=dying.get_executor(), progress=False)
            registered = dying.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins))
    assert {t.params["x"]: t.state for t in opt.history} == {
        0.9: "failed",
        0.1: "complete",
        0.2: "complete",
        0.3: "complete",
    }
    assert "KilledWorker" in opt.history[0].error
    assert not [name for name in registered if "warmbo" in name]  # the run's objective was released


def test_an_objective_that_does_not_pickle_stops_the_run_at_once_and_leaves_no_trial(client, tmp_path):
    # an objective holding a lock: the run raised a bare "cannot pickle '_thread.lock' object" and
    # left its first trial pending in the study for good
    lock = threading.Lock()

    def objective(params):
        with lock:
            return params["x"]

    url = f"sqlite:///{tmp_path / 'unsent.db'}"
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0, storage=url)
    with pytest.raises(ObjectiveNotSentError, match=r"cannot pickle '_thread.lock'.*open them inside"):
        opt.run(objective, budget=3, executor=client.get_executor(), progress=False)
    assert wb.Optimizer.load(url).history == []


def test_an_objective_a_worker_cannot_load_stops_the_run_at_once(client, tmp_path, monkeypatch):
    # a module of the driver's path only: every evaluation failed with ModuleNotFoundError, three
    # trials were spent before the run stopped; the plugin's registration now says so before any
    (tmp_path / "only_on_the_driver.py").write_text("def objective(params):\n    return params['x']\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # (after the workers started: theirs lacks it)
    import only_on_the_driver

    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0)
    try:
        with pytest.raises(
            ObjectiveNotSentError, match="No module named 'only_on_the_driver'.*installed there"
        ):
            opt.run(only_on_the_driver.objective, budget=3, executor=client.get_executor(), progress=False)
    finally:
        del sys.modules["only_on_the_driver"]
    assert opt.history == []
    registered = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins))
    assert not [name for name in registered if "warmbo" in name]


def test_a_run_on_a_cluster_without_workers_says_it_waits_for_one(monkeypatch):
    # a cluster whose workers all died (seen with a LocalCluster whose nanny stopped restarting them
    # after many deaths) left the run waiting with no word
    monkeypatch.setattr(warmbo.optimizer, "NO_WORKERS_AFTER", 0.5)
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0)
    with (
        LocalCluster(n_workers=0, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as empty,
    ):
        later = threading.Timer(3.0, cluster.scale, args=(1,))  # (a worker joins; the run ends)
        later.start()
        try:
            with pytest.warns(NoWorkersWarning) as said:
                opt.run(lambda params: params["x"], budget=1, executor=empty.get_executor(), progress=False)
        finally:
            later.cancel()
    assert [t.state for t in opt.history] == ["complete"]
    assert len([w for w in said if w.category is NoWorkersWarning]) == 1  # (said once, not every 0.5 s)
    assert "no workers" in str(said[0].message) and "(trial(s) 1)" in str(said[0].message)


def _first_short_then_long(first: str):
    """An objective whose first evaluation (of all workers) takes 0.5 s and every other 1.5 s: at the
    first one's end the other worker's is surely still running. (With both at 0.5 s they ran side by
    side on the two workers and could end together, before a restart at the first's callback: the
    evaluations used to queue on the one worker holding the objective, which staggered them.)"""

    def objective(params):  # (nested: sent by value to the worker processes)
        import os
        import time

        try:
            os.close(os.open(first, os.O_CREAT | os.O_EXCL))
            time.sleep(0.5)
        except FileExistsError:
            time.sleep(1.5)
        return params["x"]

    return objective


def test_evaluations_cancelled_by_a_client_restart_are_evaluated_again(tmp_path):
    # client.restart() (a leaking worker, the dashboard's button) cancels the evaluations in flight:
    # the run stopped with a bare CancelledError and left them pending; a cancellation says nothing of
    # the point, so the run evaluates it again and reaches its budget
    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Int("k", 1, 3)])
    opt = wb.Optimizer(space, seed=0)
    pending_at_restart = []
    two = {"n_workers": 2, "threads_per_worker": 1, "processes": True, "dashboard_address": None}
    with LocalCluster(**two) as cluster, Client(cluster) as restarted:

        def restart_once(optimizer, trial):
            if not pending_at_restart:  # (at the first evaluation's end)
                pending_at_restart.extend(t.id for t in optimizer.study.trials(("pending",)))
                restarted.restart()

        opt.run(
            _first_short_then_long(str(tmp_path / "first")),
            budget=8,
            n_workers=2,
            executor=restarted.get_executor(),
            callbacks=[restart_once],
            progress=False,
        )
    assert pending_at_restart  # an evaluation was in flight, and cancelled
    assert len(opt.history) == 8 and all(t.state == "complete" for t in opt.history)
    assert all(t.value == t.params["x"] for t in opt.history)


def test_a_run_on_a_cluster_without_n_workers_says_it_evaluates_one_point_at_a_time(client):
    # run(objective, budget, executor=client.get_executor()) kept one evaluation in flight: one of the
    # two workers stood idle through the run, without a word
    space = wb.Space([wb.Float("alpha", 1e-4, 1.0, log=True), wb.Int("depth", 1, 4)])
    with pytest.warns(UserWarning, match=r"one point at a time .* runs 2 at once; pass n_workers=2"):
        wb.Optimizer(space, seed=0).run(_first, budget=3, executor=client.get_executor(), progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n_workers in (1, 2):  # chosen: nothing to say
            opt = wb.Optimizer(space, seed=0)
            opt.run(_first, budget=3, n_workers=n_workers, executor=client.get_executor(), progress=False)
            assert len(opt.history) == 3
    with ThreadPoolExecutor(3) as pool, pytest.warns(UserWarning, match="pass n_workers=3"):
        wb.Optimizer(space, seed=0).run(_first, budget=3, executor=pool, progress=False)


def _first(params):
    return params["alpha"]


def _noisy(params):
    import random

    return params["a"] + random.random()  # a lab measurement: every evaluation its own value


def test_a_repeated_point_is_evaluated_again_not_read_from_the_evaluation_before(client):
    # Dask names a task by its arguments (pure=True by default): once every point of a finite space was
    # taken, the run's repeats of a point evaluated just before got that evaluation's result back
    # without running the objective, so a noisy objective's repeats all showed one value
    space = wb.Space([wb.Int("a", 0, 1)])
    opt = wb.Optimizer(space, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the budget is larger than the space: repeats wanted)
        opt.run(_noisy, budget=8, n_workers=1, executor=client.get_executor(), progress=False)
    values = [t.value for t in opt.history]
    assert len(values) == 8 and len(set(values)) == 8, values


def test_an_evaluation_the_executor_always_cancels_is_run_three_times_more_then_failed():
    # what docs/scale.md says: evaluated again up to three times, a fourth cancellation fails the trial
    from concurrent.futures import Executor, Future

    class Cancelling(Executor):
        submitted = 0

        def submit(self, fn, *args, **kwargs):
            self.submitted += 1
            future = Future()
            future.cancel()
            future.set_running_or_notify_cancel()  # (as Dask's executor does on a cancellation)
            return future

    executor = Cancelling()
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0)
    with pytest.warns(TrialFailedWarning, match="cancelled"):
        opt.run(_first_x, budget=1, n_workers=1, executor=executor, progress=False)
    assert executor.submitted == 4
    assert [t.state for t in opt.history] == ["failed"] and "CancelledError" in opt.history[0].error
    # the error says what happened, without a Python object's memory address ("<Future at 0x7f...>")
    assert " at 0x" not in opt.history[0].error and "four times" in opt.history[0].error


def _first_x(params):
    return params["x"]


def test_an_executor_kept_to_one_worker_is_not_said_to_run_more(client):
    # get_executor(workers=[one]) runs its evaluations on that worker's one thread: the warning said
    # the executor "runs 2 at once" (the whole cluster's threads) and asked for n_workers=2
    space = wb.Space([wb.Float("alpha", 1e-4, 1.0, log=True)])
    one = sorted(client.scheduler_info()["workers"])[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt = wb.Optimizer(space, seed=0)
        opt.run(_first, budget=2, executor=client.get_executor(workers=[one]), progress=False)
        assert len(opt.history) == 2
    anywhere = client.get_executor(workers=[one], allow_other_workers=True)
    with pytest.warns(UserWarning, match="runs 2 at once"):
        wb.Optimizer(space, seed=0).run(_first, budget=2, executor=anywhere, progress=False)


def test_a_worker_without_warmbo_installed_evaluates_the_objective():
    # a cluster built for the objective's own libraries need not have warmbo: before the objective
    # was sent once per run, only the objective went to the workers. The helpers that send it once
    # went by reference (warmbo._remote._call), a worker without warmbo could not load the task, and
    # the run waited for ever
    import subprocess
    import sys
    import threading

    def objective(params):  # (nested: sent by value, as a function of the user's script is)
        return params["x"]

    with LocalCluster(n_workers=0, processes=True, dashboard_address=None) as cluster:
        code = (
            "import sys\n"
            "sys.modules['warmbo'] = None  # (import warmbo fails in this worker)\n"
            "from distributed.cli.dask_worker import main\n"
            f"sys.argv = ['dask-worker', {cluster.scheduler_address!r}, '--nworkers', '1', "
            "'--nthreads', '1', '--no-nanny', '--no-dashboard']\n"
            "main()\n"
        )
        worker = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            with Client(cluster) as bare:
                bare.wait_for_workers(1, timeout=60)
                opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0)
                run = threading.Thread(
                    target=opt.run,
                    args=(objective, 3),
                    kwargs={"n_workers": 1, "executor": bare.get_executor(), "progress": False},
                    daemon=True,
                )
                run.start()
                run.join(timeout=60)
                assert not run.is_alive(), "the run waited for a task the worker could not load"
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    assert [t.state for t in opt.history] == ["complete"] * 3
    assert all(t.value == t.params["x"] for t in opt.history)


_release = threading.Event()  # (an in-process cluster: its workers see this very module)
_calls = itertools.count()


def _two_quick_then_held(params):
    if next(_calls) >= 2:
        _release.wait(120)  # (released when the test ends: the cancelled task's thread then returns)
    return params["x"]


def _interrupt_when(condition, settle: float = 0.3) -> threading.Event:
    """Sends this process SIGINT (Ctrl-C) ``settle`` seconds after ``condition()`` holds: the driver
    is then waiting for its evaluations. Nothing is sent when the condition does not hold within 120 s
    or once the returned event is set (set it when the test ends: a late Ctrl-C would land in whichever
    test runs next)."""
    stop = threading.Event()

    def watch():
        deadline = time.monotonic() + 120
        while not condition():
            if stop.is_set() or time.monotonic() > deadline:
                return
            time.sleep(0.05)
        if not stop.wait(settle):
            os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=watch, daemon=True).start()
    return stop


@pytest.fixture(autouse=True)
def python_sigint():
    """Python's own SIGINT handler (KeyboardInterrupt) for each test: the interrupted-run tests send
    SIGINT, and a library used earlier in the same process may have left its own handler installed
    (Ray Tune does), which would swallow it and leave the run waiting."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    if previous is not None:  # (None: a handler installed from C, which Python cannot reinstall)
        signal.signal(signal.SIGINT, previous)


def _call_tasks(scheduler) -> list[str]:
    """The evaluations the scheduler still holds, once their cancellation has reached it."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = [str(key) for key in scheduler.tasks if str(key).startswith("call-")]
        if not left:
            break
        time.sleep(0.05)
    return left


def test_ctrl_c_cancels_the_evaluations_on_the_cluster_and_withdraws_their_trials(tmp_path):
    # before: Ctrl-C in the driver left the evaluations running on the cluster (for nothing: no one
    # records them) and their trials pending in the study for good, and said nothing
    url = f"sqlite:///{tmp_path / 'ctrl-c.db'}"
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0, storage=url)
    two = {"n_workers": 2, "threads_per_worker": 1, "processes": False, "dashboard_address": None}
    study = wb.Study(url)

    def states():
        return [t.state for t in study.trials()]

    try:
        with LocalCluster(**two) as cluster, Client(cluster) as local:
            stop = _interrupt_when(lambda: states() == ["complete", "complete", "pending", "pending"])
            try:
                with pytest.raises(KeyboardInterrupt), pytest.warns(InterruptedRunWarning) as said:
                    opt.run(
                        _two_quick_then_held,
                        budget=6,
                        n_workers=2,
                        executor=local.get_executor(),
                        progress=False,
                    )
                assert _call_tasks(cluster.scheduler) == []  # cancelled on the cluster
            finally:
                stop.set()
                _release.set()  # (the cancelled evaluations' threads return, and the cluster closes at once)
    finally:
        _release.set()
    assert [t.state for t in wb.Optimizer.load(url).history] == ["complete", "complete"]
    message = str(said[0].message)
    assert "cancelled the 2 evaluation(s) still running (trial(s) 3, 4)" in message
    assert "withdrew trial(s) 3, 4 from the study" in message
    assert "the study keeps its 2 finished trial(s)" in message


def test_trials_requeued_after_a_restart_are_withdrawn_when_the_run_is_interrupted(tmp_path):
    # client.restart() cancels the evaluations in flight and the run requeues their trials; a Ctrl-C
    # while they were being evaluated again left them pending in the study for good
    marker, release = tmp_path / "restarted", tmp_path / "release"
    held = tmp_path / "held"  # (a folder: one file per evaluation held after the restart, by x)
    held.mkdir()

    def objective(params):  # (nested: sent by value to the worker processes)
        import pathlib
        import time

        if pathlib.Path(marker).exists():  # after the restart: held until the test has interrupted
            (pathlib.Path(held) / repr(params["x"])).touch()  # (the driver now waits for it)
            deadline = time.monotonic() + 60  # (bounded: a test that fails must not hang)
            while not pathlib.Path(release).exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        else:
            staggered(params)  # (the first evaluation ends first, the other still running)
        return params["x"]

    staggered = _first_short_then_long(str(tmp_path / "first"))
    url = f"sqlite:///{tmp_path / 'restart.db'}"
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0), wb.Int("k", 1, 3)]), seed=0, storage=url)
    in_flight, requeued = [], []  # trial ids, and the points of those trials
    back = threading.Event()
    two = {"n_workers": 2, "threads_per_worker": 1, "processes": True, "dashboard_address": None}
    try:
        with LocalCluster(**two) as cluster, Client(cluster) as restarted:

            def restart_once(optimizer, trial):
                if not marker.exists():  # (at the first evaluation's end)
                    pending = optimizer.study.trials(("pending",))
                    in_flight.extend(t.id for t in pending)
                    requeued.extend(repr(t.params["x"]) for t in pending)
                    marker.touch()
                    restarted.restart()
                    back.set()

            # Ctrl-C once a requeued trial is being evaluated again (its evaluation says so; a fixed
            # delay after the restart could, under load, land before the run was back to waiting)
            def evaluated_again():
                return back.is_set() and any((held / x).exists() for x in requeued)

            stop = _interrupt_when(evaluated_again, settle=0.5)
            try:
                with pytest.raises(KeyboardInterrupt), pytest.warns(InterruptedRunWarning) as said:
                    opt.run(
                        objective,
                        budget=8,
                        n_workers=2,
                        executor=restarted.get_executor(),
                        callbacks=[restart_once],
                        progress=False,
                    )
                assert _call_tasks(cluster.scheduler) == []
            finally:
                stop.set()
                release.touch()  # (the held evaluations return, and the cluster closes at once)
    finally:
        release.touch()
    assert in_flight  # an evaluation was in flight at the restart, cancelled and requeued
    history = wb.Optimizer.load(url).history
    assert history and all(t.state == "complete" for t in history), [(t.id, t.state) for t in history]
    assert "withdrew trial(s)" in str(said[0].message)


_fail_release = threading.Event()
_fail_calls = itertools.count()


def _three_fail_then_held(params):
    if next(_fail_calls) >= 3:
        _fail_release.wait(120)  # (released when the test ends)
    raise NameError("name 'lr' is not defined")


def test_a_run_stopped_by_repeated_failures_on_a_cluster_does_not_advise_retrying_withdrawn_trials(tmp_path):
    # before: the RepeatedFailureError said the evaluations still running on the cluster were "left
    # pending: run with retry_pending=True", while the run had withdrawn their trials from the study
    # (nothing was left to retry)
    from warmbo.optimizer import RepeatedFailureError

    url = f"sqlite:///{tmp_path / 'failing.db'}"
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0, storage=url)
    four = {"n_workers": 1, "threads_per_worker": 4, "processes": False, "dashboard_address": None}
    try:
        with LocalCluster(**four) as cluster, Client(cluster) as local:
            with pytest.raises(RepeatedFailureError) as stopped, pytest.warns(InterruptedRunWarning) as said:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", TrialFailedWarning)
                    opt.run(
                        _three_fail_then_held,
                        budget=10,
                        n_workers=4,
                        executor=local.get_executor(),
                        progress=False,
                    )
            _fail_release.set()  # (the cancelled evaluations' threads return, and the cluster closes)
    finally:
        _fail_release.set()
    pending = [t.id for t in wb.Optimizer.load(url).history if t.state == "pending"]
    assert pending == []
    assert stopped.value.pending == ()
    assert "retry_pending" not in str(stopped.value)
    assert "withdrew trial(s)" in str(said[0].message)


_DRIVER = r"""
import sys
import numpy as np
import warmbo as wb
from dask.distributed import Client

client = Client(sys.argv[1])
data = np.ones((500, 500))  # (held by the objective: what the plugin keeps on the cluster)

def objective(params):
    import time
    time.sleep(20)
    return float(data[0, 0]) * params["x"]

wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0).run(
    objective, budget=1, executor=client.get_executor(), progress=False
)
"""


def test_the_objective_of_a_killed_driver_is_released_by_the_next_run():
    # (review) the objective's plugin is unregistered when its run ends; a driver killed (kill -9,
    # out of memory, a kernel restart) left it on the scheduler and every worker for good, one per
    # killed run. The next run's first evaluation releases those whose client has gone
    import subprocess
    import sys

    def ours(scheduler_plugins):
        return [name for name in scheduler_plugins if "warmbo" in str(name)]

    options = {"n_workers": 1, "threads_per_worker": 2, "processes": True, "dashboard_address": None}
    with LocalCluster(**options) as cluster, Client(cluster) as client:
        driver = subprocess.Popen([sys.executable, "-c", _DRIVER, cluster.scheduler_address])
        try:
            deadline = time.monotonic() + 60
            while not ours(
                client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins))
            ):
                assert time.monotonic() < deadline and driver.poll() is None, "the driver never registered"
                time.sleep(0.2)
        finally:
            driver.kill()
            driver.wait(timeout=30)
        deadline = time.monotonic() + 30
        while len(client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.clients))) > 2:
            assert time.monotonic() < deadline, "the scheduler never noticed the driver had gone"
            time.sleep(0.2)  # (this client and the scheduler's own remain)
        left = ours(client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins)))
        assert len(left) == 1  # (the killed run's, before the next run)
        opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0)
        opt.run(lambda params: params["x"], budget=1, executor=client.get_executor(), progress=False)
        assert ours(client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins))) == []
        assert [t.state for t in opt.history] == ["complete"]
