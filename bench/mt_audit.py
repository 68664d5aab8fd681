"""Time of a multi-task audit (``MultiTaskOptimizer.audit``, what ``warmbo audit`` runs) at 3 tasks x n
trials, d = 4: the closed-form leave-one-out of :meth:`warmbo.models.standardised.StandardisedMultiTaskGP.loo`
(session 19; before it, one refit per held-out trial: 51-89 s at n = 2000).

Three tasks on scales six orders apart (1, 1e3, 1e-3), the second minimised; noise sd 5% of each
task's scale.

    python bench/mt_audit.py [N ...]     # default 300 1000 2000
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import warmbo as wb


def main() -> None:
    sizes = [int(v) for v in sys.argv[1:]] or [300, 1000, 2000]
    names = [f"x{i}" for i in range(4)]
    space = wb.Space([wb.Float(v, 0.0, 1.0) for v in names])
    for n in sizes:
        rng = np.random.default_rng(n)
        X = rng.random((n, 4))
        scale = np.array([1.0, 1e3, 1e-3])
        Y = np.c_[np.sin(5 * X[:, 0]) + X[:, 1], np.cos(3 * X[:, 1]) + X[:, 2] ** 2, X.sum(1)] * scale
        Y = Y + 0.05 * rng.standard_normal(Y.shape) * scale
        directions = ["maximize", "minimize", "maximize"]
        mt = wb.MultiTaskOptimizer(space, n_tasks=3, seed=0, directions=directions, beta="theory")
        mt.add_prior(([dict(zip(names, x, strict=True)) for x in X], Y.tolist()))
        started = time.perf_counter()
        result = mt.audit()
        seconds = time.perf_counter() - started
        first = next(iter(result.values()))
        coverage = [round(r.coverage[0.95], 3) for r in result.values()]
        print(
            f"n={n}: {seconds:.2f} s, method={first.method}, held out {first.held_out}, 95% coverage "
            f"{coverage}, load {os.getloadavg()[0]:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
