"""The synthetic Legendre setup of Meta-KeL's experiments (000 Appendix E).

Domain ``[-1, 1]``; base kernels ``k_j(x, x') = phi_j(x) phi_j(x')`` with ``phi_j`` the j-th
Legendre polynomial normalised to be orthonormal on ``[-1, 1]`` (:class:`~warmbo.kernels.Legendre`),
``j = 1..p``. A random setup draws

- the true support ``J*``: ``s`` distinct indices out of ``p``, uniformly (stored sorted, as 0-based
  positions in ``base``, so ``base[J*[0]]`` is ``Legendre(J*[0] + 1)``);
- the true weights ``eta*_j ~ U(0, 1)`` for ``j in J*``, normalised to ``sum_j eta*_j = 1``, 0
  elsewhere; ``k* = sum_{j in J*} eta*_j k_j`` (000 eq. 3).

A task function (000 eq. 4) is ``f(x) = sum_j sqrt(eta*_j) phi_j(x) beta_j``, so
``||f||_{k*}^2 = sum_j beta_j^2``. Its coefficients are drawn as 000 Appendix E describes: a random
subset of ``J*`` (here: the subset size uniform in ``1..s``, then that many members of ``J*``
uniformly without replacement; the text says only "random subsets"), ``beta_j ~ U(0, 1)`` on the
subset, then ``beta`` scaled to ``||beta||_2 = B`` so that ``||f||_{k*} = B`` exactly. Inputs of the
meta-data are i.i.d. uniform on ``[-1, 1]`` and the observations carry ``N(0, noise^2)`` noise.

Note: the orthonormal Legendre features are not bounded by 1 (``phi_j(1)^2 = (2j + 1)/2``), so
the normalisation ``k_j(x, x) <= 1`` of 000 Section 2 does not hold literally; the text uses these
features anyway, and so do we.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_int
from ..kernels.base import Kernel
from ..kernels.features import Legendre

__all__ = ["LegendreFunction", "LegendreSetup"]


def _as_inputs(x) -> np.ndarray:
    """(N,) or (N, 1) inputs -> (N, 1) float array (finite)."""
    X = np.asarray(x, dtype=np.float64)
    if X.ndim == 0:
        X = X.reshape(1, 1)
    elif X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] != 1:
        raise ValueError(f"x must have shape (N,) or (N, 1), got shape {np.shape(x)}")
    if not np.all(np.isfinite(X)):
        raise ValueError("x must be finite (got NaN or inf)")
    return X


@dataclass(frozen=True, eq=False)
class LegendreFunction:
    """A task function ``f(x) = sum_j sqrt(eta*_j) phi_j(x) beta_j`` of a :class:`LegendreSetup`.

    Attributes
    ----------
    base : tuple of Legendre
        The base kernels of the setup (``base[j]`` has feature ``phi_{j+1}``).
    eta : ndarray (p,)
        The true weights eta* of the setup.
    beta : ndarray (p,)
        Coefficients in the k*-feature map; non-zero only on the function's subset of J*, with
        ``||beta||_2 = ||f||_{k*}``.
    """

    base: tuple[Legendre, ...]
    eta: np.ndarray
    beta: np.ndarray

    @property
    def support(self) -> np.ndarray:
        """0-based positions (in ``base``) of the kernels this function uses."""
        return np.flatnonzero(self.beta)

    @property
    def coefficients(self) -> np.ndarray:
        """Coefficients on the orthonormal features, ``sqrt(eta*_j) beta_j`` (p,)."""
        return np.sqrt(self.eta) * self.beta

    @property
    def norm(self) -> float:
        """``||f||_{k*} = ||beta||_2``."""
        return float(np.linalg.norm(self.beta))

    def __call__(self, x) -> np.ndarray:
        """f at the points x, shape (N,) or (N, 1); returns (N,)."""
        X = _as_inputs(x)
        out = np.zeros(X.shape[0])
        coefficients = self.coefficients
        for j in self.support:
            out += coefficients[j] * self.base[j].features(X)[:, 0]
        return out

    def argmax(self, grid) -> float:
        """The grid point where f is largest."""
        X = _as_inputs(grid)
        return float(X[int(np.argmax(self(X))), 0])

    def maximum(self, grid) -> float:
        """``max_{x in grid} f(x)`` (the optimum a grid-based optimiser can reach).

        With the non-negative coefficients of 000 App. E this is always ``f(1)``, since
        ``|P_j(x)| <= P_j(1) = 1`` on [-1, 1]; :meth:`minimum` is the non-trivial problem.
        """
        return float(np.max(self(_as_inputs(grid))))

    def argmin(self, grid) -> float:
        """The grid point where f is smallest."""
        X = _as_inputs(grid)
        return float(X[int(np.argmin(self(X))), 0])

    def minimum(self, grid) -> float:
        """``min_{x in grid} f(x)``."""
        return float(np.min(self(_as_inputs(grid))))


@dataclass(frozen=True)
class LegendreSetup:
    """A random sparse kernel ``k* = sum_{j in J*} eta*_j k_j`` over Legendre features (000 App. E).

    Parameters
    ----------
    p : int
        Number of base kernels (Legendre degrees 1..p).
    s : int
        Size of the true support J*.
    B : float
        RKHS norm ``||f||_{k*}`` of every task function.
    noise : float
        Standard deviation of the observation noise.
    seed : int
        Seed of J* and eta*; the same seed gives the same setup.

    Attributes
    ----------
    base : tuple of Legendre
        ``(Legendre(1), ..., Legendre(p))``.
    support : ndarray of int
        J*, sorted 0-based positions in ``base``.
    eta : ndarray (p,)
        eta*, zero outside J*, summing to 1.
    k_star : Kernel
        ``sum_{j in J*} eta*_j k_j``.

    Examples
    --------
    >>> import numpy as np
    >>> from warmbo.problems import LegendreSetup
    >>> setup = LegendreSetup(seed=0)
    >>> f = setup.sample_function(np.random.default_rng(1))
    >>> round(f.norm, 10), len(setup.support), round(float(setup.eta.sum()), 12)
    (10.0, 5, 1.0)
    """

    p: int = 20
    s: int = 5
    B: float = 10.0
    noise: float = 0.01
    seed: int = 0
    base: tuple[Legendre, ...] = field(init=False, repr=False, compare=False)
    support: np.ndarray = field(init=False, repr=False, compare=False)
    eta: np.ndarray = field(init=False, repr=False, compare=False)
    k_star: Kernel = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        for name in ("p", "s"):
            value = getattr(self, name)
            check_int(value, name, 1)
        if self.s > self.p:
            raise ValueError(f"s (the support size) must be at most p = {self.p}, got {self.s}")
        for name in ("B", "noise"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
            if value < 0 or (name == "B" and value == 0):
                raise ValueError(
                    f"{name} must be {'positive' if name == 'B' else 'non-negative'}, got {value}"
                )
        check_int(self.seed, "seed", 0)
        rng = np.random.default_rng(int(self.seed))
        support = np.sort(rng.choice(self.p, size=self.s, replace=False))
        raw = rng.uniform(0.0, 1.0, size=self.s)
        eta = np.zeros(self.p)
        eta[support] = raw / raw.sum()
        base = tuple(Legendre(j) for j in range(1, self.p + 1))
        terms = [float(eta[j]) * base[j] for j in support]
        for name, value in (
            ("base", base),
            ("support", _readonly(support)),
            ("eta", _readonly(eta)),
            ("k_star", sum(terms[1:], terms[0])),
        ):
            object.__setattr__(self, name, value)

    def sample_function(self, rng: np.random.Generator) -> LegendreFunction:
        """A random task function with ``||f||_{k*} = B`` (module docstring: subset, then coefficients)."""
        size = int(rng.integers(1, self.s + 1))
        members = rng.choice(self.support, size=size, replace=False)
        coefficients = rng.uniform(0.0, 1.0, size=size)
        # U(0, 1) is almost surely not all zero; guard the scaling anyway
        while not np.any(coefficients > 0):  # pragma: no cover
            coefficients = rng.uniform(0.0, 1.0, size=size)
        beta = np.zeros(self.p)
        beta[members] = coefficients * (self.B / np.linalg.norm(coefficients))
        return LegendreFunction(self.base, self.eta, _readonly(beta))

    def observe(self, f: LegendreFunction, x, rng: np.random.Generator) -> np.ndarray:
        """Noisy observations ``f(x) + N(0, noise^2)``."""
        values = f(x)
        return values + self.noise * rng.standard_normal(values.shape[0])

    def meta_data(self, m: int, n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
        """m offline tasks of n points each: ``x ~ U[-1, 1]`` (n, 1), ``y = f_s(x) + N(0, noise^2)`` (n,).

        Each task has its own function drawn by :meth:`sample_function`.
        """
        return self.meta_functions(m, n, rng)[0]

    def meta_functions(
        self, m: int, n: int, rng: np.random.Generator
    ) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[LegendreFunction]]:
        """Like :meth:`meta_data` (same draws), also returning the task functions: ``(tasks, functions)``."""
        for name, value in (("m", m), ("n", n)):
            check_int(value, name, 1)
        functions, tasks = [], []
        for _ in range(int(m)):
            f = self.sample_function(rng)
            x = rng.uniform(-1.0, 1.0, size=(int(n), 1))
            functions.append(f)
            tasks.append((x, self.observe(f, x, rng)))
        return tasks, functions


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a
