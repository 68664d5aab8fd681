"""The overhead section's running loop (1000 -> 1100 trials, d = 6, issue 15's "worst ask under 2x
the median") with other caps on the warm refit's likelihood evaluations
(``optimizer._WARM_MAX_EVALUATIONS``), one loop per cap in turn, in one process:

    python bench/loop_cap.py 12 9 12 9

Prints each loop's median and worst ask and the four dearest asks (n: s), and writes every ask's
time to ``bench/results/loop_cap.json`` with the load average and the machine (git commit included).
Session 27 chose the cap of 9 from it (that file: the run at git d5695ed, before the machine was
recorded). The likelihood evaluations of each ask: ``python bench/profile_ask.py --mode run``.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

import warmbo.optimizer as optimizer
from warmbo.benchmarks._common import machine_info
from warmbo.benchmarks.methods import Warmbo
from warmbo.benchmarks.overhead import _run_loop


def main(caps: list[int]) -> None:
    warnings.simplefilter("ignore")
    default = optimizer._WARM_MAX_EVALUATIONS
    loops = []
    try:
        for cap in caps:
            optimizer._WARM_MAX_EVALUATIONS = cap
            load = os.getloadavg()
            loop = _run_loop(Warmbo(), 6, 1000, 1100, 0)
            times = np.asarray(loop["ask_s"])
            dearest = [(loop["n"][i], round(float(times[i]), 3)) for i in np.argsort(times)[::-1][:4]]
            print(
                f"cap {cap}: median {loop['median_s']:.3f} s, worst {loop['worst_s']:.3f} s at n = "
                f"{loop['worst_n']} ({loop['worst_over_median']:.2f}x); dearest {dearest}",
                flush=True,
            )
            loops.append({"cap": cap, "load_average": [load, os.getloadavg()], **loop})
    finally:
        optimizer._WARM_MAX_EVALUATIONS = default
    out = Path(__file__).parent / "results" / "loop_cap.json"
    out.write_text(json.dumps({"machine": machine_info(), "default_cap": default, "loops": loops}, indent=1))


if __name__ == "__main__":
    main([int(c) for c in sys.argv[1:]] or [12, optimizer._WARM_MAX_EVALUATIONS])
