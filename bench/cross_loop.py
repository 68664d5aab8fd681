"""Which half of the BO step makes BoTorch's standard loop better at d >= 10: the model or the search?

Issue 15: after 50 evaluations BoTorch's SingleTaskGP + LogEI is clearly ahead of warmbo's default on
Ackley-10, Griewank-10, Levy-10 and Rosenbrock-20. This script crosses the two halves of one step:

- model ``w``: warmbo's default model as :class:`warmbo.Optimizer` fits it (``Constant * Matern-5/2``
  ARD, ML-II, warm-started from the previous ask); model ``b``: BoTorch's ``SingleTaskGP`` with
  ``Standardize`` and its default priors, fitted by ``fit_gpytorch_mll`` at every step;
- search ``w``: :func:`warmbo.suggest.suggest` (256 Sobol + 256 local candidates around the 5 best
  observations, 5 joint L-BFGS-B starts on log EI); search ``b``: ``botorch.optim.optimize_acqf``
  (q = 1, 512 raw samples, 10 restarts, as the peer in the benchmark).

An arm is ``model/search``: ``w/w`` is warmbo, ``b/b`` is BoTorch's loop, ``w/b`` climbs warmbo's log
EI (wrapped as a torch acquisition with its analytic gradient) with BoTorch's optimiser, ``b/w``
climbs BoTorch's ``LogExpectedImprovement`` (autograd gradients) with warmbo's search. Every arm of a
seed starts from the same scrambled Sobol design of ``max(3, 2 d)`` points (scipy's, seeded), so the
arms are paired. Needs the ``peers`` extra (torch, BoTorch).

    python bench/cross_loop.py --arm w/w --arm w/b --arm b/w --arm b/b --problem griewank-10
    python bench/cross_loop.py --arm w/b --problem ackley-10 --runs 10 --out /tmp/cross.json
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

import warmbo as wb
from warmbo.benchmarks.quality import problem
from warmbo.maximize import maximize
from warmbo.suggest import suggest

BUDGETS = (10, 25, 50)


def _torch():
    import torch

    torch.set_num_threads(1)
    return torch


def _logei_module(torch, fn):
    """A BoTorch acquisition whose forward is ``fn(U) -> (log values, gradients)`` on numpy arrays."""
    from botorch.acquisition import AcquisitionFunction

    class _Numpy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, X):
            U = X.detach().reshape(-1, X.shape[-1]).numpy()
            values, grads = fn(U)
            values = np.where(np.isfinite(values), values, -1e6)
            grads = np.where(np.isfinite(grads), grads, 0.0)
            ctx.save_for_backward(torch.as_tensor(grads).reshape(X.shape))
            return torch.as_tensor(values, dtype=X.dtype).reshape(X.shape[:-2])

        @staticmethod
        def backward(ctx, grad_out):
            (grads,) = ctx.saved_tensors
            return grad_out[..., None, None] * grads

    class Wrapped(AcquisitionFunction):
        def __init__(self):
            torch.nn.Module.__init__(self)

        def forward(self, X):
            return _Numpy.apply(X)

    return Wrapped()


class _TorchBound:
    """BoTorch's LogEI as a warmbo bound acquisition (EI values, log values, autograd gradients)."""

    has_gradient = True
    has_log = True

    def __init__(self, torch, acq):
        self.torch, self.acq = torch, acq

    def log_values(self, U):
        with self.torch.no_grad():
            return self.acq(self.torch.as_tensor(np.asarray(U))[:, None, :]).numpy()

    def log_values_and_gradients(self, U):
        X = self.torch.as_tensor(np.array(U, dtype=np.float64))[:, None, :].requires_grad_(True)
        values = self.acq(X)
        values.sum().backward()
        return values.detach().numpy(), X.grad[:, 0, :].numpy()

    def __call__(self, U):
        return np.exp(self.log_values(U))

    def values_and_gradients(self, U):
        log_values, grads = self.log_values_and_gradients(U)
        values = np.exp(log_values)
        return values, values[:, None] * grads

    def value_and_gradient(self, u):
        values, grads = self.values_and_gradients(np.asarray(u)[None, :])
        return float(values[0]), grads[0]


def _botorch_model(torch, X, y):
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms.outcome import Standardize
    from gpytorch.mlls import ExactMarginalLogLikelihood

    train_X = torch.as_tensor(X)
    train_Y = torch.as_tensor(-y)[:, None]  # maximised
    model = SingleTaskGP(train_X, train_Y, outcome_transform=Standardize(m=1))
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model, train_Y


def run_arm(arm: str, fn, seed: int, budget: int) -> tuple[np.ndarray, float]:
    from scipy.stats import qmc

    model_kind, search_kind = arm.split("/")
    d = fn.dim
    lower, upper = np.asarray(fn.lower), np.asarray(fn.upper)
    n_init = max(3, 2 * d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X = qmc.Sobol(d, scramble=True, seed=seed).random(n_init)
    y = np.array([float(fn(lower + x * (upper - lower))) for x in X])
    space = wb.Space.box([(0.0, 1.0)] * d)
    opt = wb.Optimizer(space, seed=seed, n_initial=1)
    names = space.names
    for x, v in zip(X, y, strict=True):
        opt.tell(dict(zip(names, x.tolist(), strict=True)), float(v))
    torch = _torch() if "b" in arm else None
    started = time.process_time()
    while len(y) < budget:
        index = len(y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if model_kind == "w":
                reference = opt.fit_model()
                bound = wb.EI().bind(reference, space=space, reference=reference)
            else:
                from botorch.acquisition import LogExpectedImprovement

                model, train_Y = _botorch_model(torch, X, y)
                bound = _TorchBound(torch, LogExpectedImprovement(model, best_f=train_Y.max()))
            if search_kind == "w":
                if model_kind == "w":
                    x = suggest(reference, wb.EI(), space, exclude=X, seed=seed * 100_003 + index)
                else:
                    anchors = X[np.argsort(y, kind="stable")[:5]]
                    x = maximize(bound, space, seed=seed * 100_003 + index, exclude=X, anchors=anchors).x
                if x is None:  # only excluded points found: a random point
                    x = np.random.default_rng(index).random(d)
            else:
                from botorch.optim import optimize_acqf

                torch.manual_seed(seed * 100_003 + index)
                acq = _logei_module(torch, bound.log_values_and_gradients) if model_kind == "w" else bound.acq
                bounds = torch.stack(
                    [torch.zeros(d, dtype=torch.float64), torch.ones(d, dtype=torch.float64)]
                )
                candidate, _ = optimize_acqf(acq, bounds=bounds, q=1, num_restarts=10, raw_samples=512)
                x = candidate.detach().numpy()[0]
        value = float(fn(lower + x * (upper - lower)))
        X, y = np.vstack([X, x]), np.append(y, value)
        opt.tell(dict(zip(names, x.tolist(), strict=True)), value)
    return y, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arm", action="append", required=True, help="model/search, e.g. w/b")
    parser.add_argument("--problem", action="append", required=True)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = parser.parse_args()
    results = {}
    if args.out is not None and args.out.exists():
        results = json.loads(args.out.read_text())["results"]
    for name in args.problem:
        fn = problem(name)
        for arm in args.arm:
            if name in results.get(arm, {}):
                continue
            regrets, seconds = [], []
            for seed in range(args.runs):
                y, cpu = run_arm(arm, fn, seed, max(BUDGETS))
                best = np.minimum.accumulate(y) - fn.optimum_value
                regrets.append([float(best[b - 1]) for b in BUDGETS])
                seconds.append(cpu)
            regrets = np.array(regrets)
            entry = {
                "median": {str(b): float(np.median(regrets[:, j])) for j, b in enumerate(BUDGETS)},
                "per_seed_final": regrets[:, -1].tolist(),
                "cpu_s_median": float(np.median(seconds)),
            }
            results.setdefault(arm, {})[name] = entry
            medians = " / ".join(f"{v:.3g}" for v in entry["median"].values())
            print(
                f"{arm:4s} {name:16s} median after {BUDGETS}: {medians}  cpu {entry['cpu_s_median']:.1f} s",
                flush=True,
            )
            if args.out is not None:
                args.out.write_text(
                    json.dumps({"runs": args.runs, "budgets": BUDGETS, "results": results}, indent=2)
                )


if __name__ == "__main__":
    main()
