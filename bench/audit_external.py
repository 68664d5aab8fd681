"""How far the refitted residual of the audit's outlier test goes under the null (session 31).

The audit's closed form keeps the hyperparameters fitted with every value; the value that misses
most is also predicted by the model refitted without it (``warmbo.audit._external_z``). Under the
null (no outlier) that refitted residual runs larger than a calibrated one: the largest of m
residuals is the one left out, and the noise fitted without it leans low. This script draws data
from a GP prior (n in 15, 20, 30, 50; noise variance 1e-4, 0.01 or 0.1; d = 1 or 2), fits the
optimizer's default model, and records the refitted residual of the largest closed-form residual as
a multiple of the outlier threshold ``Phi^-1(1 - 0.001 / 2n)``; then the same for typos in a lab
study (yields near 50, one value replaced by 495, 4950, -495 or 1e6; the default model on the values
as they are, without the optimizer's output transform). ``EXTERNAL_FACTOR`` (3) lies between the two.

    python bench/audit_external.py [--draws 300] [--out bench/results/audit_external.json]
"""

from __future__ import annotations

import argparse
import json
import os
import warnings

import numpy as np


def prior_draw(rng, n, lengthscale=0.2, noise=0.01, dim=1):
    from warmbo.kernels import RBF

    X = rng.uniform(0, 1, (n, dim))
    K = RBF(lengthscale).evaluate(X, X) + noise * np.eye(n)
    return X, np.linalg.cholesky(K) @ rng.standard_normal(n)


def ratio(model, X, y) -> float | None:
    from warmbo.audit import _external_z, _loo, outlier_threshold

    fitted = model.fit(X, y)
    _, mean, var, _, _ = _loo(fitted, X, y, 50, 0, None)
    external = _external_z(fitted, X, y, mean, var, None)
    return None if not external else float(next(iter(external.values())) / outlier_threshold(len(y)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--out", default="bench/results/audit_external.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    import warmbo as wb
    from warmbo.audit import EXTERNAL_FACTOR
    from warmbo.benchmarks._common import git_commit
    from warmbo.models import default_model

    rng = np.random.default_rng(7)
    null = []
    for _ in range(args.draws):
        n = int(rng.choice([15, 20, 30, 50]))
        noise = float(rng.choice([1e-4, 0.01, 0.1]))
        X, y = prior_draw(rng, n, noise=noise, dim=int(rng.choice([1, 2])))
        r = ratio(default_model(X.shape[1], 0), X, y)
        if r is not None:
            null.append(r)
    null_r = np.array(null)
    catalyst = wb.Categorical("catalyst", ["Pd", "Pt", "Ni"])
    space = wb.Space([wb.Float("temp_C", 60, 100), wb.Float("time_h", 1, 12), catalyst])

    def yield_(p):
        bonus = {"Pd": 2, "Pt": 0, "Ni": -2}[p["catalyst"]]
        return 50 - (p["temp_C"] - 85) ** 2 / 40 - (p["time_h"] - 4) ** 2 / 3 + bonus

    opt = wb.Optimizer(space, maximize=True, seed=1)
    opt.run(yield_, budget=19, progress=False)
    X = space.encode([t.params for t in opt.history])
    y = np.array([t.value for t in opt.history])
    typos = {}
    for typo in (495.0, 4950.0, -495.0, 1e6):
        Xt = np.vstack([X, space.encode([{"temp_C": 84.0, "time_h": 4.0, "catalyst": "Pd"}])])
        yt = np.append(y, typo)
        typos[str(typo)] = ratio(default_model(Xt.shape[1], 0), Xt, yt)  # (on the values as they are)
    results = {
        "git_commit": git_commit(),
        "load_average": list(os.getloadavg()),
        "draws": args.draws,
        "external_factor": EXTERNAL_FACTOR,
        "null_ratio_quantiles": {q: float(np.quantile(null_r, q)) for q in (0.5, 0.9, 0.99, 1.0)},
        "null_share_above": {f: float(np.mean(null_r > f)) for f in (1.0, 1.5, 2.0, 3.0)},
        "typo_ratio": typos,
    }
    print(json.dumps(results, indent=2))
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
