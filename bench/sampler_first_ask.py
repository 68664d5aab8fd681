"""The first proposal of a new ``WarmboSampler`` on a stored Optuna study, with and without the warm
start the study keeps (session 46).

A user resuming an Optuna study, or a second worker joining one, makes a new sampler object in a new
process. Its in-memory optimizer used to start every study with a full multi-start hyperparameter
fit, where a warmbo ``Optimizer`` resuming a stored study starts from the stored hyperparameters
(issue 15, "no cold asks"). Since session 46 the sampler keeps the last fit's hyperparameters in the
study's system attributes (``warmbo:warm_start:<digest>``).

For each size n (d = 6, Hartmann-6 on the unit cube, minimised, n uniformly random complete trials
in an SQLite Optuna storage), one process makes the study and proposes one trial (which stores the
warm start). Then, each in a fresh Python process (imports included), a new sampler proposes
``--asks`` trials, each evaluated and told:

- ``stored``: on that study as it is;
- ``none``: on a copy of it without the warm start (the sampler before session 46).

Reported per arm: the first proposal's wall time, the median and the worst of the others, and the
load average; every BLAS call on one thread (the default the sampler's optimizer sets).

    python bench/sampler_first_ask.py [--sizes 256,1000,1024] [--asks 6] [--out FILE]

Results: bench/results/sampler_first_ask.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "sampler_first_ask.json"
D = 6


def _objective(params: dict) -> float:
    import numpy as np

    from warmbo.problems import hartmann6

    return float(hartmann6()(np.array([params[f"x{i}"] for i in range(D)])))  # (its box is the unit cube)


def _distributions():
    from optuna.distributions import FloatDistribution

    return {f"x{i}": FloatDistribution(0.0, 1.0) for i in range(D)}


def make(url: str, n: int) -> None:
    """The stored study: n random complete trials, then one proposal of a sampler (stores the warm start)."""
    import numpy as np
    import optuna

    from warmbo.integrations.optuna import WarmboSampler

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rng = np.random.default_rng(n)
    study = optuna.create_study(storage=url, study_name="bench")
    trials = []
    for _ in range(n):
        params = {f"x{i}": float(v) for i, v in enumerate(rng.random(D))}
        trials.append(
            optuna.trial.create_trial(params=params, distributions=_distributions(), value=_objective(params))
        )
    study.add_trials(trials)
    study.sampler = WarmboSampler(seed=0)
    trial = study.ask(_distributions())
    study.tell(trial, _objective(trial.params))


def asks(url: str, count: int) -> list[float]:
    """Wall seconds of ``count`` proposals of a new sampler on the stored study (each told)."""
    import optuna

    from warmbo.integrations.optuna import WarmboSampler

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.load_study(storage=url, study_name="bench", sampler=WarmboSampler(seed=1))
    out = []
    for _ in range(count):
        start = time.perf_counter()
        trial = study.ask(_distributions())
        out.append(time.perf_counter() - start)
        study.tell(trial, _objective(trial.params))
    return out


def _forget_warm_start(url: str) -> None:
    import optuna

    from warmbo.integrations.optuna import WARM_START_KEY

    study = optuna.load_study(storage=url, study_name="bench")
    storage = study._storage
    keys = [k for k in storage.get_study_system_attrs(study._study_id) if k.startswith(WARM_START_KEY)]
    assert keys, "the sampler stored no warm start"
    # (RDB storages have no delete: an empty value is read as none, as an unreadable record is)
    for key in keys:
        storage.set_study_system_attr(study._study_id, key, None)


def _child(*args: str) -> str:
    return subprocess.run(
        [sys.executable, __file__, *args], check=True, capture_output=True, text=True
    ).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,1000,1024")
    parser.add_argument("--asks", type=int, default=6)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # (what, url, n or count)
    args = parser.parse_args()
    if args.child:
        what, url, number = args.child
        if what == "make":
            make(url, int(number))
        elif what == "forget":
            _forget_warm_start(url)
        else:
            print(json.dumps(asks(url, int(number))))
        return
    from warmbo.benchmarks._common import git_commit, machine_info, write_results

    results = {
        "what": __doc__.splitlines()[0],
        "command": "python bench/sampler_first_ask.py " + " ".join(sys.argv[1:]),
        "git": git_commit(),
        "machine": machine_info(),
        "load_average_start": os.getloadavg(),
        "sizes": {},
    }
    print("| n | arm | first ask s | median of the next s | worst of the next s |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for n in (int(s) for s in args.sizes.split(",")):
            stored = Path(folder) / f"stored{n}.db"
            _child("--child", "make", f"sqlite:///{stored}", str(n))
            bare = Path(folder) / f"none{n}.db"
            shutil.copy(stored, bare)
            _child("--child", "forget", f"sqlite:///{bare}", "0")
            row = {}
            for arm, path in (("stored", stored), ("none", bare)):
                times = json.loads(_child("--child", "asks", f"sqlite:///{path}", str(args.asks)))
                rest = sorted(times[1:])
                row[arm] = {
                    "first_s": times[0],
                    "median_next_s": rest[len(rest) // 2],
                    "worst_next_s": rest[-1],
                }
                print(
                    f"| {n} | {arm} | {times[0]:.3f} | {rest[len(rest) // 2]:.3f} | {rest[-1]:.3f} |",
                    flush=True,
                )
            results["sizes"][n] = row
    results["load_average_end"] = os.getloadavg()
    write_results(args.out, results)
    print(f"load average {results['load_average_start']} -> {results['load_average_end']}")


if __name__ == "__main__":
    main()
