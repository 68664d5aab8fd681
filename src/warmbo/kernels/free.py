"""Free m-kernels of 004 (Shilton et al., weight-prior tuning): families K_m, m = 2, 4, ...

The m-dot-product is ``(a, b, ..., z)_m = sum(a * b * ... * z)`` (element-wise products). A free
kernel (004 Def. 1, eq. 2) is a family with one unweighted feature map theta and feature weights tau,
both independent of m:

.. math:: K_m(x, \\ldots, x'''') = (\\tau^{\\odot 2}, \\theta(x), \\ldots, \\theta(x''''))_{m+1}.

Families (004 Table 1; nu >= 0, p a positive integer):

- ``Linear``: ``(x, ..., x'''')_m``;
- ``Polynomial(degree p, offset nu)``: ``((x, ..., x'''')_m + nu)^p``;
- ``Sinh(scale nu)``: ``sinh(nu (x, ..., x'''')_m)``;
- ``Exponential(scale nu)``: ``exp(nu (x, ..., x'''')_m)``;
- ``LogRatio()``: ``prod_i ln((1 + x_i x'_i ...) / (1 - x_i x'_i ...))`` (inputs in (-1, 1));
- ``SE(lengthscale l)``: ``exp(nu/2 (2 (x, ..., x'''')_m - sum_k ||x^(k)||^2))`` with ``nu = 1/l^2``
  (for m = 2 the squared exponential ``exp(-||x - x'||^2 / (2 l^2))``);
- ``DotProduct(k)``: ``k((x, ..., x'''')_m)`` (004 eq. 4) and ``DirectProduct(k)``:
  ``prod_i k(x_i x'_i ...)`` (004 eq. 5), for k with a non-negative Taylor series.

``K(X1, ..., Xm)`` evaluates the m-kernel on m arrays of points (rows broadcast: each array (n, d)
or (1, d)); ``k.order(2)`` is an ordinary :class:`~warmbo.kernels.Kernel` (Gram matrices, usable in
a GP) and ``k.order(m)`` the m-kernel as an object. :class:`TunedKernel` is K^A_2 of 004 Thm 1 (eq. 14),
``K^A_2(x, x') = sum_{i,j} alpha_i alpha_j K_4(a_i, a_j, x, x')``, evaluated in O(|A|^2 d) per pair by
vectorised numpy over chunks of pairs. Written by hand: no library offers m-kernels.
"""

from __future__ import annotations

import itertools
import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from .._validation import as_points, check_int
from .base import Kernel

__all__ = [
    "FreeKernel",
    "MKernel",
    "mdot",
    "Linear",
    "Polynomial",
    "Sinh",
    "Exponential",
    "LogRatio",
    "SE",
    "DotProduct",
    "DirectProduct",
    "TunedKernel",
]

_CHUNK_ENTRIES = 4_000_000  # floats per temporary block when summing over auxiliary pairs


def _broadcast(Xs) -> list[np.ndarray]:
    arrays = [as_points(X, f"X{k + 1}") for k, X in enumerate(Xs)]
    d = arrays[0].shape[1]
    for k, X in enumerate(arrays):
        if X.shape[1] != d:
            raise ValueError(f"X{k + 1} has {X.shape[1]} columns, X1 has {d}")
    n = max(X.shape[0] for X in arrays)
    for k, X in enumerate(arrays):
        if X.shape[0] not in (1, n):
            raise ValueError(f"X{k + 1} has {X.shape[0]} rows; every array needs {n} rows or 1 (broadcast)")
    return arrays


def mdot(*Xs) -> np.ndarray:
    """The m-dot-product ``(a, ..., z)_m = sum(a * ... * z)`` row-wise (004 Section 2)."""
    arrays = _broadcast(Xs)
    return np.sum(np.prod(np.broadcast_arrays(*arrays), axis=0), axis=1)


def _pair_sum(A: np.ndarray, W: np.ndarray, U: np.ndarray, block_fn, width: int = 1) -> np.ndarray:
    """``sum_{i,j} W_ij block_fn(U, P)_ij`` over auxiliary pairs, P_(ij) = a_i * a_j (element-wise).

    ``block_fn(U_chunk, P)`` returns the (chunk, n_pairs) values of K_4(a_i, a_j, x, x') for rows
    ``U = x * x'``; pairs with zero weight are dropped and rows are processed in chunks so that no
    temporary exceeds about ``_CHUNK_ENTRIES`` floats (``width`` floats per pair and row).
    """
    P = (A[:, None, :] * A[None, :, :]).reshape(-1, A.shape[1])  # (|A|^2, d)
    w = W.reshape(-1)
    keep = w != 0
    P, w = P[keep], w[keep]
    out = np.empty(U.shape[0])
    step = max(1, _CHUNK_ENTRIES // max(P.shape[0] * width, 1))
    for start in range(0, U.shape[0], step):
        out[start : start + step] = block_fn(U[start : start + step], P) @ w
    return out


class FreeKernel(ABC):
    """A free kernel (004 Def. 1): a family of m-kernels K_m, m = 2, 4, ..., sharing theta and tau."""

    def __call__(self, *Xs) -> np.ndarray:
        """``K_m(X1, ..., Xm)`` row-wise for m = len(Xs) (rows broadcast), shape (n,)."""
        if len(Xs) < 2 or len(Xs) % 2:
            raise ValueError(f"a free kernel takes an even number m >= 2 of point arrays, got {len(Xs)}")
        arrays = _broadcast(Xs)
        return self._evaluate(np.broadcast_arrays(*arrays))

    @abstractmethod
    def _evaluate(self, arrays: list[np.ndarray]) -> np.ndarray:
        """K_m on m broadcast arrays (n, d)."""

    def order(self, m: int):
        """The m-kernel as an object: a warmbo :class:`Kernel` for m = 2, an :class:`MKernel` otherwise."""
        if check_int(m, "m (an even order)", 2) % 2:
            raise ValueError(f"m must be an even integer >= 2, got {m!r}")
        return FreeOrder2(self) if m == 2 else MKernel(self, int(m))

    # finite feature maps (polynomial-type kernels) override these
    def theta(self, X) -> np.ndarray:
        """Unweighted feature map theta(X), (n, D) — only for kernels with a finite feature map."""
        raise NotImplementedError(f"{type(self).__name__} has an infinite feature map")

    def tau_for(self, d: int) -> np.ndarray:
        """Feature weights tau (D,) for d-dimensional inputs — only for finite feature maps."""
        raise NotImplementedError(f"{type(self).__name__} has an infinite feature map")

    def rescaled(self, value: float) -> FreeKernel:
        """The same family with its scale hyperparameter set to ``value`` (for tuning by LOO)."""
        raise NotImplementedError(f"{type(self).__name__} has no scale hyperparameter")

    @property
    def scale_value(self) -> float | None:
        """The scale hyperparameter (None when the family has none)."""
        return None

    # sum over auxiliary pairs for Thm 1 (dot-product structure by default)
    def _aux_sum(self, A: np.ndarray, W: np.ndarray, U: np.ndarray, norms: np.ndarray | None) -> np.ndarray:
        """``sum_{i,j} W_ij K_4(a_i, a_j, x, x')`` for rows ``U = x * x'`` (n, d)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"free.{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted((k, repr(v)) for k, v in vars(self).items()))))


class _DotProductFamily(FreeKernel):
    """Free kernels of the form ``k((x, ..., z)_m)`` for a scalar function k (004 eq. 4)."""

    def _scalar(self, z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _evaluate(self, arrays):
        return self._scalar(np.sum(np.prod(arrays, axis=0), axis=1))

    def _aux_sum(self, A, W, U, norms):
        # K_4(a_i, a_j, x, x') = k(sum_d a_id a_jd x_d x'_d): one matmul per chunk of pairs
        return _pair_sum(A, W, U, lambda Uc, P: self._scalar(Uc @ P.T))


class Linear(_DotProductFamily):
    """Linear m-kernel ``(x, ..., x'''')_m`` (004 Table 1); theta(x) = x, tau = 1."""

    def _scalar(self, z):
        return z

    def theta(self, X):
        return as_points(X, "X")

    def tau_for(self, d: int) -> np.ndarray:
        return np.ones(d)


class Polynomial(_DotProductFamily):
    """Polynomial m-kernel ``((x, ..., x'''')_m + offset)^degree`` (004 Table 1).

    Finite features: theta_i(x) = prod_d x_d^{i_d} over multi-indices with |i| <= p (|i| = p when
    offset = 0), tau_i = sqrt(C(p, |i|) offset^(p - |i|) |i|! / prod_d i_d!) (the multinomial
    expansion; 004 Section 3, XOR example).
    """

    def __init__(self, degree: int = 2, offset: float = 1.0):
        check_int(degree, "degree", 1)
        if not isinstance(offset, numbers.Real) or not math.isfinite(offset) or offset < 0:
            raise ValueError(f"offset must be a finite number >= 0, got {offset!r}")
        self.degree = int(degree)
        self.offset = float(offset)

    def _scalar(self, z):
        return (z + self.offset) ** self.degree

    def multi_indices(self, d: int) -> list[tuple[int, ...]]:
        """Multi-indices of the features, by total degree then lexicographically."""
        degrees = range(self.degree + 1) if self.offset > 0 else [self.degree]
        out = []
        for total in degrees:
            for combo in itertools.combinations_with_replacement(range(d), total):
                index = [0] * d
                for c in combo:
                    index[c] += 1
                out.append(tuple(index))
        return out

    def theta(self, X):
        X = as_points(X, "X")
        return np.column_stack([np.prod(X ** np.array(i), axis=1) for i in self.multi_indices(X.shape[1])])

    def tau_for(self, d: int) -> np.ndarray:
        """Feature weights tau for inputs of dimension d (in the order of :meth:`multi_indices`)."""
        p, nu = self.degree, self.offset
        weights = []
        for i in self.multi_indices(d):
            s = sum(i)
            multinomial = math.factorial(s) / math.prod(math.factorial(k) for k in i)
            weights.append(math.sqrt(math.comb(p, s) * nu ** (p - s) * multinomial))
        return np.array(weights)


class Sinh(_DotProductFamily):
    """Hyperbolic sine m-kernel ``sinh(scale (x, ..., x'''')_m)`` (004 Table 1)."""

    def __init__(self, scale: float = 1.0):
        if not isinstance(scale, numbers.Real) or not math.isfinite(scale) or scale < 0:
            raise ValueError(f"scale must be a finite number >= 0, got {scale!r}")
        self.scale = float(scale)

    def _scalar(self, z):
        return np.sinh(self.scale * z)

    def rescaled(self, value):
        return Sinh(value)

    @property
    def scale_value(self):
        return self.scale


class Exponential(_DotProductFamily):
    """Exponential m-kernel ``exp(scale (x, ..., x'''')_m)`` (004 Table 1)."""

    def __init__(self, scale: float = 1.0):
        if not isinstance(scale, numbers.Real) or not math.isfinite(scale) or scale < 0:
            raise ValueError(f"scale must be a finite number >= 0, got {scale!r}")
        self.scale = float(scale)

    def _scalar(self, z):
        return np.exp(self.scale * z)

    def rescaled(self, value):
        return Exponential(value)

    @property
    def scale_value(self):
        return self.scale


class DotProduct(_DotProductFamily):
    """m-dot-product kernel ``k((x, ..., x'''')_m)`` (004 eq. 4) for k with a non-negative Taylor series."""

    def __init__(self, k: Callable[[np.ndarray], np.ndarray], name: str | None = None):
        if not callable(k):
            raise ValueError(f"k must be callable, got {k!r}")
        self.k = k
        self.name = name or getattr(k, "__name__", "k")

    def _scalar(self, z):
        return np.asarray(self.k(z), dtype=np.float64)

    def __repr__(self) -> str:
        return f"free.DotProduct({self.name})"


class SE(_DotProductFamily):
    """SE m-kernel ``exp(nu/2 (2 (x, ..., x'''')_m - sum_k ||x^(k)||^2))``, nu = 1/lengthscale^2.

    It is the exponential m-dot-product kernel with its feature map normalised (004 Section 3); for
    m = 2 it is the squared exponential ``exp(-||x - x'||^2 / (2 lengthscale^2))``.
    """

    def __init__(self, lengthscale: float = 1.0):
        if not isinstance(lengthscale, numbers.Real) or not math.isfinite(lengthscale) or lengthscale <= 0:
            raise ValueError(f"lengthscale must be a positive number, got {lengthscale!r}")
        self.lengthscale = float(lengthscale)

    @property
    def nu(self) -> float:
        return 1.0 / self.lengthscale**2

    def rescaled(self, value):
        return SE(value)

    @property
    def scale_value(self):
        return self.lengthscale

    def _evaluate(self, arrays):
        dot = np.sum(np.prod(arrays, axis=0), axis=1)
        squares = sum(np.sum(X**2, axis=1) for X in arrays)
        return np.exp(self.nu / 2.0 * (2.0 * dot - squares))

    def _aux_sum(self, A, W, U, norms):
        # K_4(a_i, a_j, x, x') = exp(nu (a_i, a_j, x, x')_4)
        #                        * exp(-nu/2 (|a_i|^2 + |a_j|^2)) * exp(-nu/2 (|x|^2 + |x'|^2))
        nu = self.nu
        a2 = np.sum(A**2, axis=1)
        W = W * np.exp(-nu / 2.0 * (a2[:, None] + a2[None, :]))
        return _pair_sum(A, W, U, lambda Uc, P: np.exp(nu * (Uc @ P.T))) * np.exp(-nu / 2.0 * norms)


class _DirectProductFamily(FreeKernel):
    """Free kernels ``prod_i k(x_i x'_i ...)`` (004 eq. 5)."""

    def _scalar(self, z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _evaluate(self, arrays):
        return np.prod(self._scalar(np.prod(arrays, axis=0)), axis=1)

    def _aux_sum(self, A, W, U, norms):
        # K_4 = prod_d k(a_id a_jd x_d x'_d): a (chunk, pairs, d) block per chunk of rows
        def block(Uc, P):
            return np.prod(self._scalar(Uc[:, None, :] * P[None, :, :]), axis=2)

        return _pair_sum(A, W, U, block, width=A.shape[1])


class LogRatio(_DirectProductFamily):
    """Log-ratio m-kernel ``prod_i ln((1 + x_i x'_i ...) / (1 - x_i x'_i ...))`` (004 Table 1), |x_i| < 1.

    ``ln((1 + z)/(1 - z)) = 2 artanh(z) = 2 sum_{odd i} z^i / i`` has a non-negative Taylor series.
    """

    def _scalar(self, z):
        if np.any(np.abs(z) >= 1):
            raise ValueError("LogRatio needs inputs strictly inside (-1, 1)")
        return 2.0 * np.arctanh(z)


class DirectProduct(_DirectProductFamily):
    """m-direct-product kernel ``prod_i k(x_i x'_i ...)`` (004 eq. 5), k with a non-negative Taylor series."""

    def __init__(self, k: Callable[[np.ndarray], np.ndarray], name: str | None = None):
        if not callable(k):
            raise ValueError(f"k must be callable, got {k!r}")
        self.k = k
        self.name = name or getattr(k, "__name__", "k")

    def _scalar(self, z):
        return np.asarray(self.k(z), dtype=np.float64)

    def __repr__(self) -> str:
        return f"free.DirectProduct({self.name})"


class MKernel:
    """The m-kernel K_m of a free kernel for one fixed m: ``K(X1, ..., Xm)`` row-wise."""

    def __init__(self, free: FreeKernel, m: int):
        self.free, self.m = free, m

    def __call__(self, *Xs) -> np.ndarray:
        if len(Xs) != self.m:
            raise ValueError(f"this {self.m}-kernel takes {self.m} point arrays, got {len(Xs)}")
        return self.free(*Xs)

    def __repr__(self) -> str:
        return f"{self.free!r}.order({self.m})"


class FreeOrder2(Kernel):
    """K_2 of a free kernel as an ordinary warmbo Kernel (Gram matrices for a GP)."""

    def __init__(self, free: FreeKernel):
        self._set(free=free)

    def _parameters(self) -> dict:
        return {"free": self.free}

    def evaluate(self, X, Y):
        n, m = X.shape[0], Y.shape[0]
        rows = np.repeat(X, m, axis=0)
        cols = np.tile(Y, (n, 1))
        return self.free._evaluate([rows, cols]).reshape(n, m)

    def diag(self, X):
        X = as_points(X, "X")
        return self.free._evaluate([X, X])


class TunedKernel(Kernel):
    """``K^A_2(x, x') = sum_{i,j} alpha_i alpha_j K_4(a_i, a_j, x, x')`` (004 Thm 1, eq. 14).

    With ``normalize`` the kernel is ``K(x, x') / sqrt(K(x, x) K(x', x'))`` (values in [-1, 1], unit
    prior variance). Cost O(|A|^2 d) per pair of points, vectorised over chunks of pairs.

    Where the features vanish, ``K(x, x) = 0`` (the origin for Sinh, Linear and Polynomial with offset
    0; any point with a zero coordinate for LogRatio; x = 0.5 on the cube with ``centre=True``), the
    cosine is 0/0 and has no limit (it depends on the direction of approach). The normalised kernel
    there is the limit of normalising ``K + eps * delta`` as eps -> 0: such a point has unit variance
    and is uncorrelated with every other point (1 with itself, 0 with anything else). That keeps the
    unit prior variance, ``diag`` equal to the Gram matrix's diagonal and the kernel PSD (a zero-norm
    point gets a feature of its own). "Zero" means computed as at most the smallest normal float,
    since the Cauchy-Schwarz bound ``|K(x, x')| <= sqrt(K(x, x) K(x', x'))`` then puts every
    ``K(x, x')`` at zero too; values are clipped to [-1, 1] against round-off in the pair sum
    (:func:`cosine_normalise`).

    Parameters
    ----------
    free : FreeKernel
        The free kernel K_m.
    A : array (|A|, d)
        Auxiliary inputs.
    alpha : array (|A|,)
        Dual weights of the learner trained on A with K_2.
    normalize : bool
        Cosine-normalise the kernel.
    """

    def __init__(self, free: FreeKernel, A, alpha, normalize: bool = True):
        A = as_points(A, "A")
        alpha = np.asarray(alpha, dtype=np.float64).reshape(-1)
        if alpha.shape != (A.shape[0],):
            raise ValueError(
                f"alpha must have one weight per auxiliary point ({A.shape[0]}), got {alpha.shape}"
            )
        keep = alpha != 0  # points with zero weight do not contribute
        self._set(free=free, A=A[keep], alpha=alpha[keep], normalize=bool(normalize), input_dim=A.shape[1])

    def _parameters(self) -> dict:
        return {"free": self.free, "n_aux": int(self.A.shape[0]), "normalize": self.normalize}

    def _raw(self, X: np.ndarray, Y: np.ndarray, pairwise: bool) -> np.ndarray:
        W = np.outer(self.alpha, self.alpha)
        if pairwise:
            U = (X[:, None, :] * Y[None, :, :]).reshape(-1, X.shape[1])
            norms = (np.sum(X**2, axis=1)[:, None] + np.sum(Y**2, axis=1)[None, :]).reshape(-1)
        else:
            U = X * Y
            norms = np.sum(X**2, axis=1) + np.sum(Y**2, axis=1)
        values = self.free._aux_sum(self.A, W, U, norms)
        return values.reshape(X.shape[0], Y.shape[0]) if pairwise else values

    def evaluate(self, X, Y):
        K = self._raw(X, Y, pairwise=True)
        if not self.normalize:
            return K
        return cosine_normalise(K, self._raw(X, X, pairwise=False), self._raw(Y, Y, pairwise=False), X, Y)

    def diag(self, X):
        X = as_points(X, "X", self.input_dim)
        if self.normalize:
            return np.ones(X.shape[0])
        return self._raw(X, X, pairwise=False)


def cosine_normalise(
    K: np.ndarray, dx: np.ndarray, dy: np.ndarray, X: np.ndarray, Y: np.ndarray
) -> np.ndarray:
    """``K(x, x') / sqrt(K(x, x) K(x', x'))`` for a Gram block K (n, m) with diagonals dx (n,), dy (m,).

    Points whose ``K(x, x)`` is at most the smallest normal float (computed as 0, or below by
    round-off) have no cosine: they get the limit of normalising ``K + eps delta`` as eps -> 0, 1 with
    the same point and 0 with any other (see :class:`TunedKernel`). Each root divides separately
    (``sqrt(dx * dy)`` underflows for small norms) and the values are clipped to [-1, 1].
    """
    tiny = np.finfo(np.float64).tiny
    zero_x, zero_y = dx <= tiny, dy <= tiny
    sx, sy = np.sqrt(np.where(zero_x, 1.0, dx)), np.sqrt(np.where(zero_y, 1.0, dy))
    K = np.clip(K / sx[:, None] / sy[None, :], -1.0, 1.0)
    if zero_x.any() or zero_y.any():
        K[zero_x, :] = 0.0
        K[:, zero_y] = 0.0
        rows, cols = np.nonzero(zero_x)[0], np.nonzero(zero_y)[0]
        same = np.all(X[rows][:, None, :] == Y[cols][None, :, :], axis=2)
        K[np.ix_(rows, cols)] = same.astype(np.float64)
    return K
