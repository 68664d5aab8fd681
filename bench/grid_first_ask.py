"""The asks of a cold study on a large grid: is the first one dearer than the rest? (session 30)

A cold ``Optimizer`` (no prior data) on HPOBench's 30,000-point grid (the transfer benchmark's
``none`` method) asks 30 times; every ask's wall time is kept. Before session 30 the first ask of
every new Optimizer counted the grid's groups of near-duplicate candidates with a k-d tree over all
30,000 points (``_groups_by_kdtree`` below, the code of then), 0.2-0.3 s; since session 30
``warmbo.maximize.chained_groups`` counts them. Reported (every ask runs BLAS on one thread, the
default; run it alone):

- the first ask of the process (the scipy modules warmbo imports on first use included), then for
  each further run the first ask of a new Optimizer, the median and the worst ask of its 30;
- the grid count both ways in the same process (median of 5 calls each) and their ratio.

    python bench/grid_first_ask.py [--runs 4] [--out bench/results/grid_first_ask.json]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np


def _groups_by_kdtree(P: np.ndarray, radius: float) -> int:
    """The count before session 30: connected components of every pair within ``radius`` over all points."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    pairs = cKDTree(P).query_pairs(radius, p=np.inf, output_type="ndarray")
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(len(P), len(P)))
    return int(connected_components(graph, directed=False)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--out", default="bench/results/grid_first_ask.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    load_start = os.getloadavg()
    started = time.perf_counter()
    from warmbo.benchmarks._common import git_commit, machine_info, write_results
    from warmbo.benchmarks.transfer import _Suite, run_one
    from warmbo.maximize import DUPLICATE_TOLERANCE, chained_groups

    suite = _Suite("hpobench")
    runs = []
    for r in range(args.runs):
        task = suite.tasks[r % len(suite.tasks)]
        f = suite.objective(task, r)
        _, seconds = run_one("none", f, suite.sources(task, r, 300), r, 30)
        runs.append(
            {
                "task": task,
                "seed": r,
                "first_s": seconds[0],
                "median_s": float(np.median(seconds)),
                "worst_s": float(np.max(seconds)),
                "worst_at_ask": int(np.argmax(seconds)) + 1,
                "ask_s": seconds,
            }
        )
        print(
            f"run {r} ({task}): first {seconds[0]:.3f} s, median {np.median(seconds):.3f} s, "
            f"worst {np.max(seconds):.3f} s at ask {np.argmax(seconds) + 1}"
            + ("  (the process's first ask: the lazy scipy imports included)" if r == 0 else ""),
            flush=True,
        )
    C = f.space.candidates
    radius = DUPLICATE_TOLERANCE * (1 + 1e-9)
    timing = {}
    for name, count in (("kdtree_over_all", _groups_by_kdtree), ("chained_groups", chained_groups)):
        samples, groups = [], None
        for _ in range(5):
            t0 = time.perf_counter()
            groups = count(C, radius)
            samples.append(time.perf_counter() - t0)
        timing[name] = {"groups": groups, "median_s": float(np.median(samples))}
    ratio = timing["kdtree_over_all"]["median_s"] / timing["chained_groups"]["median_s"]
    print(
        f"grid count ({C.shape[0]} candidates): "
        f"k-d tree over all {timing['kdtree_over_all']['median_s']:.3f} s, "
        f"chained_groups {timing['chained_groups']['median_s']:.4f} s ({ratio:.0f}x), groups "
        f"{timing['kdtree_over_all']['groups']} / {timing['chained_groups']['groups']}"
    )
    write_results(
        args.out,
        {
            "title": "Asks of a cold study on HPOBench's 30,000-point grid",
            "git_commit": git_commit(),
            "machine": machine_info(),
            "load_average_start": load_start,
            "runs": runs,
            "grid_count": timing,
            "grid_count_ratio": ratio,
            "runtime_s": time.perf_counter() - started,
        },
    )


if __name__ == "__main__":
    main()
