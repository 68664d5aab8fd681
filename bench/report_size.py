"""Size and generation time of the HTML report of a large study (session 21's report changes).

A 6-parameter study of 2100 random trials (seeded; 22 of them failed), values of Hartmann-6 plus
noise, written once to a study file; then ``warmbo report`` on it ``--repeats`` times in this
process. Prints the median wall and CPU seconds and the size of report.html.

    python bench/report_size.py [--repeats 2] [--trials 2100]

Run it with another checkout's sources (``PYTHONPATH=/tmp/old/src``) for the figures before a change.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import warmbo as wb
from warmbo.problems import hartmann6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--trials", type=int, default=2100)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from typer.testing import CliRunner

    from warmbo.cli import app

    f = hartmann6()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        opt = wb.Optimizer(wb.Space.box(list(zip(f.lower, f.upper, strict=True))), storage="big.db", seed=0)
        names = opt.space.names
        with opt.study.transaction():
            for i, x in enumerate(rng.uniform(f.lower, f.upper, size=(args.trials, f.dim))):
                params = {n: float(v) for n, v in zip(names, x, strict=True)}
                if i % 100 == 99:
                    opt.tell_failed(params, error="diverged")
                else:
                    opt.tell(params, float(f(x)) + 0.01 * float(rng.standard_normal()))
        del opt
        walls, cpus, sizes = [], [], []
        for k in range(args.repeats):
            wall, cpu = time.perf_counter(), time.process_time()
            result = CliRunner().invoke(app, ["report", "big.db", "--out", f"rep{k}"])
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            if result.exit_code != 0:
                raise SystemExit(result.output)
            sizes.append(Path(f"rep{k}", "report.html").stat().st_size)
    print(
        f"{args.trials} trials: report.html {sizes[-1]:,} bytes; wall {statistics.median(walls):.2f} s, "
        f"CPU {statistics.median(cpus):.2f} s (median of {args.repeats}); load {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
