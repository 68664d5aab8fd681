"""What ``transfer="auto"`` is made of, one piece at a time, on the transfer benchmark (issue 14).

``auto`` is RGPE's ranking-weighted ensemble without RGPE's dilution guard, plus the optimizer's
hedge (the cold design's points after 2m complete trials without a new best, m = max(3, 2d);
``Optimizer._hedge_point``). The arms, each run through the transfer section's own loop
(:func:`warmbo.benchmarks.transfer.run_one`: leave-one-task-out, every other task a source of 100
random rows, 30 evaluations, the section's seeds):

- ``none``: no transfer (plain GP-EI, the optimizer's default);
- ``rgpe``: RGPE as published (dilution guard on), no hedge;
- ``guard+hedge-m``: guard on, hedge after a stall of m;
- ``guard+hedge-2m``: guard on, hedge after a stall of 2m (``auto`` at git dcdb2e8);
- ``no-guard``: guard off, no hedge;
- ``auto``: guard off, hedge after 2m (the default since git 60b7075).

Reported per suite: the median over targets of the normalised regret after 1, 5, 10, 20 and 30
evaluations, the median evaluations to the target's top 1%, and the largest amount by which an arm
ends behind ``none`` on one target after 30 (issue 14's bound: 0.02).

    python bench/auto_variants.py [--suite hpobench --suite svm] [--arms none,rgpe,auto] [--tasks N]
                                  [--out FILE]

Results: bench/results/auto_variants.json (or ``--out``) and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from warmbo.benchmarks.transfer import SIZES, _Suite, _suite_results

ARMS = ("none", "rgpe", "guard+hedge-m", "guard+hedge-2m", "no-guard", "auto")


@contextmanager
def variant(arm: str):
    """The method name the arm runs, with the hedge's patience and auto's guard patched for it."""
    from warmbo.transfer import registry

    optimizer = sys.modules["warmbo.optimizer"]
    saved_patience, saved_auto = optimizer._HEDGE_PATIENCE, registry.TRANSFER_METHODS["auto"]
    patience = {"guard+hedge-m": 1, "guard+hedge-2m": 2, "no-guard": math.inf}.get(arm, saved_patience)
    guard = arm.startswith("guard")
    try:
        optimizer._HEDGE_PATIENCE = patience
        if guard:
            registry.TRANSFER_METHODS.pop("auto")
            registry.TRANSFER_METHODS.register("auto", registry._factory("baselines", "RGPE"))
        yield arm if arm in ("none", "rgpe") else "auto"
    finally:
        optimizer._HEDGE_PATIENCE = saved_patience
        if guard:
            registry.TRANSFER_METHODS.pop("auto")
            registry.TRANSFER_METHODS.register("auto", saved_auto)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", choices=["hpobench", "svm"])
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--tasks", type=int, default=None, help="only the first N targets of each suite")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "auto_variants.json"))
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    arms = args.arms.split(",")
    unknown = sorted(set(arms) - set(ARMS))
    if unknown:
        parser.error(f"unknown arm(s) {unknown}; choose from {ARMS}")
    if "none" not in arms:
        arms.insert(0, "none")  # the per-target bound is against it
    ctx = SimpleNamespace(seed=0, preset="full", log=lambda message: None)
    sizes = dict(SIZES["full"], hpobench_tasks=args.tasks, svm_tasks=args.tasks)
    out: dict = {"arms": arms, "sizes": sizes, "suites": {}}
    started = time.time()
    for name in args.suite or ["hpobench", "svm"]:
        suite = _Suite(name)
        results = {}
        for arm in arms:
            with variant(arm) as method:
                entry = _suite_results(suite, sizes, (method,), ctx)
            results[arm] = entry["methods"][method]
            tasks = entry["tasks"]
        none = np.array(results["none"]["final_regret_per_target"])
        print(f"\n{name} ({len(tasks)} targets x {sizes[f'{name}_seeds']} seeds)")
        header = " ".join(f"{'@' + c:>8s}" for c in results["none"]["regret"])
        print(f"{'arm':16s} {header}  top1%  worst")
        for arm, entry in results.items():
            worst = float(np.max(np.array(entry["final_regret_per_target"]) - none))
            entry["worst_behind_none"] = worst
            cells = " ".join(f"{v['median']:8.4g}" for v in entry["regret"].values())
            print(f"{arm:16s} {cells}  {entry['evals_to_top1pct']['median']:5.1f}  {worst:+.3f}")
        out["suites"][name] = {"tasks": tasks, "arms": results}
    out["runtime_s"] = round(time.time() - started, 1)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"\n{args.out} ({out['runtime_s']:.0f} s)")


if __name__ == "__main__":
    main()
