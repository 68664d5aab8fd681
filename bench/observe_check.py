"""``warmbo observe``'s check of a new value (``_surprise_line``): false alarms on right values and
typos caught, with and without the rule that checks only where the other trials inform the prediction
(session 48, :data:`warmbo.cli.UNINFORMED`).

Two scenarios, each over ``--seeds`` seeds, both with the check's model as shipped:

- ``spread``: the synthetic lab of ``tests/test_cli.py`` (temperature and time, noise sd 1.5 in
  0-100), 6 design trials then 14 asks of the optimizer; at each ask the right value and a typo (a
  tenth of it) are checked against the trials before it (the right one is then told).
- ``cluster``: a warm start's first trials, 5 at the old optimum (temperature 88 +- 3, time 6 h, the
  buffer "hepes"; noise-free), then one right value at a uniformly random point of the space (the
  buffer drawn too: 15 lower when not hepes), and a typo at the cluster's centre.

Reported: checks, right values flagged (false alarms), typos flagged, per arm (``before``: every
value checked, as before session 48; ``after``: as shipped).

    python bench/observe_check.py [--seeds 30] [--out FILE]

Results: bench/results/observe_check.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import warmbo as wb
import warmbo.cli as cli

RESULTS = Path(__file__).parent / "results" / "observe_check.json"
ARMS = {"before": float("inf"), "after": cli.UNINFORMED}


def _lab(p: dict, rng, noise: float) -> float:
    value = 85 - 10 * ((p["temp"] - 88) / 18) ** 2 - 8 * np.log(p["time"] / 6) ** 2
    if "buffer" in p:
        value -= 15 * (p["buffer"] != "hepes")
    return float(value + (rng.normal(0, noise) if noise else 0.0))


def _flags(opt, params: dict, value: float) -> bool:
    """Whether observe's check flags ``value`` at ``params`` against the study's trials as they are."""
    return cli._surprise_line(opt, SimpleNamespace(id=-1, params=params, value=value), "x") is not None


def spread(seeds: int) -> dict:
    space = wb.Space([wb.Float("temp", 40, 120), wb.Float("time", 0.5, 24, log=True)])
    counts = {arm: {"checks": 0, "right_flagged": 0, "typos_flagged": 0} for arm in ARMS}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        opt = wb.Optimizer(space, maximize=True, seed=seed)
        for _ in range(6):
            s = opt.ask()
            opt.tell(s, _lab(s, rng, 1.5))
        for _ in range(14):
            s = opt.ask()
            right = _lab(s, rng, 1.5)
            for arm, threshold in ARMS.items():
                cli.UNINFORMED = threshold
                counts[arm]["checks"] += 1
                counts[arm]["right_flagged"] += _flags(opt, dict(s), right)
                counts[arm]["typos_flagged"] += _flags(opt, dict(s), right / 10)
            opt.tell(s, right)
    return counts


def cluster(seeds: int) -> dict:
    space = wb.Space(
        [
            wb.Float("temp", 40, 120),
            wb.Float("time", 0.5, 24, log=True),
            wb.Categorical("buffer", ["tris", "hepes", "pbs"]),
        ]
    )
    counts = {arm: {"checks": 0, "right_flagged": 0, "typos_flagged": 0} for arm in ARMS}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        opt = wb.Optimizer(space, maximize=True, seed=seed)
        for _ in range(5):
            p = {
                "temp": 88 + rng.normal(0, 3),
                "time": float(6 * np.exp(rng.normal(0, 0.2))),
                "buffer": "hepes",
            }
            opt.tell(p, _lab(p, rng, 0.0))
        far = space.sample(1, seed=seed)[0]
        centre = {"temp": 88.0, "time": 6.0, "buffer": "hepes"}
        for arm, threshold in ARMS.items():
            cli.UNINFORMED = threshold
            counts[arm]["checks"] += 1
            counts[arm]["right_flagged"] += _flags(opt, far, _lab(far, rng, 0.0))
            counts[arm]["typos_flagged"] += _flags(opt, centre, _lab(centre, rng, 0.0) / 10)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    started = time.time()
    shipped = cli.UNINFORMED
    try:
        results = {"spread": spread(args.seeds), "cluster": cluster(args.seeds)}
    finally:
        cli.UNINFORMED = shipped
    record = {
        "seeds": args.seeds,
        "uninformed": shipped,
        "results": results,
        "seconds": round(time.time() - started, 1),
        "load_average": os.getloadavg(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
