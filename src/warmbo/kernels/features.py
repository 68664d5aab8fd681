"""Feature-map kernels: finite-dimensional hypothesis spaces ``k(x, y) = phi(x)^T phi(y)``.

These are the base kernels of Meta-KeL (000, Section 2): each ``k_j`` has a feature map
``phi_j: X -> R^{d_j}`` and exposes it as ``features(X)`` (n, d_j), so the group lasso of 000 eq. 6
can be built from them.

- :class:`Features` wraps any user map ``fn(X) -> (n, dim)`` (optionally with its Jacobian).
- :class:`Legendre` is the j-th Legendre polynomial normalised to be orthonormal on [-1, 1]
  (``int_{-1}^{1} phi_j phi_k dx = delta_jk``), ``phi_j(x) = sqrt((2j + 1) / 2) P_j(x)``, one feature
  per kernel, as in 000's experiments (Appendix E).
- :class:`RandomFourier` draws random Fourier features of a stationary kernel (Rahimi & Recht 2007):
  ``phi(x) = sqrt(2 / D) cos(W x + b)``, ``b ~ U[0, 2 pi]``, rows of W from the kernel's spectral
  density: ``N(0, diag(1/ell^2))`` for the RBF kernel and a multivariate Student-t with 2 nu degrees
  of freedom scaled by ``1/ell`` for Matern-nu. ``E[phi(x)^T phi(y)] = k(x, y)``.

Written by hand: scikit-learn's ``RBFSampler`` covers only the RBF kernel and is a mutable
transformer; here the features must be a pure function of (kernel, seed) for any input dimension.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.polynomial import legendre as npleg

from .._validation import as_points, check_int
from .base import Kernel
from .stationary import RBF, Matern, Stationary

__all__ = ["FeatureKernel", "Features", "Legendre", "RandomFourier"]


class FeatureKernel(Kernel):
    """Base class: ``k(x, y) = phi(x)^T phi(y)``; subclasses implement ``_features(X)`` and ``dim``."""

    #: Dimension of the feature map (d_j in 000).
    dim: int

    def features(self, X) -> np.ndarray:
        """Feature matrix ``Phi(X)`` of shape (n, dim)."""
        X = as_points(X, "X", self.input_dim)
        return self._features(X)

    def _features(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _feature_jacobian(self, x: np.ndarray) -> np.ndarray:
        """Jacobian of the feature map at one point, shape (dim, d)."""
        raise NotImplementedError

    def evaluate(self, X, Y):
        return self._features(X) @ self._features(Y).T

    def diag(self, X):
        F = self.features(X)
        return np.einsum("ij,ij->i", F, F)

    def gradient_x(self, x, X):
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        J = self._feature_jacobian(x)
        return self._features(np.asarray(X, dtype=np.float64)) @ J

    def diag_gradient_x(self, x):
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        return 2.0 * self._features(x[None, :])[0] @ self._feature_jacobian(x)


class Features(FeatureKernel):
    """Kernel of a user-supplied feature map, ``k(x, y) = fn(x)^T fn(y)``.

    Parameters
    ----------
    fn : callable
        Maps an (n, d) array to an (n, dim) array of features.
    dim : int
        Feature dimension.
    jacobian : callable, optional
        Maps one point (d,) to the (dim, d) Jacobian of ``fn``; enables input gradients.
    name : str, optional
        Shown in ``repr``.
    """

    def __init__(
        self,
        fn: Callable[[np.ndarray], np.ndarray],
        dim: int,
        jacobian: Callable[[np.ndarray], np.ndarray] | None = None,
        name: str | None = None,
    ):
        if not callable(fn):
            raise ValueError(f"fn must be callable, got {fn!r}")
        check_int(dim, "dim", 1)
        if jacobian is not None and not callable(jacobian):
            raise ValueError(f"jacobian must be callable or None, got {jacobian!r}")
        self._set(fn=fn, dim=int(dim), jacobian=jacobian, name=name or getattr(fn, "__name__", "fn"))

    def _parameters(self) -> dict:
        return {"fn": self.name, "dim": self.dim}

    # Two feature maps are the same kernel only if they are the same function objects: names say
    # nothing (every lambda is "<lambda>").
    def __eq__(self, other) -> bool:
        if not isinstance(other, Features):
            return NotImplemented
        return self.fn is other.fn and self.jacobian is other.jacobian and self.dim == other.dim

    def __hash__(self) -> int:
        return hash(("Features", id(self.fn), id(self.jacobian), self.dim))

    def _features(self, X):
        F = np.asarray(self.fn(X), dtype=np.float64)
        if F.ndim == 1 and self.dim == 1:
            F = F[:, None]
        if F.shape != (X.shape[0], self.dim):
            raise ValueError(
                f"feature map {self.name} returned shape {F.shape}, expected ({X.shape[0]}, {self.dim})"
            )
        if not np.all(np.isfinite(F)):
            raise ValueError(f"feature map {self.name} returned NaN or inf")
        return F

    @property
    def has_gradient_x(self) -> bool:
        return self.jacobian is not None

    def _feature_jacobian(self, x):
        if self.jacobian is None:
            raise NotImplementedError(f"Features({self.name}) has no jacobian")
        J = np.asarray(self.jacobian(x), dtype=np.float64)
        if self.dim == 1 and J.ndim == 1:
            J = J[None, :]
        if J.shape != (self.dim, x.shape[0]):
            raise ValueError(
                f"jacobian of {self.name} returned shape {J.shape}, "
                f"expected (dim, d) = ({self.dim}, {x.shape[0]})"
            )
        return J


class Legendre(FeatureKernel):
    """One orthonormal Legendre feature, ``k(x, y) = phi_j(x) phi_j(y)``, ``phi_j = sqrt((2j+1)/2) P_j``.

    ``int_{-1}^{1} phi_j(x) phi_k(x) dx = delta_jk`` (orthonormal in L^2[-1, 1], as in 000 Appendix E).
    With ``domain=(a, b)`` the polynomial is moved to [a, b] and stays orthonormal there:
    ``phi_j(x) = sqrt(2 / (b - a)) sqrt((2j+1)/2) P_j((2x - a - b) / (b - a))``. Use ``domain=(0, 1)``
    for kernels that act on a :class:`~warmbo.space.Space`'s encoded unit cube (what the optimizer's
    models see).

    Parameters
    ----------
    j : int
        Degree of the Legendre polynomial (j >= 0).
    variable : int
        Which input column the polynomial acts on (default 0, the 1-D case).
    domain : (float, float)
        Interval on which the feature is orthonormal (default (-1, 1)).

    Examples
    --------
    >>> from warmbo.kernels import Legendre
    >>> round(float(Legendre(1).features([[1.0]])[0, 0]) ** 2, 6)  # (3/2) P_1(1)^2
    1.5
    """

    def __init__(self, j: int, variable: int = 0, domain: tuple[float, float] = (-1.0, 1.0)):
        check_int(j, "j", 0)
        check_int(variable, "variable", 0)
        try:
            a, b = (float(v) for v in domain)
        except (TypeError, ValueError):
            raise ValueError(f"domain must be a pair (a, b), got {domain!r}") from None
        if not (np.isfinite(a) and np.isfinite(b) and a < b):
            raise ValueError(f"domain must satisfy a < b (finite), got {domain!r}")
        coef = np.zeros(j + 1)
        coef[j] = np.sqrt((2 * j + 1) / 2.0) * np.sqrt(2.0 / (b - a))
        self._set(
            j=int(j),
            variable=int(variable),
            domain=(a, b),
            dim=1,
            _coef=coef,
            _dcoef=npleg.legder(coef) * (2.0 / (b - a)),
        )

    def _parameters(self) -> dict:
        out = {"j": self.j}
        if self.variable:
            out["variable"] = self.variable
        if self.domain != (-1.0, 1.0):
            out["domain"] = self.domain
        return out

    def _column(self, X):
        if X.shape[1] <= self.variable:
            raise ValueError(
                f"Legendre(variable={self.variable}) needs at least {self.variable + 1} input columns"
            )
        a, b = self.domain
        return (2.0 * X[:, self.variable] - a - b) / (b - a)

    def _features(self, X):
        return npleg.legval(self._column(X), self._coef)[:, None]

    @property
    def has_gradient_x(self) -> bool:
        return True

    def _feature_jacobian(self, x):
        J = np.zeros((1, x.shape[0]))
        J[0, self.variable] = npleg.legval(self._column(x[None, :])[0], self._dcoef)
        return J


class RandomFourier(FeatureKernel):
    """Random Fourier features of a stationary kernel: ``phi(x) = sqrt(2/D) cos(W x + b)``.

    Parameters
    ----------
    base : RBF or Matern
        The stationary kernel to approximate (unit variance; scale the result with ``c * k``).
    n_features : int
        Number D of random features.
    seed : int
        Seed of the frequencies; the features are a deterministic function of (base, n_features, seed)
        and the input dimension.
    """

    def __init__(self, base: Stationary, n_features: int = 100, seed: int = 0):
        if not isinstance(base, (RBF, Matern)):
            raise ValueError(f"base must be an RBF or Matern kernel, got {base!r}")
        check_int(n_features, "n_features", 1)
        check_int(seed, "seed", None)
        self._set(base=base, dim=int(n_features), seed=int(seed), input_dim=base.input_dim, _cache={})

    def _parameters(self) -> dict:
        return {"base": self.base, "n_features": self.dim, "seed": self.seed}

    def frequencies(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """Frequencies W (D, d) and phases b (D,) used for d-dimensional inputs."""
        if d not in self._cache:
            rng = np.random.default_rng([self.seed, d])
            z = rng.standard_normal((self.dim, d))
            if isinstance(self.base, Matern):
                dof = 2.0 * self.base.nu
                z = z * np.sqrt(dof / rng.chisquare(dof, size=(self.dim, 1)))
            W = z / np.asarray(self.base.lengthscale)
            b = rng.uniform(0.0, 2.0 * np.pi, size=self.dim)
            W.flags.writeable = False
            b.flags.writeable = False
            self._cache[d] = (W, b)
        return self._cache[d]

    def _features(self, X):
        W, b = self.frequencies(X.shape[1])
        return np.sqrt(2.0 / self.dim) * np.cos(X @ W.T + b)

    @property
    def has_gradient_x(self) -> bool:
        return True

    def _feature_jacobian(self, x):
        W, b = self.frequencies(x.shape[0])
        return -np.sqrt(2.0 / self.dim) * np.sin(W @ x + b)[:, None] * W
