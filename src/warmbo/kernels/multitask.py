"""Multi-task kernels ``Gamma: X x X -> R^{n x n}`` (001 Section 2, "Multi-task kernel and its RKHS").

A multi-task kernel returns, for two points, an ``n x n`` matrix ``Gamma(x, x')`` with
``Gamma(x, x')^T = Gamma(x', x)`` and ``sum_ij y_i^T Gamma(x_i, x_j) y_j >= 0``. Every kernel here is a
linear model of coregionalisation (LCM), a sum of separable terms

    Gamma(x, x') = sum_j k_j(x, x') B_j,        B_j PSD n x n,

which is PSD because each term is the Kronecker product of two PSD matrices on any finite point set:

- :class:`ICM` ``(k, B)``: one term, ``Gamma = k(x, x') B`` (the intrinsic coregionalisation / separable
  kernel, 001 Section 3.3; its eigendecomposition ``B = sum xi_i u_i u_i^T`` drives the fast path of
  :class:`warmbo.models.MultiTaskGP`);
- :class:`UniformTask` ``(k, n, omega)``: the ICM of Evgeniou et al. (2005),
  ``B = omega I_n + (1 - omega) 1 1^T / n``; omega = 0 makes all tasks identical, omega = 1 independent.
  B has one eigenvalue 1 (eigenvector 1/sqrt(n)) and n - 1 eigenvalues omega (001 Lemma 1 discussion);
- :class:`Independent` ``([k_1, ..., k_n])``: ``diag(k_1, ..., k_n)`` (001 Remark 1), n unrelated tasks;
- :class:`LCM` ``([(k_1, B_1), ...])``: the general sum (not reducible to one ICM).

Conventions. For points ``X`` (N, d) and ``Y`` (M, d):

- ``Gamma.blocks(X, Y)`` is the (N, M, n, n) array of matrices ``Gamma(x_i, y_j)``;
- ``Gamma(X)`` / ``Gamma.diag_blocks(X)`` is the (N, n, n) array ``Gamma(x_i, x_i)``;
- ``Gamma.gram(X, Y)`` is the (N n, M n) block matrix of 001 eq. (1), point-major: block (i, j) is
  ``Gamma(x_i, y_j)``, so entry ``(i n + a, j n + b) = Gamma(x_i, y_j)_{ab}``. Output vectors are stacked
  the same way: ``Y_t = [y_1^T, ..., y_t^T]^T``.

No library offers operator-valued kernels over numpy with this interface, so this module is written by
hand; the scalar parts are warmbo's :mod:`warmbo.kernels`.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from .._validation import as_points, check_int
from .base import Constant, Kernel

__all__ = ["MultiTaskKernel", "ICM", "UniformTask", "Independent", "LCM", "as_task_matrix"]

_PSD_TOL = 1e-10


def as_task_matrix(B, n: int | None = None, name: str = "B") -> np.ndarray:
    """Validate a task-similarity matrix: finite, square (n x n), symmetric and positive semi-definite.

    Round-off asymmetry (relative 1e-10) is symmetrised away; anything larger, or an eigenvalue below
    ``-1e-10 max(1, |eig|_max)``, is an error naming the problem.
    """
    try:
        arr = np.array(B, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric n x n matrix, got {B!r}") from None
    if arr.ndim == 0 and n == 1:
        arr = arr.reshape(1, 1)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a square n x n matrix, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} must be {n} x {n} (one row per task), got {arr.shape[0]} x {arr.shape[1]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    scale = max(1.0, float(np.max(np.abs(arr))))
    asym = float(np.max(np.abs(arr - arr.T)))
    if asym > 1e-10 * scale:
        raise ValueError(f"{name} must be symmetric (largest |B - B^T| entry is {asym:.3g})")
    arr = (arr + arr.T) / 2
    eigmin = float(np.linalg.eigvalsh(arr)[0])
    if eigmin < -_PSD_TOL * scale:
        raise ValueError(
            f"{name} is not positive semi-definite (smallest eigenvalue {eigmin:.3g}); a task-similarity "
            "matrix must be PSD, e.g. A^T A"
        )
    arr.flags.writeable = False
    return arr


def _check_kernel(k, name: str) -> Kernel:
    if not isinstance(k, Kernel):
        raise ValueError(f"{name} must be a warmbo scalar kernel (warmbo.kernels.Kernel), got {k!r}")
    return k


class MultiTaskKernel(ABC):
    """A matrix-valued kernel ``Gamma(x, x')`` (n x n) written as ``sum_j k_j(x, x') B_j``.

    Immutable: attributes are set once in ``__init__``.
    """

    # ------------------------------------------------------------------ immutability
    def _set(self, **attributes) -> None:
        for key, value in attributes.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key, value):
        raise AttributeError(f"{type(self).__name__} is immutable; build a new kernel instead")

    # ------------------------------------------------------------------ structure
    @property
    @abstractmethod
    def components(self) -> tuple[tuple[Kernel, np.ndarray], ...]:
        """The LCM terms ``((k_1, B_1), ...)`` with ``Gamma = sum_j k_j B_j``."""

    @property
    def n_tasks(self) -> int:
        """Number of tasks n (the size of ``Gamma(x, x')``)."""
        return int(self.components[0][1].shape[0])

    @property
    def input_dim(self) -> int | None:
        dims = {k.input_dim for k, _ in self.components if k.input_dim is not None}
        if len(dims) > 1:
            raise ValueError(f"the scalar kernels require different input dimensions {sorted(dims)}")
        return dims.pop() if dims else None

    def with_kernels(self, kernels: Sequence[Kernel]) -> MultiTaskKernel:
        """The same task structure with new scalar kernels (one per component)."""
        return LCM([(k, B) for k, (_, B) in zip(kernels, self.components, strict=True)])

    # ------------------------------------------------------------------ evaluation
    def rescaled(self, d) -> MultiTaskKernel:
        """The kernel of ``D f`` for ``D = diag(d)``: ``D Gamma(x, x') D``, here as the LCM
        ``sum_j k_j(x, x') D B_j D``; subclasses keep their own structure."""
        d = self._scales(d)
        return LCM([(k, d[:, None] * B * d[None, :]) for k, B in self.components])

    def _scales(self, d) -> np.ndarray:
        d = np.asarray(d, dtype=np.float64).reshape(-1)
        if d.shape != (self.n_tasks,) or not np.all(np.isfinite(d)):
            raise ValueError(f"d must be {self.n_tasks} finite scales, got {d!r}")
        return d

    def _points(self, X, name: str) -> np.ndarray:
        return as_points(X, name, self.input_dim)

    def blocks(self, X, Y) -> np.ndarray:
        """``Gamma(x_i, y_j)`` for all pairs, shape (N, M, n, n)."""
        X = self._points(X, "X")
        Y = as_points(Y, "Y", X.shape[1])
        out = np.zeros((X.shape[0], Y.shape[0], self.n_tasks, self.n_tasks))
        for k, B in self.components:
            out += k.evaluate(X, Y)[:, :, None, None] * B
        return out

    def diag_blocks(self, X) -> np.ndarray:
        """``Gamma(x_i, x_i)``, shape (N, n, n)."""
        X = self._points(X, "X")
        out = np.zeros((X.shape[0], self.n_tasks, self.n_tasks))
        for k, B in self.components:
            out += k.diag(X)[:, None, None] * B
        return out

    def __call__(self, X, Y=None) -> np.ndarray:
        """``Gamma(X)`` -> (N, n, n) diagonal blocks; ``Gamma(X, Y)`` -> (N, M, n, n) blocks."""
        return self.diag_blocks(X) if Y is None else self.blocks(X, Y)

    def gram(self, X, Y=None) -> np.ndarray:
        """The point-major block Gram matrix ``G`` (N n, M n) of 001 eq. (1); ``Y = X`` by default."""
        X = self._points(X, "X")
        Y = X if Y is None else as_points(Y, "Y", X.shape[1])
        n = self.n_tasks
        out = np.zeros((X.shape[0] * n, Y.shape[0] * n))
        for k, B in self.components:
            out += np.kron(k.evaluate(X, Y), B)
        return out

    def operator_norm(self, X) -> np.ndarray:
        """``||Gamma(x_i, x_i)||`` (largest eigenvalue), shape (N,): kappa of 001 Thm 2 is its sup."""
        return np.linalg.eigvalsh(self.diag_blocks(X))[:, -1]

    # ------------------------------------------------------------------ values
    def _parameters(self) -> dict:
        return {}

    def __repr__(self) -> str:
        def fmt(v):
            if isinstance(v, np.ndarray):
                return np.array2string(v, precision=4, separator=", ")
            return repr(v)

        return f"{type(self).__name__}({', '.join(f'{k}={fmt(v)}' for k, v in self._parameters().items())})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, MultiTaskKernel):
            return NotImplemented
        mine, theirs = self.components, other.components
        return len(mine) == len(theirs) and all(
            k1 == k2 and B1.shape == B2.shape and np.array_equal(B1, B2)
            for (k1, B1), (k2, B2) in zip(mine, theirs, strict=True)
        )

    def __hash__(self) -> int:
        return hash(tuple((repr(k), B.tobytes()) for k, B in self.components))


class ICM(MultiTaskKernel):
    """Separable kernel ``Gamma(x, x') = k(x, x') B`` (intrinsic coregionalisation model; 001 Section 3.3).

    Parameters
    ----------
    kernel : Kernel
        Scalar kernel k on the inputs.
    B : (n, n) array
        Task-similarity matrix, symmetric PSD (validated).

    Examples
    --------
    >>> import numpy as np
    >>> from warmbo.kernels import RBF
    >>> from warmbo.kernels.multitask import ICM
    >>> G = ICM(RBF(0.2), [[1.0, 0.5], [0.5, 1.0]])
    >>> G.gram([[0.0], [0.1]]).shape
    (4, 4)
    """

    def __init__(self, kernel: Kernel, B):
        _check_kernel(kernel, "kernel")
        self._set(kernel=kernel, B=as_task_matrix(B))

    def _parameters(self) -> dict:
        return {"kernel": self.kernel, "B": self.B}

    @property
    def components(self):
        return ((self.kernel, self.B),)

    @cached_property
    def eig(self) -> tuple[np.ndarray, np.ndarray]:
        """Eigenvalues ``xi`` (ascending, clipped at 0) and orthonormal eigenvectors ``U`` (columns) of B."""
        xi, U = np.linalg.eigh(self.B)
        xi = np.clip(xi, 0.0, None)
        xi.flags.writeable = False
        U.flags.writeable = False
        return xi, U

    def with_kernels(self, kernels: Sequence[Kernel]) -> ICM:
        (kernel,) = kernels
        return ICM(kernel, self.B)

    def rescaled(self, d) -> ICM:
        """``ICM(k, D B D)``: still one scalar kernel, so the ICM fast path applies."""
        d = self._scales(d)
        return ICM(self.kernel, d[:, None] * self.B * d[None, :])

    def with_B(self, B) -> ICM:
        """The same scalar kernel with another task matrix."""
        return ICM(self.kernel, B)


def _uniform_B(n: int, omega: float) -> np.ndarray:
    return omega * np.eye(n) + (1.0 - omega) * np.ones((n, n)) / n


class UniformTask(ICM):
    """Evgeniou et al.'s kernel ``k(x, x') (omega I_n + (1 - omega) 1_n 1_n^T / n)`` (001 Section 2).

    omega in [0, 1]: 0 makes the n tasks one function, 1 makes them independent copies of k.
    """

    def __init__(self, kernel: Kernel, n: int, omega: float):
        _check_kernel(kernel, "kernel")
        check_int(n, "n (the number of tasks)", 1)
        if isinstance(omega, bool) or not isinstance(omega, numbers.Real) or not 0.0 <= omega <= 1.0:
            raise ValueError(f"omega must be a number in [0, 1], got {omega!r}")
        B = as_task_matrix(_uniform_B(int(n), float(omega)))
        self._set(kernel=kernel, n=int(n), omega=float(omega), B=B)

    def _parameters(self) -> dict:
        return {"kernel": self.kernel, "n": self.n, "omega": self.omega}

    def with_kernels(self, kernels: Sequence[Kernel]) -> UniformTask:
        (kernel,) = kernels
        return UniformTask(kernel, self.n, self.omega)

    def with_omega(self, omega: float) -> UniformTask:
        """The same kernel with another omega."""
        return UniformTask(self.kernel, self.n, omega)


class Independent(MultiTaskKernel):
    """Diagonal kernel ``diag(k_1(x, x'), ..., k_n(x, x'))``: n unrelated tasks (001 Remark 1).

    The multi-task posterior with this kernel is exactly n independent scalar GP posteriors.
    """

    def __init__(self, kernels: Sequence[Kernel]):
        kernels = tuple(kernels)
        if not kernels:
            raise ValueError("Independent needs at least one scalar kernel")
        for i, k in enumerate(kernels):
            _check_kernel(k, f"kernels[{i}]")
        self._set(kernels=kernels)

    def _parameters(self) -> dict:
        return {"kernels": list(self.kernels)}

    @cached_property
    def components(self):
        n = len(self.kernels)
        out = []
        for i, k in enumerate(self.kernels):
            E = np.zeros((n, n))
            E[i, i] = 1.0
            E.flags.writeable = False
            out.append((k, E))
        return tuple(out)

    @property
    def n_tasks(self) -> int:
        return len(self.kernels)

    def with_kernels(self, kernels: Sequence[Kernel]) -> Independent:
        return Independent(kernels)

    def rescaled(self, d) -> Independent:
        """``diag(d_i^2 k_i)``: the tasks stay independent."""
        d = self._scales(d)
        return Independent([Constant(float(di**2)) * k for di, k in zip(d, self.kernels, strict=True)])

    def diag_blocks(self, X) -> np.ndarray:
        X = self._points(X, "X")
        n = self.n_tasks
        out = np.zeros((X.shape[0], n, n))
        for i, k in enumerate(self.kernels):
            out[:, i, i] = k.diag(X)
        return out


class LCM(MultiTaskKernel):
    """Linear model of coregionalisation ``sum_j k_j(x, x') B_j`` (001 Section 2: "sums ... not reducible").

    Parameters
    ----------
    terms : sequence of (Kernel, (n, n) array)
        Scalar kernels with their PSD task matrices, all of the same size n.
    """

    def __init__(self, terms: Sequence[tuple[Kernel, np.ndarray]]):
        terms = list(terms)
        if not terms:
            raise ValueError("LCM needs at least one (kernel, B) term")
        checked = []
        n = None
        for j, term in enumerate(terms):
            if not isinstance(term, (tuple, list)) or len(term) != 2:
                raise ValueError(f"LCM term {j} must be a (kernel, B) pair, got {term!r}")
            k, B = term
            _check_kernel(k, f"terms[{j}] kernel")
            B = as_task_matrix(B, n, name=f"B_{j}")
            n = B.shape[0]
            checked.append((k, B))
        self._set(terms=tuple(checked))

    def _parameters(self) -> dict:
        return {"terms": list(self.terms)}

    @property
    def components(self):
        return self.terms
