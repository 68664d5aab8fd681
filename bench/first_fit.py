"""The first fit of a study that has none stored (its trials told or imported, never asked): its cost
and what bounding it does to the search (session 49).

A study of N told random points of Hartmann-6 (no ask yet, so no fit stored), then K asks of warmbo's
default ``Optimizer``; recorded per seed: the CPU seconds of the first ask and the simple regret
after the K asks. Session 49 bounds that first fit as a warm refit is bounded (random restarts on
128 rows, the full-data search capped) for studies of 256 trials or more; a user test had a first
ask of 7.3 s CPU against 0.86 s for the next ones (1,012 told trials, d = 30).

Each arm runs in its own process on the ``src`` it is given, so the same script measures the code
before and after the change::

    python bench/first_fit.py --src /path/to/old/src --label before
    python bench/first_fit.py --label after          # (this checkout)

Results: ``bench/results/first_fit.json`` (one entry per label, with the machine and load).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

RESULTS = Path(__file__).parent / "results" / "first_fit.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    parser.add_argument("--label", default="after")
    parser.add_argument("--told", type=int, default=512)
    parser.add_argument("--asks", type=int, default=15)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    sys.path.insert(0, str(args.src))
    import numpy as np

    import warmbo as wb
    from warmbo.problems.functions import hartmann6

    warnings.simplefilter("ignore")
    fn = hartmann6()
    regrets, firsts = [], []
    load = os.getloadavg()
    for seed in range(args.seeds):
        space = wb.Space.box(fn.bounds)
        opt = wb.Optimizer(space, seed=seed)
        rng = np.random.default_rng(100 + seed)
        X = rng.uniform(fn.bounds[:, 0], fn.bounds[:, 1], (args.told, fn.bounds.shape[0]))
        for x in X:
            opt.tell(dict(zip(space.names, map(float, x), strict=True)), float(fn(x[None])[0]))
        for k in range(args.asks):
            start = time.process_time()
            p = opt.ask()
            if k == 0:
                firsts.append(time.process_time() - start)
            opt.tell(p, float(fn(np.array([[p[n] for n in space.names]]))[0]))
        regrets.append(float(opt.best.value - fn.optimum_value))
        said = f"{args.label} seed {seed}: first ask {firsts[-1]:.2f} s CPU, regret {regrets[-1]:.4g}"
        print(said, flush=True)
    stored = json.loads(args.out.read_text()) if args.out.exists() else {}
    stored[args.label] = {
        "src": str(args.src),
        "told": args.told,
        "asks": args.asks,
        "first_ask_cpu_s": firsts,
        "regret": regrets,
        "median_first_ask_cpu_s": float(np.median(firsts)),
        "median_regret": float(np.median(regrets)),
        "load_average_start": load,
        "load_average_end": os.getloadavg(),
    }
    args.out.write_text(json.dumps(stored, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
