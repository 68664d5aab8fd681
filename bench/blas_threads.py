"""BLAS threads: warmbo's one-thread policy against the BLAS library's default, in one process.

What is measured (wall and CPU time, median over the repeats, with the load average at start and end):

1. A Cholesky factorisation plus a 512-column triangular solve (what a GP fit and a prediction on
   512 candidates do) at n in (128, 256, 512, 1000, 1024, 2048), under the BLAS default number of
   threads and under one thread (threadpoolctl).
2. ``Optimizer.ask`` on an in-memory study holding n complete trials of a 6-dimensional function
   (n in (256, 1000, 1024)): the first ask of a fresh Optimizer object (a full multi-start ML-II fit)
   and the ask after it, with ``WARMBO_BLAS_THREADS=1`` (warmbo's default) and
   ``WARMBO_BLAS_THREADS=0`` (BLAS left at its default, the behaviour before the policy).

Reproduce: ``make bench-threads`` (= ``.venv/bin/python bench/blas_threads.py``), which writes
``bench/results/blas_threads.json``; ``--quick`` uses the two smallest sizes of each part. Run it
beside a CPU load to see the busy-machine case (the load average is recorded with the results).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_info, threadpool_limits

import warmbo as wb


def _timed(fn, repeats: int) -> dict:
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus), "repeats": repeats}


def linear_algebra(sizes) -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    for n in sizes:
        A = rng.standard_normal((n, n))
        K = A @ A.T / n + np.eye(n)
        C = rng.standard_normal((n, 512))

        def step(K=K, C=C):
            L = scipy.linalg.cholesky(K, lower=True)
            scipy.linalg.solve_triangular(L, C, lower=True)

        repeats = max(3, min(50, int(3e8 / n**3)))
        row = {"n": n}
        for label, limit in (("default", None), ("one", 1)):
            with threadpool_limits(limits=limit, user_api="blas"):
                step()  # warm-up
                row[label] = _timed(step, repeats)
        row["ratio_wall"] = row["default"]["wall_s"] / row["one"]["wall_s"]
        rows.append(row)
        print(
            f"cholesky+solve n={n:5d}: default {row['default']['wall_s'] * 1e3:9.2f} ms, one thread "
            f"{row['one']['wall_s'] * 1e3:8.2f} ms, ratio {row['ratio_wall']:.1f}"
        )
    return rows


def _study(n: int) -> wb.Optimizer:
    space = wb.Space([wb.Float(f"x{i}", 0.0, 1.0) for i in range(6)])
    opt = wb.Optimizer(space, seed=0)
    X = np.random.default_rng(1).random((n, 6))
    y = np.sum(np.sin(3 * X), axis=1) + 0.01 * np.random.default_rng(2).standard_normal(n)
    for x, value in zip(X, y, strict=True):
        opt.study.add_trial(dict(zip(space.names, x.tolist(), strict=True)), "complete", value=float(value))
    return opt


def asks(sizes) -> list[dict]:
    rows = []
    for n in sizes:
        row = {"n": n}
        for label, env in (("warmbo_default_one_thread", "1"), ("blas_default", "0")):
            os.environ["WARMBO_BLAS_THREADS"] = env
            opt = _study(n)  # an optimizer object that has not asked yet: its first ask is a full fit
            first = _timed(lambda opt=opt: opt.study.fail(opt.ask().trial_id, "bench"), 1)
            steady = _timed(lambda opt=opt: opt.study.fail(opt.ask().trial_id, "bench"), 1)
            row[label] = {"first_ask": first, "next_ask": steady}
        os.environ.pop("WARMBO_BLAS_THREADS", None)
        a, b = row["warmbo_default_one_thread"], row["blas_default"]
        print(
            f"ask n={n:5d}: first ask {b['first_ask']['wall_s']:7.2f} s (BLAS default) vs "
            f"{a['first_ask']['wall_s']:7.2f} s (one thread); next ask {b['next_ask']['wall_s']:7.2f} s vs "
            f"{a['next_ask']['wall_s']:7.2f} s"
        )
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "blas_threads.json")
    args = parser.parse_args()
    load_start = os.getloadavg()
    start = time.perf_counter()
    la_sizes = (128, 256) if args.quick else (128, 256, 512, 1000, 1024, 2048)
    ask_sizes = (64, 256) if args.quick else (256, 1000, 1024)
    result = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "blas": [
                {k: p.get(k) for k in ("internal_api", "version", "num_threads")} for p in threadpool_info()
            ],
        },
        "load_average_start": load_start,
        "linear_algebra": linear_algebra(la_sizes),
        "ask": asks(ask_sizes),
    }
    result["load_average_end"] = os.getloadavg()
    result["seconds"] = time.perf_counter() - start
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"load average {load_start} -> {result['load_average_end']}; {result['seconds']:.0f} s")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
