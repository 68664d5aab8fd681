"""What a committed trial costs on a file study, with the per-commit checkpoint into ``study.db``
(``PRAGMA wal_autocheckpoint = 1``, session 20) against SQLite's default (every 1000 pages).

Adds ``--trials`` complete trials one commit each to a study in ``--folder`` (default: a temporary
folder under the current directory, so on the disk a user's studies are on), twice in the same
process: once as warmbo opens studies, once with the connection set back to the default. Prints the
median and 90th percentile per commit and their ratio.

    python bench/commit_cost.py --trials 400
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import warmbo as wb


def per_commit(folder: str, name: str, trials: int, default_checkpoint: bool) -> np.ndarray:
    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("y", 0.0, 1.0)])
    study = wb.Optimizer(space, storage=os.path.join(folder, name), seed=0).study
    if default_checkpoint:
        study._connect().execute("PRAGMA wal_autocheckpoint = 1000")
    rng = np.random.default_rng(0)
    times = []
    for i in range(trials):
        started = time.perf_counter()
        study.add_trial({"x": float(rng.random()), "y": float(rng.random())}, "complete", float(i))
        times.append(time.perf_counter() - started)
    study.close()
    return np.array(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--folder", default=None)
    args = parser.parse_args()
    folder = args.folder or tempfile.mkdtemp(prefix="warmbo-commit-cost-", dir=".")
    every = per_commit(folder, "every.db", args.trials, default_checkpoint=False)
    default = per_commit(folder, "default.db", args.trials, default_checkpoint=True)
    for name, t in (("checkpoint every commit", every), ("SQLite default", default)):
        print(f"{name}: median {np.median(t):.3f} ms, p90 {np.percentile(t, 90):.3f} ms per commit")
    print(f"ratio of medians: {np.median(every) / np.median(default):.2f} ({args.trials} commits, {folder})")


if __name__ == "__main__":
    main()
