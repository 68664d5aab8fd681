"""The first ask of a reopened transfer study (``Optimizer.load``, ``warmbo suggest``), in one process.

A study on disk transfers from S sources x n rows (:func:`warmbo.benchmarks.transfer.scale_meta_data`,
d = 4, ``transfer="auto"``); one optimizer object runs ``--asks`` ask/tell rounds (the warm design,
then model asks) and is closed. The script then reopens the study ``--repeats`` times in three ways
and times ``Optimizer.load`` and the first ask of each new object (a model ask):

- ``stored``: as a user gets it, with the sources, the warm design and the source GPs'
  hyperparameters stored by the first object;
- ``refit``: the sources stored, the warm design and the source fits deleted from the study (what
  every reopened object paid before they were stored: the warm design's k-d tree queries and an
  ML-II search per source GP);
- the first object's own asks, for comparison (its first ask computes the warm design).

Each reopened object asks once and its trial is marked failed, so every repeat asks on the same
trials. Reported: median and worst seconds, and the load average.

    python bench/transfer_resume.py [--sources 50] [--rows 300] [--asks 6] [--repeats 5]

Results: bench/results/transfer_resume.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import warmbo as wb
from warmbo.benchmarks.transfer import scale_meta_data


def _git() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=50)
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--asks", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "transfer_resume.json"
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    load = os.getloadavg()
    space, data, target = scale_meta_data(args.sources, args.rows)
    url = str(Path(tempfile.mkdtemp(prefix="warmbo-resume-")) / "study.db")
    first = wb.Optimizer(space, prior=data, seed=0, storage=url)
    first_asks = []
    for _ in range(args.asks):
        started = time.perf_counter()
        p = first.ask()
        first_asks.append(time.perf_counter() - started)
        first.tell(p, target(p))
    stored_bytes = {k: len(first.study.get_meta(k) or "") for k in first.study.meta_items("transfer_")}
    first.study.close()

    def reopen(drop: tuple[str, ...]) -> tuple[float, float]:
        if drop:
            study = wb.Study(url)
            saved = {k: study.get_meta(k) for k in drop}
            for k in drop:
                study.delete_meta(k)
            study.close()
        started = time.perf_counter()
        opt = wb.Optimizer.load(url)
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        s = opt.ask()
        asked = time.perf_counter() - started
        opt.tell_failed(s)
        for k, v in saved.items() if drop else ():
            if v is not None:
                opt.study.set_meta(k, v)
        opt.study.close()
        return loaded, asked

    arms = {"stored": (), "refit": ("transfer_warm_design", "transfer_source_fits")}
    results = {}
    for _ in range(args.repeats):  # interleaved, so both arms see the same machine state
        for name, drop in arms.items():
            results.setdefault(name, []).append(reopen(drop))
    summary = {
        name: {
            "load_s_median": float(np.median([r[0] for r in runs])),
            "first_ask_s_median": float(np.median([r[1] for r in runs])),
            "first_ask_s_worst": float(np.max([r[1] for r in runs])),
            "first_ask_s": [r[1] for r in runs],
        }
        for name, runs in results.items()
    }
    record = {
        "sources": args.sources,
        "rows": args.rows,
        "d": 4,
        "asks_before": args.asks,
        "repeats": args.repeats,
        "first_object_asks_s": first_asks,
        "stored_bytes": stored_bytes,
        "reopened": summary,
        "ratio_refit_over_stored": summary["refit"]["first_ask_s_median"]
        / summary["stored"]["first_ask_s_median"],
        "load_average_start": list(load),
        "load_average_end": list(os.getloadavg()),
        "cpus": os.cpu_count(),
        "git": _git(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{args.sources} sources x {args.rows} rows, load {load[0]:.2f}; stored meta {stored_bytes}")
    print("first object's asks (s): " + ", ".join(f"{t:.3f}" for t in first_asks))
    for name, s in summary.items():
        print(
            f"{name:>7}: load {s['load_s_median']:.3f} s, first ask median {s['first_ask_s_median']:.3f} s, "
            f"worst {s['first_ask_s_worst']:.3f} s"
        )
    print(f"refit / stored: {record['ratio_refit_over_stored']:.1f}x -> {args.out}")


if __name__ == "__main__":
    main()
