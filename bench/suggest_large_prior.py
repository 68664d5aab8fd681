"""Seconds of each `warmbo suggest` (a fresh process) on a study that transfers from many sources.

The command-line loop as a user runs it: a prior CSV of S sources x n rows
(:func:`warmbo.benchmarks.transfer.scale_meta_data`, d = 4, a task column), the study created by
``warmbo suggest --space ... --prior ... --task task`` (it reads and validates the file, stores the
sources and computes the warm design), then ``--rounds`` more ``warmbo suggest`` + ``warmbo observe``
rounds, each ``suggest`` a new process that reopens the study: it reads the stored sources back and,
from the first model ask on, conditions one GP per source on its rows. Every suggestion is reported
at once (the target is the sources' bowl at the middle), so this measures warmbo alone.

Each ``--checkout DIR`` is an arm run with ``PYTHONPATH=DIR/src`` (the same virtualenv), so a commit
can be compared with another in one run: ``git worktree add /tmp/base <commit>`` and
``--checkout /tmp/base --checkout .``. The arms' rounds are interleaved, so they see the same load.
Reported per arm: wall and CPU seconds (user + system, of the child process) of every ``suggest``,
the creating one, the median and the worst of the others, the peak memory of a ``suggest``, and the
load average before and after.

    python bench/suggest_large_prior.py [--sources 100] [--rows 1000] [--rounds 8] [--checkout DIR ...]

Results: bench/results/suggest_large_prior.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from warmbo.benchmarks.transfer import scale_meta_data

ROOT = Path(__file__).resolve().parent.parent


def _git(directory: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _write_prior(path: Path, space, data) -> None:
    names = space.names
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*names, "y", "task"])
        for p, y, t in zip(data.params, data.y, data.task, strict=True):
            writer.writerow([*(repr(p[n]) for n in names), repr(float(y)), t])


def _timed(cmd: list[str], env: dict) -> tuple[str, float, float, float]:
    """stdout, wall seconds, CPU seconds and peak RSS (MB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, wall, cpu, after.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=100)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--checkout", type=Path, action="append", default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "suggest_large_prior.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    checkouts = [c.resolve() for c in (args.checkout or [ROOT])]
    work = Path(tempfile.mkdtemp(prefix="warmbo-suggest-"))
    space, data, _ = scale_meta_data(args.sources, args.rows)
    prior = work / "prior.csv"
    _write_prior(prior, space, data)
    space_file = work / "space.json"
    space_file.write_text(
        json.dumps({"params": [{"type": "float", "name": n, "low": 0.0, "high": 1.0} for n in space.names]})
    )
    load_start = os.getloadavg()
    arms = {}
    for k, checkout in enumerate(checkouts):
        env = dict(os.environ, PYTHONPATH=str(checkout / "src"))
        arms[f"{k}:{_git(checkout)}"] = {"env": env, "study": work / f"study{k}.db", "runs": [], "rss": 0.0}

    def target(p: dict) -> float:
        return sum((p[n] - 0.5) ** 2 for n in space.names)

    for round_ in range(args.rounds + 1):
        for arm in arms.values():
            cmd = [sys.executable, "-m", "warmbo", "suggest", str(arm["study"]), "--json"]
            if round_ == 0:
                cmd += ["--space", str(space_file), "--prior", str(prior), "--task", "task", "--seed", "0"]
            stdout, wall, cpu, rss = _timed(cmd, arm["env"])
            arm["runs"].append((wall, cpu))
            arm["rss"] = max(arm["rss"], rss)
            suggestion = json.loads(stdout.splitlines()[0])
            observe = [sys.executable, "-m", "warmbo", "observe", str(arm["study"])]
            observe += ["--trial", str(suggestion["trial"]), "--value", repr(target(suggestion["params"]))]
            _timed(observe, arm["env"])
    load_end = os.getloadavg()
    summary = {}
    for name, arm in arms.items():
        walls = [r[0] for r in arm["runs"]]
        cpus = [r[1] for r in arm["runs"]]
        summary[name] = {
            "create_wall_s": round(walls[0], 3),
            "create_cpu_s": round(cpus[0], 3),
            "reopen_wall_s": [round(w, 3) for w in walls[1:]],
            "reopen_cpu_s": [round(c, 3) for c in cpus[1:]],
            "reopen_median_wall_s": round(float(np.median(walls[1:])), 3),
            "reopen_median_cpu_s": round(float(np.median(cpus[1:])), 3),
            "reopen_worst_wall_s": round(float(np.max(walls[1:])), 3),
            "reopen_worst_cpu_s": round(float(np.max(cpus[1:])), 3),
            "peak_rss_mb_of_any_child": round(arm["rss"], 1),
        }
    record = {
        "sources": args.sources,
        "rows_per_source": args.rows,
        "d": 4,
        "rounds": args.rounds,
        "arms": summary,
        "load_average_start": list(load_start),
        "load_average_end": list(load_end),
        "cpus": os.cpu_count(),
        "git": _git(ROOT),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{args.sources} sources x {args.rows} rows; load {load_start[0]:.2f} -> {load_end[0]:.2f}")
    for name, s in summary.items():
        print(
            f"{name:>12}: create {s['create_wall_s']:.2f} s ({s['create_cpu_s']:.2f} CPU); reopened "
            f"median {s['reopen_median_wall_s']:.2f} s ({s['reopen_median_cpu_s']:.2f} CPU), worst "
            f"{s['reopen_worst_wall_s']:.2f} s ({s['reopen_worst_cpu_s']:.2f} CPU); per suggest "
            + ", ".join(f"{w:.2f}" for w in s["reopen_wall_s"])
        )
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
