"""Envelope-BO's gate (:func:`warmbo.transfer.envelope.explains_target`) through the optimizer: how
often it leaves out a related source while the target has few points, and what that costs or saves
against keeping every source and against no transfer (the review of session 39: the gate left out an
identical source at 3 target points in 3 of 40 draws, a shifted one in 12 of 40).

The docs' example (docs/transfer.md, Envelope-BO): 2-D, x in [-3, 3]^2, the source a finished run of
25 uniform points on a Gaussian bump at (0, 0); targets, maximised: the same bump ("identical"),
the bump at (0.5, 0.5) ("shifted"), at (1.5, -1.5) ("far"), and the source's negative ("opposite").
Each run, 10 evaluations: ``Optimizer(space, prior=[source], transfer="envelope", maximize=True,
seed=seed)`` (path ``prior``: its first asks are the source's best points) and the docs' expert way,
``Optimizer(space, model=Envelope(source=...), acquisition=EI(incumbent="mean"), n_initial=2, ...)``
(path ``model``: a random design, where the target's first values can be near zero).
Arms: ``gate`` (warmbo as shipped), ``keep`` (the gate always says yes: every source
stays in, as before session 39), ``none`` (no prior: plain BO). Written to
``bench/results/envelope_gate.json``: per target and arm the fraction of the maximum reached after
3, 5 and 10 evaluations (median, mean, worst) and, for ``gate``, at how many asks the source was left
out.

    python bench/envelope_gate.py               # 40 seeds: about 4 minutes on one core
    python bench/envelope_gate.py --seeds 4
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from unittest import mock  # noqa: E402

import numpy as np  # noqa: E402

import warmbo as wb  # noqa: E402
import warmbo.transfer.envelope as envelope  # noqa: E402
from warmbo.benchmarks._common import machine_info, write_results  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "envelope_gate.json"
SPACE = wb.Space.box([(-3.0, 3.0), (-3.0, 3.0)])
PEAK = 1 / (2 * np.pi)
TARGETS = {
    "identical": (1.0, (0.0, 0.0)),
    "shifted": (1.0, (0.5, 0.5)),
    "far": (1.0, (1.5, -1.5)),
    "opposite": (-1.0, (0.0, 0.0)),
}
CHECKPOINTS = (3, 5, 10)


def bump(x: np.ndarray, centre) -> np.ndarray:
    return np.exp(-0.5 * np.sum((np.atleast_2d(x) - np.asarray(centre)) ** 2, axis=1)) / (2 * np.pi)


def source() -> tuple[list[dict], list[float]]:
    X = np.random.default_rng(0).uniform(-3, 3, (25, 2))
    return [{"x0": a, "x1": b} for a, b in X], list(bump(X, (0.0, 0.0)))


def fraction(sign: float, centre, best: float) -> float:
    """Of the way from the target's lowest to its highest value on the box (1 = the maximum)."""
    top, bottom = (PEAK, 0.0) if sign > 0 else (0.0, -PEAK)
    return (best - bottom) / (top - bottom)


def run(target: str, arm: str, seed: int, budget: int, path: str) -> dict:
    sign, centre = TARGETS[target]
    if arm == "none":
        opt = wb.Optimizer(SPACE, maximize=True, seed=seed)
    elif path == "prior":
        opt = wb.Optimizer(SPACE, maximize=True, seed=seed, prior=[source()], transfer="envelope")
    else:  # the docs' expert way: a random design of 2 points, then EI on the model
        points, values = source()
        model = wb.Envelope(source=(SPACE.encode(points), np.array(values)), seed=seed)
        opt = wb.Optimizer(
            SPACE, model=model, acquisition=wb.EI(incumbent="mean"), maximize=True, seed=seed, n_initial=2
        )
    best, curve, left_out = -np.inf, [], 0
    for _ in range(budget):
        trial = opt.ask()
        model = getattr(opt, "model_", None)
        used = getattr(model, "source_used_", None)
        left_out += used is not None and not bool(np.all(used))
        value = float(sign * bump(np.array([trial["x0"], trial["x1"]]), centre)[0])
        opt.tell(trial, value)
        best = max(best, value)
        curve.append(fraction(sign, centre, best))
    return {"curve": curve, "asks_with_source_left_out": left_out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--budget", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    results = {"machine": machine_info(), "load_average_start": os.getloadavg(), "budget": args.budget}
    for path, target in [(path, target) for path in ("prior", "model") for target in TARGETS]:
        for arm in ("gate", "keep", "none"):
            if arm == "none" and path == "model":
                continue  # (the same runs as the prior path's)
            runs = []
            for seed in range(args.seeds):
                if arm == "keep":
                    with mock.patch.object(envelope, "explains_target", lambda y, mapped: True):
                        runs.append(run(target, arm, seed, args.budget, path))
                else:
                    runs.append(run(target, arm, seed, args.budget, path))
            curves = np.array([r["curve"] for r in runs])
            summary = {}
            for n in CHECKPOINTS:
                if n <= args.budget:
                    at = curves[:, n - 1]
                    summary[f"after_{n}"] = {
                        "median": float(np.median(at)),
                        "mean": float(np.mean(at)),
                        "worst": float(np.min(at)),
                        "per_seed": [round(float(v), 4) for v in at],
                    }
            summary["asks_with_source_left_out"] = [r["asks_with_source_left_out"] for r in runs]
            results[f"{path}/{target}/{arm}"] = summary
            line = "  ".join(
                f"after {n}: median {at['median']:.3f} worst {at['worst']:.3f}"
                for n in CHECKPOINTS
                if (at := summary.get(f"after_{n}"))
            )
            print(f"{path:5s} {target:9s} {arm:4s} {line}", flush=True)
    write_results(args.out, results)


if __name__ == "__main__":
    main()
