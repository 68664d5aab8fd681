"""Warm-design variants under ``transfer="auto"`` on the transfer benchmark's meta-data (issue 14).

Leave-one-task-out as ``warmbo bench --section transfer`` does it (:mod:`warmbo.benchmarks.transfer`:
every other task a source of 100 random rows, 30 evaluations, seeds 0..seeds-1), for ``auto`` only,
with the warm design changed:

- ``average``: the default (``warm_design(rule="average")``, 3 points);
- ``portfolio``: greedy portfolio over the finite space's candidates (the default before session 8);
- ``portfolio-sources``: greedy portfolio over the sources' own configurations only;
- ``average-N``: the default rule with an N-point design (``Optimizer(n_initial=N)``).

The optimizer has no argument for the rule, so the script wraps ``warmbo.optimizer.warm_design``.
Prints the median over targets of the normalised regret after 1, 5, 10, 20, 30 evaluations and of the
evaluations to the target's top 1%. About 2 minutes per (variant, suite) on 2 cores:

    python bench/warm_design_variants.py --variant average --variant portfolio --suite hpobench --seeds 2
    python bench/warm_design_variants.py --variant average-5 --suite svm --seeds 1

``--out FILE`` also writes every run's regret trace (task, seed), so two checkouts can be compared
run by run (the fit-tolerance comparison in ``docs/transfer.md`` was made that way).
"""

from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path

import numpy as np

import warmbo as wb
import warmbo.optimizer as optimizer_module
from warmbo.benchmarks.transfer import CHECKPOINTS, _prior, _Suite

T = 30
_WARM_DESIGN = optimizer_module.warm_design


def _patch(variant: str) -> int | None:
    """Set the design rule for ``variant``; returns the design size it asks for (None: the default)."""
    rule, drop_candidates, size = "average", False, None
    if variant == "portfolio":
        rule = "portfolio"
    elif variant == "portfolio-sources":
        rule, drop_candidates = "portfolio", True
    elif variant.startswith("average-"):
        size = int(variant.split("-", 1)[1])
    elif variant != "average":
        raise SystemExit(f"unknown variant {variant!r}")

    @functools.wraps(_WARM_DESIGN)
    def design(*args, **kwargs):
        if drop_candidates:
            kwargs["candidates"] = None
        return _WARM_DESIGN(*args, rule=rule, **kwargs)

    optimizer_module.warm_design = design
    return size


def run(variant: str, suite_name: str, seeds: int) -> dict:
    size = _patch(variant)
    suite = _Suite(suite_name)
    regrets, hits, runs = [], [], []
    for task in suite.tasks:
        per_seed, task_hits = [], []
        for seed in range(seeds):
            f = suite.objective(task, seed)
            top, bottom = suite.truth_range(f)
            sources = suite.sources(task, seed, 100)
            kwargs = {} if size is None else {"n_initial": size}
            opt = wb.Optimizer(
                f.space, maximize=True, seed=seed, prior=_prior(f, sources), transfer="auto", **kwargs
            )
            truths = []
            for _ in range(T):
                p = opt.ask()
                opt.tell(p, f(p))
                truths.append(f.truth(p))
            r = (top - np.maximum.accumulate(truths)) / (top - bottom)
            per_seed.append(r)
            reached = np.flatnonzero(r <= 0.01)
            task_hits.append(reached[0] + 1 if reached.size else T + 1)
            runs.append(
                {"task": task, "seed": seed, "regret": r.tolist(), "evals_to_top1pct": int(task_hits[-1])}
            )
        regrets.append(np.mean(per_seed, axis=0))
        hits.append(np.mean(task_hits))
    regrets = np.array(regrets)
    return {
        "regret": {c: float(np.median(regrets[:, c - 1])) for c in CHECKPOINTS},
        "evals_to_top1pct": float(np.median(hits)),
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", required=True)
    parser.add_argument("--suite", action="append", required=True, choices=["hpobench", "svm"])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument(
        "--out", help="also write every run's regret trace here (JSON), for paired comparisons"
    )
    args = parser.parse_args()
    results = {}
    for variant in args.variant:
        for suite in args.suite:
            out = run(variant, suite, args.seeds)
            results[f"{variant}:{suite}"] = out
            regret = "  ".join(f"@{c} {v:.3g}" for c, v in out["regret"].items())
            print(f"{variant:18s} {suite:8s} {regret}  top1% {out['evals_to_top1pct']:.2f}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
