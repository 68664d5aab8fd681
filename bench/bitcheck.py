"""Is the default sequential optimizer unchanged to the bit? (the check every session runs before
saying that ``bench/README.md``'s quality tables still stand)

Replays ``Warmbo().minimize`` (the quality section's warmbo method: the default ``Optimizer``, in
memory) on the quality section's problems for seeds 0 and 1, and compares the simple regret after
each budget with the values stored in ``bench/results/quality-peers.json``, exactly (``==`` on
floats). Prints one line per run and ``differences: N``; exits 1 when N > 0. About 10 s (35 s on
a slower machine).

The stored values hold on the machine that recorded them: another CPU runs other BLAS kernels
(OpenBLAS picks them at load time: ``SkylakeX`` there, ``Haswell`` on an AMD EPYC without AVX-512),
whose sums round differently, and every run then differs from the first refit on (session 23 saw
24 differences on unchanged code). To check a change on such a machine, record the code before it
on this machine and compare with that:

    git archive main src | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base/src python bench/bitcheck.py --save /tmp/bitcheck-base.json
    python bench/bitcheck.py --against /tmp/bitcheck-base.json
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from warmbo.benchmarks.methods import Warmbo
from warmbo.benchmarks.quality import problem

RESULTS = Path(__file__).parent / "results" / "quality-peers.json"
SEEDS = (0, 1)


def _stored(path: Path) -> tuple[list[int], dict[str, dict[int, list[float]]]]:
    """The budgets and, per problem and seed, the regrets to compare with: from the quality results
    (``bench/results/quality-peers.json``) or from a file written by ``--save``."""
    data = json.loads(path.read_text())
    if data.get("bitcheck"):
        runs = {name: {int(s): v for s, v in seeds.items()} for name, seeds in data["runs"].items()}
        return data["budgets"], runs
    data = data.get("results", data)
    budgets = data["settings"]["budgets"]
    runs = {
        name: {
            seed: [entry["methods"]["warmbo"]["regret"][str(b)]["values"][seed] for b in budgets]
            for seed in SEEDS
        }
        for name, entry in data["problems"].items()
    }
    return budgets, runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--against", type=Path, default=RESULTS, help="the values to compare with (default: %(default)s)"
    )
    parser.add_argument("--save", type=Path, help="write this run's values here instead of comparing")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    budgets, want_runs = _stored(RESULTS if args.save else args.against)
    got_runs: dict[str, dict[int, list[float]]] = {}
    bad = 0
    for name, seeds in want_runs.items():
        for seed in SEEDS:
            fn = problem(name)
            best = np.minimum.accumulate(Warmbo().minimize(fn, max(budgets), seed))
            got = [float(best[b - 1] - fn.optimum_value) for b in budgets]
            got_runs.setdefault(name, {})[seed] = got
            if args.save:
                print(name, seed, got, flush=True)
                continue
            same = got == seeds[seed]
            bad += not same
            print(name, seed, "same" if same else f"DIFF {got} {seeds[seed]}", flush=True)
    if args.save:
        args.save.write_text(json.dumps({"bitcheck": 1, "budgets": budgets, "runs": got_runs}, indent=1))
        print("saved", args.save)
        return 0
    print("differences:", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
