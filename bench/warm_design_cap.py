"""The warm design's candidate cap (session 30): the first ask of a warm study with large meta-data.

The warm design reads every candidate's regret off every source's k-d tree. Its candidates were all
the sources' own points, S x (S n) queries, so the first ask of a warm study grew with the square of
the meta-data's size. Since session 30 the candidates are capped at
``warmbo.transfer.warm_design.MAX_SOURCE_POINTS`` (4096; above it each source's best points,
``source_pool``). For each size (S sources x n rows of the transfer benchmark's scale meta-data,
d = 4), in one process, the uncapped design (``max_source_points`` set beyond the pool) and the
capped one alternate:

- ``design``: seconds of ``warm_design`` alone both ways, the pool's size, how many of the exact
  design's points the capped one keeps, and the mean normalised regret over the sources of each
  design's points (the quantity the design ranks by; lower is better);
- ``first_ask``: a fresh ``Optimizer(space, prior=data, transfer=method, seed=0)``'s first and second
  ask both ways (the first computes the design), wall seconds; the load average is recorded.

A small warm study asks first, so that no timed call pays for the scipy modules imported on first use.

    python bench/warm_design_cap.py [--sizes 50x300,64x256,100x1000,128x1024] [--methods auto,efficient]

Results: bench/results/warm_design_cap.json and a line per size on stdout.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50x300,64x256,100x1000,128x1024")
    parser.add_argument("--methods", default="auto,efficient")
    parser.add_argument("--out", default="bench/results/warm_design_cap.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    load_start = os.getloadavg()
    started = time.perf_counter()
    import warmbo as wb
    from warmbo.benchmarks._common import git_commit, machine_info, write_results
    from warmbo.benchmarks.transfer import scale_meta_data
    from warmbo.transfer import warm_design as wd

    uncapped = 10**12
    # the scipy modules the design and the asks import on first use, loaded before anything is timed
    space, data, _ = scale_meta_data(3, 20)
    wd.warm_design(data.X, data.y, data.task)
    for method in args.methods.split(","):
        wb.Optimizer(space, prior=data, transfer=method, seed=0).ask(4)
    default = wd.warm_design.__kwdefaults__["max_source_points"]
    results = {}
    for size in args.sizes.split(","):
        S, n = (int(v) for v in size.split("x"))
        space, data, _ = scale_meta_data(S, n)
        sources = wd._sources(data.X, data.y, data.task)
        entry = {"sources": S, "rows": n, "design": {}, "first_ask": {}}
        designs = {}
        for arm, limit in (("uncapped", uncapped), ("capped", default)):
            t0 = time.perf_counter()
            design = wd.warm_design(data.X, data.y, data.task, max_source_points=limit)
            seconds = time.perf_counter() - t0
            designs[arm] = design
            entry["design"][arm] = {
                "seconds": seconds,
                "pool": design.n_candidates,
                "mean_regret_of_points": wd.normalised_regrets(sources, design.points).mean(axis=0).tolist(),
                "scores": list(design.scores),
            }
        kept = sum(
            bool(np.any(np.all(designs["capped"].points == p, axis=1))) for p in designs["uncapped"].points
        )
        entry["design"]["exact_points_kept"] = f"{kept}/{len(designs['uncapped'])}"
        for method in args.methods.split(","):
            entry["first_ask"][method] = {}
            for arm, limit in (("uncapped", uncapped), ("capped", default)):
                wd.warm_design.__kwdefaults__["max_source_points"] = limit  # the Optimizer's call
                try:
                    opt = wb.Optimizer(space, prior=data, transfer=method, seed=0)
                    asks = []
                    for _ in range(2):
                        t0 = time.perf_counter()
                        p = opt.ask()
                        asks.append(time.perf_counter() - t0)
                        opt.tell(p, sum((p[f"x{i}"] - 0.5) ** 2 for i in range(space.dim)))
                finally:
                    wd.warm_design.__kwdefaults__["max_source_points"] = default
                entry["first_ask"][method][arm] = {"first_s": asks[0], "second_s": asks[1]}
        results[size] = entry
        d, fa = entry["design"], entry["first_ask"]
        print(
            f"{size}: design {d['uncapped']['seconds']:.2f} -> {d['capped']['seconds']:.2f} s "
            f"(pool {d['uncapped']['pool']} -> {d['capped']['pool']}, "
            f"exact points kept {d['exact_points_kept']}, "
            f"mean regret of the first point {d['uncapped']['mean_regret_of_points'][0]:.4f} -> "
            f"{d['capped']['mean_regret_of_points'][0]:.4f}); first ask "
            + ", ".join(
                f"{m} {v['uncapped']['first_s']:.2f} -> {v['capped']['first_s']:.2f} s" for m, v in fa.items()
            ),
            flush=True,
        )
    write_results(
        args.out,
        {
            "title": "The warm design's candidate cap: design seconds, its points, a warm study's first ask",
            "git_commit": git_commit(),
            "machine": machine_info(),
            "max_source_points": default,
            "load_average_start": load_start,
            "results": results,
            "runtime_s": time.perf_counter() - started,
        },
    )


if __name__ == "__main__":
    main()
