"""Benchmark section ``mt``: the cost of one MT-KB / MT-BKB step against t, with 20 tasks (issue 8).

The problem is 001's RKHS function (Section 5) with n = 20 tasks on the 0.001-net of [0, 1]:
``Gamma = k B``, k SE with lengthscale 0.2, ``B = A^T A`` with A uniform,
``f = sum_{i<=50} Gamma(., x_i) c_i``, observations with N(0, 0.1^2) noise. The history mimics a
BO run: 70% of the points near one optimum, 30% uniform, so points repeat as they do on a finite domain.

One step is what an ask costs once the observation is in: condition on one more point
(``add``) and evaluate the acquisition of 001 eq. (3) on all 1001 candidates, then take the argmax.
Methods:

- ``MT-KB (ICM, merged)``: :class:`~warmbo.models.MultiTaskGP`'s ICM fast path with repeated points
  merged exactly (the default): O(u^3) per step for u distinct points;
- ``MT-KB (ICM, paper)``: the same without merging, the O(t^3) step the paper analyses;
- ``MT-BKB``: :class:`~warmbo.models.BudgetedMultiTaskGP` with eps = 0.5, delta = 0.1; the history
  up to each t is loaded in batches of 500 (batched BKB), then single steps are timed.

Timings are medians over ``repeats`` steps (each adds a point, so t grows by one per repeat).
"""

from __future__ import annotations

import numpy as np

from ..acquisition import ScalarizedUCB
from ..bounds import MultiTaskBound
from ..kernels import RBF
from ..kernels.multitask import ICM
from ..models import BudgetedMultiTaskGP, MultiTaskGP
from ..scalarization import Chebyshev
from ._common import summarize, timed

__all__ = ["run", "targets", "markdown", "SIZES"]

N_TASKS = 20
SIZES = {
    "full": {"mtkb": (200, 500, 1000, 2000), "paper": (200, 500, 1000, 2000),
             "bkb": (1000, 2000, 5000, 10000), "repeats": 5},
    "quick": {"mtkb": (200, 1000, 2000), "paper": (200, 1000), "bkb": (1000, 5000, 10000), "repeats": 3},
    "tiny": {"mtkb": (30,), "paper": (30,), "bkb": (60,), "repeats": 2},
}  # fmt: skip


def problem(seed: int):
    """Domain (1001, 1), the ICM kernel, f (1001, 20), and a BO-like history of indices."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(0.0, 1.0, 1001)[:, None]
    A = rng.uniform(size=(N_TASKS, N_TASKS))
    kernel = ICM(RBF(0.2), A.T @ A)
    centres = grid[rng.choice(1001, 50, replace=False)]
    F = (kernel.gram(grid, centres) @ rng.uniform(-1.0, 1.0, 50 * N_TASKS)).reshape(1001, N_TASKS)
    return grid, kernel, F, rng


def _history(rng, count: int) -> np.ndarray:
    near = np.clip(np.rint(rng.normal(300, 40, count)), 0, 1000).astype(int)
    uniform = rng.integers(0, 1001, count)
    return np.where(rng.random(count) < 0.7, near, uniform)


def _step_timer(model, grid, F, rng, acquisition):
    def step():
        i = int(rng.integers(0, 1001))
        model.add(grid[i : i + 1], F[i : i + 1] + 0.1 * rng.standard_normal((1, N_TASKS)))
        return int(np.argmax(acquisition.bind(model)(grid)))

    return step


def _acquisition(ref: np.ndarray) -> ScalarizedUCB:
    return ScalarizedUCB(
        Chebyshev(ref=tuple(ref)), MultiTaskBound(b=1.0, sigma=0.1, delta=0.1), n_weights=100
    )


def _time_exact(ts, repeats, compress: bool, seed: int, log) -> list[dict]:
    grid, kernel, F, rng = problem(seed)
    acquisition = _acquisition(F.min(axis=0) - 0.1)
    rows = []
    for t in ts:
        idx = _history(rng, t - 1)
        model = MultiTaskGP(kernel, 0.1, compress=compress).fit(
            grid[idx], F[idx] + 0.1 * rng.standard_normal((t - 1, N_TASKS))
        )
        step = _step_timer(model, grid, F, rng, acquisition)
        samples = [timed(step)[0] for _ in range(repeats)]
        rows.append({"t": t, "step": summarize(samples), "distinct": int(model._eig[0].size)})
        log(f"  MT-KB ({'merged' if compress else 'paper'}) t={t}: {np.median(samples):.3g} s")
    return rows


def _time_bkb(ts, repeats, seed: int, log) -> list[dict]:
    grid, kernel, F, rng = problem(seed)
    acquisition = _acquisition(F.min(axis=0) - 0.1)
    model = BudgetedMultiTaskGP(kernel, 0.1, eps=0.5, delta=0.1, horizon=max(ts) + repeats, seed=seed)
    rows = []
    for t in ts:
        missing = t - 1 - model.n_observations
        for start in range(0, missing, 500):
            size = min(500, missing - start)
            idx = _history(rng, size)
            model.add(grid[idx], F[idx] + 0.1 * rng.standard_normal((size, N_TASKS)), batch=True)
        step = _step_timer(model, grid, F, rng, acquisition)
        samples = [timed(step)[0] for _ in range(repeats)]
        rows.append({"t": t, "step": summarize(samples), "dictionary": model.dictionary_size_,
                     "distinct": model.distinct_dictionary_size_})  # fmt: skip
        log(f"  MT-BKB t={t}: {np.median(samples):.3g} s, m_t={model.dictionary_size_}")
    return rows


def run(ctx) -> dict:
    """Per-step times of MT-KB (merged and paper) and MT-BKB at the preset's t values."""
    sizes = SIZES[ctx.preset]
    repeats = sizes["repeats"]
    return {
        "n_tasks": N_TASKS,
        "domain": 1001,
        "MT-KB (ICM, merged)": _time_exact(sizes["mtkb"], repeats, True, ctx.seed, ctx.log),
        "MT-KB (ICM, paper)": _time_exact(sizes["paper"], repeats, False, ctx.seed, ctx.log),
        "MT-BKB": _time_bkb(sizes["bkb"], repeats, ctx.seed, ctx.log),
    }


def _at(rows: list[dict], t: int) -> float | None:
    for row in rows:
        if row["t"] == t:
            return row["step"]["median"]
    return None


def targets(results: dict) -> list[dict]:
    """Issue 8's multi-task targets, measured where the preset reached them."""
    out = []
    bkb = _at(results["MT-BKB"], 10000)
    out.append(
        {
            "target": "MT-BKB per-step time at t = 10,000 with 20 tasks: under 0.5 s",
            "measured": None if bkb is None else f"{bkb:.3g} s",
            "met": None if bkb is None else bkb < 0.5,
        }
    )
    for name in ("MT-KB (ICM, merged)", "MT-KB (ICM, paper)"):
        value = _at(results[name], 2000)
        out.append({"target": f"{name} per-step time at t = 2000 with 20 tasks: under 1 s",
                    "measured": None if value is None else f"{value:.3g} s",
                    "met": None if value is None else value < 1.0})  # fmt: skip
    return out


def markdown(results: dict) -> list[str]:
    """A table of median step times (s) per t and method, with MT-BKB's dictionary size."""
    lines = [
        f"{results['n_tasks']} tasks, {results['domain']}-point domain; one step = add one observation and "
        "evaluate eq. (3) on every candidate. Medians (min-max) in seconds.",
        "",
        "| method | t | step time | dictionary m_t (distinct) |",
        "|---|---|---|---|",
    ]
    for name in ("MT-KB (ICM, merged)", "MT-KB (ICM, paper)", "MT-BKB"):
        for row in results[name]:
            step = row["step"]
            size = (
                f"{row['dictionary']} ({row['distinct']})" if "dictionary" in row else f"({row['distinct']})"
            )
            spread = f"{step['median']:.3g} ({step['min']:.3g}-{step['max']:.3g})"
            lines.append(f"| {name} | {row['t']} | {spread} | {size} |")
    return lines
