"""RGPE/auto's weights on one target of the transfer benchmark, beside plain GP-EI (issue 14).

For each seed: the normalised regret of ``transfer="auto"`` and of no transfer (the optimizer's
default) after 5, 10, 20 and 30 evaluations, and auto's ensemble weights at those points as
``opt.transfer_report()`` gives them (the target GP's weight, the largest source weight, how many
sources have weight). The same runs as the
transfer section's (:mod:`warmbo.benchmarks.transfer`: every other task a source of 100 random rows).
Session 12 used it on the SVM target where auto ended furthest behind GP-EI:

    python bench/transfer_weights.py --suite svm --task email --seeds 2

``--method rgpe`` shows RGPE with its dilution guard instead of auto, and ``--every`` prints the
weights after every evaluation (session 13, docs/transfer.md: the guard handing whole asks to the
target GP on HPOBench's "phoneme"):

    python bench/transfer_weights.py --suite hpobench --task phoneme --seeds 1 --method rgpe --every
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import warmbo as wb
from warmbo.benchmarks.transfer import _prior, _Suite

CHECKPOINTS = (5, 10, 20, 30)


def run(
    suite: _Suite, task: str, seed: int, method: str, transfer: str = "auto", every: bool = False
) -> tuple[np.ndarray, list]:
    f = suite.objective(task, seed)
    top, bottom = suite.truth_range(f)
    kwargs = (
        {} if method == "none" else {"prior": _prior(f, suite.sources(task, seed, 100)), "transfer": transfer}
    )
    opt = wb.Optimizer(f.space, maximize=True, seed=seed, **kwargs)
    truths, weights = [], []
    for t in range(1, max(CHECKPOINTS) + 1):
        p = opt.ask()
        opt.tell(p, f(p))
        truths.append(f.truth(p))
        if method != "none" and t >= 2 and (every or t in CHECKPOINTS):
            report = opt.transfer_report()  # the public report of the weights (refits the model)
            sources = np.array([s.weight or 0.0 for s in report.sources])
            top_source = float(sources.max())
            weights.append(
                (t, round(float(report.target_weight), 2), round(top_source, 2), int(np.sum(sources > 0)))
            )
    regret = (top - np.maximum.accumulate(truths)) / (top - bottom)
    return regret[[c - 1 for c in CHECKPOINTS]], weights


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=["hpobench", "svm"], default="svm")
    parser.add_argument("--task", required=True)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--method", choices=["auto", "rgpe"], default="auto")
    parser.add_argument("--every", action="store_true", help="weights after every evaluation from the 2nd")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    suite = _Suite(args.suite)
    for seed in range(args.seeds):
        for method in ("none", args.method):
            regret, weights = run(suite, args.task, seed, method, args.method, args.every)
            cells = "  ".join(f"@{c} {r:.4f}" for c, r in zip(CHECKPOINTS, regret, strict=True))
            shown = "  ".join(f"@{t}: target {wt}, top source {ws}, {k} sources" for t, wt, ws, k in weights)
            print(f"seed {seed} {method:4s} {cells}  {shown}", flush=True)


if __name__ == "__main__":
    main()
