"""One solve with the GP's factor against one product with an explicit inverse (issue 15's fixed ask).

At n = 2000 the fixed-hyperparameter ask spends its time in the acquisition search, whose every
evaluation does two triangular solves with the n x n factor L (5 right-hand sides: the search's
5 starts). A stored K^-1 would replace the two solves by one product. This times each operation at
n = 200, 1000 and 2000, one BLAS thread, mean of 50 calls, in milliseconds:

    python bench/solve_vs_inverse.py

Session 21: at n = 2000 one solve 1.9-2.2 ms and one product 3.5-4.1 ms, so the two solves (3.8-4.5
ms) become one product that saves about 10%: not enough for the 10x target, and left.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import blas, solve_triangular
from threadpoolctl import threadpool_limits


def _ms(call, repeats: int = 50) -> float:
    call()
    start = time.perf_counter()
    for _ in range(repeats):
        call()
    return (time.perf_counter() - start) / repeats * 1e3


def main() -> None:
    rng = np.random.default_rng(0)
    for n in (200, 1000, 2000):
        A = rng.standard_normal((n, n))
        K = A @ A.T / n + np.eye(n)
        L = np.linalg.cholesky(K)
        inverse = np.asfortranarray(np.linalg.inv(K))
        B = rng.standard_normal((n, 5))
        with threadpool_limits(1):
            solve = _ms(lambda L=L, B=B: solve_triangular(L, B, lower=True, check_finite=False))
            product = _ms(lambda inverse=inverse, B=B: inverse @ B)
            symmetric = _ms(lambda inverse=inverse, B=B: blas.dsymm(1.0, inverse, np.asfortranarray(B)))
        print(f"n = {n}: solve with L {solve:.3f} ms, K^-1 @ B {product:.3f} ms, dsymm {symmetric:.3f} ms")


if __name__ == "__main__":
    main()
