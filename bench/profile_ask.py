"""Where an ask's time goes, in the overhead section's own setups (issue 15's cost targets).

Modes (:class:`warmbo.benchmarks.methods.Warmbo`, d = 6, the overhead section's data):

- ``fixed``: the steady ask of a running loop with fixed hyperparameters at ``--n`` trials;
- ``first``: the first ask of a new Optimizer object on a stored study of ``--n`` trials (told in
  bulk and asked once by the object that wrote it);
- ``run``: ``--asks`` asks of a running loop from ``--n`` trials with the default model (``--fixed``: with the
  fixed-hyperparameter model of ``fixed`` mode; each ask then differs, unlike ``fixed`` mode's repeated one).

Each ask's wall time and number of hyperparameter likelihood evaluations is printed; ``--profile``
adds cProfile's 30 most expensive functions by cumulative time over the measured asks. Session 13
used it for the figures in issue 15's note:

    python bench/profile_ask.py --mode fixed --n 2000 --profile
    python bench/profile_ask.py --mode first --n 1000
    python bench/profile_ask.py --mode run --n 1000 --asks 6

Session 16's fixed-model loop (median of 20 asks from 2000 trials, run on two commits in turn):

    python bench/profile_ask.py --mode run --fixed --n 2000 --asks 20
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
import warnings

import numpy as np

from warmbo.benchmarks.methods import Warmbo
from warmbo.benchmarks.overhead import _data, test_function
from warmbo.models import gp as gp_module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["fixed", "first", "run"], default="fixed")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--d", type=int, default=6)
    parser.add_argument("--asks", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--fixed", action="store_true", help="run mode: the fixed-hyperparameter model")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    X, y = _data(args.d, args.n, 0)
    f = test_function(args.d)
    method = Warmbo()
    if args.mode == "run":
        opt = method.running_optimizer(X, y, "fixed" if args.fixed else "ml2", 0, f)
        names = opt.space.names

        def ask():
            p = opt.ask()
            opt.tell(p, float(f(np.array([p[k] for k in names]))))

        asks = [ask] * args.asks
    else:
        asks = [method.prepare_ask(X, y, args.mode, 0, f) for _ in range(args.asks + 1)]
        asks.pop(0)()  # warm-up: imports and first-call costs

    evaluations = [0]
    guarded = gp_module.GP._guarded_objective  # every fit's search evaluates the function it returns

    def counted(self, *a, **k):
        fun = guarded(self, *a, **k)

        def counting(params):
            evaluations[0] += 1
            return fun(params)

        return counting

    gp_module.GP._guarded_objective = counted
    profiler = cProfile.Profile()
    times = []
    for i, ask in enumerate(asks):
        evaluations[0] = 0
        started = time.perf_counter()
        if args.profile:
            profiler.enable()
        ask()
        if args.profile:
            profiler.disable()
        elapsed = time.perf_counter() - started
        times.append(elapsed * 1000)
        print(f"ask {i + 1}: {elapsed * 1000:.1f} ms, {evaluations[0]} likelihood evaluations", flush=True)
    print(f"median {np.median(times):.1f} ms, worst {max(times):.1f} ms over {len(times)} asks", flush=True)
    gp_module.GP._guarded_objective = guarded
    if args.profile:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
