"""GP-EI on Hartmann-6 with ML-II hyperparameters, written out as the bare data path (the file's name
says GP-UCB, its first version; ``wb.UCB()`` in place of ``wb.EI()`` below is GP-UCB).

Run: ``python examples/gp_ucb_hartmann6.py``. Prints the best value found against the optimum.
"""

import numpy as np

import warmbo as wb
from warmbo.kernels import Constant, Matern
from warmbo.problems import hartmann6, simple_regret

f = hartmann6().maximize_form()
space = wb.Space.box(f.bounds)
U = space.sample_encoded(8, seed=0)
y = f(f.from_unit(U))
kernel = Constant(1.0) * Matern(2.5, np.full(6, 0.3))
for t in range(12):
    gp = wb.GP(kernel, noise=1e-4, optimizer="ml2", normalize_y=True, n_restarts=1, seed=t).fit(U, y)
    kernel = gp.kernel_
    x = wb.maximize(wb.EI().bind(gp), space, seed=t).x
    U = np.vstack([U, x])
    y = np.append(y, f(f.from_unit(x[None]))[0])
regret = simple_regret(y, f.optimum_value)[-1]
print(f"best {y.max():.4f} (optimum {f.optimum_value:.4f}), simple regret {regret:.4f}")
