"""Core micro-benchmarks of warmbo: the GP rank-one update, prediction, and acquisition maximisation.

Everything runs on random data in d = 4: inputs uniform in [0, 1]^4, outputs
``sum_i sin(3 x_i) + 0.1 * N(0, 1)``, a Matern-5/2 ARD kernel with fixed lengthscales
(0.2, 0.3, 0.5, 0.8), noise variance 1e-2 and no hyperparameter fitting. Times are wall-clock
(``time.perf_counter``) with the garbage collector paused; every figure is reported as the median and
the minimum over the repeats, with the number of repeats (fewer at n = 5000). Seeds are fixed.

What is measured
----------------
1. **Update + predict**, for n in (100, 1000, 5000), on m = 2048 random candidate points:

   - ``warmbo add (after fit)``: a GP fitted on n points receives one point with ``gp.add`` (block
     Cholesky update, O(n^2): the old factor is copied into a contiguous (n+1)^2 array and one row
     is appended), then ``gp.predict(C)``.
   - ``warmbo add (second)``: the next ``add`` + ``predict`` on the same GP (n + 1 points): the
     steady state of a Bayesian-optimisation loop.
   - ``warmbo refit``: the baseline without the update, ``GP(...).fit(X_{n+1}, y_{n+1})`` + predict.
   - ``sklearn GPR``: ``GaussianProcessRegressor(Matern(nu=2.5), alpha=noise, optimizer=None).fit``
     + ``predict(return_std=True)`` on the same n + 1 points.

   Each is split into update/fit and predict; ratios are baseline total / warmbo add-after-fit total
   (medians). The predictions of the four paths are compared (max abs difference of mean and std).
   A predict breakdown times its parts separately: the cross-kernel ``k(X_train, C)``, the triangular
   solve ``L^{-1} K_*`` on ``gp.L_`` as the GP stores it and on a fresh contiguous copy of it (equal
   when the GP keeps its factor contiguous), the copy itself, and the one-column solve that ``add`` does.
2. **Acquisition maximisation**: ``maximize(UCB().bind(gp), Space.box([(0, 1)] * 4), seed=0)`` and the
   same with ``EI()`` on GPs fitted on n = 100 and n = 1000 points (``bind`` included in the time),
   with the number of acquisition evaluations, and one extra instrumented run that splits the time
   between batch evaluations (the Sobol candidates) and gradient evaluations (the L-BFGS-B starts).
3. **Peak memory** (tracemalloc, numpy buffers included, BLAS-internal workspace not) of add + predict
   at the largest n, with the refit and scikit-learn paths for comparison.

Reproduce
---------
``make bench`` (= ``.venv/bin/python bench/core.py``) writes ``bench/results/core.json`` and prints the
tables; ``--quick`` uses n = 100 and 1000 only; ``--out PATH`` writes the JSON elsewhere.

BLAS runs single-threaded by default (``threadpoolctl``), so the figures measure the algorithms rather
than the scheduler: on a shared two-core machine a multi-threaded OpenBLAS whose threads compete with
other processes was measured 10-100x slower on the same calls (a 1001 x 1001 Cholesky took ~1.3 s
instead of ~10 ms, and L-BFGS-B's tiny BLAS calls inflated ``maximize`` several times over).
``--blas-threads N`` sets another limit, ``--blas-threads 0`` leaves the library's default. The full run
takes one to two minutes; other processes on the machine add noise (the load average at the
start and end is recorded), so compare minima as well as medians.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import gc
import json
import os
import platform
import subprocess
import sys
import time
import tracemalloc
import warnings
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import scipy
import sklearn
from rich.console import Console
from rich.table import Table
from scipy import linalg
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import Matern as SkMatern

import warmbo
from warmbo import EI, GP, UCB, Space, maximize
from warmbo.benchmarks._common import no_gc
from warmbo.kernels import Matern

DIM = 4
N_CANDIDATES = 2048
LENGTHSCALES = np.array([0.2, 0.3, 0.5, 0.8])
NOISE = 1e-2
SEED = 0
SIZES_FULL = (100, 1000, 5000)
SIZES_QUICK = (100, 1000)
REPEATS = {100: 30, 1000: 10, 5000: 3}
MAXIMIZE_SIZES = (100, 1000)
MAXIMIZE_REPEATS = {100: 10, 1000: 5}
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "core.json"


# ---------------------------------------------------------------------------------------- helpers
def _stats(samples: list[float]) -> dict:
    arr = np.asarray(samples, dtype=np.float64)
    return {
        "median_s": float(np.median(arr)),
        "min_s": float(np.min(arr)),
        "repeats": int(arr.size),
        "samples_s": [float(s) for s in arr],
    }


def _data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    X = rng.random((n, DIM))
    y = np.sin(3.0 * X).sum(axis=1) + 0.1 * rng.standard_normal(n)
    return X, y


def _kernel() -> Matern:
    return Matern(nu=2.5, lengthscale=LENGTHSCALES.copy())


def _sklearn_gpr() -> GaussianProcessRegressor:
    kernel = SkMatern(length_scale=LENGTHSCALES.copy(), nu=2.5)
    return GaussianProcessRegressor(kernel, alpha=NOISE, optimizer=None)


def _max_diff(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> dict:
    return {"mean": float(np.max(np.abs(a[0] - b[0]))), "std": float(np.max(np.abs(a[1] - b[1])))}


def _timed(fn, repeats: int) -> tuple[dict, object]:
    samples, out = [], None
    for _ in range(repeats):
        with no_gc():
            t0 = time.perf_counter()
            out = fn()
            samples.append(time.perf_counter() - t0)
    return _stats(samples), out


def _machine() -> dict:
    info = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu_model": None,
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
        "warmbo": warmbo.__version__,
        "blas": None,
        "git_commit": None,
    }
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [
            {k: p.get(k) for k in ("internal_api", "version", "num_threads", "architecture", "prefix")}
            for p in threadpool_info()
        ]
    except ImportError:
        pass
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if out.returncode == 0:
            info["git_commit"] = out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def _warm_up(rng: np.random.Generator) -> None:
    X, y = _data(rng, 201)
    C = rng.random((256, DIM))
    gp = GP(_kernel(), noise=NOISE).fit(X[:200], y[:200])
    gp.add(X[200:], y[200:])
    gp.predict(C)
    _sklearn_gpr().fit(X, y).predict(C, return_std=True)
    maximize(UCB().bind(gp), Space.box([(0.0, 1.0)] * DIM), seed=0)


# ---------------------------------------------------------------------------------------- 1. update
def bench_update(n: int, repeats: int, rng: np.random.Generator) -> dict:
    X, y = _data(rng, n + 2)
    C = rng.random((N_CANDIDATES, DIM))
    base = GP(_kernel(), noise=NOISE).fit(X[:n], y[:n])

    first = {"add": [], "predict": [], "total": []}
    steady = {"add": [], "predict": [], "total": []}
    refit = {"fit": [], "predict": [], "total": []}
    skl = {"fit": [], "predict": [], "total": []}
    jitter = base.jitter_
    # The four paths are interleaved within each repeat so that load changes hit them alike.
    for _ in range(repeats):
        gp = copy.deepcopy(base)  # untimed: every repeat starts from the same fitted GP
        for x_new, y_new, out in ((X[n : n + 1], y[n : n + 1], first), (X[n + 1 :], y[n + 1 :], steady)):
            with no_gc():
                t0 = time.perf_counter()
                gp.add(x_new, y_new)
                t1 = time.perf_counter()
                pred = gp.predict(C)
                t2 = time.perf_counter()
            out["add"].append(t1 - t0)
            out["predict"].append(t2 - t1)
            out["total"].append(t2 - t0)
            if out is first:
                pred_add = pred
        jitter = max(jitter, gp.jitter_)
        del gp

        with no_gc():
            t0 = time.perf_counter()
            gp_refit = GP(_kernel(), noise=NOISE).fit(X[: n + 1], y[: n + 1])
            t1 = time.perf_counter()
            pred_refit = gp_refit.predict(C)
            t2 = time.perf_counter()
        refit["fit"].append(t1 - t0)
        refit["predict"].append(t2 - t1)
        refit["total"].append(t2 - t0)
        jitter = max(jitter, gp_refit.jitter_)
        del gp_refit

        with no_gc():
            t0 = time.perf_counter()
            model = _sklearn_gpr().fit(X[: n + 1], y[: n + 1])
            t1 = time.perf_counter()
            pred_skl = model.predict(C, return_std=True)
            t2 = time.perf_counter()
        skl["fit"].append(t1 - t0)
        skl["predict"].append(t2 - t1)
        skl["total"].append(t2 - t0)
        del model

    result = {
        "n": n,
        "m": N_CANDIDATES,
        "warmbo_add_after_fit": {k: _stats(v) for k, v in first.items()},
        "warmbo_add_second": {k: _stats(v) for k, v in steady.items()},
        "warmbo_refit": {k: _stats(v) for k, v in refit.items()},
        "sklearn_gpr": {k: _stats(v) for k, v in skl.items()},
        "max_abs_diff_add_vs_refit": _max_diff(pred_add, pred_refit),
        "max_abs_diff_add_vs_sklearn": _max_diff(pred_add, pred_skl),
        "jitter": float(jitter),
    }
    ref = result["warmbo_add_after_fit"]["total"]["median_s"]
    ref_steady = result["warmbo_add_second"]["total"]["median_s"]
    result["ratios"] = {
        "refit_over_add_after_fit": result["warmbo_refit"]["total"]["median_s"] / ref,
        "sklearn_over_add_after_fit": result["sklearn_gpr"]["total"]["median_s"] / ref,
        "refit_over_add_second": result["warmbo_refit"]["total"]["median_s"] / ref_steady,
        "sklearn_over_add_second": result["sklearn_gpr"]["total"]["median_s"] / ref_steady,
        "refit_fit_over_add_after_fit_add": (
            result["warmbo_refit"]["fit"]["median_s"] / result["warmbo_add_after_fit"]["add"]["median_s"]
        ),
        "predict_share_of_add_after_fit": result["warmbo_add_after_fit"]["predict"]["median_s"] / ref,
    }
    result["predict_breakdown"] = _predict_breakdown(base, X, y, C, repeats)
    return result


def _predict_breakdown(base: GP, X: np.ndarray, y: np.ndarray, C: np.ndarray, repeats: int) -> dict:
    """Time the pieces of ``predict`` (and of ``add``'s solve) on a GP that has received one ``add``."""
    n = base.n_observations
    gp = copy.deepcopy(base).add(X[n : n + 1], y[n : n + 1])
    L = gp.L_
    L_contiguous = np.ascontiguousarray(L)
    Ks = gp.kernel_.evaluate(gp.X_train_, C)
    col = Ks[:, 0].copy()

    def solve(A, B):
        return linalg.solve_triangular(A, B, lower=True, check_finite=False)

    parts = {
        "cross_kernel": lambda: gp.kernel_.evaluate(gp.X_train_, C),
        "trsm_stored_L": lambda: solve(L, Ks),
        "trsm_contiguous_L": lambda: solve(L_contiguous, Ks),
        "copy_L": lambda: np.ascontiguousarray(L),
        "trsv_stored_L": lambda: solve(L, col),
        "trsv_contiguous_L": lambda: solve(L_contiguous, col),
    }
    out = {name: _timed(fn, repeats)[0] for name, fn in parts.items()}
    out["n_after_add"] = gp.n_observations
    out["L_buffer_rows"] = int(gp.L_.base.shape[0]) if gp.L_.base is not None else int(L.shape[0])
    out["L_is_contiguous"] = bool(L.flags.c_contiguous or L.flags.f_contiguous)
    return out


# ---------------------------------------------------------------------------------------- 2. maximise
class _Counting:
    """Wraps a bound acquisition and counts/times its batch and gradient evaluations."""

    def __init__(self, bound):
        self.bound = bound
        self.batch_calls = self.batch_points = self.grad_calls = 0
        self.batch_time = self.grad_time = 0.0

    @property
    def has_gradient(self) -> bool:
        return self.bound.has_gradient

    def __call__(self, U):
        t0 = time.perf_counter()
        out = self.bound(U)
        self.batch_time += time.perf_counter() - t0
        self.batch_calls += 1
        self.batch_points += int(np.shape(U)[0])
        return out

    def value_and_gradient(self, u):
        t0 = time.perf_counter()
        out = self.bound.value_and_gradient(u)
        self.grad_time += time.perf_counter() - t0
        self.grad_calls += 1
        return out


def bench_maximize(n: int, repeats: int, rng: np.random.Generator) -> dict:
    X, y = _data(rng, n)
    gp = GP(_kernel(), noise=NOISE).fit(X, y)
    space = Space.box([(0.0, 1.0)] * DIM)
    result = {"n": n}
    for name, acq in (("UCB", UCB()), ("EI", EI())):
        samples, runs = [], []
        for _ in range(repeats):
            with no_gc():
                t0 = time.perf_counter()
                res = maximize(acq.bind(gp), space, seed=0)
                samples.append(time.perf_counter() - t0)
            runs.append(res)
        counter = _Counting(acq.bind(gp))
        with no_gc():
            t0 = time.perf_counter()
            res_counted = maximize(counter, space, seed=0)
            counted_total = time.perf_counter() - t0
        result[name] = {
            "time": _stats(samples),
            "n_evaluations": int(runs[0].n_evaluations),
            "value": float(runs[0].value),
            "x": [float(v) for v in runs[0].x],
            "deterministic": all(np.array_equal(r.x, runs[0].x) for r in runs)
            and res_counted.n_evaluations == runs[0].n_evaluations,
            "instrumented_run": {
                "total_s": counted_total,
                "batch_calls": counter.batch_calls,
                "batch_points": counter.batch_points,
                "batch_s": counter.batch_time,
                "gradient_calls": counter.grad_calls,
                "gradient_s": counter.grad_time,
                "other_s": counted_total - counter.batch_time - counter.grad_time,
            },
        }
    return result


# ---------------------------------------------------------------------------------------- 3. memory
def _peak(fn) -> float:
    """Peak traced memory (bytes) above what was allocated when ``fn`` started."""
    gc.collect()
    tracemalloc.reset_peak()
    start = tracemalloc.get_traced_memory()[0]
    fn()
    return float(tracemalloc.get_traced_memory()[1] - start)


def _peak_add_predict(n: int, X: np.ndarray, y: np.ndarray, C: np.ndarray) -> float:
    gp = GP(_kernel(), noise=NOISE).fit(X[:n], y[:n])
    return _peak(lambda: gp.add(X[n : n + 1], y[n : n + 1]).predict(C))


def bench_memory(n: int, rng: np.random.Generator) -> dict:
    X, y = _data(rng, n + 2)
    C = rng.random((N_CANDIDATES, DIM))
    base = GP(_kernel(), noise=NOISE).fit(X[:n], y[:n])
    gp = copy.deepcopy(base)
    del base
    out = {"n": n, "m": N_CANDIDATES}
    tracemalloc.start()
    try:
        out["warmbo_add_after_fit_add_bytes"] = _peak(lambda: gp.add(X[n : n + 1], y[n : n + 1]))
        out["warmbo_predict_bytes"] = _peak(lambda: gp.predict(C))
        out["warmbo_add_second_bytes"] = _peak(lambda: gp.add(X[n + 1 :], y[n + 1 :]))
        out["warmbo_add_after_fit_plus_predict_bytes"] = _peak_add_predict(n, X, y, C)
        out["warmbo_refit_plus_predict_bytes"] = _peak(
            lambda: GP(_kernel(), noise=NOISE).fit(X[: n + 1], y[: n + 1]).predict(C)
        )
        out["sklearn_fit_plus_predict_bytes"] = _peak(
            lambda: _sklearn_gpr().fit(X[: n + 1], y[: n + 1]).predict(C, return_std=True)
        )
    finally:
        tracemalloc.stop()
    return out


# ---------------------------------------------------------------------------------------- report
def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    return f"{ms:.3g}"


def _mm(stats: dict) -> str:
    return f"{_ms(stats['median_s'])} / {_ms(stats['min_s'])}"


def _mib(b: float) -> str:
    return f"{b / 2**20:.1f}"


def _print(report: dict, console: Console) -> None:
    t = Table(
        title=f"Update + predict on {N_CANDIDATES} candidates (d={DIM}, Matern-5/2 ARD); ms, median / min",
        show_lines=False,
    )
    for col in ("n", "method", "add / fit", "predict", "total", "reps", "x add (after fit)"):
        t.add_column(col, justify="right" if col not in ("method",) else "left")
    labels = (
        ("warmbo_add_after_fit", "warmbo add (after fit)", "add"),
        ("warmbo_add_second", "warmbo add (second)", "add"),
        ("warmbo_refit", "warmbo refit", "fit"),
        ("sklearn_gpr", "sklearn GPR", "fit"),
    )
    for r in report["update_predict"]:
        ref = r["warmbo_add_after_fit"]["total"]["median_s"]
        for key, label, first in labels:
            s = r[key]
            ratio = s["total"]["median_s"] / ref
            t.add_row(
                str(r["n"]) if key == labels[0][0] else "",
                label,
                _mm(s[first]),
                _mm(s["predict"]),
                _mm(s["total"]),
                str(s["total"]["repeats"]),
                f"{ratio:.2f}",
                end_section=key == labels[-1][0],
            )
    console.print(t)

    t = Table(title="Predict breakdown after one add; ms, median / min")
    cols = (
        ("cross_kernel", "k(X, C)"),
        ("trsm_stored_L", "trsm, stored L_"),
        ("trsm_contiguous_L", "trsm, contiguous L"),
        ("copy_L", "copy of L_"),
        ("trsv_stored_L", "trsv (add), stored L_"),
        ("trsv_contiguous_L", "trsv, contiguous L"),
    )
    t.add_column("n", justify="right")
    for _, label in cols:
        t.add_column(label, justify="right")
    for r in report["update_predict"]:
        b = r["predict_breakdown"]
        t.add_row(str(r["n"]), *(_mm(b[key]) for key, _ in cols))
    console.print(t)

    t = Table(title="Acquisition maximisation, Space.box([(0, 1)] * 4), seed=0; ms, median / min")
    cols = ("n", "acq", "time", "reps", "evaluations", "batch: calls / points / ms", "gradient: calls / ms")
    for col in cols:
        t.add_column(col, justify="right")
    for r in report["maximize"]:
        for name in ("UCB", "EI"):
            s = r[name]
            i = s["instrumented_run"]
            t.add_row(
                str(r["n"]) if name == "UCB" else "",
                name,
                _mm(s["time"]),
                str(s["time"]["repeats"]),
                str(s["n_evaluations"]),
                f"{i['batch_calls']} / {i['batch_points']} / {_ms(i['batch_s'])}",
                f"{i['gradient_calls']} / {_ms(i['gradient_s'])}",
            )
    console.print(t)

    mem = report.get("memory")
    if mem:
        t = Table(title=f"Peak traced memory (tracemalloc), n={mem['n']}; MiB above the starting level")
        t.add_column("operation")
        t.add_column("MiB", justify="right")
        for key, label in (
            ("warmbo_add_after_fit_add_bytes", "warmbo add (after fit)"),
            ("warmbo_predict_bytes", "warmbo predict"),
            ("warmbo_add_second_bytes", "warmbo add (second)"),
            ("warmbo_add_after_fit_plus_predict_bytes", "warmbo add (after fit) + predict"),
            ("warmbo_refit_plus_predict_bytes", "warmbo refit + predict"),
            ("sklearn_fit_plus_predict_bytes", "sklearn fit + predict"),
        ):
            t.add_row(label, _mib(mem[key]))
        console.print(t)

    m = report["machine"]
    console.print(
        f"{m['cpu_model']} x{m['cpu_count']}, {m['platform']}, numpy {m['numpy']}, scipy {m['scipy']}, "
        f"sklearn {m['sklearn']}; load avg {report['load_average_start']} -> {report['load_average_end']}; "
        f"total {report['total_runtime_s']:.1f} s"
    )


# ---------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only n = 100 and 1000")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default {DEFAULT_OUT})")
    parser.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        help="BLAS threads during the run (threadpoolctl; default 1, 0 = the library's own setting)",
    )
    args = parser.parse_args(argv)

    console = Console()
    if not console.is_terminal:
        console = Console(width=150)
    limiter = nullcontext()
    if args.blas_threads > 0:
        from threadpoolctl import threadpool_limits

        limiter = threadpool_limits(limits=args.blas_threads, user_api="blas")
    sizes = SIZES_QUICK if args.quick else SIZES_FULL
    start = time.perf_counter()
    load_start = [round(v, 2) for v in os.getloadavg()]
    report = {
        "benchmark": "warmbo core",
        "timestamp": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "quick": bool(args.quick),
        "machine": _machine(),
        "settings": {
            "dim": DIM,
            "n_candidates": N_CANDIDATES,
            "kernel": "Matern(nu=2.5), ARD, unit signal variance",
            "lengthscales": LENGTHSCALES.tolist(),
            "noise_variance": NOISE,
            "data": "X ~ U[0,1]^4, y = sum sin(3 x_i) + 0.1 N(0,1)",
            "seed": SEED,
            "sizes": list(sizes),
            "repeats": {str(n): REPEATS[n] for n in sizes},
            "maximize_sizes": list(MAXIMIZE_SIZES),
            "maximize_repeats": {str(n): MAXIMIZE_REPEATS[n] for n in MAXIMIZE_SIZES},
            "timer": "time.perf_counter, gc paused during each timed block",
            "blas_threads_limit": args.blas_threads or None,
        },
        "load_average_start": load_start,
    }
    rng = np.random.default_rng(SEED)
    with limiter, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report["machine"]["blas_during_run"] = _machine()["blas"]
        _warm_up(rng)
        report["update_predict"] = []
        for n in sizes:
            console.log(f"update + predict, n={n} ({REPEATS[n]} repeats)")
            report["update_predict"].append(bench_update(n, REPEATS[n], np.random.default_rng([SEED, n])))
        report["maximize"] = []
        for n in MAXIMIZE_SIZES:
            console.log(f"maximize, n={n} ({MAXIMIZE_REPEATS[n]} repeats)")
            rng_n = np.random.default_rng([SEED, 1, n])
            report["maximize"].append(bench_maximize(n, MAXIMIZE_REPEATS[n], rng_n))
        console.log(f"peak memory, n={sizes[-1]}")
        report["memory"] = bench_memory(sizes[-1], np.random.default_rng([SEED, 2, sizes[-1]]))
    report["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    report["load_average_end"] = [round(v, 2) for v in os.getloadavg()]
    report["total_runtime_s"] = time.perf_counter() - start

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    _print(report, console)
    console.print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    main()
