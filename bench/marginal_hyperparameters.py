"""Hyperparameters integrated out instead of fixed at MAP: does it free Hartmann-6's trap? (issue 15)

The Hartmann-6 runs that stop at the local optimum have pushed the lengthscales of x3 and x5 far
out (docs/optimizer.md, "Why the lengthscale bound stays at 100"): the fitted GP is sure the global
basin is poor. Integrating the hyperparameters out (Snoek, Larochelle & Adams 2012, "Practical
Bayesian optimization", Section 3.2; BoTorch's fully Bayesian GPs) keeps shorter lengthscales in the
model where the data allow them, which should widen the posterior away from the data. This script
measures it: ``MarginalGP`` is the default model whose fit, after its MAP search, draws
``n_samples`` hyperparameter vectors from their posterior by coordinate-wise slice sampling with
stepping out (Neal 2003, "Slice sampling", Fig. 3 and 5) started at the MAP, in log space, under the
default's dimension-scaled log-normal priors as proper densities of the log values (the amplitude
flat on its bounds); the posterior is the mixture of the sampled GPs, moment-matched (mean of the
means; variance the mean of ``s^2 + m^2`` minus the squared mean) so that EI and its gradients work
unchanged. Both arms run the same Optimizer and seeds; only the model differs.

    python bench/marginal_hyperparameters.py [--seeds 10] [--samples 8]

Results: bench/results/marginal_hyperparameters.json and a table on stdout. A prototype for an
experiment, not a shipped model (no validation, no pickling of the samples).
"""

from __future__ import annotations

import argparse
import math
import os
import time
import warnings

import numpy as np

import warmbo as wb
from warmbo.benchmarks._common import bootstrap_median_ci, git_commit, write_results
from warmbo.benchmarks.quality import problem
from warmbo.models import GP, default_model
from warmbo.models.gp import Prediction


def slice_sample(logp, x0, bounds, n, rng, width=1.0, burn=0, thin=1, max_steps=20):
    """Coordinate-wise slice sampling with stepping out (Neal 2003), inside box bounds."""
    x = np.array(x0, dtype=float)
    lp = logp(x)
    out = []
    d = x.size
    for it in range(burn + n * thin):
        for j in rng.permutation(d):
            y = lp + math.log(rng.random())
            lo = x[j] - width * rng.random()
            hi = lo + width
            lo, hi = max(lo, bounds[j, 0]), min(hi, bounds[j, 1])
            steps = 0
            while lo > bounds[j, 0] and steps < max_steps:
                z = x.copy()
                z[j] = lo
                if logp(z) < y:
                    break
                lo = max(lo - width, bounds[j, 0])
                steps += 1
            steps = 0
            while hi < bounds[j, 1] and steps < max_steps:
                z = x.copy()
                z[j] = hi
                if logp(z) < y:
                    break
                hi = min(hi + width, bounds[j, 1])
                steps += 1
            for _ in range(50):
                z = x.copy()
                z[j] = lo + (hi - lo) * rng.random()
                lz = logp(z)
                if lz >= y:
                    x, lp = z, lz
                    break
                if z[j] < x[j]:
                    lo = z[j]
                else:
                    hi = z[j]
        if it >= burn and (it - burn) % thin == 0:
            out.append(x.copy())
    return np.array(out), x


class MarginalGP(GP):
    def __init__(
        self,
        kernel=None,
        noise=1e-6,
        *,
        optimizer=None,
        n_restarts=4,
        normalize_y=False,
        fit_noise=None,
        noise_bounds=(1e-8, 1.0),
        seed=None,
        restart_points=256,
        max_evaluations=None,
        hyperprior=None,
        fit_mean=False,
        fit_tolerance=1e-6,
        n_samples: int = 8,
        burn: int = 10,
        thin: int = 2,
    ):
        super().__init__(
            kernel,
            noise,
            optimizer=optimizer,
            n_restarts=n_restarts,
            normalize_y=normalize_y,
            fit_noise=fit_noise,
            noise_bounds=noise_bounds,
            seed=seed,
            restart_points=restart_points,
            max_evaluations=max_evaluations,
            hyperprior=hyperprior,
            fit_mean=fit_mean,
            fit_tolerance=fit_tolerance,
        )
        self.n_samples = n_samples
        self.burn = burn
        self.thin = thin

    def _optimize(self, X, ys, kernel, noise, fit_noise):
        new_kernel, new_noise = super()._optimize(X, ys, kernel, noise, fit_noise)
        fun = self._guarded_objective(X, ys, kernel, noise, fit_noise, "ml2")
        names = kernel.theta_names
        jac = np.array([1.0 if "lengthscale" in nm else 0.0 for nm in names] + ([1.0] if fit_noise else []))
        bounds = kernel.theta_bounds
        x0 = new_kernel.theta
        if fit_noise:
            bounds = np.vstack([bounds, np.log(np.array(self.noise_bounds))[None, :]])
            x0 = np.append(x0, math.log(new_noise[0]))

        def logp(p):
            v = fun(p)[0]
            return -(v - jac @ p) if v < 1e24 else -np.inf

        rng = np.random.default_rng(None if self.seed is None else self.seed + X.shape[0])
        samples, _ = slice_sample(logp, x0, bounds, self.n_samples, rng, burn=self.burn, thin=self.thin)
        self._samples = samples
        self._pnum = kernel.n_theta
        self._fit_noise_flag = fit_noise
        return new_kernel, new_noise

    def fit(self, X, y):
        super().fit(X, y)
        comps = []
        samples = getattr(self, "_samples", None)
        if samples is not None:
            p = self._pnum
            for s in samples:
                g = GP(
                    self.kernel_.with_theta(s[:p]),
                    noise=float(np.exp(s[p])) if self._fit_noise_flag else self.noise,
                    normalize_y=self.normalize_y,
                    fit_mean=self.fit_mean,
                )
                try:
                    comps.append(g.fit(X, y))
                except Exception:
                    pass
        self._comps = comps
        return self

    def add(self, X_new, y_new, noise=None):
        super().add(X_new, y_new, noise)
        for c in getattr(self, "_comps", []):
            c.add(X_new, y_new)
        return self

    def predict(self, X, return_cov=False):
        comps = getattr(self, "_comps", [])
        if not comps or return_cov:
            return super().predict(X, return_cov)
        ms, vs = [], []
        for c in comps:
            m, s = c.predict(X)
            ms.append(m)
            vs.append(s**2)
        ms, vs = np.array(ms), np.array(vs)
        m = ms.mean(0)
        v = (vs + ms**2).mean(0) - m**2
        return Prediction(m, np.sqrt(np.maximum(v, 1e-300)))

    def predict_gradient(self, x):
        comps = getattr(self, "_comps", [])
        if not comps:
            return super().predict_gradient(x)
        parts = [c.predict_gradient(x) for c in comps]
        ms = np.array([p[0] for p in parts])
        ss = np.array([p[1] for p in parts])
        dms = np.array([p[2] for p in parts])
        dss = np.array([p[3] for p in parts])
        m = ms.mean()
        v = max((ss**2 + ms**2).mean() - m**2, 1e-300)
        dm = dms.mean(0)
        dv = (2 * ss[:, None] * dss + 2 * ms[:, None] * dms).mean(0) - 2 * m * dm
        s = math.sqrt(v)
        return float(m), s, dm, dv / (2 * s)

    def predict_gradients(self, X):
        comps = getattr(self, "_comps", [])
        if not comps:
            return super().predict_gradients(X)
        parts = [c.predict_gradients(X) for c in comps]
        ms = np.array([p[0] for p in parts])
        ss = np.array([p[1] for p in parts])
        dms = np.array([p[2] for p in parts])
        dss = np.array([p[3] for p in parts])
        m = ms.mean(0)
        v = np.maximum((ss**2 + ms**2).mean(0) - m**2, 1e-300)
        dm = dms.mean(0)
        dv = (2 * ss[:, :, None] * dss + 2 * ms[:, :, None] * dms).mean(0) - 2 * m[:, None] * dm
        s = np.sqrt(v)
        return m, s, dm, dv / (2 * s[:, None])


def marginal_model(dim: int, seed: int | None = None, **kw) -> MarginalGP:
    """The default model (:func:`~warmbo.models.default_model`) with its hyperparameters integrated out."""
    return MarginalGP(**default_model(dim, seed).get_params(), **kw)


def run(fn, budget: int, seed: int, model) -> np.ndarray:
    space = wb.Space.box([tuple(b) for b in fn.bounds])
    opt = wb.Optimizer(space, seed=seed, model=model)
    values = []
    while len(values) < budget:
        params = opt.ask()
        value = float(fn(np.array([params[name] for name in space.names])))
        opt.tell(params, value)
        values.append(value)
    return np.asarray(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="hartmann6")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--out", default="bench/results/marginal_hyperparameters.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    fn = problem(args.problem)
    arms = {
        "default (MAP)": lambda seed: default_model(fn.dim, seed),
        f"integrated ({args.samples} slice samples)": lambda seed: marginal_model(
            fn.dim, seed, n_samples=args.samples
        ),
    }
    results = {
        "problem": args.problem,
        "budget": args.budget,
        "git": git_commit(),
        "load_average_start": os.getloadavg(),
        "arms": {},
    }
    for arm, make in arms.items():
        finals, at25, seconds = [], [], []
        for seed in range(args.seeds):
            started = time.process_time()
            values = run(fn, args.budget, seed, make(seed))
            seconds.append(time.process_time() - started)
            finals.append(float(values.min() - fn.optimum_value))
            at25.append(float(values[:25].min() - fn.optimum_value))
        f = np.array(finals)
        results["arms"][arm] = {
            "regret_25": at25,
            "regret_50": finals,
            "median_50": float(np.median(f)),
            "median_50_ci95": bootstrap_median_ci(f),
            "trapped_above_0.05": int(np.sum(f > 0.05)),
            "cpu_s_median": float(np.median(seconds)),
        }
        e = results["arms"][arm]
        print(
            f"{arm:32s} median@25 {np.median(at25):.3g}  median@50 {e['median_50']:.3g}  "
            f"above 0.05: {e['trapped_above_0.05']}/{args.seeds}  cpu {e['cpu_s_median']:.1f} s  "
            f"per seed @50: {' '.join(f'{v:.3g}' for v in finals)}",
            flush=True,
        )
    write_results(args.out, results)


if __name__ == "__main__":
    main()
