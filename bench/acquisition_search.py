"""How close one ``maximize`` of EI gets to the maximum, and at what cost (the figures of docs/core.md,
"Acquisition maximisation").

For each data set (the overhead section's: X uniform on the unit cube, Hartmann-6 or Branin values,
minimised; the GP of the fixed-hyperparameter benchmark), the reference maximum is the best of two
large searches (8192 Sobol points and 20 starts, with and without 2048 local candidates). Each
search reports the worst ratio of its EI to the reference over the data sets, and its median number
of acquisition evaluations. Runs on any warmbo version (``anchors`` is used where ``maximize`` has
it), so ``PYTHONPATH=<old checkout>/src python bench/acquisition_search.py`` measures an old one.

    python bench/acquisition_search.py
"""

from __future__ import annotations

import inspect
import time

import numpy as np

from warmbo import EI, Space, maximize
from warmbo.benchmarks.methods import Warmbo
from warmbo.benchmarks.overhead import _data

HAS_ANCHORS = "anchors" in inspect.signature(maximize).parameters


def main() -> None:
    print(f"maximize with anchors: {HAS_ANCHORS}")
    for d, n in [(6, 200), (6, 1000), (6, 50), (2, 200)]:
        space = Space.box([(0.0, 1.0)] * d)
        rows = {"Sobol screen": [], "Sobol + local candidates": []} if HAS_ANCHORS else {"Sobol screen": []}
        for seed in range(10, 14):
            X, y = _data(d, n, seed)
            bound = EI().bind(Warmbo._fixed_model(d).fit(X, -y))
            anchors = X[np.argsort(y)[:5]]
            extra = {"anchors": anchors} if HAS_ANCHORS else {}
            reference = max(
                maximize(bound, space, seed=99, n_candidates=8192, n_starts=20, **extra).value,
                maximize(bound, space, seed=98, n_candidates=8192, n_starts=20).value,
            )
            for name in rows:
                kwargs = {"anchors": anchors} if name != "Sobol screen" else {}
                start = time.perf_counter()
                result = maximize(bound, space, seed=seed, **kwargs)
                seconds = time.perf_counter() - start
                rows[name].append((result.value / reference, result.n_evaluations, seconds))
        for name, values in rows.items():
            ratios, evals, seconds = (np.array(column) for column in zip(*values, strict=True))
            print(
                f"d={d} n={n:5d} {name:26s} worst EI / reference {ratios.min():.3f}  "
                f"median acquisition evaluations {np.median(evals):.0f}  "
                f"median {1000 * np.median(seconds):.1f} ms"
            )


if __name__ == "__main__":
    main()
