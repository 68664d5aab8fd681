"""BLAS threads in warmbo's hot paths (warmbo._threads): one thread by default, the user's choice with
WARMBO_BLAS_THREADS, and the caller's setting restored afterwards."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import warmbo as wb
from warmbo._threads import blas_threads, limit_blas


def _blas_threads_now() -> set[int]:
    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


class _RecordingGP(wb.GP):
    """A GP that records the BLAS threads in force while the optimizer fits it."""

    seen: list = []

    def fit(self, X, y):
        _RecordingGP.seen.append(_blas_threads_now())
        return super().fit(X, y)

    def clone(self, **overrides):
        return _RecordingGP(**{**self.get_params(), **overrides})


def _ask_with_recording_model():
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    model = _RecordingGP(wb.kernels.RBF(0.3), noise=1e-4)
    opt = wb.Optimizer(space, model=model, seed=0, n_initial=2)
    for _ in range(3):
        p = opt.ask()
        opt.tell(p, (p["x"] - 0.3) ** 2)
    return _RecordingGP.seen


def test_optimizer_asks_run_blas_on_one_thread_and_restore_the_callers_setting(monkeypatch):
    monkeypatch.delenv("WARMBO_BLAS_THREADS", raising=False)
    _RecordingGP.seen = []
    with threadpool_limits(limits=2, user_api="blas"):
        assert _blas_threads_now() == {2}
        seen = _ask_with_recording_model()
        assert _blas_threads_now() == {2}  # restored
    assert seen and all(s == {1} for s in seen), seen


def test_warmbo_blas_threads_zero_leaves_blas_alone(monkeypatch):
    monkeypatch.setenv("WARMBO_BLAS_THREADS", "0")
    _RecordingGP.seen = []
    with threadpool_limits(limits=2, user_api="blas"):
        seen = _ask_with_recording_model()
    assert seen and all(s == {2} for s in seen), seen


def test_nested_limits_keep_the_outer_one_and_restore(monkeypatch):
    monkeypatch.setenv("WARMBO_BLAS_THREADS", "1")
    with threadpool_limits(limits=2, user_api="blas"):
        with limit_blas():
            assert _blas_threads_now() == {1}
            with limit_blas():
                assert _blas_threads_now() == {1}
            assert _blas_threads_now() == {1}
            gp = wb.GP(wb.kernels.RBF(0.3), noise=1e-3).fit(np.linspace(0, 1, 5)[:, None], np.arange(5.0))
            assert _blas_threads_now() == {1}
            assert gp.predict(np.array([[0.5]]))[0].shape == (1,)
        assert _blas_threads_now() == {2}


@pytest.mark.parametrize("raw", ["two", "-1", "1.5"])
def test_bad_warmbo_blas_threads_is_a_clear_error(monkeypatch, raw):
    monkeypatch.setenv("WARMBO_BLAS_THREADS", raw)
    with pytest.raises(ValueError, match="WARMBO_BLAS_THREADS"):
        blas_threads()


def test_a_fresh_process_holds_every_blas_library_at_one_thread_during_an_ask():
    # import warmbo loads no SciPy, and NumPy and SciPy bundle separate BLAS libraries: the limit must
    # reach SciPy's (Cholesky, triangular solves) too, though it is loaded after warmbo's first call
    import subprocess
    import sys

    code = """
import os
os.environ.pop("WARMBO_BLAS_THREADS", None)
import warmbo as wb
from threadpoolctl import threadpool_info
seen = []
class Probe(wb.GP):
    def fit(self, X, y):
        seen.append(sorted((p["filepath"].rsplit("/", 1)[-1], p["num_threads"]) for p in threadpool_info()
                           if p["user_api"] == "blas"))
        return super().fit(X, y)
    def clone(self, **overrides):
        return Probe(**{**self.get_params(), **overrides})
opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), model=Probe(wb.kernels.RBF(0.3), noise=1e-4), seed=0,
                   n_initial=2)
for _ in range(4):
    p = opt.ask()
    opt.tell(p, (p["x"] - 0.3) ** 2)
print(seen)
"""
    env = {k: v for k, v in __import__("os").environ.items() if k != "WARMBO_BLAS_THREADS"}
    env["OPENBLAS_NUM_THREADS"] = "2"  # as on a 2-core machine, whatever this one has
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    seen = eval(out.stdout)  # a list of lists of (library, threads)
    assert seen and all(libraries for libraries in seen), out.stdout
    assert len({name for libraries in seen for name, _ in libraries}) >= 2, out.stdout  # NumPy's and SciPy's
    assert all(threads == 1 for libraries in seen for _, threads in libraries), out.stdout


def test_warnings_from_blas_limited_entry_points_point_at_the_callers_line():
    """blas_limited's wrapper is one more frame, which hand-counted stacklevels missed: warnings from
    GP.fit, MetaKeL.fit and TunedPrior.fit pointed at _threads.py. They point at the line here."""
    import warnings

    from warmbo._linalg import JitterWarning
    from warmbo.kernels import RBF, Legendre, free

    X = np.vstack([np.linspace(0, 1, 6)[:, None]] * 2)  # duplicated points, no noise: jitter
    tasks = [(np.linspace(-1, 1, 10), 1e-6 * np.linspace(-1, 1, 10))] * 3  # lam too large: no kernel
    A = np.random.default_rng(0).uniform(-0.9, 0.9, (10, 2))  # flat auxiliary data: K^A_2 vanishes
    calls = [
        (lambda: wb.GP(RBF(0.3), noise=0.0).fit(X, np.sin(X[:, 0])), JitterWarning),
        (lambda: wb.MetaKeL([Legendre(1), Legendre(2)], lam=10.0).fit(tasks), RuntimeWarning),
        (lambda: wb.TunedPrior(free.SE(0.5), C=1.0, learner="krr").fit(A, np.zeros(10)), RuntimeWarning),
    ]
    for call, category in calls:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        ours = [w for w in caught if issubclass(w.category, category)]
        assert ours, category
        for w in ours:
            assert (w.filename, w.lineno) == (__file__, call.__code__.co_firstlineno), str(w.message)


class _SearchProbeGP(wb.GP):
    """A GP that records the BLAS threads in force while the acquisition search evaluates it."""

    seen: list = []

    def predict_gradients(self, X):
        _SearchProbeGP.seen.append(_blas_threads_now())
        return super().predict_gradients(X)

    def clone(self, **overrides):
        return _SearchProbeGP(**{**self.get_params(), **overrides})


@pytest.mark.parametrize("loop", ["ask and tell", "run"])
def test_the_acquisition_search_runs_blas_on_one_thread_in_ask_and_in_run(monkeypatch, loop):
    # before: run() called the undecorated _ask_one, so its acquisition search (scipy's L-BFGS-B,
    # whose C code calls LAPACK, and the triangular solves) ran at the BLAS's default threads: under
    # load, 120-260 us per L-BFGS-B iteration against 4 us on one thread
    monkeypatch.delenv("WARMBO_BLAS_THREADS", raising=False)
    _SearchProbeGP.seen = []
    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("z", 0.0, 1.0)])
    opt = wb.Optimizer(space, model=_SearchProbeGP(wb.kernels.RBF(0.3), noise=1e-4), seed=0, n_initial=2)

    def objective(p):
        assert _blas_threads_now() == {2}  # the user's objective runs at the caller's setting
        return (p["x"] - 0.3) ** 2 + p["z"]

    with threadpool_limits(limits=2, user_api="blas"):
        if loop == "run":
            opt.run(objective, budget=5, progress=False)
        else:
            for _ in range(5):
                p = opt.ask()
                opt.tell(p, objective(p))
        assert _blas_threads_now() == {2}
    assert opt.study.count("complete") == 5
    assert _SearchProbeGP.seen and all(s == {1} for s in _SearchProbeGP.seen), _SearchProbeGP.seen


class _LooProbeGP(wb.GP):
    """A GP that records the BLAS threads in force while its leave-one-out moments are computed."""

    seen: list = []

    def loo(self):
        _LooProbeGP.seen.append(_blas_threads_now())
        return super().loo()

    def clone(self, **overrides):
        return _LooProbeGP(**{**self.get_params(), **overrides})


def test_the_audit_runs_blas_on_one_thread(monkeypatch):
    # before: Optimizer.audit (which `warmbo status` runs on up to 1000 trials) inverted the Gram
    # matrix at the BLAS's default threads
    monkeypatch.delenv("WARMBO_BLAS_THREADS", raising=False)
    _LooProbeGP.seen = []
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    opt = wb.Optimizer(space, model=_LooProbeGP(wb.kernels.RBF(0.3), noise=1e-4), seed=0)
    for x in np.linspace(0.0, 1.0, 12):
        opt.tell({"x": float(x)}, float(np.sin(6 * x)))
    with threadpool_limits(limits=2, user_api="blas"):
        result = opt.audit()
        assert _blas_threads_now() == {2}
    assert result.n == 12
    assert _LooProbeGP.seen and all(s == {1} for s in _LooProbeGP.seen), _LooProbeGP.seen


def test_run_suggests_what_an_ask_and_tell_loop_with_the_same_seed_does(monkeypatch):
    # before: run's acquisition search ran at the BLAS's default threads and ask's at one, so
    # the rounding differed and 12 of 25 Hartmann-3 trials of run and of a hand loop differed
    from warmbo.problems import functions

    monkeypatch.delenv("WARMBO_BLAS_THREADS", raising=False)
    f = functions.hartmann3()
    space = wb.Space.box(f.bounds)

    def objective(p):
        return float(f(np.array([p[n] for n in space.names])))

    with threadpool_limits(limits=2, user_api="blas"):
        by_run = wb.Optimizer(space, seed=3)
        by_run.run(objective, budget=25, progress=False)
        by_hand = wb.Optimizer(space, seed=3)
        for _ in range(25):
            p = by_hand.ask()
            by_hand.tell(p, objective(p))
    assert [t.params for t in by_run.history] == [t.params for t in by_hand.history]
