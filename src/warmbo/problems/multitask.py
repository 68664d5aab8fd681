"""The multi-task test problems of 001 Section 5 on finite domains: an RKHS draw, the perturbed sine,
the shifted Branin-Hoo and the Intel lab sensors.

Each :class:`Problem` holds the domain (a 0.01-net or the sensors), the true task values F, the
multi-task kernel the learners use, the noise level and the norm bound b of 001's theorems; how each
is built (and where the text leaves a choice to us) is in the docstring of its generator and in
:mod:`warmbo.experiments.multitask`, which runs the experiments on them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_int
from ..kernels import RBF
from ..kernels.multitask import ICM, UniformTask
from ..kernels.tabulated import Tabulated
from ..models.task_structure import estimate_B
from ..scalarization import Chebyshev, Linear, Scalarization
from .functions import branin
from .hpo import data_dir as shared_data_dir

__all__ = [
    "INTEL_FILES",
    "PROBLEMS",
    "SINE_CENTRES",
    "SINE_WEIGHTS",
    "Problem",
    "branin_problem",
    "build_problem",
    "independent_counterpart",
    "load_intel_lab",
    "perturbed_sine_problem",
    "rkhs_problem",
    "sensor_problem",
]

PROBLEMS = ("rkhs-2", "rkhs-20", "sine", "branin", "sensor")
#: Weights of the three Gaussian bumps (centres 0.05, 0.4, 0.7) of each perturbed-sine task (our choice).
SINE_WEIGHTS = np.array(
    [
        [1.0, -0.5, 0.0],
        [0.0, 1.0, -0.5],
        [-0.5, 0.0, 1.0],
        [0.5, 0.5, -1.0],
    ]
)
SINE_CENTRES = (0.05, 0.4, 0.7)
INTEL_FILES = {
    "temperature": ("intel_lab/intelTemperatureTrain.csv", "intel_lab/intelTemperatureTest.csv"),
    "humidity": ("intel_lab/intelHumidityTrain.csv", "intel_lab/intelHumidityTest.csv"),
}


# ---------------------------------------------------------------------------------------------- problems
@dataclass
class Problem:
    """A multi-objective problem on a finite domain.

    Attributes
    ----------
    name : str
    X : (N, d) array
        The domain, as the kernels' inputs (indices for a :class:`~warmbo.kernels.tabulated.Tabulated`
        kernel).
    F : (N, n) array
        True values of the n objectives (maximised).
    kernel : ICM
        The multi-task kernel of MT-KB / MT-BKB.
    independent : ICM
        The diagonal kernel of IT-KB, IT-BKB and MOBO.
    sigma : float
        Noise standard deviation.
    b : float
        Bound on ``||f||_Gamma`` used in beta_t of MT-KB / MT-BKB; ``b_rule`` says how it was obtained.
    b_independent : float
        The same for the diagonal kernel (IT-KB, IT-BKB): the RKHS norm of f in *that* kernel's RKHS
        for an RKHS draw (Thm 2 needs ``||f|| <= b`` in the RKHS of the kernel used), else equal to b.
    ref : (n,) array
        Chebyshev reference point.
    info : dict
        JSON-ready description of the construction.
    """

    name: str
    X: np.ndarray
    F: np.ndarray
    kernel: ICM
    independent: ICM
    sigma: float
    b: float
    b_independent: float
    b_rule: str
    ref: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def n_tasks(self) -> int:
        return int(self.F.shape[1])

    @property
    def size(self) -> int:
        return int(self.F.shape[0])

    def scalarization(self, kind: str) -> Scalarization:
        """``"chebyshev"`` (with :attr:`ref`) or ``"linear"``."""
        if kind == "chebyshev":
            return Chebyshev(ref=tuple(self.ref))
        if kind == "linear":
            return Linear()
        raise ValueError(f"scalarization must be 'chebyshev' or 'linear', got {kind!r}")

    def describe(self) -> dict:
        """JSON-ready summary (sizes, b, sigma, the task matrix and the construction notes)."""
        return {
            "name": self.name,
            "domain_size": self.size,
            "n_tasks": self.n_tasks,
            "sigma": self.sigma,
            "b": self.b,
            "b_independent": self.b_independent,
            "b_rule": self.b_rule,
            "B": np.round(self.kernel.B, 6).tolist(),
            "B_independent": np.round(self.independent.B, 6).tolist(),
            "chebyshev_ref": self.ref.tolist(),
        } | self.info


def independent_counterpart(kernel: ICM) -> ICM:
    """``k diag(B_11, ..., B_nn)``: per-task marginal variances kept, cross-task correlations dropped."""
    if not isinstance(kernel, ICM):
        raise ValueError(f"kernel must be an ICM kernel k(x, x') B, got {kernel!r}")
    return ICM(kernel.kernel, np.diag(np.diag(kernel.B)))


def _chebyshev_ref(F: np.ndarray) -> np.ndarray:
    low, high = F.min(axis=0), F.max(axis=0)
    return low - 0.1 * np.maximum(high - low, 1e-12)


def _b_max_norm(F: np.ndarray) -> float:
    return float(np.max(np.linalg.norm(F, axis=1)))


def _net(step: float) -> np.ndarray:
    if not (isinstance(step, float | int) and 0 < step <= 0.5):
        raise ValueError(f"step (the spacing of the net of [0, 1]) must be in (0, 0.5], got {step!r}")
    return np.linspace(0.0, 1.0, int(round(1.0 / step)) + 1)[:, None]


def rkhs_problem(
    n_tasks: int, seed: int = 0, *, step: float = 0.01, n_centres: int = 50, lengthscale: float = 0.2
) -> Problem:
    """001 Fig. 1: ``f = sum_{i<=50} k(., x_i) B c_i`` on a ``step``-net of [0, 1], with ``b = ||f||_Gamma``.

    ``B = A^T A``, ``A ~ U[0, 1]^{n x n}``; centres drawn from the net without replacement;
    ``c_i ~ U[-1, 1]^n``; noise sd 0.1. ``||f||_Gamma^2 = sum_ij c_i^T Gamma(x_i, x_j) c_j``
    ``= sum_ij K_ij c_i^T B c_j`` (reproducing property), computed exactly. In the RKHS of the diagonal
    kernel ``k D``, ``D = diag(B)``, the same f is ``sum_i k(., x_i) D (D^{-1} B c_i)``, so its norm there is
    ``sqrt(sum_ij K_ij c_i^T B D^{-1} B c_j)`` (``b_independent``).
    """
    check_int(n_tasks, "n_tasks", 1)
    X = _net(step)
    if not (isinstance(n_centres, int | np.integer) and 1 <= n_centres <= X.shape[0]):
        raise ValueError(f"n_centres must be an integer in [1, {X.shape[0]}], got {n_centres!r}")
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.0, 1.0, (n_tasks, n_tasks))
    kernel = ICM(RBF(lengthscale), A.T @ A)
    centres = X[np.sort(rng.choice(X.shape[0], size=n_centres, replace=False))]
    C = rng.uniform(-1.0, 1.0, (n_centres, n_tasks))
    k = kernel.kernel
    F = k.evaluate(X, centres) @ (C @ kernel.B)  # f(x) = sum_i k(x, x_i) B c_i (B symmetric)
    K_centres = k.evaluate(centres, centres)
    norm2 = float(np.sum(K_centres * (C @ kernel.B @ C.T)))
    BC = C @ kernel.B
    norm2_independent = float(np.sum(K_centres * ((BC / np.diag(kernel.B)) @ BC.T)))
    return Problem(
        name=f"rkhs-{n_tasks}",
        X=X,
        F=F,
        kernel=kernel,
        independent=independent_counterpart(kernel),
        sigma=0.1,
        b=float(np.sqrt(max(norm2, 0.0))),
        b_independent=float(np.sqrt(max(norm2_independent, 0.0))),
        b_rule="||f||_Gamma (exact RKHS norm of the kernel used)",
        ref=_chebyshev_ref(F),
        info={
            "seed": int(seed),
            "lengthscale": lengthscale,
            "step": step,
            "centres": centres[:, 0].tolist(),
            "coefficients": C.tolist(),
        },
    )


def perturbed_sine_problem(
    omega: float = 0.4, *, step: float = 0.01, lengthscale: float = 0.1, weights=SINE_WEIGHTS
) -> Problem:
    """001 Fig. 2a: ``f_i(x) = sin(2 pi x) + 0.6 f_i^pert(x)``, 4 tasks, noise variance 0.01, omega = 0.4."""
    X = _net(step)
    W = np.asarray(weights, dtype=np.float64)
    if W.ndim != 2 or W.shape[1] != len(SINE_CENTRES):
        raise ValueError(f"weights must have shape (n_tasks, 3), got {W.shape}")
    bumps = np.exp(-((X - np.asarray(SINE_CENTRES)[None, :]) ** 2) / (2 * 0.1**2))  # (N, 3)
    F = np.sin(2 * np.pi * X) + 0.6 * bumps @ W.T
    k = RBF(lengthscale)
    return Problem(
        name="sine",
        X=X,
        F=F,
        kernel=UniformTask(k, W.shape[0], omega),
        independent=ICM(k, np.eye(W.shape[0])),
        sigma=0.1,
        b=_b_max_norm(F),
        b_independent=_b_max_norm(F),
        b_rule="max_x ||f(x)||_2",
        ref=_chebyshev_ref(F),
        info={"omega": omega, "lengthscale": lengthscale, "weights": W.tolist(), "centres": SINE_CENTRES},
    )


def branin_problem(
    omega: float = 0.5, *, grid: int = 30, n_tasks: int = 9, lengthscale: float = 0.2, sigma: float = 0.1
) -> Problem:
    """001 Fig. 2b: 9 shifted Branin-Hoo functions (negated, standardised) on a ``grid x grid`` grid."""
    if not (isinstance(grid, int | np.integer) and grid >= 2):
        raise ValueError(f"grid must be an integer >= 2, got {grid!r}")
    fn = branin()
    lower, upper = fn.bounds[:, 0], fn.bounds[:, 1]
    g = np.linspace(0.0, 1.0, grid)
    U = np.array([(a, c) for a in g for c in g])  # unit square, row-major in x_1
    Z = lower + U * (upper - lower)
    base = fn(Z)
    m, s = float(np.mean(base)), float(np.std(base))
    columns, shifts = [], []
    for i in range(1, n_tasks + 1):
        shift = np.zeros(2)
        shift[0 if i % 2 else 1] = i / 100 * (upper - lower)[0 if i % 2 else 1]
        shifts.append(shift.tolist())
        columns.append(-(fn(Z - shift) - m) / s)
    F = np.column_stack(columns)
    k = RBF(lengthscale)
    return Problem(
        name="branin",
        X=U,
        F=F,
        kernel=UniformTask(k, n_tasks, omega),
        independent=ICM(k, np.eye(n_tasks)),
        sigma=sigma,
        b=_b_max_norm(F),
        b_independent=_b_max_norm(F),
        b_rule="max_x ||f(x)||_2",
        ref=_chebyshev_ref(F),
        info={"omega": omega, "grid": grid, "lengthscale": lengthscale, "shifts": shifts, "scale": [m, s]},
    )


def load_intel_lab(path: str | os.PathLike | None = None) -> dict[str, np.ndarray]:
    """Readings (50 sensors x 240 time steps: train then test) per task from ``intel_lab/``.

    ``path`` is the shared data folder (default ``$WARMBO_DATA``, else ``../shared/data`` next to the
    repository, as :func:`warmbo.problems.hpo.data_dir`). A missing file is a FileNotFoundError naming it.
    """
    folder = shared_data_dir(path)
    out = {}
    for task, names in INTEL_FILES.items():
        parts = []
        for name in names:
            file = folder / name
            if not file.is_file():
                raise FileNotFoundError(
                    f"Intel lab data not found: {file} is missing (set WARMBO_DATA or pass data_dir= to "
                    "point at a folder holding intel_lab/)"
                )
            parts.append(np.loadtxt(file, delimiter=",", dtype=np.float64, ndmin=2))
        readings = np.hstack(parts)
        if not np.all(np.isfinite(readings)):
            raise ValueError(f"the {task} readings contain NaN or inf")
        out[task] = readings
    shapes = {v.shape for v in out.values()}
    if len(shapes) != 1:
        raise ValueError(f"the tasks' reading matrices differ in shape: {sorted(shapes)}")
    return out


def sensor_problem(data_dir: str | os.PathLike | None = None) -> Problem:
    """001 Fig. 3 on the shared Intel-lab copy (2 tasks, 50 sensors); see the module docstring."""
    readings = load_intel_lab(data_dir)
    tasks = list(readings)
    steps = next(iter(readings.values())).shape[1]
    half = steps // 2
    est, held = [], []
    for task in tasks:
        R = readings[task]
        mean, sd = R[:, :half].mean(), R[:, :half].std()
        est.append((R[:, :half] - mean) / sd)
        held.append((R[:, half:] - mean) / sd)
    # scalar kernel: empirical covariance across sensors of the centred estimation readings
    centred = [Z - Z.mean(axis=1, keepdims=True) for Z in est]
    cov = sum(Z @ Z.T / Z.shape[1] for Z in centred) / len(centred)
    K = cov / np.mean(np.diag(cov))
    R = np.stack(centred, axis=2).transpose(1, 0, 2)  # (time steps, sensors, tasks)
    B = estimate_B(K, R)
    F = np.column_stack([H.mean(axis=1) for H in held])
    noise_var = max(float(np.var(H)) for H in held)
    scalar = Tabulated(K)
    kernel = ICM(scalar, B)
    return Problem(
        name="sensor",
        X=np.arange(K.shape[0], dtype=np.float64)[:, None],
        F=F,
        kernel=kernel,
        independent=independent_counterpart(kernel),
        sigma=float(np.sqrt(noise_var)),
        b=_b_max_norm(F),
        b_independent=_b_max_norm(F),
        b_rule="max_x ||f(x)||_2",
        ref=_chebyshev_ref(F),
        info={
            "tasks": tasks,
            "time_steps": steps,
            "estimation_steps": half,
            "noise_variance": noise_var,
            "kernel_condition_number": float(np.linalg.cond(K)),
        },
    )


def build_problem(name: str, seed: int = 0, data_dir: str | os.PathLike | None = None) -> Problem:
    """One of :data:`PROBLEMS`; ``seed`` draws the RKHS function (the other problems are fixed)."""
    if name == "rkhs-2":
        return rkhs_problem(2, seed)
    if name == "rkhs-20":
        return rkhs_problem(20, seed)
    if name == "sine":
        return perturbed_sine_problem()
    if name == "branin":
        return branin_problem()
    if name == "sensor":
        return sensor_problem(data_dir)
    raise ValueError(f"unknown problem {name!r}; choose one of {', '.join(PROBLEMS)}")
