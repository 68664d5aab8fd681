"""Subprocess used by the storage tests: ask/tell against a shared study.

usage: worker.py STORAGE N_TELLS [SLEEP_AFTER_EACH_TELL]
Prints one line per told trial (``told ID``) and flushes, so the parent can kill it between tells.
"""

import sys
import time

import numpy as np

import warmbo as wb

storage, n_tells = sys.argv[1], int(sys.argv[2])
pause = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
space = wb.Space.box([(-5.0, 10.0), (0.0, 15.0)])
# fixed hyperparameters: the test is about the store, not about ML-II (which would serialise 100 fits)
model = wb.GP(wb.kernels.Matern(2.5, [0.2, 0.2]), noise=1e-4, normalize_y=True)
opt = wb.Optimizer(space, model=model, storage=storage, seed=0, n_initial=6)
f = wb.problems.branin()
for _ in range(n_tells):
    suggestion = opt.ask()
    value = float(f(np.array([suggestion["x0"], suggestion["x1"]])))
    trial = opt.tell(suggestion, value)
    print(f"told {trial.id}", flush=True)
    time.sleep(pause)
